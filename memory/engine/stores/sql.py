"""SQLMemoryStore: the engine's store logic in SQL, the one store of every backend.

Every filter (scope, type, status, expiry, metadata) is a WHERE condition evaluated before the
top-k, vectors are compared in the database, the keyword half of hybrid search uses the
database's text index (Oracle Text, SQLite FTS5), and a graph hop is one query. User values only
ever travel as bind variables; the only names built into SQL are the table names from
`table_name_prefix` (validated, then quoted) and metadata keys (validated, then quoted in JSON
paths, see filters.json_path_step).

What differs between databases is a `SQLDialect`: SQLite's (stores/sqlite.py) and Oracle's
(stores/oracle.py). SQLiteMemoryStore and OracleDBMemoryStore are this store with a dialect, a
connection source and options.

Optionally an in-memory index (stores/index/) answers searches instead of SQL. It stays in step
through the change log: every write appends the keys of the records and links it changed to a
table, in the same transaction, and the index applies what it has not seen before each search,
whichever process wrote.

Oracle stores '' as NULL, and both databases follow that one layout: content reads NULL back as
'', and the two text columns where '' and None differ (index_text, role) have a flag column
marking an explicit ''.
"""

from __future__ import annotations

import copy
import json
import logging
import math
import re
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

import numpy as np

from ..duplicates import DISTANCE_TOLERANCE, MAX_PAIRS, check_pair_count, group_rows, similar_pairs, unit_rows
from ..embedders import Embedder, HashingEmbedder
from ..filters import parse_filter
from ..graph import GraphLink, grow_trees, walk_nodes
from ..images import CheckedImage
from ..limits import MAX_INT, check_id, check_int_range, dump_metadata
from ..scope import check_scope_value
from ..snapshot import RestorePlan, Snapshot, plan_restore, snapshot_pairs
from ..ttl import expiry, normalize_timestamp, utc_now
from ..types import (
    AGENT_PROFILE_TYPE,
    IMAGE_TYPE,
    LIFECYCLE_RELATIONS,
    MEMORY_TYPES,
    MESSAGE_TYPE,
    NOT_SET,
    RECORD_TYPES,
    USER_PROFILE_TYPE,
    AgentProfileRecord,
    CheckFinding,
    CheckReport,
    DuplicateGroup,
    Duplicates,
    ImageRecord,
    Lifecycle,
    MemoryGraph,
    MemoryRetentionConfig,
    MessageRecord,
    Page,
    Record,
    RecordRelation,
    RecordStatus,
    ReembedReport,
    RestoreReport,
    SchemaPolicy,
    SearchStrategy,
    StoreHealth,
    StoreStats,
    ThreadRecord,
    UserProfileRecord,
    VectorState,
    check_bool,
    coerce_enum,
)
from .arguments import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_DUPLICATE_DISTANCE,
    DEFAULT_DUPLICATE_GROUPS,
    DEFAULT_GRAPH_NODES,
    DEFAULT_LIST_LIMIT,
    DeleteScope,
    DuplicatesRequest,
    GraphRequest,
    SearchRequest,
    check_link_end,
    check_link_end_found,
    check_positive_int,
    check_profile,
    check_record_type,
    check_record_types,
    check_relation_selector,
    check_version,
    decode_cursor,
    delete_scope,
    dump_parts,
    duplicates_request,
    encode_cursor,
    expected_version_of,
    graph_request,
    kind_of,
    like_pattern,
    listing_status,
    memory_id_list,
    normalize_rows,
    record_id_list,
    relation_type_list,
    storable_id,
    to_vector,
    token_list,
)
from .base import EmbedderMismatchError, MemoryStore, SchemaError
from .index import LogState, MemoryIndex, changed_keys
from .plans import (
    AddPlan,
    NewRecord,
    prepare_update,
    relation_changes,
    relation_labels_of,
    relation_values,
    summary_topics,
    thread_changes,
)
from .ranking import CANDIDATE_DEPTH, fuse_rankings
from .rows import (
    SearchHit,
    attach_trees,
    build_graph,
    build_record,
    relation_scope_condition,
    scope_condition,
    seq_range_conditions,
)

log = logging.getLogger(__name__)

SCHEMA_VERSION = 6
"""5: one schema for SQLite and Oracle, with the change log (1-4 were the embedded store's own);
6: a version on every record, thread and relation (optimistic concurrency)."""
VERSIONED_TABLES = ("threads", "records", "relations")
"""The tables whose rows carry a version (schema 6)."""
PREFIX_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,29}$")
TABLE_KEYS = ("meta", "threads", "records", "relations", "images", "changes")
STATS_MEMO_SIZE = 64
"""stats() keeps the counts of this many scopes (all cleared when full)."""
CHANGE_LOG_KEEP = 100_000
"""The change log keeps this many newest entries; an index further behind reloads instead."""
_LIFECYCLE_SQL = "(" + ", ".join(f"'{name}'" for name in LIFECYCLE_RELATIONS) + ")"
EFFECTIVE_STATUS_SQL = "CASE WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END"
"""D2: invalid when set so, or while a supersedes/refines/duplicates link points at the record."""
INVALID_SQL = "(r.status <> 'valid' OR r.lifecycle_links <> 0)"
"""The records whose effective status is invalid; SQLite's partial index of them has this condition."""
LISTING_STATUSES = ("valid", "invalid", "expired")
REEMBED_TARGET = "reembed_target"
OUTCOME_PREFIX = "outcome:"
"""Meta keys of the outcomes of changes recorded elsewhere (settle_outcome), after this prefix the token."""
OUTCOMES = ("committed", "aborted")
"""The meta row naming the embedder (JSON: embedder, vector_dim) a pending re-embedding stages for."""
REEMBED_PHASE = "reembed_phase"
"""The meta row of a swap done in steps (Oracle): "filled" (new vectors in the new column), then
"switched" (columns renamed, embedder recorded) until the old column is cleaned up."""
REEMBED_ROUNDS = 3
"""Staging passes reembed makes for records changed meanwhile before it gives up (writers active)."""


def table_names(prefix: str) -> dict[str, str]:
    """The managed tables of a prefix, upper case on every database (quoted wherever they are used)."""
    p = prefix.upper()
    suffixes = ("OAM_META", "OAM_THREADS", "OAM_RECORDS", "OAM_RELATIONS", "OAM_IMAGE_BYTES", "OAM_CHANGES")
    return {key: f"{p}{suffix}" for key, suffix in zip(TABLE_KEYS, suffixes, strict=True)}


def _types_condition(alias: str, types: Sequence[str], params: dict[str, Any]) -> str:
    """`record_type IN (:type0, …)`: one bind per type (at most seven, all checked), not a JSON_TABLE
    subquery, so that Oracle's simplest plan for a filtered approximate search stays open (the
    HNSW optimizer plans exclude subqueries)."""
    binds = []
    for i, record_type in enumerate(types):
        params.setdefault(f"type{i}", record_type)
        binds.append(f":type{i}")
    return f"{alias}.record_type IN ({', '.join(binds)})"


def _ids_json(ids: Iterable[Any]) -> str:
    return json.dumps(list(ids))


def _runs(items: Sequence[Any], key: Any) -> list[list[Any]]:
    """The items cut into runs of consecutive items with the same key, in order."""
    runs: list[list[Any]] = []
    for item in items:
        if runs and key(runs[-1][0]) == key(item):
            runs[-1].append(item)
        else:
            runs.append([item])
    return runs


CHECKS = {
    "missing_vectors": ("records with text to search but no vector", True),
    "wrong_dimension": ("records whose vector has another dimension than the store's", True),
    "orphan_links": ("links with an end that no longer exists", True),
    "orphan_images": ("images whose message or thread is gone, or whose bytes are missing", False),
    "orphan_image_bytes": ("image bytes whose image record is gone", False),
    "index_out_of_step": ("records or links the in-memory index holds otherwise than the database", True),
}
"""MemoryStore.check's kinds of inconsistency, in report order: (description, repairable)."""


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


class SQLMemoryStore(MemoryStore):
    """The engine's store logic over a SQL database, for any `SQLDialect`.

    Records, threads, relations and image bytes live in tables named by the dialect's schema;
    every filter (scope, type, status, expiry, metadata) is a WHERE condition applied before the
    top-k; links are walked one query per hop. The dialect supplies what differs between
    databases: DDL, id-list and JSON functions, row limits, vector distance, keyword search,
    bind types and error codes. OracleDBMemoryStore is this store with the Oracle dialect; the
    SQLite dialect runs the same code in the conformance suite, without a server.

    `pool` is a connection pool (with acquire/release), which serves concurrent callers, or a
    single connection, whose calls are serialised with a lock. `embedder=None` uses the local
    HashingEmbedder. `search_index=True` answers searches from the in-memory index (saved to
    `search_index_path` when given, for fast cold starts).
    """

    def __init__(
        self,
        dialect: SQLDialect,
        embedder: Embedder,
        pool: Any,
        schema_policy: SchemaPolicy | str = SchemaPolicy.REQUIRE_EXISTING,
        vector_dim: int | None = None,
        table_name_prefix: Any = NOT_SET,
        search_strategy: Any = NOT_SET,
        memory_retention_config: Any = NOT_SET,
        *,
        vector_index: bool = False,
        approximate_accuracy: int | None = None,
        keyword_index: bool = True,
        search_index: bool = False,
        search_index_path: str | None = None,
    ) -> None:
        if pool is None:
            raise ValueError("pool must be a connection pool or a connection")
        if vector_dim is not None:
            check_positive_int("vector_dim", vector_dim)
        if embedder is None:
            embedder = HashingEmbedder(vector_dim or 384)
        if vector_dim is not None and embedder.dim != vector_dim:
            raise ValueError(f"vector_dim={vector_dim} does not match the embedder's dimension {embedder.dim}")
        prefix = "" if table_name_prefix is NOT_SET or table_name_prefix is None else table_name_prefix
        if prefix and (not isinstance(prefix, str) or not PREFIX_PATTERN.match(prefix)):
            raise ValueError(
                f"table_name_prefix must start with a letter and hold only letters, digits and _ "
                f"(at most 30 characters), not {prefix!r}"
            )
        if approximate_accuracy is not None and (
            isinstance(approximate_accuracy, bool)
            or not isinstance(approximate_accuracy, int)
            or not 1 <= approximate_accuracy <= 100
        ):
            raise ValueError(f"approximate_accuracy must be an integer from 1 to 100, not {approximate_accuracy!r}")
        if memory_retention_config is NOT_SET or memory_retention_config is None:
            memory_retention_config = MemoryRetentionConfig()
        if not isinstance(memory_retention_config, MemoryRetentionConfig):
            raise ValueError("memory_retention_config must be a MemoryRetentionConfig")
        self.dialect = dialect
        self.embedder = embedder
        self.vector_dim = embedder.dim
        self.schema_policy = coerce_enum(SchemaPolicy, schema_policy, "schema_policy")
        self.search_strategy = coerce_enum(
            SearchStrategy, SearchStrategy.HYBRID if search_strategy is NOT_SET else search_strategy, "search_strategy"
        )
        self.retention = memory_retention_config
        self.vector_index = bool(vector_index)
        self.approximate_accuracy = approximate_accuracy
        self.keyword_index = bool(keyword_index)
        self.index = MemoryIndex(self.vector_dim, search_index_path) if search_index else None
        self._pool = pool
        # A raw connection has no acquire(): single-session mode, one call at a time.
        self._single_session = not hasattr(pool, "acquire")
        self._session_lock = threading.RLock()
        self._local = threading.local()  # .transaction: this thread's open transaction() block
        self.schema = dialect.schema(prefix, self.vector_dim, self.vector_index, self.keyword_index)
        self._names = self.schema.names
        q = {key: f'"{name}"' for key, name in self._names.items()}
        self._meta, self._threads, self._records = q["meta"], q["threads"], q["records"]
        self._relations, self._image_bytes, self._changes = q["relations"], q["images"], q["changes"]
        self._text_index_name = self.schema.text_index
        self._has_text_index: bool | None = None
        # stats() and owner_counts(): (call, its arguments, store id, newest change) -> (value, next expiry or None)
        self._stats_memo: dict[tuple, tuple[StoreStats, str | None]] = {}
        self._stats_lock = threading.Lock()
        json_text = dialect.json_text
        self._record_columns = (
            "r.pk, r.id, r.kind, r.record_type, r.content, r.index_text, r.index_text_empty, "
            f"{json_text('r.parts')} AS parts, r.thread_id, r.user_id, r.agent_id, r.role, r.role_empty, "
            "r.seq_no, r.event_at, r.created_at, r.expires_at, "
            f"{EFFECTIVE_STATUS_SQL} AS status, {json_text('r.metadata')} AS metadata, r.message_id, r.mime_type, "
            "r.version"
        )
        self._relation_columns = (
            "rel.pos, rel.id, rel.source_id, rel.source_type, rel.target_id, rel.target_type, rel.relation_type, "
            f"rel.opposite_type, rel.event_at, {json_text('rel.metadata')} AS metadata, rel.created_at, rel.version"
        )
        self._thread_columns = (
            f"t.id, t.user_id, t.agent_id, {json_text('t.metadata')} AS metadata, "
            f"{json_text('t.settings')} AS settings, t.created_at, t.updated_at, t.summary, "
            f"{json_text('t.topics')} AS topics, t.version"
        )
        self._apply_schema_policy()

    def _in(self, column: str, bind: str, numeric: bool = False) -> str:
        """`column IN` the values of a JSON array bind: one bind whatever the number of values."""
        return f"{column} IN ({self.dialect.ids(bind, numeric)})"

    def _fetch_first(self, limit: int | None, params: dict[str, Any]) -> str:
        """A row limit of limit + 1 (the extra row tells whether a next page exists)."""
        if limit is None:
            return ""
        params["fetch_limit"] = min(limit + 1, MAX_INT)  # no table holds 2**63 rows
        return self.dialect.first_rows(":fetch_limit")

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
                if current.begun:
                    current.connection.rollback()
                    current.begun = False
                raise
            return
        name = f"oam_part_{current.depth}"
        current.cursor.execute(f"SAVEPOINT {name}")
        current.depth += 1
        try:
            yield
        except BaseException:
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
        """Save the search index's snapshot, then close the pool or connection the store was given."""
        if self.index is not None:
            self.index.save()
        with self._session_lock:
            self._pool.close()

    # --- schema -----------------------------------------------------------------------------

    def schema_sql(self) -> list[str]:
        """The DDL of the managed schema, in creation order."""
        return self.schema.create_sql()

    def _existing_tables(self, cursor: Any) -> set[str]:
        rows = self._fetch(
            self.dialect.tables_sql("names"),
            {"names": _ids_json(self._names.values())},
            cursor,
        )
        return {row["table_name"] for row in rows}

    def _apply_schema_policy(self) -> None:
        policy = self.schema_policy
        if policy is SchemaPolicy.NO_CHECK:
            return
        with self._write(schema=True) as cursor:
            existing = self._existing_tables(cursor)
            create = policy in (SchemaPolicy.RECREATE, SchemaPolicy.CREATE_IF_NECESSARY) or (
                policy is SchemaPolicy.CREATE_IF_EMPTY and not existing
            )
            if policy is SchemaPolicy.RECREATE:
                for statement in self.schema.drop_sql():
                    cursor.execute(statement)
            elif policy is SchemaPolicy.CREATE_IF_NECESSARY:
                self.schema.upgrade(cursor)  # an earlier layout, rebuilt in place
            if create:
                for statement in self.schema_sql():
                    self._run_ddl(cursor, statement)
                for key, value in (
                    ("schema_version", SCHEMA_VERSION),
                    ("vector_dim", self.vector_dim),
                    ("embedder", self.embedder.name),
                    ("store_id", str(uuid.uuid4())),  # tells an index snapshot which store it belongs to
                ):
                    self._merge_meta(cursor, key, str(value))
                # Versions 1 (Oracle's) to 5 are this layout less what creation just added (the
                # change log) and the versions, which columns with a default add to existing rows.
                if int(self._meta_value(cursor, "schema_version") or SCHEMA_VERSION) < SCHEMA_VERSION:
                    for statement in self.schema.upgrade_sql(cursor):
                        self._run_ddl(cursor, statement)
                    self._set_meta(cursor, "schema_version", str(SCHEMA_VERSION))
        self._check_schema()

    def _run_ddl(self, cursor: Any, statement: str) -> None:
        """Run one DDL statement; another process creating the same object at once is fine.

        A keyword index that cannot be built (Oracle without Oracle Text, as in slim images) is
        a notice: hybrid search then runs vector-only.
        """
        try:
            cursor.execute(statement)
        except Exception as exc:
            if self.dialect.is_name_in_use(exc):
                return
            if statement == self.schema.text_index_sql():
                log.warning("no keyword index (%s); hybrid search will rank by vectors only", exc)
                return
            raise

    def _merge_meta(self, cursor: Any, key: str, value: str) -> None:
        try:
            cursor.execute(
                self.dialect.insert_if_absent(
                    self._meta, ["meta_key"], {"meta_key": ":meta_key", "meta_value": ":meta_value"}
                ),
                {"meta_key": key, "meta_value": value},
            )
        except Exception as exc:
            if not self.dialect.is_unique_violation(exc):  # another process wrote it first: keep theirs
                raise

    def _meta_value(self, cursor: Any, key: str) -> str | None:
        rows = self._fetch(f"SELECT meta_value FROM {self._meta} WHERE meta_key = :meta_key", {"meta_key": key}, cursor)
        return rows[0]["meta_value"] if rows else None

    def _set_meta(self, cursor: Any, key: str, value: str) -> None:
        cursor.execute(
            self.dialect.upsert(
                self._meta, ["meta_key"], {"meta_key": ":meta_key", "meta_value": ":meta_value"}, ["meta_value"]
            ),
            {"meta_key": key, "meta_value": value},
        )

    def _check_schema(self) -> None:
        with self._read() as cursor:
            legacy = self.schema.legacy_version(cursor)
            missing = set(self._names.values()) - self._existing_tables(cursor)
            meta = {}
            if legacy is None and self._names["meta"] not in missing:
                meta = {
                    row["meta_key"]: row["meta_value"]
                    for row in self._fetch(f"SELECT meta_key, meta_value FROM {self._meta}", None, cursor)
                }
            self.dialect.connected(cursor)
        version = legacy if legacy is not None else int(meta.get("schema_version") or 0)
        if version and version != SCHEMA_VERSION:
            raise SchemaError(
                f"the memory schema{self._where()} is version {version}; this engine needs {SCHEMA_VERSION}"
                + (
                    " (open it once with schema_policy=SchemaPolicy.CREATE_IF_NECESSARY to upgrade it)"
                    if version < SCHEMA_VERSION
                    else ""
                )
            )
        if missing:
            raise SchemaError(
                f"the memory schema{self._where()} is missing or incomplete (no {', '.join(sorted(missing))}); "
                "open the store with schema_policy=SchemaPolicy.CREATE_IF_NECESSARY to create it"
            )
        stored = (meta.get("embedder") or "", int(meta.get("vector_dim") or 0))
        if stored != (self.embedder.name, self.vector_dim):
            raise EmbedderMismatchError(*stored, self.embedder.name, self.vector_dim)

    def _where(self) -> str:
        path = getattr(self, "path", None)
        return f" in {path}" if path else ""

    def _text_index_ready(self) -> bool:
        """Whether a keyword index (Oracle Text) serves keyword ranking; checked once per store."""
        if self._has_text_index is None:
            sql = self.dialect.text_index_sql()
            rows = self._fetch(sql, {"name": self._text_index_name}) if sql else []
            failed = bool(rows and rows[0].get("failed"))
            self._has_text_index = bool(rows and rows[0]["n"]) and not failed
            if failed:
                log.warning(
                    "keyword index %s is in the FAILED state (rebuild it: ALTER INDEX ... REBUILD): "
                    "hybrid search ranks by vectors only",
                    self._text_index_name,
                )
            elif not self._has_text_index:
                log.warning("no keyword index %s: hybrid search ranks by vectors only", self._text_index_name)
        return self._has_text_index

    # --- the change log ---------------------------------------------------------------------

    def _log(self, cursor: Any, entity: str, table: str, condition: str, params: Mapping[str, Any]) -> None:
        """Note in the change log, in the writer's transaction, the records (or links) matching
        `condition`: rows of `table` r (records, by pk) or rel (relations, by pos), one entry each."""
        key = "r.pk" if entity == "record" else "rel.pos"
        alias = "r" if entity == "record" else "rel"
        cursor.execute(
            f"INSERT INTO {self._changes} (entity, first_key, last_key) "
            f"SELECT '{entity}', {key}, {key} FROM {table} {alias} WHERE {condition}",
            dict(params),
        )
        self._trim_log(cursor)

    def _log_inserted(self, cursor: Any, kind: str, ids: list[str], keys: tuple[int, int] | None) -> None:
        """Note the records an insert wrote (of `kind`, with these ids) as one range of keys:
        writers take keys one at a time, so a batch's keys are consecutive, and a reader skips any
        key of the range that holds no row. The range is `keys` (first, last) when the insert told
        it, else the lowest and highest key of those records."""
        if keys is None:
            cursor.execute(
                f"INSERT INTO {self._changes} (entity, first_key, last_key) "
                f"SELECT 'record', lo, hi FROM (SELECT MIN(r.pk) AS lo, MAX(r.pk) AS hi FROM {self._records} r "
                f"WHERE r.kind = :kind AND {self._in('r.id', 'ids')}) batch WHERE lo IS NOT NULL",
                {"kind": kind, "ids": _ids_json(ids)},
            )
        else:
            cursor.execute(
                f"INSERT INTO {self._changes} (entity, first_key, last_key) VALUES ('record', :first_key, :last_key)",
                {"first_key": keys[0], "last_key": keys[1]},
            )
        self._trim_log(cursor)

    def _log_keys(self, cursor: Any, entity: str, keys: Iterable[int]) -> None:
        """Note records (pks) or links (positions) by key: for rows a write deletes."""
        rows = [{"entity": entity, "key": int(key)} for key in sorted(set(keys))]
        if rows:
            cursor.executemany(
                f"INSERT INTO {self._changes} (entity, first_key, last_key) VALUES (:entity, :key, :key)", rows
            )
            self._trim_log(cursor)

    def _trim_log(self, cursor: Any) -> None:
        """Keep the newest CHANGE_LOG_KEEP entries: an index that saw less reloads (index/)."""
        cursor.execute(
            f"DELETE FROM {self._changes} WHERE seq <= (SELECT MAX(seq) FROM {self._changes}) - :keep",
            {"keep": CHANGE_LOG_KEEP},
        )

    # --- writes -----------------------------------------------------------------------------

    def _insert(self, plan: AddPlan, check_ids: bool, batch_size: int) -> list[str]:
        rows, checked = plan.rows, plan.images
        with self._write() as cursor:
            if check_ids:
                self._check_new_ids(cursor, rows)
            seq_numbers = self._touch_threads(cursor, rows, plan.now)
            try:
                inserted = self.dialect.insert_rows(
                    cursor, self._records, self._record_values(plan, seq_numbers), batch_size
                )
            except Exception as exc:  # a taken id that slipped past the check (check_ids=False)
                if self.dialect.is_unique_violation(exc):
                    raise ValueError(
                        f"a {kind_of(rows[0].record_type)} record with one of these ids already exists"
                    ) from None
                raise
            self._insert_image_bytes(cursor, rows, checked)
            ids = [row.id for row in rows]
            self._log_inserted(cursor, kind_of(rows[0].record_type), ids, inserted)
        return ids

    def _insert_image_bytes(self, cursor: Any, rows: list[NewRecord], checked: list[tuple[Any, Any]]) -> None:
        """The bytes of newly inserted image records (`checked`: one (image, owner) per row)."""
        if not checked:
            return
        keys = {
            row["id"]: row["pk"]
            for row in self._fetch(
                f"SELECT id, pk FROM {self._records} r WHERE kind = 'image' AND {self._in('r.id', 'ids')}",
                {"ids": _ids_json(row.id for row in rows)},
                cursor,
            )
        }
        cursor.executemany(
            f"INSERT INTO {self._image_bytes} (record_pk, bytes) VALUES (:record_pk, :bytes)",
            [{"record_pk": keys[row.id], "bytes": image.data} for row, (image, _) in zip(rows, checked, strict=True)],
        )

    def _record_values(self, plan: AddPlan, seq_numbers: list[int | None]) -> dict[str, list]:
        """The new records' column values, one list per column: a comprehension per column runs
        in a fraction of the time of a dict per record (bench/ingest.py). One record type per batch."""
        rows, images, count = plan.rows, plan.images, len(plan.rows)
        db_time, vector = self.dialect.db_time, self.dialect.vector
        contents = [row.content for row in rows]
        index_texts = [row.index_text for row in rows]
        roles = [row.role for row in rows]
        return {
            "id": [row.id for row in rows],
            "kind": [kind_of(rows[0].record_type)] * count,
            "record_type": [rows[0].record_type] * count,
            "content": [content or None for content in contents],
            "index_text": [text or None for text in index_texts],
            "index_text_empty": [int(text == "") for text in index_texts],
            "search_text": [
                (text if text is not None else content) or None
                for text, content in zip(index_texts, contents, strict=True)
            ],
            "parts": [row.parts for row in rows],
            "thread_id": [row.thread_id for row in rows],
            "user_id": [row.user_id for row in rows],
            "agent_id": [row.agent_id for row in rows],
            "role": [role or None for role in roles],
            "role_empty": [int(role == "") for role in roles],
            "seq_no": seq_numbers,
            "event_at": [db_time(row.timestamp) for row in rows],
            "created_at": [db_time(plan.now)] * count,
            "expires_at": [db_time(at) for at in plan.expiries],
            "status": [row.status for row in rows],
            "metadata": [row.metadata for row in rows],
            "embedding": [vector(values) for values in plan.vectors],
            "message_id": [owner for _, owner in images] if images else [None] * count,
            "mime_type": [image.mime_type.value for image, _ in images] if images else [None] * count,
        }

    def _check_new_ids(self, cursor: Any, rows: list[NewRecord]) -> None:
        kind = kind_of(rows[0].record_type)
        taken = self._fetch(
            f"SELECT id FROM {self._records} r WHERE r.kind = :kind AND {self._in('r.id', 'ids')}"
            + self.dialect.first_rows("1"),
            {"kind": kind, "ids": _ids_json(row.id for row in rows)},
            cursor,
        )
        if taken:
            raise ValueError(f"a {kind} record with id {taken[0]['id']!r} already exists")

    def _ensure_thread(self, cursor: Any, thread_id: str, user_id: Any, agent_id: Any, now: str, **extra: Any) -> None:
        """Create the thread row unless it exists (a concurrent creator wins quietly)."""
        values = {"id": thread_id, "user_id": user_id, "agent_id": agent_id, "now": self.dialect.db_time(now), **extra}
        columns = {column: f":{column}" for column in ["id", "user_id", "agent_id", *extra]}
        try:
            cursor.execute(
                self.dialect.insert_if_absent(
                    self._threads, ["id"], {**columns, "created_at": ":now", "updated_at": ":now"}
                ),
                values,
            )
        except Exception as exc:
            if not self.dialect.is_unique_violation(exc):
                raise
        else:
            self._log_threads(cursor, cursor.rowcount)

    def _log_threads(self, cursor: Any, count: int) -> None:
        """Note in the change log that threads were created or deleted (`count` of them, if any):
        indexes ignore such entries, but stats() knows from the log's newest entry that its
        memoised counts are out of date."""
        if count > 0:
            cursor.execute(
                f"INSERT INTO {self._changes} (entity, first_key, last_key) VALUES ('thread', 0, 0)",
            )
            self._trim_log(cursor)

    def _touch_threads(self, cursor: Any, rows: list[NewRecord], now: str) -> list[int | None]:
        """Create missing thread rows, mark activity, and number new messages within each thread."""
        seq_numbers: list[int | None] = [None] * len(rows)
        by_thread: dict[str, list[int]] = {}
        for i, row in enumerate(rows):
            if row.thread_id is not None:
                by_thread.setdefault(row.thread_id, []).append(i)
        for thread_id, indexes in by_thread.items():
            first = rows[indexes[0]]
            self._ensure_thread(cursor, thread_id, first.user_id, first.agent_id, now, settings="{}")
            messages = [i for i in indexes if rows[i].record_type == MESSAGE_TYPE]
            # The UPDATE locks the thread row until commit, so concurrent writers number in turn.
            cursor.execute(
                f"UPDATE {self._threads} SET updated_at = :now, next_seq_no = next_seq_no + :n WHERE id = :id",
                {"now": self.dialect.db_time(now), "n": len(messages), "id": thread_id},
            )
            if messages:
                [row] = self._fetch(
                    f"SELECT next_seq_no FROM {self._threads} WHERE id = :id", {"id": thread_id}, cursor
                )
                for offset, i in enumerate(messages):
                    seq_numbers[i] = int(row["next_seq_no"]) - len(messages) + offset
        return seq_numbers

    def _add_profile(
        self, record_type: str, owner_id: str, information: str, metadata: Any, expected_version: Any
    ) -> str:
        name = check_profile(record_type, owner_id, information)
        expected = expected_version_of(expected_version)
        vector = normalize_rows(self._embed([information]))[0] if information else None
        params = {
            "id": owner_id,
            "kind": record_type,
            "content": information or None,
            "search_text": information or None,
            "metadata": dump_metadata(metadata),
            "embedding": self.dialect.vector(vector),
            "now": self.dialect.db_time(utc_now()),
        }
        with self._write() as cursor:
            if expected is not None:  # the profile must be at that version (0: must not exist yet)
                rows = self._fetch(
                    f"SELECT version FROM {self._records} WHERE kind = :kind AND id = :id{self.dialect.for_update}",
                    {"kind": record_type, "id": owner_id},
                    cursor,
                )
                check_version(f"{record_type} {owner_id!r}", expected, rows[0]["version"] if rows else None)
            self.dialect.declare(cursor, ["embedding"])  # no LONG binds: Oracle takes those only as inserted values
            cursor.execute(
                self.dialect.upsert(
                    self._records,
                    ["kind", "id"],
                    {
                        "id": ":id",
                        "kind": ":kind",
                        "record_type": ":kind",
                        "content": ":content",
                        "search_text": ":search_text",
                        name: ":id",
                        "created_at": ":now",
                        "metadata": ":metadata",
                        "embedding": ":embedding",
                    },
                    ["content", "search_text", "metadata", "embedding"],
                    increments=["version"],
                ),
                params,
            )
            self._log(
                cursor, "record", self._records, "r.kind = :kind AND r.id = :id", {"kind": record_type, "id": owner_id}
            )
        return owner_id

    def add_user(
        self, user_id: str, information: str, metadata: dict | None = None, *, expected_version: Any = NOT_SET
    ) -> str:
        """Insert (or replace) a user's profile text; returns the user id."""
        return self._add_profile(USER_PROFILE_TYPE, user_id, information, metadata, expected_version)

    def add_agent(
        self, agent_id: str, information: str, metadata: dict | None = None, *, expected_version: Any = NOT_SET
    ) -> str:
        """Insert (or replace) an agent's profile text; returns the agent id."""
        return self._add_profile(AGENT_PROFILE_TYPE, agent_id, information, metadata, expected_version)

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
        role: Any = NOT_SET,
        expires_at: Any = NOT_SET,
        memory_type: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        expected_version: Any = NOT_SET,
    ) -> int:
        """Update one live record; returns 1, or 0 when it does not exist or has expired."""
        check_record_type(record_type)
        if image is not NOT_SET and (record_type != IMAGE_TYPE or not isinstance(image, CheckedImage)):
            raise ValueError("image= takes a checked image (images.check_image), for image records only")
        expected = expected_version_of(expected_version)
        with self._write() as cursor:
            row = self._live_row(cursor, record_type, record_id)
            stored_index_text = None
            if row is not None:
                stored_index_text = "" if row["index_text_empty"] else row["index_text"]
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
                (row["content"] or "") if row else "",
                stored_index_text,
                record_type=record_type,
                role=role,
                expires_at=expires_at,
                memory_type=memory_type,
                user_id=user_id,
                agent_id=agent_id,
            )
            if row is None:
                return 0
            check_version(f"{record_type} {record_id!r}", expected, row["version"])
            changes: dict[str, Any] = {}
            if plan.role is not NOT_SET:
                changes["role"], changes["role_empty"] = plan.role, 0
            if plan.record_type is not NOT_SET:
                changes["record_type"] = plan.record_type
            changes.update(plan.owners)
            if plan.expires_at is not NOT_SET:
                changes["expires_at"] = self.dialect.db_time(plan.expires_at)
            if plan.content is not NOT_SET:
                changes["content"] = plan.content or None
            if plan.index_text is not NOT_SET:
                changes["index_text"] = plan.index_text or None
                changes["index_text_empty"] = int(plan.index_text == "")
            if plan.content is not NOT_SET or plan.index_text is not NOT_SET:
                new_index = stored_index_text if plan.index_text is NOT_SET else plan.index_text
                new_content = (row["content"] or "") if plan.content is NOT_SET else plan.content
                changes["search_text"] = (new_index if new_index is not None else new_content) or None
            for column in ("parts", "metadata", "status"):
                value = getattr(plan, column)
                if value is not NOT_SET:
                    changes[column] = value
            if plan.timestamp is not NOT_SET:
                changes["event_at"] = self.dialect.db_time(plan.timestamp)
            if plan.embedding is not NOT_SET:
                changes["embedding"] = (
                    None
                    if plan.embedding is None
                    else self.dialect.vector(normalize_rows(to_vector(plan.embedding, self.vector_dim)[None, :])[0])
                )
            elif plan.embed_text is not NOT_SET:
                changes["embedding"] = (
                    self.dialect.vector(normalize_rows(self._embed([plan.embed_text]))[0]) if plan.embed_text else None
                )
            if plan.ttl_days is not NOT_SET or plan.ttl_anchor is not NOT_SET:
                event = plan.timestamp if plan.timestamp is not NOT_SET else self.dialect.text_time(row["event_at"])
                changes["expires_at"] = self.dialect.db_time(
                    expiry(
                        plan.ttl_days,
                        plan.ttl_anchor,
                        created_at=self.dialect.text_time(row["created_at"]),
                        timestamp=event,
                        retention=self.retention,
                    )
                )
            if image is not NOT_SET:
                changes["mime_type"] = image.mime_type.value
                cursor.execute(
                    f"UPDATE {self._image_bytes} SET bytes = :bytes WHERE record_pk = :pk",
                    {"bytes": image.data, "pk": row["pk"]},
                )
            assignments = ", ".join(f"{column} = :{column}" for column in changes)
            self.dialect.declare(cursor, changes)
            cursor.execute(
                f"UPDATE {self._records} SET {assignments}, version = version + 1 WHERE pk = :pk",
                {**changes, "pk": row["pk"]},
            )
            self._log_keys(cursor, "record", [row["pk"]])
            if changes.get("record_type", record_type) != record_type:
                self._retype_links(cursor, record_id, changes["record_type"])
            if record_type == MESSAGE_TYPE and "expires_at" in changes:
                cursor.execute(
                    f"UPDATE {self._records} SET expires_at = :expires_at, version = version + 1 "
                    "WHERE kind = 'image' AND message_id = :id",
                    {"expires_at": changes["expires_at"], "id": record_id},
                )
                self._log(cursor, "record", self._records, "r.kind = 'image' AND r.message_id = :id", {"id": record_id})
            if row["thread_id"] is not None:
                self._touch_activity(cursor, [row["thread_id"]])
        return 1

    def _retype_links(self, cursor: Any, memory_id: str, record_type: str) -> None:
        """A memory's links name its type at each end they hold it: they follow a change of type."""
        for end in ("source", "target"):
            cursor.execute(
                f"UPDATE {self._relations} SET {end}_type = :record_type, version = version + 1 WHERE {end}_id = :id",
                {"record_type": record_type, "id": memory_id},
            )
        self._log(cursor, "link", self._relations, "rel.source_id = :id OR rel.target_id = :id", {"id": memory_id})

    def _touch_activity(self, cursor: Any, thread_ids: Iterable[str]) -> None:
        cursor.execute(
            f"UPDATE {self._threads} SET updated_at = :now WHERE {self._in('id', 'ids')}",
            {"now": self.dialect.db_time(utc_now()), "ids": _ids_json(sorted(set(thread_ids)))},
        )

    def _live_row(self, cursor: Any, record_type: str, record_id: Any) -> dict[str, Any] | None:
        if not isinstance(record_id, str):
            raise ValueError(f"record_id must be a string, not {type(record_id).__name__}")
        if not storable_id(record_id):
            return None
        rows = self._fetch(
            f"SELECT r.pk, r.content, r.index_text, r.index_text_empty, r.thread_id, r.event_at, r.created_at, "
            f"r.version FROM {self._records} r WHERE r.kind = :kind AND r.id = :id AND r.record_type = :record_type "
            "AND (r.expires_at IS NULL OR r.expires_at > :now)" + self.dialect.for_update,
            {
                "kind": kind_of(record_type),
                "id": record_id,
                "record_type": record_type,
                "now": self.dialect.db_time(utc_now()),
            },
            cursor,
        )
        return rows[0] if rows else None

    def _delete_where(self, cursor: Any, condition: str, params: Mapping[str, Any]) -> int:
        """Delete the records matching `condition` (alias r) with what goes with them; returns how many.

        What SQLite's triggers do, done here explicitly (a row trigger could not read the table
        it changes): a deleted memory's links go, and the memories they invalidated are
        recounted; a deleted message's images go; image bytes follow by ON DELETE CASCADE.
        """
        victims = self._fetch(
            f"SELECT r.pk, r.id, r.kind, r.thread_id FROM {self._records} r WHERE {condition}", params, cursor
        )
        if not victims:
            return 0
        memories = [row["id"] for row in victims if row["kind"] == "memory"]
        messages = [row["id"] for row in victims if row["kind"] == MESSAGE_TYPE]
        if memories:
            targets = self._fetch(
                f"SELECT DISTINCT rel.target_id FROM {self._relations} rel WHERE {self._in('rel.source_id', 'ids')} "
                f"AND rel.relation_type IN {_LIFECYCLE_SQL}",
                {"ids": _ids_json(memories)},
                cursor,
            )
            links = f"{self._in('rel.source_id', 'ids')} OR {self._in('rel.target_id', 'ids')}"
            self._log(cursor, "link", self._relations, links, {"ids": _ids_json(memories)})
            cursor.execute(
                f"DELETE FROM {self._relations} WHERE {self._in('source_id', 'ids')} OR {self._in('target_id', 'ids')}",
                {"ids": _ids_json(memories)},
            )
            self._recount_lifecycle(cursor, (row["target_id"] for row in targets))
        pks = [row["pk"] for row in victims]
        if messages:
            images = self._fetch(
                f"SELECT r.pk FROM {self._records} r WHERE r.kind = 'image' AND {self._in('r.message_id', 'ids')}",
                {"ids": _ids_json(messages)},
                cursor,
            )
            pks += [row["pk"] for row in images]
        cursor.execute(
            f"DELETE FROM {self._records} WHERE {self._in('pk', 'pks', numeric=True)}", {"pks": json.dumps(pks)}
        )
        self._log_keys(cursor, "record", pks)
        return len(victims)

    def delete(self, record_type: str, record_id: str, cascade: bool = False) -> int:
        """Delete one record (expired or not); returns the number deleted, 0 or 1."""
        check_record_type(record_type)
        if not isinstance(record_id, str):
            raise ValueError(f"record_id must be a string, not {type(record_id).__name__}")
        if not storable_id(record_id):
            return 0
        with self._write() as cursor:
            owner = self._fetch(
                f"SELECT r.thread_id FROM {self._records} r WHERE r.kind = :kind AND r.id = :id "
                "AND r.record_type = :record_type",
                {"kind": kind_of(record_type), "id": record_id, "record_type": record_type},
                cursor,
            )
            deleted = self._delete_where(
                cursor,
                "r.kind = :kind AND r.id = :id AND r.record_type = :record_type",
                {"kind": kind_of(record_type), "id": record_id, "record_type": record_type},
            )
            threads = [row["thread_id"] for row in owner if row["thread_id"] is not None]
            if threads:
                self._touch_activity(cursor, threads)
        return deleted

    def delete_thread(self, thread_id: str) -> int:
        """Delete a thread with every record it holds; returns the number of threads deleted."""
        check_id("thread_id", thread_id)
        with self._write() as cursor:
            self._delete_where(cursor, "r.thread_id = :thread_id", {"thread_id": thread_id})
            cursor.execute(f"DELETE FROM {self._threads} WHERE id = :id", {"id": thread_id})
            deleted = cursor.rowcount
            self._log_threads(cursor, deleted)
            return deleted

    def _delete_owner(self, column: str, profile_type: str, owner_id: str, cascade: bool) -> int:
        check_id(column, owner_id)
        check_bool("cascade", cascade)
        with self._write() as cursor:
            if not cascade:
                return self._delete_where(
                    cursor, "r.kind = :kind AND r.id = :id", {"kind": profile_type, "id": owner_id}
                )
            deleted = self._delete_where(cursor, f"r.{column} = :owner", {"owner": owner_id})
            deleted += self._delete_where(
                cursor,
                f"r.thread_id IN (SELECT t.id FROM {self._threads} t WHERE t.{column} = :owner)",
                {"owner": owner_id},
            )
            cursor.execute(f"DELETE FROM {self._threads} WHERE {column} = :owner", {"owner": owner_id})
            threads = cursor.rowcount
            self._log_threads(cursor, threads)
            return deleted + threads

    def delete_user(self, user_id: str, cascade: bool = True) -> int:
        """Delete a user's profile and, with `cascade`, their threads and records; returns rows deleted."""
        return self._delete_owner("user_id", USER_PROFILE_TYPE, user_id, cascade)

    def delete_agent(self, agent_id: str, cascade: bool = True) -> int:
        """Delete an agent's profile and, with `cascade`, its threads and records; returns rows deleted."""
        return self._delete_owner("agent_id", AGENT_PROFILE_TYPE, agent_id, cascade)

    def purge_expired(self) -> int:
        """Delete every expired record; returns how many."""
        with self._write() as cursor:
            return self._delete_where(
                cursor, "r.expires_at IS NOT NULL AND r.expires_at <= :now", {"now": self.dialect.db_time(utc_now())}
            )

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
    ) -> int:
        """Delete one relation, by id alone or by its complete tuple in the stored direction."""
        endpoint = (source_record_id, source_record_type, target_record_id, target_record_type, relation_type)
        check_relation_selector(relation_id, endpoint)
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
            seeds = [cache.memory_ids[pk] for pk in cache.pks[rows].tolist()]
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
                    cache = index.records
                    mask = cache.status_mask(
                        request.memory_types, {"user_id": request.user_id}, request.statuses, time.time()
                    )
                    rows = np.flatnonzero(mask & cache.has_vector[: cache.size])
                    pks, units = cache.pks[rows], cache.matrix[rows]  # copies: the lock can go
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
        self, cursor: Any, request: DuplicatesRequest
    ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The near pairs from the database (a self-join of the user's candidates on the vector
        distance, each pair once), then the vectors of the memories in a pair, for the groups'
        centres: how many were compared, their pks, unit vectors and the pairs as rows of them."""
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

    # --- threads ----------------------------------------------------------------------------

    def _thread_select(self) -> str:
        return (
            f"SELECT {self._thread_columns}, (SELECT count(*) FROM {self._records} m WHERE m.thread_id = t.id "
            f"AND m.kind = 'message' AND (m.expires_at IS NULL OR m.expires_at > :now)) AS message_count "
            f"FROM {self._threads} t"
        )

    def _thread_record(self, row: Mapping[str, Any]) -> ThreadRecord:
        return ThreadRecord(
            id=row["id"],
            thread_id=row["id"],
            user_id=row["user_id"],
            agent_id=row["agent_id"],
            metadata=json.loads(row["metadata"]) if row["metadata"] else None,
            settings=json.loads(row["settings"]) if row["settings"] else {},
            created_at=self.dialect.text_time(row["created_at"]),
            timestamp=self.dialect.text_time(row["created_at"]),
            updated_at=self.dialect.text_time(row["updated_at"]),
            message_count=int(row["message_count"]),
            summary=row["summary"],
            topics=json.loads(row["topics"]) if row["topics"] else None,
            version=int(row["version"]),
        )

    def save_thread(
        self, thread_id: str, user_id: str | None, agent_id: str | None, metadata: Any, settings: dict
    ) -> ThreadRecord:
        """Create the thread unless it exists; returns the stored thread either way."""
        for name, value in (("thread_id", thread_id), ("user_id", user_id), ("agent_id", agent_id)):
            check_scope_value(name, value)
        with self._write() as cursor:
            self._ensure_thread(
                cursor,
                thread_id,
                user_id,
                agent_id,
                utc_now(),
                metadata=dump_metadata(metadata),
                settings=json.dumps(settings),
            )
        return self.get_thread(thread_id)

    def get_thread(self, thread_id: str) -> ThreadRecord | None:
        check_id("thread_id", thread_id)
        rows = self._fetch(
            f"{self._thread_select()} WHERE t.id = :id", {"id": thread_id, "now": self.dialect.db_time(utc_now())}
        )
        return self._thread_record(rows[0]) if rows else None

    def update_thread(
        self, thread_id: str, metadata: Any = NOT_SET, settings: Any = NOT_SET, *, expected_version: Any = NOT_SET
    ) -> int:
        check_id("thread_id", thread_id)
        changes = thread_changes(metadata, settings)
        expected = expected_version_of(expected_version)
        assignments = ", ".join(f"{column} = :{column}" for column in changes)
        with self._write() as cursor:
            if not self._thread_at(cursor, thread_id, expected):
                return 0
            cursor.execute(
                f"UPDATE {self._threads} SET {assignments}, updated_at = :now, version = version + 1 WHERE id = :id",
                {**changes, "now": self.dialect.db_time(utc_now()), "id": thread_id},
            )
            return cursor.rowcount

    def _thread_at(self, cursor: Any, thread_id: str, expected: int | None) -> bool:
        """The compare of a thread's compare-and-set, inside the write: False when the thread is
        missing, StaleVersionError when it is at another version than `expected` (None: no check)."""
        if expected is None:
            return True
        rows = self._fetch(
            f"SELECT version FROM {self._threads} WHERE id = :id{self.dialect.for_update}", {"id": thread_id}, cursor
        )
        if not rows:
            return False
        check_version(f"thread {thread_id!r}", expected, rows[0]["version"])
        return True

    def save_thread_summary(
        self,
        thread_id: str,
        summary: str | None,
        topics: list[str] | None = None,
        *,
        expected_version: Any = NOT_SET,
    ) -> int:
        """Persist a thread's summary and topics (None clears them); returns 1, or 0 for no thread."""
        check_id("thread_id", thread_id)
        topics_json = summary_topics(summary, topics)
        expected = expected_version_of(expected_version)
        with self._write() as cursor:
            if not self._thread_at(cursor, thread_id, expected):
                return 0
            self.dialect.declare(cursor, ["summary"])
            cursor.execute(
                f"UPDATE {self._threads} SET summary = :summary, topics = :topics, version = version + 1 "
                "WHERE id = :id",
                {"summary": summary, "topics": topics_json, "id": thread_id},
            )
            return cursor.rowcount

    def save_thread_state(self, thread_id: str, key: str, state: dict[str, Any]) -> int:
        """Merge `state` into the thread's settings under `key`, leaving its activity time alone."""
        check_id("thread_id", thread_id)
        if not isinstance(state, dict):
            raise ValueError("state must be a dict")
        with self._write() as cursor:
            cursor.execute(
                f"UPDATE {self._threads} "
                f"SET settings = {self.dialect.json_merge_patch('settings', 'patch')} WHERE id = :id",
                {"patch": json.dumps({key: state}), "id": thread_id},
            )
            return cursor.rowcount

    def list_threads(
        self,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata_filter: Any = NOT_SET,
        limit: int | None = DEFAULT_LIST_LIMIT,
        cursor: str | None = None,
        *,
        text: Any = NOT_SET,
    ) -> Page:
        """Threads, latest activity first; `cursor` continues from an earlier page."""
        check_positive_int("limit", limit, allow_none=True)
        where: list[str] = []
        params: dict[str, Any] = {"now": self.dialect.db_time(utc_now())}
        matching = self._text_condition(["t.id", self.dialect.json_text("t.metadata")], text, params)
        if matching is not None:
            where.append(matching)
        for column, value in (("user_id", user_id), ("agent_id", agent_id)):
            if value is not NOT_SET:
                check_scope_value(column, value)
                where.append(scope_condition(f"t.{column}", column, value, params))
        if metadata_filter is not NOT_SET and metadata_filter is not None:
            compiler = self.dialect.filter_compiler()
            where.append(compiler.compile(parse_filter(metadata_filter), "t.metadata"))
            params.update(compiler.params)
        if cursor is not None:
            updated_at, last_id = decode_cursor(cursor, (str, str))
            try:
                normalize_timestamp(updated_at)
            except ValueError:
                raise ValueError(f"invalid cursor: {cursor!r}") from None
            where.append("(t.updated_at < :c_updated OR (t.updated_at = :c_updated AND t.id < :c_id))")
            params.update(c_updated=self.dialect.db_time(updated_at), c_id=last_id)
        sql = f"{self._thread_select()} {'WHERE ' + ' AND '.join(where) if where else ''} "
        sql += "ORDER BY t.updated_at DESC, t.id DESC"
        rows = self._fetch(sql + self._fetch_first(limit, params), params)
        records = [self._thread_record(row) for row in rows[:limit]]
        more = limit is not None and len(rows) > limit
        return Page(records, encode_cursor(records[-1].updated_at, records[-1].id) if more else None)

    def _list_owners(self, column: str, profile_type: str, limit: int | None, cursor: str | None) -> Page:
        check_positive_int("limit", limit, allow_none=True)
        params: dict[str, Any] = {"kind": profile_type}
        after = f" AND {column} > :after" if cursor is not None else ""
        if cursor is not None:
            params["after"] = decode_cursor(cursor, (str,))[0]
        # Each source gives its first ids in order (an ordered walk of its owner index that stops
        # after a page), and the page is the first ids of their union: never the distinct owners
        # of the whole table.
        first = self._fetch_first(limit, params)
        owners = " UNION ".join(
            f"SELECT id FROM (SELECT DISTINCT {column} AS id FROM {table} WHERE {column} IS NOT NULL{after} "
            f"ORDER BY {column}{first}) {alias}"
            for table, alias in ((self._threads, "t"), (self._records, "r"))
        )
        sql = (
            f"SELECT o.id, p.content, {self.dialect.json_text('p.metadata')} AS metadata, p.created_at, p.version "
            f"FROM ({owners}) o LEFT JOIN {self._records} p ON p.kind = :kind AND p.id = o.id ORDER BY o.id"
        )
        rows = self._fetch(sql + self._fetch_first(limit, params), params)
        cls = UserProfileRecord if profile_type == USER_PROFILE_TYPE else AgentProfileRecord
        records = [
            cls(
                id=row["id"],
                content=row["content"] or "",
                metadata=json.loads(row["metadata"]) if row["metadata"] else None,
                created_at=self.dialect.text_time(row["created_at"]),
                timestamp=self.dialect.text_time(row["created_at"]),
                version=0 if row["version"] is None else int(row["version"]),  # 0: no stored profile
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

    # --- counts -----------------------------------------------------------------------------

    def _deleted_by(self, alias: str, scope: DeleteScope, params: dict[str, Any]) -> str:
        """The records (alias) the delete of `scope` removes directly (a message's images aside)."""
        if scope.column == "thread_id":
            params["scope_id"] = scope.owner_id
            return f"{alias}.thread_id = :scope_id"
        params["scope_id"] = scope.owner_id
        return (
            f"({alias}.{scope.column} = :scope_id OR {alias}.thread_id IN "
            f"(SELECT st.id FROM {self._threads} st WHERE st.{scope.column} = :scope_id))"
        )

    def _scope_records(self, scope: DeleteScope | None, params: dict[str, Any]) -> str:
        """What the delete of `scope` removes (alias r): its records and their messages' images."""
        if scope is None:
            return "1 = 1"
        direct = self._deleted_by("r", scope, params)
        messages = self._deleted_by("sm", scope, params)
        return (
            f"({direct} OR (r.kind = 'image' AND r.message_id IN "
            f"(SELECT sm.id FROM {self._records} sm WHERE sm.kind = 'message' AND {messages})))"
        )

    def _scope_threads(self, scope: DeleteScope | None, params: dict[str, Any]) -> str:
        if scope is None:
            return "1 = 1"
        params["scope_id"] = scope.owner_id
        return f"t.{'id' if scope.column == 'thread_id' else scope.column} = :scope_id"

    def _scope_links(self, scope: DeleteScope | None, params: dict[str, Any]) -> str:
        """The links the delete of `scope` removes: those touching a memory it deletes."""
        if scope is None:
            return "1 = 1"
        memories = self._deleted_by("lm", scope, params)
        return (
            f"EXISTS (SELECT 1 FROM {self._records} lm WHERE lm.kind = 'memory' "
            f"AND (lm.id = rel.source_id OR lm.id = rel.target_id) AND {memories})"
        )

    def stats(self, *, thread_id: Any = NOT_SET, user_id: Any = NOT_SET, agent_id: Any = NOT_SET) -> StoreStats:
        """Counts of the store, or of what one delete would remove (MemoryStore.stats).

        A handful of grouped queries, memoised per scope: the memo holds while the change log's
        newest entry (every write adds one, threads' creation and deletion included) and the
        store id are those it was computed at, and no record has reached its expiry since."""
        scope = delete_scope(thread_id, user_id, agent_id)
        return self._memoised(("stats", scope), lambda cursor, now: self._count(cursor, scope, now))

    def _memoised(self, key: tuple, compute: Callable[[Any, str], tuple[Any, str | None]]) -> Any:
        """`compute(cursor, now)`'s value, memoised while the change log's newest entry (every
        write adds one, threads' creation and deletion included) and the store id are those it
        was computed at, and until the next expiry it returns with the value (None: none)."""
        # Inside a transaction that has written, the value counts uncommitted rows whose log
        # entries may be rolled back and their numbers taken again: no memo then.
        shared = self._written() is None
        with self._read() as cursor:
            [state] = self._fetch(f"SELECT MAX(seq) AS seq FROM {self._changes}", None, cursor)
            key = (*key, self._meta_value(cursor, "store_id"), state["seq"])
            now = utc_now()
            with self._stats_lock:
                memo = self._stats_memo.get(key) if shared else None
            if memo is not None and (memo[1] is None or now < memo[1]):
                return copy.deepcopy(memo[0])
            value, next_expiry = compute(cursor, now)
        if not shared:
            return value
        with self._stats_lock:
            if len(self._stats_memo) >= STATS_MEMO_SIZE:
                self._stats_memo.clear()
            self._stats_memo[key] = (value, next_expiry)
        return copy.deepcopy(value)

    def _next_expiry(self, cursor: Any, now: str) -> str | None:
        """The first expiry after `now`, when counts of live records change without a write."""
        [upcoming] = self._fetch(
            f"SELECT MIN(r.expires_at) AS at FROM {self._records} r WHERE r.expires_at > :now",
            {"now": self.dialect.db_time(now)},
            cursor,
        )
        return self.dialect.text_time(upcoming["at"])

    def _count(self, cursor: Any, scope: DeleteScope | None, now: str) -> tuple[StoreStats, str | None]:
        """The counts of `scope` at `now`, and the next expiry after it (None: none)."""
        params: dict[str, Any] = {"now": self.dialect.db_time(now)}
        in_scope = self._scope_records(scope, params)
        records = {record_type: {"valid": 0, "invalid": 0, "expired": 0} for record_type in RECORD_TYPES}
        state = (
            "CASE WHEN r.expires_at IS NOT NULL AND r.expires_at <= :now THEN 'expired' "
            "WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END"
        )
        # Grouped over an inline view: Oracle takes a bind inside a GROUP BY expression for another
        # expression than the same text in the select list (ORA-00979).
        for row in self._fetch(
            f"SELECT s.record_type, s.state, count(*) AS n FROM (SELECT r.record_type, {state} AS state "
            f"FROM {self._records} r WHERE {in_scope}) s GROUP BY s.record_type, s.state",
            params,
            cursor,
        ):
            records.setdefault(row["record_type"], {"valid": 0, "invalid": 0, "expired": 0})[row["state"]] = int(
                row["n"]
            )
        day = self.dialect.utc_day("COALESCE(r.event_at, r.created_at)")
        by_day = sorted(
            (row["day"], row["kind"], int(row["n"]))
            for row in self._fetch(
                f"SELECT s.day, s.kind, count(*) AS n FROM (SELECT {day} AS day, r.kind FROM {self._records} r "
                f"WHERE {in_scope} AND r.kind IN ('message', 'memory') "
                "AND (r.expires_at IS NULL OR r.expires_at > :now)) s GROUP BY s.day, s.kind",
                params,
                cursor,
            )
        )
        link_params: dict[str, Any] = {}
        links = {
            row["relation_type"]: int(row["n"])
            for row in self._fetch(
                f"SELECT rel.relation_type, count(*) AS n FROM {self._relations} rel "
                f"WHERE {self._scope_links(scope, link_params)} GROUP BY rel.relation_type ORDER BY rel.relation_type",
                link_params,
                cursor,
            )
        }
        owner_params: dict[str, Any] = {}
        thread_scope = self._scope_threads(scope, owner_params)
        record_scope = self._scope_records(scope, owner_params)
        [owners] = self._fetch(
            f"SELECT (SELECT count(*) FROM {self._threads} t WHERE {thread_scope}) AS threads, "
            + ", ".join(
                f"(SELECT count(*) FROM (SELECT t.{column} AS id FROM {self._threads} t "
                f"WHERE t.{column} IS NOT NULL AND {thread_scope} UNION SELECT r.{column} FROM {self._records} r "
                f"WHERE r.{column} IS NOT NULL AND {record_scope}) o) AS {name}"
                for column, name in (("user_id", "users"), ("agent_id", "agents"))
            )
            + self.dialect.from_nothing,
            owner_params,
            cursor,
        )
        stats = StoreStats(
            records=records,
            links=links,
            threads=int(owners["threads"]),
            users=int(owners["users"]),
            agents=int(owners["agents"]),
            by_day=by_day,
            backend=self.dialect.name,
            embedder=self.embedder.name,
            vector_dim=self.vector_dim,
            schema_version=SCHEMA_VERSION,
        )
        return stats, self._next_expiry(cursor, now)

    def owner_counts(self, owner: str, ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """Threads, live messages and live memories of each user or agent, in one grouped query,
        memoised as stats() is (an agent owns many records: counting them reads many rows)."""
        if not isinstance(owner, str) or owner not in ("user", "agent"):
            raise ValueError(f"owner must be 'user' or 'agent', not {owner!r}")
        if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence):
            raise ValueError(f"ids must be a list of {owner} ids, not {type(ids).__name__}")
        column = f"{owner}_id"
        wanted = list(dict.fromkeys(check_id(f"ids[{i}]", value) for i, value in enumerate(ids)))
        if not wanted:
            return {}
        return self._memoised(
            ("owner_counts", column, tuple(wanted)), lambda cursor, now: self._owner_counts(cursor, column, wanted, now)
        )

    def _owner_counts(
        self, cursor: Any, column: str, wanted: list[str], now: str
    ) -> tuple[dict[str, dict[str, int]], str | None]:
        counts = {owner_id: {"threads": 0, "messages": 0, "memories": 0} for owner_id in wanted}
        # Every kind is counted (the others are dropped here): a condition on kind would steer
        # SQLite to its (kind, id) key instead of the owner index.
        rows = self._fetch(
            f"SELECT t.{column} AS owner, 'thread' AS kind, count(*) AS n FROM {self._threads} t "
            f"WHERE {self._in(f't.{column}', 'ids')} GROUP BY t.{column} "
            f"UNION ALL SELECT r.{column}, r.kind, count(*) FROM {self._records} r "
            f"WHERE {self._in(f'r.{column}', 'ids')} AND (r.expires_at IS NULL OR r.expires_at > :now) "
            f"GROUP BY r.{column}, r.kind",
            {"ids": _ids_json(wanted), "now": self.dialect.db_time(now)},
            cursor,
        )
        names = {"thread": "threads", MESSAGE_TYPE: "messages", "memory": "memories"}
        for row in rows:
            if row["kind"] in names:
                counts[row["owner"]][names[row["kind"]]] = int(row["n"])
        return counts, self._next_expiry(cursor, now)

    # --- snapshots --------------------------------------------------------------------------

    def snapshot(
        self,
        *,
        record_ids: Sequence[tuple[str, str]] = (),
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
    ) -> Snapshot:
        """Everything the matching delete would remove, as stored (MemoryStore.snapshot)."""
        scope = delete_scope(thread_id, user_id, agent_id)
        pairs = snapshot_pairs(record_ids)
        if pairs and scope is not None:
            raise ValueError("pass record_ids or one of thread_id, user_id and agent_id, not both")
        params: dict[str, Any] = {}
        if pairs:
            # The records by type and id (one bind of ids per type), a message's images, and the
            # links of a memory.
            by_type: dict[str, list[str]] = {}
            for record_type, record_id in pairs:
                by_type.setdefault(record_type, []).append(record_id)

            def chosen(alias: str) -> str:
                groups = [
                    f"({alias}.kind = :sk{i} AND {alias}.record_type = :st{i} "
                    f"AND {self._in(f'{alias}.id', f'sids{i}')})"
                    for i in range(len(by_type))
                ]
                return "(" + " OR ".join(groups) + ")"

            for i, (record_type, chosen_ids) in enumerate(sorted(by_type.items())):
                params.update(
                    {f"sk{i}": kind_of(record_type), f"st{i}": record_type, f"sids{i}": _ids_json(chosen_ids)}
                )
            records = (
                f"({chosen('r')} OR (r.kind = 'image' AND r.message_id IN (SELECT sm.id FROM {self._records} sm "
                f"WHERE sm.kind = 'message' AND {chosen('sm')})))"
            )
            links = (
                f"EXISTS (SELECT 1 FROM {self._records} lm WHERE lm.kind = 'memory' "
                f"AND (lm.id = rel.source_id OR lm.id = rel.target_id) AND {chosen('lm')})"
            )
            threads = None
        else:
            records = self._scope_records(scope, params)
            links = self._scope_links(scope, params)
            threads = self._scope_threads(scope, params)
        with self._read() as cursor:
            thread_rows = []
            if threads is not None:
                thread_rows = self._fetch(
                    f"{self._thread_select()} WHERE {threads} ORDER BY t.created_at, t.id",
                    {**params, "now": self.dialect.db_time(utc_now())},
                    cursor,
                )
            rows = self._fetch(
                f"SELECT {self._record_columns}, r.status AS explicit_status FROM {self._records} r "
                f"WHERE {records} ORDER BY r.pk",
                params,
                cursor,
            )
            relation_rows = self._fetch(
                f"SELECT {self._relation_columns} FROM {self._relations} rel WHERE {links} ORDER BY rel.pos",
                params,
                cursor,
            )
            images = [row["id"] for row in rows if row["kind"] == IMAGE_TYPE]
            data = {}
            if images:
                data = {
                    row["id"]: row["bytes"]
                    for row in self._fetch(
                        f"SELECT r.id, b.bytes FROM {self._records} r JOIN {self._image_bytes} b "
                        f"ON b.record_pk = r.pk WHERE r.kind = 'image' AND {self._in('r.id', 'ids')}",
                        {"ids": _ids_json(images)},
                        cursor,
                    )
                }
        snapshot = Snapshot(
            threads=[self._thread_record(row) for row in thread_rows],
            relations=[self._relation(row) for row in relation_rows],
        )
        for row in rows:
            record = self._record(row)
            if isinstance(record, ImageRecord):
                record.bytes = data.get(record.id)
            snapshot.records.append(record)
            snapshot.stored[(record.record_type, record.id)] = {
                "status": RecordStatus(row["explicit_status"]),
                "event_at": self.dialect.text_time(row["event_at"]),
                "index_text": "" if row["index_text_empty"] else row["index_text"],
            }
        return snapshot

    def restore(self, snapshot: Snapshot, *, skip_existing: bool = False, keep_versions: bool = False) -> RestoreReport:
        """Write a snapshot back, ids, links and times included (MemoryStore.restore)."""
        check_bool("skip_existing", skip_existing)
        check_bool("keep_versions", keep_versions)
        step = 0 if keep_versions else 1
        plan = plan_restore(snapshot)
        payloads = [plan.payload(record) for record in plan.records]
        wanted = [i for i, text in enumerate(payloads) if text]
        vectors: list[np.ndarray | None] = [None] * len(payloads)
        if wanted:  # embedded before the write lock is taken
            for i, vector in zip(wanted, normalize_rows(self._embed([payloads[i] for i in wanted])), strict=True):
                vectors[i] = vector
        report = RestoreReport()
        now = utc_now()
        with self._write() as cursor:
            records = self._restorable_records(cursor, plan, vectors, skip_existing, report)
            self._restore_threads(cursor, plan, records, now, report, step)
            for run in _runs(records, lambda item: kind_of(item[0].record_type)):
                self._insert_restored(cursor, plan, run, step)
            report.restored["records"] = len(records)
            relations = self._restorable_relations(cursor, plan, skip_existing, report, step)
            if relations:
                cursor.executemany(
                    f"INSERT INTO {self._relations} ({', '.join(relations[0])}) "
                    f"VALUES ({', '.join(':' + column for column in relations[0])})",
                    relations,
                )
                self._log(
                    cursor,
                    "link",
                    self._relations,
                    self._in("rel.id", "ids"),
                    {"ids": _ids_json(row["id"] for row in relations)},
                )
            report.restored["relations"] = len(relations)
            restored = [record.id for record, _ in records if record.record_type in MEMORY_TYPES]
            self._recount_lifecycle(cursor, restored, bump=False)  # they are new rows: no change of theirs
            self._recount_lifecycle(
                cursor, {row["target_id"] for row in relations} - set(restored), bump=not keep_versions
            )
        return report

    def _restorable_records(
        self, cursor: Any, plan: RestorePlan, vectors: list, skip_existing: bool, report: RestoreReport
    ) -> list[tuple[Record, Any]]:
        """The snapshot's records whose ids are free, with their vectors; a taken one is an error
        unless `skip_existing`, which reports it."""
        taken: set[tuple[str, str]] = set()
        by_kind: dict[str, list[str]] = {}
        for record in plan.records:
            by_kind.setdefault(kind_of(record.record_type), []).append(record.id)
        for kind, ids in by_kind.items():
            rows = self._fetch(
                f"SELECT r.id FROM {self._records} r WHERE r.kind = :kind AND {self._in('r.id', 'ids')}",
                {"kind": kind, "ids": _ids_json(ids)},
                cursor,
            )
            taken.update((kind, row["id"]) for row in rows)
        kept = []
        for record, vector in zip(plan.records, vectors, strict=True):
            kind = kind_of(record.record_type)
            if (kind, record.id) in taken:
                if not skip_existing:
                    raise ValueError(f"a {kind} record with id {record.id!r} already exists; nothing was restored")
                report.skipped.append(("record", record.id, "exists"))
                continue
            kept.append((record, vector))
        return kept

    def _restore_threads(
        self,
        cursor: Any,
        plan: RestorePlan,
        records: list[tuple[Record, Any]],
        now: str,
        report: RestoreReport,
        step: int = 1,
    ) -> None:
        """Create the snapshot's absent threads as they were (and, as add does, the thread of a
        record whose thread is gone); keep each thread's next sequence number above its restored
        messages'."""
        db_time = self.dialect.db_time
        for thread in plan.threads:  # (a long summary binds as a CLOB: no LONG inside a MERGE)
            cursor.execute(
                self.dialect.insert_if_absent(
                    self._threads,
                    ["id"],
                    {
                        column: f":{column}"
                        for column in (
                            "id",
                            "user_id",
                            "agent_id",
                            "metadata",
                            "settings",
                            "created_at",
                            "updated_at",
                            "summary",
                            "topics",
                            "version",
                        )
                    },
                ),
                {
                    "id": thread.id,
                    "user_id": thread.user_id,
                    "agent_id": thread.agent_id,
                    "metadata": dump_metadata(thread.metadata),
                    "settings": json.dumps(thread.settings),
                    "created_at": db_time(thread.created_at or now),
                    "updated_at": db_time(thread.updated_at or thread.created_at or now),
                    "summary": thread.summary,
                    "topics": None if thread.topics is None else json.dumps(thread.topics),
                    "version": thread.version + step,
                },
            )
            created = cursor.rowcount
            self._log_threads(cursor, created)
            if created:
                report.restored["threads"] += 1
            else:
                report.skipped.append(("thread", thread.id, "exists"))
        next_seq: dict[str, int] = {}
        for record, _ in records:
            thread_id = getattr(record, "thread_id", None)
            if thread_id is not None:
                if thread_id not in next_seq:
                    self._ensure_thread(cursor, thread_id, record.user_id, record.agent_id, now, settings="{}")
                seq_no = getattr(record, "seq_no", None)
                next_seq[thread_id] = max(next_seq.get(thread_id, 0), 0 if seq_no is None else seq_no + 1)
        for thread_id, after in sorted(next_seq.items()):
            cursor.execute(
                f"UPDATE {self._threads} SET next_seq_no = :after WHERE id = :id AND next_seq_no < :after",
                {"after": after, "id": thread_id},
            )

    def _insert_restored(self, cursor: Any, plan: RestorePlan, run: list[tuple[Record, Any]], step: int = 1) -> None:
        """Insert a run of restored records of one kind, with their image bytes, and log them:
        the columns of an add (_record_values), with the snapshot's types, times and versions."""
        records = [record for record, _ in run]
        rows = []
        for record in records:
            facts = plan.stored_of(record)
            rows.append(
                NewRecord(
                    id=record.id,
                    record_type=record.record_type,
                    content=record.content,
                    index_text=facts["index_text"],
                    thread_id=getattr(record, "thread_id", None),
                    user_id=getattr(record, "user_id", None),
                    agent_id=getattr(record, "agent_id", None),
                    role=getattr(record, "role", None),
                    timestamp=facts["event_at"],
                    metadata=dump_metadata(record.metadata),
                    status=facts["status"].value,
                    parts=dump_parts(getattr(record, "parts", None)),
                )
            )
        # An image's stored dimensions are not needed to store it again: its bytes were checked when added.
        images = [
            (CheckedImage(r.bytes, r.mime_type, 0, 0), r.message_id) for r in records if isinstance(r, ImageRecord)
        ]
        expiries = [record.expires_at for record in records]
        values = self._record_values(
            AddPlan(rows, [vector for _, vector in run], images, expiries, utc_now()),
            [getattr(record, "seq_no", None) for record in records],
        )
        db_time = self.dialect.db_time
        values["record_type"] = [record.record_type for record in records]
        values["created_at"] = [db_time(record.created_at) for record in records]
        values["version"] = [record.version + step for record in records]
        kind = values["kind"][0]
        if kind in (USER_PROFILE_TYPE, AGENT_PROFILE_TYPE):  # a profile is its owner's record
            values["user_id" if kind == USER_PROFILE_TYPE else "agent_id"] = [record.id for record in records]
        inserted = self.dialect.insert_rows(cursor, self._records, values, DEFAULT_BATCH_SIZE)
        self._insert_image_bytes(cursor, rows, images)
        self._log_inserted(cursor, kind, values["id"], inserted)

    def _restorable_relations(
        self, cursor: Any, plan: RestorePlan, skip_existing: bool, report: RestoreReport, step: int = 1
    ) -> list[dict[str, Any]]:
        """Rows of the snapshot's relations to insert: a taken id or pair is an error unless
        `skip_existing`; a relation whose end is not a stored memory of its type is skipped."""
        if not plan.relations:
            return []
        ends = {end for relation in plan.relations for end in (relation.source_record_id, relation.target_record_id)}
        found = {
            row["id"]: row["record_type"]
            for row in self._fetch(
                f"SELECT r.id, r.record_type FROM {self._records} r WHERE r.kind = 'memory' "
                f"AND {self._in('r.id', 'ids')}",
                {"ids": _ids_json(sorted(ends))},
                cursor,
            )
        }
        taken = self._fetch(
            f"SELECT rel.id, rel.pair FROM {self._relations} rel WHERE {self._in('rel.id', 'ids')} "
            f"OR {self._in('rel.pair', 'pairs')}",
            {
                "ids": _ids_json(relation.id for relation in plan.relations),
                "pairs": _ids_json(plan.pair(relation) for relation in plan.relations),
            },
            cursor,
        )
        taken_ids, taken_pairs = {row["id"] for row in taken}, {row["pair"] for row in taken}
        rows = []
        for relation in plan.relations:
            missing = [
                end
                for end, end_type in (
                    (relation.source_record_id, relation.source_record_type),
                    (relation.target_record_id, relation.target_record_type),
                )
                if found.get(end) != end_type
            ]
            if missing:
                report.skipped.append(("relation", relation.id, f"no memory {missing[0]!r} to link"))
                continue
            if relation.id in taken_ids or plan.pair(relation) in taken_pairs:
                if not skip_existing:
                    raise ValueError(
                        f"relation {relation.id!r} (or a link of the same pair) already exists; nothing was restored"
                    )
                report.skipped.append(("relation", relation.id, "exists"))
                continue
            rows.append(
                {
                    "id": relation.id,
                    "source_id": relation.source_record_id,
                    "source_type": relation.source_record_type,
                    "target_id": relation.target_record_id,
                    "target_type": relation.target_record_type,
                    "relation_type": relation.relation_type,
                    "opposite_type": relation.opposite_relation_type,
                    "event_at": self.dialect.db_time(relation.timestamp),
                    "metadata": dump_metadata(relation.metadata),
                    "created_at": self.dialect.db_time(relation.created_at or utc_now()),
                    "pair": plan.pair(relation),
                    "version": relation.version + step,
                }
            )
        return rows

    # --- reads ------------------------------------------------------------------------------

    def _record(self, row: Mapping[str, Any]) -> Record:
        """The record of a row; NULL content is '' (Oracle stores '' as NULL), flags restore an explicit ''."""
        text_time = self.dialect.text_time
        return build_record(
            row,
            timestamp=text_time(row["event_at"]),
            created_at=text_time(row["created_at"]),
            expires_at=text_time(row["expires_at"]),
            content=row["content"] or "",
            role="" if row["role_empty"] else row["role"],
            seq_no=None if row["seq_no"] is None else int(row["seq_no"]),
        )

    def align_image_expiry(self, message_ids: Sequence[str]) -> None:
        """Give the images of these messages their message's expiry: they live and go together."""
        with self._write() as cursor:
            cursor.execute(
                f"UPDATE {self._records} SET expires_at = (SELECT m.expires_at FROM {self._records} m "
                f"WHERE m.kind = 'message' AND m.id = {self._records}.message_id) "
                f"WHERE kind = 'image' AND {self._in('message_id', 'ids')}",
                {"ids": _ids_json(message_ids)},
            )
            self._log(
                cursor,
                "record",
                self._records,
                f"r.kind = 'image' AND {self._in('r.message_id', 'ids')}",
                {"ids": _ids_json(message_ids)},
            )

    def image_bytes(self, image_ids: Sequence[str]) -> dict[str, bytes]:
        """The stored bytes of these images (live or not), by id."""
        rows = self._fetch(
            f"SELECT r.id, b.bytes FROM {self._records} r JOIN {self._image_bytes} b ON b.record_pk = r.pk "
            f"WHERE r.kind = 'image' AND {self._in('r.id', 'ids')}",
            {"ids": _ids_json(image_ids)},
        )
        return {row["id"]: row["bytes"] for row in rows}

    def get(self, record_type: str, record_id: str, include_bytes: bool = False) -> Record | None:
        """One live record by type and id, or None. `include_bytes` matters for images only."""
        if record_type == "thread":
            return self.get_thread(record_id)
        check_record_type(record_type)
        if not isinstance(record_id, str):
            raise ValueError(f"record_id must be a string, not {type(record_id).__name__}")
        if not storable_id(record_id):
            return None
        rows = self._fetch(
            f"SELECT {self._record_columns} FROM {self._records} r WHERE r.kind = :kind AND r.id = :id "
            "AND r.record_type = :record_type AND (r.expires_at IS NULL OR r.expires_at > :now)",
            {
                "kind": kind_of(record_type),
                "id": record_id,
                "record_type": record_type,
                "now": self.dialect.db_time(utc_now()),
            },
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
        status: Any = NOT_SET,
        newest_first: bool = False,
        text: Any = NOT_SET,
        expires_before: Any = NOT_SET,
    ) -> Page:
        """Records of one or more types in insertion order (or newest first), with exact scope
        filters, status, text and expiry filters (MemoryStore.list)."""
        types = check_record_types(record_type)
        check_positive_int("limit", limit, allow_none=True)
        check_bool("include_expired", include_expired)
        check_bool("newest_first", newest_first)
        wanted = listing_status(status)
        params: dict[str, Any] = {}
        where = [_types_condition("r", types, params)]
        for column, value in (("thread_id", thread_id), ("user_id", user_id), ("agent_id", agent_id)):
            if value is not NOT_SET:
                check_scope_value(column, value)
                where.append(scope_condition(f"r.{column}", column, value, params))
        if record_id is not NOT_SET:
            ids = record_id_list(record_id)
            # The kind adds nothing to the types but lets the (kind, id) key find the ids; without
            # it SQLite walks the table in key order (35 ms for one memory at 100k records).
            kinds = sorted({kind_of(t) for t in types})
            where.append(f"r.kind IN ({', '.join(f':kind{i}' for i in range(len(kinds)))})")
            params.update({f"kind{i}": kind for i, kind in enumerate(kinds)})
            where.append(self._in("r.id", "record_ids"))
            params["record_ids"] = _ids_json(ids)
        if metadata_filter is None:
            where.append(f"(r.metadata IS NULL OR {self.dialect.is_empty_object('r.metadata')})")
        elif metadata_filter is not NOT_SET:
            compiler = self.dialect.filter_compiler()
            where.append(compiler.compile(parse_filter(metadata_filter), "r.metadata"))
            params.update(compiler.params)
        if wanted == "expired":
            where.append("r.expires_at IS NOT NULL AND r.expires_at <= :now")
        elif not include_expired:
            where.append("(r.expires_at IS NULL OR r.expires_at > :now)")
        if wanted == "valid":
            where.append("r.status = 'valid' AND r.lifecycle_links = 0")
        elif wanted == "invalid":
            where.append(INVALID_SQL)
        if wanted == "expired" or not include_expired:
            params["now"] = self.dialect.db_time(utc_now())
        if expires_before is not NOT_SET:
            if expires_before is None:
                raise ValueError("expires_before must be an ISO-8601 timestamp, not None")
            where.append("r.expires_at IS NOT NULL AND r.expires_at <= :expires_before")
            params["expires_before"] = self.dialect.db_time(normalize_timestamp(expires_before, "expires_before"))
        matching = self._text_condition(["r.content", "r.id", self.dialect.json_text("r.metadata")], text, params)
        if matching is not None:
            where.append(matching)
        if cursor is not None:
            # An ascending cursor is [pk] (as every earlier engine wrote it), a newest-first one
            # [pk, "desc"]: each order refuses the other's.
            values = decode_cursor(cursor, (int, str) if newest_first else (int,))
            if newest_first and values[1] != "desc":
                raise ValueError(f"invalid cursor: {cursor!r}")
            where.append("r.pk < :after" if newest_first else "r.pk > :after")
            params["after"] = values[0]
        order = "r.pk DESC" if newest_first else "r.pk"
        sql = f"SELECT {self._record_columns} FROM {self._records} r WHERE {' AND '.join(where)} ORDER BY {order}"
        rows = self._fetch(sql + self._fetch_first(limit, params), params)
        more = limit is not None and len(rows) > limit
        rows = rows[:limit]
        records = self._with_bytes([self._record(row) for row in rows], include_bytes)
        last = int(rows[-1]["pk"]) if more else None
        return Page(
            records, None if last is None else encode_cursor(last, "desc") if newest_first else encode_cursor(last)
        )

    def _text_condition(self, expressions: Sequence[str], text: Any, params: dict[str, Any]) -> str | None:
        """A listing's `text` filter: a case-insensitive substring of any of `expressions`, as a
        LIKE of their lower case against one bind (wildcards escaped); None without a filter."""
        pattern = like_pattern(text)
        if pattern is None:
            return None
        params["text_pattern"] = pattern
        conditions = []
        for expression in expressions:
            condition, binds = self.dialect.contains_text(expression, pattern)
            conditions.append(condition)
            params.update(binds)
        return "(" + " OR ".join(conditions) + ")"

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
        where = ["r.thread_id = :thread_id", "r.kind = 'message'", "(r.expires_at IS NULL OR r.expires_at > :now)"]
        params: dict[str, Any] = {"thread_id": thread_id, "now": self.dialect.db_time(utc_now())}
        where += seq_range_conditions("r.seq_no", range_start_seq_no, range_end_seq_no, params)
        sql = f"SELECT {self._record_columns} FROM {self._records} r WHERE {' AND '.join(where)} ORDER BY r.seq_no DESC"
        if last_n is not None:
            sql += self.dialect.first_rows(":last_n")
            params["last_n"] = last_n
        return [self._record(row) for row in reversed(self._fetch(sql, params))]

    def thread_message_window(self, thread_id: str, offset: int, limit: int | None) -> list[MessageRecord]:
        """A slice of a thread's live messages by position (0 = oldest), for Thread.get_messages."""
        params: dict[str, Any] = {"thread_id": thread_id, "now": self.dialect.db_time(utc_now()), "offset": offset}
        sql = (
            f"SELECT {self._record_columns} FROM {self._records} r "
            "WHERE r.thread_id = :thread_id AND r.kind = 'message' "
            "AND (r.expires_at IS NULL OR r.expires_at > :now) ORDER BY r.seq_no"
        )
        if limit is not None:
            params["limit"] = limit
        sql += self.dialect.offset_rows(":offset", None if limit is None else ":limit")
        return [self._record(row) for row in self._fetch(sql, params)]

    def count_thread_messages(self, thread_id: str, *, through_seq_no: int | None = None) -> int:
        params: dict[str, Any] = {"thread_id": thread_id, "now": self.dialect.db_time(utc_now())}
        through = ""
        if through_seq_no is not None:
            if isinstance(through_seq_no, bool) or not isinstance(through_seq_no, int):
                raise ValueError(f"through_seq_no must be an integer or None, not {through_seq_no!r}")
            check_int_range("through_seq_no", through_seq_no)
            through, params["through_seq_no"] = " AND r.seq_no <= :through_seq_no", through_seq_no
        rows = self._fetch(
            f"SELECT count(*) AS n FROM {self._records} r WHERE r.thread_id = :thread_id AND r.kind = 'message' "
            f"AND (r.expires_at IS NULL OR r.expires_at > :now){through}",
            params,
        )
        return int(rows[0]["n"])

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
        link version. An index that cannot load counts as one difference. None without an index."""
        if self.index is None:
            return []
        try:
            vectors, versions = self.index.contents(_IndexSource(self, cursor))
        except Exception as error:  # e.g. a stored vector of the wrong size: the index cannot hold it
            log.warning("the in-memory index could not be loaded for the check: %s", error)
            return [(None, f"index: {error}")]
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
        differences = [
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
            self.index = MemoryIndex(self.vector_dim, self.index.snapshot_path)
            with self._read() as cursor:
                self.index.rebuild(_IndexSource(self, cursor))


class _Transaction:
    """A thread's open transaction() block: the connection it takes at its first write (released
    by `stack`) with a cursor for its savepoints, whether it has begun to write (holds the write
    lock), how many parts are open inside it (savepoint names), and the error that ended it if
    the database rolled it back on its own."""

    def __init__(self, stack: ExitStack) -> None:
        self.stack = stack
        self.connection: Any = None
        self.cursor: Any = None
        self.begun = False
        self.depth = 0
        self.failed: Exception | None = None

    def check(self) -> None:
        if self.failed is not None:
            raise RuntimeError(
                "the database rolled this transaction back after a failed write; nothing of it was stored"
            ) from self.failed


class _IndexSource:
    """What the in-memory index reads of the store (index.ChangeSource), on the search's cursor."""

    def __init__(self, store: SQLMemoryStore, cursor: Any) -> None:
        self._store, self._cursor = store, cursor

    def _fetch(self, sql: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        return self._store._fetch(sql, params, self._cursor)

    def log_state(self) -> LogState:
        store = self._store
        [bounds] = self._fetch(f"SELECT MIN(seq) AS first_seq, MAX(seq) AS last_seq FROM {store._changes}")
        first, last = bounds["first_seq"], bounds["last_seq"]
        return LogState(
            store_id=store._meta_value(self._cursor, "store_id") or "",
            last_seq=0 if last is None else int(last),
            trimmed_to=0 if first is None else int(first) - 1,
        )

    def changes_since(self, seq: int) -> list[tuple[int, str, int, int]]:
        rows = self._fetch(
            f"SELECT seq, entity, first_key, last_key FROM {self._store._changes} WHERE seq > :seq ORDER BY seq",
            {"seq": seq},
        )
        return [(int(row["seq"]), row["entity"], int(row["first_key"]), int(row["last_key"])) for row in rows]

    def record_rows(self, pks: Sequence[int] | None) -> list[dict[str, Any]]:
        store, params = self._store, {}
        where = ""
        if pks is not None:
            where, params = f"WHERE {store._in('r.pk', 'pks', numeric=True)} ", {"pks": json.dumps(list(pks))}
        rows = self._fetch(
            f"SELECT r.pk, r.id, r.kind, r.record_type, r.user_id, r.agent_id, r.thread_id, r.seq_no, "
            f"{EFFECTIVE_STATUS_SQL} AS status, r.expires_at, r.event_at AS timestamp, r.created_at, "
            f"r.search_text AS text, r.embedding FROM {store._records} r {where}ORDER BY r.pk",
            params,
        )
        text_time = store.dialect.text_time
        for row in rows:
            for column in ("expires_at", "timestamp", "created_at"):
                row[column] = text_time(row[column])
        return rows

    def link_rows(self, positions: Sequence[int] | None) -> list[tuple]:
        store, params = self._store, {}
        where = ""
        if positions is not None:
            where, params = (
                f"WHERE {store._in('rel.pos', 'positions', numeric=True)} ",
                {"positions": json.dumps(list(positions))},
            )
        text_time = store.dialect.text_time
        return [
            (
                int(row["pos"]),
                row["id"],
                row["source_id"],
                row["source_type"],
                row["target_id"],
                row["target_type"],
                row["relation_type"],
                row["opposite_type"],
                text_time(row["event_at"]),
                row["metadata"],
                text_time(row["created_at"]),
                int(row["version"]),
            )
            for row in self._fetch(
                f"SELECT {store._relation_columns} FROM {store._relations} rel {where}ORDER BY rel.created_at, rel.id",
                params,
            )
        ]
