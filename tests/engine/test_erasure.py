"""Erasing a person (MemoryStore.erase_user) and scrubbing the store's files (scrub_files).

The conformance part runs on every backend; the file part reads the bytes of a SQLite store, its
write-ahead log and its index folder, and finds none of the erased text.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memory.engine import ERASURE_KINDS, AgentMemory, HashingEmbedder, SchemaPolicy, SQLiteMemoryStore

SECRET_WORDS = ("zanzibarquokka", "periwinkleosprey", "mangosteenaxolotl")
"""Words only the erased person's records hold."""


def seed(client: AgentMemory) -> dict[str, str]:
    """alice (to be erased) and bob, with a link between their memories and searches that served both."""
    client.add_user("alice", f"alice likes {SECRET_WORDS[0]}")
    thread = client.create_thread(thread_id="ta", user_id="alice", agent_id="atlas")
    thread.add_messages([{"role": "user", "content": f"my cat is called {SECRET_WORDS[1]}"}])
    mine = client.add_memory(f"alice's cat is {SECRET_WORDS[1]}", user_id="alice", agent_id="atlas")
    other = client.add_memory(f"alice dreams of {SECRET_WORDS[2]}", user_id="alice")
    bobs = client.add_memory("bob keeps bees", user_id="bob", agent_id="atlas")
    client.link_records(bobs, "memory", mine, "memory", "related_to")
    client.search(SECRET_WORDS[1], user_id="alice")
    client.search("bees", user_id="bob")
    client.activity.flush()
    return {"mine": mine, "other": other, "bobs": bobs}


def test_a_dry_run_counts_what_would_go_and_changes_nothing(memory):
    ids = seed(memory)
    report = memory.erase_user("alice", dry_run=True)
    assert set(report.counts) == set(ERASURE_KINDS)
    assert report.counts["profile"] == 1 and report.counts["threads"] == 1
    assert report.counts["memories"] == 2 and report.counts["messages"] == 1 and report.counts["links"] == 1
    assert report.counts["activity_events"] >= 1
    assert ("record", ids["mine"]) in report.erased and ("thread", "ta") in report.erased
    assert memory.get_memory(ids["mine"]).content.endswith(SECRET_WORDS[1])


def test_an_erasure_takes_the_person_and_leaves_everyone_else(memory):
    ids = seed(memory)
    report = memory.erase_user("alice")
    assert report.counts["memories"] == 2
    for memory_id in (ids["mine"], ids["other"]):
        with pytest.raises(KeyError):
            memory.get_memory(memory_id)
    with pytest.raises(KeyError):
        memory.get_user("alice")
    assert memory.get_memory(ids["bobs"]).content == "bob keeps bees"
    assert list(memory.list_relations(ids["bobs"])) == []
    assert memory.erase_user("alice").total == 0  # a re-run finds nothing left


def test_the_activity_log_keeps_nothing_of_the_person(memory):
    seed(memory)
    memory.search("bees alice cat", user_id="bob")  # a call of bob's that may have served alice's memory
    memory.activity.flush()
    memory.erase_user("alice")
    memory.activity.flush()
    for event in memory.list_activity(limit=None, include_content=True):
        text = " ".join(str(part) for part in (event.request, event.content, event.query, event.results))
        assert not any(word in text for word in SECRET_WORDS)
        assert event.scope.get("user_id") != "alice"


def test_bad_arguments_are_refused(memory):
    with pytest.raises(ValueError):
        memory.erase_user("")
    with pytest.raises(TypeError):
        memory.erase_user("alice", dry_run="yes")
    with pytest.raises(TypeError):
        memory.scrub_files(vacuum="always")


def dump(path: Path) -> bytes:
    """Every byte the deployment keeps of a SQLite store: the file, its WAL, its index folder."""
    data = b""
    for candidate in [path, Path(f"{path}-wal"), *Path(f"{path}.oam-index").rglob("*")]:
        if candidate.is_file():
            data += candidate.read_bytes()
    return data


def test_no_file_of_the_store_keeps_the_erased_text(tmp_path):
    path = tmp_path / "store.sqlite3"
    store = SQLiteMemoryStore(str(path), embedder=HashingEmbedder(64), schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)
    client = AgentMemory(store)
    seed(client)
    memory_id = client.add_memory(f"soon edited {SECRET_WORDS[0]}", user_id="alice")
    client.update_memory(memory_id, content=f"edited once {SECRET_WORDS[2]}")  # an old version in free space
    client.search(SECRET_WORDS[0], user_id="alice")  # the index's vocabulary learns the words
    assert all(word.encode() in dump(path) for word in SECRET_WORDS[:2])
    client.erase_user("alice")
    data = dump(path)
    for word in SECRET_WORDS:
        assert word.encode() not in data
        assert word[:8].encode() not in data  # nor a stem of it
    dumped = "\n".join(sqlite3.connect(path).iterdump())
    assert not any(word in dumped for word in SECRET_WORDS)
    assert b"bees" in data  # bob's stay
    assert client.search("bees", user_id="bob")[0].record.content == "bob keeps bees"
    client.close()


def test_the_keyword_index_of_plain_sql_search_forgets_the_words(tmp_path):
    path = tmp_path / "store.sqlite3"
    store = SQLiteMemoryStore(
        str(path), embedder=HashingEmbedder(64), schema_policy=SchemaPolicy.CREATE_IF_NECESSARY, search_index=False
    )
    client = AgentMemory(store)
    seed(client)  # its searches fill FTS5
    report = client.erase_user("alice")
    assert report.counts["memories"] == 2
    scrub = client.scrub_files()
    assert scrub.keyword_index_purged and scrub.checkpointed
    assert not any(word.encode() in dump(path) for word in SECRET_WORDS)
    client.close()


def test_the_persons_sensitive_findings_go_with_their_records(memory):
    memory.add_memory("alice's card is 4111 1111 1111 1111, mail alice@example.com", user_id="alice")
    kept = memory.add_memory("bob's mail is bob@example.com", user_id="bob")
    assert memory.count_findings(user_id="alice") >= 1
    memory.erase_user("alice")
    assert memory.count_findings(user_id="alice") == 0
    assert memory.count_findings() == memory.count_findings(record_id=kept) >= 1
