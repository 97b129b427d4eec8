"""What the SQL store needs to know about one database (a SQLDialect per database)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np


class SQLDialect(ABC):
    """What SQLMemoryStore needs to know about one database: SQL fragments and value conversions.

    Fragments take bind names (without the colon) or SQL expressions, never user values.
    """

    name: str
    """The database's name, as StoreStats.backend reports it."""
    from_nothing = ""
    """What a SELECT of expressions alone needs after them (Oracle: FROM dual)."""

    @abstractmethod
    def utc_day(self, expression: str) -> str:
        """A timestamp column's UTC day as YYYY-MM-DD text."""

    @abstractmethod
    def schema(self, prefix: str, vector_dim: int, vector_index: bool, keyword_index: bool) -> Any:
        """The managed schema: `.names`, `.text_index`, `.create_sql()`, `.drop_sql()`, `.text_index_sql()`."""

    @abstractmethod
    def cursor(self, connection: Any) -> Any:
        """A cursor of `connection`, set up for this database's bind types."""

    @abstractmethod
    def begin(self, cursor: Any, changes_table: str | None) -> None:
        """Start a write transaction that holds the store's write lock until it ends (None: a
        schema change, before the change log may exist).

        Writers are serialised so that change-log entries commit in sequence order: a reader
        that has seen entry n has seen every entry below it.
        """

    def begin_read(self, cursor: Any) -> bool:
        """Start a read of one consistent snapshot if the database needs a statement for it;
        returns whether the read must be ended (rolled back)."""
        return False

    def release_savepoint(self, cursor: Any, name: str) -> None:  # noqa: B027 (Oracle has no RELEASE)
        """Forget a savepoint whose part of the transaction succeeded, where the database keeps them."""

    @abstractmethod
    def declare(self, cursor: Any, binds: Iterable[str]) -> None:
        """Declare the types of the record binds among `binds` that need it (large text, vectors)."""

    def insert_rows(
        self, cursor: Any, table: str, values: Mapping[str, list], batch_size: int
    ) -> tuple[int, int] | None:
        """Insert rows given column by column (`values`: one list per column, as many rows each),
        `batch_size` rows per executemany, with named binds (a dict per row).

        Returns the (first, last) key of the new rows when the database tells it without a query,
        else None: the caller then finds them by id.
        """
        columns = list(values)
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(':' + column for column in columns)})"
        rows = [dict(zip(columns, row, strict=True)) for row in zip(*values.values(), strict=True)]
        self.declare(cursor, columns)
        for start in range(0, len(rows), batch_size):
            cursor.executemany(sql, rows[start : start + batch_size])
        return None

    @abstractmethod
    def tables_sql(self, bind: str) -> str:
        """A query of the existing tables (column table_name) among the names of a JSON array bind."""

    @abstractmethod
    def text_index_sql(self) -> str | None:
        """A query counting the keyword indexes named by :name (column n) and those of them the
        database marks as failed (column failed); None if keywords are unsupported."""

    def connected(self, cursor: Any) -> None:  # noqa: B027 (a hook: most databases need nothing)
        """Learn what the server allows, once, when the store opens and checks its schema (never
        under SchemaPolicy.NO_CHECK, which sends nothing); nothing by default."""

    def text_index_refresh(self, text_index: str, records: str, keys_bind: str | None) -> list[str]:
        """Statements re-indexing the records whose pks a JSON array bind holds (None: all of
        them), for a text index kept from the change log; none where the database keeps it."""
        return []

    def purge_text_index_sql(self, text_index: str) -> list[str]:
        """Statements that rid the keyword index of deleted rows' words (which text indexes keep
        until their segments are merged), run in a write transaction; none without a keyword index."""
        return []

    @abstractmethod
    def ids(self, bind: str, numeric: bool = False) -> str:
        """A subquery of the values of a JSON array bind."""

    @abstractmethod
    def id_rows(self, bind: str) -> str:
        """A table expression with one row (column v) per value of a JSON array bind."""

    @abstractmethod
    def json_text(self, expression: str) -> str:
        """A JSON column's value as JSON text."""

    @abstractmethod
    def json_merge_patch(self, column: str, bind: str) -> str:
        """The JSON column merged with the JSON text of a bind (RFC 7396)."""

    @abstractmethod
    def json_array_items(self, column: str, path: str, alias: str) -> tuple[str, str, str]:
        """The scalar items of the JSON array at `path` (a fixed literal such as '$.tags') of each
        row's `column`, as (a table expression named `alias`, joined beside the row; the item's
        expression; a condition keeping only the items of an array). None when it is missing."""

    @abstractmethod
    def is_empty_object(self, column: str) -> str:
        """A condition: the JSON column holds {}."""

    @abstractmethod
    def contains_text(self, expression: str, pattern: str) -> tuple[str, dict[str, Any]]:
        """A condition: the Unicode lower case of a text (or CLOB) expression is LIKE `pattern`
        (already lower case, wildcards escaped with a backslash), bound as :text_pattern; and the
        binds it needs besides."""

    @abstractmethod
    def first_rows(self, count: str) -> str:
        """A clause keeping the first `count` rows (a bind reference or a literal)."""

    @abstractmethod
    def offset_rows(self, offset: str, count: str | None) -> str:
        """A clause skipping `offset` rows and keeping `count` (None: all the rest)."""

    @abstractmethod
    def vector_distance(self, column: str, bind: str) -> str:
        """The cosine distance between a vector column and a vector bind."""

    def vector_pair_distance(self, left: str, right: str) -> str | None:
        """The cosine distance of two vector columns in SQL, or None when the database has no
        native one (SQLite's is a Python function: a self-join would call it once per pair)."""
        return None

    @abstractmethod
    def vector_dimension(self, column: str) -> str:
        """The number of dimensions of a (non-NULL) vector column's value."""

    def vector_hint(self, alias: str, approximate_accuracy: int | None) -> str:
        """An optimizer hint for a vector top-k over `alias` (text that follows SELECT), or ''."""
        return ""

    @abstractmethod
    def top_k(self, depth_bind: str, approximate_accuracy: int | None) -> str:
        """ORDER BY distance and the row limit of a vector top-k (exact, or approximate)."""

    @abstractmethod
    def keyword_query(self, text: str) -> str | None:
        """The text index's query for a search text (its words, none of them syntax), or None."""

    @abstractmethod
    def keyword_join(self, text_index: str, bind: str) -> tuple[str, str, str]:
        """(join, condition, score) ranking records r by the text index against a query bind."""

    @abstractmethod
    def insert_if_absent(self, table: str, keys: Sequence[str], values: Mapping[str, str]) -> str:
        """INSERT of `values` (column → SQL expression) unless a row with the same keys exists."""

    @abstractmethod
    def upsert(
        self,
        table: str,
        keys: Sequence[str],
        values: Mapping[str, str],
        updates: Sequence[str],
        increments: Sequence[str] = (),
    ) -> str:
        """INSERT of `values`, or UPDATE of the `updates` columns of the row with the same keys,
        adding 1 to its `increments` columns."""

    for_update = ""
    """The locking clause of a read before an update in the same transaction."""

    @abstractmethod
    def filter_compiler(self, bind_prefix: str = "mf") -> Any:
        """A metadata filter compiler (filters.py) with `.compile(tree, column)` and `.params`."""

    @abstractmethod
    def db_time(self, value: str | None) -> Any:
        """Canonical UTC text (ttl.format_utc) as this database's timestamp bind."""

    @abstractmethod
    def text_time(self, value: Any) -> str | None:
        """A timestamp column's value as canonical UTC text."""

    @abstractmethod
    def vector(self, values: np.ndarray | None) -> Any:
        """A FLOAT32 vector bind."""

    @abstractmethod
    def is_unique_violation(self, exc: Exception) -> bool: ...

    @abstractmethod
    def is_name_in_use(self, exc: Exception) -> bool:
        """A CREATE found its object already there (another process created it at the same time)."""
