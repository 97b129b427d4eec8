"""The SQL store's maintenance: consistency check, health, re-embedding, outcomes."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ...embedders import Embedder
from ...limits import check_id
from ...ttl import utc_now
from ...types import CheckFinding, CheckReport, ReembedReport, StoreHealth, VectorState
from ..arguments import DEFAULT_BATCH_SIZE, check_positive_int, normalize_rows, token_list
from .changelog import _IndexSource
from .common import _ids_json, log

REEMBED_TARGET = "reembed_target"
"""The meta row naming the embedder (JSON: embedder, vector_dim) a pending re-embedding stages for."""
OUTCOME_PREFIX = "outcome:"
"""Meta keys of the outcomes of changes recorded elsewhere (settle_outcome), after this prefix the token."""
OUTCOMES = ("committed", "aborted")
REEMBED_ROUNDS = 3
"""Staging passes reembed makes for records changed meanwhile before it gives up (writers active)."""


CHECKS = {
    "missing_vectors": ("records with text to search but no vector", True),
    "wrong_dimension": ("records whose vector has another dimension than the store's", True),
    "orphan_links": ("links with an end that no longer exists", True),
    "orphan_images": ("images whose message or thread is gone, or whose bytes are missing", False),
    "orphan_image_bytes": ("image bytes whose image record is gone", False),
    "index_out_of_step": ("records or links the in-memory index holds otherwise than the database", True),
}
"""MemoryStore.check's kinds of inconsistency, in report order: (description, repairable)."""


class MaintenanceMixin:
    """SQLMemoryStore's maintenance: the consistency check and its repairs, health,
    re-embedding, and the outcomes of changes recorded elsewhere."""

    # --- the consistency check ------------------------------------------------------------

    def check(self, *, repair: bool = False, examples: int = 5) -> CheckReport:
        """Inconsistencies found, and repaired when asked (the rules: MemoryStore.check)."""
        if not isinstance(repair, bool):
            raise ValueError(f"repair must be True or False, not {repair!r}")
        check_positive_int("examples", examples)
        found = self._inconsistencies()
        remaining = found
        if repair:
            self._repair(found)
            remaining = self._inconsistencies()
        findings = []
        for name, (description, repairable) in CHECKS.items():
            ids = [label for _, label in found[name]]
            findings.append(
                CheckFinding(
                    name=name,
                    description=description,
                    found=len(ids),
                    remaining=len(remaining[name]),
                    examples=tuple(ids[:examples]),
                    repairable=repairable,
                )
            )
        return CheckReport(findings=tuple(findings), checked_at=utc_now(), repaired=repair)

    def _inconsistencies(self) -> dict[str, list[tuple[Any, str]]]:
        """Each CHECKS kind's offending rows as (key, label): a record's pk and id, a link's
        position and id, an image's id; for the index, "record <pk>" or "link <position>"."""
        r, rel, t, b = self._records, self._relations, self._threads, self._image_bytes
        dimension = self.dialect.vector_dimension("r.embedding")
        queries = {
            "missing_vectors": (
                f"SELECT r.pk AS k, r.id AS label FROM {r} r "
                "WHERE r.embedding IS NULL AND r.search_text IS NOT NULL ORDER BY r.pk",
                {},
            ),
            "wrong_dimension": (
                f"SELECT r.pk AS k, r.id AS label FROM {r} r "
                f"WHERE r.embedding IS NOT NULL AND {dimension} <> :dim ORDER BY r.pk",
                {"dim": self.vector_dim},
            ),
            "orphan_links": (
                f"SELECT rel.pos AS k, rel.id AS label FROM {rel} rel "
                f"WHERE NOT EXISTS (SELECT 1 FROM {r} s WHERE s.kind = 'memory' AND s.id = rel.source_id) "
                f"OR NOT EXISTS (SELECT 1 FROM {r} e WHERE e.kind = 'memory' AND e.id = rel.target_id) "
                "ORDER BY rel.pos",
                {},
            ),
            "orphan_images": (
                f"SELECT r.pk AS k, r.id AS label FROM {r} r WHERE r.kind = 'image' AND ("
                f"(r.message_id IS NOT NULL AND NOT EXISTS "
                f"(SELECT 1 FROM {r} m WHERE m.kind = 'message' AND m.id = r.message_id)) "
                f"OR (r.thread_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM {t} th WHERE th.id = r.thread_id)) "
                f"OR NOT EXISTS (SELECT 1 FROM {b} ib WHERE ib.record_pk = r.pk)) ORDER BY r.pk",
                {},
            ),
            "orphan_image_bytes": (
                f"SELECT ib.record_pk AS k, ib.record_pk AS label FROM {b} ib "
                f"WHERE NOT EXISTS (SELECT 1 FROM {r} r WHERE r.pk = ib.record_pk) ORDER BY ib.record_pk",
                {},
            ),
        }
        with self._read() as cursor:
            found = {
                name: [(row["k"], str(row["label"])) for row in self._fetch(sql, params, cursor)]
                for name, (sql, params) in queries.items()
            }
            found["index_out_of_step"] = self._index_differences(cursor)
        return found

    def _index_differences(self, cursor: Any) -> list[tuple[Any, str]]:
        """Records and links the in-memory index (caught up with the change log) holds otherwise
        than the database in the same read: missing, extra, with or without a vector, another
        link version. An index that cannot load counts as one difference, and so does a damaged
        file of the generation it maps (each read against its checksum). None without an index."""
        if self.index is None:
            return []
        try:
            vectors, versions = self.index.contents(_IndexSource(self, cursor))
        except Exception as error:  # e.g. a stored vector of the wrong size: the index cannot hold it
            log.warning("the in-memory index could not be loaded for the check: %s", error)
            return [(None, f"index: {error}")]
        damage = self.index.damage()  # of the generation just loaded, in a new process too
        damaged = [] if damage is None else [(None, f"index file {damage}")]
        stored_vectors = {
            int(row["pk"]): bool(row["has_vector"])
            for row in self._fetch(
                f"SELECT r.pk, CASE WHEN r.embedding IS NULL THEN 0 ELSE 1 END AS has_vector FROM {self._records} r",
                None,
                cursor,
            )
        }
        stored_versions = {
            int(row["pos"]): int(row["version"])
            for row in self._fetch(f"SELECT rel.pos, rel.version FROM {self._relations} rel", None, cursor)
        }
        differences = damaged + [
            (pk, f"record {pk}")
            for pk in sorted(stored_vectors.keys() | vectors.keys())
            if stored_vectors.get(pk) != vectors.get(pk)
        ]
        differences += [
            (pos, f"link {pos}")
            for pos in sorted(stored_versions.keys() | versions.keys())
            if stored_versions.get(pos) != versions.get(pos)
        ]
        return differences

    def _repair(self, found: Mapping[str, list[tuple[Any, str]]]) -> None:
        """What check(repair=True) fixes: orphan links deleted, records re-embedded from their
        indexed text, the in-memory index rebuilt. No record is deleted."""
        positions = [pos for pos, _ in found["orphan_links"]]
        if positions:
            with self._write() as cursor:
                targets = self._fetch(
                    f"SELECT rel.target_id FROM {self._relations} rel WHERE {self._in('rel.pos', 'positions', True)}",
                    {"positions": json.dumps(positions)},
                    cursor,
                )
                cursor.execute(
                    f"DELETE FROM {self._relations} WHERE {self._in('pos', 'positions', True)}",
                    {"positions": json.dumps(positions)},
                )
                self._log_keys(cursor, "link", positions)
                self._recount_lifecycle(cursor, [row["target_id"] for row in targets])
        pks = sorted({pk for pk, _ in [*found["missing_vectors"], *found["wrong_dimension"]]})
        for start in range(0, len(pks), DEFAULT_BATCH_SIZE):
            self._reembed(pks[start : start + DEFAULT_BATCH_SIZE])
        if self.index is not None and (found["index_out_of_step"] or pks or positions):
            with self._read() as cursor:
                try:
                    self.index.rebuild(_IndexSource(self, cursor))
                except Exception as error:  # reported again by the check that follows
                    log.warning("could not rebuild the in-memory index: %s", error)

    def _reembed(self, pks: list[int]) -> None:
        """Embed these records' indexed text again (embedding first, holding no lock), then store
        the vectors of those not changed meanwhile (same version)."""
        with self._read() as cursor:
            rows = self._fetch(
                f"SELECT r.pk, r.version, r.search_text FROM {self._records} r WHERE {self._in('r.pk', 'pks', True)} "
                "AND r.search_text IS NOT NULL",
                {"pks": json.dumps(pks)},
                cursor,
            )
        if not rows:
            return
        vectors = normalize_rows(self._embed([row["search_text"] for row in rows]))
        with self._write() as cursor:
            self.dialect.declare(cursor, ["embedding"])
            cursor.executemany(
                f"UPDATE {self._records} SET embedding = :embedding WHERE pk = :pk AND version = :version",
                [
                    {"embedding": self.dialect.vector(vector), "pk": row["pk"], "version": row["version"]}
                    for row, vector in zip(rows, vectors, strict=True)
                ],
            )
            self._log_keys(cursor, "record", [row["pk"] for row in rows])

    # --- health -----------------------------------------------------------------------------

    def health(self) -> StoreHealth:
        """See MemoryStore.health: one read of the meta table and the change log's bounds (an
        index lookup), on one snapshot; the index is compared, not caught up."""
        with self._read() as cursor:
            schema_version = int(self._meta_value(cursor, "schema_version") or 0)
            state = _IndexSource(self, cursor).log_state()
        in_step, behind = None, 0
        if self.index is not None:
            in_step, behind = self.index.standing(state)
        return StoreHealth(
            backend=self.dialect.name,
            schema_version=schema_version,
            last_change=state.last_seq,
            index_in_step=in_step,
            index_behind=behind,
        )

    # --- re-embedding -----------------------------------------------------------------------

    def vector_state(self) -> VectorState:
        """See MemoryStore.vector_state (one read of the meta table, and of the staging table
        when a re-embedding is pending)."""
        with self._read() as cursor:
            meta = self._meta_values(cursor, ("embedder", "vector_dim", REEMBED_TARGET))
            target = json.loads(meta[REEMBED_TARGET]) if meta.get(REEMBED_TARGET) else None
            staged = total = 0
            if target is not None:
                staged, total = self._staged_counts(cursor)
        return VectorState(
            embedder=self.embedder.name,
            vector_dim=self.vector_dim,
            stored_embedder=meta.get("embedder") or "",
            stored_vector_dim=int(meta.get("vector_dim") or 0),
            pending_embedder=target and target["embedder"],
            pending_vector_dim=target and int(target["vector_dim"]),
            pending_staged=staged,
            pending_total=total,
        )

    def reembed(
        self,
        embedder: Embedder,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: Callable[[int, int], None] | None = None,
    ) -> ReembedReport:
        """See MemoryStore.reembed. The staging table (schema.staging) holds (pk, version, vector)
        per embedded record and the meta row REEMBED_TARGET names the embedder it is for, so a
        rerun for the same embedder skips what is staged at the same version, and one for another
        embedder starts over."""
        if not isinstance(embedder, Embedder):
            raise ValueError(f"embedder must be an Embedder, not {type(embedder).__name__}")
        check_positive_int("batch_size", batch_size)
        dim = embedder.dim
        check_positive_int("embedder dimension", dim)
        target = {"embedder": embedder.name, "vector_dim": dim}
        previous = (self.embedder.name, self.vector_dim)
        finished = self._finish_swap(target)
        if finished is not None:  # a swap to this embedder cut short, now complete
            self._use_embedder(embedder)
            return ReembedReport(*previous, embedder.name, dim, records=finished, resumed=finished)
        if (embedder.name, dim) == previous:
            return ReembedReport(*previous, *previous, changed=False)
        resumed = self._prepare_staging(target)
        embedded = 0
        for _ in range(REEMBED_ROUNDS):
            embedded += self._stage(embedder, batch_size, progress)
            swapped = self._swap(target)
            if swapped is not None:
                break
        else:
            raise RuntimeError(
                f"records kept changing during {REEMBED_ROUNDS} rounds of re-embedding; stop the processes "
                "writing to the store and run it again (what is staged is kept)"
            )
        records, cleared = swapped
        self._use_embedder(embedder)
        return ReembedReport(*previous, embedder.name, dim, records, embedded, resumed, cleared)

    # --- outcomes of changes recorded elsewhere ---------------------------------------------

    def settle_outcome(self, token: str, outcome: str) -> str:
        """See MemoryStore.settle_outcome: a meta row keyed by the token, inserted if absent."""
        check_id("token", token)
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}, not {outcome!r}")
        key = OUTCOME_PREFIX + token
        with self._write() as cursor:
            self._merge_meta(cursor, key, outcome)
            return self._meta_value(cursor, key) or outcome

    def outcomes(self, tokens: Sequence[str]) -> dict[str, str]:
        """See MemoryStore.outcomes."""
        tokens = token_list(tokens)
        if not tokens:
            return {}
        with self._read() as cursor:
            found = self._meta_values(cursor, [OUTCOME_PREFIX + token for token in tokens])
        return {key.removeprefix(OUTCOME_PREFIX): value for key, value in found.items()}

    def forget_outcomes(self, tokens: Sequence[str]) -> None:
        """See MemoryStore.forget_outcomes."""
        tokens = token_list(tokens)
        if not tokens:
            return
        with self._write() as cursor:
            cursor.execute(
                f"DELETE FROM {self._meta} WHERE {self._in('meta_key', 'keys')}",
                {"keys": _ids_json([OUTCOME_PREFIX + token for token in tokens])},
            )

    def _meta_values(self, cursor: Any, keys: Sequence[str]) -> dict[str, str]:
        rows = self._fetch(
            f"SELECT meta_key, meta_value FROM {self._meta} WHERE {self._in('meta_key', 'keys')}",
            {"keys": _ids_json(keys)},
            cursor,
        )
        return {row["meta_key"]: row["meta_value"] for row in rows}

    def _staged_counts(self, cursor: Any) -> tuple[int, int]:
        """(records staged at their current version, records with text to embed)."""
        [row] = self._fetch(
            f"SELECT COUNT(*) AS total, COUNT(s.pk) AS staged FROM {self._records} r "
            f'LEFT JOIN "{self.schema.staging}" s ON s.pk = r.pk AND s.version = r.version '
            "WHERE r.search_text IS NOT NULL",
            None,
            cursor,
        )
        return int(row["staged"]), int(row["total"])

    def _prepare_staging(self, target: dict[str, Any]) -> int:
        """Keep the staging table when it was made for `target` (returns what it holds), else make
        it anew: created first, then named in the meta table, so a crash in between starts over."""
        with self._read() as cursor:
            current = self._meta_value(cursor, REEMBED_TARGET)
            if current is not None and json.loads(current) == target:
                return self._staged_counts(cursor)[0]
        with self._write(schema=True) as cursor:
            for statement in self.schema.staging_sql(target["vector_dim"]):
                self._run_ddl(cursor, statement)
        with self._write() as cursor:
            self._set_meta(cursor, REEMBED_TARGET, json.dumps(target, sort_keys=True))
        return 0

    def _stage(self, embedder: Embedder, batch_size: int, progress: Callable[[int, int], None] | None) -> int:
        """Embed, batch after batch in key order, the records not staged at their current version,
        committing each batch; the embedding happens holding no lock. Returns how many."""
        staging = f'"{self.schema.staging}"'
        with self._read() as cursor:
            staged, total = self._staged_counts(cursor)
        if progress is not None:
            progress(staged, total)
        after, embedded = -1, 0
        while True:
            params: dict[str, Any] = {"after": after, "batch": batch_size}
            rows = self._fetch(
                f"SELECT r.pk, r.version, r.search_text FROM {self._records} r "
                f"WHERE r.search_text IS NOT NULL AND r.pk > :after AND NOT EXISTS "
                f"(SELECT 1 FROM {staging} s WHERE s.pk = r.pk AND s.version = r.version) "
                f"ORDER BY r.pk{self.dialect.first_rows(':batch')}",
                params,
            )
            if not rows:
                return embedded
            texts = [row["search_text"] for row in rows]
            vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
            if vectors.shape != (len(texts), embedder.dim):
                raise ValueError(
                    f"the embedder returned shape {vectors.shape}; expected ({len(texts)}, {embedder.dim})"
                )
            vectors = normalize_rows(vectors)
            with self._write() as cursor:
                self.dialect.declare(cursor, ["embedding"])
                cursor.executemany(
                    self.dialect.upsert(
                        staging,
                        ["pk"],
                        {"pk": ":pk", "version": ":version", "embedding": ":embedding"},
                        ["version", "embedding"],
                    ),
                    [
                        {"pk": row["pk"], "version": row["version"], "embedding": self.dialect.vector(vector)}
                        for row, vector in zip(rows, vectors, strict=True)
                    ],
                )
            after, embedded, staged = rows[-1]["pk"], embedded + len(rows), staged + len(rows)
            if progress is not None:
                progress(min(staged, total), total)

    def _unstaged(self, cursor: Any) -> int:
        """Records with text and no staged vector of their current version (changed since)."""
        staged, total = self._staged_counts(cursor)
        return total - staged

    def _cleared(self, cursor: Any) -> int:
        """Records with a vector and no text: the swap drops their vectors."""
        [row] = self._fetch(
            f"SELECT COUNT(*) AS n FROM {self._records} r WHERE r.search_text IS NULL AND r.embedding IS NOT NULL",
            None,
            cursor,
        )
        return int(row["n"])

    def _swap(self, target: dict[str, Any]) -> tuple[int, int] | None:
        """Put the staged vectors in place of the old ones and record the new embedder, in one
        transaction (SQLite's DDL is transactional). None, changing nothing, when a record changed
        after it was staged. Returns (records with a vector now, vectors dropped)."""
        with self._write() as cursor:
            cleared = self._copy_staged(cursor, "embedding")
            if cleared is None:
                return None
            records = self._switch_meta(cursor, target)
            for statement in self.schema.drop_staging_sql():
                cursor.execute(statement)
        return records, cleared

    def _copy_staged(self, cursor: Any, column: str) -> int | None:
        """Copy the staged vectors into `column` of every record (NULL where none is staged: no
        text), unless a record changed after it was staged: then None, changing nothing. Returns
        how many vectors this drops (records with a vector and no text)."""
        if self._unstaged(cursor):
            return None
        cleared = self._cleared(cursor)
        cursor.execute(
            f"UPDATE {self._records} SET {column} = "
            f'(SELECT s.embedding FROM "{self.schema.staging}" s WHERE s.pk = {self._records}.pk)'
        )
        return cleared

    def _switch_meta(self, cursor: Any, target: dict[str, Any]) -> int:
        """Record the new embedder and dimension, and a new store id: every process's in-memory
        index (and the saved snapshot) then reloads from the database instead of keeping old
        vectors. Returns how many records hold a vector."""
        self._set_meta(cursor, "embedder", target["embedder"])
        self._set_meta(cursor, "vector_dim", str(target["vector_dim"]))
        self._set_meta(cursor, "store_id", str(uuid.uuid4()))
        cursor.execute(f"DELETE FROM {self._meta} WHERE meta_key = :meta_key", {"meta_key": REEMBED_TARGET})
        [row] = self._fetch(f"SELECT COUNT(*) AS n FROM {self._records} r WHERE r.embedding IS NOT NULL", None, cursor)
        return int(row["n"])

    def _finish_swap(self, target: dict[str, Any]) -> int | None:
        """Complete a swap cut short: nothing to do where the swap is one transaction."""
        return None

    def _use_embedder(self, embedder: Embedder) -> None:
        """From now on embed with `embedder`; the in-memory index is rebuilt at its dimension."""
        self.embedder, self.vector_dim = embedder, embedder.dim
        self.schema = self.dialect.schema(self.schema.prefix, embedder.dim, self.vector_index, self.keyword_index)
        with self._stats_lock:
            self._stats_memo.clear()
        if self.index is not None:
            self.index = self.index.reopened(self.vector_dim)
            with self._read() as cursor:
                self.index.rebuild(_IndexSource(self, cursor))
