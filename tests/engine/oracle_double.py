"""A stand-in for a python-oracledb connection that records every statement and its binds.

OracleDBMemoryStore runs its real code path against it without a server: each statement and its
bind values are kept in `statements`, and queries are answered from scripted rows (`answer`),
so a test can follow one store operation through every SQL statement it sends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Statement:
    sql: str
    binds: Any  # a dict for execute, a list of dicts for executemany
    many: bool = False
    input_sizes: dict[str, Any] = field(default_factory=dict)


class RecordingCursor:
    def __init__(self, connection: RecordingConnection) -> None:
        self.connection = connection
        self.description: list[tuple[str]] | None = None
        self.rowcount = 0
        self._rows: list[tuple] = []
        self._input_sizes: dict[str, Any] = {}

    def setinputsizes(self, *args: Any, **sizes: Any) -> None:
        self._input_sizes = dict(sizes)

    def execute(self, sql: str, parameters: Any = None, **options: Any) -> None:
        self.connection.statements.append(Statement(sql, dict(parameters or {}), input_sizes=self._input_sizes))
        self._input_sizes = {}
        rows = self.connection.rows_for(sql)
        self.description = [(name.upper(),) for name in rows[0]] if rows else [("ANSWER",)]
        self._rows = [tuple(row.values()) for row in rows]
        self.rowcount = self.connection.rowcount

    def executemany(self, sql: str, parameters: Any, **options: Any) -> None:
        self.connection.statements.append(
            Statement(sql, [dict(p) for p in parameters], many=True, input_sizes=self._input_sizes)
        )
        self.rowcount = len(parameters)

    def fetchall(self) -> list[tuple]:
        rows, self._rows = self._rows, []
        return rows


class RecordingConnection:
    """Records statements; answers a query with the rows of the first script whose pattern it matches."""

    def __init__(self) -> None:
        self.statements: list[Statement] = []
        self.scripts: list[tuple[re.Pattern, list[dict[str, Any]]]] = []
        self.rowcount = 1
        self.commits = 0
        self.rollbacks = 0
        self.closed = False

    def answer(self, pattern: str, rows: list[dict[str, Any]]) -> None:
        """Answer queries matching `pattern` (a regex searched in the SQL) with `rows` (dicts, in order)."""
        self.scripts.insert(0, (re.compile(pattern, re.DOTALL), rows))

    def rows_for(self, sql: str) -> list[dict[str, Any]]:
        for pattern, rows in self.scripts:
            if pattern.search(sql):
                return rows
        return []

    def cursor(self) -> RecordingCursor:
        return RecordingCursor(self)

    def commit(self) -> None:
        self.commits += 1

    def rollback(self) -> None:
        self.rollbacks += 1

    def close(self) -> None:
        self.closed = True


def managed_schema(connection: RecordingConnection, store_names: list[str], dim: int, embedder: str) -> None:
    """Script the answers of an existing, current managed schema (the store's checks then pass)."""
    connection.answer(r"FROM user_tables", [{"table_name": name} for name in store_names])
    connection.answer(
        r"SELECT meta_key, meta_value FROM",
        [
            {"meta_key": "schema_version", "meta_value": "1"},
            {"meta_key": "vector_dim", "meta_value": str(dim)},
            {"meta_key": "embedder", "meta_value": embedder},
        ],
    )
