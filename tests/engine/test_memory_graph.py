"""AgentMemory.memory_graph: memories and the links among them, around a scope or a memory."""

from __future__ import annotations

import pytest

from memory.engine import AgentMemory, LinkedOwner, MemoryGraph, MemoryRecord, RecordRelation


@pytest.fixture
def world(memory: AgentMemory) -> AgentMemory:
    """u1: a, b, c, d (linked) and lonely; u2: x, y; an agent memory z; an expired memory e.

    b supersedes a, c refines b, a supports x, x supports y, d contradicts c, z inspired c
    (opposite inspired_by), e duplicates a (e expires)."""
    for name in ("a", "b", "c", "d", "lonely"):
        memory.add_memory(
            f"memory {name}", memory_type="fact" if name in "ac" else "memory", user_id="u1", memory_id=name
        )
    for name in ("x", "y"):
        memory.add_memory(f"memory {name}", memory_type="preference", user_id="u2", memory_id=name)
    memory.add_memory("memory z", memory_type="guideline", agent_id="a1", memory_id="z")
    links = [
        ("b", "a", "supersedes", {}),
        ("c", "b", "refines", {}),
        ("a", "x", "supports", {}),
        ("x", "y", "supports", {}),
        ("d", "c", "contradicts", {}),
        ("z", "c", "inspired", {"opposite_relation_type": "inspired_by"}),
    ]
    for source, target, relation_type, extra in links:
        link(memory, source, target, relation_type, **extra)
    memory.add_memory("memory e", user_id="u1", memory_id="e", memory_id_to_link="a", link_type="duplicates")
    memory.update_memory("e", expires_at="2000-01-01T00:00:00Z")  # expired, awaiting purge, its link kept
    return memory


def link(memory: AgentMemory, source: str, target: str, relation_type: str, **extra) -> str:
    types = {record.id: record.record_type for record in [memory.get_memory(source), memory.get_memory(target)]}
    return memory.link_records(
        source, types[source], target, types[target], relation_type, relation_id=f"{source}-{target}", **extra
    )


def shape(graph: MemoryGraph) -> tuple[set[str], list[str]]:
    return {node.id for node in graph.nodes}, [edge.id for edge in graph.edges]


def test_a_scope_graph_holds_its_linked_memories_and_their_neighbours(world):
    graph = world.memory_graph(user_id="u1")
    assert shape(graph) == ({"a", "b", "c", "d", "x", "z"}, ["b-a", "c-b", "a-x", "d-c", "z-c"])
    assert (graph.truncated, graph.total_nodes, graph.total_edges) == (False, 6, 5)
    nodes = {node.id: node for node in graph.nodes}
    assert all(isinstance(node, MemoryRecord) for node in graph.nodes)
    assert (nodes["x"].user_id, nodes["z"].user_id, nodes["z"].agent_id) == ("u2", None, "a1")  # their own scope
    assert nodes["a"].status == "invalid" and nodes["c"].status == "valid"  # effective status
    assert all(isinstance(edge, RecordRelation) for edge in graph.edges)
    inspired = graph.edges[-1]
    assert (inspired.source_record_id, inspired.target_record_id) == ("z", "c")  # the stored direction
    assert (inspired.relation_type, inspired.opposite_relation_type) == ("inspired", "inspired_by")


def test_scopes_match_exactly_and_each_scope_argument_works(world):
    assert shape(world.memory_graph(user_id="u2")) == ({"a", "x", "y"}, ["a-x", "x-y"])
    assert shape(world.memory_graph(agent_id="a1")) == ({"z", "c"}, ["z-c"])
    assert shape(world.memory_graph(user_id="nobody")) == (set(), [])
    world.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    world.add_memory("thread memory", thread_id="t1", memory_id="t-mem", memory_id_to_link="d", link_type="supports")
    assert shape(world.memory_graph(thread_id="t1")) == ({"t-mem", "d"}, [thread_link(world, "t-mem")])


def thread_link(memory: AgentMemory, memory_id: str) -> str:
    [relation] = memory.list_relations(record_id=memory_id)
    return relation.id


def test_hops_reach_further_from_the_scope(world):
    assert shape(world.memory_graph(user_id="u1", hops=0)) == ({"a", "b", "c", "d"}, ["b-a", "c-b", "d-c"])
    assert shape(world.memory_graph(user_id="u1", hops=2)) == (
        {"a", "b", "c", "d", "x", "y", "z"},
        ["b-a", "c-b", "a-x", "x-y", "d-c", "z-c"],
    )


def test_a_memory_graph_is_its_neighbourhood_both_ways(world):
    assert shape(world.memory_graph(memory_id="a", hops=0)) == ({"a"}, [])
    assert shape(world.memory_graph(memory_id="a")) == ({"a", "b", "x"}, ["b-a", "a-x"])
    assert shape(world.memory_graph(memory_id="a", hops=2)) == ({"a", "b", "c", "x", "y"}, ["b-a", "c-b", "a-x", "x-y"])
    assert shape(world.memory_graph(memory_id="a", hops=5)) == (
        {"a", "b", "c", "d", "x", "y", "z"},
        ["b-a", "c-b", "a-x", "x-y", "d-c", "z-c"],
    )
    assert world.memory_graph(memory_id="a", hops=2).nodes[0].id == "a"  # the centre first
    assert shape(world.memory_graph(memory_id="lonely", hops=3)) == ({"lonely"}, [])


def test_every_link_among_the_nodes_is_an_edge(world):
    link(world, "y", "b", "supports")  # closes a ring a-x-y-b-a at the edge of a 2-hop graph
    assert shape(world.memory_graph(memory_id="a", hops=2)) == (
        {"a", "b", "c", "x", "y"},
        ["b-a", "c-b", "a-x", "x-y", "y-b"],
    )
    link(world, "x", "lonely", "supports")
    # u2's x and y, their neighbours a, b and lonely, and every link among them: b-a too.
    assert shape(world.memory_graph(user_id="u2", hops=1)) == (
        {"a", "b", "x", "y", "lonely"},
        ["b-a", "a-x", "x-y", "y-b", "x-lonely"],
    )


def test_relation_types_keep_only_those_links_and_what_they_reach(world):
    assert shape(world.memory_graph(user_id="u1", relation_types=["supports"])) == ({"a", "x"}, ["a-x"])
    assert shape(world.memory_graph(user_id="u1", relation_types="inspired")) == ({"c", "z"}, ["z-c"])
    assert shape(world.memory_graph(memory_id="a", hops=3, relation_types=["supports", "supersedes"])) == (
        {"a", "b", "x", "y"},
        ["b-a", "a-x", "x-y"],
    )
    assert shape(world.memory_graph(memory_id="c", relation_types=["supports"])) == ({"c"}, [])


def test_memory_types_and_statuses_drop_nodes_with_their_links(world):
    # a and b are invalid (superseded, refined); c, d, x, y, z valid.
    assert shape(world.memory_graph(user_id="u1", statuses="valid")) == ({"c", "d", "z"}, ["d-c", "z-c"])
    assert shape(world.memory_graph(user_id="u1", statuses=["invalid"])) == ({"a", "b"}, ["b-a"])
    assert shape(world.memory_graph(user_id="u1", statuses=("valid", "invalid"))) == shape(
        world.memory_graph(user_id="u1")
    )
    assert shape(world.memory_graph(user_id="u1", memory_types=["fact", "preference"])) == ({"a", "x"}, ["a-x"])
    # Not crossed either: from a, without invalid memories, b is no bridge to c.
    assert shape(world.memory_graph(memory_id="x", hops=5, statuses="valid")) == ({"x", "y"}, ["x-y"])
    # The centre stays whatever the filters.
    assert shape(world.memory_graph(memory_id="a", statuses="valid")) == ({"a", "x"}, ["a-x"])


def test_expired_and_deleted_memories_are_never_nodes(world):
    graph = world.memory_graph(memory_id="a")
    assert "e" not in shape(graph)[0]
    world.delete_memory("x")
    assert shape(world.memory_graph(user_id="u1")) == ({"a", "b", "c", "d", "z"}, ["b-a", "c-b", "d-c", "z-c"])
    with pytest.raises(KeyError):
        world.memory_graph(memory_id="e")
    with pytest.raises(KeyError):
        world.memory_graph(memory_id="x")
    assert world.store.memory_graph(memory_id="x") == MemoryGraph()  # the store's answer: nothing


def test_max_nodes_keeps_the_most_linked_nodes_and_the_centre(world):
    graph = world.memory_graph(user_id="u1", max_nodes=2)
    # c has three links, a and b two each (tie: by id), d, x, z one.
    assert shape(graph) == ({"c", "a"}, [])
    assert [node.id for node in graph.nodes] == ["c", "a"]
    assert (graph.truncated, graph.total_nodes, graph.total_edges) == (True, 6, 5)
    graph = world.memory_graph(user_id="u1", max_nodes=3)
    assert shape(graph) == ({"a", "b", "c"}, ["b-a", "c-b"])
    graph = world.memory_graph(memory_id="z", hops=5, max_nodes=2)
    assert [node.id for node in graph.nodes] == ["z", "c"] and graph.truncated
    assert shape(world.memory_graph(user_id="u1", max_nodes=6)) == shape(world.memory_graph(user_id="u1"))
    assert not world.memory_graph(user_id="u1", max_nodes=6).truncated


def test_another_stores_new_link_is_seen(store_factory):
    """The in-memory link index catches up with a write made through another store (process)."""
    first, second = AgentMemory(store_factory("shared")), AgentMemory(store_factory("shared"))
    first.add_memory("one", user_id="u1", memory_id="one")
    first.add_memory("two", user_id="u1", memory_id="two", memory_id_to_link="one", link_type="supports")
    assert shape(second.memory_graph(user_id="u1"))[0] == {"one", "two"}
    first.add_memory("three", user_id="u9", memory_id="three", memory_id_to_link="two", link_type="refines")
    assert shape(second.memory_graph(user_id="u1"))[0] == {"one", "two", "three"}
    first.delete_memory("one")
    assert shape(second.memory_graph(user_id="u1"))[0] == {"two", "three"}


def test_inside_a_transaction_the_graph_sees_its_writes(world):
    with world.store.transaction():
        link(world, "lonely", "d", "supports")
        assert "lonely" in shape(world.memory_graph(user_id="u1"))[0]


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"user_id": "u1", "memory_id": "a"},
        {"user_id": "u1", "agent_id": "a1"},
        {"user_id": None},
        {"user_id": ""},
        {"agent_id": 5},
        {"thread_id": ["t1"]},
        {"memory_id": "a", "hops": 6},
        {"memory_id": "a", "hops": -1},
        {"memory_id": "a", "hops": True},
        {"memory_id": "a", "hops": 1.0},
        {"user_id": "u1", "max_nodes": 0},
        {"user_id": "u1", "max_nodes": 10_001},
        {"user_id": "u1", "max_nodes": None},
        {"user_id": "u1", "relation_types": []},
        {"user_id": "u1", "relation_types": [""]},
        {"user_id": "u1", "relation_types": 5},
        {"user_id": "u1", "relation_types": ["x" * 600]},
        {"user_id": "u1", "memory_types": ["message"]},
        {"user_id": "u1", "memory_types": []},
        {"user_id": "u1", "statuses": "expired"},
        {"user_id": "u1", "statuses": ["Valid"]},
        {"user_id": "u1", "statuses": []},
    ],
)
def test_bad_arguments_are_value_errors(world, arguments):
    with pytest.raises(ValueError):
        world.memory_graph(**arguments)


def test_arguments_are_keyword_only(world):
    with pytest.raises(TypeError):
        world.memory_graph("u1")


# --- linked_owners: where a graph can start -------------------------------------------------------


def test_linked_owners_are_counted_by_their_links_and_linked_memories(world):
    # u1: b-a, c-b, a-x, d-c, z-c touch its live memories a, b, c, d (e-a is e's, expired; lonely
    # has no link); u2: a-x, x-y, on x and y; the agent a1: z-c, on z.
    assert world.linked_owners("user") == [LinkedOwner("u1", 5, 4), LinkedOwner("u2", 2, 2)]
    assert world.linked_owners("agent") == [LinkedOwner("a1", 1, 1)]
    assert world.linked_owners("user", limit=1) == [LinkedOwner("u1", 5, 4)]


def test_linked_owners_agree_with_each_owners_graph(world):
    """An owner's links are its graph's edges that touch its memories, its memories the graph's own."""
    link(world, "lonely", "y", "supports")
    for owner, column in (("user", "user_id"), ("agent", "agent_id")):
        for found in world.linked_owners(owner, limit=100):
            graph = world.memory_graph(**{column: found.owner_id})
            own = {node.id for node in graph.nodes if getattr(node, column) == found.owner_id}
            touching = [edge for edge in graph.edges if {edge.source_record_id, edge.target_record_id} & own]
            assert (found.links, found.memories) == (len(touching), len(own)), found


def test_linked_owners_rank_by_links_then_memories_then_id_and_follow_writes(world):
    for name in ("p", "q", "r"):
        world.add_memory(f"memory {name}", user_id="u3", memory_id=name)
    link(world, "p", "q", "supports")
    link(world, "q", "r", "supports")
    # u2 and u3: two links each; u3 has three memories linked to u2's two.
    assert [owner.owner_id for owner in world.linked_owners("user")] == ["u1", "u3", "u2"]
    world.delete_memory("r")  # memoised counts move with every write
    assert world.linked_owners("user")[1:] == [LinkedOwner("u2", 2, 2), LinkedOwner("u3", 1, 2)]
    world.update_memory("q", expires_at="2000-01-01T00:00:00Z")
    assert [owner.owner_id for owner in world.linked_owners("user")] == ["u1", "u2"]


def test_a_store_without_links_has_no_linked_owners(memory):
    assert memory.linked_owners("user") == [] and memory.linked_owners("agent") == []
    memory.add_memory("alone", user_id="u1", agent_id="a1")
    assert memory.linked_owners("user") == [] and memory.linked_owners("agent") == []


@pytest.mark.parametrize(
    "arguments",
    [{"owner": "users"}, {"owner": None}, {"owner": "user", "limit": 0}, {"owner": "user", "limit": True}],
)
def test_linked_owners_refuse_bad_arguments(world, arguments):
    with pytest.raises(ValueError):
        world.linked_owners(**arguments)
