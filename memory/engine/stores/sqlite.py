"""SQLiteMemoryStore: the embedded backend, so the engine runs anywhere with no server.

One table holds every record (messages, memories, images, profiles) with its scope, timestamps,
expiry, status, JSON metadata and float32 embedding; threads, links and image bytes have tables of
their own. Searches run over an in-memory index of the table (search_cache.py: vectors, filter
codes, BM25 postings) kept in step with every write; metadata filters are compiled to SQL.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..embedders import Embedder, HashingEmbedder
from ..filters import SQLiteFilterCompiler, parse_filter
from ..graph import grow_trees, walk_nodes
from ..images import CheckedImage
from ..scope import check_scope_value
from ..ttl import expiry, utc_now
from ..types import (
    AGENT_PROFILE_TYPE,
    IMAGE_TYPE,
    LIFECYCLE_RELATIONS,
    MEMORY_TYPES,
    MESSAGE_TYPE,
    NOT_SET,
    USER_PROFILE_TYPE,
    AgentProfileRecord,
    MemoryRetentionConfig,
    MessageRecord,
    Page,
    Record,
    RecordRelation,
    SchemaPolicy,
    SearchStrategy,
    ThreadRecord,
    UserProfileRecord,
    coerce_enum,
)
from .base import (
    DEFAULT_LIST_LIMIT,
    AddPlan,
    MemoryStore,
    NewRecord,
    SchemaError,
    SearchHit,
    SearchRequest,
    attach_trees,
    build_record,
    check_link_end,
    check_link_end_found,
    check_positive_int,
    check_profile,
    check_record_type,
    check_record_types,
    check_relation_selector,
    decode_cursor,
    dump_metadata,
    encode_cursor,
    kind_of,
    normalize_rows,
    prepare_update,
    record_id_list,
    relation_changes,
    relation_labels_of,
    relation_scope_condition,
    relation_values,
    scope_condition,
    seq_range_conditions,
    summary_topics,
    thread_changes,
    to_vector,
)
from .link_index import LinkIndex
from .ranking import CANDIDATE_DEPTH, fuse_rankings
from .search_cache import SearchCache

SCHEMA_VERSION = 4
MMAP_BYTES = 1 << 30
"""1: records with an FTS5 index; 2: keyword search moved to the in-memory search cache;
3: relations between memories, lifecycle counts, persisted thread summaries; 4: images."""
_PREFIX_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,29}$")
EFFECTIVE_STATUS_SQL = "CASE WHEN status = 'valid' AND lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END"
"""D2: invalid when set so, or while a supersedes/refines/duplicates link points at the record."""
_RECORD_COLUMNS = (
    "pk, id, kind, record_type, content, index_text, parts, thread_id, user_id, agent_id, role, seq_no, "
    f"timestamp, created_at, expires_at, {EFFECTIVE_STATUS_SQL} AS status, metadata, message_id, mime_type"
)
_LIFECYCLE_SQL = "(" + ", ".join(f"'{name}'" for name in LIFECYCLE_RELATIONS) + ")"


class SQLiteMemoryStore(MemoryStore):
    """Records, threads and profiles in one SQLite file (or in memory).

    `path` is a file path or ":memory:". `embedder=None` uses the local HashingEmbedder. One
    connection serves the instance, guarded by a lock, so a store can be shared across threads;
    several processes may open the same file (WAL mode).
    """

    def __init__(
        self,
        path: str = ":memory:",
        embedder: Embedder | None = None,
        schema_policy: SchemaPolicy | str = SchemaPolicy.REQUIRE_EXISTING,
        vector_dim: int | None = None,
        table_name_prefix: str = "",
        search_strategy: SearchStrategy | str = SearchStrategy.HYBRID,
        memory_retention_config: MemoryRetentionConfig | Any = NOT_SET,
    ) -> None:
        if vector_dim is not None:
            check_positive_int("vector_dim", vector_dim)
        if embedder is None:
            embedder = HashingEmbedder(vector_dim or 384)
        if vector_dim is not None and embedder.dim != vector_dim:
            raise ValueError(f"vector_dim={vector_dim} does not match the embedder's dimension {embedder.dim}")
        if table_name_prefix and not _PREFIX_PATTERN.match(table_name_prefix):
            raise ValueError(
                f"table_name_prefix must start with a letter and hold only letters, digits and _ "
                f"(at most 30 characters), not {table_name_prefix!r}"
            )
        if memory_retention_config is NOT_SET or memory_retention_config is None:
            memory_retention_config = MemoryRetentionConfig()
        if not isinstance(memory_retention_config, MemoryRetentionConfig):
            raise ValueError("memory_retention_config must be a MemoryRetentionConfig")
        self.embedder = embedder
        self.vector_dim = embedder.dim
        self.schema_policy = coerce_enum(SchemaPolicy, schema_policy, "schema_policy")
        self.search_strategy = coerce_enum(SearchStrategy, search_strategy, "search_strategy")
        self.retention = memory_retention_config
        self.path = path
        p = table_name_prefix.lower()
        self._meta, self._threads = f"{p}oam_meta", f"{p}oam_threads"
        self._records, self._relations = f"{p}oam_records", f"{p}oam_relations"
        self._image_bytes = f"{p}oam_image_bytes"
        self._legacy_fts = f"{p}oam_records_fts"  # schema version 1 only
        self._changed = f"{p}oam_changed_rows"
        self._lock = threading.RLock()
        self._cache: SearchCache | None = None  # loaded by the first search
        self._links: LinkIndex | None = None  # loaded by the first graph search
        self._seen_data_version = -1
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA busy_timeout = 10000")
        if path != ":memory:" and not path.startswith("file::memory:"):
            self._conn.execute("PRAGMA journal_mode = WAL")
            # In WAL mode NORMAL keeps the database consistent through crashes; only the latest
            # commits may be lost on power failure, and writes stop waiting on fsync every time.
            self._conn.execute("PRAGMA synchronous = NORMAL")
            # Checkpoint every ~40 MB of WAL rather than every 4 MB: index and FTS pages rewritten by
            # consecutive batches are then copied back to the database once, not once per batch.
            self._conn.execute("PRAGMA wal_autocheckpoint = 10000")
            # Read pages through a memory map rather than read() calls: a graph search reads a few
            # hundred records scattered over the file, and each read() costs a system call.
            self._conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        self._apply_schema_policy()

    # --- schema -----------------------------------------------------------------------------

    def schema_sql(self) -> list[str]:
        """The DDL of the managed schema, in creation order."""
        r, t, rel, img = self._records, self._threads, self._relations, self._image_bytes
        return [
            f"CREATE TABLE IF NOT EXISTS {self._meta} (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            f"""CREATE TABLE IF NOT EXISTS {t} (
                id TEXT PRIMARY KEY,
                user_id TEXT, agent_id TEXT, metadata TEXT, settings TEXT NOT NULL DEFAULT '{{}}',
                created_at TEXT NOT NULL, updated_at TEXT NOT NULL, next_seq_no INTEGER NOT NULL DEFAULT 0,
                summary TEXT, topics TEXT)""",
            f"CREATE INDEX IF NOT EXISTS {t}_activity ON {t} (updated_at, id)",
            f"CREATE INDEX IF NOT EXISTS {t}_user ON {t} (user_id)",
            f"CREATE INDEX IF NOT EXISTS {t}_agent ON {t} (agent_id)",
            f"""CREATE TABLE IF NOT EXISTS {r} (
                pk INTEGER PRIMARY KEY,
                id TEXT NOT NULL, kind TEXT NOT NULL, record_type TEXT NOT NULL,
                content TEXT NOT NULL, index_text TEXT, parts TEXT,
                thread_id TEXT, user_id TEXT, agent_id TEXT, role TEXT, seq_no INTEGER,
                timestamp TEXT, created_at TEXT NOT NULL, expires_at TEXT,
                status TEXT NOT NULL DEFAULT 'valid', lifecycle_links INTEGER NOT NULL DEFAULT 0,
                metadata TEXT, embedding BLOB, message_id TEXT, mime_type TEXT,
                UNIQUE (kind, id))""",
            f"CREATE INDEX IF NOT EXISTS {r}_thread ON {r} (thread_id, kind, seq_no) WHERE thread_id IS NOT NULL",
            f"CREATE INDEX IF NOT EXISTS {r}_expiry ON {r} (expires_at) WHERE expires_at IS NOT NULL",
            f"CREATE INDEX IF NOT EXISTS {r}_message ON {r} (message_id) WHERE message_id IS NOT NULL",
            # Image bytes live apart, so that reading records never drags megabytes along.
            f"CREATE TABLE IF NOT EXISTS {img} (record_pk INTEGER PRIMARY KEY, bytes BLOB NOT NULL)",
            # An image goes with its bytes; a message goes with the images that are its parts.
            f"""CREATE TRIGGER IF NOT EXISTS {r}_images AFTER DELETE ON {r} WHEN old.kind IN ('image', 'message') BEGIN
                DELETE FROM {img} WHERE record_pk = old.pk OR record_pk IN (
                    SELECT pk FROM {r} WHERE kind = 'image' AND message_id = old.id AND old.kind = 'message');
                DELETE FROM {r} WHERE kind = 'image' AND message_id = old.id AND old.kind = 'message'; END""",
            # `pair` names the two endpoints in sorted order: one link per pair, in either direction.
            f"""CREATE TABLE IF NOT EXISTS {rel} (
                id TEXT PRIMARY KEY,
                source_id TEXT NOT NULL, source_type TEXT NOT NULL,
                target_id TEXT NOT NULL, target_type TEXT NOT NULL,
                relation_type TEXT NOT NULL, opposite_type TEXT NOT NULL,
                timestamp TEXT, metadata TEXT, created_at TEXT NOT NULL,
                pair TEXT NOT NULL UNIQUE)""",
            # Covering indexes: a graph hop reads links from the index alone, in link order.
            f"CREATE INDEX IF NOT EXISTS {rel}_from ON {rel} (source_id, created_at, id, target_id)",
            f"CREATE INDEX IF NOT EXISTS {rel}_to ON {rel} (target_id, created_at, id, source_id)",
            # Deleting a memory deletes its links, whatever the path (delete, thread, user, purge),
            # and recounts the lifecycle links of the memories it pointed at.
            f"""CREATE TRIGGER IF NOT EXISTS {r}_unlink AFTER DELETE ON {r} WHEN old.kind = 'memory' BEGIN
                UPDATE {r} SET lifecycle_links = lifecycle_links - 1 WHERE kind = 'memory' AND id IN (
                    SELECT target_id FROM {rel} WHERE source_id = old.id AND relation_type IN {_LIFECYCLE_SQL});
                DELETE FROM {rel} WHERE source_id = old.id OR target_id = old.id; END""",
        ]

    def _managed_tables(self) -> list[str]:
        return [self._meta, self._threads, self._records, self._relations, self._image_bytes]

    def _existing_tables(self) -> set[str]:
        rows = self._conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')").fetchall()
        return {row[0] for row in rows} & {*self._managed_tables(), self._legacy_fts}

    def _drop_legacy_keyword_index(self) -> None:
        """Schema version 1 kept an FTS5 index and its triggers; version 2 ranks keywords in memory."""
        for trigger in ("fts_delete", "fts_update"):
            self._conn.execute(f"DROP TRIGGER IF EXISTS {self._records}_{trigger}")
        self._conn.execute(f"DROP TABLE IF EXISTS {self._legacy_fts}")

    def _apply_schema_policy(self) -> None:
        policy = self.schema_policy
        if policy is SchemaPolicy.NO_CHECK:
            return
        with self._lock, self._write():
            existing = self._existing_tables()
            if policy is SchemaPolicy.RECREATE:
                self._drop_legacy_keyword_index()
                for table in self._managed_tables():
                    self._conn.execute(f"DROP TABLE IF EXISTS {table}")
                existing = set()
            if policy in (SchemaPolicy.RECREATE, SchemaPolicy.CREATE_IF_NECESSARY) or (
                policy is SchemaPolicy.CREATE_IF_EMPTY and not existing
            ):
                if policy is SchemaPolicy.CREATE_IF_NECESSARY and self._meta in existing:
                    self._upgrade_schema()
                for statement in self.schema_sql():
                    self._conn.execute(statement)
                for key, value in (
                    ("schema_version", SCHEMA_VERSION),
                    ("vector_dim", self.vector_dim),
                    ("embedder", self.embedder.name),
                ):
                    self._conn.execute(
                        f"INSERT OR IGNORE INTO {self._meta} (key, value) VALUES (?, ?)", (key, str(value))
                    )
        self._check_schema()

    def _upgrade_schema(self) -> None:
        """Bring an older schema up to SCHEMA_VERSION, keeping its data."""
        (version,) = self._conn.execute(
            f"SELECT CAST(value AS INTEGER) FROM {self._meta} WHERE key = 'schema_version'"
        ).fetchone()
        if version is None or version >= SCHEMA_VERSION:
            return
        if version <= 1:
            self._drop_legacy_keyword_index()
        if version <= 3:
            for index in ("source", "target"):  # replaced by the covering _from and _to indexes
                self._conn.execute(f"DROP INDEX IF EXISTS {self._relations}_{index}")
            for table, column, declaration in (
                (self._records, "lifecycle_links", "INTEGER NOT NULL DEFAULT 0"),
                (self._threads, "summary", "TEXT"),
                (self._threads, "topics", "TEXT"),
                (self._records, "message_id", "TEXT"),
                (self._records, "mime_type", "TEXT"),
            ):
                columns = {row[1] for row in self._conn.execute(f"PRAGMA table_info({table})")}
                if column not in columns:
                    self._conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
        self._conn.execute(f"UPDATE {self._meta} SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))

    def _check_schema(self) -> None:
        missing = set(self._managed_tables()) - self._existing_tables()
        if missing:
            raise SchemaError(
                f"the memory schema is missing or incomplete in {self.path} (no {', '.join(sorted(missing))}); "
                f"open the store with schema_policy=SchemaPolicy.CREATE_IF_NECESSARY to create it"
            )
        meta = dict(self._conn.execute(f"SELECT key, value FROM {self._meta}").fetchall())
        version = int(meta.get("schema_version", 0))
        if version != SCHEMA_VERSION:
            raise SchemaError(
                f"the memory schema in {self.path} is version {version}; this engine needs {SCHEMA_VERSION}"
                + (
                    " (open it once with schema_policy=SchemaPolicy.CREATE_IF_NECESSARY to upgrade it)"
                    if version < SCHEMA_VERSION
                    else ""
                )
            )
        if int(meta.get("vector_dim", 0)) != self.vector_dim:
            raise ValueError(
                f"the store holds {meta.get('vector_dim')}-dimensional vectors but the embedder produces "
                f"{self.vector_dim}; open it with the embedder it was built with"
            )
        if meta.get("embedder") != self.embedder.name:
            raise ValueError(
                f"the store was built with embedder {meta.get('embedder')!r}, not {self.embedder.name!r}; "
                "vectors of different embedders cannot be compared"
            )

    # --- plumbing ---------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[None]:
        """One immediate transaction: all of a call's writes land, or none do."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._conn.execute("ROLLBACK")  # also forgets the rows the temp triggers noted
                raise
            self._conn.execute("COMMIT")
            if self._cache is not None:
                self._sync_cache()

    # --- the search cache -------------------------------------------------------------------

    def _search_cache(self) -> SearchCache:
        """The cache, loaded on first use and reloaded after another connection has written."""
        with self._lock:
            (version,) = self._conn.execute("PRAGMA data_version").fetchone()
            if self._cache is None or version != self._seen_data_version:
                if self._cache is None:
                    self._track_own_changes()
                cache = SearchCache(self.vector_dim)
                self._conn.execute(f"DELETE FROM temp.{self._changed}")
                self._conn.execute(f"DELETE FROM temp.{self._changed}_links")
                cache.load(self._rows_after(0))
                self._cache, self._links, self._seen_data_version = cache, None, version
            return self._cache

    def _link_index(self) -> LinkIndex:
        """The links, loaded on first use; call it after _search_cache(), which drops a stale copy."""
        if self._links is None:
            self._links = LinkIndex(
                self._conn.execute(f"SELECT {LinkIndex.ROW_SQL} FROM {self._relations} ORDER BY created_at, id")
            )
        return self._links

    def _track_own_changes(self) -> None:
        """Temporary triggers (this connection's writes only) note every updated or deleted row."""
        r, changed = self._records, self._changed
        self._conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {changed} (pk INTEGER PRIMARY KEY)")
        for event in ("UPDATE", "DELETE"):
            self._conn.execute(
                f"CREATE TEMP TRIGGER IF NOT EXISTS {changed}_{event.lower()} AFTER {event} ON main.{r} "
                f"BEGIN INSERT OR IGNORE INTO {changed} (pk) VALUES (old.pk); END"
            )
        # Links, for the link index: every inserted, updated or deleted relation.
        self._conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {changed}_links (position INTEGER PRIMARY KEY)")
        for event, row in (("INSERT", "new"), ("UPDATE", "old"), ("DELETE", "old")):
            self._conn.execute(
                f"CREATE TEMP TRIGGER IF NOT EXISTS {changed}_links_{event.lower()} AFTER {event} "
                f"ON main.{self._relations} BEGIN INSERT OR IGNORE INTO {changed}_links (position) "
                f"VALUES ({row}.rowid); END"
            )

    def _rows_after(self, last_pk: int) -> sqlite3.Cursor:
        """The cache's view of every row above `last_pk`, in key order."""
        return self._conn.execute(
            f"SELECT {SearchCache.ROW_SQL} FROM {self._records} WHERE pk > ? ORDER BY pk", (last_pk,)
        )

    def _sync_cache(self) -> None:
        """Apply this connection's committed writes to the cache: new rows, then changed ones."""
        cache = self._cache
        cache.append(self._rows_after(int(cache.pks[cache.size - 1]) if cache.size else 0))
        changed = [row[0] for row in self._conn.execute(f"SELECT pk FROM temp.{self._changed}")]
        if changed:
            marks = ",".join("?" * len(changed))
            rows = self._conn.execute(
                f"SELECT {SearchCache.ROW_SQL} FROM {self._records} WHERE pk IN ({marks})", changed
            ).fetchall()
            cache.refresh(changed, rows)
            self._conn.execute(f"DELETE FROM temp.{self._changed}")
        links = [row[0] for row in self._conn.execute(f"SELECT position FROM temp.{self._changed}_links")]
        if links:
            if self._links is not None:
                for rowid in links:
                    self._links.remove(rowid)
                for row in self._conn.execute(
                    f"SELECT {LinkIndex.ROW_SQL} FROM {self._relations} "
                    "WHERE rowid IN (SELECT value FROM json_each(?))",
                    (json.dumps(links),),
                ):
                    self._links.add(row)
            self._conn.execute(f"DELETE FROM temp.{self._changed}_links")

    def _query(self, sql: str, params: Any = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # --- writes -----------------------------------------------------------------------------

    def _insert(self, plan: AddPlan, check_ids: bool, batch_size: int) -> list[str]:
        rows, vectors, checked, expiries, now = plan.rows, plan.vectors, plan.images, plan.expiries, plan.now
        count = len(rows)
        with self._write():
            if check_ids:
                self._check_new_ids(rows)
            seq_numbers = self._touch_threads(rows, now)
            params = [
                (
                    row.id,
                    kind_of(row.record_type),
                    row.record_type,
                    row.content,
                    row.index_text,
                    row.parts,
                    row.thread_id,
                    row.user_id,
                    row.agent_id,
                    row.role,
                    seq_numbers[i],
                    row.timestamp,
                    now,
                    expiries[i],
                    row.status,
                    row.metadata,
                    None if vectors[i] is None else vectors[i].tobytes(),
                    checked[i][1] if checked else None,
                    checked[i][0].mime_type.value if checked else None,
                )
                for i, row in enumerate(rows)
            ]
            sql = (
                f"INSERT INTO {self._records} (id, kind, record_type, content, index_text, parts, thread_id, "
                "user_id, agent_id, role, seq_no, timestamp, created_at, expires_at, status, metadata, embedding, "
                "message_id, mime_type) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            )
            for start in range(0, count, batch_size):
                self._conn.executemany(sql, params[start : start + batch_size])
            if checked:
                keys = dict(
                    self._conn.execute(
                        f"SELECT id, pk FROM {self._records} WHERE kind = 'image' "
                        "AND id IN (SELECT value FROM json_each(?))",
                        (json.dumps([row.id for row in rows]),),
                    ).fetchall()
                )
                self._conn.executemany(
                    f"INSERT INTO {self._image_bytes} (record_pk, bytes) VALUES (?, ?)",
                    [(keys[row.id], image.data) for row, (image, _) in zip(rows, checked, strict=True)],
                )
        return [row.id for row in rows]

    def _check_new_ids(self, rows: list[NewRecord]) -> None:
        kind = kind_of(rows[0].record_type)
        ids = [row.id for row in rows]
        taken: list[str] = []
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            taken += [
                r[0]
                for r in self._conn.execute(
                    f"SELECT id FROM {self._records} WHERE kind = ? AND id IN ({marks})", (kind, *chunk)
                )
            ]
        if taken:
            raise ValueError(f"a {kind} record with id {taken[0]!r} already exists")

    def _touch_threads(self, rows: list[NewRecord], now: str) -> list[int | None]:
        """Create missing thread rows, mark activity, and number new messages within each thread."""
        seq_numbers: list[int | None] = [None] * len(rows)
        by_thread: dict[str, list[int]] = {}
        for i, row in enumerate(rows):
            if row.thread_id is not None:
                by_thread.setdefault(row.thread_id, []).append(i)
        for thread_id, indexes in by_thread.items():
            first = rows[indexes[0]]
            self._conn.execute(
                f"INSERT OR IGNORE INTO {self._threads} (id, user_id, agent_id, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (thread_id, first.user_id, first.agent_id, now, now),
            )
            messages = [i for i in indexes if rows[i].record_type == MESSAGE_TYPE]
            (next_seq,) = self._conn.execute(
                f"UPDATE {self._threads} SET updated_at = ?, next_seq_no = next_seq_no + ? WHERE id = ? "
                "RETURNING next_seq_no",
                (now, len(messages), thread_id),
            ).fetchone()
            for offset, i in enumerate(messages):
                seq_numbers[i] = next_seq - len(messages) + offset
        return seq_numbers

    def _add_profile(self, record_type: str, owner_id: str, information: str, metadata: Any) -> str:
        name = check_profile(record_type, owner_id, information)
        meta = dump_metadata(metadata)
        vector = normalize_rows(self._embed([information]))[0].tobytes() if information else None
        now = utc_now()
        with self._write():
            self._conn.execute(
                f"INSERT INTO {self._records} (id, kind, record_type, content, {name}, created_at, metadata, "
                "embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (kind, id) DO UPDATE SET "
                "content = excluded.content, metadata = excluded.metadata, embedding = excluded.embedding",
                (owner_id, record_type, record_type, information, owner_id, now, meta, vector),
            )
        return owner_id

    def add_user(self, user_id: str, information: str, metadata: dict | None = None) -> str:
        """Insert (or replace) a user's profile text; returns the user id."""
        return self._add_profile(USER_PROFILE_TYPE, user_id, information, metadata)

    def add_agent(self, agent_id: str, information: str, metadata: dict | None = None) -> str:
        """Insert (or replace) an agent's profile text; returns the agent id."""
        return self._add_profile(AGENT_PROFILE_TYPE, agent_id, information, metadata)

    def update(
        self,
        record_type: str,
        record_id: str,
        text: Any = NOT_SET,
        index_text: Any = NOT_SET,
        embedding: Any = NOT_SET,
        metadata: Any = NOT_SET,
        *,
        content: Any = NOT_SET,
        timestamp: Any = NOT_SET,
        ttl_days: Any = NOT_SET,
        ttl_anchor: Any = NOT_SET,
        status: Any = NOT_SET,
        content_parts: Any = NOT_SET,
        image: Any = NOT_SET,
    ) -> int:
        """Update one live record; returns 1, or 0 when it does not exist or has expired.

        A new text without `content_parts` drops any stored parts: the text is then the content.
        `image` (images only: a checked image) replaces the bytes. A message's new expiry is its
        images' too.
        """
        check_record_type(record_type)
        if image is not NOT_SET and (record_type != IMAGE_TYPE or not isinstance(image, CheckedImage)):
            raise ValueError("image= takes a checked image (images.check_image), for image records only")
        with self._write():
            row = self._live_row(record_type, record_id)
            plan = prepare_update(
                text,
                index_text,
                embedding,
                metadata,
                content,
                timestamp,
                ttl_days,
                ttl_anchor,
                status,
                content_parts,
                image is not NOT_SET,
                row["content"] if row else "",
                row["index_text"] if row else None,
            )
            if row is None:
                return 0
            changes: dict[str, Any] = {}
            for column in ("content", "index_text", "parts", "metadata", "timestamp", "status"):
                value = getattr(plan, column)
                if value is not NOT_SET:
                    changes[column] = value
            if plan.embedding is not NOT_SET:
                changes["embedding"] = (
                    None
                    if plan.embedding is None
                    else normalize_rows(to_vector(plan.embedding, self.vector_dim)[None, :])[0].tobytes()
                )
            elif plan.embed_text is not NOT_SET:
                changes["embedding"] = (
                    normalize_rows(self._embed([plan.embed_text]))[0].tobytes() if plan.embed_text else None
                )
            if plan.ttl_days is not NOT_SET or plan.ttl_anchor is not NOT_SET:
                changes["expires_at"] = expiry(
                    plan.ttl_days,
                    plan.ttl_anchor,
                    created_at=row["created_at"],
                    timestamp=changes.get("timestamp", row["timestamp"]),
                    retention=self.retention,
                )
            if image is not NOT_SET:
                changes["mime_type"] = image.mime_type.value
                self._conn.execute(
                    f"UPDATE {self._image_bytes} SET bytes = ? WHERE record_pk = ?", (image.data, row["pk"])
                )
            assignments = ", ".join(f"{column} = :{column}" for column in changes)
            self._conn.execute(f"UPDATE {self._records} SET {assignments} WHERE pk = :pk", {**changes, "pk": row["pk"]})
            if record_type == MESSAGE_TYPE and "expires_at" in changes:
                self._conn.execute(
                    f"UPDATE {self._records} SET expires_at = ? WHERE kind = 'image' AND message_id = ?",
                    (changes["expires_at"], record_id),
                )
            if row["thread_id"] is not None:
                self._conn.execute(
                    f"UPDATE {self._threads} SET updated_at = ? WHERE id = ?", (utc_now(), row["thread_id"])
                )
        return 1

    def _live_row(self, record_type: str, record_id: Any) -> sqlite3.Row | None:
        if not isinstance(record_id, str):
            raise ValueError(f"record_id must be a string, not {type(record_id).__name__}")
        return self._conn.execute(
            f"SELECT pk, content, index_text, thread_id, timestamp, created_at FROM {self._records} "
            "WHERE kind = ? AND id = ? AND record_type = ? AND (expires_at IS NULL OR expires_at > ?)",
            (kind_of(record_type), record_id, record_type, utc_now()),
        ).fetchone()

    def delete(self, record_type: str, record_id: str, cascade: bool = False) -> int:
        """Delete one record (expired or not); returns the number deleted, 0 or 1.

        `cascade` is accepted for the SDK's signature: records own no dependants yet.
        """
        check_record_type(record_type)
        if not isinstance(record_id, str):
            raise ValueError(f"record_id must be a string, not {type(record_id).__name__}")
        with self._write():
            cursor = self._conn.execute(
                f"DELETE FROM {self._records} WHERE kind = ? AND id = ? AND record_type = ? RETURNING thread_id",
                (kind_of(record_type), record_id, record_type),
            )
            deleted = cursor.fetchall()
            for (thread_id,) in deleted:
                if thread_id is not None:
                    self._conn.execute(
                        f"UPDATE {self._threads} SET updated_at = ? WHERE id = ?", (utc_now(), thread_id)
                    )
        return len(deleted)

    def delete_thread(self, thread_id: str) -> int:
        """Delete a thread with every record it holds; returns the number of threads deleted."""
        check_scope_value("thread_id", thread_id)
        with self._write():
            self._conn.execute(f"DELETE FROM {self._records} WHERE thread_id = ?", (thread_id,))
            return self._conn.execute(f"DELETE FROM {self._threads} WHERE id = ?", (thread_id,)).rowcount

    def _delete_owner(self, column: str, profile_type: str, owner_id: str, cascade: bool) -> int:
        check_scope_value(column, owner_id)
        with self._write():
            if not cascade:
                return self._conn.execute(
                    f"DELETE FROM {self._records} WHERE kind = ? AND id = ?", (profile_type, owner_id)
                ).rowcount
            deleted = self._conn.execute(f"DELETE FROM {self._records} WHERE {column} = ?", (owner_id,)).rowcount
            threads = [
                r[0] for r in self._conn.execute(f"SELECT id FROM {self._threads} WHERE {column} = ?", (owner_id,))
            ]
            for thread_id in threads:
                deleted += self._conn.execute(f"DELETE FROM {self._records} WHERE thread_id = ?", (thread_id,)).rowcount
            deleted += self._conn.execute(f"DELETE FROM {self._threads} WHERE {column} = ?", (owner_id,)).rowcount
            return deleted

    def delete_user(self, user_id: str, cascade: bool = True) -> int:
        """Delete a user's profile and, with `cascade`, their threads and records; returns rows deleted."""
        return self._delete_owner("user_id", USER_PROFILE_TYPE, user_id, cascade)

    def delete_agent(self, agent_id: str, cascade: bool = True) -> int:
        """Delete an agent's profile and, with `cascade`, its threads and records; returns rows deleted."""
        return self._delete_owner("agent_id", AGENT_PROFILE_TYPE, agent_id, cascade)

    def purge_expired(self) -> int:
        """Delete every expired record; returns how many."""
        with self._write():
            return self._conn.execute(
                f"DELETE FROM {self._records} WHERE expires_at IS NOT NULL AND expires_at <= ?", (utc_now(),)
            ).rowcount

    # --- relations --------------------------------------------------------------------------

    @staticmethod
    def _relation(row: sqlite3.Row) -> RecordRelation:
        return RecordRelation(
            id=row["id"],
            source_record_id=row["source_id"],
            source_record_type=row["source_type"],
            target_record_id=row["target_id"],
            target_record_type=row["target_type"],
            relation_type=row["relation_type"],
            opposite_relation_type=row["opposite_type"],
            timestamp=row["timestamp"],
            metadata=json.loads(row["metadata"]) if row["metadata"] else None,
            created_at=row["created_at"],
        )

    def _recount_lifecycle(self, memory_ids: Iterable[str]) -> None:
        """D2: a memory is invalid while at least one lifecycle link points at it."""
        self._conn.execute(
            f"UPDATE {self._records} SET lifecycle_links = (SELECT count(*) FROM {self._relations} "
            f"WHERE target_id = {self._records}.id AND relation_type IN {_LIFECYCLE_SQL}) "
            "WHERE kind = 'memory' AND id IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(set(memory_ids))),),
        )

    def _endpoint(self, name: str, record_id: Any, record_type: Any, thread_id: Any) -> None:
        """Check one end of a new link: a live memory of that type (of that thread, if given)."""
        check_link_end(name, record_id, record_type)
        row = self._conn.execute(
            f"SELECT record_type, thread_id FROM {self._records} WHERE kind = 'memory' AND id = ? "
            "AND (expires_at IS NULL OR expires_at > ?)",
            (record_id, utc_now()),
        ).fetchone()
        check_link_end_found(name, record_id, record_type, row, thread_id)

    def add_relations(self, relations: Sequence[Mapping[str, Any]], *, thread_id: Any = NOT_SET) -> list[str]:
        """Link memories; returns the relation ids. With `thread_id`, both ends must be its memories.

        Each relation names `source_record_id`/`_type`, `target_record_id`/`_type` and
        `relation_type`, optionally `opposite_relation_type`, `id`, `timestamp` and `metadata`.
        A self-link, a second link between the same two memories (either way), a missing or
        non-memory end is a ValueError, and then nothing is stored.
        """
        if isinstance(relations, Mapping) or not isinstance(relations, Sequence):
            raise ValueError("relations must be a list of mappings")
        now = utc_now()
        rows, pairs = [], set()
        with self._write():
            for i, relation in enumerate(relations):
                forward, opposite = relation_labels_of(i, relation)
                self._endpoint(
                    "source", relation.get("source_record_id"), relation.get("source_record_type"), thread_id
                )
                self._endpoint(
                    "target", relation.get("target_record_id"), relation.get("target_record_type"), thread_id
                )
                values = relation_values(relation, forward, opposite)
                pair = values["pair"]
                taken = self._conn.execute(f"SELECT id FROM {self._relations} WHERE pair = ?", (pair,)).fetchone()
                if taken is not None or pair in pairs:
                    raise ValueError(
                        f"{values['source_id']!r} and {values['target_id']!r} are already linked; "
                        "one link per pair of memories"
                    )
                pairs.add(pair)
                rows.append({**values, "created_at": now})
            if not rows:
                return []
            try:
                self._conn.executemany(
                    f"INSERT INTO {self._relations} ({', '.join(rows[0])}) "
                    f"VALUES ({', '.join(':' + column for column in rows[0])})",
                    rows,
                )
            except sqlite3.IntegrityError:
                raise ValueError("a relation with one of these ids already exists") from None
            self._recount_lifecycle(row["target_id"] for row in rows)
        return [row["id"] for row in rows]

    def _owned_relation(self, relation_id: Any, thread_id: Any) -> sqlite3.Row | None:
        if not isinstance(relation_id, str):
            raise ValueError(f"relation_id must be a string, not {type(relation_id).__name__}")
        row = self._conn.execute(f"SELECT * FROM {self._relations} WHERE id = ?", (relation_id,)).fetchone()
        if row is None or thread_id is NOT_SET:
            return row
        owners = self._conn.execute(
            f"SELECT count(*) FROM {self._records} WHERE kind = 'memory' AND id IN (?, ?) AND thread_id = ?",
            (row["source_id"], row["target_id"], thread_id),
        ).fetchone()[0]
        return row if owners == 2 else None

    def get_relation(self, relation_id: str, *, thread_id: Any = NOT_SET) -> RecordRelation | None:
        """One relation by id, or None (also when `thread_id` is given and it is not that thread's)."""
        with self._lock:
            row = self._owned_relation(relation_id, thread_id)
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
    ) -> int:
        """Change a relation's labels, timestamp or metadata; returns 1, or 0 when there is none.

        Retyping to a built-in type sets its fixed opposite; an omitted opposite keeps the stored
        one. The target's status follows the new type.
        """
        relation_changes(None, None, relation_type, opposite_relation_type, timestamp, metadata)  # checks first
        with self._write():
            row = self._owned_relation(relation_id, thread_id)
            if row is None:
                return 0
            changes = relation_changes(
                row["relation_type"], row["opposite_type"], relation_type, opposite_relation_type, timestamp, metadata
            )
            assignments = ", ".join(f"{column} = :{column}" for column in changes)
            self._conn.execute(
                f"UPDATE {self._relations} SET {assignments} WHERE id = :id", {**changes, "id": row["id"]}
            )
            self._recount_lifecycle([row["target_id"]])
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
    ) -> int:
        """Delete one relation, by id alone or by its complete tuple in the stored direction."""
        endpoint = (source_record_id, source_record_type, target_record_id, target_record_type, relation_type)
        check_relation_selector(relation_id, endpoint)
        with self._write():
            if relation_id is NOT_SET:
                found = self._conn.execute(
                    f"SELECT id FROM {self._relations} WHERE source_id = ? AND source_type = ? AND target_id = ? "
                    "AND target_type = ? AND relation_type = ?",
                    endpoint,
                ).fetchone()
                if found is None:
                    return 0
                relation_id = found[0]
            row = self._owned_relation(relation_id, thread_id)
            if row is None:
                return 0
            self._conn.execute(f"DELETE FROM {self._relations} WHERE id = ?", (row["id"],))
            self._recount_lifecycle([row["target_id"]])
        return 1

    def list_relations(
        self,
        record_id: Any = NOT_SET,
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        limit: int | None = DEFAULT_LIST_LIMIT,
        cursor: str | None = None,
    ) -> Page:
        """Relations in creation order: of one memory (either end), and/or of a scope.

        A relation is in a scope when either of its memories matches every scope value given
        (None = unscoped on that dimension).
        """
        check_positive_int("limit", limit, allow_none=True)
        where, params = [], {}
        if record_id is not NOT_SET:
            where.append("(rel.source_id = :record_id OR rel.target_id = :record_id)")
            params["record_id"] = record_id
        scope = {"thread_id": thread_id, "user_id": user_id, "agent_id": agent_id}
        in_scope = relation_scope_condition(scope, params)
        if in_scope is not None:
            where.append(in_scope)
        if cursor is not None:
            where.append("rel.rowid > :after")
            params["after"] = decode_cursor(cursor, 1)[0]
        sql = (
            f"SELECT rel.rowid AS position, rel.* FROM {self._relations} rel "
            f"JOIN {self._records} s ON s.kind = 'memory' AND s.id = rel.source_id "
            f"JOIN {self._records} t ON t.kind = 'memory' AND t.id = rel.target_id "
            f"{'WHERE ' + ' AND '.join(where) if where else ''} ORDER BY rel.rowid"
        )
        rows = self._query(sql + ("" if limit is None else f" LIMIT {limit + 1}"), params)
        more = limit is not None and len(rows) > limit
        rows = rows[:limit]
        return Page([self._relation(row) for row in rows], encode_cursor(rows[-1]["position"]) if more else None)

    def _attach_linked(
        self,
        hits: list[SearchHit],
        cache: SearchCache,
        linked_mask: Any,
        query_unit: Any,
        num_hops: int,
        max_linked_results: int,
    ) -> None:
        """Grow each direct memory result's linked-result tree (graph.py) into its record.

        The trees are grown from the link index and the cache's rows; records are read once at
        the end, for the memories the trees keep.
        """
        roots = [hit[0].id for hit in hits if hit[0].record_type in MEMORY_TYPES]
        rows: dict[str, int | None] = {}
        admitted: set[str] = set()

        link_index = self._link_index()

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
        records = {record.id: record for record in self._records_by_pk(cache.pks[node_rows].tolist()).values()}
        distances = dict(zip(kept, cache.distances(node_rows, query_unit), strict=True))
        relations = {node.relation: link_index.relation(node.relation) for node in nodes}
        attach_trees(
            hits, trees, {memory_id: (records[memory_id], distances[memory_id]) for memory_id in kept}, relations
        )

    # --- threads ----------------------------------------------------------------------------

    def save_thread(
        self, thread_id: str, user_id: str | None, agent_id: str | None, metadata: Any, settings: dict
    ) -> ThreadRecord:
        """Create the thread unless it exists; returns the stored thread either way."""
        for name, value in (("thread_id", thread_id), ("user_id", user_id), ("agent_id", agent_id)):
            check_scope_value(name, value)
        now = utc_now()
        with self._write():
            self._conn.execute(
                f"INSERT OR IGNORE INTO {self._threads} (id, user_id, agent_id, metadata, settings, created_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (thread_id, user_id, agent_id, dump_metadata(metadata), json.dumps(settings), now, now),
            )
        return self.get_thread(thread_id)

    def get_thread(self, thread_id: str) -> ThreadRecord | None:
        rows = self._query(f"{self._thread_select()} WHERE t.id = :id", {"id": thread_id, "now": utc_now()})
        return self._thread_record(rows[0]) if rows else None

    def update_thread(self, thread_id: str, metadata: Any = NOT_SET, settings: Any = NOT_SET) -> int:
        changes = thread_changes(metadata, settings)
        assignments = ", ".join(f"{column} = :{column}" for column in changes)
        with self._write():
            return self._conn.execute(
                f"UPDATE {self._threads} SET {assignments}, updated_at = :now WHERE id = :id",
                {**changes, "now": utc_now(), "id": thread_id},
            ).rowcount

    def save_thread_summary(self, thread_id: str, summary: str | None, topics: list[str] | None = None) -> int:
        """Persist a thread's summary and topics (None clears them); returns 1, or 0 for no thread."""
        topics_json = summary_topics(summary, topics)
        with self._write():
            return self._conn.execute(
                f"UPDATE {self._threads} SET summary = ?, topics = ? WHERE id = ?",
                (summary, topics_json, thread_id),
            ).rowcount

    def save_thread_state(self, thread_id: str, key: str, state: dict[str, Any]) -> int:
        """Merge `state` into the thread's settings under `key`, leaving its activity time alone.

        The engine keeps its own bookkeeping here (how far extraction and the summary have got);
        returns 1, or 0 when there is no such thread.
        """
        if not isinstance(state, dict):
            raise ValueError("state must be a dict")
        with self._write():
            return self._conn.execute(
                f"UPDATE {self._threads} SET settings = json_patch(settings, ?) WHERE id = ?",
                (json.dumps({key: state}), thread_id),
            ).rowcount

    def _thread_select(self) -> str:
        return (
            f"SELECT t.*, (SELECT count(*) FROM {self._records} m WHERE m.thread_id = t.id AND m.kind = 'message' "
            f"AND (m.expires_at IS NULL OR m.expires_at > :now)) AS message_count FROM {self._threads} t"
        )

    @staticmethod
    def _thread_record(row: sqlite3.Row) -> ThreadRecord:
        return ThreadRecord(
            id=row["id"],
            thread_id=row["id"],
            user_id=row["user_id"],
            agent_id=row["agent_id"],
            metadata=json.loads(row["metadata"]) if row["metadata"] else None,
            settings=json.loads(row["settings"]),
            created_at=row["created_at"],
            timestamp=row["created_at"],
            updated_at=row["updated_at"],
            message_count=row["message_count"],
            summary=row["summary"],
            topics=json.loads(row["topics"]) if row["topics"] else None,
        )

    def list_threads(
        self,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata_filter: Any = NOT_SET,
        limit: int | None = DEFAULT_LIST_LIMIT,
        cursor: str | None = None,
    ) -> Page:
        """Threads, latest activity first; `cursor` continues from an earlier page."""
        check_positive_int("limit", limit, allow_none=True)
        where, params = [], {"now": utc_now()}
        for column, value in (("user_id", user_id), ("agent_id", agent_id)):
            if value is not NOT_SET:
                check_scope_value(column, value)
                where.append(scope_condition(f"t.{column}", column, value, params))
        if metadata_filter is not NOT_SET and metadata_filter is not None:
            compiler = SQLiteFilterCompiler()
            where.append(compiler.compile(parse_filter(metadata_filter), "t.metadata"))
            params.update(compiler.params)
        if cursor is not None:
            updated_at, last_id = decode_cursor(cursor, 2)
            where.append("(t.updated_at < :c_updated OR (t.updated_at = :c_updated AND t.id < :c_id))")
            params.update(c_updated=updated_at, c_id=last_id)
        sql = f"{self._thread_select()} {'WHERE ' + ' AND '.join(where) if where else ''} "
        sql += "ORDER BY t.updated_at DESC, t.id DESC"
        rows = self._query(sql + ("" if limit is None else f" LIMIT {limit + 1}"), params)
        records = [self._thread_record(row) for row in rows[:limit]]
        more = limit is not None and len(rows) > limit
        return Page(records, encode_cursor(records[-1].updated_at, records[-1].id) if more else None)

    def _list_owners(self, column: str, profile_type: str, limit: int | None, cursor: str | None) -> Page:
        check_positive_int("limit", limit, allow_none=True)
        after = decode_cursor(cursor, 1)[0] if cursor is not None else ""
        sql = (
            f"WITH owners AS (SELECT {column} AS id FROM {self._threads} WHERE {column} IS NOT NULL "
            f"UNION SELECT {column} FROM {self._records} WHERE {column} IS NOT NULL) "
            f"SELECT o.id, p.content, p.metadata, p.created_at FROM owners o LEFT JOIN {self._records} p "
            f"ON p.kind = :kind AND p.id = o.id WHERE o.id > :after ORDER BY o.id"
        )
        rows = self._query(
            sql + ("" if limit is None else f" LIMIT {limit + 1}"), {"kind": profile_type, "after": after}
        )
        cls = UserProfileRecord if profile_type == USER_PROFILE_TYPE else AgentProfileRecord
        records = [
            cls(
                id=row["id"],
                content=row["content"] or "",
                metadata=json.loads(row["metadata"]) if row["metadata"] else None,
                created_at=row["created_at"],
                timestamp=row["created_at"],
            )
            for row in rows[:limit]
        ]
        more = limit is not None and len(rows) > limit
        return Page(records, encode_cursor(records[-1].id) if more else None)

    def list_users(self, limit: int | None = DEFAULT_LIST_LIMIT, cursor: str | None = None) -> Page:
        """Every user id that owns a profile, thread or record, by id, with its profile text if any."""
        return self._list_owners("user_id", USER_PROFILE_TYPE, limit, cursor)

    def list_agents(self, limit: int | None = DEFAULT_LIST_LIMIT, cursor: str | None = None) -> Page:
        """Every agent id that owns a profile, thread or record, by id, with its profile text if any."""
        return self._list_owners("agent_id", AGENT_PROFILE_TYPE, limit, cursor)

    # --- reads ------------------------------------------------------------------------------

    def _record(self, row: sqlite3.Row) -> Record:
        return build_record(row, timestamp=row["timestamp"], created_at=row["created_at"])

    def align_image_expiry(self, message_ids: Sequence[str]) -> None:
        """Give the images of these messages their message's expiry: they live and go together."""
        with self._write():
            self._conn.execute(
                f"UPDATE {self._records} SET expires_at = (SELECT m.expires_at FROM {self._records} m "
                f"WHERE m.kind = 'message' AND m.id = {self._records}.message_id) "
                "WHERE kind = 'image' AND message_id IN (SELECT value FROM json_each(?))",
                (json.dumps(list(message_ids)),),
            )

    def image_bytes(self, image_ids: Sequence[str]) -> dict[str, bytes]:
        """The stored bytes of these images (live or not), by id."""
        rows = self._query(
            f"SELECT r.id, b.bytes FROM {self._records} r JOIN {self._image_bytes} b ON b.record_pk = r.pk "
            "WHERE r.kind = 'image' AND r.id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(image_ids)),),
        )
        return {row[0]: row[1] for row in rows}

    def get(self, record_type: str, record_id: str, include_bytes: bool = False) -> Record | None:
        """One live record by type and id, or None. `include_bytes` matters for images only."""
        if record_type == "thread":
            return self.get_thread(record_id)
        check_record_type(record_type)
        if not isinstance(record_id, str):
            raise ValueError(f"record_id must be a string, not {type(record_id).__name__}")
        rows = self._query(
            f"SELECT {_RECORD_COLUMNS} FROM {self._records} WHERE kind = ? AND id = ? AND record_type = ? "
            "AND (expires_at IS NULL OR expires_at > ?)",
            (kind_of(record_type), record_id, record_type, utc_now()),
        )
        return self._with_bytes([self._record(rows[0])], include_bytes)[0] if rows else None

    def list(
        self,
        record_type: str | Sequence[str],
        limit: int | None = DEFAULT_LIST_LIMIT,
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata_filter: Any = NOT_SET,
        include_bytes: bool = False,
        record_id: Any = NOT_SET,
        *,
        cursor: str | None = None,
        include_expired: bool = False,
    ) -> Page:
        """Records of one or more types in insertion order, with exact scope filters.

        Scope arguments are exact: omitted means any, None means unscoped. `metadata_filter=None`
        means records without metadata (none stored, or an empty object), unlike in searches.
        """
        types = check_record_types(record_type)
        check_positive_int("limit", limit, allow_none=True)
        where = ["r.record_type IN (" + ",".join(f":t{i}" for i in range(len(types))) + ")"]
        params: dict[str, Any] = {f"t{i}": t for i, t in enumerate(types)}
        for column, value in (("thread_id", thread_id), ("user_id", user_id), ("agent_id", agent_id)):
            if value is not NOT_SET:
                check_scope_value(column, value)
                where.append(scope_condition(f"r.{column}", column, value, params))
        if record_id is not NOT_SET:
            ids = record_id_list(record_id)
            where.append("r.id IN (SELECT value FROM json_each(:record_ids))")
            params["record_ids"] = json.dumps(ids)
        if metadata_filter is None:
            where.append("(r.metadata IS NULL OR r.metadata = '{}')")
        elif metadata_filter is not NOT_SET:
            compiler = SQLiteFilterCompiler()
            where.append(compiler.compile(parse_filter(metadata_filter), "r.metadata"))
            params.update(compiler.params)
        if not include_expired:
            where.append("(r.expires_at IS NULL OR r.expires_at > :now)")
            params["now"] = utc_now()
        if cursor is not None:
            where.append("r.pk > :after")
            params["after"] = decode_cursor(cursor, 1)[0]
        sql = f"SELECT {_RECORD_COLUMNS} FROM {self._records} r WHERE {' AND '.join(where)} ORDER BY r.pk"
        rows = self._query(sql + ("" if limit is None else f" LIMIT {limit + 1}"), params)
        more = limit is not None and len(rows) > limit
        rows = rows[:limit]
        records = self._with_bytes([self._record(row) for row in rows], include_bytes)
        return Page(records, encode_cursor(rows[-1]["pk"]) if more else None)

    def list_thread_messages(
        self,
        thread_id: str,
        last_n: int | None = None,
        range_start_seq_no: int | None = None,
        range_end_seq_no: int | None = None,
        include_bytes: bool = False,
    ) -> list[MessageRecord]:
        """A thread's live messages in order; `last_n` keeps the newest n, the range is [start, end)."""
        check_scope_value("thread_id", thread_id)
        check_positive_int("last_n", last_n, allow_none=True)
        where = ["thread_id = :thread_id", "kind = 'message'", "(expires_at IS NULL OR expires_at > :now)"]
        params: dict[str, Any] = {"thread_id": thread_id, "now": utc_now()}
        where += seq_range_conditions("seq_no", range_start_seq_no, range_end_seq_no, params)
        sql = f"SELECT {_RECORD_COLUMNS} FROM {self._records} WHERE {' AND '.join(where)} ORDER BY seq_no DESC"
        rows = self._query(sql + ("" if last_n is None else f" LIMIT {last_n}"), params)
        return [self._record(row) for row in reversed(rows)]

    def thread_message_window(self, thread_id: str, offset: int, limit: int | None) -> list[MessageRecord]:
        """A slice of a thread's live messages by position (0 = oldest), for Thread.get_messages."""
        sql = (
            f"SELECT {_RECORD_COLUMNS} FROM {self._records} WHERE thread_id = :thread_id AND kind = 'message' "
            f"AND (expires_at IS NULL OR expires_at > :now) ORDER BY seq_no LIMIT :limit OFFSET :offset"
        )
        rows = self._query(
            sql, {"thread_id": thread_id, "now": utc_now(), "offset": offset, "limit": -1 if limit is None else limit}
        )
        return [self._record(row) for row in rows]

    def count_thread_messages(self, thread_id: str) -> int:
        rows = self._query(
            f"SELECT count(*) FROM {self._records} WHERE thread_id = ? AND kind = 'message' "
            "AND (expires_at IS NULL OR expires_at > ?)",
            (thread_id, utc_now()),
        )
        return rows[0][0]

    # --- search -----------------------------------------------------------------------------

    def _search(
        self, request: SearchRequest, k: int, num_hops: int, max_linked_results: int, include_invalid_results: bool
    ) -> list[tuple[Record, float]]:
        query, vector, strategy = request.query, request.vector, request.strategy
        scope, types, tree = request.scope, request.types, request.tree
        if strategy is not SearchStrategy.KEYWORD and vector is None:
            vector = self._embed([query])[0]
        allowed = self._metadata_matches(tree) if tree is not None else None
        depth = max(k, CANDIDATE_DEPTH)
        by_vector: list[tuple[int, float]] = []
        by_keyword: list[tuple[int, float]] = []
        # One lock for the whole search: the cache's rows must not move between filtering and linking.
        with self._lock:
            cache = self._search_cache()
            now = time.time()
            mask = cache.filter_mask(types, scope.exact, include_invalid_results, now, allowed)
            unit = None if vector is None else normalize_rows(vector[None, :])[0]
            if strategy is not SearchStrategy.KEYWORD:
                by_vector = cache.vector_top_k(unit, mask, depth)
            if strategy is not SearchStrategy.VECTOR:
                by_keyword = cache.keyword_top_k(query, mask, depth)
            ranked = fuse_rankings(strategy, by_vector, by_keyword)[:k]
            records = self._records_by_pk([pk for pk, _, _ in ranked])
            hits = [SearchHit(records[pk], distance, parts) for pk, distance, parts in ranked if pk in records]
            if num_hops and max_linked_results:
                # Linked memories pass every filter but status: history stays visible as context.
                linked_mask = (
                    mask if include_invalid_results else cache.filter_mask(types, scope.exact, True, now, allowed)
                )
                self._attach_linked(hits, cache, linked_mask, unit, num_hops, max_linked_results)
        return hits

    def _metadata_matches(self, tree: Any) -> np.ndarray:
        """The keys of the rows whose metadata passes the filter (compiled to SQL), in order."""
        compiler = SQLiteFilterCompiler()
        condition = compiler.compile(tree, "r.metadata")
        rows = self._query(f"SELECT r.pk FROM {self._records} r WHERE {condition} ORDER BY r.pk", compiler.params)
        return np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))

    def _records_by_pk(self, pks: list[int]) -> dict[int, Record]:
        if not pks:
            return {}
        marks = ",".join("?" * len(pks))
        rows = self._query(f"SELECT {_RECORD_COLUMNS} FROM {self._records} WHERE pk IN ({marks})", pks)
        return {row["pk"]: self._record(row) for row in rows}
