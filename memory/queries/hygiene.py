"""What the activity log says about the store's memories, for the overview: the memories agents
are served most, those no agent was served in 30 days, invalid ones agents are still handed
(retired facts in their prompts), and the slowest calls; and whether this process's recorder is
keeping up (the overview and /healthz), which must be told, never raised: recording never fails
a call, so a full queue or a log the store refuses shows only here."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from memory.engine import MEMORY_TYPES, ActivityEvent, AgentMemory, Record, ServedRecord
from memory.queries.activity import read_record

HYGIENE_DAYS = 30
ROWS_SHOWN = 5
ROWS_READ = 20
"""The log's busiest records are read this deep: messages and profiles are served too, and the
panel shows memories alone."""


@dataclass(frozen=True)
class ServedRow:
    """A record the log says agents were served, with the record as it is now (None: gone)."""

    served: ServedRecord
    record: Record | None


@dataclass(frozen=True)
class UnservedRow:
    """A memory no agent was served since the panel's day, with the memory (None: gone since)."""

    record_id: str
    record_type: str
    created_at: str
    record: Record | None


@dataclass(frozen=True)
class Hygiene:
    """The overview's "Memory hygiene" panel: calls of agents since `since`."""

    since: datetime
    most_served: list[ServedRow]
    never_served: list[UnservedRow]
    never_served_total: int
    invalid_served: list[ServedRow]
    slowest: list[ActivityEvent]


def memory_hygiene(agent_memory: AgentMemory, *, now: datetime | None = None) -> Hygiene:
    """The log's view of the memories over the last HYGIENE_DAYS, counting agents' calls only (a
    person searching the dashboard is not an agent being served)."""
    since = (now or datetime.now(UTC)) - timedelta(days=HYGIENE_DAYS)
    report = agent_memory.activity_hygiene(since=since.isoformat(), caller_kind="agent", limit=ROWS_READ)

    def rows(served: Any) -> list[ServedRow]:
        memories = [record for record in served if record.record_type in MEMORY_TYPES][:ROWS_SHOWN]
        return [
            ServedRow(record, read_record(agent_memory, record.record_type, record.record_id)) for record in memories
        ]

    return Hygiene(
        since=since,
        most_served=rows(report.most_served),
        never_served=[
            UnservedRow(record_id, record_type, created_at, read_record(agent_memory, record_type, record_id))
            for record_id, record_type, created_at in report.never_served[:ROWS_SHOWN]
        ],
        never_served_total=report.never_served_total,
        invalid_served=rows(report.invalid_served),
        slowest=list(report.slowest[:ROWS_SHOWN]),
    )


@dataclass(frozen=True)
class RecorderHealth:
    """This process's activity recorder: `enabled` False when OAM_ACTIVITY=off (nothing counted),
    else its counts since the process started and its last write error (time, message)."""

    enabled: bool
    recorded: int = 0
    dropped: int = 0
    failed: int = 0
    queued: int = 0
    last_error: tuple[str, str] | None = None

    @property
    def troubled(self) -> bool:
        """Events were lost (queue full, or the store refused them), or a write failed."""
        return bool(self.dropped or self.failed or self.last_error)

    def as_json(self) -> dict[str, Any]:
        """The counts for /healthz. The probe is public: the last error is named by its type and
        time only (its message may hold a path or a DSN)."""
        error = None
        if self.last_error:
            at, message = self.last_error
            error = {"at": at, "type": message.split(":", 1)[0]}
        return {
            "enabled": self.enabled,
            "recorded": self.recorded,
            "dropped": self.dropped,
            "failed": self.failed,
            "queued": self.queued,
            "last_error": error,
        }


def recorder_health(agent_memory: AgentMemory) -> RecorderHealth:
    recorder = agent_memory.activity
    if recorder is None:
        return RecorderHealth(enabled=False)
    stats = recorder.stats()
    return RecorderHealth(
        enabled=True,
        recorded=stats["recorded"],
        dropped=stats["dropped"],
        failed=stats["failed"],
        queued=stats["queued"],
        last_error=tuple(stats["last_error"]) if stats["last_error"] else None,
    )
