"""SQLiteMemoryStore: the embedded backend, so the engine runs anywhere with no server.

It is SQLMemoryStore (all the store logic) with the SQLite dialect below, a small pool of
connections (one per concurrent caller: reads run in parallel under WAL, writes take the
database's write lock with BEGIN IMMEDIATE) and, by default, the in-memory search index
(index/), which answers searches at NumPy speed and is saved beside the file for fast cold
starts. Without the index, search is plain SQL: vectors compared by a registered cosine
function, keywords ranked by an FTS5 index (BM25, Porter stems), as Oracle uses Oracle Text;
FTS5 catches up from the change log when such a search needs it, so writes never pay for it.

Schema version 5 is the SQL store's schema, shared with Oracle. Files of versions 1-4 (the
earlier embedded schema) are rebuilt in place by CREATE_IF_NECESSARY, keeping every record's
key, so ids and listing cursors stay valid.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any

import numpy as np

from ..embedders import Embedder
from ..filters import SQLiteFilterCompiler
from ..ttl import utc_now
from ..types import NOT_SET, MemoryRetentionConfig, SchemaPolicy, SearchStrategy
from .index import IndexRebuild
from .keywords import query_words
from .sql import DROP_ORDER, PREFIX_PATTERN, VERSIONED_TABLES, SQLDialect, SQLMemoryStore, table_names

MMAP_BYTES = 1 << 30
MAX_BINDS = 32_766
"""Binds one statement may hold (SQLite's default limit since 3.32): a multi-row insert's rows."""
NON_ASCII_GLOB = "*[^\x01-\x7f]*"
"""Matches a text holding a character beyond ASCII."""
_BIND = re.compile(r"(?<![:\w]):(\w+)")
LEGACY_TABLES = ("meta", "threads", "records", "relations", "images")
_LEGACY_SUFFIXES = dict(
    zip(LEGACY_TABLES, ("oam_meta", "oam_threads", "oam_records", "oam_relations", "oam_image_bytes"), strict=True)
)


class SQLiteSchema:
    """The managed tables of one `table_name_prefix` in SQLite, with the Oracle schema's columns."""

    def __init__(self, prefix: str, vector_dim: int) -> None:
        if prefix and not PREFIX_PATTERN.match(prefix):
            raise ValueError(f"invalid table_name_prefix {prefix!r}")
        self.prefix = prefix
        self.names = table_names(prefix)
        self.text_index = f"{prefix.upper()}OAM_RECORDS_TEXT"
        self.staging = f"{prefix.upper()}OAM_REEMBED"
        self.vector_dim = vector_dim

    def create_sql(self) -> list[str]:
        n = {key: f'"{name}"' for key, name in self.names.items()}
        r, rel, t, fts = n["records"], n["relations"], n["threads"], f'"{self.text_index}"'
        raw = self.names
        return [
            f"CREATE TABLE IF NOT EXISTS {n['meta']} (meta_key TEXT PRIMARY KEY, meta_value TEXT)",
            f"""CREATE TABLE IF NOT EXISTS {t} (
    id TEXT PRIMARY KEY, user_id TEXT, agent_id TEXT, metadata TEXT, settings TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, next_seq_no INTEGER NOT NULL DEFAULT 0,
    summary TEXT, topics TEXT, version INTEGER NOT NULL DEFAULT 1)""",
            f'CREATE INDEX IF NOT EXISTS "{raw["threads"]}_ACTIVITY" ON {t} (updated_at, id)',
            f'CREATE INDEX IF NOT EXISTS "{raw["threads"]}_USER" ON {t} (user_id)',
            f'CREATE INDEX IF NOT EXISTS "{raw["threads"]}_AGENT" ON {t} (agent_id)',
            # AUTOINCREMENT: a key is never reused, like Oracle's identity, so cursors never skip.
            f"""CREATE TABLE IF NOT EXISTS {r} (
    pk INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, kind TEXT NOT NULL, record_type TEXT NOT NULL,
    content TEXT, index_text TEXT, index_text_empty INTEGER NOT NULL DEFAULT 0, search_text TEXT,
    parts TEXT, thread_id TEXT, user_id TEXT, agent_id TEXT,
    role TEXT, role_empty INTEGER NOT NULL DEFAULT 0, seq_no INTEGER,
    event_at TEXT, created_at TEXT NOT NULL, expires_at TEXT,
    status TEXT NOT NULL DEFAULT 'valid', lifecycle_links INTEGER NOT NULL DEFAULT 0,
    metadata TEXT, embedding BLOB, message_id TEXT, mime_type TEXT, version INTEGER NOT NULL DEFAULT 1,
    UNIQUE (kind, id))""",
            # Partial where most rows hold NULL, which SQLite then never indexes. Unlike Oracle, no
            # type index: searches here are answered by the in-memory index, listings filtered by
            # type scan in key order (types are few, so a page fills fast), and each index costs
            # ingest. The user index serves listings of one user among thousands (0.5 ms instead
            # of up to 65 ms at 100k records) for a few hundredths of ingest speed (bench/ingest.py:
            # 0.53-0.56x raw, 0.54-0.58x without it); the agent index serves the agents' list
            # and pages (owner counts and the list of owners walk it instead of the table).
            f'CREATE INDEX IF NOT EXISTS "{raw["records"]}_THREAD" ON {r} (thread_id, kind, seq_no) '
            "WHERE thread_id IS NOT NULL",
            f'CREATE INDEX IF NOT EXISTS "{raw["records"]}_EXPIRY" ON {r} (expires_at) WHERE expires_at IS NOT NULL',
            f'CREATE INDEX IF NOT EXISTS "{raw["records"]}_USER" ON {r} (user_id) WHERE user_id IS NOT NULL',
            f'CREATE INDEX IF NOT EXISTS "{raw["records"]}_AGENT" ON {r} (agent_id) WHERE agent_id IS NOT NULL',
            f'CREATE INDEX IF NOT EXISTS "{raw["records"]}_MESSAGE" ON {r} (message_id) WHERE message_id IS NOT NULL',
            # Memories by creation (kind first, so that a condition on it picks this index over the
            # (kind, id) key): what the overview's hygiene panel counts as stored before its 30 days,
            # read from the index alone, and the oldest of them, walked in order (at 100k memories,
            # 0.1 ms instead of 50-90 ms reading the table through). Memories only: a few
            # hundredths of their ingest speed (bench/ingest.py, 0.53-0.55x raw, 0.55-0.58x without).
            f'CREATE INDEX IF NOT EXISTS "{raw["records"]}_CREATED" ON {r} (kind, created_at, expires_at) '
            "WHERE kind = 'memory'",
            f"""CREATE TABLE IF NOT EXISTS {n["images"]} (
    record_pk INTEGER PRIMARY KEY REFERENCES {r} (pk) ON DELETE CASCADE, bytes BLOB NOT NULL)""",
            f"""CREATE TABLE IF NOT EXISTS {rel} (
    pos INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
    source_id TEXT NOT NULL, source_type TEXT NOT NULL, target_id TEXT NOT NULL, target_type TEXT NOT NULL,
    relation_type TEXT NOT NULL, opposite_type TEXT NOT NULL,
    event_at TEXT, metadata TEXT, created_at TEXT NOT NULL, pair TEXT NOT NULL UNIQUE,
    version INTEGER NOT NULL DEFAULT 1)""",
            f'CREATE INDEX IF NOT EXISTS "{raw["relations"]}_FROM" ON {rel} (source_id, created_at, id, target_id)',
            f'CREATE INDEX IF NOT EXISTS "{raw["relations"]}_TO" ON {rel} (target_id, created_at, id, source_id)',
            # No AUTOINCREMENT needed: trimming never removes the newest entry, so no seq is reused.
            f"""CREATE TABLE IF NOT EXISTS {n["changes"]} (
    seq INTEGER PRIMARY KEY, entity TEXT NOT NULL, first_key INTEGER NOT NULL, last_key INTEGER NOT NULL)""",
            # The activity log (sql/activity.py): a row per call, and a row per record it returned or changed.
            f"""CREATE TABLE IF NOT EXISTS {n["activity"]} (
    pk INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, entry_point TEXT NOT NULL,
    event_at TEXT NOT NULL, caller TEXT NOT NULL, caller_kind TEXT NOT NULL, on_behalf_of TEXT,
    user_id TEXT, agent_id TEXT, thread_id TEXT, query_text TEXT, request TEXT, results TEXT,
    result_count INTEGER NOT NULL DEFAULT 0, content TEXT, content_chars INTEGER NOT NULL DEFAULT 0,
    tokens INTEGER NOT NULL DEFAULT 0, duration_ms REAL NOT NULL DEFAULT 0, cause TEXT, history_ref TEXT)""",
            # Listings run newest first by (event_at, pk): each index ends with the rowid, the pk.
            f'CREATE INDEX IF NOT EXISTS "{raw["activity"]}_AT" ON {n["activity"]} (event_at)',
            f'CREATE INDEX IF NOT EXISTS "{raw["activity"]}_CALLER_AT" ON {n["activity"]} (caller, event_at)',
            f'CREATE INDEX IF NOT EXISTS "{raw["activity"]}_THREAD_AT" ON {n["activity"]} (thread_id, event_at) '
            "WHERE thread_id IS NOT NULL",
            # Their first forms, by pk alone (schema 7 as first released).
            f'DROP INDEX IF EXISTS "{raw["activity"]}_CALLER"',
            f'DROP INDEX IF EXISTS "{raw["activity"]}_THREAD"',
            f"""CREATE TABLE IF NOT EXISTS {n["activity_records"]} (
    event_pk INTEGER NOT NULL REFERENCES {n["activity"]} (pk) ON DELETE CASCADE, result_pos INTEGER NOT NULL,
    record_id TEXT NOT NULL, record_type TEXT NOT NULL, result_rank INTEGER, hop INTEGER NOT NULL DEFAULT 0,
    status TEXT, kind TEXT NOT NULL, event_at TEXT NOT NULL, caller TEXT NOT NULL, caller_kind TEXT NOT NULL,
    PRIMARY KEY (event_pk, result_pos)) WITHOUT ROWID""",
            f'CREATE INDEX IF NOT EXISTS "{raw["activity_records"]}_RECORD" ON {n["activity_records"]} '
            "(record_id, event_at)",
            f'CREATE INDEX IF NOT EXISTS "{raw["activity_records"]}_AT" ON {n["activity_records"]} (event_at)',
            # Sensitive-data findings (sql/findings.py): they go with their record.
            f"""CREATE TABLE IF NOT EXISTS {n["findings"]} (
    pk INTEGER PRIMARY KEY AUTOINCREMENT, record_pk INTEGER NOT NULL REFERENCES {r} (pk) ON DELETE CASCADE,
    field TEXT NOT NULL, kind TEXT NOT NULL, span_start INTEGER NOT NULL, span_end INTEGER NOT NULL,
    preview TEXT NOT NULL, digest TEXT NOT NULL, found_at TEXT NOT NULL)""",
            f'CREATE INDEX IF NOT EXISTS "{raw["findings"]}_RECORD" ON {n["findings"]} (record_pk)',
            # The keyword index: FTS5 over search_text. It is brought up to date from the change log
            # when a plain-SQL keyword search needs it (text_index_refresh), not by a trigger per row:
            # stores searching from their in-memory index (the default) never pay for it.
            f"""CREATE VIRTUAL TABLE IF NOT EXISTS {fts} USING fts5(
    search_text, tokenize='porter unicode61 remove_diacritics 2')""",
        ]

    def text_index_sql(self) -> None:
        return None  # part of create_sql: FTS5 is always there

    def upgrade_sql(self, cursor: Any) -> list[str]:
        """What a schema of version 5 lacks (run inside the caller's transaction): the record,
        thread and relation versions (schema 6), each row starting at 1."""
        statements = []
        for key in VERSIONED_TABLES:
            cursor.execute(f"SELECT name FROM pragma_table_info('{self.names[key]}')")
            if "version" not in {row[0] for row in cursor.fetchall()}:
                statements.append(f'ALTER TABLE "{self.names[key]}" ADD COLUMN version INTEGER NOT NULL DEFAULT 1')
        return statements

    def staging_sql(self, vector_dim: int) -> list[str]:
        """A new, empty staging table for re-embedding (SQLMemoryStore.reembed): a vector per record key."""
        return [
            *self.drop_staging_sql(),
            f'CREATE TABLE "{self.staging}" (pk INTEGER PRIMARY KEY, version INTEGER NOT NULL, embedding BLOB)',
        ]

    def drop_staging_sql(self) -> list[str]:
        return [f'DROP TABLE IF EXISTS "{self.staging}"']

    def drop_sql(self) -> list[str]:
        tables = [f'DROP TABLE IF EXISTS "{self.text_index}"', *self.drop_staging_sql()]
        return tables + [f'DROP TABLE IF EXISTS "{self.names[key]}"' for key in DROP_ORDER]

    # --- versions 1-4: the earlier embedded schema --------------------------------------------

    def _legacy(self) -> dict[str, str]:
        return {key: f"{self.prefix.lower()}{suffix}" for key, suffix in _LEGACY_SUFFIXES.items()}

    def legacy_version(self, cursor: Any) -> int | None:
        """The version of an earlier embedded schema under this prefix (its meta has key/value), or None."""
        meta = self._legacy()["meta"]
        cursor.execute(f"SELECT name FROM pragma_table_info('{meta}')")
        if "key" not in {row[0] for row in cursor.fetchall()}:
            return None
        cursor.execute(f"SELECT value FROM \"{meta}\" WHERE key = 'schema_version'")
        row = cursor.fetchall()
        return int(row[0][0]) if row else 0

    def upgrade(self, cursor: Any) -> None:
        """Rebuild a version 1-4 schema as version 5 inside the caller's transaction, keys intact."""
        version = self.legacy_version(cursor)
        if version is None:
            return
        old = self._legacy()
        r, t, rel = old["records"], old["threads"], old["relations"]
        cursor.execute(f'DROP TABLE IF EXISTS "{r}_fts"')  # version 1's FTS index
        for trigger in ("fts_delete", "fts_update", "images", "unlink"):
            cursor.execute(f'DROP TRIGGER IF EXISTS "{r}_{trigger}"')
        for table, columns in (
            (r, {"lifecycle_links": "INTEGER NOT NULL DEFAULT 0", "message_id": "TEXT", "mime_type": "TEXT"}),
            (t, {"summary": "TEXT", "topics": "TEXT"}),
        ):  # columns versions 1-3 lack
            cursor.execute(f"SELECT name FROM pragma_table_info('{table}')")
            present = {row[0] for row in cursor.fetchall()}
            for column, declaration in columns.items():
                if column not in present:
                    cursor.execute(f'ALTER TABLE "{table}" ADD COLUMN {column} {declaration}')
        cursor.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN "
            f"('{r}', '{t}', '{rel}')"
        )
        for (index,) in cursor.fetchall():  # their names would collide with version 5's
            cursor.execute(f'DROP INDEX "{index}"')
        for table in old.values():
            cursor.execute(f'ALTER TABLE "{table}" RENAME TO "{table}_v{version}"')
        for statement in self.create_sql():
            cursor.execute(statement)
        n = {key: f'"{name}"' for key, name in self.names.items()}
        v = {key: f'"{table}_v{version}"' for key, table in old.items()}
        cursor.execute(f"INSERT INTO {n['meta']} (meta_key, meta_value) SELECT key, value FROM {v['meta']}")
        columns = "id, user_id, agent_id, metadata, settings, created_at, updated_at, next_seq_no, summary, topics"
        cursor.execute(f"INSERT INTO {n['threads']} ({columns}) SELECT {columns} FROM {v['threads']}")
        cursor.execute(
            f"""INSERT INTO {n["records"]} (pk, id, kind, record_type, content, index_text, index_text_empty,
    search_text, parts, thread_id, user_id, agent_id, role, role_empty, seq_no, event_at, created_at, expires_at,
    status, lifecycle_links, metadata, embedding, message_id, mime_type)
SELECT pk, id, kind, record_type, NULLIF(content, ''), NULLIF(index_text, ''), COALESCE(index_text = '', 0),
    NULLIF(COALESCE(index_text, content), ''), parts, thread_id, user_id, agent_id, NULLIF(role, ''),
    COALESCE(role = '', 0), seq_no, timestamp, created_at, expires_at, status, lifecycle_links, metadata, embedding,
    message_id, mime_type
FROM {v["records"]} ORDER BY pk"""
        )
        cursor.execute(f"INSERT INTO {n['images']} (record_pk, bytes) SELECT record_pk, bytes FROM {v['images']}")
        cursor.execute(
            f"""INSERT INTO {n["relations"]} (pos, id, source_id, source_type, target_id, target_type, relation_type,
    opposite_type, event_at, metadata, created_at, pair)
SELECT rowid, id, source_id, source_type, target_id, target_type, relation_type, opposite_type, timestamp, metadata,
    created_at, pair FROM {v["relations"]} ORDER BY rowid"""
        )
        for table in ("images", "relations", "records", "threads", "meta"):
            cursor.execute(f"DROP TABLE {v[table]}")


class SQLiteDialect(SQLDialect):
    """SQLite 3.38+ (JSON functions built in, FTS5), through SQLitePool or SQLiteConnection."""

    name = "sqlite"

    def utc_day(self, expression: str) -> str:
        return f"substr({expression}, 1, 10)"  # canonical UTC text starts with the day

    def schema(self, prefix: str, vector_dim: int, vector_index: bool, keyword_index: bool) -> SQLiteSchema:
        return SQLiteSchema(prefix, vector_dim)

    def cursor(self, connection: Any) -> Any:
        return connection.cursor()

    def begin(self, cursor: Any, changes_table: str | None) -> None:
        """Take the write lock at once: a transaction that read first could not upgrade to write."""
        cursor.execute("BEGIN IMMEDIATE")

    def release_savepoint(self, cursor: Any, name: str) -> None:
        cursor.execute(f"RELEASE SAVEPOINT {name}")

    def begin_read(self, cursor: Any) -> bool:
        """One snapshot for a search's several statements (WAL readers never wait on the writer)."""
        cursor.execute("BEGIN")
        return True

    def declare(self, cursor: Any, binds: Iterable[str]) -> None:
        """SQLite binds by value: nothing to declare."""

    def insert_rows(self, cursor: Any, table: str, values: Mapping[str, list], batch_size: int) -> tuple[int, int]:
        """Insert with positional binds, leaving out the columns that are None in every row (the
        store inserts None only into columns that default to NULL): a dict per row, and a bind per
        empty column, cost a bulk insert a fifth of its time (bench/ingest.py). Many rows go in one
        statement (VALUES (...), (...)): executemany takes Python's GIL back at every row, and a
        writer thread (the activity recorder's) then makes the searches beside it wait that often.

        The keys come from last_insert_rowid(), not from looking the rows up by id (a tenth of the
        insert's time): the writer holds the write lock, so the new rows took consecutive keys.
        """
        given = {column: column_values for column, column_values in values.items() if _has_value(column_values)}
        rows = list(zip(*given.values(), strict=True))
        row = f"({', '.join(['?'] * len(given))})"
        per_statement = max(1, min(batch_size, MAX_BINDS // len(given)))
        for start in range(0, len(rows), per_statement):
            batch = rows[start : start + per_statement]
            cursor.execute(
                f"INSERT INTO {table} ({', '.join(given)}) VALUES {', '.join([row] * len(batch))}",
                [value for values_of_row in batch for value in values_of_row],
            )
        cursor.execute("SELECT last_insert_rowid()")
        [(last,)] = cursor.fetchall()
        return last - len(rows) + 1, last

    def tables_sql(self, bind: str) -> str:
        return f"SELECT name AS table_name FROM sqlite_master WHERE type = 'table' AND name IN ({self.ids(bind)})"

    def text_index_sql(self) -> str:
        return "SELECT count(*) AS n, 0 AS failed FROM sqlite_master WHERE type = 'table' AND name = :name"

    def text_index_refresh(self, text_index: str, records: str, keys_bind: str | None) -> list[str]:
        """Re-index the records whose pks a JSON array bind holds (None: every record)."""
        fts = f'"{text_index}"'
        if keys_bind is None:
            return [
                f"DELETE FROM {fts}",
                f"INSERT INTO {fts} (rowid, search_text) SELECT pk, search_text FROM {records}",
            ]
        keys = self.ids(keys_bind)
        return [
            f"DELETE FROM {fts} WHERE rowid IN ({keys})",
            f"INSERT INTO {fts} (rowid, search_text) SELECT pk, search_text FROM {records} "
            f"WHERE pk IN ({keys}) AND search_text IS NOT NULL",
        ]

    def purge_text_index_sql(self, text_index: str) -> list[str]:
        """FTS5's 'optimize' merges its segments into one, leaving out every deleted row's words."""
        return [f'INSERT INTO "{text_index}" ("{text_index}") VALUES (\'optimize\')']

    def ids(self, bind: str, numeric: bool = False) -> str:
        return f"SELECT value FROM json_each(:{bind})"

    def id_rows(self, bind: str) -> str:
        return f"(SELECT value AS v FROM json_each(:{bind}))"

    def json_text(self, expression: str) -> str:
        return expression

    def json_merge_patch(self, column: str, bind: str) -> str:
        return f"json_patch(COALESCE({column}, '{{}}'), :{bind})"

    def json_array_items(self, column: str, path: str, alias: str) -> tuple[str, str, str]:
        # json_each of something that is no array gives an object's members or the scalar itself:
        # only an array's scalar items count.
        return (
            f"json_each({column}, '{path}') {alias}",
            f"CAST({alias}.value AS TEXT)",
            f"json_type({column}, '{path}') = 'array' AND {alias}.type IN ('text', 'integer', 'real')",
        )

    def is_empty_object(self, column: str) -> str:
        return f"{column} = '{{}}'"

    def contains_text(self, expression: str, pattern: str) -> tuple[str, dict[str, Any]]:
        """SQLite's own LIKE ignores the case of ASCII letters only, so Unicode lower case is a
        Python function (oam_lower), which costs a call per row. For an ASCII pattern, rows of
        ASCII text are matched by LIKE alone, in C; only rows holding other characters (found by
        a GLOB, in C too) go through oam_lower, whose lower case may turn them into the pattern
        (the Kelvin sign into k)."""
        unicode_match = f"oam_lower({expression}) LIKE :text_pattern ESCAPE '\\'"
        if not pattern.isascii():
            return unicode_match, {}
        return (
            f"({expression} LIKE :text_pattern ESCAPE '\\' OR ({expression} GLOB :text_non_ascii AND {unicode_match}))",
            {"text_non_ascii": NON_ASCII_GLOB},
        )

    def first_rows(self, count: str) -> str:
        return f" LIMIT {count}"

    def offset_rows(self, offset: str, count: str | None) -> str:
        return f" LIMIT {count or -1} OFFSET {offset}"

    def vector_distance(self, column: str, bind: str) -> str:
        return f"oam_cosine_distance({column}, :{bind})"

    def vector_dimension(self, column: str) -> str:
        return f"(LENGTH({column}) / 4.0)"  # float32 blobs; a torn blob has a fractional count

    def top_k(self, depth_bind: str, approximate_accuracy: int | None) -> str:
        return f"ORDER BY distance, r.pk LIMIT :{depth_bind}"

    def keyword_query(self, text: str) -> str | None:
        """An FTS5 query OR-ing the query's words, each quoted (so no word is FTS5 syntax)."""
        terms = query_words(text)
        return " OR ".join(f'"{term}"' for term in dict.fromkeys(terms)) if terms else None

    def keyword_join(self, text_index: str, bind: str) -> tuple[str, str, str]:
        fts = f'"{text_index}"'
        return f" JOIN {fts} ON {fts}.rowid = r.pk", f"{fts} MATCH :{bind}", f"-bm25({fts})"

    def insert_if_absent(self, table: str, keys: Sequence[str], values: Mapping[str, str]) -> str:
        return (
            f"INSERT INTO {table} ({', '.join(values)}) VALUES ({', '.join(values.values())}) "
            f"ON CONFLICT ({', '.join(keys)}) DO NOTHING"
        )

    def upsert(
        self,
        table: str,
        keys: Sequence[str],
        values: Mapping[str, str],
        updates: Sequence[str],
        increments: Sequence[str] = (),
    ) -> str:
        assignments = ", ".join(
            [f"{column} = excluded.{column}" for column in updates]
            + [f"{column} = {column} + 1" for column in increments]
        )
        return (
            f"INSERT INTO {table} ({', '.join(values)}) VALUES ({', '.join(values.values())}) "
            f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {assignments}"
        )

    def filter_compiler(self, bind_prefix: str = "mf") -> SQLiteFilterCompiler:
        return SQLiteFilterCompiler(bind_prefix)

    def db_time(self, value: str | None) -> str | None:
        return value  # canonical UTC text is fixed-width: text order is time order

    def text_time(self, value: str | None) -> str | None:
        return value

    def vector(self, values: np.ndarray | None) -> bytes | None:
        return None if values is None else np.asarray(values, dtype=np.float32).tobytes()

    def is_unique_violation(self, exc: Exception) -> bool:
        return isinstance(exc, sqlite3.IntegrityError) and "UNIQUE constraint failed" in str(exc)

    def is_name_in_use(self, exc: Exception) -> bool:
        return False  # CREATE ... IF NOT EXISTS never finds its object in the way


def _has_value(column_values: list) -> bool:
    """Whether a column's values are not all None (the first test settles most columns)."""
    return column_values[0] is not None or column_values.count(None) < len(column_values)


def _lower(value: Any) -> Any:
    """Python's Unicode lower case (as Oracle's LOWER): text searches match É with é."""
    return value.lower() if isinstance(value, str) else value


def _cosine_distance(stored: bytes | None, query: bytes | None) -> float | None:
    """1 - cosine similarity of two float32 vectors (stored ones are unit length, the query too)."""
    if stored is None or query is None:
        return None
    return float(1.0 - np.dot(np.frombuffer(stored, dtype=np.float32), np.frombuffer(query, dtype=np.float32)))


class _Cursor:
    """An sqlite3 cursor with python-oracledb's call shapes (fetch options, input sizes)."""

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor

    def execute(self, sql: str, parameters: Any = None, **options: Any) -> None:
        self._cursor.execute(sql, parameters or {})

    def executemany(self, sql: str, parameters: Any, **options: Any) -> None:
        """Named binds go as positional ones: sqlite3 binds a tuple in two thirds of the time of a
        dict, which is a tenth of a batch insert (the SQL names binds only outside literals)."""
        rows = list(parameters)
        if not rows or not isinstance(rows[0], Mapping):
            self._cursor.executemany(sql, rows)
            return
        names = _BIND.findall(sql)
        values = itemgetter(*names) if len(names) > 1 else lambda row: (row[names[0]],)
        self._cursor.executemany(_BIND.sub("?", sql), [values(row) for row in rows])

    def setinputsizes(self, *args: Any, **sizes: Any) -> None:
        pass

    def fetchall(self) -> list:
        return self._cursor.fetchall()

    @property
    def description(self) -> Any:
        return self._cursor.description

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount


class SQLiteConnection:
    """One SQLite connection shaped like a python-oracledb connection, in autocommit mode.

    Transactions are explicit (the dialect's BEGIN IMMEDIATE or BEGIN; commit/rollback end them).
    """

    def __init__(self, path: str) -> None:
        self._connection = sqlite3.connect(
            path, check_same_thread=False, isolation_level=None, uri=path.startswith("file:")
        )
        # secure_delete FAST: a deleted row's bytes are zeroed in the pages that keep living (no
        # extra I/O); pages freed whole may still hold them, which scrub_files' VACUUM rewrites.
        pragmas = ("foreign_keys = ON", "busy_timeout = 10000", "cache_size = -65536", "secure_delete = FAST")
        for pragma in pragmas:
            self._connection.execute(f"PRAGMA {pragma}")
        if not _in_memory(path):
            # In WAL mode readers never wait for the writer; NORMAL keeps the file consistent through
            # crashes (only the latest commits may be lost on power failure) without an fsync per commit.
            self._connection.execute("PRAGMA journal_mode = WAL")
            self._connection.execute("PRAGMA synchronous = NORMAL")
            # Checkpoint every ~40 MB of WAL rather than 4 MB, and read pages through a memory map.
            self._connection.execute("PRAGMA wal_autocheckpoint = 10000")
            self._connection.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        self._connection.create_function("oam_cosine_distance", 2, _cosine_distance, deterministic=True)
        self._connection.create_function("oam_lower", 1, _lower, deterministic=True)

    def cursor(self) -> _Cursor:
        return _Cursor(self._connection.cursor())

    def run(self, sql: str) -> list[tuple]:
        """One statement outside any transaction (a PRAGMA, VACUUM), with its rows."""
        return self._connection.execute(sql).fetchall()

    def commit(self) -> None:
        self._connection.commit()

    def rollback(self) -> None:
        self._connection.rollback()

    def close(self) -> None:
        self._connection.close()


class SQLitePool:
    """Connections to one SQLite file, handed out one per concurrent caller (acquire/release).

    A connection serves one thread at a time; idle ones are kept for reuse, so a process holds
    as many as it ever had concurrent store calls.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._idle: list[SQLiteConnection] = []
        self._all: list[SQLiteConnection] = []
        self._lock = threading.Lock()
        self.release(self.acquire())  # fail now, not at the first call, on a bad path

    def acquire(self) -> SQLiteConnection:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        connection = SQLiteConnection(self.path)
        with self._lock:
            self._all.append(connection)
        return connection

    def release(self, connection: SQLiteConnection) -> None:
        with self._lock:
            self._idle.append(connection)

    def close(self) -> None:
        with self._lock:
            for connection in self._all:
                connection.close()
            self._all, self._idle = [], []


def _remove_single_file_index(path: str) -> None:
    """Remove the index an earlier version kept beside the store (one .npz file and a .npy
    of vectors named after it; 1.9 GB at 1M records): generations in a folder replace it."""
    for old in [path, *glob.glob(f"{glob.escape(path)}.*.npy")]:
        with contextlib.suppress(OSError):
            os.remove(old)


def _in_memory(path: str) -> bool:
    return path == ":memory:" or path.startswith("file::memory:") or "mode=memory" in path


class SQLiteMemoryStore(SQLMemoryStore):
    """Records, threads and profiles in one SQLite file (or in memory).

    `path` is a file path or ":memory:". `embedder=None` uses the local HashingEmbedder. A file
    is served by a pool of connections (concurrent reads, serialised writes; several processes
    may open it); ":memory:" by one connection, one call at a time. `search_index` (default on)
    answers searches from the in-memory index; its generations go to the folder
    `search_index_path` (default: beside the file, "<path>.<prefix>oam-index"; none for
    ":memory:"), and a new one is written as `search_index_rebuild` (IndexRebuild) says.
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
        *,
        search_index: bool = True,
        search_index_path: str | None = None,
        search_index_rebuild: IndexRebuild | None = None,
    ) -> None:
        if not isinstance(path, str) or not path:
            raise ValueError(f"path must be a file path or ':memory:', not {path!r}")
        self.path = path
        in_memory = _in_memory(path)
        pool = SQLiteConnection(path) if in_memory else SQLitePool(path)
        if search_index_path is None and not in_memory:  # one per prefix: each holds other tables
            prefix = table_name_prefix.lower() if isinstance(table_name_prefix, str) else ""
            search_index_path = f"{path}.{prefix}oam-index"
            _remove_single_file_index(f"{search_index_path}.npz")
        try:
            super().__init__(
                SQLiteDialect(),
                embedder,
                pool,
                schema_policy,
                vector_dim,
                table_name_prefix,
                search_strategy,
                memory_retention_config,
                search_index=search_index,
                search_index_path=search_index_path,
                search_index_rebuild=search_index_rebuild,
            )
        except BaseException:
            pool.close()
            raise

    def _scrub_database_files(self, vacuum: bool | None) -> tuple[bool, bool]:
        """The file's own copies of deleted rows: the write-ahead log, checkpointed into the file
        and truncated, and free pages, which the file is rewritten without (VACUUM) when it has
        any, or when it was never rewritten so (rows deleted before secure_delete was on may
        linger in any page); `vacuum` True or False decides instead."""
        if _in_memory(self.path):
            return False, False
        with self._read() as cursor:
            scrubbed_before = self._meta_value(cursor, SCRUBBED_META) is not None
        with self._acquire() as connection:
            _checkpoint(connection)
            (free,) = connection.run("PRAGMA freelist_count")[0]
            rewrite = vacuum if vacuum is not None else bool(free) or not scrubbed_before
            if rewrite:
                connection.run("VACUUM")
        if rewrite and not scrubbed_before:
            with self._write(schema=True) as cursor:
                self._set_meta(cursor, SCRUBBED_META, utc_now())
        with self._acquire() as connection:
            _checkpoint(connection)
        return True, rewrite


SCRUBBED_META = "files_scrubbed_at"
"""The meta row of when scrub_files first rewrote the file: pages written since hold no deleted row."""


def _checkpoint(connection: SQLiteConnection, timeout: float = 30.0) -> None:
    """Every frame of the write-ahead log into the file, and the log truncated to nothing; a
    reader of another process holding an old snapshot makes it wait (TimeoutError at `timeout`)."""
    deadline = time.monotonic() + timeout
    while True:
        (busy, _, _) = connection.run("PRAGMA wal_checkpoint(TRUNCATE)")[0]
        if not busy:
            return
        if time.monotonic() > deadline:
            raise TimeoutError("the store's write-ahead log stayed in use: it could not be emptied")
        time.sleep(0.05)
