"""SQLMemoryStore: the store composed of its parts (one mixin per part, one module each)."""

from __future__ import annotations

import re
import threading
from typing import Any

from ...embedders import Embedder, HashingEmbedder
from ...limits import MAX_INT
from ...sensitive import policy_from
from ...types import NOT_SET, MemoryRetentionConfig, SchemaPolicy, SearchStrategy, StoreStats, coerce_enum
from ...visibility import Visibility
from ..arguments import check_positive_int
from ..base import MemoryStore
from ..index import IndexRebuild, MemoryIndex
from .activity import ActivityLogMixin
from .changelog import ChangeLogMixin
from .common import EFFECTIVE_STATUS_SQL
from .connections import ConnectionMixin
from .dialect import SQLDialect
from .erasure import ErasureMixin
from .findings import FindingsMixin
from .maintenance import MaintenanceMixin
from .reads import ReadMixin
from .recorded import RecordedCallsMixin
from .relations import RelationMixin
from .restricted import restricted_store
from .schema import SchemaMixin
from .search import SearchMixin
from .snapshots import SnapshotMixin
from .threads import ThreadMixin
from .writes import WriteMixin

PREFIX_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,29}$")


class SQLMemoryStore(
    RecordedCallsMixin,
    ConnectionMixin,
    SchemaMixin,
    ChangeLogMixin,
    WriteMixin,
    RelationMixin,
    ThreadMixin,
    ReadMixin,
    SnapshotMixin,
    SearchMixin,
    MaintenanceMixin,
    ActivityLogMixin,
    ErasureMixin,
    FindingsMixin,
    MemoryStore,
):
    """The engine's store logic over a SQL database, for any `SQLDialect`.

    Records, threads, relations and image bytes live in tables named by the dialect's schema;
    every filter (scope, type, status, expiry, metadata) is a WHERE condition applied before the
    top-k; links are walked one query per hop. The dialect supplies what differs between
    databases: DDL, id-list and JSON functions, row limits, vector distance, keyword search,
    bind types and error codes. OracleDBMemoryStore is this store with the Oracle dialect; the
    SQLite dialect runs the same code in the conformance suite, without a server.

    `pool` is a connection pool (with acquire/release), which serves concurrent callers, or a
    single connection, whose calls are serialised with a lock. `embedder=None` uses the local
    HashingEmbedder. `search_index=True` answers searches from the in-memory index (its
    generations kept in the folder `search_index_path` when given, mapped by every process, and
    written anew as `search_index_rebuild` says). Writes and searches are recorded in
    the activity log once a client gives the store a recorder (`activity`; AgentMemory does).
    Every write's text is screened for secrets and personal data as `sensitive_policy` says
    (default: OAM_SENSITIVE_POLICY, else flag; sql/findings.py).
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
        search_index_rebuild: IndexRebuild | None = None,
        sensitive_policy: Any = None,
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
        self.sensitive_policy = policy_from(sensitive_policy)
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
        if search_index_rebuild is not None and not isinstance(search_index_rebuild, IndexRebuild):
            raise ValueError("search_index_rebuild must be an IndexRebuild")
        self.index = None
        if search_index:
            rebuild = search_index_rebuild or IndexRebuild()
            self.index = MemoryIndex(self.vector_dim, search_index_path, open_source=self._index_read, rebuild=rebuild)
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
        self._activity, self._activity_records = q["activity"], q["activity_records"]
        self._findings = q["findings"]
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

    visibility: Visibility | None = None
    """What this view of the store sees: None for the store itself, all of it (restricted())."""

    def restricted(self, visibility: Visibility) -> SQLMemoryStore:
        """A view of this store that sees only the records `visibility` lets it see, in SQL,
        and refuses writes outside (sql/restricted.py); the store itself when it restricts nothing."""
        return restricted_store(self, visibility)

    def _in(self, column: str, bind: str, numeric: bool = False) -> str:
        """`column IN` the values of a JSON array bind: one bind whatever the number of values."""
        return f"{column} IN ({self.dialect.ids(bind, numeric)})"

    def _fetch_first(self, limit: int | None, params: dict[str, Any]) -> str:
        """A row limit of limit + 1 (the extra row tells whether a next page exists)."""
        if limit is None:
            return ""
        params["fetch_limit"] = min(limit + 1, MAX_INT)  # no table holds 2**63 rows
        return self.dialect.first_rows(":fetch_limit")
