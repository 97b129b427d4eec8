"""A public write happens whole or not at all (DECISIONS D3), however late it fails.

The engine's calls that write several times (messages with their images, a message's new
content with its images, a memory with its link) run in one store transaction. These tests make
the last write of each fail after the first has been written and check that the store is
exactly as before: no record, no link, no change to a thread's activity time or numbering.
"""

from __future__ import annotations

import threading

import pytest

from memory.engine import AgentMemory, HashingEmbedder

from .helpers import store_state
from .test_image_messages import image_part


def fail_writes_of(store, monkeypatch, kind: str) -> None:
    """Make the store's inserts of `kind` records (and its link inserts, for "link") fail."""
    if kind == "link":
        original_add_relations = store.add_relations

        def failing_add_relations(*args, **kwargs):
            original_add_relations(*args, **kwargs)  # written, then the call fails
            raise ValueError("injected failure after the link was written")

        monkeypatch.setattr(store, "add_relations", failing_add_relations)
        return
    original = store._insert

    def failing_insert(plan, *args, **kwargs):
        result = original(plan, *args, **kwargs)
        if plan.rows[0].record_type == kind:
            raise ValueError(f"injected failure after the {kind} rows were written")
        return result

    monkeypatch.setattr(store, "_insert", failing_insert)


def test_add_messages_whose_images_fail_stores_nothing(thread, store, monkeypatch):
    thread.add_messages([{"role": "user", "content": "before"}])
    before = store_state(store)
    fail_writes_of(store, monkeypatch, "image")
    with pytest.raises(ValueError, match="injected"):
        thread.add_messages(
            [
                {"role": "user", "content": "plain"},
                {"role": "user", "content": [{"type": "text", "text": "look"}, image_part()]},
            ]
        )
    assert store_state(store) == before
    monkeypatch.undo()
    [next_id] = thread.add_messages([{"role": "user", "content": "after"}])
    assert [m.content for m in thread.get_messages()] == ["before", "after"]
    assert store.get("message", next_id).seq_no == 1  # the failed call used no sequence number


def test_update_message_whose_images_fail_keeps_the_old_content(thread, store, monkeypatch):
    [message_id] = thread.add_messages([{"role": "user", "content": "the original"}])
    before = store_state(store)
    fail_writes_of(store, monkeypatch, "image")
    with pytest.raises(ValueError, match="injected"):
        thread.update_message(message_id, content=[{"type": "text", "text": "replaced"}, image_part()])
    assert store_state(store) == before
    assert thread.get_message(message_id).content == "the original"


@pytest.mark.parametrize("layer", ["thread", "client"])
def test_add_memory_whose_link_fails_stores_neither(thread, memory, store, monkeypatch, layer):
    target = thread.add_memory("the user likes tea")
    before = store_state(store)
    fail_writes_of(store, monkeypatch, "link")
    add = thread.add_memory if layer == "thread" else memory.add_memory
    scope = {} if layer == "thread" else {"user_id": "u1"}
    with pytest.raises(ValueError, match="injected"):
        add("the user now likes coffee", memory_id_to_link=target, link_type="supersedes", **scope)
    assert store_state(store) == before
    assert memory.get_memory(target).status == "valid"  # the link's lifecycle effect is undone too


def test_a_write_that_raises_inside_a_transaction_undoes_only_itself(store):
    with store.transaction():
        [kept] = store.add(["kept"], "memory", user_ids="u")
        with pytest.raises(ValueError):
            store.add(["refused"], "memory", record_ids=[kept], user_ids="u")  # a taken id
    assert [record.id for record in store.list("memory", limit=None)] == [kept]


def test_a_transaction_that_raises_stores_nothing_and_the_index_never_learns_it(store):
    [first] = store.add(["pizza night"], "memory", user_ids="u")
    before = store_state(store)
    with pytest.raises(RuntimeError), store.transaction():
        store.add(["pizza lunch"], "memory", user_ids="u")
        with store.transaction():  # nested: part of the outer one
            store.update("memory", first, text="pasta night")
        # The transaction's own searches see its writes.
        assert {hit[0].content for hit in store.search("pizza", user_id="u")} == {"pizza lunch", "pasta night"}
        raise RuntimeError("abandon")
    assert store_state(store) == before
    store.add(["pizza dinner"], "memory", user_ids="u")
    assert {hit[0].content for hit in store.search("pizza", user_id="u")} == {"pizza night", "pizza dinner"}


def test_other_threads_see_a_transaction_only_when_it_commits(store):
    if store._single_session:
        pytest.skip("one connection: other threads wait for the transaction instead")
    seen: list[list[str]] = []

    def look() -> None:
        seen.append([record.id for record in store.list("memory", limit=None)])

    with store.transaction():
        [new] = store.add(["written, not yet committed"], "memory", user_ids="u")
        reader = threading.Thread(target=look)
        reader.start()
        reader.join()
    look()
    assert seen == [[], [new]]


def test_a_failed_client_write_changes_no_thread_activity(memory, store):
    thread = memory.create_thread(thread_id="t9", user_id="u1")
    thread.add_messages([{"role": "user", "content": "hello"}])
    before = store_state(store)
    with pytest.raises(ValueError):
        AgentMemory(store).add_memory("x", thread_id="t9", memory_id_to_link="missing", link_type="related_to")
    assert store_state(store) == before


def test_a_nested_block_that_raises_is_undone_alone(memory, store):
    """add_memory's memory-and-link write stays whole inside a caller's own transaction."""
    target = memory.add_memory("the user likes tea", user_id="u1")
    with store.transaction():
        kept = memory.add_memory("kept", user_id="u1")
        original = store.add_relations

        def failing(*args, **kwargs):
            original(*args, **kwargs)
            raise ValueError("injected failure after the link was written")

        store.add_relations = failing
        with pytest.raises(ValueError, match="injected"):
            memory.add_memory("coffee", user_id="u1", memory_id_to_link=target, link_type="supersedes")
        del store.add_relations
    assert sorted(record.content for record in store.list("memory", limit=None)) == ["kept", "the user likes tea"]
    assert memory.list_relations(limit=None) == []
    assert memory.get_memory(kept).status == "valid"


def test_a_transaction_holds_no_connection_until_its_first_write(store_factory):
    """Embedding comes before the write: it must not hold a pooled connection or the write lock."""
    seen: list[bool] = []

    class Watching(HashingEmbedder):
        def embed(self, texts):
            current = store._local.__dict__.get("transaction")
            seen.append(current is not None and current.connection is not None)
            return super().embed(texts)

    store = store_factory(embedder=Watching(64))
    memory = AgentMemory(store)
    thread = memory.create_thread(thread_id="t1", user_id="u1")
    seen.clear()
    thread.add_messages([{"role": "user", "content": "hello"}])
    assert seen == [False]
    target = memory.add_memory("tea", user_id="u1")
    seen.clear()
    memory.add_memory("coffee", user_id="u1", memory_id_to_link=target, link_type="supersedes")
    assert seen == [False]


def test_a_transaction_the_database_rolled_back_itself_stores_nothing(store, backend):
    """SQLite rolls the whole transaction back on a full disk: the block must not carry on."""
    if backend == "oracle":
        pytest.skip("a full disk is simulated with SQLite's max_page_count")
    store.add(["seed"], "memory", user_ids="u")
    with pytest.raises(RuntimeError, match="rolled this transaction back"), store.transaction():
        store.add(["kept"], "memory", user_ids="u")
        raw = store._local.transaction.connection._connection
        pages = raw.execute("PRAGMA page_count").fetchone()[0]
        raw.execute(f"PRAGMA max_page_count = {pages + 5}")
        with pytest.raises(Exception, match="full"):
            store.add(["x" * 200_000], "memory", user_ids="u")
        raw.execute("PRAGMA max_page_count = 1073741823")
        store.add(["after"], "memory", user_ids="u")
    assert [record.content for record in store.list("memory", limit=None)] == ["seed"]
