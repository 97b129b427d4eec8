"""The OAM memory engine: agent memory on SQLite or Oracle AI Database, with no Django import.

Public names follow shared/spec/DECISIONS.md D1.
"""

from __future__ import annotations

from typing import Any

from .cards import ContextCard, Summary
from .client import AgentMemory
from .embedders import Embedder, HashingEmbedder, OpenAICompatibleEmbedder, embedder_from_spec
from .formatting import SearchResultFormatConfig
from .llm import Llm, OpenAICompatibleLlm, llm_from_settings
from .scope import Scope, SearchScope
from .search import SearchResult, estimate_tokens
from .snapshot import (
    Snapshot,
    record_from_json,
    record_to_json,
    relation_from_json,
    relation_to_json,
    thread_from_json,
    thread_to_json,
)
from .stores import (
    EmbedderMismatchError,
    MemoryStore,
    OracleDBMemoryStore,
    OracleInDatabaseEmbedder,
    SchemaError,
    SQLiteMemoryStore,
)
from .stores.oracle import open_pool
from .thread import Thread
from .types import (
    NOT_SET,
    AgentProfileRecord,
    BackgroundExtractionQueueFullBehavior,
    CheckFinding,
    CheckReport,
    DuplicateGroup,
    Duplicates,
    ImageContent,
    ImageInputLimitConfig,
    ImageMimeType,
    ImageRecord,
    Lifecycle,
    MemoryExtractionConfig,
    MemoryExtractionImageContext,
    MemoryExtractionMode,
    MemoryGraph,
    MemoryLinkExtractionMode,
    MemoryRecord,
    MemoryRetentionConfig,
    MemorySearchConfig,
    MemoryVectors,
    Message,
    MessageContent,
    MessageRecord,
    Page,
    Record,
    RecordRelation,
    RecordStatus,
    ReembedReport,
    RestoreReport,
    SchemaPolicy,
    ScopedRecord,
    SearchStrategy,
    StaleVersionError,
    StoreHealth,
    StoreStats,
    TextContent,
    ThreadRecord,
    TimeToLiveAnchor,
    UserProfileRecord,
    VectorState,
)


def connect(
    url: str,
    embedder: Embedder | None = None,
    schema_policy: SchemaPolicy | str = SchemaPolicy.CREATE_IF_NECESSARY,
    llm: Llm | None = None,
    memory_extraction_config: MemoryExtractionConfig | None = None,
    **options: Any,
) -> AgentMemory:
    """An AgentMemory over the store a URL names.

    "sqlite:///path/file.sqlite3" or "sqlite://:memory:" open the embedded store;
    "oracle://user@host:port/service" opens Oracle Database through a connection pool (options
    `password` (default: OAM_ORACLE_PASSWORD), `pool_min`, `pool_max`). `llm` and
    `memory_extraction_config` go to the client; other options to the store's constructor
    (vector_dim, table_name_prefix, vector_index, …). Without an embedder, the local hashing
    embedder is used.
    """
    if not isinstance(url, str):
        raise ValueError(f"the store URL must be a string, not {type(url).__name__}")
    if url.startswith("oracle://"):
        pool_options = {key: options.pop(key) for key in ("password", "pool_min", "pool_max") if key in options}
        if embedder is None:
            embedder = HashingEmbedder(options.get("vector_dim") or 384)
        store: MemoryStore = OracleDBMemoryStore(
            embedder, open_pool(url, **pool_options), schema_policy=schema_policy, **options
        )
    elif url == "sqlite://:memory:":
        store = SQLiteMemoryStore(":memory:", embedder=embedder, schema_policy=schema_policy, **options)
    elif url.startswith("sqlite:///") and len(url) > len("sqlite:///"):
        store = SQLiteMemoryStore(url[len("sqlite://") :], embedder=embedder, schema_policy=schema_policy, **options)
    else:
        raise ValueError(
            f"unsupported store URL {url!r}; use sqlite:///absolute/path.sqlite3, sqlite://:memory: "
            "or oracle://user@host:port/service"
        )
    config = NOT_SET if memory_extraction_config is None else memory_extraction_config
    return AgentMemory(store, llm=llm, memory_extraction_config=config)


__all__ = [
    "NOT_SET",
    "AgentMemory",
    "AgentProfileRecord",
    "BackgroundExtractionQueueFullBehavior",
    "CheckFinding",
    "CheckReport",
    "ContextCard",
    "DuplicateGroup",
    "Duplicates",
    "Embedder",
    "EmbedderMismatchError",
    "HashingEmbedder",
    "ImageContent",
    "ImageInputLimitConfig",
    "ImageMimeType",
    "ImageRecord",
    "Lifecycle",
    "Llm",
    "MemoryExtractionConfig",
    "MemoryExtractionImageContext",
    "MemoryExtractionMode",
    "MemoryGraph",
    "MemoryLinkExtractionMode",
    "MemoryRecord",
    "MemoryRetentionConfig",
    "MemorySearchConfig",
    "MemoryStore",
    "MemoryVectors",
    "Message",
    "MessageContent",
    "MessageRecord",
    "OpenAICompatibleEmbedder",
    "OpenAICompatibleLlm",
    "OracleDBMemoryStore",
    "OracleInDatabaseEmbedder",
    "Page",
    "Record",
    "RecordRelation",
    "RecordStatus",
    "ReembedReport",
    "RestoreReport",
    "SQLiteMemoryStore",
    "SchemaError",
    "SchemaPolicy",
    "Scope",
    "ScopedRecord",
    "SearchResult",
    "SearchResultFormatConfig",
    "SearchScope",
    "SearchStrategy",
    "Snapshot",
    "StaleVersionError",
    "StoreHealth",
    "StoreStats",
    "Summary",
    "TextContent",
    "Thread",
    "ThreadRecord",
    "TimeToLiveAnchor",
    "UserProfileRecord",
    "VectorState",
    "connect",
    "embedder_from_spec",
    "estimate_tokens",
    "llm_from_settings",
    "record_from_json",
    "record_to_json",
    "relation_from_json",
    "relation_to_json",
    "thread_from_json",
    "thread_to_json",
]
