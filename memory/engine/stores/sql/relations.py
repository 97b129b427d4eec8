"""The SQL store's relations, memory graphs, near-duplicates, lifecycles and memory vectors."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ...duplicates import (
    DISTANCE_TOLERANCE,
    MAX_PAIRS,
    check_pair_count,
    count_groups,
    group_rows,
    similar_pairs,
    unit_rows,
)
from ...filters import parse_filter
from ...graph import GraphLink
from ...limits import check_id
from ...ttl import utc_now
from ...types import (
    MEMORY_TYPES,
    NOT_SET,
    DuplicateGroup,
    Duplicates,
    Lifecycle,
    LinkedOwner,
    MemoryGraph,
    Page,
    Record,
    RecordRelation,
    RecordStatus,
)
from ..arguments import (
    DEFAULT_DUPLICATE_DISTANCE,
    DEFAULT_DUPLICATE_GROUPS,
    DEFAULT_GRAPH_NODES,
    DEFAULT_LINKED_OWNERS,
    DEFAULT_LIST_LIMIT,
    DuplicatesRequest,
    GraphRequest,
    check_link_end,
    check_link_end_found,
    check_owner_kind,
    check_positive_int,
    check_relation_selector,
    check_version,
    decode_cursor,
    duplicates_request,
    encode_cursor,
    expected_version_of,
    graph_request,
    memory_id_list,
    owner_id_list,
    record_id_list,
    relation_type_list,
    storable_id,
)
from ..index import MemoryIndex
from ..plans import relation_changes, relation_labels_of, relation_values
from ..rows import build_graph, relation_scope_condition, scope_condition
from .changelog import _IndexSource
from .common import _LIFECYCLE_SQL, INVALID_SQL, _ids_json, _types_condition


class RelationMixin:
    """SQLMemoryStore's relations and what is read through them: links, memory graphs,
    near-duplicates, lifecycles and memory vectors."""

    # --- relations --------------------------------------------------------------------------

    def _relation(self, row: Mapping[str, Any]) -> RecordRelation:
        return RecordRelation(
            id=row["id"],
            source_record_id=row["source_id"],
            source_record_type=row["source_type"],
            target_record_id=row["target_id"],
            target_record_type=row["target_type"],
            relation_type=row["relation_type"],
            opposite_relation_type=row["opposite_type"],
            timestamp=self.dialect.text_time(row["event_at"]),
            metadata=json.loads(row["metadata"]) if row["metadata"] else None,
            created_at=self.dialect.text_time(row["created_at"]),
            version=int(row["version"]),
        )

    def _recount_lifecycle(self, cursor: Any, memory_ids: Iterable[str], *, bump: bool = True) -> None:
        """D2: a memory is invalid while at least one lifecycle link points at it. A memory whose
        count changes is a changed row: its version moves (unless `bump` is off: rows just restored)."""
        ids = sorted(set(memory_ids))
        if ids:
            count = (
                f"(SELECT count(*) FROM {self._relations} rel "
                f"WHERE rel.target_id = {self._records}.id AND rel.relation_type IN {_LIFECYCLE_SQL})"
            )
            cursor.execute(
                f"UPDATE {self._records} SET lifecycle_links = {count}{', version = version + 1' if bump else ''} "
                f"WHERE kind = 'memory' AND {self._in('id', 'ids')} AND lifecycle_links <> {count}",
                {"ids": _ids_json(ids)},
            )
            self._log(
                cursor,
                "record",
                self._records,
                f"r.kind = 'memory' AND {self._in('r.id', 'ids')}",
                {"ids": _ids_json(ids)},
            )

    def _endpoint(self, cursor: Any, name: str, record_id: Any, record_type: Any, thread_id: Any) -> None:
        check_link_end(name, record_id, record_type)
        rows = self._fetch(
            f"SELECT r.record_type, r.thread_id FROM {self._records} r WHERE r.kind = 'memory' AND r.id = :id "
            "AND (r.expires_at IS NULL OR r.expires_at > :now)",
            {"id": record_id, "now": self.dialect.db_time(utc_now())},
            cursor,
        )
        check_link_end_found(name, record_id, record_type, rows[0] if rows else None, thread_id)

    def add_relations(self, relations: Sequence[Mapping[str, Any]], *, thread_id: Any = NOT_SET) -> list[str]:
        """Link memories; returns the relation ids (the rules: MemoryStore.add_relations)."""
        if isinstance(relations, Mapping) or not isinstance(relations, Sequence):
            raise ValueError("relations must be a list of mappings")
        now = self.dialect.db_time(utc_now())
        rows: list[dict[str, Any]] = []
        pairs: set[str] = set()
        with self._write() as cursor:
            for i, relation in enumerate(relations):
                forward, opposite = relation_labels_of(i, relation)
                for end in ("source", "target"):
                    self._endpoint(
                        cursor, end, relation.get(f"{end}_record_id"), relation.get(f"{end}_record_type"), thread_id
                    )
                values = relation_values(relation, forward, opposite)
                pair = values["pair"]
                taken = self._fetch(f"SELECT id FROM {self._relations} WHERE pair = :pair", {"pair": pair}, cursor)
                if taken or pair in pairs:
                    raise ValueError(
                        f"{values['source_id']!r} and {values['target_id']!r} are already linked; "
                        "one link per pair of memories"
                    )
                pairs.add(pair)
                event_at = self.dialect.db_time(values.pop("timestamp"))
                rows.append({**values, "event_at": event_at, "created_at": now})
            if not rows:
                return []
            try:
                cursor.executemany(
                    f"INSERT INTO {self._relations} ({', '.join(rows[0])}) "
                    f"VALUES ({', '.join(':' + column for column in rows[0])})",
                    rows,
                )
            except Exception as exc:
                if self.dialect.is_unique_violation(exc):
                    raise ValueError("a relation with one of these ids already exists") from None
                raise
            self._log(
                cursor,
                "link",
                self._relations,
                self._in("rel.id", "ids"),
                {"ids": _ids_json(row["id"] for row in rows)},
            )
            self._recount_lifecycle(cursor, (row["target_id"] for row in rows))
        return [row["id"] for row in rows]

    def _owned_relation(self, cursor: Any, relation_id: Any, thread_id: Any) -> dict[str, Any] | None:
        if not isinstance(relation_id, str):
            raise ValueError(f"relation_id must be a string, not {type(relation_id).__name__}")
        if not storable_id(relation_id):
            return None
        rows = self._fetch(
            f"SELECT {self._relation_columns} FROM {self._relations} rel WHERE rel.id = :id",
            {"id": relation_id},
            cursor,
        )
        if not rows or thread_id is NOT_SET:
            return rows[0] if rows else None
        owners = self._fetch(
            f"SELECT count(*) AS n FROM {self._records} r WHERE r.kind = 'memory' "
            "AND r.id IN (:source_id, :target_id) AND r.thread_id = :thread_id",
            {"source_id": rows[0]["source_id"], "target_id": rows[0]["target_id"], "thread_id": thread_id},
            cursor,
        )
        return rows[0] if owners[0]["n"] == 2 else None

    def get_relation(self, relation_id: str, *, thread_id: Any = NOT_SET) -> RecordRelation | None:
        """One relation by id, or None (also when `thread_id` is given and it is not that thread's)."""
        with self._session() as connection:
            row = self._owned_relation(self.dialect.cursor(connection), relation_id, thread_id)
        return None if row is None else self._relation(row)

    def update_relations(
        self,
        relation_id: str,
        relation_type: Any = NOT_SET,
        opposite_relation_type: Any = NOT_SET,
        timestamp: Any = NOT_SET,
        metadata: Any = NOT_SET,
        *,
        thread_id: Any = NOT_SET,
        expected_version: Any = NOT_SET,
    ) -> int:
        """Change a relation's labels, timestamp or metadata; returns 1, or 0 when there is none."""
        relation_changes(None, None, relation_type, opposite_relation_type, timestamp, metadata)  # checks first
        expected = expected_version_of(expected_version)
        with self._write() as cursor:
            row = self._owned_relation(cursor, relation_id, thread_id)
            if row is None:
                return 0
            check_version(f"relation {row['id']!r}", expected, row["version"])
            changes = relation_changes(
                row["relation_type"], row["opposite_type"], relation_type, opposite_relation_type, timestamp, metadata
            )
            if "timestamp" in changes:
                changes["event_at"] = self.dialect.db_time(changes.pop("timestamp"))
            assignments = ", ".join(f"{column} = :{column}" for column in changes)
            cursor.execute(
                f"UPDATE {self._relations} SET {assignments}, version = version + 1 WHERE id = :id",
                {**changes, "id": row["id"]},
            )
            self._log_keys(cursor, "link", [row["pos"]])
            self._recount_lifecycle(cursor, [row["target_id"]])
        return 1

    def delete_relations(
        self,
        relation_id: Any = NOT_SET,
        source_record_id: Any = NOT_SET,
        source_record_type: Any = NOT_SET,
        target_record_id: Any = NOT_SET,
        target_record_type: Any = NOT_SET,
        relation_type: Any = NOT_SET,
        *,
        thread_id: Any = NOT_SET,
        expected_version: Any = NOT_SET,
    ) -> int:
        """Delete one relation, by id alone or by its complete tuple in the stored direction. With
        `expected_version` its version is compared in the delete's transaction (StaleVersionError)."""
        endpoint = (source_record_id, source_record_type, target_record_id, target_record_type, relation_type)
        check_relation_selector(relation_id, endpoint)
        expected = expected_version_of(expected_version)
        with self._write() as cursor:
            if relation_id is NOT_SET:
                found = self._fetch(
                    f"SELECT id FROM {self._relations} WHERE source_id = :source_id AND source_type = :source_type "
                    "AND target_id = :target_id AND target_type = :target_type AND relation_type = :relation_type",
                    dict(
                        zip(
                            ("source_id", "source_type", "target_id", "target_type", "relation_type"),
                            endpoint,
                            strict=True,
                        )
                    ),
                    cursor,
                )
                if not found:
                    return 0
                relation_id = found[0]["id"]
            row = self._owned_relation(cursor, relation_id, thread_id)
            if row is None:
                return 0
            check_version(f"relation {row['id']!r}", expected, row["version"])
            cursor.execute(f"DELETE FROM {self._relations} WHERE id = :id", {"id": row["id"]})
            self._log_keys(cursor, "link", [row["pos"]])
            self._recount_lifecycle(cursor, [row["target_id"]])
        return 1

    def list_relations(
        self,
        record_id: Any = NOT_SET,
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        limit: int | None = DEFAULT_LIST_LIMIT,
        cursor: str | None = None,
        relation_types: Any = NOT_SET,
    ) -> Page:
        """Relations in creation order: of one memory (either end), and/or of a scope, and/or of
        some relation types."""
        check_positive_int("limit", limit, allow_none=True)
        where, params = self._relation_conditions(record_id, thread_id, user_id, agent_id, relation_types)
        if cursor is not None:
            where.append("rel.pos > :after")
            params["after"] = decode_cursor(cursor, (int,))[0]
        sql = (
            f"SELECT {self._relation_columns} FROM {self._relations} rel "
            f"JOIN {self._records} s ON s.kind = 'memory' AND s.id = rel.source_id "
            f"JOIN {self._records} t ON t.kind = 'memory' AND t.id = rel.target_id "
            f"{'WHERE ' + ' AND '.join(where) if where else ''} ORDER BY rel.pos"
        )
        rows = self._fetch(sql + self._fetch_first(limit, params), params)
        more = limit is not None and len(rows) > limit
        rows = rows[:limit]
        return Page([self._relation(row) for row in rows], encode_cursor(int(rows[-1]["pos"])) if more else None)

    def count_relations(
        self,
        record_id: Any = NOT_SET,
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        relation_types: Any = NOT_SET,
        *,
        relation_ids: Any = NOT_SET,
        metadata_filter: Any = NOT_SET,
    ) -> int:
        """How many relations list_relations() would list with these filters, of these ids and
        metadata, in one count query (MemoryStore.count_relations)."""
        where, params = self._relation_conditions(record_id, thread_id, user_id, agent_id, relation_types)
        if relation_ids is not NOT_SET:
            if isinstance(relation_ids, (str, bytes)) or not isinstance(relation_ids, Sequence):
                raise ValueError(f"relation_ids must be a list of relation ids, not {type(relation_ids).__name__}")
            ids = [value for value in dict.fromkeys(record_id_list(list(relation_ids))) if storable_id(value)]
            if not ids:
                return 0
            where.append(self._in("rel.id", "relation_ids"))
            params["relation_ids"] = _ids_json(ids)
        if metadata_filter is None:
            where.append(f"(rel.metadata IS NULL OR {self.dialect.is_empty_object('rel.metadata')})")
        elif metadata_filter is not NOT_SET:
            compiler = self.dialect.filter_compiler()
            where.append(compiler.compile(parse_filter(metadata_filter), "rel.metadata"))
            params.update(compiler.params)
        [row] = self._fetch(
            f"SELECT count(*) AS n FROM {self._relations} rel "
            f"JOIN {self._records} s ON s.kind = 'memory' AND s.id = rel.source_id "
            f"JOIN {self._records} t ON t.kind = 'memory' AND t.id = rel.target_id"
            + (" WHERE " + " AND ".join(where) if where else ""),
            params,
        )
        return int(row["n"])

    def linked_owners(self, owner: str, *, limit: int = DEFAULT_LINKED_OWNERS) -> list[LinkedOwner]:
        """The users or agents with the most links (MemoryStore.linked_owners): one grouped query
        over the links and their two memories, memoised as stats() is."""
        column = check_owner_kind(owner)
        check_positive_int("limit", limit)
        return self._memoised(
            ("linked_owners", column, limit), lambda cursor, now: self._linked_owners(cursor, column, limit, now)
        )

    def _linked_owners(self, cursor: Any, column: str, limit: int, now: str) -> tuple[list[LinkedOwner], str | None]:
        # The links with both ends live (as memory_graph has them) and an owner at either end,
        # joined to their memories once; then each link counted for the owner of its source and
        # for the owner of its target unless the same (one owner's link between two of its own
        # memories counts once), and each owner's memories at their ends, each once.
        params: dict[str, Any] = {"now": self.dialect.db_time(now), "limit": limit}
        rows = self._fetch(
            f"WITH ends AS (SELECT s.{column} AS source_owner, t.{column} AS target_owner, s.pk AS source_pk, "
            f"t.pk AS target_pk FROM {self._relations} rel "
            f"JOIN {self._records} s ON s.kind = 'memory' AND s.id = rel.source_id "
            f"JOIN {self._records} t ON t.kind = 'memory' AND t.id = rel.target_id "
            "WHERE (s.expires_at IS NULL OR s.expires_at > :now) AND (t.expires_at IS NULL OR t.expires_at > :now) "
            f"AND (s.{column} IS NOT NULL OR t.{column} IS NOT NULL)) "
            "SELECT o.owner_id, sum(o.counted) AS links, count(DISTINCT o.memory_pk) AS memories FROM ("
            "SELECT source_owner AS owner_id, 1 AS counted, source_pk AS memory_pk FROM ends "
            "WHERE source_owner IS NOT NULL UNION ALL SELECT target_owner, CASE WHEN source_owner = target_owner "
            "THEN 0 ELSE 1 END, target_pk FROM ends WHERE target_owner IS NOT NULL"
            ") o GROUP BY o.owner_id ORDER BY links DESC, memories DESC, o.owner_id"
            + self.dialect.first_rows(":limit"),
            params,
            cursor,
        )
        owners = [LinkedOwner(row["owner_id"], int(row["links"]), int(row["memories"])) for row in rows]
        return owners, self._next_expiry(cursor, now)

    def _relation_conditions(
        self, record_id: Any, thread_id: Any, user_id: Any, agent_id: Any, relation_types: Any
    ) -> tuple[list[str], dict[str, Any]]:
        """The conditions (on aliases rel, s and t: the relation and its two memories) and binds
        of list_relations()'s and count_relations()'s filters, checked."""
        where: list[str] = []
        params: dict[str, Any] = {}
        if record_id is not NOT_SET:
            where.append("(rel.source_id = :record_id OR rel.target_id = :record_id)")
            params["record_id"] = check_id("record_id", record_id)
        labels = relation_type_list(relation_types)
        if labels is not None:
            where.append(self._in("rel.relation_type", "relation_types"))
            params["relation_types"] = _ids_json(labels)
        scope = {"thread_id": thread_id, "user_id": user_id, "agent_id": agent_id}
        in_scope = relation_scope_condition(scope, params)
        if in_scope is not None:
            where.append(in_scope)
        return where, params

    def memory_graph(
        self,
        *,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        thread_id: Any = NOT_SET,
        memory_id: Any = NOT_SET,
        hops: int = 1,
        relation_types: Any = NOT_SET,
        memory_types: Any = NOT_SET,
        statuses: Any = NOT_SET,
        max_nodes: int = DEFAULT_GRAPH_NODES,
    ) -> MemoryGraph:
        """Memories and their links around a scope or a memory (MemoryStore.memory_graph); an
        empty graph when the centre memory is missing or expired."""
        request = graph_request(
            user_id=user_id,
            agent_id=agent_id,
            thread_id=thread_id,
            memory_id=memory_id,
            hops=hops,
            relation_types=relation_types,
            memory_types=memory_types,
            statuses=statuses,
            max_nodes=max_nodes,
        )
        # Inside a transaction that has written, the index must not learn uncommitted changes.
        memory_index = None if self._written() else self.index
        with self._read() as cursor:
            if memory_index is not None:
                with memory_index.reading(_IndexSource(self, cursor), links=True) as index:
                    return self._graph_from_index(cursor, index, request)
            return self._graph_from_sql(cursor, request)

    def _node_filter(self, alias: str, request: GraphRequest | DuplicatesRequest, params: dict[str, Any]) -> str:
        """A graph's node filters on a record row (also find_duplicates'): a live memory of the
        wanted types and statuses."""
        params.setdefault("now", self.dialect.db_time(utc_now()))
        where = [
            f"{alias}.kind = 'memory'",
            _types_condition(alias, request.memory_types, params),
            f"({alias}.expires_at IS NULL OR {alias}.expires_at > :now)",
        ]
        if request.statuses == {"valid"}:
            where.append(f"{alias}.status = 'valid' AND {alias}.lifecycle_links = 0")
        elif request.statuses == {"invalid"}:
            where.append(INVALID_SQL.replace("r.", f"{alias}."))
        return " AND ".join(where)

    def _graph_from_sql(self, cursor: Any, request: GraphRequest) -> MemoryGraph:
        """The graph in SQL: the seeds in one query, then one query per hop for the links
        touching the frontier, each with whether its ends pass the node filters."""
        params: dict[str, Any] = {}
        if request.centre is not None:
            params["centre"] = request.centre
            condition = "r.kind = 'memory' AND r.id = :centre AND (r.expires_at IS NULL OR r.expires_at > :now)"
            params["now"] = self.dialect.db_time(utc_now())
        else:
            column, value = request.scope
            condition = (
                f"{scope_condition(f'r.{column}', column, value, params)} AND {self._node_filter('r', request, params)}"
            )
        seeds = [
            row["id"]
            for row in self._fetch(
                f"SELECT r.id FROM {self._records} r WHERE {condition} ORDER BY r.pk", params, cursor
            )
        ]
        if request.centre is not None and not seeds:
            return MemoryGraph()
        link_rows: dict[int, Mapping[str, Any]] = {}

        def links_touching(frontier: Sequence[str]) -> Iterator[GraphLink]:
            params: dict[str, Any] = {"frontier": _ids_json(frontier)}
            where = f"({self._in('rel.source_id', 'frontier')} OR {self._in('rel.target_id', 'frontier')})"
            if request.relation_types is not None:
                where += f" AND {self._in('rel.relation_type', 'relation_types')}"
                params["relation_types"] = _ids_json(request.relation_types)
            rows = self._fetch(
                f"SELECT {self._relation_columns}, CASE WHEN s.pk IS NULL THEN 0 ELSE 1 END AS source_ok, "
                f"CASE WHEN t.pk IS NULL THEN 0 ELSE 1 END AS target_ok FROM {self._relations} rel "
                f"LEFT JOIN {self._records} s ON s.id = rel.source_id AND {self._node_filter('s', request, params)} "
                f"LEFT JOIN {self._records} t ON t.id = rel.target_id AND {self._node_filter('t', request, params)} "
                f"WHERE {where}",
                params,
                cursor,
            )
            for row in rows:
                position = int(row["pos"])
                link_rows[position] = row
                yield position, row["source_id"], row["target_id"], bool(row["source_ok"]), bool(row["target_ok"])

        def read(node_ids: list[str], keys: list[Any]) -> tuple[dict[str, Record], dict[Any, RecordRelation]]:
            return self._memory_records(cursor, node_ids), {key: self._relation(link_rows[key]) for key in keys}

        return build_graph(request, seeds, links_touching, read)

    def _graph_from_index(self, cursor: Any, index: MemoryIndex, request: GraphRequest) -> MemoryGraph:
        """The graph from the in-memory indexes: seeds and node filters as masks over the record
        index, links from the link index; only the kept nodes' records are read, in one query."""
        cache, link_index = index.records, index.links
        now = time.time()
        passing = cache.status_mask(request.memory_types, {}, request.statuses, now)
        if request.centre is not None:
            [row] = cache.memory_rows([request.centre])
            if row is None or not cache.status_mask(MEMORY_TYPES, {}, frozenset(("valid", "invalid")), now)[row]:
                return MemoryGraph()
            seeds = [request.centre]
        else:
            column, value = request.scope
            rows = np.flatnonzero(cache.status_mask(request.memory_types, {column: value}, request.statuses, now))
            seeds = cache.memory_ids.ids_of(cache.pks[rows].tolist())
        ok: dict[str, bool] = {}

        def links_touching(frontier: Sequence[str]) -> Iterator[GraphLink]:
            positions = {position for found in link_index.links_of(frontier).values() for position, _ in found}
            ends = link_index.ends(sorted(positions), request.relation_types)
            fresh = list({memory_id for _, source, target in ends for memory_id in (source, target)} - ok.keys())
            for memory_id, row in zip(fresh, cache.memory_rows(fresh), strict=True):
                ok[memory_id] = row is not None and bool(passing[row])
            for position, source, target in ends:
                yield position, source, target, ok[source], ok[target]

        def read(node_ids: list[str], keys: list[Any]) -> tuple[dict[str, Record], dict[Any, RecordRelation]]:
            return self._memory_records(cursor, node_ids), {key: link_index.relation(key) for key in keys}

        return build_graph(request, seeds, links_touching, read)

    def _memory_records(self, cursor: Any, memory_ids: Sequence[str]) -> dict[str, Record]:
        """Memories by id (any state), in one query."""
        if not memory_ids:
            return {}
        rows = self._fetch(
            f"SELECT {self._record_columns} FROM {self._records} r "
            f"WHERE r.kind = 'memory' AND {self._in('r.id', 'ids')}",
            {"ids": _ids_json(memory_ids)},
            cursor,
        )
        return {row["id"]: self._record(row) for row in rows}

    def find_duplicates(
        self,
        user_id: str,
        *,
        max_distance: float = DEFAULT_DUPLICATE_DISTANCE,
        memory_types: Any = None,
        statuses: Any = "valid",
        limit: int = DEFAULT_DUPLICATE_GROUPS,
    ) -> Duplicates:
        """One user's near-duplicate groups (MemoryStore.find_duplicates), in one read: from the
        in-memory index's matrix, from a self-join in the database when the dialect has a vector
        distance of two columns (Oracle), else from the candidates' vectors read in one query."""
        request = duplicates_request(
            user_id=user_id, max_distance=max_distance, memory_types=memory_types, statuses=statuses, limit=limit
        )
        # Inside a transaction that has written, the index must not learn uncommitted changes.
        memory_index = None if self._written() else self.index
        with self._read() as cursor:
            if memory_index is not None:
                with memory_index.reading(_IndexSource(self, cursor)) as index:
                    pks, units = self._indexed_candidates(index, request)  # copies: the lock can go
                compared = len(pks)
                first, second = similar_pairs(units, request.max_distance)
            elif self.dialect.vector_pair_distance("a.embedding", "b.embedding") is not None:
                compared, pks, units, first, second = self._duplicate_pairs_in_sql(cursor, request)
            else:
                params: dict[str, Any] = {}
                pks, units = self._candidate_vectors(cursor, self._candidates("r", request, params), params)
                compared = len(pks)
                first, second = similar_pairs(units, request.max_distance)
            found = group_rows(units, first, second)
            shown = found[: request.limit]
            records = self._records_by_pk(cursor, [int(pk) for group in shown for pk in pks[group.rows]])
        groups = []
        for group in shown:
            members = [(records.get(int(pk)), float(d)) for pk, d in zip(pks[group.rows], group.distances, strict=True)]
            members = [(record, distance) for record, distance in members if record is not None]
            if len(members) > 1:
                groups.append(DuplicateGroup([record for record, _ in members], [d for _, d in members]))
        return Duplicates(groups, total_groups=len(found), compared=compared, max_distance=request.max_distance)

    def duplicate_group_counts(
        self,
        user_ids: Sequence[str],
        *,
        max_distance: float = DEFAULT_DUPLICATE_DISTANCE,
        memory_types: Any = None,
        statuses: Any = "valid",
    ) -> dict[str, int]:
        """How many near-duplicate groups find_duplicates() finds for each of these users
        (MemoryStore.duplicate_group_counts), in one read: the pairs of each user as
        find_duplicates finds them, counted as groups, without reading a record. Memoised as
        stats() is: a page that asks again before anything changed costs one look at the change log."""
        requests = [
            duplicates_request(
                user_id=user_id, max_distance=max_distance, memory_types=memory_types, statuses=statuses, limit=1
            )
            for user_id in owner_id_list("user_ids", user_ids)
        ]
        if not requests:
            return {}
        first = requests[0]
        key = (
            "duplicate_group_counts",
            tuple(request.user_id for request in requests),
            first.max_distance,
            first.memory_types,
            tuple(sorted(first.statuses)),
        )
        return self._memoised(
            key, lambda cursor, now: (self._group_counts(cursor, requests), self._next_expiry(cursor, now))
        )

    def _group_counts(self, cursor: Any, requests: list[DuplicatesRequest]) -> dict[str, int]:
        counts: dict[str, int] = {}
        memory_index = None if self._written() else self.index
        if memory_index is not None:
            with memory_index.reading(_IndexSource(self, cursor)) as index:
                units = [self._indexed_candidates(index, request)[1] for request in requests]  # copies
        for i, request in enumerate(requests):
            try:
                if memory_index is not None:
                    first, second = similar_pairs(units[i], request.max_distance)
                elif self.dialect.vector_pair_distance("a.embedding", "b.embedding") is not None:
                    first, second = self._duplicate_pairs_in_sql(cursor, request, vectors=False)[3:]
                else:
                    params: dict[str, Any] = {}
                    _, vectors = self._candidate_vectors(cursor, self._candidates("r", request, params), params)
                    first, second = similar_pairs(vectors, request.max_distance)
            except ValueError:  # more near pairs than find_duplicates takes: it would refuse them
                continue
            counts[request.user_id] = count_groups(first, second)
        return counts

    def _indexed_candidates(self, index: MemoryIndex, request: DuplicatesRequest) -> tuple[np.ndarray, np.ndarray]:
        """find_duplicates' candidates in the in-memory index: their pks and unit vectors (copies,
        so that the index can be let go)."""
        cache = index.records
        mask = cache.status_mask(request.memory_types, {"user_id": request.user_id}, request.statuses, time.time())
        rows = np.flatnonzero(mask & cache.has_vector[: cache.size])
        return cache.pks[rows], cache.vectors.rows(rows)

    def _candidates(self, alias: str, request: DuplicatesRequest, params: dict[str, Any]) -> str:
        """find_duplicates' candidates on a record row: the user's live memories of the wanted
        types and statuses that have a vector."""
        params["user_id"] = request.user_id
        return f"{alias}.user_id = :user_id AND {alias}.embedding IS NOT NULL AND " + self._node_filter(
            alias, request, params
        )

    def _candidate_vectors(self, cursor: Any, condition: str, params: dict[str, Any]) -> tuple[np.ndarray, Any]:
        """The pks (in order) and unit vectors of the records passing `condition`, in one query;
        a vector of another dimension than the store's (oam_check's wrong_dimension) is left out."""
        rows = self._fetch(
            f"SELECT r.pk, r.embedding FROM {self._records} r WHERE {condition} ORDER BY r.pk", params, cursor
        )
        size = 4 * self.vector_dim
        rows = [row for row in rows if len(memoryview(row["embedding"]).cast("B")) == size]
        pks = np.fromiter((int(row["pk"]) for row in rows), dtype=np.int64, count=len(rows))
        return pks, unit_rows([row["embedding"] for row in rows], self.vector_dim)

    def _duplicate_pairs_in_sql(
        self, cursor: Any, request: DuplicatesRequest, *, vectors: bool = True
    ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The near pairs from the database (a self-join of the user's candidates on the vector
        distance, each pair once), then the vectors of the memories in a pair, for the groups'
        centres: how many were compared, their pks, unit vectors and the pairs as rows of them.
        Without `vectors` (counting groups only): the pairs alone, as rows of their pks in order,
        with no count, pks or vectors read."""
        params: dict[str, Any] = {"max_distance": request.max_distance + DISTANCE_TOLERANCE, "max_pairs": MAX_PAIRS + 1}
        distance = self.dialect.vector_pair_distance("a.embedding", "b.embedding")
        pairs = self._fetch(
            f"SELECT a.pk AS first_pk, b.pk AS second_pk FROM {self._records} a "
            f"JOIN {self._records} b ON b.user_id = a.user_id AND b.pk > a.pk "
            f"WHERE {self._candidates('a', request, params)} AND {self._candidates('b', request, params)} "
            f"AND {distance} <= :max_distance" + self.dialect.first_rows(":max_pairs"),
            params,
            cursor,
        )
        check_pair_count(len(pairs), request.max_distance)
        if not vectors:
            ends = np.array([(int(row["first_pk"]), int(row["second_pk"])) for row in pairs], dtype=np.int64)
            paired, rows = np.unique(ends.ravel(), return_inverse=True)
            rows = rows.reshape(-1, 2)
            return 0, paired, np.empty((0, 0), dtype=np.float32), rows[:, 0], rows[:, 1]
        count_params: dict[str, Any] = {}
        [counted] = self._fetch(
            f"SELECT count(*) AS n FROM {self._records} r WHERE {self._candidates('r', request, count_params)}",
            count_params,
            cursor,
        )
        ends = np.array([(int(row["first_pk"]), int(row["second_pk"])) for row in pairs], dtype=np.int64)
        ends = ends.reshape(-1, 2)
        paired = np.unique(ends)
        pks, units = self._candidate_vectors(
            cursor, self._in("r.pk", "pks", numeric=True), {"pks": _ids_json(paired.tolist())}
        )
        keep = np.isin(ends, pks).all(axis=1)  # a vector of the wrong dimension leaves its pairs out
        ends = ends[keep]
        return int(counted["n"]), pks, units, np.searchsorted(pks, ends[:, 0]), np.searchsorted(pks, ends[:, 1])

    def lifecycle(self, memory_ids: Sequence[str]) -> dict[str, Lifecycle]:
        """Each live memory's own status and the lifecycle links pointing at it, in one query."""
        ids = memory_id_list(memory_ids)
        if not ids:
            return {}
        rows = self._fetch(
            f"SELECT r.id, r.status, rel.id AS link_id FROM {self._records} r "
            f"LEFT JOIN {self._relations} rel ON rel.target_id = r.id AND rel.relation_type IN {_LIFECYCLE_SQL} "
            f"WHERE r.kind = 'memory' AND {self._in('r.id', 'ids')} AND (r.expires_at IS NULL OR r.expires_at > :now) "
            "ORDER BY r.id, rel.created_at, rel.id",
            {"ids": _ids_json(ids), "now": self.dialect.db_time(utc_now())},
        )
        links: dict[str, list[str]] = {}
        statuses: dict[str, str] = {}
        for row in rows:
            statuses[row["id"]] = row["status"]
            found = links.setdefault(row["id"], [])
            if row["link_id"] is not None:
                found.append(row["link_id"])
        return {
            memory_id: Lifecycle(RecordStatus(statuses[memory_id]), tuple(links[memory_id]))
            for memory_id in ids
            if memory_id in links
        }

    def memory_vectors(self, memory_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Live memories' stored vectors, in one query (SQLite gives bytes, Oracle a float32 array)."""
        ids = memory_id_list(memory_ids)
        if not ids:
            return {}
        rows = self._fetch(
            f"SELECT r.id, r.embedding FROM {self._records} r "
            f"WHERE r.kind = 'memory' AND {self._in('r.id', 'ids')} AND r.embedding IS NOT NULL "
            "AND (r.expires_at IS NULL OR r.expires_at > :now)",
            {"ids": _ids_json(ids), "now": self.dialect.db_time(utc_now())},
        )
        return {row["id"]: np.frombuffer(row["embedding"], dtype=np.float32) for row in rows}
