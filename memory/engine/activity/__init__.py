"""The activity log: what every caller of the engine read and wrote, call by call.

The engine records its own activity, so every caller is covered: an agent process using the
engine directly, the REST API and the dashboard. A retrieval (AgentMemory.search, Thread.search,
Thread.get_context_card, Thread.get_summary, MemoryStore.search called directly) is recorded with
its caller, scope, parameters, the results in rank order with their score parts and hop paths,
and the exact text handed back; a write with the records it added, changed or deleted, and the
cause when the engine's LLM work made it; a person's (or a token's) read of a whole record
(AgentMemory.record_view: a record page, a GET by id) and a download of an export
(transfer.export_lines) with ids, scope and counts only, for the audit. Events go to two tables of the store itself
(stores/sql/activity.py) from a background writer (recorder.py), and optionally to an
OpenTelemetry collector as spans (otlp.py).
"""

from .context import acting_as, caused_by, continued_trace, history_change, unrecorded
from .events import (
    AUDIT_KINDS,
    CALLER_KINDS,
    KINDS,
    RETRIEVAL_KINDS,
    ActivityCounts,
    ActivityEvent,
    ActivityHygiene,
    ActivityResult,
    ServedRecord,
)
from .recorder import ActivityConfig, ActivityRecorder, default_caller, given, recorded_retrieval

__all__ = [
    "AUDIT_KINDS",
    "CALLER_KINDS",
    "KINDS",
    "RETRIEVAL_KINDS",
    "ActivityConfig",
    "ActivityCounts",
    "ActivityEvent",
    "ActivityHygiene",
    "ActivityRecorder",
    "ActivityResult",
    "ServedRecord",
    "acting_as",
    "caused_by",
    "continued_trace",
    "default_caller",
    "given",
    "history_change",
    "recorded_retrieval",
    "unrecorded",
]
