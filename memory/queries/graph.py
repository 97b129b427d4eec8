"""The link graph's query and data, shared by the dashboard's graph (memory.views.graph) and the
API's /api/v1/graph/: the graph its filter form (memory.web.filters.GraphFilters: one scope, hops,
filters on links and nodes) asks the engine for, and that graph as JSON, laid out on the server
(memory.queries.graph_layout); and where a graph asked for without a scope starts (the users and
agents with the most links)."""

from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple

from memory.engine import AgentMemory, LinkedOwner, MemoryGraph
from memory.queries.graph_layout import IDEAL_LENGTH, layout
from memory.text import clip
from memory.web.filters import GraphFilters

CONTENT_CHARS = 200
STARTING_POINTS = 5
"""How many users, and how many agents, a graph page without a scope offers to start from."""


class Start(NamedTuple):
    """Where a graph can start: a user or an agent (`kind`), by its query parameter (`param`,
    "user_id" or "agent_id"), with its links and linked memories (`owner`)."""

    kind: str
    param: str
    owner: LinkedOwner


def starting_points(agent_memory: AgentMemory, limit: int = STARTING_POINTS) -> list[Start]:
    """The users with the most links, then the agents with the most, `limit` of each, most first:
    the first is where a graph without a scope opens (the busiest user, else the busiest agent).
    Empty when no two memories are linked. Two grouped queries (AgentMemory.linked_owners),
    memoised by the store until the next write, whatever the number of memories."""
    return [
        Start(kind, f"{kind}_id", owner)
        for kind in ("user", "agent")
        for owner in agent_memory.linked_owners(kind, limit=limit)
    ]


def load(agent_memory: AgentMemory, form: GraphFilters) -> MemoryGraph:
    """The graph the valid form asks for. When the engine refuses it, its message goes on the form
    and the error is raised again: KeyError, the form's memory_id names no memory; ValueError, an
    argument it refuses. Each front door answers those in its own way (404 and 400)."""
    try:
        return agent_memory.memory_graph(**form.engine_arguments())
    except (KeyError, ValueError) as error:
        form.refuse(error)
        raise


def degrees(graph: MemoryGraph) -> Counter[str]:
    """How many of the graph's edges each of its memories has."""
    degree: Counter[str] = Counter()
    for edge in graph.edges:
        degree[edge.source_record_id] += 1
        degree[edge.target_record_id] += 1
    return degree


def graph_json(graph: MemoryGraph, max_nodes: int) -> dict[str, Any]:
    """The JSON of /graph/data/: nodes with their degree among the edges and their position,
    edges in their stored direction (source → target)."""
    degree = degrees(graph)
    ids = [node.id for node in graph.nodes]
    positions = layout(ids, [(edge.source_record_id, edge.target_record_id) for edge in graph.edges])
    nodes = [
        {
            "id": node.id,
            "memory_type": node.record_type,
            "status": str(node.status),
            "content": clip(node.content, CONTENT_CHARS),
            "user_id": node.user_id,
            "agent_id": node.agent_id,
            "thread_id": node.thread_id,
            "degree": degree[node.id],
            "x": round(float(x), 1),
            "y": round(float(y), 1),
        }
        for node, (x, y) in zip(graph.nodes, positions.tolist(), strict=True)
    ]
    edges = [
        {
            "id": edge.id,
            "source": edge.source_record_id,
            "target": edge.target_record_id,
            "relation_type": edge.relation_type,
            "opposite_relation_type": edge.opposite_relation_type,
        }
        for edge in graph.edges
    ]
    return {
        "nodes": nodes,
        "edges": edges,
        "truncated": graph.truncated,
        "total_nodes": graph.total_nodes if graph.truncated else len(nodes),
        "total_edges": graph.total_edges if graph.truncated else len(edges),
        "max_nodes": max_nodes,
        "ideal_length": IDEAL_LENGTH,
    }
