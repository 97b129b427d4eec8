"""The one place that changes the memory store on a person's behalf, and records that it did.

Every change goes through the engine (which re-embeds, recounts lifecycles, cascades) and is then
written to the curation history (`CurationEntry`) with who made it and the object's values before
and after, as the engine's JSON record form (memory.engine.snapshot). A delete keeps the engine's
snapshot of everything that went with it, so that `revert` can restore it with its original ids
and links; an update keeps the old values, so that `revert` can write back what it changed. A
revert is itself a recorded change.

An update writes only what differs from the stored record, and nothing at all (no entry either)
when nothing does. Edits carry the version of the record they were opened on: the engine refuses
them (StaleVersionError) when someone changed the record meanwhile, so no update is lost. An edit
that would change nothing is refused the same way when the record is no longer at its version
(unchanged_since): writers that read the same version and send the same values race, and the
first one's write leaves the others nothing to change; answering them "done" would tell several
writers that their conditional write was the one made.

Views (and API views) call Curation for every write and never write to the engine themselves.

How each change is recorded, crash-safely, is memory.curation.recording's (the two-phase
recording protocol).
"""

from __future__ import annotations

from memory.curation.bulk import BulkWrites
from memory.curation.images import ImageWrites
from memory.curation.imports import ImportWrites
from memory.curation.links import LinkWrites
from memory.curation.memories import MemoryWrites
from memory.curation.merges import MergeWrites
from memory.curation.messages import MessageWrites
from memory.curation.people import PeopleWrites
from memory.curation.reverts import RevertWrites
from memory.curation.sensitive import SensitiveWrites
from memory.curation.threads import ThreadWrites


class Curation(
    ThreadWrites,
    MessageWrites,
    MemoryWrites,
    ImageWrites,
    PeopleWrites,
    LinkWrites,
    MergeWrites,
    BulkWrites,
    RevertWrites,
    ImportWrites,
    SensitiveWrites,
):
    """The changes one actor makes, through one AgentMemory, each recorded in the history: one
    write per noun in its own module (memory.curation.threads, .messages, .memories, .images,
    .people, .links), the merges, the bulk changes, the reverts and the imports; all stand on the
    recording of memory.curation.recording."""
