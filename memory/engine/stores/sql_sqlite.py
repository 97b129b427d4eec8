"""The SQLite dialect of SQLMemoryStore: the Oracle backend's store code, run without a server.

SQLMemoryStore holds every piece of logic OracleDBMemoryStore runs (writes, deletes and what
goes with them, relations and statuses, listings, pagination, filters before top-k, graph hops);
only the SQL dialect is Oracle's. With this dialect the conformance suite runs that same code on
an SQLite file, so a change that breaks the Oracle store's logic fails the suite here, and the
live Oracle run is left to check only the dialect. It is a verification backend, not the
embedded store (SQLiteMemoryStore is faster: it searches from in-memory indexes): it has no
keyword index, so hybrid search ranks by vectors alone, and its vector search is a scan.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..filters import SQLiteFilterCompiler
from .sql import PREFIX_PATTERN, SQLDialect, table_names


class SQLiteSchema:
    """The managed tables of SQLMemoryStore in SQLite, with the Oracle schema's columns."""

    def __init__(self, prefix: str, vector_dim: int) -> None:
        if prefix and not PREFIX_PATTERN.match(prefix):
            raise ValueError(f"invalid table_name_prefix {prefix!r}")
        self.names = table_names(prefix)
        self.text_index = f"{prefix.upper()}OAM_RECORDS_TEXT"  # never created: no keyword index here
        self.vector_dim = vector_dim

    def create_sql(self) -> list[str]:
        n = {key: f'"{name}"' for key, name in self.names.items()}
        r = n["records"]
        return [
            f"CREATE TABLE IF NOT EXISTS {n['meta']} (meta_key TEXT PRIMARY KEY, meta_value TEXT)",
            f"""CREATE TABLE IF NOT EXISTS {n["threads"]} (
    id TEXT PRIMARY KEY, user_id TEXT, agent_id TEXT, metadata TEXT, settings TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, next_seq_no INTEGER NOT NULL DEFAULT 0,
    summary TEXT, topics TEXT)""",
            f"""CREATE TABLE IF NOT EXISTS {r} (
    pk INTEGER PRIMARY KEY, id TEXT NOT NULL, kind TEXT NOT NULL, record_type TEXT NOT NULL,
    content TEXT, index_text TEXT, index_text_empty INTEGER NOT NULL DEFAULT 0, search_text TEXT,
    parts TEXT, thread_id TEXT, user_id TEXT, agent_id TEXT,
    role TEXT, role_empty INTEGER NOT NULL DEFAULT 0, seq_no INTEGER,
    event_at TEXT, created_at TEXT NOT NULL, expires_at TEXT,
    status TEXT NOT NULL DEFAULT 'valid', lifecycle_links INTEGER NOT NULL DEFAULT 0,
    metadata TEXT, embedding BLOB, message_id TEXT, mime_type TEXT, UNIQUE (kind, id))""",
            f'CREATE INDEX IF NOT EXISTS "{self.names["records"]}_THREAD" ON {r} (thread_id, kind, seq_no)',
            f"""CREATE TABLE IF NOT EXISTS {n["images"]} (
    record_pk INTEGER PRIMARY KEY REFERENCES {r} (pk) ON DELETE CASCADE, bytes BLOB NOT NULL)""",
            f"""CREATE TABLE IF NOT EXISTS {n["relations"]} (
    pos INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
    source_id TEXT NOT NULL, source_type TEXT NOT NULL, target_id TEXT NOT NULL, target_type TEXT NOT NULL,
    relation_type TEXT NOT NULL, opposite_type TEXT NOT NULL,
    event_at TEXT, metadata TEXT, created_at TEXT NOT NULL, pair TEXT NOT NULL UNIQUE)""",
        ]

    def text_index_sql(self) -> None:
        return None

    def drop_sql(self) -> list[str]:
        return [
            f'DROP TABLE IF EXISTS "{self.names[key]}"' for key in ("images", "relations", "records", "threads", "meta")
        ]


class SQLiteDialect(SQLDialect):
    """SQLite 3.38+ (JSON functions built in), through `connect_sqlite`."""

    def schema(self, prefix: str, vector_dim: int, vector_index: bool, keyword_index: bool) -> SQLiteSchema:
        return SQLiteSchema(prefix, vector_dim)

    def cursor(self, connection: Any) -> Any:
        return connection.cursor()

    def declare(self, cursor: Any, binds: Iterable[str]) -> None:
        """SQLite binds by value: nothing to declare."""

    def tables_sql(self, bind: str) -> str:
        return f"SELECT name AS table_name FROM sqlite_master WHERE type = 'table' AND name IN ({self.ids(bind)})"

    def text_index_sql(self) -> None:
        return None

    def ids(self, bind: str, numeric: bool = False) -> str:
        return f"SELECT value FROM json_each(:{bind})"

    def id_rows(self, bind: str) -> str:
        return f"(SELECT value AS v FROM json_each(:{bind}))"

    def json_text(self, expression: str) -> str:
        return expression

    def json_merge_patch(self, column: str, bind: str) -> str:
        return f"json_patch(COALESCE({column}, '{{}}'), :{bind})"

    def is_empty_object(self, column: str) -> str:
        return f"{column} = '{{}}'"

    def first_rows(self, count: str) -> str:
        return f" LIMIT {count}"

    def offset_rows(self, offset: str, count: str | None) -> str:
        return f" LIMIT {count or -1} OFFSET {offset}"

    def vector_distance(self, column: str, bind: str) -> str:
        return f"oam_cosine_distance({column}, :{bind})"

    def top_k(self, depth_bind: str, approximate_accuracy: int | None) -> str:
        return f"ORDER BY distance, r.pk LIMIT :{depth_bind}"

    def insert_if_absent(self, table: str, keys: Sequence[str], values: Mapping[str, str]) -> str:
        return (
            f"INSERT INTO {table} ({', '.join(values)}) VALUES ({', '.join(values.values())}) "
            f"ON CONFLICT ({', '.join(keys)}) DO NOTHING"
        )

    def upsert(self, table: str, keys: Sequence[str], values: Mapping[str, str], updates: Sequence[str]) -> str:
        assignments = ", ".join(f"{column} = excluded.{column}" for column in updates)
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
        return isinstance(exc, sqlite3.IntegrityError)

    def is_name_in_use(self, exc: Exception) -> bool:
        return False  # CREATE ... IF NOT EXISTS never finds its object in the way


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
        self._cursor.executemany(sql, parameters)

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
    """One SQLite connection shaped like a python-oracledb connection, for SQLMemoryStore."""

    def __init__(self, path: str) -> None:
        self._connection = sqlite3.connect(path, check_same_thread=False)
        self._connection.execute("PRAGMA foreign_keys = ON")
        self._connection.execute("PRAGMA busy_timeout = 10000")
        self._connection.create_function("oam_cosine_distance", 2, _cosine_distance, deterministic=True)

    def cursor(self) -> _Cursor:
        return _Cursor(self._connection.cursor())

    def commit(self) -> None:
        self._connection.commit()

    def rollback(self) -> None:
        self._connection.rollback()

    def close(self) -> None:
        self._connection.close()
