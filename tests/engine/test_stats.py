"""Store counts (stats, owner_counts), on every backend: the overview page and delete confirmations."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from memory.engine import StoreStats, TimeToLiveAnchor
from memory.engine.stores.sql import SCHEMA_VERSION
from memory.engine.types import RECORD_TYPES

from .test_images import PNG

EXPIRED = {"timestamp": "2000-01-01T00:00:00Z", "ttl_days": 1, "ttl_anchor": TimeToLiveAnchor.TIMESTAMP}


def seed(memory) -> None:
    """Two users, two agents, three threads; messages with an image part; memories of every type
    with links (one lifecycle); a flagged memory; standalone images; profiles; expired records."""
    t1 = memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    t2 = memory.create_thread(thread_id="t2", user_id="u1", agent_id="a2")
    t3 = memory.create_thread(thread_id="t3", user_id="u2", agent_id="a1")
    t1.add_messages(
        [
            {"role": "user", "content": "hi", "timestamp": "2024-05-01T23:30:00-02:00"},  # 2 May in UTC
            {"role": "user", "content": [{"type": "text", "text": "see"}, {"type": "image", "bytes": PNG}]},
        ]
    )
    t2.add_messages([{"role": "user", "content": "other", "timestamp": "2024-05-03T10:00:00Z"}])
    t3.add_messages([{"role": "user", "content": "third", "timestamp": "2024-05-03T11:00:00Z"}])
    t1.add_memory("old fact", memory_type="fact", memory_id="f-old", timestamp="2024-05-01T08:00:00Z")
    t1.add_memory("new fact", memory_type="fact", memory_id="f-new", memory_id_to_link="f-old", link_type="supersedes")
    t2.add_memory("likes tea", memory_type="preference", memory_id="p1", timestamp="2024-05-03T09:00:00Z")
    memory.link_records("p1", "preference", "f-new", "fact", "supports")
    t3.add_memory("be brief", memory_type="guideline", memory_id="g1", status="invalid")
    memory.add_memory("a free memory", user_id="u2", agent_id="a2", memory_id="m-free")
    memory.link_records("m-free", "memory", "g1", "guideline", "likes_of")  # a custom label
    memory.add_memory("gone", user_id="u1", memory_id="m-gone", **EXPIRED)
    t1.add_image(PNG, description="an oven")
    memory.add_image(PNG, description="a free image", user_id="u2")
    memory.add_user("u1", "Ada")
    memory.add_agent("a3", "an agent without threads")


def test_an_empty_store_has_every_key_at_zero(memory, store):
    stats = memory.stats()
    assert isinstance(stats, StoreStats)
    assert stats.records == {t: {"valid": 0, "invalid": 0, "expired": 0} for t in RECORD_TYPES}
    assert (stats.links, stats.threads, stats.users, stats.agents, stats.by_day) == ({}, 0, 0, 0, [])
    assert stats.backend in ("sqlite", "oracle") and stats.backend == store.dialect.name
    assert (stats.embedder, stats.vector_dim, stats.schema_version) == (store.embedder.name, 64, SCHEMA_VERSION)
    assert (stats.messages, stats.memories, stats.images, stats.expired, stats.link_count) == (0, 0, 0, 0, 0)


def test_the_whole_store_is_counted_by_type_status_day_and_link_type(memory):
    seed(memory)
    today = datetime.now(UTC).date().isoformat()
    stats = memory.stats()
    assert stats.records["message"] == {"valid": 4, "invalid": 0, "expired": 0}
    assert stats.records["fact"] == {"valid": 1, "invalid": 1, "expired": 0}  # f-old superseded
    assert stats.records["preference"] == {"valid": 1, "invalid": 0, "expired": 0}
    assert stats.records["guideline"] == {"valid": 0, "invalid": 1, "expired": 0}
    assert stats.records["memory"] == {"valid": 1, "invalid": 0, "expired": 1}
    assert stats.records["image"] == {"valid": 3, "invalid": 0, "expired": 0}
    assert stats.records["user_profile"]["valid"] == 1 and stats.records["agent_profile"]["valid"] == 1
    assert stats.links == {"likes_of": 1, "supersedes": 1, "supports": 1}
    assert (stats.threads, stats.users, stats.agents) == (3, 2, 3)
    assert (stats.messages, stats.memories, stats.images, stats.expired, stats.link_count) == (4, 5, 3, 1, 3)
    assert stats.by_day == sorted(
        [
            ("2024-05-01", "memory", 1),
            ("2024-05-02", "message", 1),
            ("2024-05-03", "memory", 1),
            ("2024-05-03", "message", 2),
            (today, "memory", 3),
            (today, "message", 1),
        ]
    )


@pytest.mark.parametrize(
    ("scope", "delete"),
    [
        ({"thread_id": "t1"}, lambda memory: memory.delete_thread("t1")),
        ({"user_id": "u1"}, lambda memory: memory.delete_user("u1", cascade=True)),
        ({"agent_id": "a1"}, lambda memory: memory.delete_agent("a1", cascade=True)),
        ({"user_id": "u2"}, lambda memory: memory.delete_user("u2", cascade=True)),
        ({"agent_id": "a3"}, lambda memory: memory.delete_agent("a3", cascade=True)),
    ],
    ids=["thread", "user", "agent", "other-user", "profile-only-agent"],
)
def test_scoped_counts_are_what_the_delete_then_removes(memory, scope, delete):
    seed(memory)
    before, scoped = memory.stats(), memory.stats(**scope)
    delete(memory)
    after = memory.stats()
    for record_type in RECORD_TYPES:
        # Live records by type (a deleted superseding memory may turn a kept one valid: the
        # status of what stays can change, not how many go) and expired ones.
        live = [
            stats.records[record_type]["valid"] + stats.records[record_type]["invalid"] for stats in (before, after)
        ]
        assert scoped.records[record_type]["valid"] + scoped.records[record_type]["invalid"] == live[0] - live[1]
        expired = before.records[record_type]["expired"] - after.records[record_type]["expired"]
        assert scoped.records[record_type]["expired"] == expired, record_type
    assert (before.messages - after.messages, before.memories - after.memories) == (scoped.messages, scoped.memories)
    for label, count in before.links.items():
        assert scoped.links.get(label, 0) == count - after.links.get(label, 0), label
    assert scoped.threads == before.threads - after.threads
    assert scoped.users >= 1 or scoped.agents >= 1


def test_scoped_counts_of_nothing_are_zero_and_bad_scopes_are_refused(memory):
    seed(memory)
    assert memory.stats(thread_id="nope").records["message"] == {"valid": 0, "invalid": 0, "expired": 0}
    with pytest.raises(ValueError, match="at most one"):
        memory.stats(user_id="u1", agent_id="a1")
    for bad in ("", None, 5, "a\x00b"):
        with pytest.raises(ValueError, match="user_id"):
            memory.stats(user_id=bad)


def test_repeated_counts_follow_every_write_and_every_expiry(memory, store):
    seed(memory)
    first = memory.stats()
    assert memory.stats() == first
    memory.create_thread(thread_id="t-empty", user_id="u9", agent_id="a1")  # a thread alone is a change
    assert (memory.stats().threads, memory.stats().users) == (first.threads + 1, first.users + 1)
    memory.update_memory("p1", status="invalid")
    assert memory.stats().records["preference"] == {"valid": 0, "invalid": 1, "expired": 0}
    soon = datetime.now(UTC) + timedelta(seconds=1.5)
    memory.update_memory("m-free", expires_at=soon)
    assert memory.stats().records["memory"]["expired"] == 1
    time.sleep(max(0.0, (soon - datetime.now(UTC)).total_seconds()) + 0.2)
    assert memory.stats().records["memory"]["expired"] == 2  # no write in between: the expiry ends the memo
    stats = memory.stats()
    stats.records["memory"]["expired"] = 99  # the caller's copy: the memo is not touched
    assert memory.stats().records["memory"]["expired"] == 2


def test_owner_counts_count_threads_live_messages_and_memories_per_id(memory):
    seed(memory)
    counts = memory.owner_counts("user", ["u1", "u2", "nobody", "u1"])
    assert counts == {
        "u1": {"threads": 2, "messages": 3, "memories": 3},  # m-gone expired
        "u2": {"threads": 1, "messages": 1, "memories": 2},
        "nobody": {"threads": 0, "messages": 0, "memories": 0},
    }
    assert memory.owner_counts("agent", ["a1", "a3"]) == {
        "a1": {"threads": 2, "messages": 3, "memories": 3},
        "a3": {"threads": 0, "messages": 0, "memories": 0},
    }
    assert memory.owner_counts("agent", []) == {}
    for owner, ids in [("thread", ["t1"]), ("users", ["u1"]), (None, ["u1"]), ("user", "u1"), ("user", [""])]:
        with pytest.raises(ValueError):
            memory.owner_counts(owner, ids)


def test_counts_inside_a_transaction_see_its_writes_and_are_not_kept_after_a_rollback(memory, store):
    seed(memory)
    before = memory.stats()
    with pytest.raises(RuntimeError), store.transaction():
        store.add(["undone", "undone too"], "memory", record_ids=["m-undone", "m-undone-2"], user_ids="u1")
        assert memory.stats().records["memory"]["valid"] == before.records["memory"]["valid"] + 2
        raise RuntimeError("roll back")
    memory.add_memory("kept", user_id="u1", memory_id="m-kept")  # may take the rolled-back log number
    assert memory.stats().records["memory"]["valid"] == before.records["memory"]["valid"] + 1
    assert store.get("memory", "m-undone") is None


def test_owner_counts_follow_every_write_and_expiry_though_memoised(memory, store):
    memory.add_memory("likes tea", memory_type="fact", agent_id="a1", autonomous_linking=False)
    assert store.owner_counts("agent", ["a1"])["a1"]["memories"] == 1
    assert store.owner_counts("agent", ["a1"])["a1"]["memories"] == 1  # from the memo

    short = memory.add_memory("soon gone", memory_type="fact", agent_id="a1", ttl_days=1, autonomous_linking=False)
    assert store.owner_counts("agent", ["a1"])["a1"]["memories"] == 2
    with time_machine.travel(datetime.now(UTC) + timedelta(days=2)):
        assert store.owner_counts("agent", ["a1"])["a1"]["memories"] == 1  # expired, no write since
    memory.delete_memory(short)
    assert store.owner_counts("agent", ["a1"])["a1"]["memories"] == 1
