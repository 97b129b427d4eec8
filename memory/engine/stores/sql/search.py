"""The SQL store's search."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...graph import grow_trees, walk_nodes
from ...ttl import utc_now
from ...types import MEMORY_TYPES, Record, RecordRelation, SearchStrategy
from ..arguments import SearchRequest, normalize_rows
from ..index import MemoryIndex, changed_keys
from ..ranking import CANDIDATE_DEPTH, fuse_rankings
from ..rows import SearchHit, attach_trees, scope_condition
from .changelog import _IndexSource
from .common import _ids_json, _types_condition


class SearchMixin:
    """SQLMemoryStore's search: vector and keyword top-k in SQL or the in-memory index, and
    the linked results of a graph search."""

    # --- search -----------------------------------------------------------------------------

    def _search_filter(self, alias: str, request: SearchRequest, include_invalid: bool, params: dict[str, Any]) -> str:
        """The WHERE condition every ranking and every graph hop applies (before any top-k): the
        search's types, expiry, creation cutoff, scope, status (unless `include_invalid`) and
        metadata filter."""
        params.setdefault("now", self.dialect.db_time(utc_now()))
        where = [
            _types_condition(alias, request.types, params),
            f"({alias}.expires_at IS NULL OR {alias}.expires_at > :now)",
        ]
        if request.created_at_or_before is not None:
            where.append(f"{alias}.created_at <= :created_cutoff")
            params["created_cutoff"] = self.dialect.db_time(request.created_at_or_before)
        tree = request.tree
        for column, value in request.scope.exact.items():
            where.append(scope_condition(f"{alias}.{column}", column, value, params))
        if not include_invalid:
            where.append(f"{alias}.status = 'valid' AND {alias}.lifecycle_links = 0")
        if tree is not None:
            compiler = self.dialect.filter_compiler(f"{alias}_mf")
            where.append(compiler.compile(tree, f"{alias}.metadata"))
            params.update(compiler.params)
        return " AND ".join(where)

    def _search(
        self, request: SearchRequest, k: int, num_hops: int, max_linked_results: int, include_invalid_results: bool
    ) -> list[tuple[Record, float]]:
        if request.tree is not None:  # refuse keys a JSON path cannot name before anything is sent or embedded
            self.dialect.filter_compiler().compile(request.tree, "r.metadata")
        query, vector, strategy = request.query, request.vector, request.strategy
        # Inside a transaction that has written, the index must not learn uncommitted changes.
        memory_index = None if self._written() else self.index
        keywords = (
            self.dialect.keyword_query(query) if query is not None and strategy is not SearchStrategy.VECTOR else None
        )
        if (
            memory_index is None
            and strategy is SearchStrategy.HYBRID
            and (keywords is None or not self._text_index_ready())
        ):
            strategy, keywords = SearchStrategy.VECTOR, None
        if strategy is not SearchStrategy.KEYWORD and vector is None:
            vector = self._embed([query])[0]
        unit = None if vector is None else normalize_rows(vector[None, :])[0]
        depth = max(k, CANDIDATE_DEPTH)
        linked = bool(num_hops and max_linked_results)
        if memory_index is None and keywords is not None and strategy is not SearchStrategy.VECTOR:
            self._refresh_text_index()  # before the search's snapshot, so that it sees the result
        with self._read() as cursor:
            if memory_index is not None:
                with memory_index.reading(_IndexSource(self, cursor), links=linked) as index:
                    return self._search_index(
                        cursor,
                        index,
                        request,
                        strategy,
                        unit,
                        k,
                        depth,
                        num_hops,
                        max_linked_results,
                        include_invalid_results,
                    )
            by_vector: list[tuple[int, float]] = []
            by_keyword: list[tuple[int, float]] = []
            if strategy is not SearchStrategy.KEYWORD:
                by_vector = self._vector_top_k(cursor, unit, depth, request, include_invalid_results)
            if strategy is not SearchStrategy.VECTOR and (keywords is not None and self._text_index_ready()):
                by_keyword = self._keyword_top_k(cursor, keywords, depth, request, include_invalid_results)
            hits = self._hits(cursor, fuse_rankings(strategy, by_vector, by_keyword)[:k])
            if linked:
                self._attach_linked(cursor, hits, unit, request, num_hops, max_linked_results)
        return hits

    def _hits(self, cursor: Any, ranked: list[tuple[int, float, Any]]) -> list[SearchHit]:
        """The ranked records read in one query; one deleted since it was ranked is left out."""
        records = self._records_by_pk(cursor, [pk for pk, _, _ in ranked])
        return [SearchHit(records[pk], distance, parts) for pk, distance, parts in ranked if pk in records]

    def _search_index(
        self,
        cursor: Any,
        index: MemoryIndex,
        request: SearchRequest,
        strategy: SearchStrategy,
        unit: np.ndarray | None,
        k: int,
        depth: int,
        num_hops: int,
        max_linked_results: int,
        include_invalid: bool,
    ) -> list[SearchHit]:
        """The search answered by the in-memory index; records are read from SQL (same snapshot)."""
        cache, scope, types, tree = index.records, request.scope, request.types, request.tree
        allowed = None
        if tree is not None:  # metadata filters stay SQL: the keys of the rows that pass, in order
            compiler = self.dialect.filter_compiler()
            condition = compiler.compile(tree, "r.metadata")
            rows = self._fetch(
                f"SELECT r.pk FROM {self._records} r WHERE {condition} ORDER BY r.pk", compiler.params, cursor
            )
            allowed = np.fromiter((int(row["pk"]) for row in rows), dtype=np.int64, count=len(rows))
        now = time.time()
        created = request.created_at_or_before
        mask = cache.filter_mask(types, scope.exact, include_invalid, now, allowed, created)
        by_vector = cache.vector_top_k(unit, mask, depth) if strategy is not SearchStrategy.KEYWORD else []
        by_keyword = cache.keyword_top_k(request.query, mask, depth) if strategy is not SearchStrategy.VECTOR else []
        hits = self._hits(cursor, fuse_rankings(strategy, by_vector, by_keyword)[:k])
        if num_hops and max_linked_results:
            # Linked memories pass every filter but status: history stays visible as context.
            linked_mask = (
                mask if include_invalid else cache.filter_mask(types, scope.exact, True, now, allowed, created)
            )
            self._attach_linked_from_index(cursor, index, hits, linked_mask, unit, num_hops, max_linked_results)
        return hits

    def _attach_linked_from_index(
        self,
        cursor: Any,
        index: MemoryIndex,
        hits: list[SearchHit],
        linked_mask: Any,
        unit: np.ndarray | None,
        num_hops: int,
        max_linked_results: int,
    ) -> None:
        """Grow each direct memory result's linked-result tree (graph.py) from the link index.

        The trees are grown from the link index and the record index's rows; records are read
        once at the end, for the memories the trees keep.
        """
        cache, link_index = index.records, index.links
        roots = [hit[0].id for hit in hits if hit[0].record_type in MEMORY_TYPES]
        rows: dict[str, int | None] = {}
        admitted: set[str] = set()

        def neighbours(memory_ids: Sequence[str]) -> dict[str, list[tuple[int, str]]]:
            links = link_index.links_of(memory_ids)
            fresh = list({other for found in links.values() for _, other in found} - rows.keys())
            fresh_rows = cache.memory_rows(fresh)
            rows.update(zip(fresh, fresh_rows, strict=True))
            # Which of the new ends pass the filters, decided for the whole hop at once.
            found = [(memory_id, row) for memory_id, row in zip(fresh, fresh_rows, strict=True) if row is not None]
            if found and linked_mask is not None:
                passing = linked_mask[np.fromiter((row for _, row in found), dtype=np.int64, count=len(found))]
                found = [pair for pair, passes in zip(found, passing.tolist(), strict=True) if passes]
            admitted.update(memory_id for memory_id, _ in found)
            return links

        trees = grow_trees(roots, num_hops, max_linked_results, neighbours, admitted.__contains__)
        nodes = [node for tree in trees.values() for node in walk_nodes(tree)]
        if not nodes:
            return
        kept = sorted({node.record_id for node in nodes})
        node_rows = np.array([rows[memory_id] for memory_id in kept], dtype=np.int64)
        records = {record.id: record for record in self._records_by_pk(cursor, cache.pks[node_rows].tolist()).values()}
        distances = dict(zip(kept, cache.distances(node_rows, unit), strict=True))
        relations = {node.relation: link_index.relation(node.relation) for node in nodes}
        found = {memory_id: (records[memory_id], distances[memory_id]) for memory_id in kept if memory_id in records}
        attach_trees(hits, trees, found, relations)

    def _vector_top_k(
        self, cursor: Any, unit: np.ndarray, depth: int, request: SearchRequest, include_invalid: bool
    ) -> list[tuple[int, float]]:
        params: dict[str, Any] = {"query_vector": self.dialect.vector(unit), "depth": depth}
        condition = self._search_filter("r", request, include_invalid, params)
        rows = self._fetch(
            f"SELECT {self.dialect.vector_hint('r', self.approximate_accuracy)}"
            f"r.pk, {self.dialect.vector_distance('r.embedding', 'query_vector')} AS distance "
            f"FROM {self._records} r WHERE r.embedding IS NOT NULL AND {condition} "
            + self.dialect.top_k("depth", self.approximate_accuracy),
            params,
            cursor,
        )
        return [(int(row["pk"]), float(row["distance"])) for row in rows]

    def _refresh_text_index(self) -> None:
        """Bring a text index kept from the change log (SQLite's FTS5) up to the log.

        Its progress is a meta row; the records changed since are re-indexed in one write (a log
        trimmed past the progress re-indexes everything). A look first keeps searches that find
        it current from taking the write lock.
        """
        if not self.dialect.text_index_refresh(self._text_index_name, self._records, None):
            return  # the database keeps its text index itself (Oracle Text)
        with self._read() as cursor:
            if self._text_index_seq(cursor) >= _IndexSource(self, cursor).log_state().last_seq:
                return
        with self._write() as writer:
            synced, source = self._text_index_seq(writer), _IndexSource(self, writer)
            state = source.log_state()
            if synced < state.trimmed_to:
                for statement in self.dialect.text_index_refresh(self._text_index_name, self._records, None):
                    writer.execute(statement)
            elif synced < state.last_seq:
                keys = json.dumps(sorted(changed_keys(source.changes_since(synced), "record")))
                for statement in self.dialect.text_index_refresh(self._text_index_name, self._records, "keys"):
                    writer.execute(statement, {"keys": keys})
            self._set_meta(writer, "text_index_seq", str(state.last_seq))

    def _text_index_seq(self, cursor: Any) -> int:
        return int(self._meta_value(cursor, "text_index_seq") or -1)

    def _keyword_top_k(
        self, cursor: Any, keywords: str, depth: int, request: SearchRequest, include_invalid: bool
    ) -> list[tuple[int, float]]:
        params: dict[str, Any] = {"keywords": keywords, "depth": depth}
        condition = self._search_filter("r", request, include_invalid, params)
        join, match, score = self.dialect.keyword_join(self._text_index_name, "keywords")
        rows = self._fetch(
            f"SELECT r.pk, {score} AS score FROM {self._records} r{join} "
            f"WHERE {match} AND {condition} "
            "ORDER BY score DESC, r.pk" + self.dialect.first_rows(":depth"),
            params,
            cursor,
        )
        return [(int(row["pk"]), float(row["score"])) for row in rows]

    def _records_by_pk(self, cursor: Any, pks: list[int]) -> dict[int, Record]:
        if not pks:
            return {}
        rows = self._fetch(
            f"SELECT {self._record_columns} FROM {self._records} r WHERE {self._in('r.pk', 'pks', numeric=True)}",
            {"pks": json.dumps(pks)},
            cursor,
        )
        return {int(row["pk"]): self._record(row) for row in rows}

    def _attach_linked(
        self,
        cursor: Any,
        hits: list[SearchHit],
        unit: np.ndarray | None,
        request: SearchRequest,
        num_hops: int,
        max_linked_results: int,
    ) -> None:
        """Grow each direct memory result's linked-result tree (graph.py), one query per hop.

        A hop's query returns the links of the whole frontier in link order, each with whether
        its far end passes the search's filters (every filter but status: history stays
        visible as context); a last query reads the memories the trees keep.
        """
        roots = [hit[0].id for hit in hits if hit[0].record_type in MEMORY_TYPES]
        relations: dict[int, RecordRelation] = {}
        admitted: set[str] = set()

        def neighbours(memory_ids: Sequence[str]) -> dict[str, list[tuple[int, str]]]:
            params: dict[str, Any] = {"frontier": _ids_json(memory_ids)}
            condition = self._search_filter("m", request, True, params)
            rows = self._fetch(
                f"SELECT f.v AS node, {self._relation_columns}, "
                f"CASE WHEN m.pk IS NULL THEN 0 ELSE 1 END AS admitted FROM {self._relations} rel "
                f"JOIN {self.dialect.id_rows('frontier')} f "
                "ON f.v IN (rel.source_id, rel.target_id) "
                f"LEFT JOIN {self._records} m ON m.kind = 'memory' "
                "AND m.id = CASE WHEN rel.source_id = f.v THEN rel.target_id ELSE rel.source_id END "
                f"AND {condition} ORDER BY rel.created_at, rel.id",
                params,
                cursor,
            )
            links: dict[str, list[tuple[int, str]]] = {}
            for row in rows:
                position = int(row["pos"])
                relations[position] = self._relation(row)
                other = row["target_id"] if row["source_id"] == row["node"] else row["source_id"]
                links.setdefault(row["node"], []).append((position, other))
                if row["admitted"]:
                    admitted.add(other)
            return links

        trees = grow_trees(roots, num_hops, max_linked_results, neighbours, admitted.__contains__)
        nodes = [node for tree_nodes in trees.values() for node in walk_nodes(tree_nodes)]
        if not nodes:
            return
        kept = sorted({node.record_id for node in nodes})
        params: dict[str, Any] = {"ids": _ids_json(kept)}
        distance = "NULL"  # a keyword-only search has no query vector
        if unit is not None:
            distance = self.dialect.vector_distance("r.embedding", "query_vector")
            params["query_vector"] = self.dialect.vector(unit)
        rows = self._fetch(
            f"SELECT {self._record_columns}, {distance} AS distance "
            f"FROM {self._records} r WHERE r.kind = 'memory' AND {self._in('r.id', 'ids')}",
            params,
            cursor,
        )
        # NaN: no distance where the memory or the query has no vector (as the index answers).
        found = {
            row["id"]: (self._record(row), math.nan if row["distance"] is None else float(row["distance"]))
            for row in rows
        }
        attach_trees(hits, trees, found, relations)
