"""The activity log (memory/engine/activity/, stores/sql/activity.py): what each call read and wrote.

Every test reads the log after `activity.flush()`: events are written by a background thread.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine

from memory.engine import (
    ActivityConfig,
    ActivityEvent,
    AgentMemory,
    MemoryExtractionConfig,
    OpenAICompatibleLlm,
    SchemaError,
    SchemaPolicy,
    SQLiteMemoryStore,
    acting_as,
    connect,
    unrecorded,
)
from memory.engine.activity.recorder import ActivityRecorder, default_caller
from memory.engine.stores.sql import SCHEMA_VERSION

from .helpers import FakeMemoryLlm, fake_memory_llm


def fresh_store() -> SQLiteMemoryStore:
    return SQLiteMemoryStore(":memory:", schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)


@pytest.fixture
def memory() -> Iterator[AgentMemory]:
    client = connect("sqlite://:memory:", caller="support-bot")
    yield client
    client.close()


def events(memory: AgentMemory, **filters: Any) -> list[ActivityEvent]:
    assert memory.activity is not None
    assert memory.activity.flush()
    return list(memory.list_activity(limit=None, **filters))


def seed(memory: AgentMemory) -> dict[str, str]:
    with unrecorded():
        ids = {
            "tea": memory.add_memory("The user likes green tea", user_id="u1", agent_id="a1"),
            "peanuts": memory.add_memory("The user is allergic to peanuts", user_id="u1", agent_id="a1"),
            "other": memory.add_memory("Another user likes coffee", user_id="u2", agent_id="a1"),
        }
    return ids


# --- retrievals ------------------------------------------------------------------------------------


def test_a_search_is_recorded_with_its_caller_scope_parameters_ranked_results_scores_and_text(memory):
    ids = seed(memory)
    results = memory.search("green tea", user_id="u1", max_results=5)
    [event] = events(memory, kind="search")
    assert (event.kind, event.call, event.caller, event.caller_kind) == (
        "search",
        "AgentMemory.search",
        "support-bot",
        "agent",
    )
    assert event.scope == {"user_id": "u1", "agent_id": None, "thread_id": None}
    assert event.request["query"] == "green tea" and event.request["max_results"] == 5
    assert [result.record_id for result in event.results] == [result.id for result in results]
    assert event.results[0].record_id == ids["tea"] and event.results[0].rank == 1
    assert event.results[0].scores["distance"] == pytest.approx(results[0].distance)
    assert {"vector_distance", "vector_rank", "keyword_score", "score"} <= set(event.results[0].scores)
    assert event.results[0].status == "valid" and event.results[0].version == 1
    assert event.content == "\n".join(result.formatted_content for result in results)
    assert event.tokens == sum(result.tokens for result in event.results) > 0
    assert event.result_count == len(results) and event.duration_ms > 0
    assert memory.get_activity(event.id) == event


def test_a_thread_search_a_card_and_a_summary_are_one_event_each_with_the_threads_scope(memory):
    seed(memory)
    with unrecorded():
        thread = memory.create_thread(user_id="u1", agent_id="a1")
        thread.add_messages([{"role": "user", "content": "What tea do I like?"}])
    thread.search("peanuts")
    card = thread.get_context_card()
    summary = thread.get_summary()
    recorded = events(memory)
    assert [event.call for event in recorded] == ["Thread.get_summary", "Thread.get_context_card", "Thread.search"]
    scope = {"user_id": "u1", "agent_id": "a1", "thread_id": thread.thread_id}
    assert all(event.scope == scope for event in recorded)
    summary_event, card_event, _ = recorded
    assert card_event.kind == "card" and card_event.content == card.formatted_content
    assert [result.record_id for result in card_event.results] == [result.id for result in card.results]
    assert summary_event.kind == "summary" and summary_event.content == summary.content


def test_a_direct_store_search_is_recorded_and_a_clients_search_is_not_recorded_twice(memory):
    seed(memory)
    hits = memory.store.search("tea", 3, user_id="u1")
    memory.search("tea", user_id="u1")
    recorded = events(memory, kind="search")
    assert [event.call for event in recorded] == ["AgentMemory.search", "MemoryStore.search"]
    assert [result.record_id for result in recorded[1].results] == [record.id for record, _ in hits]
    assert "query_vector" not in recorded[1].request


def test_linked_memories_are_recorded_after_their_ranked_result_with_hop_and_path(memory):
    ids = seed(memory)
    with unrecorded():
        memory.link_records(ids["tea"], "memory", ids["peanuts"], "memory", "supports")
    memory.search("green tea", user_id="u1", max_results=1, num_hops=1)
    [event] = events(memory, kind="search")
    assert [(result.record_id, result.rank, result.hop) for result in event.results] == [
        (ids["tea"], 1, 0),
        (ids["peanuts"], 1, 1),
    ]
    assert event.results[1].path == (ids["tea"], "supports", ids["peanuts"])
    assert event.result_count == 1


def test_the_text_kept_is_cut_at_the_cap_and_the_event_says_how_long_it_was():
    client = AgentMemory(fresh_store(), activity_config=ActivityConfig(content_chars=40))
    seed(client)
    results = client.search("tea", user_id="u1")
    [event] = events(client, kind="search")
    whole = "\n".join(result.formatted_content for result in results)
    assert event.content == whole[:40] and event.content_chars == len(whole) and event.truncated
    client.close()


# --- writes ----------------------------------------------------------------------------------------


def test_writes_are_recorded_with_the_records_they_touched(memory):
    memory_id = memory.add_memory("The user likes jasmine tea", user_id="u1", agent_id="a1")
    other = memory.add_memory("The user likes oolong", user_id="u1", agent_id="a1")
    memory.update_memory(memory_id, content="The user loves jasmine tea")
    link_id = memory.link_records(other, "memory", memory_id, "memory", "supersedes")
    memory.delete_record_link(relation_id=link_id)
    memory.delete_memory(other)
    recorded = events(memory, kind="write")[::-1]
    operations = [(event.request["operation"], [result.record_id for result in event.results]) for event in recorded]
    assert operations == [
        ("add", [memory_id]),
        ("add", [other]),
        ("update", [memory_id]),
        ("link", [other, memory_id]),
        ("unlink", [other, memory_id]),
        ("delete", [other]),
    ]
    assert recorded[0].scope == {"user_id": "u1", "agent_id": "a1", "thread_id": None}
    assert recorded[2].request["fields"] == ["content"]
    assert recorded[3].request["relations"][0]["relation_type"] == "supersedes"
    assert all(event.caller == "support-bot" and event.cause is None for event in recorded)
    assert [event.id for event in events(memory, record_id=other)][-1] == recorded[1].id


def test_creating_a_thread_is_a_write_of_the_thread_and_getting_it_again_is_none(memory):
    thread = memory.create_thread(thread_id="trip-42", user_id="u1", agent_id="a1")
    memory.get_thread(thread.thread_id)
    [event] = events(memory, kind="write")
    assert (event.call, event.request["operation"]) == ("MemoryStore.save_thread", "add")
    assert [(result.record_type, result.record_id) for result in event.results] == [("thread", "trip-42")]
    assert event.scope == {"user_id": "u1", "agent_id": "a1", "thread_id": "trip-42"}


def test_a_person_acting_through_a_server_is_recorded_as_that_person_with_the_history_change(memory):
    with acting_as("alice", caller_kind="person", history_ref="change-1"):
        memory_id = memory.add_memory("Alice wrote this", user_id="u1")
        memory.search("wrote", user_id="u1")
    write, search = events(memory, kind="write")[0], events(memory, kind="search")[0]
    assert (write.caller, write.caller_kind, write.history_ref) == ("alice", "person", "change-1")
    assert write.results[0].record_id == memory_id
    assert (search.caller, search.caller_kind) == ("alice", "person")
    assert [event.id for event in events(memory, caller_kind="agent")] == []


def test_writes_of_a_transaction_that_rolls_back_are_not_recorded(memory):
    with pytest.raises(RuntimeError), memory.transaction():
        memory.add_memory("never stored", user_id="u1")
        raise RuntimeError("undo")
    with memory.transaction():
        kept = memory.add_memory("stored", user_id="u1")
    assert [event.results[0].record_id for event in events(memory, kind="write")] == [kept]


@pytest.fixture
def fake() -> Iterator[FakeMemoryLlm]:
    with fake_memory_llm() as server:
        yield server


def test_memories_the_llm_extracts_are_recorded_with_their_cause_and_its_reads_are_not(fake):
    fake.answers["memory_extraction"] = lambda request: {
        "memories": [{"content": "The user is vegetarian", "memory_type": "fact", "source_messages": [1]}]
    }
    with OpenAICompatibleLlm(fake.url, "test-model", max_attempts=1) as llm:
        client = connect(
            "sqlite://:memory:",
            llm=llm,
            memory_extraction_config=MemoryExtractionConfig(memory_extraction_frequency=1),
            caller="chef-bot",
        )
        thread = client.create_thread(user_id="u1", agent_id="a1")
        [message_id] = thread.add_messages([{"role": "user", "content": "I never eat meat."}])
        thread.wait_for_memory_extraction()
        extracted = [event for event in events(client, kind="write") if event.cause]
        assert extracted, "the extracted memory's write was not recorded with a cause"
        [event] = [event for event in extracted if event.request["operation"] == "add"]
        assert event.cause["what"] == "extraction" and event.cause["message_ids"] == [message_id]
        assert event.caller == "chef-bot"
        assert events(client, kind="search") == []  # the extraction's own search is the engine's
        client.close()


# --- switches, caller, failures --------------------------------------------------------------------


def test_activity_off_records_nothing(monkeypatch):
    monkeypatch.setenv("OAM_ACTIVITY", "off")
    client = connect("sqlite://:memory:")
    seed(client)
    client.search("tea", user_id="u1")
    assert client.activity is None
    assert list(client.list_activity()) == []
    client.close()


def test_record_activity_false_records_nothing_for_the_process():
    client = connect("sqlite://:memory:", record_activity=False)
    client.add_memory("x", user_id="u1")
    client.search("x", user_id="u1")
    assert client.activity is None and list(client.list_activity()) == []
    client.close()


def test_sampling_keeps_writes_and_counts_the_retrievals_it_leaves_out():
    client = AgentMemory(fresh_store(), activity_config=ActivityConfig(sample=0))
    client.add_memory("kept", user_id="u1")
    client.search("kept", user_id="u1")
    assert [event.kind for event in events(client)] == ["write"]
    assert client.activity.stats()["sampled_out"] == 1
    client.close()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("OAM_ACTIVITY", "maybe"),
        ("OAM_ACTIVITY_RETENTION_DAYS", "-1"),
        ("OAM_ACTIVITY_RETENTION_DAYS", "thirty"),
        ("OAM_ACTIVITY_CONTENT_CHARS", "1.5"),
        ("OAM_ACTIVITY_SAMPLE", "2"),
    ],
)
def test_a_bad_switch_is_a_value_error_naming_it(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=name):
        connect("sqlite://:memory:")


def test_the_caller_defaults_to_oam_caller_then_the_programs_name(monkeypatch):
    monkeypatch.setenv("OAM_CALLER", "night-batch")
    assert default_caller() == "night-batch"
    monkeypatch.delenv("OAM_CALLER")
    monkeypatch.setattr(sys, "argv", ["/srv/agents/support_bot.py"])
    assert default_caller() == "support_bot.py"
    monkeypatch.setattr(sys, "argv", ["manage.py", "oam_import", "export.jsonl"])
    assert default_caller() == "manage.py oam_import"
    with pytest.raises(ValueError, match="caller"):
        connect("sqlite://:memory:", caller="  ")


@pytest.mark.parametrize("caller", ["x" * 600, "support\nbot", 42])
def test_a_caller_no_log_could_hold_is_refused_where_it_is_named(monkeypatch, caller):
    """A caller is an id: one clean line within the id limit (a longer one would make Oracle refuse
    the whole batch its events are in)."""
    with pytest.raises(ValueError, match="caller"):
        connect("sqlite://:memory:", caller=caller)
    with pytest.raises(ValueError, match="caller"), acting_as(caller):
        pass
    with pytest.raises(ValueError, match="on_behalf_of"), acting_as("bot", on_behalf_of=caller):
        pass
    if isinstance(caller, str) and caller.strip():
        monkeypatch.setenv("OAM_CALLER", caller)
        with pytest.raises(ValueError, match="OAM_CALLER"):
            connect("sqlite://:memory:")
    monkeypatch.delenv("OAM_CALLER", raising=False)
    monkeypatch.setattr(sys, "argv", ["/srv/agents/a\nb.py"])
    assert default_caller() == "python", "a program name no log could show falls back to python"


def test_a_full_queue_drops_events_without_failing_the_call():
    store = fresh_store()
    client = AgentMemory(store, activity_config=ActivityConfig(queue_capacity=1))
    seed(client)
    gate = threading.Event()
    real_append = store.append_activity
    store.append_activity = lambda batch: (gate.wait(10), real_append(batch))  # the writer is stuck
    for _ in range(5):
        assert client.search("tea", user_id="u1")
    gate.set()
    assert client.activity.flush()
    stats = client.activity.stats()
    assert stats["dropped"] >= 3 and stats["recorded"] + stats["dropped"] == 5
    client.close()


def test_an_unwritable_log_is_counted_and_reported_and_the_search_still_answers():
    store = fresh_store()
    client = AgentMemory(store)
    seed(client)

    def refuse(batch):
        raise sqlite3.OperationalError("disk I/O error")

    store.append_activity = refuse
    assert client.search("tea", user_id="u1")
    assert client.activity.flush()
    stats = client.activity.stats()
    assert stats["failed"] == 1 and stats["recorded"] == 0
    assert "disk I/O error" in stats["last_error"][1]
    client.close()


# --- durability and retention ---------------------------------------------------------------------


def test_events_survive_a_restart_and_another_process_s_calls_are_seen(tmp_path):
    path = tmp_path / "memory.sqlite3"
    first = connect(f"sqlite:///{path}", caller="first")
    first.add_memory("The user likes green tea", user_id="u1")
    first.search("tea", user_id="u1")
    first.close()
    script = (
        "from memory.engine import connect\n"
        f"m = connect('sqlite:///{path}', caller='other-process')\n"
        "m.search('tea', user_id='u1')\n"
    )  # no close(): the exit hook writes the queued event
    subprocess.run([sys.executable, "-c", script], check=True, cwd=str(__import__("pathlib").Path.cwd()))
    reopened = connect(f"sqlite:///{path}", record_activity=False)
    callers = [(event.caller, event.kind) for event in reopened.list_activity()]
    assert callers == [("other-process", "search"), ("first", "search"), ("first", "write")]
    reopened.close()


def old_event(event_id: str, days_ago: int) -> ActivityEvent:
    moment = datetime.now(UTC) - timedelta(days=days_ago)
    return ActivityEvent(id=event_id, kind="search", call="AgentMemory.search", time=moment.isoformat(), caller="x")


def test_retention_purges_events_older_than_its_days(memory):
    memory.store.append_activity([old_event("old", 40), old_event("recent", 5)])
    assert memory.activity.purge() == 1
    assert [event.id for event in memory.list_activity()] == ["recent"]
    keep_all = AgentMemory(fresh_store(), activity_config=ActivityConfig(retention_days=0))
    assert keep_all.purge_activity() == 0
    keep_all.close()


# --- reading the log -------------------------------------------------------------------------------


def test_listing_filters_pages_and_refuses_bad_filters(memory):
    seed(memory)
    with unrecorded():
        thread = memory.create_thread(user_id="u1", agent_id="a1")
    memory.search("green tea", user_id="u1")
    with acting_as("other-bot"):
        thread.search("peanuts")
    events(memory)
    assert [event.caller for event in memory.list_activity(kind="search")] == ["other-bot", "support-bot"]
    assert [event.query for event in memory.list_activity(caller="other-bot")] == ["peanuts"]
    assert [event.query for event in memory.list_activity(thread_id=thread.thread_id)] == ["peanuts"]
    assert [event.query for event in memory.list_activity(q="GREEN")] == ["green tea"]
    assert list(memory.list_activity(since="2999-01-01")) == []
    assert len(memory.list_activity(until="2999-01-01", kind=["search", "card"])) == 2
    first = memory.list_activity(kind="search", limit=1)
    second = memory.list_activity(kind="search", limit=1, cursor=first.next_cursor)
    assert [first[0].caller, second[0].caller] == ["other-bot", "support-bot"] and second.next_cursor is None
    page = memory.list_activity(include_content=False)
    assert all(event.content == "" and event.results == () for event in page)
    for bad in (
        {"kind": "searches"},
        {"caller_kind": "robot"},
        {"q": "x" * 1_001},
        {"since": "yesterday"},
        {"cursor": "forged"},
        {"caller": "x" * 600},
    ):
        with pytest.raises(ValueError):
            memory.list_activity(**bad)
    with pytest.raises(KeyError):
        memory.get_activity("no-such-event")


def test_calls_are_listed_newest_first_by_their_time_whatever_order_they_were_written_in(memory):
    """Writers in several processes each hold their events for a moment: the log orders by the
    time of the call, and pages through calls of the same instant without losing one."""
    seed(memory)
    today = datetime.now(UTC).replace(microsecond=0)  # within the retention, which the writer applies
    for query, days in (("monday", 4), ("friday", 0)):
        with time_machine.travel(today - timedelta(days=days), tick=False):
            memory.search(query, user_id="u1")
    with time_machine.travel(today - timedelta(days=2), tick=False):
        for query in ("wednesday 1", "wednesday 2", "wednesday 3"):
            memory.search(query, user_id="u1")
    events(memory)
    expected = ["friday", "wednesday 3", "wednesday 2", "wednesday 1", "monday"]
    assert [event.query for event in memory.list_activity()] == expected
    paged, cursor = [], None
    while True:
        page = memory.list_activity(limit=2, cursor=cursor)
        paged += [event.query for event in page]
        if (cursor := page.next_cursor) is None:
            break
    assert paged == expected


def test_counts_served_records_and_hygiene(memory):
    ids = seed(memory)
    memory.search("green tea", user_id="u1", max_results=1)
    memory.search("green tea", user_id="u1", max_results=1)
    with acting_as("alice", caller_kind="person"):
        memory.search("peanuts", user_id="u1", max_results=1)
    with unrecorded():
        memory.update_memory(ids["peanuts"], status="invalid")
    memory.search("peanuts allergic", user_id="u1", max_results=1)
    events(memory)
    counts = memory.activity_counts()
    assert counts.total == 4 and counts.by_kind == {"search": 4}
    assert counts.by_caller[0] == ("support-bot", "agent", 3)
    assert [sum(n for _, _, n in counts.by_day)] == [4]
    served = memory.served_records([ids["tea"], ids["peanuts"], ids["other"]], caller_kind="agent")
    assert served[ids["tea"]].calls == 2 and served[ids["tea"]].by_caller == {"support-bot": 2}
    assert served[ids["peanuts"]].calls == 1 and ids["other"] not in served
    hygiene = memory.activity_hygiene(since="2000-01-01", caller_kind="agent")
    assert hygiene.most_served[0].record_id == ids["tea"]
    assert [record.record_id for record in hygiene.invalid_served] == [ids["peanuts"]]
    assert len(hygiene.slowest) == 3
    future = memory.activity_hygiene(since="2999-01-01")
    assert future.never_served_total == 3 and {row[0] for row in future.never_served} == set(ids.values())


# --- the schema ------------------------------------------------------------------------------------


def store_file_altered(path: str, *statements: str) -> str:
    """A store file of today's schema at `path`, then changed by `statements` into an earlier one."""
    SQLiteMemoryStore(path, schema_policy=SchemaPolicy.CREATE_IF_NECESSARY).close()
    with sqlite3.connect(path) as raw:
        for statement in statements:
            raw.execute(statement)
    return path


def test_a_version_6_store_gains_the_activity_tables_in_place(tmp_path):
    path = store_file_altered(
        str(tmp_path / "old.sqlite3"),
        'DROP TABLE "OAM_ACTIVITY_RECORDS"',
        'DROP TABLE "OAM_ACTIVITY"',
        "UPDATE \"OAM_META\" SET meta_value = '6' WHERE meta_key = 'schema_version'",
    )
    with pytest.raises(SchemaError, match="version 6"):
        SQLiteMemoryStore(path, schema_policy=SchemaPolicy.REQUIRE_EXISTING)
    client = connect(f"sqlite:///{path}")
    assert client.health().schema_version == SCHEMA_VERSION == 8
    client.search("anything", user_id="u1")
    assert len(events(client)) == 1
    client.close()


def test_a_store_of_the_first_schema_7_trades_its_pk_ordered_indexes_for_time_ordered_ones(tmp_path):
    path = store_file_altered(
        str(tmp_path / "first.sqlite3"),
        'DROP INDEX "OAM_ACTIVITY_CALLER_AT"',
        'CREATE INDEX "OAM_ACTIVITY_CALLER" ON "OAM_ACTIVITY" (caller, pk)',
    )
    SQLiteMemoryStore(path, schema_policy=SchemaPolicy.CREATE_IF_NECESSARY).close()
    with sqlite3.connect(path) as raw:
        indexes = {row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'OAM_ACTIVITY'")}
    assert {"OAM_ACTIVITY_CALLER_AT", "OAM_ACTIVITY_THREAD_AT"} <= indexes and "OAM_ACTIVITY_CALLER" not in indexes


def test_the_recorder_of_a_closed_store_writes_nothing_more():
    store = fresh_store()
    recorder = ActivityRecorder(store, ActivityConfig())
    store.activity = recorder
    store.close()
    recorder.queue([recorder.write("MemoryStore.add", "add", [])])
    assert recorder.stats()["queued"] == 0
