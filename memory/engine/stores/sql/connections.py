"""Connections and transactions of the SQL store."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import Any


class ConnectionMixin:
    """SQLMemoryStore's connections and transactions: sessions from the pool (or the one
    connection), transaction() blocks with their savepoints, write and read scopes."""

    # --- connections ------------------------------------------------------------------------

    @contextmanager
    def _acquire(self) -> Iterator[Any]:
        """A connection of the pool, or the single connection under its lock."""
        if self._single_session:
            with self._session_lock:
                yield self._pool
            return
        connection = self._pool.acquire()
        try:
            yield connection
        finally:
            self._pool.release(connection)

    def _open_transaction(self) -> _Transaction | None:
        """This thread's open transaction() block, if any."""
        return self._local.__dict__.get("transaction")

    def _written(self) -> _Transaction | None:
        """This thread's open transaction() block once it has written: its changes are not
        committed yet, so its reads go through its connection and the shared index must not
        learn them."""
        current = self._open_transaction()
        return current if current is not None and current.begun else None

    @contextmanager
    def _session(self) -> Iterator[Any]:
        """A connection for one store call: the open transaction's once it has written, else one
        of its own."""
        current = self._written()
        if current is not None:
            yield current.connection
            return
        with self._acquire() as connection:
            yield connection

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """See MemoryStore.transaction. The block takes a connection and the write lock at its
        first write, so that what comes before (checks, embedding, reads) holds neither; a nested
        block is a part of the enclosing one that an error undoes alone."""
        current = self._open_transaction()
        if current is not None:
            with self._part(current):
                yield
            return
        with ExitStack() as stack:
            current = self._local.transaction = _Transaction(stack)
            try:
                yield
                current.check()
                if current.begun:
                    current.connection.commit()
            except BaseException:
                if current.begun:
                    current.connection.rollback()
                raise
            finally:
                self._local.transaction = None
        if current.activity and self.activity is not None:  # committed: its writes are recorded
            self.activity.queue(current.activity)

    @contextmanager
    def _part(self, current: _Transaction) -> Iterator[None]:
        """Run a part of the open transaction (a write, a nested block) so that an error undoes
        that part alone: back to a savepoint when the transaction wrote before it, else back to
        its start. If the database ended the whole transaction itself (SQLite does on a full
        disk), the transaction is marked failed: later writes and its commit raise."""
        if not current.begun:
            try:
                yield
            except BaseException:
                current.activity.clear()
                if current.begun:
                    current.connection.rollback()
                    current.begun = False
                raise
            return
        name = f"oam_part_{current.depth}"
        current.cursor.execute(f"SAVEPOINT {name}")
        current.depth += 1
        noted = len(current.activity)
        try:
            yield
        except BaseException:
            del current.activity[noted:]  # the part's writes are undone: so are their events
            try:
                current.cursor.execute(f"ROLLBACK TO SAVEPOINT {name}")
            except Exception as undo_error:
                current.failed = undo_error
            raise
        else:
            self.dialect.release_savepoint(current.cursor, name)
        finally:
            current.depth -= 1

    @contextmanager
    def _write(self, *, schema: bool = False) -> Iterator[Any]:
        """A cursor in one transaction: committed when the block ends, rolled back on any error.

        Writers take the store's write lock (dialect.begin) at their first statement and hold it
        to the commit, one at a time; a schema change takes no lock on the change log, which it
        may be creating. Within transaction() the write is a part of the open transaction, which
        an error undoes alone, so a caller that catches the error keeps a consistent store.
        """
        current = self._open_transaction()
        if current is None:
            with self.transaction():
                yield self._begin(schema)  # a failure rolls the whole transaction back
            return
        with self._part(current):
            yield self._begin(schema)

    def _begin(self, schema: bool) -> Any:
        """A new cursor in the open transaction, which takes its connection and the write lock
        at its first write."""
        current = self._open_transaction()
        current.check()
        if current.connection is None:
            current.connection = current.stack.enter_context(self._acquire())
            current.cursor = self.dialect.cursor(current.connection)
        if not current.begun:
            self.dialect.begin(current.cursor, None if schema else self._changes)
            current.begun = True
        return self.dialect.cursor(current.connection)

    @contextmanager
    def _read(self) -> Iterator[Any]:
        """A cursor on one consistent snapshot, for a call that reads with several statements;
        within a transaction that has written, its own uncommitted view."""
        current = self._written()
        if current is not None:
            yield self.dialect.cursor(current.connection)
            return
        with self._session() as connection:
            cursor = self.dialect.cursor(connection)
            ended = self.dialect.begin_read(cursor)
            try:
                yield cursor
            finally:
                if ended:
                    connection.rollback()

    def _fetch(self, sql: str, params: Mapping[str, Any] | None = None, cursor: Any = None) -> list[dict[str, Any]]:
        """Rows as dicts keyed by lower-case column name; LOBs arrive as str/bytes."""
        if cursor is None:
            with self._session() as connection:
                return self._fetch(sql, params, self.dialect.cursor(connection))
        cursor.execute(sql, dict(params or {}), fetch_lobs=False)
        names = [column[0].lower() for column in cursor.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def close(self) -> None:
        """Write the queued activity and stop its writer, let a search index generation being
        written finish, then close the pool or connection the store was given."""
        if self.activity is not None:
            self.activity.close()
        if self.index is not None:
            self.index.close()
        with self._session_lock:
            self._pool.close()


class _Transaction:
    """A thread's open transaction() block: the connection it takes at its first write (released
    by `stack`) with a cursor for its savepoints, whether it has begun to write (holds the write
    lock), how many parts are open inside it (savepoint names), the error that ended it if
    the database rolled it back on its own, and the activity events its writes wait to record."""

    def __init__(self, stack: ExitStack) -> None:
        self.stack = stack
        self.connection: Any = None
        self.cursor: Any = None
        self.begun = False
        self.depth = 0
        self.failed: Exception | None = None
        self.activity: list = []  # the activity drafts of its writes, queued when it commits

    def check(self) -> None:
        if self.failed is not None:
            raise RuntimeError(
                "the database rolled this transaction back after a failed write; nothing of it was stored"
            ) from self.failed
