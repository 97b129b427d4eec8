"""The OAM memory engine: agent memory on SQLite or Oracle AI Database, with no Django import.

Public names follow shared/spec/DECISIONS.md D1.
"""

from __future__ import annotations

from typing import Any

from .activity import (
    AUDIT_KINDS,
    CALLER_KINDS,
    KINDS,
    RETRIEVAL_KINDS,
    ActivityConfig,
    ActivityCounts,
    ActivityEvent,
    ActivityHygiene,
    ActivityResult,
    ServedRecord,
    acting_as,
    caused_by,
    continued_trace,
    history_change,
    unrecorded,
)
from .cards import ContextCard, Summary
from .client import DEFAULT_MAP_MEMORIES, AgentMemory
from .embedders import Embedder, HashingEmbedder, OpenAICompatibleEmbedder, embedder_from_spec, spec_of
from .filters import parse_filter
from .formatting import SearchResultFormatConfig
from .graph import relation_labels
from .images import stored_image_size
from .limits import MAX_CONTENT_CHARS, MAX_INT, MAX_JSON_DEPTH, MAX_SEARCH_TEXT_CHARS, check_id_text, check_json_tree
from .llm import Llm, OpenAICompatibleLlm, llm_from_settings
from .scope import Scope, SearchScope
from .search import SearchResult, estimate_tokens
from .sensitive import KINDS as SENSITIVE_KINDS
from .sensitive import SensitiveFinding, SensitivePolicy, mask, scan
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
    IndexRebuild,
    MemoryStore,
    OracleDBMemoryStore,
    OracleInDatabaseEmbedder,
    SchemaError,
    SQLiteMemoryStore,
)
from .stores.arguments import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_DUPLICATE_DISTANCE,
    DEFAULT_GRAPH_NODES,
    MAX_DUPLICATE_DISTANCE,
    MAX_GRAPH_NODES,
    MAX_HOPS,
    decode_cursor,
    encode_cursor,
    graph_request,
    thread_named,
)
from .stores.keywords import query_stems, stems, words
from .stores.oracle import OracleSchema, open_pool
from .thread import Thread
from .transfer import (
    DEFAULT_IMPORT_BATCH,
    ExportFormatError,
    ExportReader,
    ImportReport,
    check_export,
    export_lines,
    import_export,
    write_export,
)
from .ttl import normalize_timestamp
from .types import (
    BUILTIN_RELATIONS,
    ERASURE_KINDS,
    LIFECYCLE_RELATIONS,
    LLM_LINK_ORIGIN,
    MEMORY_TYPES,
    NOT_SET,
    SEARCHABLE_TYPES,
    SOURCE_MESSAGES_KEY,
    AgentProfileRecord,
    BackgroundExtractionQueueFullBehavior,
    CheckFinding,
    CheckReport,
    DuplicateGroup,
    Duplicates,
    ErasureReport,
    ImageContent,
    ImageInputLimitConfig,
    ImageMimeType,
    ImageRecord,
    Lifecycle,
    LinkedOwner,
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
    ScrubReport,
    SearchStrategy,
    StaleVersionError,
    StoreHealth,
    StoreStats,
    TextContent,
    ThreadRecord,
    TimeToLiveAnchor,
    UserProfileRecord,
    VectorState,
    llm_link_metadata,
)
from .visibility import OutsideVisibilityError, Visibility, current_visibility, visible_as


def connect(
    url: str,
    embedder: Embedder | None = None,
    schema_policy: SchemaPolicy | str = SchemaPolicy.CREATE_IF_NECESSARY,
    llm: Llm | None = None,
    memory_extraction_config: MemoryExtractionConfig | None = None,
    *,
    caller: str | None = None,
    record_activity: bool = True,
    sensitive_policy: Any = None,
    **options: Any,
) -> AgentMemory:
    """An AgentMemory over the store a URL names.

    "sqlite:///path/file.sqlite3" or "sqlite://:memory:" open the embedded store;
    "oracle://user@host:port/service" opens Oracle Database through a connection pool (options
    `password` (default: OAM_ORACLE_PASSWORD), `pool_min`, `pool_max`). `llm` and
    `memory_extraction_config` go to the client, and `sensitive_policy` (engine/sensitive.py); other
    options to the store's constructor
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
    try:
        return AgentMemory(
            store,
            llm=llm,
            memory_extraction_config=config,
            caller=caller,
            record_activity=record_activity,
            sensitive_policy=sensitive_policy,
        )
    except BaseException:
        store.close()
        raise


# The client, its stores and records, and the snapshot format (shared/spec/DECISIONS.md D1).
__all__ = [
    "ERASURE_KINDS",
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
    "ErasureReport",
    "HashingEmbedder",
    "ImageContent",
    "ImageInputLimitConfig",
    "ImageMimeType",
    "ImageRecord",
    "IndexRebuild",
    "Lifecycle",
    "LinkedOwner",
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
    "ScrubReport",
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

# Input limits and the id rule, so that forms and the API check what the store will check.
__all__ += [
    "MAX_CONTENT_CHARS",
    "MAX_INT",
    "MAX_JSON_DEPTH",
    "MAX_SEARCH_TEXT_CHARS",
    "check_id_text",
    "check_json_tree",
]

# Argument rules of the store contract: cursors, thread names, graph and duplicate bounds.
__all__ += [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_DUPLICATE_DISTANCE",
    "DEFAULT_GRAPH_NODES",
    "MAX_DUPLICATE_DISTANCE",
    "MAX_GRAPH_NODES",
    "MAX_HOPS",
    "decode_cursor",
    "encode_cursor",
    "graph_request",
    "thread_named",
]

# Vocabulary of records and relations: memory types, built-in and lifecycle relations, keys.
__all__ += [
    "BUILTIN_RELATIONS",
    "LIFECYCLE_RELATIONS",
    "LLM_LINK_ORIGIN",
    "MEMORY_TYPES",
    "SEARCHABLE_TYPES",
    "SOURCE_MESSAGES_KEY",
    "llm_link_metadata",
]

# Parsing and display helpers: metadata filters, timestamps, relation labels, image sizes,
# the embedder spec string, the map's default size, and the keyword stemmer for highlights.
__all__ += [
    "DEFAULT_MAP_MEMORIES",
    "normalize_timestamp",
    "parse_filter",
    "query_stems",
    "relation_labels",
    "spec_of",
    "stems",
    "stored_image_size",
    "words",
]

# The activity log: recorded calls, who made them, and the blocks that name a caller or a cause.
__all__ += [
    "AUDIT_KINDS",
    "CALLER_KINDS",
    "KINDS",
    "RETRIEVAL_KINDS",
    "ActivityConfig",
    "ActivityCounts",
    "ActivityEvent",
    "ActivityHygiene",
    "ActivityResult",
    "ServedRecord",
    "acting_as",
    "caused_by",
    "continued_trace",
    "history_change",
    "unrecorded",
]

# Export and import in the JSON Lines format.
__all__ += [
    "DEFAULT_IMPORT_BATCH",
    "ExportFormatError",
    "ExportReader",
    "ImportReport",
    "check_export",
    "export_lines",
    "import_export",
    "write_export",
]

# Schema management of the Oracle store (the oam_schema command).
__all__ += [
    "OracleSchema",
]

# Scoped views: what a restricted AgentMemory sees (AgentMemory.restricted), and its refusals.
__all__ += [
    "OutsideVisibilityError",
    "Visibility",
    "current_visibility",
    "visible_as",
]

# Secrets and personal data: the detectors, the write policy and the stored findings.
__all__ += [
    "SENSITIVE_KINDS",
    "SensitiveFinding",
    "SensitivePolicy",
    "mask",
    "scan",
]
