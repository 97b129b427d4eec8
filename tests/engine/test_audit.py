"""The audit's events in the engine (engine/activity/audit.py): AgentMemory.record_view and the
export events of transfer.export_lines, with ids, scope and counts, never text."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest

from memory.engine import (
    AUDIT_KINDS,
    KINDS,
    AgentMemory,
    Visibility,
    acting_as,
    connect,
    export_lines,
    unrecorded,
    write_export,
)


@pytest.fixture
def memory() -> Iterator[AgentMemory]:
    client = connect("sqlite://:memory:", caller="support-bot")
    with unrecorded():
        client.add_memory("Alice is allergic to peanuts", memory_id="m-alice", user_id="alice", agent_id="a1")
        client.add_memory("Bob likes green tea", memory_id="m-bob", user_id="bob", agent_id="a1")
        client.create_thread(thread_id="t-alice", user_id="alice", agent_id="a1")
        client.add_agent("a1", "A travel agent")
    yield client
    client.close()


def audit(memory: AgentMemory, kind: object = list(AUDIT_KINDS), **filters):
    assert memory.activity.flush()
    return list(memory.list_activity(kind=kind, limit=None, **filters))


def test_the_audit_kinds_are_kinds_of_the_log():
    assert AUDIT_KINDS == ("view", "export") and set(AUDIT_KINDS) <= set(KINDS)


def test_a_view_names_the_caller_the_records_and_whose_they_are_without_text(memory):
    record = memory.get_memory("m-alice")
    with acting_as("vera", caller_kind="person"):
        memory.record_view("GET /memories/{memory_id}/", [record])
    [event] = audit(memory)
    assert (event.kind, event.caller, event.caller_kind, event.call) == (
        "view",
        "vera",
        "person",
        "GET /memories/{memory_id}/",
    )
    assert event.scope == {"user_id": "alice", "agent_id": "a1", "thread_id": None}
    assert [(result.record_type, result.record_id) for result in event.results] == [("memory", "m-alice")]
    assert event.request == {"record_type": "memory", "record_id": "m-alice"} and event.result_count == 1
    assert (event.content, event.content_chars, event.tokens) == ("", 0, 0)
    assert [event.id for event in memory.list_activity(record_id="m-alice")] == [event.id]


def test_a_thread_is_its_own_scope_and_a_page_without_records_names_its_owner(memory):
    memory.record_view("GET /threads/{thread_id}/", [memory.get_thread_record("t-alice")])
    memory.record_view("GET /users/{owner_id}/", user_id="alice")
    thread, user = sorted(audit(memory), key=lambda event: event.call)
    assert thread.scope == {"user_id": "alice", "agent_id": "a1", "thread_id": "t-alice"}
    assert user.scope == {"user_id": "alice", "agent_id": None, "thread_id": None} and not user.results
    assert [event.call for event in audit(memory, user_id="alice")] == [
        "GET /users/{owner_id}/",
        "GET /threads/{thread_id}/",
    ]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"call": ""}, "call"),
        ({"call": 5}, "call"),
        ({"call": "GET /x/", "records": "m-alice"}, "records"),
        ({"call": "GET /x/", "records": [{"id": "m-alice"}]}, "records"),
        ({"call": "GET /x/", "user_id": ""}, "user_id"),
    ],
)
def test_a_bad_argument_is_a_value_error_naming_it_and_records_nothing(memory, arguments, message):
    with pytest.raises(ValueError, match=message):
        memory.record_view(**arguments)
    assert audit(memory) == []


def test_an_export_is_one_event_per_user_it_held_with_counts_and_no_text(memory):
    with acting_as("carl", caller_kind="person"):
        lines = list(export_lines(memory))
    assert len(lines) == 1 + 1 + 3  # the header, a thread, three records (two memories, a profile)
    events = {event.scope["user_id"]: event for event in audit(memory, kind="export")}
    assert set(events) == {"alice", "bob", None}
    assert events["alice"].request["counts"] == {"threads": 1, "records": 1}
    assert events[None].request["counts"] == {"threads": 0, "records": 1}  # the agent's profile
    assert {event.request["export_id"] for event in events.values()} == {events["bob"].request["export_id"]}
    assert all(
        event.request["file_counts"] == {"threads": 1, "records": 3, "relations": 0} for event in events.values()
    )
    assert all(event.caller == "carl" and not event.content and not event.results for event in events.values())
    assert "peanuts" not in repr(list(memory.list_activity(kind="export", limit=None)))


def test_a_scoped_export_names_its_filter_and_an_empty_one_records_nothing(memory):
    write_export(memory, StringIO(), agent_id="a1")
    write_export(memory, StringIO(), user_id="nobody")
    events = audit(memory, kind="export")
    assert {event.scope["user_id"] for event in events} == {"alice", "bob", None}
    assert all(event.request["filters"] == {"agent_id": "a1"} and event.scope["agent_id"] == "a1" for event in events)


def test_nothing_is_recorded_unrecorded_or_with_the_log_off(memory):
    with unrecorded():
        memory.record_view("GET /memories/{memory_id}/", [memory.get_memory("m-alice")])
        list(export_lines(memory))
    assert audit(memory) == []
    quiet = connect("sqlite://:memory:", record_activity=False)
    quiet.record_view("GET /memories/{memory_id}/", user_id="alice")  # no recorder: nothing, no error
    quiet.close()


def test_the_retention_purges_views_and_exports_with_the_rest_of_the_log(memory):
    memory.record_view("GET /memories/{memory_id}/", [memory.get_memory("m-alice")])
    list(export_lines(memory, user_id="bob"))
    assert len(audit(memory)) == 2
    later = datetime.now(UTC) + timedelta(days=memory.activity.config.retention_days, seconds=1)
    assert memory.activity.purge(now=later) == 2
    assert audit(memory) == []


def test_a_restricted_client_records_its_views_and_lists_only_those_of_its_users(memory):
    bob_only = memory.restricted(Visibility(users=["bob"]))
    with acting_as("vera", caller_kind="person"):
        bob_only.record_view("GET /memories/{memory_id}/", [bob_only.get_memory("m-bob")])
        memory.record_view("GET /memories/{memory_id}/", [memory.get_memory("m-alice")])
    assert {event.scope["user_id"] for event in audit(memory)} == {"alice", "bob"}
    assert [event.scope["user_id"] for event in audit(bob_only)] == ["bob"]
