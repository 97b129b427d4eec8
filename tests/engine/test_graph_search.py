"""Graph search: the graph guide's pizza walk-through and the linked-result trees of search.

API_SPEC §1.3, §6.5, §9.6, §10.3 (C-G3 to C-G12, C-D2 to C-D7); DECISIONS D2, D5.

Tree shapes never depend on ranking: every test finds the direct result it checks by id, with
`max_results` above the number of stored records.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque

import pytest

from memory.engine import AgentMemory, RecordRelation, RecordStatus, SearchResult, SearchStrategy, TimeToLiveAnchor

VALID, INVALID = RecordStatus.VALID, RecordStatus.INVALID
USER = "graph-demo-user"
THIN, SOURDOUGH, NEAPOLITAN = "pizza-thin-crust", "pizza-sourdough", "pizza-neapolitan-sourdough"
PIZZA_QUERY = "What pizza should I recommend?"


# --- helpers ---------------------------------------------------------------------------------


def by_id(results: list[SearchResult], record_id: str) -> SearchResult:
    found = [result for result in results if result.id == record_id]
    assert len(found) == 1, f"{record_id!r} is not a direct result once: {[r.id for r in results]}"
    return found[0]


def shape(result: SearchResult) -> list:
    """The tree as (label seen from the parent, child id, child's tree)."""
    return [(relation.label_from(result.id), child.id, shape(child)) for relation, child in result.linked_results]


def id_shape(result: SearchResult) -> list:
    return [(child.id, id_shape(child)) for _, child in result.linked_results]


def relation_shape(result: SearchResult) -> list:
    return [(relation.id, child.id, relation_shape(child)) for relation, child in result.linked_results]


def walk(result: SearchResult, depth: int = 1):
    """Every (parent, relation, child, depth) of a tree, breadth-first within each branch."""
    for relation, child in result.linked_results:
        yield result, relation, child, depth
        yield from walk(child, depth + 1)


def linked_ids(result: SearchResult) -> list[str]:
    return [child.id for _, _, child, _ in walk(result)]


def status_of(memory: AgentMemory, memory_id: str) -> RecordStatus:
    return memory.get_memory(memory_id).status


def add_notes(memory: AgentMemory, *memory_ids: str, user_id: str = "u1", **options) -> None:
    for memory_id in memory_ids:
        memory.add_memory(f"note about {memory_id}", memory_id=memory_id, user_id=user_id, **options)


def connect(memory: AgentMemory, source: str, target: str, relation_type: str = "supports", **options) -> str:
    return memory.link_records(source, "memory", target, "memory", relation_type, **options)


def search_notes(memory: AgentMemory, user_id: str = "u1", **options) -> list[SearchResult]:
    options.setdefault("max_results", 50)
    return memory.search("note about", user_id=user_id, **options)


def bfs_distances(edges: list[tuple[str, str]], root: str) -> dict[str, int]:
    neighbours: dict[str, list[str]] = {}
    for source, target in edges:
        neighbours.setdefault(source, []).append(target)
        neighbours.setdefault(target, []).append(source)
    distances, queue = {root: 0}, deque([root])
    while queue:
        node = queue.popleft()
        for other in neighbours.get(node, []):
            if other not in distances:
                distances[other] = distances[node] + 1
                queue.append(other)
    return distances


# --- the pizza walk-through (C-G3 … C-G12) ----------------------------------------------------


def add_pizza_preferences(memory: AgentMemory) -> list[str]:
    return [
        memory.add_memory(
            "The user's preferred pizza style is thin crust.", memory_id=THIN, memory_type="preference", user_id=USER
        ),
        memory.add_memory(
            "The user now prefers sourdough pizza.", memory_id=SOURDOUGH, memory_type="preference", user_id=USER
        ),
        memory.add_memory(
            "The user's preferred pizza style is sourdough, especially Neapolitan sourdough.",
            memory_id=NEAPOLITAN,
            memory_type="preference",
            user_id=USER,
        ),
    ]


def statuses(memory: AgentMemory) -> tuple[RecordStatus, RecordStatus, RecordStatus]:
    return status_of(memory, THIN), status_of(memory, SOURDOUGH), status_of(memory, NEAPOLITAN)


def test_the_graph_guides_pizza_walk_through_end_to_end(memory):
    # C-G3 … C-G5
    assert add_pizza_preferences(memory) == [THIN, SOURDOUGH, NEAPOLITAN]
    assert statuses(memory) == (VALID, VALID, VALID)

    # C-G6: sourdough supersedes thin crust.
    supersedes_link_id = memory.link_records(
        source_record_id=SOURDOUGH,
        source_record_type="preference",
        target_record_id=THIN,
        target_record_type="preference",
        relation_type="supersedes",
    )
    assert isinstance(supersedes_link_id, str) and supersedes_link_id
    assert statuses(memory) == (INVALID, VALID, VALID)

    # C-G7: Neapolitan refines sourdough.
    refines_link_id = memory.link_records(
        source_record_id=NEAPOLITAN,
        source_record_type="preference",
        target_record_id=SOURDOUGH,
        target_record_type="preference",
        relation_type="refines",
    )
    assert isinstance(refines_link_id, str) and refines_link_id and refines_link_id != supersedes_link_id
    assert statuses(memory) == (INVALID, INVALID, VALID)

    # C-G8: retyping supersedes → supports revalidates thin crust.
    assert (
        memory.update_record_link(
            supersedes_link_id, relation_type="supports", metadata={"reviewed_by": "preference-service"}
        )
        == 1
    )
    relation = memory.get_relation(supersedes_link_id)
    assert (relation.relation_type, relation.opposite_relation_type) == ("supports", "is_supported_by")
    assert relation.metadata == {"reviewed_by": "preference-service"}
    assert (relation.source_record_id, relation.target_record_id) == (SOURDOUGH, THIN)
    assert statuses(memory) == (VALID, INVALID, VALID)

    # C-G9: deleting it by id keeps thin crust valid.
    assert memory.delete_record_link(relation_id=supersedes_link_id) == 1
    assert statuses(memory) == (VALID, INVALID, VALID)

    # C-G10: deleting the refines link by its tuple revalidates sourdough.
    assert (
        memory.delete_record_link(
            source_record_id=NEAPOLITAN,
            source_record_type="preference",
            target_record_id=SOURDOUGH,
            target_record_type="preference",
            relation_type="refines",
        )
        == 1
    )
    assert statuses(memory) == (VALID, VALID, VALID)
    assert memory.list_relations(user_id=USER) == []

    # C-G11: the positional form.
    first = memory.link_records(SOURDOUGH, "preference", THIN, "preference", "supersedes")
    second = memory.link_records(NEAPOLITAN, "preference", SOURDOUGH, "preference", "refines")
    assert isinstance(first, str) and isinstance(second, str) and first != second
    assert statuses(memory) == (INVALID, INVALID, VALID)

    # C-G12
    results = memory.search(
        PIZZA_QUERY, user_id=USER, max_results=5, num_hops=2, max_linked_results=20, include_invalid_results=False
    )
    assert [result.id for result in results] == [NEAPOLITAN]
    [neapolitan] = results
    assert shape(neapolitan) == [("refines", SOURDOUGH, [("supersedes", THIN, [])])]
    assert relation_shape(neapolitan) == [(second, SOURDOUGH, [(first, THIN, [])])]
    [(_, sourdough)] = neapolitan.linked_results
    [(_, thin)] = sourdough.linked_results
    assert (sourdough.record.status, thin.record.status) == (INVALID, INVALID)
    assert sourdough.content == "The user now prefers sourdough pizza."
    assert len(linked_ids(neapolitan)) <= 20


@pytest.fixture
def pizza(memory):
    """The C-G11 state: sourdough supersedes thin crust, Neapolitan refines sourdough."""
    add_pizza_preferences(memory)
    supersedes = memory.link_records(SOURDOUGH, "preference", THIN, "preference", "supersedes")
    refines = memory.link_records(NEAPOLITAN, "preference", SOURDOUGH, "preference", "refines")
    return {"supersedes": supersedes, "refines": refines}


def pizza_search(memory: AgentMemory, **options) -> list[SearchResult]:
    options = {"max_results": 5, "num_hops": 2, "max_linked_results": 20, "include_invalid_results": False} | options
    return memory.search(PIZZA_QUERY, user_id=USER, **options)


def test_c_g12_linked_relations_keep_their_stored_direction(memory, pizza):
    [neapolitan] = pizza_search(memory)
    [(refines, sourdough)] = neapolitan.linked_results
    [(supersedes, thin)] = sourdough.linked_results
    assert isinstance(refines, RecordRelation) and isinstance(sourdough, SearchResult)
    assert refines == memory.get_relation(pizza["refines"])
    assert (refines.source_record_id, refines.target_record_id) == (NEAPOLITAN, SOURDOUGH)
    assert supersedes == memory.get_relation(pizza["supersedes"])
    assert (supersedes.source_record_id, supersedes.target_record_id) == (SOURDOUGH, THIN)
    assert thin.linked_results == []


def test_c_d2_an_invalid_direct_result_shows_its_links_with_reverse_labels(memory, pizza):
    results = pizza_search(memory, include_invalid_results=True, max_results=10)
    assert {result.id for result in results} == {THIN, SOURDOUGH, NEAPOLITAN}
    thin = by_id(results, THIN)
    assert thin.record.status == INVALID
    assert shape(thin) == [("is_superseded_by", SOURDOUGH, [("is_refined_by", NEAPOLITAN, [])])]
    [(supersedes, sourdough)] = thin.linked_results
    assert (supersedes.source_record_id, supersedes.target_record_id) == (SOURDOUGH, THIN)
    assert supersedes.relation_type == "supersedes"
    [(refines, _)] = sourdough.linked_results
    assert (refines.source_record_id, refines.target_record_id) == (NEAPOLITAN, SOURDOUGH)


def test_c_d2_a_middle_result_sees_both_neighbours_in_link_creation_order(memory, pizza):
    sourdough = by_id(pizza_search(memory, include_invalid_results=True, max_results=10), SOURDOUGH)
    assert shape(sourdough) == [("supersedes", THIN, []), ("is_refined_by", NEAPOLITAN, [])]


def test_c_d3_one_hop_stops_at_sourdough(memory, pizza):
    [neapolitan] = pizza_search(memory, num_hops=1)
    assert shape(neapolitan) == [("refines", SOURDOUGH, [])]


def test_c_d4_max_linked_results_zero_gives_no_linked_context(memory, pizza):
    results = pizza_search(memory, max_linked_results=0)
    assert [result.id for result in results] == [NEAPOLITAN]
    assert results[0].linked_results == []


def test_num_hops_zero_gives_no_linked_context(memory, pizza):
    results = pizza_search(memory, num_hops=0, include_invalid_results=True, max_results=10)
    assert len(results) == 3
    assert all(result.linked_results == [] for result in results)


@pytest.mark.parametrize("num_hops", [6, -1, 2.0, True, "2", None])
def test_c_d5_num_hops_out_of_range_raises_value_error(memory, pizza, thread, num_hops):
    with pytest.raises(ValueError):
        pizza_search(memory, num_hops=num_hops)
    with pytest.raises(ValueError):
        thread.search("pizza", num_hops=num_hops)
    with pytest.raises(ValueError):
        memory.store.search("pizza", 5, num_hops=num_hops)


@pytest.mark.parametrize("max_linked_results", [-1, 1.5, None, "20"])
def test_a_bad_max_linked_results_raises_value_error(memory, pizza, max_linked_results):
    with pytest.raises(ValueError):
        pizza_search(memory, max_linked_results=max_linked_results)


def test_num_hops_five_is_accepted(memory, pizza):
    [neapolitan] = pizza_search(memory, num_hops=5)
    assert id_shape(neapolitan) == [(SOURDOUGH, [(THIN, [])])]


def test_c_d6_deleting_by_the_reversed_tuple_deletes_nothing(memory, pizza):
    reversed_tuple = dict(
        source_record_id=SOURDOUGH,
        source_record_type="preference",
        target_record_id=NEAPOLITAN,
        target_record_type="preference",
        relation_type="refines",
    )
    assert memory.delete_record_link(**reversed_tuple) == 0
    assert memory.get_relation(pizza["refines"]).relation_type == "refines"
    assert statuses(memory) == (INVALID, INVALID, VALID)


def test_c_d7_a_link_in_the_other_direction_raises_value_error(memory, pizza):
    with pytest.raises(ValueError):
        memory.link_records(THIN, "preference", SOURDOUGH, "preference", "supports")
    assert [relation.id for relation in memory.list_relations(user_id=USER)] == [pizza["supersedes"], pizza["refines"]]
    assert statuses(memory) == (INVALID, INVALID, VALID)


# --- the shape of the tree (§6.5; D5) ---------------------------------------------------------

GRAPH = [
    ("R", "A"),
    ("B", "A"),
    ("B", "C"),
    ("C", "D"),
    ("D", "R"),
    ("E", "C"),
    ("A", "E"),
    ("F", "E"),
    ("G", "F"),
    ("H", "G"),
    ("I", "H"),
]
"""Distances from R: A, D 1; B, C, E 2; F 3; G 4; H 5; I 6. Several equal-length paths."""


@pytest.mark.parametrize("order", ["as listed", "reversed"])
@pytest.mark.parametrize("num_hops", [1, 2, 5])
def test_each_linked_memory_sits_once_at_its_shortest_distance_whatever_the_link_order(store_factory, order, num_hops):
    memory = AgentMemory(store_factory())
    add_notes(memory, "R", "A", "B", "C", "D", "E", "F", "G", "H", "I")
    edges = GRAPH if order == "as listed" else GRAPH[::-1]
    for source, target in edges:
        connect(memory, source, target)
    distances = bfs_distances(GRAPH, "R")

    root = by_id(search_notes(memory, num_hops=num_hops), "R")
    found = list(walk(root))
    depth_of = {child.id: depth for _, _, child, depth in found}
    assert len(depth_of) == len(found), "a memory appears twice in one tree"
    assert depth_of == {node: d for node, d in distances.items() if 0 < d <= num_hops}
    for parent, relation, child, _ in found:
        assert {relation.source_record_id, relation.target_record_id} == {parent.id, child.id}
        assert relation == memory.get_relation(relation.id)


def test_a_tie_between_shortest_paths_goes_to_the_parent_visited_first(memory):
    add_notes(memory, "R", "A", "B", "C")
    connect(memory, "R", "A")
    connect(memory, "R", "B")
    connect(memory, "B", "C")  # created before A-C, but B is visited after A
    connect(memory, "A", "C")
    root = by_id(search_notes(memory, num_hops=2), "R")
    assert id_shape(root) == [("A", [("C", [])]), ("B", [])]


def test_the_roots_links_are_visited_in_creation_order(memory):
    add_notes(memory, "R", "A", "B", "C")
    connect(memory, "R", "B")
    connect(memory, "A", "R")
    connect(memory, "A", "C")
    connect(memory, "B", "C")
    root = by_id(search_notes(memory, num_hops=2), "R")
    assert id_shape(root) == [("B", [("C", [])]), ("A", [])]


@pytest.mark.parametrize("reverse", [False, True])
def test_links_created_together_are_visited_in_id_order_whatever_their_list_order(store_factory, reverse):
    memory = AgentMemory(store_factory())
    add_notes(memory, "R", "X", "Y", "Z")
    batch = [
        {"id": "rel-b", "source_record_id": "R", "target_record_id": "X"},
        {"id": "rel-a", "source_record_id": "Y", "target_record_id": "R"},
        {"id": "rel-d", "source_record_id": "Z", "target_record_id": "Y"},
        {"id": "rel-c", "source_record_id": "X", "target_record_id": "Z"},
    ]
    batch = [
        {**relation, "source_record_type": "memory", "target_record_type": "memory", "relation_type": "supports"}
        for relation in batch
    ]
    memory.store.add_relations(batch[::-1] if reverse else batch)
    # Precondition for the (created_at, id) order to fall back on ids: one creation time.
    assert len({relation.created_at for relation in memory.list_relations()}) == 1
    root = by_id(search_notes(memory, num_hops=3), "R")
    assert relation_shape(root) == [("rel-a", "Y", [("rel-d", "Z", [])]), ("rel-b", "X", [])]


@pytest.mark.parametrize(
    "cycle",
    [["A", "B", "C"], ["A", "B", "C", "D"], ["A", "B", "C", "D", "E", "F"]],
    ids=lambda cycle: f"{len(cycle)}-cycle",
)
def test_a_cycle_does_not_loop_and_each_memory_appears_once(memory, cycle):
    add_notes(memory, *cycle)
    for source, target in zip(cycle, cycle[1:] + cycle[:1], strict=True):
        connect(memory, source, target, "supersedes")
    root = by_id(search_notes(memory, num_hops=5, include_invalid_results=True), "A")
    ids = linked_ids(root)
    assert sorted(ids) == sorted(cycle[1:])
    depth_of = {child.id: depth for _, _, child, depth in walk(root)}
    n = len(cycle)
    assert depth_of == {node: min(i, n - i) for i, node in enumerate(cycle) if i}


def test_a_four_cycle_tree_follows_breadth_first_link_order(memory):
    add_notes(memory, "A", "B", "C", "D")
    for source, target in [("A", "B"), ("B", "C"), ("C", "D"), ("D", "A")]:
        connect(memory, source, target)
    root = by_id(search_notes(memory, num_hops=5), "A")
    assert shape(root) == [("supports", "B", [("supports", "C", [])]), ("is_supported_by", "D", [])]


@pytest.fixture
def fan(memory):
    """R links to A, B, C (in that order); A-D and B-E were linked before any of R's links."""
    add_notes(memory, "R", "A", "B", "C", "D", "E")
    connect(memory, "A", "D")
    connect(memory, "E", "B")
    connect(memory, "R", "A")
    connect(memory, "B", "R")
    connect(memory, "R", "C")
    return memory


@pytest.mark.parametrize(
    ("max_linked_results", "expected"),
    [
        (1, [("A", [])]),
        (2, [("A", []), ("B", [])]),
        (3, [("A", []), ("B", []), ("C", [])]),
        (4, [("A", [("D", [])]), ("B", []), ("C", [])]),
        (5, [("A", [("D", [])]), ("B", [("E", [])]), ("C", [])]),
        (100, [("A", [("D", [])]), ("B", [("E", [])]), ("C", [])]),
    ],
)
def test_max_linked_results_cuts_the_tree_breadth_first(fan, max_linked_results, expected):
    root = by_id(search_notes(fan, num_hops=2, max_linked_results=max_linked_results), "R")
    assert id_shape(root) == expected


def test_max_linked_results_caps_each_direct_result_separately(fan):
    results = search_notes(fan, num_hops=2, max_linked_results=2)
    for result in results:
        assert len(linked_ids(result)) <= 2
    assert id_shape(by_id(results, "R")) == [("A", []), ("B", [])]
    assert id_shape(by_id(results, "A")) == [("D", []), ("R", [])]


def test_a_memory_can_appear_in_several_trees_with_its_own_subtree_in_each(memory):
    add_notes(memory, "A", "B", "C", "D")
    connect(memory, "A", "C")
    connect(memory, "B", "C")
    connect(memory, "C", "D")
    results = search_notes(memory, num_hops=2)
    a, b = by_id(results, "A"), by_id(results, "B")
    assert id_shape(a) == [("C", [("B", []), ("D", [])])]
    assert id_shape(b) == [("C", [("A", []), ("D", [])])]
    c_under_a, c_under_b = a.linked_results[0][1], b.linked_results[0][1]
    assert c_under_a is not c_under_b and c_under_a.record is not c_under_b.record
    # The direct result C carries its own tree too.
    assert id_shape(by_id(results, "C")) == [("A", []), ("B", []), ("D", [])]


# --- filters on linked memories (§6.5) -------------------------------------------------------


def test_another_users_linked_memory_is_not_shown(memory):
    add_notes(memory, "ours", "mine-too", user_id="u1")
    add_notes(memory, "theirs", user_id="u2")
    connect(memory, "theirs", "ours")
    connect(memory, "mine-too", "ours")
    ours = by_id(search_notes(memory, user_id="u1", num_hops=2), "ours")
    assert id_shape(ours) == [("mine-too", [])]
    theirs = by_id(search_notes(memory, user_id="u2", num_hops=2), "theirs")
    assert theirs.linked_results == []


def test_an_unscoped_memory_linked_to_a_users_memory_is_not_shown_to_that_user(memory):
    add_notes(memory, "ours", user_id="u1")
    add_notes(memory, "nobodys", user_id=None)
    connect(memory, "nobodys", "ours")
    assert by_id(search_notes(memory, user_id="u1", num_hops=1), "ours").linked_results == []
    assert by_id(search_notes(memory, user_id=None, num_hops=1), "nobodys").linked_results == []


def test_an_expired_linked_memory_is_not_shown(memory):
    add_notes(memory, "root", "kept", "expiring")
    connect(memory, "root", "kept")
    connect(memory, "root", "expiring")
    memory.update_memory(
        "expiring", timestamp="2000-01-01T00:00:00Z", ttl_days=1, ttl_anchor=TimeToLiveAnchor.TIMESTAMP
    )
    with pytest.raises(KeyError):
        memory.get_memory("expiring")
    root = by_id(search_notes(memory, num_hops=2), "root")
    assert id_shape(root) == [("kept", [])]


def test_the_metadata_filter_applies_to_linked_memories(memory):
    add_notes(memory, "root", "match", metadata={"topic": "tea"})
    add_notes(memory, "other", metadata={"topic": "coffee"})
    add_notes(memory, "bare")
    for other in ("other", "match", "bare"):
        connect(memory, "root", other)
    root = by_id(search_notes(memory, num_hops=1, metadata_filter={"topic": "tea"}), "root")
    assert id_shape(root) == [("match", [])]
    unfiltered = by_id(search_notes(memory, num_hops=1), "root")
    assert id_shape(unfiltered) == [("other", []), ("match", []), ("bare", [])]


def test_the_record_type_filter_applies_to_linked_memories(memory):
    add_notes(memory, "root")
    add_notes(memory, "a-fact", memory_type="fact")
    add_notes(memory, "a-preference", memory_type="preference")
    memory.link_records("root", "memory", "a-fact", "fact", "supports")
    memory.link_records("a-preference", "preference", "root", "memory", "refines")
    root = by_id(search_notes(memory, num_hops=1, record_types=["memory", "preference"]), "root")
    assert shape(root) == [("is_refined_by", "a-preference", [])]
    everything = by_id(search_notes(memory, num_hops=1, include_invalid_results=True), "root")
    assert id_shape(everything) == [("a-fact", []), ("a-preference", [])]


def test_a_filtered_out_memory_is_not_a_bridge_in_the_path_shown(memory):
    # Whatever the engine does beyond it, a hidden memory never shows up as a parent.
    add_notes(memory, "root", "far")
    add_notes(memory, "hidden", user_id="u2")
    connect(memory, "root", "hidden")
    connect(memory, "hidden", "far")
    root = by_id(search_notes(memory, num_hops=3), "root")
    assert "hidden" not in linked_ids(root)
    for parent, _, child, _ in walk(root):
        assert {parent.id, child.id} != {"hidden"}


def test_thread_search_shows_linked_memories_of_the_users_other_threads_unless_exact_thread(
    memory, thread, other_thread
):
    thread.add_memory("note about home", memory_id="home")
    other_thread.add_memory("note about away", memory_id="away")
    connect(memory, "home", "away")
    home = by_id(thread.search("note about", max_results=50, num_hops=1), "home")
    assert id_shape(home) == [("away", [])]
    home = by_id(thread.search("note about", max_results=50, num_hops=1, exact_thread_match=True), "home")
    assert home.linked_results == []


def test_include_invalid_results_applies_only_to_the_top_level(thread, memory):
    thread.add_memory("note about the current plan", memory_id="current")
    thread.add_memory("note about the old plan", memory_id="old")
    thread.link_records("current", "memory", "old", "memory", "supersedes")

    results = thread.search("note about", max_results=50, num_hops=1, include_invalid_results=False)
    assert [result.id for result in results] == ["current"]
    [(relation, old)] = results[0].linked_results
    assert (old.id, old.record.status, relation.label_from("current")) == ("old", INVALID, "supersedes")
    assert results[0].include_invalid_results is False

    results = thread.search("note about", max_results=50, num_hops=1, include_invalid_results=True)
    assert {result.id for result in results} == {"current", "old"}
    assert shape(by_id(results, "old")) == [("is_superseded_by", "current", [])]


def test_direct_message_results_are_never_expanded(thread, memory):
    thread.add_messages([{"role": "user", "content": "note about shared things", "id": "shared"}])
    thread.add_memory("note about shared things", memory_id="shared")
    thread.add_memory("note about a neighbour", memory_id="neighbour")
    thread.link_records("neighbour", "memory", "shared", "memory", "supports")
    results = thread.search("note about shared things", max_results=50, num_hops=2)
    messages = [result for result in results if result.record.record_type == "message"]
    memories = [result for result in results if result.record.record_type == "memory" and result.id == "shared"]
    assert len(messages) == 1 and len(memories) == 1
    assert messages[0].linked_results == []
    assert messages[0].record.linked_results == []
    assert id_shape(memories[0]) == [("neighbour", [])]


# --- linked results as values -----------------------------------------------------------------


def test_a_linked_result_has_its_cosine_distance_to_the_query(store_factory):
    memory = AgentMemory(store_factory(search_strategy=SearchStrategy.VECTOR))
    add_notes(memory, "root", "neighbour")
    connect(memory, "root", "neighbour")
    results = search_notes(memory, num_hops=1)
    [(_, neighbour)] = by_id(results, "root").linked_results
    assert not math.isnan(neighbour.distance)
    assert neighbour.distance == pytest.approx(by_id(results, "neighbour").distance, abs=1e-5)


def test_a_linked_memory_without_a_vector_has_no_distance(store_factory):
    """NaN on every backend (formatting shows no distance): an invented number would rank it."""
    store = store_factory(search_strategy=SearchStrategy.VECTOR)
    memory = AgentMemory(store)
    add_notes(memory, "root")
    store.add([""], "memory", record_ids=["empty"], user_ids="u1")  # nothing to embed: no vector
    connect(memory, "root", "empty")
    [(_, empty)] = by_id(search_notes(memory, num_hops=1), "root").linked_results
    assert empty.id == "empty" and math.isnan(empty.distance)


def test_linked_results_are_full_search_results_of_the_linked_memory(memory):
    memory.add_memory("note about root", memory_id="root", user_id="u1")
    memory.add_memory(
        "note about the neighbour", memory_id="neighbour", memory_type="fact", user_id="u1", metadata={"k": "v"}
    )
    memory.link_records("root", "memory", "neighbour", "fact", "supports")
    [(_, neighbour)] = by_id(search_notes(memory, num_hops=1), "root").linked_results
    assert isinstance(neighbour, SearchResult)
    assert neighbour.id == "neighbour"
    assert neighbour.content == "note about the neighbour"
    assert neighbour.metadata == {"k": "v"}
    assert neighbour.record.record_type == "fact"
    assert (neighbour.record.user_id, neighbour.record.thread_id) == ("u1", None)
    assert isinstance(neighbour.distance, float)


def test_store_search_attaches_trees_of_record_relation_and_hit_pairs(memory):
    add_notes(memory, "root", "neighbour")
    relation_id = connect(memory, "neighbour", "root", "refines")
    hits = memory.store.search("note about", 10, user_id="u1", exact_user_match=True, num_hops=1)
    [root] = [record for record, _ in hits if record.id == "root"]
    [(relation, hit)] = root.linked_results
    assert relation == memory.get_relation(relation_id)
    record, distance = hit
    assert record.id == "neighbour" and isinstance(distance, float)


def test_thread_search_async_returns_linked_trees(thread):
    thread.add_memory("note about root", memory_id="root")
    thread.add_memory("note about neighbour", memory_id="neighbour")
    thread.link_records("root", "memory", "neighbour", "memory", "contradicts")
    results = asyncio.run(thread.search_async("note about", max_results=50, num_hops=1))
    assert shape(by_id(results, "neighbour")) == [("contradicts", "root", [])]


def test_a_tree_follows_a_retyped_and_a_deleted_link(memory):
    add_notes(memory, "root", "neighbour", "far")
    first = connect(memory, "root", "neighbour")
    connect(memory, "neighbour", "far", "mentions", opposite_relation_type="mentioned_by")
    memory.update_record_link(first, relation_type="supersedes")
    root = by_id(search_notes(memory, num_hops=2), "root")
    assert shape(root) == [("supersedes", "neighbour", [("mentions", "far", [])])]
    far = by_id(search_notes(memory, num_hops=2), "far")
    assert shape(far) == [("mentioned_by", "neighbour", [("is_superseded_by", "root", [])])]
    memory.delete_record_link(relation_id=first)
    root = by_id(search_notes(memory, num_hops=2), "root")
    assert root.linked_results == []


def test_a_deleted_memory_disappears_from_trees(memory):
    add_notes(memory, "root", "middle", "far")
    connect(memory, "root", "middle")
    connect(memory, "middle", "far")
    memory.delete_memory("middle")
    root = by_id(search_notes(memory, num_hops=3), "root")
    assert root.linked_results == []
