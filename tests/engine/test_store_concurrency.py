"""Many threads and processes over one store: parallel reads, serialised atomic writes, an index
kept in step by the change log, and a snapshot that makes a new process's first search fast."""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from memory.engine import (
    AgentMemory,
    HashingEmbedder,
    SchemaPolicy,
    SearchStrategy,
    SQLiteMemoryStore,
    StaleVersionError,
)
from memory.engine.stores.index import search_cache
from memory.engine.stores.sql import changelog as sql_store

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["sqlite", "sqlite-sql"])
def backend(request) -> str:
    """The embedded store with and without its index (Oracle's pool is checked offline)."""
    return request.param


def test_eight_threads_of_mixed_reads_and_writes_lose_nothing_and_invent_nothing(store_factory):
    store = store_factory(name="shared")
    added: set[str] = set()
    deleted: set[str] = set()
    seen: set[str] = set()
    errors: list[BaseException] = []
    guard = threading.Lock()
    stop = time.monotonic() + 3.0

    def writer(number: int) -> None:
        rng = random.Random(number)
        mine: list[str] = []
        count = 0
        while time.monotonic() < stop:
            ids = [f"w{number}-{count + i}" for i in range(rng.randint(1, 5))]
            count += len(ids)
            store.add([f"note {record_id} about pizza" for record_id in ids], "memory", record_ids=ids, user_ids="u")
            mine += ids
            with guard:
                added.update(ids)
            if rng.random() < 0.3:
                victim = mine.pop(rng.randrange(len(mine)))
                assert store.delete("memory", victim) == 1
                with guard:
                    deleted.add(victim)
            if rng.random() < 0.3 and mine:
                assert store.update("memory", rng.choice(mine), text="pizza, updated") == 1

    def reader(number: int) -> None:
        while time.monotonic() < stop:
            if number % 2:
                found = [record.id for record, _ in store.search("pizza", 20, user_id="u", exact_user_match=True)]
            else:
                found = [record.id for record in store.list("memory", limit=50, user_id="u")]
            with guard:
                seen.update(found)

    def run(target, number) -> None:
        try:
            target(number)
        except BaseException as error:  # reported below, with the thread that raised it
            errors.append(error)

    threads = [threading.Thread(target=run, args=(writer if i < 4 else reader, i)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert added, "the writers wrote nothing"
    stored = {record.id for record in store.list("memory", limit=None)}
    assert stored == added - deleted  # no lost record, no phantom one
    assert seen <= added  # readers only ever saw records that were written
    fresh = store_factory(name="shared")  # what another process opening the file now sees
    assert {record.id for record in fresh.list("memory", limit=None)} == stored
    assert {r.id for r, _ in store.search("pizza", 1000)} == {r.id for r, _ in fresh.search("pizza", 1000)}


def test_concurrent_searches_run_in_the_store_at_the_same_time(store_factory, monkeypatch):
    store = store_factory(name="parallel", search_strategy=SearchStrategy.VECTOR)
    store.add(["a", "b"], "memory", record_ids=["a", "b"])
    store.search("a", 1)  # loads the index first
    both_inside = threading.Barrier(2, timeout=10)
    reads = store._records_by_pk

    def read_when_both_are_inside(*args):
        both_inside.wait()  # raises BrokenBarrierError unless the other search is inside too
        return reads(*args)

    monkeypatch.setattr(store, "_records_by_pk", read_when_both_are_inside)
    results, errors = [], []

    def search() -> None:
        try:
            results.append(store.search("a", 1)[0][0].id)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=search) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors and results == ["a", "a"]


def test_eight_writers_of_the_same_values_at_the_same_version_succeed_once(store_factory):
    """Eight threads read a memory at version 1 and at the same moment write the same metadata
    with expected_version=1: the compare is made inside the write's transaction, so exactly one
    write is made and the seven others are refused, though they would change nothing."""
    memory = AgentMemory(store_factory(name="claims"))
    for round_number in range(5):
        memory_id = memory.add_memory(f"a task to claim, round {round_number}", user_id="u")
        outcomes = claimed_at_once(memory, memory_id, writers=8)
        assert sorted(outcomes) == ["made"] + ["stale"] * 7, outcomes
        assert memory.get_memory(memory_id).version == 2


def claimed_at_once(memory: AgentMemory, memory_id: str, writers: int) -> list[str]:
    """What each of `writers` threads got from writing {"claimed": True} at version 1, all released
    at once: "made", "stale" or the error."""
    at_once = threading.Barrier(writers, timeout=10)
    outcomes: list[str] = []

    def claim() -> None:
        at_once.wait()
        try:
            memory.update_memory(memory_id, metadata={"claimed": True}, expected_version=1)
            outcomes.append("made")
        except StaleVersionError:
            outcomes.append("stale")
        except BaseException as error:  # reported by the caller's assertion
            outcomes.append(repr(error))

    threads = [threading.Thread(target=claim) for _ in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return outcomes


def test_eight_deleters_at_the_same_version_delete_once(store_factory):
    """Eight threads delete one memory at the same moment with expected_version=1: exactly one
    delete is made; the others find it gone (0), none is told it deleted it too."""
    memory = AgentMemory(store_factory(name="deletes"))
    for round_number in range(5):
        memory_id = memory.add_memory(f"a task to drop, round {round_number}", user_id="u")
        outcomes = at_once(8, lambda memory_id=memory_id: memory.delete_memory(memory_id, expected_version=1))
        assert sorted(outcomes) == [0] * 7 + [1], outcomes
        assert memory.store.get("memory", memory_id) is None


def test_writers_and_deleters_at_the_same_version_make_one_change(store_factory):
    """Four threads update and four delete one memory, all at version 1, at the same moment:
    exactly one of the eight changes is made. An update acknowledged is never deleted unseen
    (the deletes after it are stale), and a delete acknowledged is never overwritten."""
    memory = AgentMemory(store_factory(name="mixed"))
    for round_number in range(5):
        memory_id = memory.add_memory(f"a task, round {round_number}", user_id="u")

        def claim(memory_id: str = memory_id) -> str:
            try:
                memory.update_memory(memory_id, metadata={"claimed": True}, expected_version=1)
            except KeyError:  # deleted before it: an update finds it gone
                return "gone"
            return "updated"

        def drop(memory_id: str = memory_id) -> str:
            return "deleted" if memory.delete_memory(memory_id, expected_version=1) else "gone"

        outcomes = at_once(8, *([claim] * 4 + [drop] * 4))
        made = [outcome for outcome in outcomes if outcome in ("updated", "deleted")]
        assert len(made) == 1 and all(o in ("updated", "deleted", "gone", "stale") for o in outcomes), outcomes
        stored = memory.store.get("memory", memory_id)
        if made == ["updated"]:
            assert stored is not None and stored.version == 2 and "gone" not in outcomes
        else:
            assert stored is None


def at_once(count: int, *calls) -> list:
    """What each of `count` threads got from its call (the one call for all, or one each), all
    released at once: its result, "stale" or the error."""
    barrier = threading.Barrier(count, timeout=10)
    outcomes: list = []
    chosen = list(calls) * count if len(calls) == 1 else list(calls)

    def run(call) -> None:
        barrier.wait()
        try:
            outcomes.append(call())
        except StaleVersionError:
            outcomes.append("stale")
        except BaseException as error:  # reported by the caller's assertion
            outcomes.append(repr(error))

    threads = [threading.Thread(target=run, args=(call,)) for call in chosen[:count]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return outcomes


@pytest.fixture
def indexed(tmp_path):
    """Open (and close) embedded stores with the index on one file; the first one creates it."""
    made = []

    def open_store(**options) -> SQLiteMemoryStore:
        options.setdefault("schema_policy", SchemaPolicy.CREATE_IF_NECESSARY)
        options.setdefault("search_strategy", SearchStrategy.KEYWORD)  # hits are exactly the matching records
        store = SQLiteMemoryStore(str(tmp_path / "shared.sqlite3"), embedder=HashingEmbedder(32), **options)
        made.append(store)
        return store

    yield open_store
    for store in made:
        store.close()


def hits(store, query="pizza", k=50) -> list[str]:
    return sorted(record.id for record, _ in store.search(query, k))


def test_another_process_write_is_applied_to_the_index_without_a_reload(indexed, tmp_path):
    store = indexed()
    store.add(["pizza one", "pizza two"], "memory", record_ids=["one", "two"])
    assert hits(store) == ["one", "two"]
    cache, seq = store.index.records, store.index.seq
    script = (
        "import sys; from memory.engine import HashingEmbedder, SQLiteMemoryStore\n"
        "store = SQLiteMemoryStore(sys.argv[1], embedder=HashingEmbedder(32), search_index=False)\n"
        "store.add(['pizza three'], 'memory', record_ids=['three'])\n"
        "store.update('memory', 'one', text='pasta only')\n"
        "store.delete('memory', 'two')\n"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "shared.sqlite3")], check=True, cwd=ROOT)
    assert hits(store) == ["three"]
    assert hits(store, "pasta") == ["one"]
    assert store.index.records is cache and store.index.seq > seq  # caught up in place, not reloaded


def test_a_change_log_trimmed_past_what_an_index_saw_makes_it_reload(indexed, monkeypatch):
    monkeypatch.setattr(sql_store, "CHANGE_LOG_KEEP", 5)
    reader, writer = indexed(), indexed(search_index=False)
    reader.add(["pizza zero"], "memory", record_ids=["zero"])
    assert hits(reader) == ["zero"]
    cache = reader.index.records
    for i in range(1, 12):
        writer.add([f"pizza {i}"], "memory", record_ids=[f"m{i}"])
    with writer._read() as cursor:
        [row] = writer._fetch(f"SELECT count(*) AS n FROM {writer._changes}", None, cursor)
    assert row["n"] <= 5  # the log stays bounded
    assert hits(reader) == sorted(["zero", *(f"m{i}" for i in range(1, 12))])
    assert reader.index.records is not cache  # it could not catch up, so it reloaded


def test_a_new_process_starts_from_the_saved_generation_and_catches_up_after_it(indexed, tmp_path, monkeypatch):
    first = indexed()
    first.add(["pizza a", "pizza b"], "memory", record_ids=["a", "b"])
    assert hits(first) == ["a", "b"]
    first.close()
    assert list(Path(f"{tmp_path / 'shared.sqlite3'}.oam-index").glob("g*/manifest.json"))
    writer = indexed(search_index=False)
    writer.add(["pizza c"], "memory", record_ids=["c"])
    writer.delete("memory", "a")
    full_loads = []
    monkeypatch.setattr(
        search_cache.SearchCache, "load", lambda self, rows: full_loads.append(1) or pytest.fail("full reload")
    )
    second = indexed()
    assert hits(second) == ["b", "c"]
    assert not full_loads


@pytest.mark.parametrize("spoil", ["recreated store", "corrupt file"])
def test_a_generation_that_does_not_match_the_store_is_ignored(indexed, tmp_path, spoil, caplog):
    first = indexed()
    first.add(["pizza old"], "memory", record_ids=["old"])
    hits(first)
    first.close()
    [generation] = Path(f"{tmp_path / 'shared.sqlite3'}.oam-index").glob("g*")
    if spoil == "corrupt file":
        (generation / "pks.npy").write_bytes(b"not an index")
        second = indexed()
    else:
        second = indexed(schema_policy=SchemaPolicy.RECREATE)
        second.add(["pizza new"], "memory", record_ids=["new"])
    assert hits(second) == (["old"] if spoil == "corrupt file" else ["new"])


def test_the_index_and_sql_agree_on_vector_search(indexed):
    with_index = indexed(search_strategy=SearchStrategy.VECTOR)
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((200, 32)).astype(np.float32)
    ids = [f"r{i}" for i in range(200)]
    with_index.add([f"text {i}" for i in range(200)], "memory", embeddings=vectors, record_ids=ids)
    for i in range(0, 200, 3):
        with_index.delete("memory", ids[i])
    plain_sql = indexed(search_strategy=SearchStrategy.VECTOR, search_index=False)
    for query in rng.standard_normal((10, 32)):
        from_index = [(r.id, round(d, 5)) for r, d in with_index.search(query_vector=query, k=10)]
        from_sql = [(r.id, round(d, 5)) for r, d in plain_sql.search(query_vector=query, k=10)]
        assert from_index == from_sql


def test_plain_sql_keyword_search_uses_fts5_kept_in_step_from_the_change_log(indexed, monkeypatch):
    monkeypatch.setattr(sql_store, "CHANGE_LOG_KEEP", 5)
    searcher, writer = indexed(search_index=False), indexed(search_index=False)
    writer.add(["pizza in Naples", "running shoes"], "memory", record_ids=["pizza", "shoes"])
    assert hits(searcher) == ["pizza"]
    assert hits(searcher, "runs") == ["shoes"]  # Porter stems, as the index's analyser does
    writer.update("memory", "pizza", text="pasta in Rome")
    writer.add(["more pizza"], "memory", record_ids=["more"])
    assert hits(searcher) == ["more"] and hits(searcher, "rome") == ["pizza"]
    for i in range(8):  # past what the log keeps: the text index is rebuilt whole
        writer.add([f"pizza {i}"], "memory", record_ids=[f"p{i}"])
    writer.delete("memory", "more")
    assert hits(searcher) == sorted(f"p{i}" for i in range(8))
    hybrid = indexed(search_index=False, search_strategy=SearchStrategy.HYBRID)
    best = AgentMemory(hybrid).search("pizza", user_id=None, max_results=1)[0]
    assert "keyword_rank" in best.scores and "vector_rank" in best.scores  # both rankings were fused


def test_a_store_recreated_by_another_process_is_noticed_by_the_next_search(indexed):
    first = indexed()
    first.add(["old apple one", "old apple two", "old apple three"], "memory", record_ids=["o1", "o2", "o3"])
    assert hits(first, "apple") == ["o1", "o2", "o3"]
    second = indexed(schema_policy=SchemaPolicy.RECREATE)  # a new store: its log starts again at 1
    second.add(["new banana"], "memory", record_ids=["n1"])
    assert hits(first, "apple") == [] and hits(first, "banana") == ["n1"]


class _FrozenSource:
    """A search's view of the store from before another search caught the index up."""

    def __init__(self, source, state):
        self._source, self._state = source, state

    def log_state(self):
        return self._state

    def __getattr__(self, name):
        return getattr(self._source, name)


def test_a_search_on_an_older_snapshot_never_takes_the_index_back(indexed):
    from memory.engine.stores.index import LogState
    from memory.engine.stores.sql.changelog import _IndexSource

    store = indexed(search_strategy=SearchStrategy.VECTOR)
    store.add(["a", "b"], "memory", record_ids=["a", "b"])
    store.add_relations(
        [
            {
                "source_record_id": "a",
                "source_record_type": "memory",
                "target_record_id": "b",
                "target_record_type": "memory",
                "relation_type": "supports",
            }
        ]
    )
    store.search("a", 1, num_hops=1)  # records and links loaded, up to date
    index = store.index
    records, links, seq = index.records, index.links, index.seq
    with store._read() as cursor:
        source = _IndexSource(store, cursor)
        now = source.log_state()
        older = _FrozenSource(source, LogState(now.store_id, now.last_seq - 1, now.trimmed_to))
        with index.reading(older) as caught_up:
            assert caught_up.records is records and caught_up.links is links and caught_up.seq == seq
