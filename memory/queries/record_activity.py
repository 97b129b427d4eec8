"""A memory's life as its page tells it, from the activity log and the curation history together:
how often agents were served it lately and by whom, the latest calls that returned it (at which
rank), and one timeline — created (by whom; from which messages, when the engine's LLM extracted
it), changed (by agents, the engine's own work and people), served (in which calls). Also the
messages a memory names as its sources, which the page's provenance section shows too."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from memory.engine import RETRIEVAL_KINDS, SOURCE_MESSAGES_KEY, ActivityEvent, AgentMemory, MemoryRecord, MessageRecord
from memory.models import Action, CurationEntry, ObjectKind
from memory.text import short_id

SERVED_DAYS = 30
"""The window of the "served to agents" counts (the log keeps 30 days by default)."""
LATEST_CALLS = 5
CALLERS_SHOWN = 10
TIMELINE_CALLS = 20
"""The calls that served the memory shown in its timeline, the latest; the log lists them all."""
TIMELINE_WRITES = 100
TIMELINE_CHANGES = 100
SOURCES_SHOWN = 20

CREATED, CHANGED, SERVED = "created", "changed", "served"
CAUSES = {
    "extraction": "LLM extraction",
    "link": "automatic link",
    "summary": "summary refresh",
    "caption": "image caption",
}
"""What the engine's own work was, by the `what` of a write's cause (engine/activity/context.py)."""


@dataclass(frozen=True)
class SourceRow:
    """A message a memory came from: its id, and the message (None when it is gone)."""

    message_id: str
    message: MessageRecord | None


def sources_of(agent_memory: AgentMemory, record: MemoryRecord, named: Any = None) -> tuple[list[SourceRow], int]:
    """The first SOURCES_SHOWN messages a memory came from, in its own thread, and how many are
    named in all: those `named` (an extraction's cause), else those its metadata names (its
    provenance, SOURCE_MESSAGES_KEY). A hand-written memory names none."""
    if named is None:
        named = (record.metadata or {}).get(SOURCE_MESSAGES_KEY)
    if not record.thread_id or not isinstance(named, list):
        return [], 0
    ids = [message_id for message_id in dict.fromkeys(named) if isinstance(message_id, str) and message_id]
    rows = []
    for message_id in ids[:SOURCES_SHOWN]:
        try:
            message = agent_memory.get_message_record(record.thread_id, message_id)
        except (KeyError, ValueError):  # deleted, expired, or an id no message can have
            message = None
        rows.append(SourceRow(message_id, message))
    return rows, len(ids)


@dataclass(frozen=True)
class ServedCall:
    """A call that returned the record, and where the record was in what the caller got: its
    `rank` (None when the event kept no results for it), `hop` > 0 when a link reached it from
    the result at that rank, and its status at that moment."""

    event: ActivityEvent
    rank: int | None
    hop: int
    status: str | None


def served_call(event: ActivityEvent, record_id: str) -> ServedCall:
    """The record's place in a call's results: as a ranked result before as a linked one."""
    found = [result for result in event.results if result.record_id == record_id]
    if not found:
        return ServedCall(event, None, 0, None)
    first = min(found, key=lambda result: (result.hop, result.rank or 0))
    return ServedCall(event, first.rank, first.hop, first.status)


@dataclass(frozen=True)
class ServedToAgents:
    """The page's "Served to agents" panel: calls since `since` and the busiest callers (the
    rest counted together), the latest calls that returned it, and how many calls ever did."""

    since: datetime
    calls: int
    last_served: str | None
    callers: list[tuple[str, int]]
    other_callers: int
    other_calls: int
    latest: list[ServedCall]
    all_time: int


@dataclass(frozen=True)
class TimelineEntry:
    """One moment of a record's life. `who` is the caller or the person ("" when nobody is known),
    `who_kind` "agent" or "person"; `what` says what happened in words; `event` is the logged
    call, `change` the curation-history entry (a person's change has both when the log ties them),
    `served` the record's place in a retrieval; `cause` what the engine's own work was."""

    at: datetime
    kind: str
    who: str = ""
    who_kind: str = ""
    what: str = ""
    event: ActivityEvent | None = None
    change: CurationEntry | None = None
    served: ServedCall | None = None
    cause: str = ""
    sources: tuple[SourceRow, ...] = ()
    source_count: int = 0


@dataclass(frozen=True)
class RecordActivity:
    """What the memory page shows of the log: the panel, the timeline (oldest first), and whether
    the timeline leaves older writes or changes out (calls beyond TIMELINE_CALLS are counted in
    `served.all_time`). `recording`: whether this process records calls (OAM_ACTIVITY)."""

    served: ServedToAgents
    timeline: list[TimelineEntry]
    shown_calls: int
    more_writes: bool
    more_changes: bool
    recording: bool


def record_activity(agent_memory: AgentMemory, record: MemoryRecord, *, now: datetime | None = None) -> RecordActivity:
    """The activity of one memory: the calls of agents that returned it, and its writes and
    curation changes, merged into one timeline.

    The served calls are read with their results (include_content): the rank a call gave the
    memory is in them, and the latest TIMELINE_CALLS are few enough to read whole."""
    since = (now or datetime.now(UTC)) - timedelta(days=SERVED_DAYS)
    calls = agent_memory.list_activity(
        record_id=record.id, kind=list(RETRIEVAL_KINDS), caller_kind="agent", limit=TIMELINE_CALLS
    )
    served_calls = [served_call(event, record.id) for event in calls]
    writes = agent_memory.list_activity(record_id=record.id, kind="write", limit=TIMELINE_WRITES, include_content=False)
    changes = list(CurationEntry.objects.of_memory(record.id).order_by("-id")[: TIMELINE_CHANGES + 1])
    timeline = merged_timeline(agent_memory, record, served_calls, list(writes), changes[:TIMELINE_CHANGES])
    return RecordActivity(
        served=served_to_agents(agent_memory, record.id, since, served_calls[:LATEST_CALLS]),
        timeline=timeline,
        shown_calls=len(served_calls),
        more_writes=writes.next_cursor is not None,
        more_changes=len(changes) > TIMELINE_CHANGES,
        recording=agent_memory.activity is not None,
    )


def served_to_agents(
    agent_memory: AgentMemory, record_id: str, since: datetime, latest: list[ServedCall]
) -> ServedToAgents:
    recent = agent_memory.served_records([record_id], since=since.isoformat(), caller_kind="agent").get(record_id)
    ever = agent_memory.served_records([record_id], caller_kind="agent").get(record_id)
    by_caller = sorted((recent.by_caller if recent else {}).items(), key=lambda item: (-item[1], item[0]))
    others = by_caller[CALLERS_SHOWN:]
    return ServedToAgents(
        since=since,
        calls=recent.calls if recent else 0,
        last_served=ever.last_served if ever else None,
        callers=by_caller[:CALLERS_SHOWN],
        other_callers=len(others),
        other_calls=sum(count for _, count in others),
        latest=latest,
        all_time=ever.calls if ever else 0,
    )


def merged_timeline(
    agent_memory: AgentMemory,
    record: MemoryRecord,
    served: list[ServedCall],
    writes: list[ActivityEvent],
    changes: list[CurationEntry],
) -> list[TimelineEntry]:
    """One list, oldest first. A person's write and its history entry are one entry (the log
    names the change). The creation comes from the log's add, else from the history's, else from
    the record's own stored time (made before the log, or its event purged)."""
    by_change = {entry.pk: change_entry(entry, record.id) for entry in changes}
    entries: list[TimelineEntry] = []
    for event in writes:
        entry = write_entry(agent_memory, record, event)
        pk = change_of(event, record.id, changes, by_change)
        if pk is None:
            entries.append(entry)
            continue
        change = by_change[pk]
        by_change[pk] = replace(change, event=event, kind=CREATED if entry.kind == CREATED else change.kind)
    entries.extend(by_change.values())
    if not any(entry.kind == CREATED for entry in entries):
        sources, count = sources_of(agent_memory, record)
        entries.append(
            TimelineEntry(
                at=parsed(record.created_at), kind=CREATED, what="stored", sources=tuple(sources), source_count=count
            )
        )
    entries.extend(
        TimelineEntry(
            at=parsed(call.event.time),
            kind=SERVED,
            who=call.event.caller,
            who_kind=call.event.caller_kind,
            served=call,
            event=call.event,
        )
        for call in served
    )
    order = {CREATED: 0, CHANGED: 1, SERVED: 2}
    return sorted(entries, key=lambda entry: (entry.at, order[entry.kind]))


def change_of(
    event: ActivityEvent, record_id: str, changes: list[CurationEntry], taken: dict[int, TimelineEntry]
) -> int | None:
    """The history entry (its pk) a logged write belongs to, that no other write took: one of the
    change the log names (`history_ref`, the change's token), the record's own entry first (the
    change may hold the entries of its links too)."""
    if not event.history_ref:
        return None
    free = [entry for entry in changes if entry.change_token == event.history_ref and taken[entry.pk].event is None]
    free.sort(key=lambda entry: entry.object_id != record_id)
    return free[0].pk if free else None


def change_entry(entry: CurationEntry, record_id: str) -> TimelineEntry:
    """A curation-history entry: a person's change through the dashboard or the API."""
    created = entry.action == Action.CREATE and entry.object_kind == ObjectKind.MEMORY and entry.object_id == record_id
    who = entry.actor_name + (f" ({entry.token_name})" if entry.token_name else "")
    return TimelineEntry(
        at=entry.at, kind=CREATED if created else CHANGED, who=who, who_kind="person", what=entry.summary, change=entry
    )


def write_entry(agent_memory: AgentMemory, record: MemoryRecord, event: ActivityEvent) -> TimelineEntry:
    """A logged write that touched the record, in words; an add is its creation, with the messages
    it came from when the engine's LLM extracted it."""
    operation = event.request.get("operation")
    cause = event.cause or {}
    what = cause.get("what") if isinstance(cause.get("what"), str) else ""
    common = {
        "at": parsed(event.time),
        "who": event.caller,
        "who_kind": event.caller_kind,
        "event": event,
        "cause": CAUSES.get(what, what),
    }
    if operation == "add":
        sources, count = sources_of(agent_memory, record, cause.get("message_ids")) if what == "extraction" else ([], 0)
        if what == "extraction" and not count:
            sources, count = sources_of(agent_memory, record)
        return TimelineEntry(kind=CREATED, what="created", sources=tuple(sources), source_count=count, **common)
    return TimelineEntry(kind=CHANGED, what=write_words(event, record.id), **common)


def write_words(event: ActivityEvent, record_id: str) -> str:
    """What a write did to the record: "changed its text and metadata", "linked: supersedes
    “mem-2”", "deleted"."""
    operation = event.request.get("operation")
    if operation == "update":
        fields = [name for name in event.request.get("fields") or () if name not in ("index_text", "embedding")]
        return "changed its " + and_list(fields) if fields else "changed"
    if operation in ("link", "relink", "unlink"):
        verb = {"link": "linked", "relink": "retyped a link", "unlink": "unlinked"}[operation]
        relations = [
            relation
            for relation in event.request.get("relations") or ()
            if isinstance(relation, dict)
            and record_id in (relation.get("source_record_id"), relation.get("target_record_id"))
        ]
        if not relations:
            return verb
        return f"{verb}: " + ", ".join(link_words(relation, record_id) for relation in relations)
    return {"delete": "deleted", "restore": "restored", "purge": "purged (expired)"}.get(
        str(operation), str(operation or "wrote")
    )


def link_words(relation: dict[str, Any], record_id: str) -> str:
    """A link as seen from the record: "supersedes mem-2" going out, "mem-2 supersedes it" coming in."""
    relation_type = relation.get("relation_type") or "link"
    if relation.get("source_record_id") == record_id:
        return f"{relation_type} {short_id(relation.get('target_record_id'))}"
    return f"{short_id(relation.get('source_record_id'))} {relation_type} it"


def and_list(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def parsed(moment: Any) -> datetime:
    """An engine time (ISO-8601 text, UTC without a zone) or Django's datetime, as an aware datetime."""
    if isinstance(moment, datetime):
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    value = datetime.fromisoformat(str(moment))
    return value if value.tzinfo else value.replace(tzinfo=UTC)
