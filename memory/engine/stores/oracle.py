"""Oracle AI Database: the SQL dialect of SQLMemoryStore, OracleDBMemoryStore, in-database embeddings.

Python-oracledb runs in thin mode (no Instant Client). Records sit in a table with a
VECTOR(dim, FLOAT32) column and native JSON metadata; vector ranking is VECTOR_DISTANCE(...,
COSINE) with FETCH EXACT (or APPROX, with an HNSW index) FIRST k ROWS; keyword ranking is Oracle
Text (CONTAINS/SCORE); metadata filters compile to SQL/JSON (filters.OracleFilterCompiler).
"""

from __future__ import annotations

import array
import json
import os
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote, urlsplit

import numpy as np

from ..embedders import Embedder
from ..filters import OracleFilterCompiler
from ..ttl import format_utc, parse_timestamp
from ..types import NOT_SET, SchemaPolicy
from .arguments import check_positive_int
from .index import IndexRebuild
from .keywords import query_words
from .sql import (
    DROP_ORDER,
    PREFIX_PATTERN,
    REEMBED_PHASE,
    REEMBED_TARGET,
    VERSIONED_TABLES,
    SQLDialect,
    SQLMemoryStore,
    table_names,
)

_MODEL_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_$#]{0,127}(\.[A-Za-z][A-Za-z0-9_$#]{0,127})?$")
STANDARD_STRING_BYTES = 4000
"""A VARCHAR2 bind's limit in bytes on a server with MAX_STRING_SIZE=STANDARD (the default)."""
EXTENDED_STRING_BYTES = 32767
"""The limit under MAX_STRING_SIZE=EXTENDED."""
ID_TYPE = "VARCHAR2(512)"
"""The SQL type of ids and scope values."""

# ORA- codes read from errors (exc.args[0].code).
ORA_UNIQUE_VIOLATED = 1
ORA_NAME_IN_USE = 955
ORA_COLUMN_EXISTS = 1430


def _error_code(exc: Exception) -> int | None:
    return getattr(exc.args[0], "code", None) if exc.args else None


def keyword_query(text: str) -> str | None:
    """An Oracle Text query accumulating the query's words, each escaped in braces; None without words.

    Words are the analyser's query terms before stemming (letters and digits only), so nothing
    in them can be an operator; the query is a bind value, never SQL text.
    """
    words = query_words(text)
    return " ACCUM ".join(f"{{{word}}}" for word in dict.fromkeys(words)) or None


class OracleSchema:
    """The managed tables and indexes of one `table_name_prefix`, as DDL.

    Known without a connection, so that a DBA can review the DDL (`oam_schema --print-sql`)
    before anything runs. Names are the validated prefix plus fixed names, upper case, quoted.
    """

    def __init__(self, prefix: str, vector_dim: int, vector_index: bool = False, keyword_index: bool = True) -> None:
        if prefix and (not isinstance(prefix, str) or not PREFIX_PATTERN.match(prefix)):
            raise ValueError(
                f"table_name_prefix must start with a letter and hold only letters, digits and _ "
                f"(at most 30 characters), not {prefix!r}"
            )
        check_positive_int("vector_dim", vector_dim)
        self.prefix = prefix
        self.names = table_names(prefix)
        self.text_index = f"{prefix.upper()}OAM_RECORDS_TEXT"
        self.staging = f"{prefix.upper()}OAM_REEMBED"
        self.vector_dim, self.vector_index, self.keyword_index = vector_dim, vector_index, keyword_index

    def create_sql(self) -> list[str]:
        """The DDL of the managed schema, in creation order (what `oam_schema --print-sql` shows)."""
        n = self.names
        t, r, rel, img, meta = (f'"{n[key]}"' for key in ("threads", "records", "relations", "images", "meta"))
        statements = [
            f"CREATE TABLE IF NOT EXISTS {meta} (meta_key VARCHAR2(100) PRIMARY KEY, meta_value VARCHAR2(4000))",
            f"""CREATE TABLE IF NOT EXISTS {t} (
    id {ID_TYPE} PRIMARY KEY,
    user_id {ID_TYPE}, agent_id {ID_TYPE}, metadata JSON, settings JSON,
    created_at TIMESTAMP(6) NOT NULL, updated_at TIMESTAMP(6) NOT NULL,
    next_seq_no NUMBER(19) DEFAULT 0 NOT NULL, summary CLOB, topics JSON, version NUMBER(19) DEFAULT 1 NOT NULL)""",
            f'CREATE INDEX IF NOT EXISTS "{n["threads"]}_ACTIVITY" ON {t} (updated_at, id)',
            f'CREATE INDEX IF NOT EXISTS "{n["threads"]}_USER" ON {t} (user_id)',
            f'CREATE INDEX IF NOT EXISTS "{n["threads"]}_AGENT" ON {t} (agent_id)',
            f"""CREATE TABLE IF NOT EXISTS {r} (
    pk NUMBER(19) GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id {ID_TYPE} NOT NULL, kind VARCHAR2(20) NOT NULL, record_type VARCHAR2(20) NOT NULL,
    content CLOB, index_text CLOB, index_text_empty NUMBER(1) DEFAULT 0 NOT NULL, search_text CLOB,
    parts JSON, thread_id {ID_TYPE}, user_id {ID_TYPE}, agent_id {ID_TYPE},
    role VARCHAR2(512), role_empty NUMBER(1) DEFAULT 0 NOT NULL, seq_no NUMBER(19),
    event_at TIMESTAMP(6), created_at TIMESTAMP(6) NOT NULL, expires_at TIMESTAMP(6),
    status VARCHAR2(10) DEFAULT 'valid' NOT NULL, lifecycle_links NUMBER(10) DEFAULT 0 NOT NULL,
    metadata JSON, embedding VECTOR({self.vector_dim}, FLOAT32), message_id {ID_TYPE}, mime_type VARCHAR2(20),
    version NUMBER(19) DEFAULT 1 NOT NULL, CONSTRAINT "{n["records"]}_KIND_ID" UNIQUE (kind, id))""",
            f'CREATE INDEX IF NOT EXISTS "{n["records"]}_THREAD" ON {r} (thread_id, kind, seq_no)',
            f'CREATE INDEX IF NOT EXISTS "{n["records"]}_USER" ON {r} (user_id, record_type)',
            f'CREATE INDEX IF NOT EXISTS "{n["records"]}_AGENT" ON {r} (agent_id, record_type)',
            f'CREATE INDEX IF NOT EXISTS "{n["records"]}_TYPE" ON {r} (record_type, status)',
            f'CREATE INDEX IF NOT EXISTS "{n["records"]}_EXPIRY" ON {r} (expires_at)',
            f'CREATE INDEX IF NOT EXISTS "{n["records"]}_MESSAGE" ON {r} (message_id)',
            # Records by creation: the memories stored before a day (activity hygiene), from the index.
            f'CREATE INDEX IF NOT EXISTS "{n["records"]}_CREATED" ON {r} (kind, created_at, expires_at)',
            # Image bytes live apart, so that reading records never drags megabytes along.
            f"""CREATE TABLE IF NOT EXISTS {img} (
    record_pk NUMBER(19) PRIMARY KEY REFERENCES {r} (pk) ON DELETE CASCADE, bytes BLOB NOT NULL)""",
            # `pair` names the two endpoints in sorted order: one link per pair, in either direction.
            f"""CREATE TABLE IF NOT EXISTS {rel} (
    pos NUMBER(19) GENERATED ALWAYS AS IDENTITY, id {ID_TYPE} PRIMARY KEY,
    source_id {ID_TYPE} NOT NULL, source_type VARCHAR2(20) NOT NULL,
    target_id {ID_TYPE} NOT NULL, target_type VARCHAR2(20) NOT NULL,
    relation_type VARCHAR2(512) NOT NULL, opposite_type VARCHAR2(512) NOT NULL,
    event_at TIMESTAMP(6), metadata JSON, created_at TIMESTAMP(6) NOT NULL,
    pair VARCHAR2(1100) NOT NULL CONSTRAINT "{n["relations"]}_PAIR" UNIQUE, version NUMBER(19) DEFAULT 1 NOT NULL)""",
            # A graph hop reads links in link order (creation time, then id) from these indexes.
            f'CREATE INDEX IF NOT EXISTS "{n["relations"]}_FROM" ON {rel} (source_id, created_at, id, target_id)',
            f'CREATE INDEX IF NOT EXISTS "{n["relations"]}_TO" ON {rel} (target_id, created_at, id, source_id)',
            # The change log: ORDER keeps sequence numbers in the order writers (serialised) took them.
            f"""CREATE TABLE IF NOT EXISTS "{n["changes"]}" (
    seq NUMBER(19) GENERATED ALWAYS AS IDENTITY (ORDER) PRIMARY KEY,
    entity VARCHAR2(10) NOT NULL, first_key NUMBER(19) NOT NULL, last_key NUMBER(19) NOT NULL)""",
            # The activity log (sql/activity.py): a row per call, and a row per record it returned or changed.
            f"""CREATE TABLE IF NOT EXISTS "{n["activity"]}" (
    pk NUMBER(19) GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id VARCHAR2(64) NOT NULL CONSTRAINT "{n["activity"]}_ID" UNIQUE, kind VARCHAR2(10) NOT NULL,
    entry_point VARCHAR2(100) NOT NULL, event_at TIMESTAMP(6) NOT NULL,
    caller {ID_TYPE} NOT NULL, caller_kind VARCHAR2(10) NOT NULL, on_behalf_of {ID_TYPE},
    user_id {ID_TYPE}, agent_id {ID_TYPE}, thread_id {ID_TYPE}, query_text VARCHAR2(4000),
    request CLOB, results CLOB, result_count NUMBER(10) DEFAULT 0 NOT NULL, content CLOB,
    content_chars NUMBER(19) DEFAULT 0 NOT NULL, tokens NUMBER(19) DEFAULT 0 NOT NULL,
    duration_ms BINARY_DOUBLE DEFAULT 0 NOT NULL, cause CLOB, history_ref VARCHAR2(200))""",
            # Listings run newest first by (event_at, pk).
            f'CREATE INDEX IF NOT EXISTS "{n["activity"]}_AT" ON "{n["activity"]}" (event_at)',
            f'CREATE INDEX IF NOT EXISTS "{n["activity"]}_CALLER_AT" ON "{n["activity"]}" (caller, event_at, pk)',
            f'CREATE INDEX IF NOT EXISTS "{n["activity"]}_THREAD_AT" ON "{n["activity"]}" (thread_id, event_at, pk)',
            # Their first forms, by pk alone (schema 7 as first released).
            f'DROP INDEX IF EXISTS "{n["activity"]}_CALLER"',
            f'DROP INDEX IF EXISTS "{n["activity"]}_THREAD"',
            f"""CREATE TABLE IF NOT EXISTS "{n["activity_records"]}" (
    event_pk NUMBER(19) NOT NULL REFERENCES "{n["activity"]}" (pk) ON DELETE CASCADE,
    result_pos NUMBER(10) NOT NULL, record_id {ID_TYPE} NOT NULL, record_type VARCHAR2(20) NOT NULL,
    result_rank NUMBER(10), hop NUMBER(10) DEFAULT 0 NOT NULL, status VARCHAR2(10), kind VARCHAR2(10) NOT NULL,
    event_at TIMESTAMP(6) NOT NULL, caller {ID_TYPE} NOT NULL, caller_kind VARCHAR2(10) NOT NULL,
    CONSTRAINT "{n["activity_records"]}_PK" PRIMARY KEY (event_pk, result_pos))""",
            f'CREATE INDEX IF NOT EXISTS "{n["activity_records"]}_RECORD" ON "{n["activity_records"]}" '
            "(record_id, event_at)",
            f'CREATE INDEX IF NOT EXISTS "{n["activity_records"]}_AT" ON "{n["activity_records"]}" (event_at)',
            # Sensitive-data findings (sql/findings.py): they go with their record.
            f"""CREATE TABLE IF NOT EXISTS "{n["findings"]}" (
    pk NUMBER(19) GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    record_pk NUMBER(19) NOT NULL REFERENCES {r} (pk) ON DELETE CASCADE,
    field VARCHAR2(20) NOT NULL, kind VARCHAR2(40) NOT NULL, span_start NUMBER(10) NOT NULL,
    span_end NUMBER(10) NOT NULL, preview VARCHAR2(1000) NOT NULL, digest VARCHAR2(64) NOT NULL,
    found_at TIMESTAMP(6) NOT NULL)""",
            f'CREATE INDEX IF NOT EXISTS "{n["findings"]}_RECORD" ON "{n["findings"]}" (record_pk)',
        ]
        if self.vector_index:
            statements.append(self.vector_index_sql())
        if self.keyword_index:
            statements.append(self.text_index_sql())
        return statements

    def vector_index_sql(self) -> str:
        """The HNSW index of the vector column. CREATE VECTOR INDEX has no IF NOT EXISTS in the SQL
        reference: an existing one is ORA-00955."""
        return (
            f'CREATE VECTOR INDEX "{self.names["records"]}_HNSW" ON "{self.names["records"]}" (embedding) '
            "ORGANIZATION INMEMORY NEIGHBOR GRAPH DISTANCE COSINE WITH TARGET ACCURACY 95 "
            "PARAMETERS (TYPE HNSW, NEIGHBORS 32, EFCONSTRUCTION 200)"
        )

    # --- re-embedding (OracleDBMemoryStore._swap) ----------------------------------------------

    def staging_sql(self, vector_dim: int) -> list[str]:
        """A new, empty staging table for re-embedding: a VECTOR of the new dimension per record key."""
        return [
            *self.drop_staging_sql(),
            f'CREATE TABLE "{self.staging}" (pk NUMBER(19) PRIMARY KEY, version NUMBER(19) NOT NULL, '
            f"embedding VECTOR({int(vector_dim)}, FLOAT32))",
        ]

    def drop_staging_sql(self) -> list[str]:
        return [f'DROP TABLE IF EXISTS "{self.staging}" PURGE']

    def next_vector_column_sql(self, vector_dim: int) -> list[str]:
        """The column the new vectors are copied to before it replaces `embedding` (a VECTOR
        column cannot change its dimension with MODIFY)."""
        return [f'ALTER TABLE "{self.names["records"]}" ADD (embedding_next VECTOR({int(vector_dim)}, FLOAT32))']

    def drop_next_vector_column_sql(self) -> list[str]:
        return [f'ALTER TABLE "{self.names["records"]}" DROP COLUMN embedding_next']

    def vector_columns_sql(self) -> str:
        return (
            "SELECT column_name FROM user_tab_columns WHERE table_name = :table_name "
            "AND column_name IN ('EMBEDDING', 'EMBEDDING_NEXT', 'EMBEDDING_PREV')"
        )

    def rename_vector_columns_sql(self, columns: set[str]) -> list[str]:
        """What is left of putting embedding_next in place of embedding, given the columns there:
        the HNSW index goes first (it is built on the old column), then the two renames."""
        if "EMBEDDING_NEXT" not in columns:
            return []
        records = f'"{self.names["records"]}"'
        statements = [f'DROP INDEX IF EXISTS "{self.names["records"]}_HNSW"'] if self.vector_index else []
        if "EMBEDDING" in columns:
            statements.append(f"ALTER TABLE {records} RENAME COLUMN embedding TO embedding_prev")
        statements.append(f"ALTER TABLE {records} RENAME COLUMN embedding_next TO embedding")
        return statements

    def vector_cleanup_sql(self, columns: set[str]) -> list[str]:
        """After the swap: the old column marked unused (instant, unlike DROP COLUMN, which rewrites
        every row), the staging table dropped, the HNSW index built on the new column."""
        statements = []
        if "EMBEDDING_PREV" in columns:
            statements.append(f'ALTER TABLE "{self.names["records"]}" SET UNUSED COLUMN embedding_prev')
        statements += self.drop_staging_sql()
        if self.vector_index:
            statements.append(self.vector_index_sql())
        return statements

    def legacy_version(self, cursor: Any) -> None:
        """Oracle's earlier schema (version 1) has this layout, less the change log that creation adds."""
        return None

    def upgrade(self, cursor: Any) -> None:
        """Nothing to rebuild: CREATE_IF_NECESSARY adds the change log table."""

    def upgrade_sql(self, cursor: Any) -> list[str]:
        """What a schema of version 1-5 lacks: the record, thread and relation versions (schema 6),
        each row starting at 1 (a metadata-only change: the default is not written to every row)."""
        names = [self.names[key] for key in VERSIONED_TABLES]
        cursor.execute(
            "SELECT table_name FROM user_tab_columns WHERE column_name = 'VERSION' "
            f"AND table_name IN ({', '.join(f':t{i}' for i in range(len(names)))})",
            {f"t{i}": name for i, name in enumerate(names)},
            fetch_lobs=False,
        )
        present = {row[0] for row in cursor.fetchall()}
        return [
            f'ALTER TABLE "{name}" ADD (version NUMBER(19) DEFAULT 1 NOT NULL)' for name in names if name not in present
        ]

    def text_index_sql(self) -> str:
        """The Oracle Text index of the keyword ranking, synchronised at each commit."""
        return (
            f'CREATE INDEX IF NOT EXISTS "{self.text_index}" ON "{self.names["records"]}" (search_text) '
            "INDEXTYPE IS CTXSYS.CONTEXT PARAMETERS ('SYNC (ON COMMIT)')"
        )

    def drop_sql(self) -> list[str]:
        """The DDL that removes the managed schema (SchemaPolicy.RECREATE runs it first)."""
        return [f'DROP TABLE IF EXISTS "{self.names[key]}" CASCADE CONSTRAINTS PURGE' for key in DROP_ORDER]


class OracleDialect(SQLDialect):
    """Oracle Database 23ai and later, through python-oracledb.

    `vector_index_transform` adds the VECTOR_INDEX_TRANSFORM hint to approximate searches, for a
    database whose optimizer leaves the HNSW index out of filtered searches (check the plan for
    VECTOR INDEX HNSW SCAN first): the index then answers, but Oracle may apply the top-k before
    the filters, so a filtered search can return fewer than k results.
    """

    name = "oracle"
    from_nothing = " FROM dual"

    def __init__(self, vector_index_transform: bool = False) -> None:
        self.vector_index_transform = vector_index_transform
        self.max_string_bytes = STANDARD_STRING_BYTES

    def connected(self, cursor: Any) -> None:
        """Learn the server's string limit: 32,767 bytes under MAX_STRING_SIZE=EXTENDED, where a
        VARCHAR2(32767) is legal (ORA-00910 otherwise), else 4,000. Unlike v$parameter, this needs
        no privilege."""
        import oracledb

        try:
            cursor.execute("SELECT CAST('x' AS VARCHAR2(32767)) AS probe FROM dual", fetch_lobs=False)
            extended = bool(cursor.fetchall())
        except oracledb.DatabaseError:
            extended = False
        self.max_string_bytes = EXTENDED_STRING_BYTES if extended else STANDARD_STRING_BYTES

    def schema(self, prefix: str, vector_dim: int, vector_index: bool, keyword_index: bool) -> OracleSchema:
        return OracleSchema(prefix, vector_dim, vector_index, keyword_index)

    def cursor(self, connection: Any) -> Any:
        return _oracle_cursor(connection, self.max_string_bytes)

    def begin(self, cursor: Any, changes_table: str | None) -> None:
        """Writers take the change log's table lock in turn (readers never wait for it)."""
        if changes_table is not None:
            cursor.execute(f"LOCK TABLE {changes_table} IN EXCLUSIVE MODE")

    def declare(self, cursor: Any, binds: Iterable[str]) -> None:
        """LONG for the large text binds (an inserted value may exceed 32 KB), VECTOR for embeddings
        (a batch whose first rows are None must still bind vectors: DPY-3013)."""
        import oracledb

        types = {
            "content": oracledb.DB_TYPE_LONG,
            "index_text": oracledb.DB_TYPE_LONG,
            "search_text": oracledb.DB_TYPE_LONG,
            "summary": oracledb.DB_TYPE_LONG,
            "request": oracledb.DB_TYPE_LONG,  # the activity log's JSON
            "results": oracledb.DB_TYPE_LONG,
            "cause": oracledb.DB_TYPE_LONG,
            "embedding": oracledb.DB_TYPE_VECTOR,
        }
        sizes = {name: types[name] for name in binds if name in types}
        if sizes:
            cursor.setinputsizes(**sizes)

    def tables_sql(self, bind: str) -> str:
        return f"SELECT table_name FROM user_tables WHERE table_name IN ({self.ids(bind)})"

    def text_index_sql(self) -> str:
        return (
            "SELECT count(*) AS n, count(CASE WHEN domidx_opstatus = 'FAILED' THEN 1 END) AS failed "
            "FROM user_indexes WHERE index_name = :name AND index_type = 'DOMAIN'"
        )

    def purge_text_index_sql(self, text_index: str) -> list[str]:
        """Oracle Text keeps a deleted row's tokens in the index's $I table until a FULL
        optimisation rewrites it (the index's name is the store's, never a user's value)."""
        return [f"CALL CTX_DDL.OPTIMIZE_INDEX('{text_index}', 'FULL')"]

    def ids(self, bind: str, numeric: bool = False) -> str:
        column_type = "NUMBER(19)" if numeric else ID_TYPE
        return f"SELECT jt.v FROM JSON_TABLE(:{bind}, '$[*]' COLUMNS (v {column_type} PATH '$')) jt"

    def id_rows(self, bind: str) -> str:
        return f"JSON_TABLE(:{bind}, '$[*]' COLUMNS (v {ID_TYPE} PATH '$'))"

    def json_text(self, expression: str) -> str:
        return f"JSON_SERIALIZE({expression} RETURNING CLOB)"

    def json_merge_patch(self, column: str, bind: str) -> str:
        return f"JSON_MERGEPATCH(COALESCE({column}, JSON('{{}}')), JSON(:{bind}))"

    def json_array_items(self, column: str, path: str, alias: str) -> tuple[str, str, str]:
        return (
            f"JSON_TABLE({column}, '{path}[*]' COLUMNS (item VARCHAR2(4000) PATH '$' NULL ON ERROR)) {alias}",
            f"{alias}.item",
            f"{alias}.item IS NOT NULL",
        )

    def is_empty_object(self, column: str) -> str:
        return f"JSON_EQUAL({column}, JSON('{{}}'))"

    def contains_text(self, expression: str, pattern: str) -> tuple[str, dict[str, Any]]:
        return f"LOWER({expression}) LIKE :text_pattern ESCAPE '\\'", {}

    def utc_day(self, expression: str) -> str:
        return f"TO_CHAR({expression}, 'YYYY-MM-DD')"  # the TIMESTAMP columns hold UTC

    def first_rows(self, count: str) -> str:
        return f" FETCH FIRST {count} ROWS ONLY"

    def offset_rows(self, offset: str, count: str | None) -> str:
        return f" OFFSET {offset} ROWS" + ("" if count is None else f" FETCH NEXT {count} ROWS ONLY")

    def vector_distance(self, column: str, bind: str) -> str:
        return f"VECTOR_DISTANCE({column}, :{bind}, COSINE)"

    def vector_pair_distance(self, left: str, right: str) -> str | None:
        return f"VECTOR_DISTANCE({left}, {right}, COSINE)"

    def vector_dimension(self, column: str) -> str:
        return f"VECTOR_DIMENSION_COUNT({column})"

    def vector_hint(self, alias: str, approximate_accuracy: int | None) -> str:
        if self.vector_index_transform and approximate_accuracy is not None:
            return f"/*+ VECTOR_INDEX_TRANSFORM({alias}) */ "
        return ""

    def top_k(self, depth_bind: str, approximate_accuracy: int | None) -> str:
        # Approximate top-k orders by the distance alone, as the vector index needs; exact top-k
        # breaks ties by insertion order, as SQLite does.
        if approximate_accuracy is not None:
            return (
                f"ORDER BY distance FETCH APPROX FIRST :{depth_bind} ROWS ONLY "
                f"WITH TARGET ACCURACY {int(approximate_accuracy)}"
            )
        return f"ORDER BY distance, r.pk FETCH EXACT FIRST :{depth_bind} ROWS ONLY"

    def keyword_query(self, text: str) -> str | None:
        return keyword_query(text)

    def keyword_join(self, text_index: str, bind: str) -> tuple[str, str, str]:
        return "", f"CONTAINS(r.search_text, :{bind}, 1) > 0", "SCORE(1)"

    def insert_if_absent(self, table: str, keys: Sequence[str], values: Mapping[str, str]) -> str:
        using = ", ".join(f"{values[key]} AS {key}" for key in keys)
        on = " AND ".join(f"t.{key} = s.{key}" for key in keys)
        return (
            f"MERGE INTO {table} t USING (SELECT {using} FROM dual) s ON ({on}) "
            f"WHEN NOT MATCHED THEN INSERT ({', '.join(values)}) VALUES ({', '.join(values.values())})"
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
            [f"t.{column} = {values[column]}" for column in updates]
            + [f"t.{column} = t.{column} + 1" for column in increments]
        )
        return self.insert_if_absent(table, keys, values).replace(
            " WHEN NOT MATCHED", f" WHEN MATCHED THEN UPDATE SET {assignments} WHEN NOT MATCHED", 1
        )

    for_update = " FOR UPDATE"

    def filter_compiler(self, bind_prefix: str = "mf") -> OracleFilterCompiler:
        return OracleFilterCompiler(bind_prefix)

    def db_time(self, value: str | None) -> datetime | None:
        """Canonical UTC text → the naive UTC datetime the TIMESTAMP columns hold."""
        return None if value is None else parse_timestamp(value).astimezone(UTC).replace(tzinfo=None)

    def text_time(self, value: datetime | None) -> str | None:
        return None if value is None else format_utc(value.replace(tzinfo=UTC))

    def vector(self, values: np.ndarray | None) -> array.array | None:
        """Never text: a vector bound as text fails past 32,767 characters (ORA-01461)."""
        return None if values is None else array.array("f", np.asarray(values, dtype=np.float32).tobytes())

    def is_unique_violation(self, exc: Exception) -> bool:
        return _error_code(exc) == ORA_UNIQUE_VIOLATED

    def is_name_in_use(self, exc: Exception) -> bool:
        """ORA-00955 for a table or index, ORA-01430 for a column another process added first."""
        return _error_code(exc) in (ORA_NAME_IN_USE, ORA_COLUMN_EXISTS)


class OracleDBMemoryStore(SQLMemoryStore):
    """The engine's records in Oracle Database tables with a VECTOR(dim, FLOAT32) column (D1).

    `pool` is an oracledb ConnectionPool or Connection (thin mode). `vector_index=True` creates an
    HNSW index (ORGANIZATION INMEMORY NEIGHBOR GRAPH, cosine; it needs VECTOR_MEMORY_SIZE) and
    `approximate_accuracy` (an integer percentage) switches searches to approximate top-k with
    that target accuracy; without them search is exact. `keyword_index=True` (the default)
    creates an Oracle Text index for the keyword half of hybrid search; where the database has
    none, hybrid search falls back to vector-only with a logged notice. `search_index=True` adds
    the in-memory index (stores/index/) in front of SQL, as on SQLite: worth it for a store small
    enough to scan in full per search (`search_index_path` keeps its generations on disk for
    every process to map); above that, leave search to the database (HNSW index).
    `vector_index_transform=True` adds Oracle's VECTOR_INDEX_TRANSFORM hint to approximate
    searches (see OracleDialect): filtered searches may then return fewer than k results.
    """

    def __init__(
        self,
        embedder: Embedder | None = None,
        pool: Any = None,
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
        search_index_rebuild: IndexRebuild | None = None,
        vector_index_transform: bool = False,
    ) -> None:
        if not isinstance(vector_index_transform, bool):
            raise ValueError(f"vector_index_transform must be True or False, not {vector_index_transform!r}")
        if vector_index_transform and approximate_accuracy is None:
            raise ValueError("vector_index_transform hints approximate search: it needs approximate_accuracy")
        super().__init__(
            OracleDialect(vector_index_transform),
            embedder,
            pool,
            schema_policy,
            vector_dim,
            table_name_prefix,
            search_strategy,
            memory_retention_config,
            vector_index=vector_index,
            approximate_accuracy=approximate_accuracy,
            keyword_index=keyword_index,
            search_index=search_index,
            search_index_path=search_index_path,
            search_index_rebuild=search_index_rebuild,
        )

    # --- re-embedding: the vector column's swap ------------------------------------------------

    def _swap(self, target: dict[str, Any]) -> tuple[int, int] | None:
        """Oracle commits each DDL statement on its own, so the swap is a sequence of steps that
        can each be redone: a new VECTOR column of the new dimension, filled from the staging table
        in one transaction (the store keeps serving from the old column until then), then renamed
        in place of the old one with the meta rows switched right after (_finish_swap). A swap
        cut short is completed by the next reembed call for the same embedder."""
        columns = self._vector_columns()
        with self._write(schema=True) as cursor:
            if "EMBEDDING_NEXT" in columns:  # left by a swap refused for changed records: its size may differ
                for statement in self.schema.drop_next_vector_column_sql():
                    cursor.execute(statement)
            for statement in self.schema.next_vector_column_sql(target["vector_dim"]):
                self._run_ddl(cursor, statement)
        with self._write() as cursor:
            cleared = self._copy_staged(cursor, "embedding_next")
            if cleared is None:
                return None
            self._set_meta(cursor, REEMBED_PHASE, "filled")
        return self._finish_swap(target), cleared

    def _finish_swap(self, target: dict[str, Any]) -> int | None:
        """Complete a swap from where it stopped (the meta row REEMBED_PHASE and the columns
        present tell where): rename the columns and switch the meta rows ("filled"), then clean up
        ("switched"). Returns how many records hold a vector when it switched them here."""
        with self._read() as cursor:
            meta = self._meta_values(cursor, (REEMBED_PHASE, REEMBED_TARGET))
        phase, pending = meta.get(REEMBED_PHASE), meta.get(REEMBED_TARGET)
        if phase is None:
            return None
        records = None
        if phase == "filled":
            pending_target = json.loads(pending) if pending else None
            if pending_target != target:
                raise RuntimeError(
                    f"a re-embedding to {pending_target and pending_target['embedder']!r} stopped during its swap; "
                    "run it again with that embedder to finish it"
                )
            with self._write(schema=True) as cursor:
                for statement in self.schema.rename_vector_columns_sql(self._vector_columns()):
                    cursor.execute(statement)
            with self._write() as cursor:
                records = self._switch_meta(cursor, target)
                self._set_meta(cursor, REEMBED_PHASE, "switched")
        with self._write(schema=True) as cursor:
            for statement in self.schema.vector_cleanup_sql(self._vector_columns()):
                self._run_ddl(cursor, statement)
        with self._write() as cursor:
            cursor.execute(f"DELETE FROM {self._meta} WHERE meta_key = :meta_key", {"meta_key": REEMBED_PHASE})
        return records

    def _vector_columns(self) -> set[str]:
        rows = self._fetch(self.schema.vector_columns_sql(), {"table_name": self._names["records"]})
        return {row["column_name"] for row in rows}


class OracleInDatabaseEmbedder:
    """Embeddings computed by the database with an ONNX model loaded there (DBMS_VECTOR.LOAD_ONNX_MODEL).

    Texts go to `VECTOR_EMBEDDING(<model> USING :text AS data)` as binds; the model name is
    validated and built into the SQL, as Oracle cannot bind it. `dim` is the model's output size.
    """

    def __init__(self, pool: Any, model: str, dim: int) -> None:
        if not isinstance(model, str) or not _MODEL_PATTERN.match(model):
            raise ValueError(f"model must be an Oracle identifier (optionally schema.model), not {model!r}")
        check_positive_int("dim", dim)
        self._pool, self.model, self.dim = pool, model.upper(), dim
        self.name = f"oracle:{self.model}:{dim}"
        self._single_session = not hasattr(pool, "acquire")
        self._lock = threading.Lock()
        quoted = ".".join(f'"{part}"' for part in self.model.split("."))
        self.sql = (
            f"SELECT jt.n, VECTOR_EMBEDDING({quoted} USING jt.t AS data) AS embedding "
            "FROM JSON_TABLE(:texts, '$[*]' COLUMNS (n FOR ORDINALITY, t VARCHAR2(4000) TRUNCATE PATH '$')) jt "
            "ORDER BY jt.n"
        )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._single_session:
            with self._lock:
                rows = self._run(self._pool, texts)
        else:
            connection = self._pool.acquire()
            try:
                rows = self._run(connection, texts)
            finally:
                self._pool.release(connection)
        return np.asarray([np.asarray(row[1], dtype=np.float32) for row in rows], dtype=np.float32)

    def _run(self, connection: Any, texts: list[str]) -> list:
        cursor = _oracle_cursor(connection)
        cursor.execute(self.sql, {"texts": json.dumps(texts)})
        return cursor.fetchall()


def _oracle_cursor(connection: Any, max_string_bytes: int = STANDARD_STRING_BYTES) -> Any:
    """A cursor that binds datetimes as TIMESTAMP and strings beyond the server's limit as CLOB."""
    cursor = connection.cursor()
    cursor.inputtypehandler = BindTypes(max_string_bytes)
    return cursor


class BindTypes:
    """python-oracledb's input type handler for the store's binds.

    A datetime would go as DATE, dropping the microseconds the TIMESTAMP(6) columns keep. A
    string longer than the server's VARCHAR2 limit (4,000 bytes, or 32,767 under
    MAX_STRING_SIZE=EXTENDED) would go as LONG, which Oracle takes only as an inserted value and
    refuses inside JSON(:x), JSON_TABLE(:ids ...) and MERGE (ORA-01461): it goes as a CLOB. The
    test is on the UTF-8 length, which is what the limit counts.
    """

    def __init__(self, max_string_bytes: int) -> None:
        self.max_string_bytes = max_string_bytes

    def __call__(self, cursor: Any, value: Any, arraysize: int) -> Any:
        import oracledb

        if isinstance(value, datetime):
            return cursor.var(oracledb.DB_TYPE_TIMESTAMP, arraysize=arraysize)
        limit = self.max_string_bytes
        # A string of at most limit / 4 characters fits in any encoding: it is never encoded.
        if isinstance(value, str) and len(value) * 4 > limit and (len(value) > limit or len(value.encode()) > limit):
            return cursor.var(oracledb.DB_TYPE_CLOB, arraysize=arraysize)
        return None


def open_pool(url: str, password: str | None = None, pool_min: int = 1, pool_max: int = 4) -> Any:
    """A python-oracledb (thin mode) connection pool for "oracle://user@host[:port]/service".

    The password never goes in the URL (which gets shown and logged): pass it, or set
    OAM_ORACLE_PASSWORD. The pool holds `pool_min` to `pool_max` sessions; each concurrent
    store call uses one.
    """
    parsed = urlsplit(url)
    service = parsed.path.strip("/")
    if parsed.scheme != "oracle" or not parsed.username or not parsed.hostname or not service:
        raise ValueError(f"an Oracle store URL reads oracle://user@host:port/service, not {url!r}")
    if parsed.password is not None:
        raise ValueError("do not put the password in the store URL; set OAM_ORACLE_PASSWORD")
    password = password if password is not None else os.environ.get("OAM_ORACLE_PASSWORD")
    if not password:
        raise ValueError("no Oracle password: set OAM_ORACLE_PASSWORD")
    for name, value in (("pool_min", pool_min), ("pool_max", pool_max)):
        check_positive_int(name, value)
    if pool_min > pool_max:
        raise ValueError(f"pool_min ({pool_min}) must not exceed pool_max ({pool_max})")
    import oracledb

    return oracledb.create_pool(
        user=unquote(parsed.username),
        password=password,
        host=parsed.hostname,
        port=parsed.port or 1521,
        service_name=service,
        min=pool_min,
        max=pool_max,
        increment=1,
    )
