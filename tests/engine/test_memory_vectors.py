"""AgentMemory.memory_vectors (the embedding map's read) and MemoryStore.memory_vectors, on every backend."""

from __future__ import annotations

import numpy as np
import pytest

from memory.engine import TimeToLiveAnchor

EXPIRED = {"timestamp": "2000-01-01T00:00:00Z", "ttl_days": 1, "ttl_anchor": TimeToLiveAnchor.TIMESTAMP}


@pytest.fixture
def world(memory):
    memory.add_memory("The user lives in Lisbon.", user_id="u1", memory_type="fact", memory_id="lisbon")
    memory.add_memory("The user likes green tea.", user_id="u1", memory_type="preference", memory_id="tea")
    memory.add_memory("Answer in Portuguese.", user_id="u1", memory_type="guideline", memory_id="pt", status="invalid")
    memory.add_memory("long gone", user_id="u1", memory_id="gone", **EXPIRED)
    memory.add_memory("Someone else's memory.", user_id="u2", memory_id="other")
    return memory


def test_it_returns_a_users_live_memories_newest_first_with_their_stored_unit_vectors(world):
    found = world.memory_vectors("u1")
    assert [record.id for record in found.records] == ["pt", "tea", "lisbon"]
    assert found.matrix.shape == (3, world.store.vector_dim) and found.matrix.dtype == np.float32
    assert np.allclose(np.linalg.norm(found.matrix, axis=1), 1.0, atol=1e-5)
    # Each row is the record's own vector: the store ranks the record first for it.
    for record, row in zip(found.records, found.matrix, strict=True):
        [(best, distance)] = world.store.search(
            query_vector=row,
            k=1,
            record_types=["fact", "preference", "guideline", "memory"],
            include_invalid_results=True,
        )
        assert best.id == record.id and distance == pytest.approx(0.0, abs=1e-5)
    assert found.more is False


def test_it_filters_by_type_and_status_and_says_when_the_limit_cut_it(world):
    assert [r.id for r in world.memory_vectors("u1", memory_types=["fact", "guideline"]).records] == ["pt", "lisbon"]
    assert [r.id for r in world.memory_vectors("u1", status="valid").records] == ["tea", "lisbon"]
    capped = world.memory_vectors("u1", limit=2)
    assert [r.id for r in capped.records] == ["pt", "tea"] and capped.more is True
    assert capped.matrix.shape[0] == 2


def test_a_user_with_nothing_gets_an_empty_matrix_of_the_stores_dimension(world):
    found = world.memory_vectors("nobody")
    assert found.records == [] and found.matrix.shape == (0, world.store.vector_dim) and not found.more


def test_the_store_leaves_out_missing_expired_and_non_memory_ids(world, thread):
    [message_id] = thread.add_messages([{"role": "user", "content": "hello"}])
    found = world.store.memory_vectors(["tea", "gone", "missing", message_id, "tea"])
    assert list(found) == ["tea"] and found["tea"].shape == (world.store.vector_dim,)


@pytest.mark.parametrize(("arguments", "name"), [({"user_id": 3}, "user_id"), ({"user_id": "u1", "limit": 0}, "limit")])
def test_bad_arguments_are_errors_naming_the_argument(world, arguments, name):
    with pytest.raises((ValueError, TypeError), match=name):
        world.memory_vectors(**arguments)
