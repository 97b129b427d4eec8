"""What every backend builds from its stored rows: records, search hits with their trees of linked
results, and memory graphs; and the scope and sequence-range conditions (with binds) of its queries.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ..graph import cap_graph, walk_graph
from ..limits import (
    check_int_range,
)
from ..scope import check_scope_value
from ..types import (
    AGENT_PROFILE_TYPE,
    IMAGE_TYPE,
    MEMORY_TYPES,
    MESSAGE_TYPE,
    NOT_SET,
    USER_PROFILE_TYPE,
    AgentProfileRecord,
    ImageMimeType,
    ImageRecord,
    MemoryGraph,
    MemoryRecord,
    MessageRecord,
    Record,
    RecordRelation,
    RecordStatus,
    UserProfileRecord,
)
from .arguments import GraphRequest


class SearchHit(tuple):
    """A (record, distance) pair, as the spec's store search returns, plus `parts`: how it ranked.

    `parts` holds `vector_rank`/`vector_distance` and `keyword_rank`/`keyword_score` (BM25) for
    the rankings it appeared in (ranks from 1), and the fused `score` under the hybrid strategy.
    """

    parts: Mapping[str, float | int] = MappingProxyType({})

    def __new__(cls, record: Record, distance: float, parts: Mapping[str, float | int] | None = None) -> SearchHit:
        hit = super().__new__(cls, (record, distance))
        if parts:  # a linked result has none: no per-hit attribute dict for the hundreds of them
            hit.parts = parts
        return hit


def build_record(row: Mapping[str, Any], *, timestamp: str | None, created_at: str, **fields: Any) -> Record:
    """The record of a stored row (columns kind, id, record_type, content, JSON metadata, status,
    scope, role, seq_no, JSON parts, message_id, mime_type, version); `fields` override the row's values.

    `timestamp` is the event time, None when the record has none (it then reads as `created_at`).
    """
    values = _Overridden(row, fields) if fields else row
    common = {
        "id": values["id"],
        "record_type": values["record_type"],
        "content": values["content"],
        "timestamp": timestamp or created_at,
        "metadata": json.loads(values["metadata"]) if values["metadata"] is not None else None,
        "status": RecordStatus(values["status"]),
        "created_at": created_at,
        "expires_at": values["expires_at"],
        "version": int(values["version"]),
    }
    kind = values["kind"]
    if kind == USER_PROFILE_TYPE:
        return UserProfileRecord(**common)
    if kind == AGENT_PROFILE_TYPE:
        return AgentProfileRecord(**common)
    scope = {"thread_id": values["thread_id"], "user_id": values["user_id"], "agent_id": values["agent_id"]}
    if kind == MESSAGE_TYPE:
        parts = json.loads(values["parts"]) if values["parts"] else None
        return MessageRecord(**common, **scope, role=values["role"], seq_no=values["seq_no"], parts=parts)
    if kind == IMAGE_TYPE:
        return ImageRecord(
            **common, **scope, message_id=values["message_id"], mime_type=ImageMimeType(values["mime_type"])
        )
    return MemoryRecord(**common, **scope)


class _Overridden:
    """A row's columns with some values replaced, without copying the row (records are built by
    the hundred in a graph search)."""

    __slots__ = ("_fields", "_row")

    def __init__(self, row: Mapping[str, Any], fields: dict[str, Any]) -> None:
        self._row, self._fields = row, fields

    def __getitem__(self, name: str) -> Any:
        return self._fields[name] if name in self._fields else self._row[name]


def scope_condition(column_sql: str, name: str, value: str | None, params: dict[str, Any]) -> str:
    """Exact scope match: `=` with a bind for an id (so indexes apply), IS NULL for "unscoped"."""
    if value is None:
        return f"{column_sql} IS NULL"
    params[f"scope_{name}"] = value
    return f"{column_sql} = :scope_{name}"


def relation_scope_condition(scope: Mapping[str, Any], params: dict[str, Any]) -> str | None:
    """list_relations' scope: a relation is in it when either end (aliases s and t) matches every
    given scope value (NOT_SET: not constrained; None: unscoped on that dimension)."""
    given = [(column, value) for column, value in scope.items() if value is not NOT_SET]
    if not given:
        return None
    sides = []
    for alias in ("s", "t"):
        conditions = []
        for column, value in given:
            check_scope_value(column, value)
            conditions.append(scope_condition(f"{alias}.{column}", column, value, params))
        sides.append("(" + " AND ".join(conditions) + ")")
    return "(" + " OR ".join(sides) + ")"


def build_graph(
    request: GraphRequest,
    seeds: Sequence[str],
    links_touching: Any,
    read: Any,
) -> MemoryGraph:
    """A MemoryGraph from a store's primitives: `seeds` (the centre, or the scope's memories
    passing the node filters), `links_touching` (graph.LinksTouching) and `read(node ids, link
    keys)`, which returns the nodes' records by id and the links' relations by key. Link keys
    are the links' positions, so the edges come in creation order (as list_relations lists them)."""
    nodes, edges = walk_graph(seeds, request.hops, links_touching, centre=request.centre)
    ranked, kept = cap_graph(nodes, edges, request.max_nodes, request.centre)
    records, relations = read(ranked, kept)
    return MemoryGraph(
        nodes=[records[node] for node in ranked if node in records],
        edges=[relations[key] for key in sorted(kept) if key in relations],
        truncated=len(ranked) < len(nodes),
        total_nodes=len(nodes),
        total_edges=len(edges),
    )


def seq_range_conditions(column: str, start: Any, end: Any, params: dict[str, Any]) -> list[str]:
    """list_thread_messages' [start, end) seq_no range as conditions with binds."""
    conditions = []
    for name, value, op in (("range_start_seq_no", start, ">="), ("range_end_seq_no", end, "<")):
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be an integer or None")
            check_int_range(name, value)
            conditions.append(f"{column} {op} :{name}")
            params[name] = value
    return conditions


def attach_trees(
    hits: Sequence[SearchHit],
    trees: Mapping[str, list],
    found: Mapping[str, tuple[Record, float]],
    relations: Mapping[Any, RecordRelation],
) -> None:
    """Hang each direct memory result's linked-result tree (graph.grow_trees) on its record.

    `found` gives each linked memory's record and distance, `relations` each node's relation.
    A memory can sit in several trees, each with its own subtree: a copy per extra node. A
    memory missing from `found` (deleted by another process since the links were read) is left
    out with its subtree, so a search never fails on what others do meanwhile.
    """
    used: set[str] = set()

    def build(branch: list) -> list[tuple[RecordRelation, SearchHit]]:
        built = []
        for node in branch:
            if node.record_id not in found:
                continue
            record, distance = found[node.record_id]
            if node.record_id in used:
                copy = object.__new__(type(record))
                copy.__dict__.update(record.__dict__)
                record = copy
            used.add(node.record_id)
            record.linked_results = build(node.children)
            built.append((relations[node.relation], SearchHit(record, distance)))
        return built

    for hit in hits:
        if hit[0].id in trees and hit[0].record_type in MEMORY_TYPES:
            hit[0].linked_results = build(trees[hit[0].id])
