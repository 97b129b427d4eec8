"""The SQLite store's in-memory search cache stays coherent with every write, its own or another's.

Each test first runs a search, so that the cache is loaded before the write it checks.
"""

from __future__ import annotations

from tempfile import mkdtemp

import numpy as np
import pytest

from memory.engine import RecordStatus, SearchStrategy
from memory.engine.stores.index.search_cache import RowTerms


@pytest.fixture
def backend() -> str:
    """These tests are about the embedded store's in-memory search cache."""
    return "sqlite"


DIM = 64


def unit(seed: int) -> list[float]:
    vector = np.random.default_rng(seed).standard_normal(DIM)
    return list(vector / np.linalg.norm(vector))


def nearest_ids(store, vector, k=3, **filters) -> list[str]:
    return [record.id for record, _ in store.search(query_vector=vector, k=k, **filters)]


@pytest.fixture
def vector_store(store_factory):
    return store_factory(name="shared", search_strategy=SearchStrategy.VECTOR)


def test_a_record_added_by_another_store_on_the_same_file_is_found_by_the_next_search(vector_store, store_factory):
    vector_store.add(["a"], "memory", embeddings=[unit(1)], record_ids=["a"])
    assert nearest_ids(vector_store, unit(2), k=1) == ["a"]
    other = store_factory(name="shared")
    other.add(["b"], "memory", embeddings=[unit(2)], record_ids=["b"])
    assert nearest_ids(vector_store, unit(2), k=1) == ["b"]


def test_a_record_deleted_by_another_store_disappears_from_the_next_search(vector_store, store_factory):
    vector_store.add(["a", "b"], "memory", embeddings=[unit(1), unit(2)], record_ids=["a", "b"])
    assert nearest_ids(vector_store, unit(2), k=1) == ["b"]
    store_factory(name="shared").delete("memory", "b")
    assert nearest_ids(vector_store, unit(2), k=2) == ["a"]


def test_an_update_by_another_store_is_seen_by_the_next_search(vector_store, store_factory):
    vector_store.add(["a", "b"], "memory", embeddings=[unit(1), unit(2)], record_ids=["a", "b"])
    assert nearest_ids(vector_store, unit(3), k=2)
    store_factory(name="shared").update("memory", "a", embedding=unit(3))
    record, distance = vector_store.search(query_vector=unit(3), k=1)[0]
    assert record.id == "a" and distance == pytest.approx(0.0, abs=1e-5)


def test_the_stores_own_new_embedding_replaces_the_cached_one(vector_store):
    vector_store.add(["a", "b"], "memory", embeddings=[unit(1), unit(2)], record_ids=["a", "b"])
    assert nearest_ids(vector_store, unit(1), k=1) == ["a"]
    vector_store.update("memory", "b", embedding=unit(1))
    vector_store.update("memory", "a", embedding=unit(5))
    assert nearest_ids(vector_store, unit(1), k=1) == ["b"]


def test_a_record_that_gains_an_embedding_becomes_a_vector_hit(vector_store):
    vector_store.add(["", "x"], "memory", embeddings=None, record_ids=["empty", "x"])
    assert "empty" not in nearest_ids(vector_store, unit(1), k=5)
    vector_store.update("memory", "empty", embedding=unit(1))
    assert nearest_ids(vector_store, unit(1), k=1) == ["empty"]


def test_a_cleared_embedding_is_no_longer_a_vector_hit(vector_store):
    vector_store.add(["a", "b"], "memory", embeddings=[unit(1), unit(2)], record_ids=["a", "b"])
    assert nearest_ids(vector_store, unit(1), k=1) == ["a"]
    vector_store.update("memory", "a", embedding=None)
    assert nearest_ids(vector_store, unit(1), k=5) == ["b"]


def test_status_and_scope_changes_reach_the_cached_filters(vector_store):
    vector_store.add(["a", "b"], "memory", embeddings=[unit(1), unit(2)], record_ids=["a", "b"], user_ids="u")
    assert nearest_ids(vector_store, unit(1), k=2, include_invalid_results=False) == ["a", "b"]
    vector_store.update("memory", "a", status=RecordStatus.INVALID)
    assert nearest_ids(vector_store, unit(1), k=2, include_invalid_results=False) == ["b"]
    vector_store.update("memory", "a", status=RecordStatus.VALID)
    assert nearest_ids(vector_store, unit(1), k=1, include_invalid_results=False) == ["a"]


def test_deleting_a_thread_or_purging_removes_its_vectors(vector_store):
    vector_store.add(["a", "b"], "memory", embeddings=[unit(1), unit(2)], record_ids=["a", "b"], thread_ids=["t", None])
    assert nearest_ids(vector_store, unit(1), k=1) == ["a"]
    vector_store.delete_thread("t")
    assert nearest_ids(vector_store, unit(1), k=5) == ["b"]


def test_a_failed_batch_leaves_the_cache_as_it_was(vector_store):
    vector_store.add(["a"], "memory", embeddings=[unit(1)], record_ids=["a"])
    assert nearest_ids(vector_store, unit(2), k=5) == ["a"]
    with pytest.raises(ValueError):
        vector_store.add(["b", "a"], "memory", embeddings=[unit(2), unit(3)], record_ids=["b", "a"])
    assert nearest_ids(vector_store, unit(2), k=5) == ["a"]


def test_a_reused_primary_key_after_deleting_the_newest_row_is_cached_afresh(vector_store):
    vector_store.add(["a", "b"], "memory", embeddings=[unit(1), unit(2)], record_ids=["a", "b"])
    assert nearest_ids(vector_store, unit(2), k=1) == ["b"]
    vector_store.delete("memory", "b")
    vector_store.add(["c"], "memory", embeddings=[unit(3)], record_ids=["c"])
    assert nearest_ids(vector_store, unit(3), k=1) == ["c"]
    assert set(nearest_ids(vector_store, unit(2), k=5)) == {"a", "c"}


def test_filters_apply_before_top_k_in_the_cache(vector_store):
    near = unit(1)
    strong = [list(np.asarray(near) + 0.01 * np.asarray(unit(100 + i))) for i in range(50)]
    vector_store.add([f"a{i}" for i in range(50)], "memory", embeddings=strong, user_ids="A")
    weak = [unit(200 + i) for i in range(3)]
    ids = vector_store.add(["b0", "b1", "b2"], "memory", embeddings=weak, user_ids="B")
    assert set(nearest_ids(vector_store, near, k=3, user_id="B", exact_user_match=True)) == set(ids)


def test_identical_vectors_rank_in_insertion_order(vector_store):
    ids = vector_store.add(["x", "y", "z"], "memory", embeddings=[unit(1)] * 3)
    assert nearest_ids(vector_store, unit(1), k=3) == ids
    assert nearest_ids(vector_store, unit(1), k=2) == ids[:2]


def test_hybrid_search_fuses_the_two_rankings_by_reciprocal_rank(store_factory):
    store = store_factory(search_strategy=SearchStrategy.HYBRID)
    # "both" is first in the keyword ranking and first in the vector ranking: best possible score.
    query = "purple elephant"
    vector = store.embedder.embed([query])[0]
    store.add(["purple elephant", "grey mouse"], "memory", embeddings=[vector, unit(9)], record_ids=["both", "other"])
    (first, first_distance), (second, second_distance) = store.search(query, 2)
    assert first.id == "both" and first_distance == pytest.approx(0.0)
    # "other" has no keyword match and is second by vector: 1/(10+2) out of the best (1+2)/(10+1),
    # the keyword ranking counting twice.
    assert second.id == "other" and second_distance == pytest.approx(1 - (1 / 12) / (3 / 11))


def test_keyword_ranking_after_many_small_writes_equals_a_fresh_load(store_factory, tmp_path):
    store = store_factory(name="segments", search_strategy=SearchStrategy.KEYWORD)
    words = ["pizza", "dough", "oven", "basil", "tomato", "garlic"]
    queries = ("pizza oven", "garlic", "basil tomato note", "dough")

    def same_as_a_fresh_load():
        fresh = store_factory(  # built from SQL (in an empty folder), not from a generation plus the change log
            name="segments", search_strategy=SearchStrategy.KEYWORD, search_index_path=mkdtemp(dir=tmp_path)
        )
        for query in queries:
            assert [(r.id, d) for r, d in store.search(query, 10)] == [(r.id, d) for r, d in fresh.search(query, 10)]

    for i in range(40):  # one write and one search at a time, as an agent loop does
        store.add([f"{words[i % 6]} {words[(i * 5) % 6]} note {i}"], "message", thread_ids=f"t{i % 3}")
        store.search("pizza oven", 5)
    same_as_a_fresh_load()
    store.update("message", store.list("message", limit=1)[0].id, text="garlic garlic oven")
    store.add(["pizza at last"], "message", thread_ids="t0")
    same_as_a_fresh_load()
    # Updates and deletes in place (an overlay over the postings, tombstones): still the same ranking.
    messages = store.list("message", limit=None)
    for i, message in enumerate(messages[5:25]):
        if i % 2:
            store.delete("message", message.id)
        else:
            store.update("message", message.id, text=f"dough {words[i % 6]} rewritten {i}")
        store.search("dough", 5)
    same_as_a_fresh_load()


def test_a_store_started_from_the_snapshot_and_written_ranks_as_a_fresh_load(store_factory, tmp_path):
    """A new process's index keeps the snapshot's per-row terms in its arrays (RowTerms): rows
    updated, deleted and added over them, and the snapshot saved again from them, rank as an
    index built from SQL does."""
    words = ["pizza", "dough", "oven", "basil", "tomato", "garlic"]
    queries = ("pizza oven", "garlic", "basil tomato note", "dough", "rewritten")
    first = store_factory(name="started", search_strategy=SearchStrategy.KEYWORD)
    first.add([f"{words[i % 6]} {words[(i * 5) % 6]} note {i}" for i in range(30)], "message", thread_ids="t0")
    first.search("pizza", 5)  # builds the index from SQL and saves its snapshot
    started = store_factory(name="started", search_strategy=SearchStrategy.KEYWORD)
    started.search("pizza", 5)
    assert isinstance(started.index.records.text_terms, RowTerms), "the second store started from the snapshot"

    def same_as_a_fresh_load(store):
        fresh = store_factory(
            name="started", search_strategy=SearchStrategy.KEYWORD, search_index_path=mkdtemp(dir=tmp_path)
        )
        for query in queries:
            assert [(r.id, d) for r, d in store.search(query, 10)] == [(r.id, d) for r, d in fresh.search(query, 10)]

    messages = started.list("message", limit=None)
    for i, message in enumerate(messages[:12]):
        if i % 3 == 0:
            started.delete("message", message.id)
        else:
            started.update("message", message.id, text=f"dough {words[i % 6]} rewritten {i}")
    started.add(["garlic pizza added"], "message", thread_ids="t1")
    same_as_a_fresh_load(started)
    assert started.index.write_generation()  # a generation again, written from the RowTerms
    again = store_factory(name="started", search_strategy=SearchStrategy.KEYWORD)
    same_as_a_fresh_load(again)


def test_links_written_by_another_store_reach_the_next_graph_search(store_factory):
    first = store_factory(name="linked", search_strategy=SearchStrategy.VECTOR)
    first.add(["a", "b", "c"], "memory", embeddings=[unit(1), unit(2), unit(3)], record_ids=["a", "b", "c"])
    link = {"source_record_type": "memory", "target_record_type": "memory", "relation_type": "supports"}
    first.add_relations([{**link, "source_record_id": "a", "target_record_id": "b"}])

    def linked_to_a():
        (hit,) = first.search(query_vector=unit(1), k=1, num_hops=1)
        return [child[0].id for _, child in hit[0].linked_results]

    assert linked_to_a() == ["b"]  # the link index is loaded now
    other = store_factory(name="linked")
    other.add_relations([{**link, "source_record_id": "c", "target_record_id": "a"}])
    assert linked_to_a() == ["b", "c"]
    other.delete_relations(
        source_record_id="a",
        source_record_type="memory",
        target_record_id="b",
        target_record_type="memory",
        relation_type="supports",
    )
    assert linked_to_a() == ["c"]
    first.update_relations(first.list_relations(record_id="a")[0].id, relation_type="refines")
    first.delete("memory", "c")
    assert linked_to_a() == []
