"""Every write on a person's behalf: the one place that changes the memory store for the
dashboard, the API and the management commands, and records each change in the curation history.

`Curation(agent_memory, Actor(user))` is the entry point; its writes are one module per noun
(threads, messages, memories, images, people, links), with the merges, the bulk changes (and
their plan, bulk_plan), the reverts and the imports (imports, and the dashboard's
background import_jobs). recording is the two-phase protocol each write is recorded by;
consistency checks the store against the history; review_marks holds the review marks.
"""

from memory.curation.bulk import BulkOutcome
from memory.curation.recording import Actor, CurationError, reconcile_pending
from memory.curation.reverts import ERASED_REFUSAL, undone_by
from memory.curation.review_marks import mark
from memory.curation.service import Curation
from memory.curation.values import StatusChange, summarized_through

__all__ = [
    "ERASED_REFUSAL",
    "Actor",
    "BulkOutcome",
    "Curation",
    "CurationError",
    "StatusChange",
    "mark",
    "reconcile_pending",
    "summarized_through",
    "undone_by",
]
