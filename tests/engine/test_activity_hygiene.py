"""activity_hygiene on every store, against the same report computed by hand from the events and
the records: the busiest records and those served invalid (calls, callers, last call), the
memories stored before the day and served to no one since (their count and the oldest), and the
slowest calls. Writes are logged with a row per record too, and must never count as serving it."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine

from memory.engine import ActivityEvent, ActivityResult

NOW = datetime.now(UTC)
SINCE = (NOW - timedelta(days=30)).isoformat()
RETRIEVALS = ("search", "card", "summary")
PERSON = {"caller": "alice", "caller_kind": "person"}


def days_ago(days: float) -> str:
    return (NOW - timedelta(days=days)).isoformat()


def event(
    event_id: str,
    kind: str,
    when: str,
    results: list[tuple[str, str, str]],
    *,
    caller: str = "bot-a",
    caller_kind: str = "agent",
    duration_ms: float = 1.0,
) -> ActivityEvent:
    """A call that returned (or, a write, changed) `results`: (record_id, record_type, status)."""
    return ActivityEvent(
        id=event_id,
        kind=kind,
        call="AgentMemory.search" if kind == "search" else "MemoryStore.add",
        time=when,
        caller=caller,
        caller_kind=caller_kind,
        results=[
            ActivityResult(record_id, record_type, rank=None if kind == "write" else n, status=status)
            for n, (record_id, record_type, status) in enumerate(results, 1)
        ],
        result_count=len(results),
        duration_ms=duration_ms,
    )


@pytest.fixture
def logged(store) -> tuple[Any, list[ActivityEvent]]:
    """Memories stored 40 days ago (one of them expired since, one deleted), two today, a message;
    and a log of writes and retrievals, some before the 30 days, by agents and by a person."""
    with time_machine.travel(NOW - timedelta(days=40)):
        store.add([f"old memory {n}" for n in range(8)], "fact", record_ids=[f"old-{n}" for n in range(8)])
        store.add(["gone soon"], "fact", record_ids=["expired"], ttl_days=1)
        store.add(["a guideline"], "guideline", record_ids=["rule"])
        store.add(["to be deleted"], "fact", record_ids=["deleted"])
    store.add(["new memory", "newer memory"], "fact", record_ids=["new-0", "new-1"])
    [message] = store.add(["hello"], "message", record_ids=["msg"], thread_ids=["t1"], roles=["user"])
    store.delete("fact", "deleted")
    old = [(f"old-{n}", "fact", "valid") for n in range(8)]
    events = [
        # Writes name every record they changed, at every time: never a retrieval.
        event("w1", "write", days_ago(40), [*old, ("expired", "fact", "valid")]),
        event("w2", "write", days_ago(1), [*old, ("rule", "guideline", "valid")]),
        # Before the 30 days: does not count.
        event("s0", "search", days_ago(35), [("old-7", "fact", "valid")], duration_ms=900.0),
        event("s1", "search", days_ago(10), [("old-0", "fact", "valid"), ("old-1", "fact", "valid")], duration_ms=5),
        event("s2", "search", days_ago(9), [("old-0", "fact", "valid"), (message, "message", "valid")], caller="bot-b"),
        event("s3", "card", days_ago(8), [("old-0", "fact", "valid"), ("old-2", "fact", "invalid")], duration_ms=50),
        event("s4", "search", days_ago(7), [("old-2", "fact", "invalid"), ("new-0", "fact", "valid")], caller="bot-b"),
        event("s5", "summary", days_ago(6), [("deleted", "fact", "valid"), ("expired", "fact", "valid")]),
        # A record reached twice by one call counts once.
        event("s6", "search", days_ago(5), [("old-1", "fact", "valid"), ("old-1", "fact", "valid")], duration_ms=20),
        # A person's searches count only when every caller is asked for.
        event("p1", "search", days_ago(4), [("old-3", "fact", "valid"), ("old-2", "fact", "invalid")], **PERSON),
        event("p2", "search", days_ago(3), [("old-3", "fact", "valid")], duration_ms=300.0, **PERSON),
    ]
    store.append_activity(events)
    return store, events


def expected(store: Any, events: list[ActivityEvent], caller_kind: str | None, limit: int) -> dict[str, Any]:
    """The report by hand: the events as appended, the records as the store lists them."""
    window = [
        e
        for e in events
        if e.kind in RETRIEVALS and e.time >= SINCE and (caller_kind is None or e.caller_kind == caller_kind)
    ]

    def served(invalid: bool) -> list[tuple[str, str, int, dict[str, int]]]:
        calls: dict[str, dict[str, set[str]]] = {}
        types: dict[str, str] = {}
        for e in window:
            for result in e.results:
                if invalid and result.status != "invalid":
                    continue
                calls.setdefault(result.record_id, {}).setdefault(e.caller, set()).add(e.id)
                types[result.record_id] = result.record_type
        rows = [
            (
                record_id,
                types[record_id],
                len(set().union(*by_caller.values())),
                {caller: len(ids) for caller, ids in by_caller.items()},
            )
            for record_id, by_caller in calls.items()
        ]
        return sorted(rows, key=lambda row: (-row[2], row[0]))[:limit]

    served_ids = {result.record_id for e in window for result in e.results}
    memories = [
        record
        for memory_type in ("fact", "preference", "guideline", "memory")
        for record in store.list(memory_type, limit=None)
    ]
    since = datetime.fromisoformat(SINCE)
    unserved = sorted(
        (record for record in memories if datetime.fromisoformat(record.created_at) < since),
        key=lambda record: record.created_at,
    )
    unserved = [record for record in unserved if record.id not in served_ids]
    return {
        "most": served(False),
        "invalid": served(True),
        "never_total": len(unserved),
        "never": [record.id for record in unserved][:limit],
        # ties: the later call first
        "slowest": [e.id for e in sorted(window, key=lambda e: (-e.duration_ms, -events.index(e)))][:limit],
    }


def report(store: Any, caller_kind: str | None, limit: int) -> dict[str, Any]:
    hygiene = store.activity_hygiene(since=SINCE, limit=limit, caller_kind=caller_kind)

    def rows(records) -> list[tuple[str, str, int, dict[str, int]]]:
        return [(r.record_id, r.record_type, r.calls, dict(r.by_caller)) for r in records]

    return {
        "most": rows(hygiene.most_served),
        "invalid": rows(hygiene.invalid_served),
        "never_total": hygiene.never_served_total,
        "never": [record_id for record_id, _, _ in hygiene.never_served],
        "slowest": [e.id for e in hygiene.slowest],
    }


@pytest.mark.parametrize("caller_kind", ["agent", None, "person"])
@pytest.mark.parametrize("limit", [2, 10])
def test_hygiene_is_the_report_computed_by_hand(logged, caller_kind, limit):
    store, events = logged
    assert report(store, caller_kind, limit) == expected(store, events, caller_kind, limit)


def test_what_the_agents_report_says(logged):
    """The same report spelled out, so that a mistake shared with `expected` still shows."""
    store, _ = logged
    hygiene = store.activity_hygiene(since=SINCE, limit=10, caller_kind="agent")
    assert [(r.record_id, r.calls, dict(r.by_caller)) for r in hygiene.most_served] == [
        ("old-0", 3, {"bot-a": 2, "bot-b": 1}),
        ("old-1", 2, {"bot-a": 2}),
        ("old-2", 2, {"bot-a": 1, "bot-b": 1}),
        ("deleted", 1, {"bot-a": 1}),
        ("expired", 1, {"bot-a": 1}),
        (hygiene.most_served[5].record_id, 1, {"bot-b": 1}),  # the message
        ("new-0", 1, {"bot-b": 1}),
    ]
    assert hygiene.most_served[5].record_type == "message"  # the log's busiest records are of every kind
    [old_2] = hygiene.invalid_served
    assert (old_2.record_id, old_2.calls, dict(old_2.by_caller)) == ("old-2", 2, {"bot-a": 1, "bot-b": 1})
    assert old_2.last_served[:10] == days_ago(7)[:10]
    # stored before the 30 days, live, and served to no agent since: old-3 (a person's searches
    # only) to old-7 (served before the 30 days), and the guideline; not the expired or the
    # deleted memory, not today's, not the message
    assert hygiene.never_served_total == 6
    never = [record_id for record_id, _, _ in hygiene.never_served]
    assert never == ["old-3", "old-4", "old-5", "old-6", "old-7", "rule"]
    assert [e.id for e in hygiene.slowest] == ["s3", "s6", "s1", "s5", "s4", "s2"]


def test_an_empty_log_leaves_every_old_memory_unserved(store):
    with time_machine.travel(NOW - timedelta(days=40)):
        store.add(["one", "two"], "preference", record_ids=["p1", "p2"])
    hygiene = store.activity_hygiene(since=SINCE, limit=1)
    assert hygiene.most_served == [] and hygiene.invalid_served == [] and hygiene.slowest == []
    assert hygiene.never_served_total == 2 and [row[0] for row in hygiene.never_served] == ["p1"]


def test_the_embedded_store_reads_no_table_through(tmp_path, monkeypatch):
    """SQLite's plan of every statement: no record, logged result or logged call is read by a
    scan. The log's rows are mostly writes (a row per record changed), so results are read by
    their retrieval events' keys, and memories stored before the day come from their index."""
    from memory.engine import SchemaPolicy, SQLiteMemoryStore

    store = SQLiteMemoryStore(str(tmp_path / "plans.sqlite3"), schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)
    with time_machine.travel(NOW - timedelta(days=40)):
        store.add(["an old memory"], "fact", record_ids=["old"])
    store.append_activity([event("s1", "search", days_ago(2), [("old", "fact", "invalid")])])
    plans: list[tuple[str, list[str]]] = []
    fetch = store._fetch

    def explained(sql: str, params: Any = None, cursor: Any = None) -> list[dict[str, Any]]:
        plans.append((sql, [row["detail"] for row in fetch(f"EXPLAIN QUERY PLAN {sql}", params, cursor)]))
        return fetch(sql, params, cursor)

    monkeypatch.setattr(store, "_fetch", explained)
    for caller_kind in ("agent", None):
        hygiene = store.activity_hygiene(since=SINCE, limit=5, caller_kind=caller_kind)
        assert [r.record_id for r in hygiene.invalid_served] == ["old"] and hygiene.never_served_total == 0
    assert len(plans) == 12
    through = (
        r"SCAN (TABLE )?(r|ar|a)\b",  # a table read through
        r"SEARCH (TABLE )?r USING .*\(kind=\?\)$",  # every record of a kind
        r"SEARCH (TABLE )?ar USING .*\(event_at>\?\)$",  # every result logged since, writes' included
    )
    for sql, plan in plans:
        scans = [step for step in plan if any(re.match(pattern, step) for pattern in through)]
        assert not scans, (sql, plan)
    store.close()
