"""Memory links: relation labels and the linked-result trees of graph search (spec §6; D5).

Backend-independent: a store supplies the neighbours of a whole frontier in one call, and the
trees are grown here breadth-first, so every backend builds exactly the same trees.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .limits import check_id_text
from .types import BUILTIN_RELATIONS, NOT_SET, RecordRelation


def check_label(name: str, label: Any) -> None:
    if not isinstance(label, str) or not label.strip():
        raise ValueError(f"{name} must be a non-empty string, not {label!r}")
    check_id_text(name, label)


def relation_labels(relation_type: Any, opposite_relation_type: Any = NOT_SET) -> tuple[str, str]:
    """The (forward, opposite) labels of a new or retyped relation.

    A built-in type has its fixed inverse; a custom type reads the same both ways unless an
    opposite label is given.
    """
    check_label("relation_type", relation_type)
    if opposite_relation_type is not NOT_SET:
        check_label("opposite_relation_type", opposite_relation_type)
    fixed = BUILTIN_RELATIONS.get(relation_type)
    if fixed is not None:
        if opposite_relation_type not in (NOT_SET, fixed):
            raise ValueError(f"{relation_type!r} is built in: its opposite is always {fixed!r}")
        return relation_type, fixed
    return relation_type, relation_type if opposite_relation_type is NOT_SET else opposite_relation_type


@dataclass(slots=True)
class LinkedNode:
    """One memory in a linked-result tree, reached from its parent through `relation`."""

    relation: RecordRelation
    record_id: str
    children: list[LinkedNode] = field(default_factory=list)


Neighbours = Callable[[Sequence[str]], dict[str, list[tuple[RecordRelation, str]]]]
"""Given memory ids, each one's links as (relation, other end) in (created_at, id) order."""


def grow_trees(
    roots: Sequence[str],
    num_hops: int,
    max_linked_results: int,
    neighbours: Neighbours,
    admits: Callable[[str], bool],
) -> dict[str, list[LinkedNode]]:
    """Breadth-first shortest-path trees of linked memories, one per root, grown hop by hop.

    Links are followed both ways. Within a tree a memory appears once, at its first (shortest)
    discovery; neighbours are taken in link order; a tree stops at `max_linked_results` memories.
    `admits` says whether a memory passes the search's filters (scope, type, expiry, metadata);
    one that does not is neither shown nor crossed. Each hop asks for the neighbours of every
    tree's frontier at once.
    """
    trees: dict[str, list[LinkedNode]] = {root: [] for root in roots}
    if num_hops == 0 or max_linked_results == 0:
        return trees
    seen = {root: {root} for root in roots}
    counts = dict.fromkeys(roots, 0)
    # Each frontier entry: (id, the list its children go into).
    frontiers = {root: [(root, trees[root])] for root in roots}
    for _ in range(num_hops):
        wanted = sorted({node for frontier in frontiers.values() for node, _ in frontier})
        if not wanted:
            break
        links = neighbours(wanted)
        next_frontiers: dict[str, list[tuple[str, list[LinkedNode]]]] = {}
        for root, frontier in frontiers.items():
            grown: list[tuple[str, list[LinkedNode]]] = []
            for node, children in frontier:
                for relation, other in links.get(node, ()):
                    if counts[root] >= max_linked_results:
                        break
                    if other in seen[root] or not admits(other):
                        continue
                    seen[root].add(other)
                    child = LinkedNode(relation, other)
                    children.append(child)
                    counts[root] += 1
                    grown.append((other, child.children))
            next_frontiers[root] = grown
        frontiers = next_frontiers
    return trees


def walk_nodes(nodes: list) -> Iterator:
    for node in nodes:
        yield node
        yield from walk_nodes(node.children)


# --- memory graphs (AgentMemory.memory_graph) ------------------------------------------------

GraphLink = tuple[Any, str, str, bool, bool]
"""(key, source id, target id, whether the source passes the node filters, whether the target
does): one link of a kept relation type, as a store reports it."""

LinksTouching = Callable[[Sequence[str]], Iterable[GraphLink]]
"""Given memory ids, every link of a kept type with either end among them (once or more)."""


def walk_graph(
    seeds: Sequence[str], hops: int, links_touching: LinksTouching, *, centre: str | None = None
) -> tuple[set[str], dict[Any, tuple[str, str]]]:
    """The memories within `hops` links of `seeds`, breadth-first both ways, and every link among
    them: (node ids, {link key: (source, target)}).

    A link counts when both ends pass the node filters (the centre always does), so a memory that
    fails them is neither shown nor crossed. With a `centre` (one seed) it is a node whatever its
    links; without, a seed (a memory of the scope) is a node only when a link joins it to the graph.
    One `links_touching` call per hop, and one for the last frontier's links among the nodes.
    """
    nodes = set(seeds)
    edges: dict[Any, tuple[str, str]] = {}

    def usable(link: GraphLink) -> bool:
        _, source, target, source_ok, target_ok = link
        return (source_ok or source == centre) and (target_ok or target == centre)

    frontier = list(dict.fromkeys(seeds))
    for _ in range(hops):
        if not frontier:
            break
        grown: list[str] = []
        for link in links_touching(frontier):
            if usable(link):
                key, source, target = link[:3]
                edges[key] = (source, target)
                for end in (source, target):
                    if end not in nodes:
                        nodes.add(end)
                        grown.append(end)
        frontier = grown
    # The links among the last frontier (every other node's links were read as it was expanded).
    if frontier and len(nodes) > 1:
        for link in links_touching(frontier):
            key, source, target = link[:3]
            if source in nodes and target in nodes and usable(link):
                edges[key] = (source, target)
    if centre is None:
        nodes = {end for ends in edges.values() for end in ends}
    return nodes, edges


def cap_graph(
    nodes: set[str], edges: dict[Any, tuple[str, str]], max_nodes: int, centre: str | None = None
) -> tuple[list[str], list[Any]]:
    """The nodes kept under `max_nodes`, in order (the centre first, then the most linked, then by
    id), and the keys of the links among them."""
    degree: dict[str, int] = dict.fromkeys(nodes, 0)
    for source, target in edges.values():
        degree[source] += 1
        degree[target] += 1
    ranked = sorted(nodes, key=lambda node: (node != centre, -degree[node], node))[:max_nodes]
    if len(ranked) == len(nodes):
        return ranked, list(edges)
    kept = set(ranked)
    return ranked, [key for key, (source, target) in edges.items() if source in kept and target in kept]
