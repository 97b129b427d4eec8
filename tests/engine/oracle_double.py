"""A stand-in for a python-oracledb connection that records every statement and its binds.

OracleDBMemoryStore runs its real code path against it without a server: each statement and its
bind values are kept in `statements`, and queries are answered from scripted rows (`answer`),
so a test can follow one store operation through every SQL statement it sends. `fail` makes
statements matching a pattern raise (as the driver would), `RecordingPool` stands in for a
connection pool, and `ora_error` builds the error python-oracledb raises for an ORA- code.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from memory.engine.stores.sql import SCHEMA_VERSION


@dataclass
class Statement:
    sql: str
    binds: Any  # a dict for execute, a list of dicts for executemany
    many: bool = False
    input_sizes: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)  # keyword options of execute (fetch_lobs, ...)
    input_type_handler: Any = None  # the cursor's or connection's inputtypehandler in force, if any


def ora_error(code: int, message: str = "") -> Exception:
    """The exception python-oracledb raises for ORA-<code>: `exc.args[0].code == code`."""
    import oracledb

    text = message or f"ORA-{code:05d}: simulated error"
    return oracledb.DatabaseError(SimpleNamespace(code=code, message=text, full_code=f"ORA-{code:05d}"))


class RecordingCursor:
    def __init__(self, connection: RecordingConnection) -> None:
        self.connection = connection
        self.description: list[tuple[str]] | None = None
        self.rowcount = 0
        self._rows: list[tuple] = []
        self._pending_sizes: dict[str, Any] | None = None
        self._input_sizes: dict[str, Any] = {}
        self._statement: str | None = None
        self.inputtypehandler: Any = None

    def var(self, typ: Any, size: int = 0, arraysize: int = 1, **options: Any) -> SimpleNamespace:
        """A bind variable of type `typ` (what an input type handler returns)."""
        return SimpleNamespace(type=typ, size=size, arraysize=arraysize, options=options)

    def _handler(self) -> Any:
        return self.inputtypehandler or getattr(self.connection, "inputtypehandler", None)

    def setinputsizes(self, *args: Any, **sizes: Any) -> None:
        self._pending_sizes = dict(sizes)

    def _sizes_for(self, sql: str) -> dict[str, Any]:
        """The input sizes in force, as python-oracledb keeps them: set by setinputsizes() for the next
        execution, kept while the same statement is executed again, dropped when the statement changes."""
        if self._pending_sizes is not None:
            self._input_sizes, self._pending_sizes = self._pending_sizes, None
        elif sql != self._statement:
            self._input_sizes = {}
        self._statement = sql
        return self._input_sizes

    def execute(self, sql: str, parameters: Any = None, **options: Any) -> None:
        statement = Statement(
            sql,
            dict(parameters or {}),
            input_sizes=self._sizes_for(sql),
            options=dict(options),
            input_type_handler=self._handler(),
        )
        self.connection.record(statement)
        rows = self.connection.rows_for(sql)
        self.description = [(name.upper(),) for name in rows[0]] if rows else [("ANSWER",)]
        self._rows = [tuple(row.values()) for row in rows]
        self.rowcount = self.connection.rowcount

    def executemany(self, sql: str, parameters: Any, **options: Any) -> None:
        statement = Statement(
            sql,
            [dict(p) for p in parameters],
            many=True,
            input_sizes=self._sizes_for(sql),
            options=dict(options),
            input_type_handler=self._handler(),
        )
        self.connection.record(statement)
        self.rowcount = len(parameters)

    def fetchall(self) -> list[tuple]:
        rows, self._rows = self._rows, []
        return rows


class RecordingConnection:
    """Records statements; answers a query with the rows of the first script whose pattern it matches."""

    def __init__(self, delay: float = 0.0) -> None:
        self.statements: list[Statement] = []
        self.scripts: list[tuple[re.Pattern, list[dict[str, Any]], bool]] = []
        self.failures: list[tuple[re.Pattern, Exception]] = []
        self.rowcount = 1
        self.commits = 0
        self.rollbacks = 0
        self.closed = False
        # Concurrency probe: each statement holds the "session" for `delay` seconds; `max_active`
        # is the largest number of statements seen running at once (a session runs one at a time).
        self.delay = delay
        self.active = 0
        self.max_active = 0
        self._probe = threading.Lock()
        self.inputtypehandler: Any = None

    def answer(self, pattern: str, rows: list[dict[str, Any]], *, once: bool = False) -> None:
        """Answer queries matching `pattern` (a regex searched in the SQL) with `rows` (dicts, in order).

        Later scripts take precedence; a `once` script answers a single query and is then dropped.
        """
        self.scripts.insert(0, (re.compile(pattern, re.DOTALL), rows, once))

    def fail(self, pattern: str, error: Exception) -> None:
        """Make every statement matching `pattern` raise `error` (after it is recorded)."""
        self.failures.append((re.compile(pattern, re.DOTALL), error))

    def record(self, statement: Statement) -> None:
        with self._probe:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            if self.delay:
                time.sleep(self.delay)
            self.statements.append(statement)
        finally:
            with self._probe:
                self.active -= 1
        for pattern, error in self.failures:
            if pattern.search(statement.sql):
                raise error

    def rows_for(self, sql: str) -> list[dict[str, Any]]:
        for i, (pattern, rows, once) in enumerate(self.scripts):
            if pattern.search(sql):
                if once:
                    del self.scripts[i]
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


class RecordingPool:
    """A stand-in for an oracledb ConnectionPool: hands out `connection` and counts acquire/release."""

    def __init__(self, connection: RecordingConnection) -> None:
        self.connection = connection
        self.acquired = 0
        self.released = 0
        self.closed = False

    @property
    def busy(self) -> int:
        return self.acquired - self.released

    def acquire(self) -> RecordingConnection:
        self.acquired += 1
        return self.connection

    def release(self, connection: RecordingConnection) -> None:
        assert connection is self.connection, "released a connection this pool did not hand out"
        self.released += 1

    def close(self) -> None:
        self.closed = True


def managed_schema(connection: RecordingConnection, store_names: list[str], dim: int, embedder: str) -> None:
    """Script the answers of an existing, current managed schema (the store's checks then pass)."""
    connection.answer(r"FROM user_tables", [{"table_name": name} for name in store_names])
    connection.answer(
        r"SELECT meta_key, meta_value FROM",
        [
            {"meta_key": "schema_version", "meta_value": str(SCHEMA_VERSION)},
            {"meta_key": "vector_dim", "meta_value": str(dim)},
            {"meta_key": "embedder", "meta_value": embedder},
        ],
    )
