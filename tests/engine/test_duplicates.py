"""AgentMemory.find_duplicates: groups of one user's near-duplicate memories, on every backend.

The memories get hand-made vectors (the store's dimension is 64), so that every distance is known:
`at(base, towards, d)` is a unit vector at cosine distance d from the unit vector `base`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from memory.engine import AgentMemory, DuplicateGroup, Duplicates
from memory.engine.duplicates import components, group_rows, similar_pairs

DIM = 64


def unit(axis: int) -> np.ndarray:
    vector = np.zeros(DIM, dtype=np.float64)
    vector[axis] = 1.0
    return vector


def at(base: int, towards: int, distance: float) -> list[float]:
    """The unit vector at cosine `distance` from axis `base`, in the plane of `base` and `towards`."""
    cosine = 1.0 - distance
    return (cosine * unit(base) + math.sqrt(1.0 - cosine**2) * unit(towards)).tolist()


def rotated(base: int, towards: int, turns: int, distance: float) -> list[float]:
    """The vector `turns` steps of the angle of `distance` away from `base`, towards `towards`."""
    angle = turns * math.acos(1.0 - distance)
    return (math.cos(angle) * unit(base) + math.sin(angle) * unit(towards)).tolist()


def add(memory: AgentMemory, memory_id: str, vector: list[float], *, memory_type: str = "fact", **scope) -> None:
    scope.setdefault("user_ids", "u1")
    memory.store.add([f"memory {memory_id}"], memory_type, embeddings=[vector], record_ids=[memory_id], **scope)


@pytest.fixture
def world(memory: AgentMemory) -> AgentMemory:
    """u1's memories:
    - a1, a2 (0.05 from a1), a3 (0.1 from a1, 0.145 from a2): a group around a1, spread 0.1;
    - b1, b2 (a preference): the same vector, spread 0;
    - c1, c2, c3: a chain, 0.08 between neighbours, 0.31 end to end: a group around c2;
    - e1, e2: exactly 0.12 apart (the threshold tests);
    - d: alone; an invalid memory with d's vector; an expired one with b1's.
    Beside them, a1's vector as u2's memory, as an agent memory without a user, and as a
    message of u1's thread: none of them is ever in u1's groups."""
    add(memory, "a1", at(0, 1, 0.0))
    add(memory, "a2", at(0, 1, 0.05))
    add(memory, "a3", at(0, 2, 0.1))
    add(memory, "b1", at(10, 11, 0.0))
    add(memory, "b2", at(10, 11, 0.0), memory_type="preference")
    add(memory, "c1", rotated(20, 21, 0, 0.08))
    add(memory, "c2", rotated(20, 21, 1, 0.08))
    add(memory, "c3", rotated(20, 21, 2, 0.08), memory_type="guideline")
    add(memory, "e1", at(40, 41, 0.0))
    add(memory, "e2", at(40, 41, 0.12))
    add(memory, "d", at(30, 31, 0.0), memory_type="memory")
    add(memory, "d-invalid", at(30, 31, 0.0), memory_type="memory", statuses="invalid")
    add(memory, "b-expired", at(10, 11, 0.0))
    memory.update_memory("b-expired", expires_at="2000-01-01T00:00:00Z")
    add(memory, "other-user", at(0, 1, 0.0), user_ids="u2")
    add(memory, "agent-only", at(0, 1, 0.0), user_ids=None, agent_ids="a1")
    memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    memory.store.add(
        ["a message"], "message", embeddings=[at(0, 1, 0.0)], record_ids=["msg"], thread_ids="t1", user_ids="u1"
    )
    return memory


def shape(found: Duplicates) -> list[list[str]]:
    return [[record.id for record in group.memories] for group in found.groups]


def test_groups_are_exact_and_come_tightest_first(world):
    found = world.find_duplicates("u1", max_distance=0.11)
    assert shape(found) == [["b1", "b2"], ["c2", "c1", "c3"], ["a1", "a2", "a3"]]
    assert (found.total_groups, found.compared, found.max_distance) == (3, 11, 0.11)
    b, c, a = found.groups
    assert b.distances == pytest.approx([0.0, 0.0], abs=1e-6)
    assert c.distances == pytest.approx([0.0, 0.08, 0.08], abs=1e-5)
    assert a.distances == pytest.approx([0.0, 0.05, 0.1], abs=1e-5)
    assert (a.centre.id, a.spread) == ("a1", pytest.approx(0.1, abs=1e-5))
    assert a.memories[0].content == "memory a1" and a.memories[0].user_id == "u1"  # whole records


def test_a_group_is_a_chain_of_close_pairs_not_a_ball(world):
    """c1 and c3 are 0.31 apart; each is 0.08 from c2, so all three are one group."""
    [chain] = [group for group in world.find_duplicates("u1", max_distance=0.1).groups if group.centre.id == "c2"]
    assert {record.id for record in chain.memories} == {"c1", "c2", "c3"}


def test_the_threshold_is_inclusive(world):
    assert ["e1", "e2"] in shape(world.find_duplicates("u1", max_distance=0.12))
    assert ["e1", "e2"] not in shape(world.find_duplicates("u1", max_distance=0.1199))


def test_a_zero_threshold_groups_identical_vectors_only(world):
    assert shape(world.find_duplicates("u1", max_distance=0)) == [["b1", "b2"]]


def test_other_users_agents_and_messages_are_never_mixed_in(world):
    found = world.find_duplicates("u1", max_distance=0.5)
    ids = {record.id for group in found.groups for record in group.memories}
    assert not ids & {"other-user", "agent-only", "msg"}
    assert world.find_duplicates("u2").groups == []  # alone with a1's vector: no group
    assert world.find_duplicates("nobody") == Duplicates(max_distance=0.25)


def test_expired_and_deleted_memories_are_left_out(world):
    assert ["b1", "b2"] in shape(world.find_duplicates("u1"))  # never b-expired
    world.delete_memory("b2")
    assert all("b1" not in group for group in shape(world.find_duplicates("u1")))


def test_invalid_memories_take_part_only_when_asked(world):
    assert all("d" not in group for group in shape(world.find_duplicates("u1")))
    both = world.find_duplicates("u1", statuses=None)
    assert ["d", "d-invalid"] in shape(both)
    assert world.find_duplicates("u1", statuses=["valid", "invalid"]) == both
    assert shape(world.find_duplicates("u1", statuses="invalid")) == []  # alone among the invalid


def test_a_memory_retired_as_a_duplicate_leaves_its_group(world):
    world.link_records("a1", "fact", "a2", "fact", "duplicates")
    assert ["a1", "a3"] in shape(world.find_duplicates("u1", max_distance=0.11))


def test_memory_types_choose_the_candidates(world):
    """b2 is a preference and c3 a guideline: without them, b1 is alone and c1 and c2 a pair
    (equally central: the older one first)."""
    facts = world.find_duplicates("u1", max_distance=0.11, memory_types="fact")
    assert shape(facts) == [["c1", "c2"], ["a1", "a2", "a3"]]
    found = world.find_duplicates("u1", max_distance=0.11, memory_types=["fact", "preference"])
    assert shape(found) == [["b1", "b2"], ["c1", "c2"], ["a1", "a2", "a3"]]


def test_limit_caps_the_groups_and_total_counts_them_all(world):
    found = world.find_duplicates("u1", max_distance=0.12, limit=2)
    assert shape(found) == [["b1", "b2"], ["c2", "c1", "c3"]]
    assert found.total_groups == 4


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"user_id": ""}, "user_id must be a non-empty string"),
        ({"user_id": None}, "user_id must be a non-empty string"),
        ({"max_distance": -0.01}, "max_distance must be a number from 0 to 0.5"),
        ({"max_distance": 0.51}, "max_distance must be a number from 0 to 0.5"),
        ({"max_distance": float("nan")}, "max_distance must be a number"),
        ({"max_distance": "0.2"}, "max_distance must be a number"),
        ({"max_distance": True}, "max_distance must be a number"),
        ({"limit": 0}, "limit must be an integer from 1 to 1,000"),
        ({"limit": 1001}, "limit must be an integer from 1 to 1,000"),
        ({"statuses": "expired"}, "statuses must be"),
        ({"statuses": []}, "statuses must be"),
        ({"memory_types": "message"}, "memory_types: record_type must be one of"),
    ],
)
def test_bad_arguments_are_value_errors_naming_them(memory, kwargs, message):
    kwargs = {"user_id": "u1", **kwargs}
    with pytest.raises(ValueError, match=f"^{message}"):
        memory.find_duplicates(**kwargs)


# --- the vector math on its own ------------------------------------------------------------------


def test_pairs_cross_the_blocks(monkeypatch):
    """Blocks of a few rows give the same pairs as one block: none lost at a block's edge."""
    rng = np.random.default_rng(7)
    units = rng.standard_normal((50, 8)).astype(np.float32)
    units[25:] = units[:25] + 0.05 * rng.standard_normal((25, 8)).astype(np.float32)
    units /= np.linalg.norm(units, axis=1, keepdims=True)
    whole = set(zip(*similar_pairs(units, 0.1), strict=True))
    monkeypatch.setattr("memory.engine.duplicates.PAIR_BLOCK_CELLS", 3 * 50)
    assert set(zip(*similar_pairs(units, 0.1), strict=True)) == whole
    expected = {(i, j) for i in range(50) for j in range(i + 1, 50) if 1 - units[i] @ units[j] <= 0.1 + 1e-6}
    assert whole == expected and len(whole) >= 25


def test_components_join_long_chains_and_leave_singles_alone():
    first = np.array([5, 4, 3, 2, 8], dtype=np.int64)
    second = np.array([6, 5, 4, 3, 9], dtype=np.int64)
    labels = components(10, first, second)
    assert labels.tolist() == [0, 1, 2, 2, 2, 2, 2, 7, 8, 8]


def test_group_rows_picks_the_medoid_as_centre():
    units = np.array([at(0, 1, 0.0), at(0, 1, 0.04), rotated(0, 1, 2, 0.04)], dtype=np.float32)
    [group] = group_rows(units, *similar_pairs(units, 0.05))
    assert group.rows.tolist() == [1, 0, 2]
    assert isinstance(DuplicateGroup().spread, float)


def test_too_many_pairs_is_a_value_error_naming_max_distance(world, monkeypatch):
    monkeypatch.setattr("memory.engine.duplicates.MAX_PAIRS", 3)
    monkeypatch.setattr("memory.engine.stores.sql.relations.MAX_PAIRS", 3)
    assert world.find_duplicates("u1", max_distance=0.05).total_groups == 2  # two pairs: b1-b2, a1-a2
    with pytest.raises(ValueError, match=r"^max_distance 0.5 makes more than 3 pairs"):
        world.find_duplicates("u1", max_distance=0.5)
