"""The store interface and the argument rules every backend shares (spec §3; DECISIONS D3, D4).

Backends implement the storage; the validation and broadcasting of `add`/`update`/`search`
arguments live here so that every backend refuses the same bad input with the same message.
"""

from __future__ import annotations

import asyncio
import base64
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from ..embedders import Embedder
from ..filters import parse_filter
from ..graph import cap_graph, check_label, relation_labels, walk_graph
from ..images import CheckedImage
from ..limits import (
    MAX_INT,
    MAX_JSON_CHARS,
    MAX_JSON_DEPTH,
    MAX_SEARCH_TEXT_CHARS,
    check_id_text,
    check_int_range,
    check_json_tree,
    check_length,
)
from ..scope import SearchScope, check_scope_value, resolve_store_scope
from ..ttl import check_ttl_days, expiry, normalize_timestamp, utc_now
from ..types import (
    AGENT_PROFILE_TYPE,
    BUILTIN_RELATIONS,
    IMAGE_TYPE,
    MEMORY_TYPES,
    MESSAGE_TYPE,
    NOT_SET,
    SEARCHABLE_TYPES,
    USER_PROFILE_TYPE,
    AgentProfileRecord,
    CheckReport,
    Duplicates,
    ImageMimeType,
    ImageRecord,
    Lifecycle,
    MemoryGraph,
    MemoryRecord,
    MemoryRetentionConfig,
    MessageRecord,
    Page,
    Record,
    RecordRelation,
    RecordStatus,
    ReembedReport,
    RestoreReport,
    SearchStrategy,
    StaleVersionError,
    StoreHealth,
    StoreStats,
    ThreadRecord,
    TimeToLiveAnchor,
    UserProfileRecord,
    VectorState,
    coerce_enum,
    new_id,
    new_ids,
)

if TYPE_CHECKING:  # snapshot.py checks values with this module's helpers
    from ..snapshot import Snapshot

ADDABLE_TYPES = (MESSAGE_TYPE, *MEMORY_TYPES, IMAGE_TYPE)
DEFAULT_BATCH_SIZE = 500
DEFAULT_LIST_LIMIT = 100
MAX_HOPS = 5
DEFAULT_GRAPH_NODES = 2000
MAX_GRAPH_NODES = 10_000
DEFAULT_DUPLICATE_DISTANCE = 0.25
"""find_duplicates' default threshold (cosine distance): rewordings of one fact with the local
hashing embedder fall within it (0.1-0.21: "Alice is vegetarian." and "Alice is a vegetarian."),
different facts of one topic do not (0.45 and beyond)."""
MAX_DUPLICATE_DISTANCE = 0.5
"""Beyond it, "near-duplicate" means related at best, and the pairs grow towards all of them."""
DEFAULT_DUPLICATE_GROUPS = 100
MAX_DUPLICATE_GROUPS = 1000


class SchemaError(RuntimeError):
    """The database does not hold the managed schema the store's policy requires."""


class EmbedderMismatchError(SchemaError):
    """The store's vectors were made by another embedder (or at another dimension) than the one it
    is opened with: searching them with this one would compare unrelated vectors, and writing would
    mix them. Open it with the embedder it records, or move it to this one (reembed). A setup
    error, not bad input: not a ValueError, which callers turn into a form error."""

    def __init__(self, stored_embedder: str, stored_dim: int, embedder: str, dim: int) -> None:
        self.stored_embedder, self.stored_dim, self.embedder, self.dim = stored_embedder, stored_dim, embedder, dim
        if stored_dim != dim:
            problem = f"the store holds {stored_dim}-dimensional vectors but the embedder produces {dim}"
        else:
            problem = f"the store was built with embedder {stored_embedder!r}, not {embedder!r}"
        super().__init__(
            f"{problem}; open it with the embedder it was built with ({stored_embedder!r}, {stored_dim} "
            f"dimensions), or move it to {embedder!r} with reembed: vectors of different embedders cannot "
            "be compared"
        )


def kind_of(record_type: str) -> str:
    """The id namespace of a record type: memory-like types share one, so an id names one memory."""
    return "memory" if record_type in MEMORY_TYPES else record_type


def check_record_type(record_type: Any, allowed: Sequence[str] = SEARCHABLE_TYPES) -> str:
    if not isinstance(record_type, str) or record_type not in allowed:
        raise ValueError(f"record_type must be one of {', '.join(allowed)}; got {record_type!r}")
    return record_type


def check_record_types(record_types: Any, allowed: Sequence[str] = SEARCHABLE_TYPES) -> tuple[str, ...]:
    """A type or a collection of types; an empty collection is refused rather than matching nothing."""
    if isinstance(record_types, str):
        return (check_record_type(record_types, allowed),)
    if not isinstance(record_types, (list, tuple, set, frozenset)) or not record_types:
        raise ValueError(f"record_types must be a non-empty collection of record types, not {record_types!r}")
    return tuple(sorted({check_record_type(t, allowed) for t in record_types}))


def check_positive_int(name: str, value: Any, *, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer{' or None' if allow_none else ''}, not {value!r}")
    check_int_range(name, value)


def expected_version_of(value: Any) -> int | None:
    """`expected_version`: NOT_SET (no check, None) or a non-negative integer, 0 standing for
    "no such row yet" (a profile that must not exist when it is written)."""
    if value is NOT_SET:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"expected_version must be a non-negative integer, not {value!r}")
    check_int_range("expected_version", value)
    return value


def check_version(what: str, expected: int | None, stored: Any) -> None:
    """The compare of a compare-and-set, inside the write: refuse (StaleVersionError) a row whose
    stored version (None: no row, which is version 0) is not the one the caller read."""
    if expected is not None and expected != (0 if stored is None else int(stored)):
        raise StaleVersionError(what, expected, None if stored is None else int(stored))


def check_hops(num_hops: Any, max_linked_results: Any) -> None:
    if isinstance(num_hops, bool) or not isinstance(num_hops, int) or not 0 <= num_hops <= MAX_HOPS:
        raise ValueError(f"num_hops must be an integer from 0 to {MAX_HOPS}, not {num_hops!r}")
    if isinstance(max_linked_results, bool) or not isinstance(max_linked_results, int) or max_linked_results < 0:
        raise ValueError(f"max_linked_results must be a non-negative integer, not {max_linked_results!r}")
    check_int_range("max_linked_results", max_linked_results)


def dump_metadata(metadata: Any, name: str = "metadata") -> str | None:
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        raise ValueError(f"{name} must be a dict or None, not {type(metadata).__name__}")
    check_json_tree(metadata, name, MAX_JSON_DEPTH)
    try:
        text = json.dumps(metadata, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be JSON-serialisable: {error}") from None
    check_length(f"{name} as JSON", text, MAX_JSON_CHARS)
    return text


def _per_record(name: str, value: Any, count: int, *, scalar_types: tuple[type, ...]) -> list:
    """Broadcast a scalar (or None) to every record, or check a list has one entry per record."""
    if value is NOT_SET or value is None or isinstance(value, scalar_types):
        return [None if value is NOT_SET else value] * count
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{name} must be a scalar or a list with one entry per content, not {type(value).__name__}")
    if len(value) != count:
        raise ValueError(f"{name} has {len(value)} entries for {count} contents")
    return list(value)


def to_matrix(values: Any, count: int, dim: int, name: str = "embeddings") -> np.ndarray:
    """A (count, dim) float32 matrix from an array or a list of vectors, checked as a whole."""
    if not isinstance(values, np.ndarray) and (not isinstance(values, (list, tuple)) or len(values) != count):
        raise ValueError(f"{name} must be a list with one vector per content ({count})")
    try:
        matrix = np.asarray(values, dtype=np.float32)
    except (TypeError, ValueError):
        matrix = None
    if matrix is None or matrix.shape != (count, dim):
        # Name the first offending vector rather than report a shape the caller never wrote.
        for i, value in enumerate(values):
            to_vector(value, dim, f"{name}[{i}]")
        raise ValueError(f"{name} must hold {count} vectors of dimension {dim}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return matrix


def to_vector(value: Any, dim: int, name: str = "embedding") -> np.ndarray:
    try:
        vector = np.asarray(value, dtype=np.float32)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a sequence of numbers") from None
    if vector.ndim != 1 or vector.shape[0] != dim:
        raise ValueError(f"{name} has dimension {vector.shape[-1] if vector.ndim else 0}; the store holds {dim}")
    if not np.all(np.isfinite(vector)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return vector


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """Unit-length rows (zero rows stay zero), so cosine similarity is a dot product."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    positive = norms > 0
    if positive.all():  # no zero row: a plain division, in half the time of a masked one
        return (matrix / norms).astype(np.float32, copy=False)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=positive).astype(np.float32, copy=False)


@dataclass
class NewRecord:
    """One validated row of an `add` call, before the backend assigns storage details."""

    id: str
    record_type: str
    content: str
    index_text: str | None
    thread_id: str | None
    user_id: str | None
    agent_id: str | None
    role: str | None
    timestamp: str | None
    metadata: str | None
    status: str
    parts: str | None


def _column(name: str, value: Any, count: int, check: Any, *, scalar_types: tuple[type, ...] = (str,)) -> list:
    """One argument of `add` as a list of `count` checked values; a broadcast scalar is checked once.

    A list is checked once per distinct value (a batch's user ids or timestamps repeat); when a
    value is unhashable or fails its check, the list is checked entry by entry instead, so the
    error names the first bad entry.
    """
    values = _per_record(name, value, count, scalar_types=scalar_types)
    if value is NOT_SET or value is None or isinstance(value, scalar_types):
        return [check(values[0], name)] * count if count else []
    try:
        distinct = dict.fromkeys(values)
    except TypeError:  # an unhashable entry: its check names it
        distinct = None
    # Datetimes equal across a DST fold are an hour apart in UTC: each is checked on its own.
    if distinct is not None and not any(isinstance(v, datetime) for v in distinct):
        try:
            checked = {v: check(v, name) for v in distinct}
        except Exception:
            pass
        else:
            return [checked[v] for v in values]
    return [check(v, f"{name}[{i}]") for i, v in enumerate(values)]


def _optional_str(value: Any, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be a string or None, not {type(value).__name__}")
    return value


def _role_value(value: Any, name: str) -> str | None:
    if value is not None:
        _optional_str(value, name)
        check_id_text(name, value)
    return value


def _scope_value(value: Any, name: str) -> str | None:
    check_scope_value(name, value)
    return value


def _status_value(value: Any, name: str) -> str:
    return RecordStatus.VALID.value if value is None else coerce_enum(RecordStatus, value, name).value


def prepare_add(
    contents: Any,
    record_type: Any,
    index_texts: Any,
    record_ids: Any,
    thread_ids: Any,
    user_ids: Any,
    agent_ids: Any,
    roles: Any,
    timestamps: Any,
    metadata: Any,
    statuses: Any,
    content_parts: Any = NOT_SET,
) -> list[NewRecord]:
    """Validate and broadcast the arguments of `add` into rows; nothing is stored on any error."""
    check_record_type(record_type, ADDABLE_TYPES)
    if isinstance(contents, (str, bytes)) or not isinstance(contents, Sequence):
        raise ValueError("contents must be a list of strings (or None)")
    count = len(contents)
    if isinstance(record_ids, str):
        if count != 1:
            raise ValueError(f"a single record_ids string names one record, but {count} contents were given")
        record_ids = [record_ids]
    ids = _per_record("record_ids", record_ids, count, scalar_types=())
    given = [i is not None for i in ids]
    if any(given) and not all(given):
        raise ValueError("record_ids must give an id for every content or for none")
    for record_id in ids:
        if record_id is not None and (not isinstance(record_id, str) or not record_id):
            raise ValueError(f"record ids must be non-empty strings, not {record_id!r}")
        if record_id is not None:
            check_id_text("record_ids", record_id)
    if all(given) and len(set(ids)) != count:
        raise ValueError("record_ids contains the same id twice")
    if not all(given):
        ids = new_ids(count)
    if index_texts is not NOT_SET and index_texts is not None:
        if not isinstance(index_texts, (list, tuple)) or len(index_texts) != count:
            raise ValueError(f"index_texts must be a list with one entry per content ({count})")
        index_texts = [_optional_str(t, f"index_texts[{i}]") for i, t in enumerate(index_texts)]
        for i, text in enumerate(index_texts):
            if text is not None:
                check_length(f"index_texts[{i}]", text)
    else:
        index_texts = [None] * count
    thread_col = _column("thread_ids", thread_ids, count, _scope_value)
    user_col = _column("user_ids", user_ids, count, _scope_value)
    agent_col = _column("agent_ids", agent_ids, count, _scope_value)
    role_col = _column("roles", roles, count, _role_value)
    if record_type != MESSAGE_TYPE:
        role_col = [None] * count
    timestamp_col = _column("timestamps", timestamps, count, normalize_timestamp, scalar_types=(str, datetime))
    status_col = _column("statuses", statuses, count, _status_value)
    if content_parts is not NOT_SET and record_type != MESSAGE_TYPE:
        raise ValueError("content_parts are for message records only")
    parts_col = _column("content_parts", content_parts, count, dump_parts, scalar_types=())
    metadatas = _per_record("metadata", metadata, count, scalar_types=(dict,))
    # A shared dict is serialised once, not once per record.
    metadata_col = _column("metadata", metadata, count, dump_metadata, scalar_types=(dict,))
    texts = []
    for i, content in enumerate(contents):
        if content is None:
            meta = metadatas[i]
            fallback = meta.get("content") if isinstance(meta, dict) else None
            content = fallback if isinstance(fallback, str) else ""
        elif not isinstance(content, str):
            raise ValueError(f"contents[{i}] must be a string or None, not {type(content).__name__}")
        check_length(f"contents[{i}]", content)
        texts.append(content)
    return [
        NewRecord(*row)
        for row in zip(
            ids,
            [record_type] * count,
            texts,
            index_texts,
            thread_col,
            user_col,
            agent_col,
            role_col,
            timestamp_col,
            metadata_col,
            status_col,
            parts_col,
            strict=True,
        )
    ]


def dump_parts(parts: Any, name: str = "content_parts") -> str | None:
    if parts is None:
        return None
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        raise ValueError(f"{name} must be a list of part dicts or None")
    return json.dumps(parts, ensure_ascii=False, separators=(",", ":"))


@dataclass
class UpdatePlan:
    """The resolved effect of an `update` call: which columns change and how."""

    content: Any = NOT_SET
    index_text: Any = NOT_SET
    embed_text: Any = NOT_SET  # text to embed; None clears the embedding
    embedding: Any = NOT_SET  # a ready vector; None clears it
    parts: Any = NOT_SET
    metadata: Any = NOT_SET
    timestamp: Any = NOT_SET
    ttl_days: Any = NOT_SET
    ttl_anchor: Any = NOT_SET
    status: Any = NOT_SET
    role: Any = NOT_SET
    expires_at: Any = NOT_SET  # canonical UTC text, or None for "never"
    record_type: Any = NOT_SET  # a memory's new type
    owners: dict[str, str | None] = field(default_factory=dict)  # a memory's new user_id / agent_id


def prepare_update(
    text: Any,
    index_text: Any,
    embedding: Any,
    metadata: Any,
    content: Any,
    timestamp: Any,
    ttl_days: Any,
    ttl_anchor: Any,
    status: Any,
    content_parts: Any,
    new_image: bool,
    stored_content: str,
    stored_index_text: str | None,
    *,
    record_type: str,
    role: Any = NOT_SET,
    expires_at: Any = NOT_SET,
    memory_type: Any = NOT_SET,
    user_id: Any = NOT_SET,
    agent_id: Any = NOT_SET,
) -> UpdatePlan:
    """Resolve the update table of spec §3.3.10 for one stored row (plus our `role`, for
    messages, `expires_at`, an absolute expiry instead of a lifetime, and for memories a new
    `memory_type`, `user_id` or `agent_id`)."""
    owners = {name: value for name, value in (("user_id", user_id), ("agent_id", agent_id)) if value is not NOT_SET}
    if (memory_type is not NOT_SET or owners) and record_type not in MEMORY_TYPES:
        raise ValueError(f"memory_type, user_id and agent_id change memories only, not {record_type} records")
    if memory_type is not NOT_SET:
        check_record_type(memory_type, MEMORY_TYPES)
    for name, value in owners.items():
        check_scope_value(name, value)
    if role is not NOT_SET:
        if record_type != MESSAGE_TYPE:
            raise ValueError(f"role is for messages only, not {record_type} records")
        if not isinstance(role, str) or not role:
            raise ValueError(f"role must be a non-empty string, not {role!r}")
        check_id_text("role", role)
    if expires_at is not NOT_SET:
        if ttl_days is not NOT_SET or ttl_anchor is not NOT_SET:
            raise ValueError("pass expires_at (an instant) or ttl_days/ttl_anchor (a lifetime), not both")
        expires_at = normalize_timestamp(expires_at, "expires_at")
    if content is not NOT_SET:
        if text is not NOT_SET:
            raise ValueError("pass text= or content=, not both")
        text = content
    if content_parts is not NOT_SET and text is NOT_SET:
        raise ValueError("content_parts come with the text they describe")
    if (
        not new_image
        and not owners
        and all(
            v is NOT_SET
            for v in (
                text,
                index_text,
                embedding,
                metadata,
                timestamp,
                ttl_days,
                ttl_anchor,
                status,
                role,
                expires_at,
                memory_type,
            )
        )
    ):
        raise ValueError(
            "update needs at least one of text, index_text, embedding, metadata, timestamp, ttl, expires_at, "
            "status, role, memory_type, user_id or agent_id"
        )
    plan = UpdatePlan(role=role, expires_at=expires_at, record_type=memory_type, owners=owners)
    if text is None:
        if index_text not in (NOT_SET, None) or (embedding is not NOT_SET and embedding is not None):
            raise ValueError(
                "text=None clears the text and its embedding; index_text and embedding must be omitted or None"
            )
        plan.content, plan.index_text, plan.embed_text = "", None, None
    elif text is not NOT_SET:
        if not isinstance(text, str):
            raise ValueError(f"text must be a string or None, not {type(text).__name__}")
        check_length("text", text)
        plan.content = text
    if text is not NOT_SET:
        plan.parts = dump_parts(None if content_parts is NOT_SET else content_parts)
    if text is not NOT_SET and text is not None and index_text is NOT_SET:
        # New text is the new indexing payload: an index text stored earlier described the old one.
        index_text = None
    if index_text is not NOT_SET and text is not None:
        if index_text is not None and not isinstance(index_text, str):
            raise ValueError(f"index_text must be a string or None, not {type(index_text).__name__}")
        if index_text is not None:
            check_length("index_text", index_text)
        plan.index_text = index_text
    if embedding is not NOT_SET and text is not None:
        plan.embedding = embedding
    elif text is not None and (plan.content is not NOT_SET or plan.index_text is not NOT_SET):
        new_content = stored_content if plan.content is NOT_SET else plan.content
        new_index = stored_index_text if plan.index_text is NOT_SET else plan.index_text
        # An explicit index text wins; otherwise the (new) content is what gets embedded.
        plan.embed_text = new_index if new_index is not None else new_content
    if metadata is not NOT_SET:
        plan.metadata = dump_metadata(metadata)
    if timestamp is not NOT_SET:
        plan.timestamp = normalize_timestamp(timestamp)
    check_ttl_days(ttl_days)
    if ttl_anchor is not NOT_SET:
        coerce_enum(TimeToLiveAnchor, ttl_anchor, "ttl_anchor")
    plan.ttl_days, plan.ttl_anchor = ttl_days, ttl_anchor
    if status is not NOT_SET:
        plan.status = coerce_enum(RecordStatus, status, "status").value
    return plan


def encode_cursor(*values: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode().rstrip("=")


def decode_cursor(cursor: Any, types: tuple[type, ...]) -> list:
    """Decode a listing cursor holding the sort key of a row, one value of each of `types` (str, or
    int: 64-bit), which are bound as they are; a damaged or foreign one is a ValueError."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        values = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (TypeError, ValueError, AttributeError, RecursionError):
        raise ValueError(f"invalid cursor: {cursor!r}") from None
    if (
        not isinstance(values, list)
        or len(values) != len(types)
        or not all(
            type(value) is kind and (kind is not int or -MAX_INT - 1 <= value <= MAX_INT)
            for value, kind in zip(values, types, strict=False)
        )
    ):
        raise ValueError(f"invalid cursor: {cursor!r}")
    return values


class SearchHit(tuple):
    """A (record, distance) pair, as the spec's store search returns, plus `parts`: how it ranked.

    `parts` holds `vector_rank`/`vector_distance` and `keyword_rank`/`keyword_score` (BM25) for
    the rankings it appeared in (ranks from 1), and the fused `score` under the hybrid strategy.
    """

    parts: Mapping[str, float | int] = MappingProxyType({})

    def __new__(cls, record: Record, distance: float, parts: Mapping[str, float | int] | None = None) -> SearchHit:
        hit = super().__new__(cls, (record, distance))
        if parts:  # a linked result has none: no per-hit attribute dict for the hundreds of them
            hit.parts = parts
        return hit


@dataclass
class AddPlan:
    """A checked `add` batch: its rows, unit vectors, images (with their messages) and expiries."""

    rows: list[NewRecord]
    vectors: list[np.ndarray | None]
    images: list[tuple[Any, str | None]]
    expiries: list[str | None]
    now: str


class MemoryStore(ABC):
    """Persistence and similarity search for records, threads and profiles: the whole contract
    the engine relies on, so a new backend knows what to implement.

    Implementation: SQLMemoryStore (stores/sql.py) with a dialect per database, as
    SQLiteMemoryStore (embedded, the default) and OracleDBMemoryStore. `add` and `search` are
    written here once (argument checks, broadcasting, embedding); a backend supplies `_insert`
    and `_search`. The async entry points run the sync ones in a worker thread.
    """

    embedder: Embedder
    vector_dim: int
    retention: MemoryRetentionConfig
    search_strategy: SearchStrategy

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.vector_dim), dtype=np.float32)
        vectors = np.asarray(self.embedder.embed(texts), dtype=np.float32)
        if vectors.shape != (len(texts), self.vector_dim):
            raise ValueError(f"the embedder returned shape {vectors.shape}; expected ({len(texts)}, {self.vector_dim})")
        return vectors

    def _vectors_for(self, rows: list[NewRecord], embeddings: Any) -> list[np.ndarray | None]:
        """Unit vectors per row: the given ones, else embeddings of the non-empty index payloads."""
        if embeddings is not NOT_SET and embeddings is not None:
            return list(normalize_rows(to_matrix(embeddings, len(rows), self.vector_dim))) if rows else []
        payloads = [row.index_text if row.index_text is not None else row.content for row in rows]
        wanted = [i for i, text in enumerate(payloads) if text]
        vectors: list[np.ndarray | None] = [None] * len(rows)
        if wanted:
            for i, vector in zip(wanted, normalize_rows(self._embed([payloads[i] for i in wanted])), strict=True):
                vectors[i] = vector
        return vectors

    def add(
        self,
        contents: Sequence[str | None],
        record_type: str,
        index_texts: Any = NOT_SET,
        embeddings: Any = NOT_SET,
        record_ids: Any = NOT_SET,
        thread_ids: Any = NOT_SET,
        user_ids: Any = NOT_SET,
        agent_ids: Any = NOT_SET,
        roles: Any = NOT_SET,
        timestamps: Any = NOT_SET,
        metadata: Any = NOT_SET,
        *,
        ttl_days: Any = NOT_SET,
        ttl_anchor: Any = NOT_SET,
        statuses: Any = NOT_SET,
        content_parts: Any = NOT_SET,
        images: Any = NOT_SET,
        message_ids: Any = NOT_SET,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> list[str]:
        """Add records (spec §3.3.1); returns their ids in input order. A failing batch stores nothing.

        `content_parts` (messages only) keeps, per record, the JSON description of a message's
        ordered content parts; `contents` then holds their text, which is what gets indexed.
        Images (record_type "image") need `images`, one checked image (images.check_image) per
        record, whose `contents` are their descriptions; `message_ids` attaches them to messages.
        `batch_size` bounds each executemany. Everything is checked, and embedded, before the
        backend writes (`_insert`).
        """
        check_positive_int("batch_size", batch_size)
        checked = image_column(record_type, images, message_ids, len(contents) if isinstance(contents, list) else 0)
        rows = prepare_add(
            contents,
            record_type,
            index_texts,
            record_ids,
            thread_ids,
            user_ids,
            agent_ids,
            roles,
            timestamps,
            metadata,
            statuses,
            content_parts,
        )
        vectors = self._vectors_for(rows, embeddings)
        count = len(rows)
        ttl_list = ttl_days if isinstance(ttl_days, (list, tuple)) else [ttl_days] * count
        anchor_list = ttl_anchor if isinstance(ttl_anchor, (list, tuple)) else [ttl_anchor] * count
        if len(ttl_list) != count or len(anchor_list) != count:
            raise ValueError(f"ttl_days and ttl_anchor must be scalars or lists of {count} entries")
        now = utc_now()
        if isinstance(ttl_days, (list, tuple)) or isinstance(ttl_anchor, (list, tuple)):
            expiries = [
                expiry(
                    ttl_list[i], anchor_list[i], created_at=now, timestamp=rows[i].timestamp, retention=self.retention
                )
                for i in range(count)
            ]
        else:  # batch-wide ttl arguments: an expiry then depends only on the event time, computed once each
            by_time = {
                timestamp: expiry(ttl_days, ttl_anchor, created_at=now, timestamp=timestamp, retention=self.retention)
                for timestamp in dict.fromkeys(row.timestamp for row in rows)
            }
            expiries = [by_time[row.timestamp] for row in rows]
        if not rows:
            return []
        given_ids = record_ids is not NOT_SET and record_ids is not None
        return self._insert(AddPlan(rows, vectors, checked, expiries, now), given_ids, batch_size)

    def _with_bytes(self, records: list[Record], include_bytes: bool) -> list[Record]:
        """The records, with their bytes loaded into the images among them when asked."""
        images = [record for record in records if isinstance(record, ImageRecord)]
        if include_bytes and images:
            data = self.image_bytes([image.id for image in images])
            for image in images:
                image.bytes = data.get(image.id)
        return records

    @abstractmethod
    def image_bytes(self, image_ids: Sequence[str]) -> dict[str, bytes]:
        """The stored bytes of these images (live or not), by id."""

    @abstractmethod
    def _insert(self, plan: AddPlan, check_ids: bool, batch_size: int) -> list[str]:
        """Write a checked, non-empty `add` batch in one transaction; `check_ids`: refuse taken ids."""

    def search(
        self,
        query: str | None = None,
        k: int = 10,
        query_vector: Any = None,
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        exact_user_match: Any = NOT_SET,
        exact_agent_match: Any = NOT_SET,
        exact_thread_match: Any = NOT_SET,
        record_types: Any = None,
        metadata_filter: Any = None,
        num_hops: int = 0,
        max_linked_results: int = 100,
        include_invalid_results: bool = True,
        *,
        strategy: Any = NOT_SET,
        created_at_or_before: Any = NOT_SET,
    ) -> list[tuple[Record, float]]:
        """The k records closest to the query, as (record, distance) pairs, closest first (§3.3.9).

        Every filter (scope, type, status, expiry, metadata) is applied before ranking, so a
        search returns k results whenever k matching records exist. Ties keep insertion order.
        Under the hybrid strategy the distance is 1 minus the normalised fused score.
        `strategy` (a SearchStrategy or its value) ranks this search as a store opened with it
        would; omitted, the store's own `search_strategy`. `created_at_or_before` (an ISO-8601
        instant or datetime) keeps only records stored (`created_at`) at or before it, direct
        results and linked ones alike: a search as of that moment, over today's content.
        """
        request = check_search(
            query,
            k,
            query_vector,
            SearchScope(
                user_id=user_id,
                agent_id=agent_id,
                thread_id=thread_id,
                exact_user_match=exact_user_match,
                exact_agent_match=exact_agent_match,
                exact_thread_match=exact_thread_match,
            ),
            record_types,
            metadata_filter,
            num_hops,
            max_linked_results,
            include_invalid_results,
            self.vector_dim,
            self.search_strategy if strategy is NOT_SET else coerce_enum(SearchStrategy, strategy, "strategy"),
            created_at_or_before,
        )
        return self._search(request, k, num_hops, max_linked_results, include_invalid_results)

    @abstractmethod
    def _search(
        self, request: SearchRequest, k: int, num_hops: int, max_linked_results: int, include_invalid_results: bool
    ) -> list[tuple[Record, float]]:
        """Run a checked search."""

    # --- the rest of the contract: what the engine (client.py, thread.py, cards, extraction) calls
    #
    # Every method validates its arguments (ValueError; KeyError never), reads only live records
    # (unexpired) unless it says otherwise, and writes atomically: a call that raises stored nothing.

    @abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """A block whose writes, from this thread, are one: all committed when it ends, none if
        it raises. The engine's calls that write several times (a message with its images, a
        memory with its link) run in one, so that a call which fails stores nothing, not even a
        thread's activity time or sequence number.

        Blocks nest (an inner one is part of the outer). A write inside that raises undoes only
        itself. Other threads and processes see the block's writes when it commits; its own
        reads and searches see them at once.
        """

    @abstractmethod
    def schema_sql(self) -> list[str]:
        """The DDL of the managed schema, in creation order (shown by `oam_schema --print-sql`)."""

    @abstractmethod
    def add_user(
        self, user_id: str, information: str, metadata: dict | None = None, *, expected_version: Any = NOT_SET
    ) -> str:
        """Store (or replace) a user's profile text, embedded for search; returns the user id.

        With `expected_version` the profile must be at that version, 0 meaning that it must not
        exist yet (StaleVersionError otherwise, nothing written); a replaced profile's version
        moves by one."""

    @abstractmethod
    def add_agent(
        self, agent_id: str, information: str, metadata: dict | None = None, *, expected_version: Any = NOT_SET
    ) -> str:
        """Store (or replace) an agent's profile text, embedded for search; returns the agent id.
        `expected_version` as for add_user."""

    @abstractmethod
    def get(self, record_type: str, record_id: str, include_bytes: bool = False) -> Record | None:
        """One live record by type and id ("thread" gives a ThreadRecord), or None. Images carry
        their bytes with `include_bytes`. Memory types share ids: ("fact", id) finds only a fact."""

    @abstractmethod
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
        """Records of these types in insertion order, filtered exactly by scope (None matches
        unscoped), id (one or a list) and metadata (`None`: records without metadata); a Page
        whose `next_cursor` continues it, stable while records are added.

        `expires_before`: an ISO-8601 instant or datetime; only records with an expiry at or
        before it (a review queue's "expiring within N days": live ones unless `include_expired`
        or `status="expired"`).

        `status`: "valid" or "invalid" (the effective status, D2; RecordStatus members too), or
        "expired" (only records past their expiry, awaiting purge_expired). `newest_first`: key
        descending; a cursor continues in the order it was made in (the other order's cursor is
        a ValueError). `text`: a case-insensitive (Unicode lower case) substring of the content,
        the id or the metadata as JSON text, LIKE wildcards in it matching only themselves; ''
        means no filter."""

    @abstractmethod
    def list_thread_messages(
        self,
        thread_id: str,
        last_n: int | None = None,
        range_start_seq_no: int | None = None,
        range_end_seq_no: int | None = None,
        include_bytes: bool = False,
    ) -> list[MessageRecord]:
        """A thread's live messages by sequence number; `last_n` keeps the newest n, the range is
        [start, end)."""

    @abstractmethod
    def thread_message_window(self, thread_id: str, offset: int, limit: int | None) -> list[MessageRecord]:
        """A slice of a thread's live messages by position (0 = oldest), for Thread.get_messages."""

    @abstractmethod
    def count_thread_messages(self, thread_id: str, *, through_seq_no: int | None = None) -> int:
        """How many live messages a thread holds; with `through_seq_no`, how many of them have a
        sequence number up to it (a message's position in the thread is that count minus one)."""

    @abstractmethod
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
        """Change one live record (§3.3.7: a changed payload is embedded again unless `embedding`
        is given; None clears it); returns 1, or 0 when there is no such live record. A message's
        new expiry passes to its images; the thread's activity time moves.

        `role` (messages only) is a non-empty string; `expires_at` an ISO-8601 instant or
        datetime (None: never), not together with `ttl_days`/`ttl_anchor`. A memory takes a new
        `memory_type` (one of the memory types: its links follow) and a new `user_id` or
        `agent_id` (None: unscoped on that dimension). The record's version
        moves by one (its images' too when a message's expiry changes). With `expected_version`
        the stored version is compared inside the write: a different one raises
        StaleVersionError and nothing is written."""

    @abstractmethod
    def delete(self, record_type: str, record_id: str, cascade: bool = False) -> int:
        """Delete one record, expired or not, with what depends on it (a memory's links, a
        message's images and their bytes); returns 0 or 1."""

    @abstractmethod
    def delete_thread(self, thread_id: str) -> int:
        """Delete a thread and every record in it; returns the number of threads deleted (0 or 1)."""

    @abstractmethod
    def delete_user(self, user_id: str, cascade: bool = True) -> int:
        """Delete a user's profile and, with `cascade`, their threads and records; returns rows deleted."""

    @abstractmethod
    def delete_agent(self, agent_id: str, cascade: bool = True) -> int:
        """Delete an agent's profile and, with `cascade`, its threads and records; returns rows deleted."""

    @abstractmethod
    def purge_expired(self) -> int:
        """Delete every expired record (with its dependants); returns how many records went."""

    @abstractmethod
    def align_image_expiry(self, message_ids: Sequence[str]) -> None:
        """Give the images of these messages their message's expiry: they live and go together."""

    @abstractmethod
    def save_thread(
        self, thread_id: str, user_id: str | None, agent_id: str | None, metadata: Any, settings: dict
    ) -> ThreadRecord:
        """Create the thread unless it exists (a concurrent creator wins quietly); returns it as stored."""

    @abstractmethod
    def get_thread(self, thread_id: str) -> ThreadRecord | None:
        """A thread with its live message count, summary and settings, or None."""

    @abstractmethod
    def update_thread(
        self, thread_id: str, metadata: Any = NOT_SET, settings: Any = NOT_SET, *, expected_version: Any = NOT_SET
    ) -> int:
        """Replace a thread's metadata and/or settings and mark activity; returns 1, or 0 for no thread.
        The thread's version moves by one; `expected_version` as for update."""

    @abstractmethod
    def save_thread_summary(
        self,
        thread_id: str,
        summary: str | None,
        topics: list[str] | None = None,
        *,
        expected_version: Any = NOT_SET,
    ) -> int:
        """Store a thread's summary and topics (None clears them); returns 1, or 0 for no thread.
        The thread's version moves by one; `expected_version` as for update_thread."""

    @abstractmethod
    def save_thread_state(self, thread_id: str, key: str, state: dict[str, Any]) -> int:
        """Merge `state` into the thread's settings under `key` (extraction progress), leaving its
        activity time and version alone; returns 1, or 0 for no thread."""

    @abstractmethod
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
        """Threads, latest activity first, filtered exactly by owner and metadata, and by `text`
        (a case-insensitive substring of the thread id or its metadata as JSON text); cursor-paged."""

    @abstractmethod
    def list_users(self, limit: int | None = DEFAULT_LIST_LIMIT, cursor: str | None = None) -> Page:
        """Every user id that owns a profile, thread or record, by id, with its profile if any."""

    @abstractmethod
    def list_agents(self, limit: int | None = DEFAULT_LIST_LIMIT, cursor: str | None = None) -> Page:
        """Every agent id that owns a profile, thread or record, by id, with its profile if any."""

    @abstractmethod
    def add_relations(self, relations: Sequence[Mapping[str, Any]], *, thread_id: Any = NOT_SET) -> list[str]:
        """Link live memories (one link per pair, either direction; `thread_id`: both ends must be
        that thread's); lifecycle links (D2) make their target invalid. Returns the relation ids."""

    @abstractmethod
    def get_relation(self, relation_id: str, *, thread_id: Any = NOT_SET) -> RecordRelation | None:
        """One relation by id, or None (also when `thread_id` is given and it is not that thread's)."""

    @abstractmethod
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
        """Change a relation's labels, timestamp or metadata, recounting its target's lifecycle;
        returns 1, or 0 when there is none. The relation's version moves by one; `expected_version`
        as for update."""

    @abstractmethod
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
        """Delete one relation, by id alone or by its complete tuple in the stored direction; returns 0 or 1."""

    @abstractmethod
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
        """Relations in creation order: of one memory (either end) and/or of a scope, and/or of
        these relation types (one label or a non-empty list; the stored `relation_type`); cursor-paged."""

    @abstractmethod
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
        """Live memories and the links among them (a MemoryGraph), around exactly one of:
        a scope (`user_id`, `agent_id` or `thread_id`, matched exactly): the scope's memories
        that have a link, and the memories up to `hops` links from them (scope or not); or a
        memory (`memory_id`, always a node): its breadth-first neighbourhood up to `hops`
        (0-5) links away. Links are followed both ways; every link among the nodes is an edge.
        `relation_types` keeps only links of those types; `memory_types` and `statuses`
        ("valid"/"invalid", effective) keep only such nodes (each a value or a list; omitted or
        None: no such filter), a memory outside them being neither
        shown nor crossed. Expired memories are never nodes. Beyond `max_nodes` (1-10,000), the
        nodes with the most links are kept (the centre first), with the links among them, and
        `truncated` is set. Nodes come centre first, then most linked first, then by id; edges
        in creation order (as list_relations lists them). ValueError for bad arguments; an empty
        graph for a missing or expired `memory_id` (AgentMemory.memory_graph: KeyError). One
        consistent read: a query per hop, or the in-memory indexes."""

    @abstractmethod
    def find_duplicates(
        self,
        user_id: str,
        *,
        max_distance: float = DEFAULT_DUPLICATE_DISTANCE,
        memory_types: Any = None,
        statuses: Any = "valid",
        limit: int = DEFAULT_DUPLICATE_GROUPS,
    ) -> Duplicates:
        """Groups of one user's near-duplicate memories (Duplicates): the live (unexpired)
        memories whose `user_id` is exactly `user_id`, of `memory_types` (a type or a list;
        None: all four) and effective `statuses` ("valid" by default, so that memories already
        retired as duplicates do not come back; None: valid and invalid), that have a vector.
        Two are near-duplicates when the cosine distance of their vectors is at most
        `max_distance` (0-0.5, inclusive to float32 precision); a group is a connected
        component of that relation, of two memories or more. Groups come tightest first, the
        first `limit` (1-1,000) of `total_groups`. Vector math over all the candidates at
        once: a blocked matrix product on the in-memory index or on the vectors read in one
        query, or, on Oracle without the index, a VECTOR_DISTANCE self-join in the database;
        never a loop over pairs. ValueError for bad arguments; an unknown user has no groups."""

    @abstractmethod
    def lifecycle(self, memory_ids: Sequence[str]) -> dict[str, Lifecycle]:
        """For each live memory among `memory_ids`, its Lifecycle: its own status flag and the ids
        of the lifecycle links (supersedes, refines, duplicates) pointing at it, in link order.
        Missing, expired and non-memory ids are left out. One query whatever the number of ids."""

    @abstractmethod
    def memory_vectors(self, memory_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored unit vector (float32, the store's dimension) of each live memory among
        `memory_ids`. Missing, expired and non-memory ids, and memories without a vector, are left
        out. One query whatever the number of ids."""

    @abstractmethod
    def stats(self, *, thread_id: Any = NOT_SET, user_id: Any = NOT_SET, agent_id: Any = NOT_SET) -> StoreStats:
        """Counts (StoreStats) of the whole store, or, with one of the arguments, of exactly what
        delete_thread(thread_id), delete_user(user_id, cascade=True) or delete_agent(agent_id,
        cascade=True) would delete: the thread or the owner's profile, their records, their
        threads and those threads' records, a message's images, and the links touching the
        memories among them. Records by type as valid/invalid (live, effective status) and
        expired (awaiting purge_expired); links by relation_type; threads; distinct users and
        agents owning a profile, thread or record; live messages and memories by UTC day of
        their event time (else creation time). A few aggregate queries; a repeated call costs
        one look at the change log until something changes or a record expires."""

    @abstractmethod
    def owner_counts(self, owner: str, ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """For each user (owner "user") or agent ("agent") id: {"threads": n, "messages": n,
        "memories": n}, the threads it owns and its live messages and memories, in one grouped
        query for the whole list (an id with nothing has zeros)."""

    @abstractmethod
    def snapshot(
        self,
        *,
        record_ids: Sequence[tuple[str, str]] = (),
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
    ) -> Snapshot:
        """Everything the matching delete would remove, as stored (expired records included):
        `record_ids`, (record_type, id) pairs, those records with what delete() removes with
        them (a message's images, a memory's links); `thread_id`, the thread (metadata,
        settings, summary, topics, times, version) with all its records and the links touching
        its memories; `user_id`/`agent_id`, what the cascading delete removes (stats' scope).
        No argument: the whole store (an export). Images carry their bytes; `Snapshot.stored`
        keeps each record's explicit status, event time and index text. One consistent read."""

    @abstractmethod
    def restore(self, snapshot: Snapshot, *, skip_existing: bool = False, keep_versions: bool = False) -> RestoreReport:
        """Write a snapshot back exactly, in one transaction: ids, types, content, parts, index
        text, scope, role, sequence numbers, times, expiry, explicit status, metadata, image
        bytes; absent threads as they were (present ones are kept, and reported), each thread's
        next sequence number kept above its restored messages'; relations with their ids,
        labels, times and metadata. Texts are embedded again, lifecycle statuses recounted, and
        every restored row takes its snapshot version + 1 (an edit read before the delete is
        refused). A taken record or relation id (or linked pair) is a ValueError naming it, and
        nothing is written, unless `skip_existing`, which skips and reports it; a relation whose
        end is missing after the restore is skipped and reported. A malformed snapshot is a
        ValueError before anything is written. `keep_versions` (an import, memory.engine.transfer)
        keeps the snapshot's versions instead: nothing read before can be in flight."""

    def settle_outcome(self, token: str, outcome: str) -> str:
        """Record `outcome` ("committed" or "aborted") under `token` unless one is recorded already,
        and return the outcome that stands. Inside transaction() the record is part of the block,
        so it commits with the block's writes or not at all.

        This makes the store the judge of a change recorded elsewhere (the dashboard's curation
        history, in another database): the writer settles "committed" in the transaction of its
        change, and whoever finds the change's record left unconfirmed after a crash settles
        "aborted". The first to settle wins; a writer that finds "aborted" must roll back."""
        raise NotImplementedError(f"{type(self).__name__} keeps no outcomes")

    def outcomes(self, tokens: Sequence[str]) -> dict[str, str]:
        """The outcomes recorded under these tokens (settle_outcome); a token with none is absent."""
        raise NotImplementedError(f"{type(self).__name__} keeps no outcomes")

    def forget_outcomes(self, tokens: Sequence[str]) -> None:
        """Delete the outcomes recorded under these tokens, once nothing will ask for them again."""
        raise NotImplementedError(f"{type(self).__name__} keeps no outcomes")

    def check(self, *, repair: bool = False, examples: int = 5) -> CheckReport:
        """Look for inconsistencies between what the store holds and what it should (CheckReport,
        one CheckFinding per kind): records with text but no vector, or a vector of another
        dimension than the store's; links with an end that no longer exists; images whose
        message or thread is gone, or whose bytes are missing; the in-memory index (if any)
        holding other records or links, or other vectors or versions, than the database.
        `repair=True` fixes what is safe, then checks again: re-embeds records missing a vector
        (or with one of the wrong dimension), deletes orphan links, rebuilds the in-memory index
        from the database. It never deletes a record. `examples` caps the ids per finding."""
        raise NotImplementedError(f"{type(self).__name__} has no consistency check")

    def reembed(
        self,
        embedder: Embedder,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: Callable[[int, int], None] | None = None,
    ) -> ReembedReport:
        """Move the store to another embedder, a new vector dimension included: every record's
        indexed text (messages, memories, image descriptions, user and agent profiles) is embedded
        again by `embedder`, `batch_size` texts at a time.

        The new vectors go to a staging area first, committed batch by batch, while the store keeps
        serving with its old vectors; an error (the embedder failing, an interruption) leaves the
        store as it was, and a later call with the same embedder resumes after the last committed
        batch. Once every record is staged, the vectors, the recorded embedder and dimension are
        swapped (in one transaction where the database allows DDL in one), the in-memory index is
        rebuilt, and this store object embeds with `embedder` from then on; other processes must
        reopen the store with it (opening with the old one is refused). `progress(staged, total)`
        is called after each batch. Records changed meanwhile are embedded again before the swap.
        Vectors without text (given by the caller) cannot be re-embedded: they are dropped and
        counted. A store already using `embedder` is left alone (`changed=False`)."""
        raise NotImplementedError(f"{type(self).__name__} cannot re-embed")

    def vector_state(self) -> VectorState:
        """The embedder and dimension the store records for its vectors, beside this object's,
        and a re-embedding begun and not finished, if any."""
        raise NotImplementedError(f"{type(self).__name__} does not record its embedder")

    def health(self) -> StoreHealth:
        """The schema version, the change log's newest entry and whether the in-memory index is
        in step with it: a few single-row reads, never a scan, for a health check to call often.
        Raises whatever the database raises when it cannot be reached."""
        raise NotImplementedError(f"{type(self).__name__} does not report its health")

    @abstractmethod
    def close(self) -> None:
        """Release connections (and save what an in-memory index keeps for the next start)."""

    async def add_async(self, *args: Any, **kwargs: Any) -> list[str]:
        return await asyncio.to_thread(self.add, *args, **kwargs)

    async def search_async(self, *args: Any, **kwargs: Any) -> list[tuple[Record, float]]:
        return await asyncio.to_thread(self.search, *args, **kwargs)


def image_column(record_type: str, images: Any, message_ids: Any, count: int) -> list[tuple[Any, str | None]]:
    """(checked image, message id) per record of an image batch; [] for other record types."""
    if record_type != IMAGE_TYPE:
        if images is not NOT_SET or message_ids is not NOT_SET:
            raise ValueError("images and message_ids are for image records only")
        return []
    if not isinstance(images, (list, tuple)) or len(images) != count:
        raise ValueError(f"image records need `images`: one checked image per content ({count})")
    if not all(isinstance(image, CheckedImage) for image in images):
        raise ValueError("images must be checked with memory.engine.images.check_image")
    owners = [None] * count if message_ids is NOT_SET or message_ids is None else message_ids
    if isinstance(owners, str):
        owners = [owners] * count
    if len(owners) != count:
        raise ValueError(f"message_ids has {len(owners)} entries for {count} images")
    return list(zip(images, owners, strict=True))


@dataclass
class SearchRequest:
    """A store search's arguments, checked and resolved: what every backend searches with."""

    query: str | None
    scope: Any  # scope.ScopeFilter
    types: tuple[str, ...]
    tree: Any  # filters.Contains | None
    vector: np.ndarray | None
    strategy: SearchStrategy
    created_at_or_before: str | None = None
    """Canonical UTC text: only records created at or before it (None: no such filter)."""


def check_search(
    query: Any,
    k: Any,
    query_vector: Any,
    scope: SearchScope,
    record_types: Any,
    metadata_filter: Any,
    num_hops: Any,
    max_linked_results: Any,
    include_invalid_results: Any,
    vector_dim: int,
    strategy: SearchStrategy,
    created_at_or_before: Any = NOT_SET,
) -> SearchRequest:
    """The checks and resolution every store's `search` starts with (spec §3.3.9)."""
    check_positive_int("k", k)
    if (query is None) == (query_vector is None):
        raise ValueError("pass exactly one of query and query_vector")
    if query is not None and not isinstance(query, str):
        raise ValueError(f"query must be a string, not {type(query).__name__}")
    check_hops(num_hops, max_linked_results)
    if not isinstance(include_invalid_results, bool):
        raise ValueError("include_invalid_results must be True or False")
    return SearchRequest(
        query=query,
        scope=resolve_store_scope(scope),
        types=SEARCHABLE_TYPES if record_types is None else check_record_types(record_types),
        tree=parse_filter(metadata_filter),
        vector=to_vector(query_vector, vector_dim, "query_vector") if query_vector is not None else None,
        strategy=strategy if query is not None else SearchStrategy.VECTOR,
        created_at_or_before=(
            None
            if created_at_or_before is NOT_SET
            else normalize_timestamp(created_at_or_before, "created_at_or_before")
        ),
    )


RELATION_KEYS = frozenset(
    {
        "source_record_id",
        "source_record_type",
        "target_record_id",
        "target_record_type",
        "relation_type",
        "opposite_relation_type",
        "id",
        "timestamp",
        "metadata",
    }
)


def relation_labels_of(index: int, relation: Any) -> tuple[str, str]:
    """The checked (forward, opposite) labels of relations[index], after its shape."""
    if not isinstance(relation, Mapping):
        raise ValueError(f"relations[{index}] must be a mapping")
    unknown = set(relation) - RELATION_KEYS
    if unknown:
        raise ValueError(f"relations[{index}] has unknown keys {sorted(unknown)}")
    return relation_labels(relation.get("relation_type"), relation.get("opposite_relation_type", NOT_SET))


def relation_values(relation: Mapping[str, Any], forward: str, opposite: str) -> dict[str, Any]:
    """A relation's stored values once its ends are checked: ids, labels, pair, timestamp, metadata.

    `pair` names the two ends in sorted order: one link per pair of memories, either way.
    """
    source, target = relation["source_record_id"], relation["target_record_id"]
    if source == target:
        raise ValueError(f"a memory cannot be linked to itself ({source!r})")
    relation_id = relation.get("id")
    if relation_id is None:
        relation_id = new_id()
    elif not isinstance(relation_id, str) or not relation_id:
        raise ValueError(f"relation ids must be non-empty strings, not {relation_id!r}")
    else:
        check_id_text("relation id", relation_id)
    return {
        "id": relation_id,
        "source_id": source,
        "source_type": relation["source_record_type"],
        "target_id": target,
        "target_type": relation["target_record_type"],
        "relation_type": forward,
        "opposite_type": opposite,
        "timestamp": normalize_timestamp(relation.get("timestamp")),
        "metadata": dump_metadata(relation.get("metadata")),
        "pair": "\x1f".join(sorted((source, target))),
    }


def check_relation_selector(relation_id: Any, endpoint: tuple[Any, ...]) -> None:
    """delete_record_link selects by relation_id alone, or by the complete stored-direction tuple."""
    if relation_id is not NOT_SET:
        if any(value is not NOT_SET for value in endpoint):
            raise ValueError("select the link by relation_id alone, or by its complete tuple, not both")
    elif any(value is NOT_SET for value in endpoint):
        raise ValueError(
            "select the link by relation_id, or by source_record_id, source_record_type, target_record_id, "
            "target_record_type and relation_type together"
        )
    else:
        source_id, source_type, target_id, target_type, relation_type = endpoint
        check_link_end("source", source_id, source_type)
        check_link_end("target", target_id, target_type)
        check_label("relation_type", relation_type)


def relation_changes(
    stored_type: str | None,
    stored_opposite: str | None,
    relation_type: Any,
    opposite_relation_type: Any,
    timestamp: Any,
    metadata: Any,
) -> dict[str, Any]:
    """The new values of update_record_link: "relation_type"/"opposite_type", "timestamp", "metadata".

    Retyping to a built-in type sets its fixed opposite; an omitted opposite keeps the stored one.
    With no stored relation (None types), the arguments are only checked.
    """
    if all(value is NOT_SET for value in (relation_type, opposite_relation_type, timestamp, metadata)):
        raise ValueError("update_record_link needs relation_type, opposite_relation_type, timestamp or metadata")
    for name, label in (("relation_type", relation_type), ("opposite_relation_type", opposite_relation_type)):
        if label is not NOT_SET:
            check_label(name, label)
    changes: dict[str, Any] = {}
    if timestamp is not NOT_SET:
        changes["timestamp"] = normalize_timestamp(timestamp)
    if metadata is not NOT_SET:
        changes["metadata"] = dump_metadata(metadata)
    if stored_type is not None and (relation_type is not NOT_SET or opposite_relation_type is not NOT_SET):
        new_type = stored_type if relation_type is NOT_SET else relation_type
        opposite = opposite_relation_type
        if opposite is NOT_SET and new_type not in BUILTIN_RELATIONS:
            opposite = stored_opposite
        changes["relation_type"], changes["opposite_type"] = relation_labels(new_type, opposite)
    return changes


def build_record(row: Mapping[str, Any], *, timestamp: str | None, created_at: str, **fields: Any) -> Record:
    """The record of a stored row (columns kind, id, record_type, content, JSON metadata, status,
    scope, role, seq_no, JSON parts, message_id, mime_type, version); `fields` override the row's values.

    `timestamp` is the event time, None when the record has none (it then reads as `created_at`).
    """
    values = _Overridden(row, fields) if fields else row
    common = {
        "id": values["id"],
        "record_type": values["record_type"],
        "content": values["content"],
        "timestamp": timestamp or created_at,
        "metadata": json.loads(values["metadata"]) if values["metadata"] is not None else None,
        "status": RecordStatus(values["status"]),
        "created_at": created_at,
        "expires_at": values["expires_at"],
        "version": int(values["version"]),
    }
    kind = values["kind"]
    if kind == USER_PROFILE_TYPE:
        return UserProfileRecord(**common)
    if kind == AGENT_PROFILE_TYPE:
        return AgentProfileRecord(**common)
    scope = {"thread_id": values["thread_id"], "user_id": values["user_id"], "agent_id": values["agent_id"]}
    if kind == MESSAGE_TYPE:
        parts = json.loads(values["parts"]) if values["parts"] else None
        return MessageRecord(**common, **scope, role=values["role"], seq_no=values["seq_no"], parts=parts)
    if kind == IMAGE_TYPE:
        return ImageRecord(
            **common, **scope, message_id=values["message_id"], mime_type=ImageMimeType(values["mime_type"])
        )
    return MemoryRecord(**common, **scope)


class _Overridden:
    """A row's columns with some values replaced, without copying the row (records are built by
    the hundred in a graph search)."""

    __slots__ = ("_fields", "_row")

    def __init__(self, row: Mapping[str, Any], fields: dict[str, Any]) -> None:
        self._row, self._fields = row, fields

    def __getitem__(self, name: str) -> Any:
        return self._fields[name] if name in self._fields else self._row[name]


def scope_condition(column_sql: str, name: str, value: str | None, params: dict[str, Any]) -> str:
    """Exact scope match: `=` with a bind for an id (so indexes apply), IS NULL for "unscoped"."""
    if value is None:
        return f"{column_sql} IS NULL"
    params[f"scope_{name}"] = value
    return f"{column_sql} = :scope_{name}"


def relation_scope_condition(scope: Mapping[str, Any], params: dict[str, Any]) -> str | None:
    """list_relations' scope: a relation is in it when either end (aliases s and t) matches every
    given scope value (NOT_SET: not constrained; None: unscoped on that dimension)."""
    given = [(column, value) for column, value in scope.items() if value is not NOT_SET]
    if not given:
        return None
    sides = []
    for alias in ("s", "t"):
        conditions = []
        for column, value in given:
            check_scope_value(column, value)
            conditions.append(scope_condition(f"{alias}.{column}", column, value, params))
        sides.append("(" + " AND ".join(conditions) + ")")
    return "(" + " OR ".join(sides) + ")"


def check_profile(record_type: str, owner_id: Any, information: Any) -> str:
    """Check add_user/add_agent's arguments; returns the owner's scope column."""
    name = "user_id" if record_type == USER_PROFILE_TYPE else "agent_id"
    check_scope_value(name, owner_id)
    if not isinstance(owner_id, str):
        raise ValueError(f"{name} must be a string")
    if not isinstance(information, str):
        raise ValueError(f"information must be a string, not {type(information).__name__}")
    check_length("information", information)
    return name


def storable_id(record_id: str) -> bool:
    """Whether a record could have this id (within the id limits): a lookup of any other finds
    nothing without asking the database, which might refuse so long a bind (Oracle)."""
    try:
        check_id_text("record_id", record_id)
    except ValueError:
        return False
    return bool(record_id)


def check_id(name: str, value: Any) -> str:
    """A required id (of a thread, record, link or owner): a non-empty string within the limits."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty string, not {value!r}")
    check_id_text(name, value)
    return value


def check_link_end(name: str, record_id: Any, record_type: Any) -> None:
    """The arguments of one end of a new link, before the store looks the memory up."""
    check_record_type(record_type, MEMORY_TYPES)
    check_id(f"{name}_record_id", record_id)


def check_link_end_found(
    name: str, record_id: str, record_type: str, found: Mapping[str, Any] | None, thread_id: Any
) -> None:
    """One end of a new link as stored (`found`: its record_type and thread_id, or None)."""
    if found is None:
        raise ValueError(f"no memory {record_id!r} to link ({name})")
    if found["record_type"] != record_type:
        raise ValueError(f"memory {record_id!r} is a {found['record_type']}, not a {record_type}")
    if thread_id is not NOT_SET and found["thread_id"] != thread_id:
        raise ValueError(f"memory {record_id!r} does not belong to thread {thread_id!r}")


def thread_named(store: MemoryStore, thread_id: str, name: str = "thread_id") -> ThreadRecord:
    """The stored thread a new record names; a ValueError when there is none. add() itself makes
    a bare thread for an id it does not know (an agent's first message starts its thread), but
    what people and files bring — the dashboard's and the API's new memories and images, an
    import's records — must name a thread that exists, so that a mistyped or missing thread id is
    refused instead of becoming a new, empty thread. One rule for all of them, here."""
    thread = store.get_thread(thread_id)
    if thread is None:
        raise ValueError(f"{name} names no thread: {thread_id!r}")
    return thread


def thread_changes(metadata: Any, settings: Any) -> dict[str, str | None]:
    """update_thread's new column values, as JSON text."""
    changes = {}
    if metadata is not NOT_SET:
        changes["metadata"] = dump_metadata(metadata)
    if settings is not NOT_SET:
        changes["settings"] = json.dumps(settings)
    if not changes:
        raise ValueError("update_thread needs metadata or settings")
    return changes


def summary_topics(summary: Any, topics: Any) -> str | None:
    """Check save_thread_summary's arguments; returns the topics as JSON text (None clears them).
    A summary is a record's content at most, its topics what metadata may be as JSON."""
    if summary is not None and not isinstance(summary, str):
        raise ValueError(f"summary must be a string or None, not {type(summary).__name__}")
    if summary is not None:
        check_length("summary", summary)
    if topics is not None and (not isinstance(topics, list) or not all(isinstance(t, str) for t in topics)):
        raise ValueError("topics must be a list of strings or None")
    if topics is None:
        return None
    text = json.dumps(topics)
    check_length("topics as JSON", text, MAX_JSON_CHARS)
    return text


@dataclass(frozen=True)
class DeleteScope:
    """What one delete_thread, or cascading delete_user/delete_agent, would remove: the thread, or
    the owner's profile, records, threads and those threads' records (column: thread_id, user_id
    or agent_id)."""

    column: str
    owner_id: str


def delete_scope(thread_id: Any, user_id: Any, agent_id: Any) -> DeleteScope | None:
    """stats()/snapshot()'s scope arguments: at most one of them (None: the whole store)."""
    given = [(name, value) for name, value in (("thread_id", thread_id), ("user_id", user_id), ("agent_id", agent_id))]
    given = [(name, value) for name, value in given if value is not NOT_SET]
    if len(given) > 1:
        raise ValueError("pass at most one of thread_id, user_id and agent_id")
    if not given:
        return None
    name, value = given[0]
    return DeleteScope(name, check_id(name, value))


LIKE_ESCAPE = "\\"


def like_pattern(text: Any) -> str | None:
    """A listing's `text` filter as a LIKE pattern matching it as a substring, in lower case, with
    LIKE's wildcards escaped (a % or _ in the text matches only itself); None for no filter
    (NOT_SET or ''). Bound as a parameter: a text never reaches SQL."""
    if text is NOT_SET:
        return None
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, not {type(text).__name__}")
    check_length("text", text, MAX_SEARCH_TEXT_CHARS)
    if "\x00" in text:
        raise ValueError("text must not contain NUL characters")
    try:
        text.encode()
    except UnicodeEncodeError:
        raise ValueError("text is not valid Unicode text") from None
    if not text:
        return None
    escaped = "".join(LIKE_ESCAPE + char if char in ("%", "_", LIKE_ESCAPE) else char for char in text.lower())
    return f"%{escaped}%"


def listing_status(status: Any) -> str | None:
    """list()'s `status`: "valid", "invalid" (effective status; RecordStatus members too),
    "expired", or NOT_SET (None: no filter)."""
    if status is NOT_SET:
        return None
    if not isinstance(status, str) or status not in ("valid", "invalid", "expired"):
        raise ValueError(f"status must be 'valid', 'invalid' or 'expired', not {status!r}")
    return str(status.value if isinstance(status, RecordStatus) else status)


@dataclass(frozen=True)
class GraphRequest:
    """memory_graph's arguments, checked: the scope column and value, or the centre memory."""

    scope: tuple[str, str] | None
    centre: str | None
    hops: int
    relation_types: tuple[str, ...] | None
    memory_types: tuple[str, ...]
    statuses: frozenset[str]
    max_nodes: int


def relation_type_list(relation_types: Any) -> tuple[str, ...] | None:
    """A `relation_types` filter (one label, or a non-empty list of them) as sorted distinct
    labels; None when it is omitted (NOT_SET or None). ValueError naming it otherwise."""
    if relation_types is NOT_SET or relation_types is None:
        return None
    labels = (relation_types,) if isinstance(relation_types, str) else relation_types
    if not isinstance(labels, (list, tuple, set, frozenset)) or not labels:
        raise ValueError(f"relation_types must be a relation type or a non-empty list of them, not {relation_types!r}")
    for label in labels:
        check_label("relation_types", label)
    return tuple(sorted(set(labels)))


def graph_request(
    *,
    user_id: Any,
    agent_id: Any,
    thread_id: Any,
    memory_id: Any,
    hops: Any,
    relation_types: Any,
    memory_types: Any,
    statuses: Any,
    max_nodes: Any,
) -> GraphRequest:
    """Check memory_graph's arguments (ValueError naming the first bad one)."""
    given = {
        name: value
        for name, value in (
            ("user_id", user_id),
            ("agent_id", agent_id),
            ("thread_id", thread_id),
            ("memory_id", memory_id),
        )
        if value is not NOT_SET
    }
    if len(given) != 1:
        raise ValueError(
            f"pass exactly one of user_id, agent_id, thread_id and memory_id, not {sorted(given) or 'none'}"
        )
    [(name, value)] = given.items()
    check_id(name, value)
    if isinstance(hops, bool) or not isinstance(hops, int) or not 0 <= hops <= MAX_HOPS:
        raise ValueError(f"hops must be an integer from 0 to {MAX_HOPS}, not {hops!r}")
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or not 1 <= max_nodes <= MAX_GRAPH_NODES:
        raise ValueError(f"max_nodes must be an integer from 1 to {MAX_GRAPH_NODES:,}, not {max_nodes!r}")
    labels = relation_type_list(relation_types)
    centre = value if name == "memory_id" else None
    return GraphRequest(
        scope=None if centre is not None else (name, value),
        centre=centre,
        hops=hops,
        relation_types=labels,
        memory_types=memory_type_list(memory_types),
        statuses=status_set(statuses),
        max_nodes=max_nodes,
    )


def memory_type_list(memory_types: Any) -> tuple[str, ...]:
    """A `memory_types` filter (a type or a list of them) as sorted types; omitted (NOT_SET or
    None): every memory type."""
    if memory_types is NOT_SET or memory_types is None:
        return MEMORY_TYPES
    try:
        return check_record_types(memory_types, MEMORY_TYPES)
    except ValueError as error:  # said with this argument's name ("record_type must be…" names another)
        raise ValueError(f"memory_types: {error}") from None


def status_set(statuses: Any) -> frozenset[str]:
    """A `statuses` filter ("valid", "invalid" or a non-empty list of them: effective statuses)
    as a set; omitted (NOT_SET or None): both."""
    wanted = frozenset(("valid", "invalid"))
    if statuses is NOT_SET or statuses is None:
        return wanted
    values = (statuses,) if isinstance(statuses, str) else statuses
    if not isinstance(values, (list, tuple, set, frozenset)) or not values:
        raise ValueError(f"statuses must be 'valid', 'invalid' or a non-empty list of them, not {statuses!r}")
    for status in values:
        if not isinstance(status, str) or status not in wanted:
            raise ValueError(f"statuses must be 'valid', 'invalid' or a non-empty list of them, not {statuses!r}")
    return frozenset(str(RecordStatus(status).value) for status in values)


@dataclass(frozen=True)
class DuplicatesRequest:
    """find_duplicates' arguments, checked (memory_types and statuses as memory_graph's)."""

    user_id: str
    max_distance: float
    memory_types: tuple[str, ...]
    statuses: frozenset[str]
    limit: int


def duplicates_request(
    *, user_id: Any, max_distance: Any, memory_types: Any, statuses: Any, limit: Any
) -> DuplicatesRequest:
    """Check find_duplicates' arguments (ValueError naming the first bad one)."""
    check_id("user_id", user_id)
    if (
        isinstance(max_distance, bool)
        or not isinstance(max_distance, (int, float))
        or not 0 <= max_distance <= MAX_DUPLICATE_DISTANCE  # also refuses NaN
    ):
        raise ValueError(f"max_distance must be a number from 0 to {MAX_DUPLICATE_DISTANCE}, not {max_distance!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_DUPLICATE_GROUPS:
        raise ValueError(f"limit must be an integer from 1 to {MAX_DUPLICATE_GROUPS:,}, not {limit!r}")
    return DuplicatesRequest(
        user_id=user_id,
        max_distance=float(max_distance),
        memory_types=memory_type_list(memory_types),
        statuses=status_set(statuses),
        limit=limit,
    )


def build_graph(
    request: GraphRequest,
    seeds: Sequence[str],
    links_touching: Any,
    read: Any,
) -> MemoryGraph:
    """A MemoryGraph from a store's primitives: `seeds` (the centre, or the scope's memories
    passing the node filters), `links_touching` (graph.LinksTouching) and `read(node ids, link
    keys)`, which returns the nodes' records by id and the links' relations by key. Link keys
    are the links' positions, so the edges come in creation order (as list_relations lists them)."""
    nodes, edges = walk_graph(seeds, request.hops, links_touching, centre=request.centre)
    ranked, kept = cap_graph(nodes, edges, request.max_nodes, request.centre)
    records, relations = read(ranked, kept)
    return MemoryGraph(
        nodes=[records[node] for node in ranked if node in records],
        edges=[relations[key] for key in sorted(kept) if key in relations],
        truncated=len(ranked) < len(nodes),
        total_nodes=len(nodes),
        total_edges=len(edges),
    )


def memory_id_list(memory_ids: Any) -> list[str]:
    """A list of memory ids to look up (lifecycle): a sequence of strings, not one string; the
    ids no record could have (empty, or beyond the id limits) are dropped, as nothing has them."""
    if isinstance(memory_ids, (str, bytes)) or not isinstance(memory_ids, Sequence):
        raise ValueError(f"memory_ids must be a list of memory ids, not {type(memory_ids).__name__}")
    for i, memory_id in enumerate(memory_ids):
        if not isinstance(memory_id, str):
            raise ValueError(f"memory_ids[{i}] must be a string, not {type(memory_id).__name__}")
    return [memory_id for memory_id in dict.fromkeys(memory_ids) if storable_id(memory_id)]


def token_list(tokens: Any) -> list[str]:
    """The change tokens whose outcomes to read or forget: a sequence of ids, not one string."""
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Sequence):
        raise ValueError(f"tokens must be a list of tokens, not {type(tokens).__name__}")
    return [check_id(f"tokens[{i}]", token) for i, token in enumerate(tokens)]


def record_id_list(record_id: Any) -> list[str]:
    """list()'s `record_id`: one id or a list of them."""
    ids = [record_id] if isinstance(record_id, str) else record_id
    if not isinstance(ids, (list, tuple)) or not all(isinstance(i, str) for i in ids):
        raise ValueError(f"record_id must be a string or a list of strings, not {record_id!r}")
    return list(ids)


def seq_range_conditions(column: str, start: Any, end: Any, params: dict[str, Any]) -> list[str]:
    """list_thread_messages' [start, end) seq_no range as conditions with binds."""
    conditions = []
    for name, value, op in (("range_start_seq_no", start, ">="), ("range_end_seq_no", end, "<")):
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be an integer or None")
            check_int_range(name, value)
            conditions.append(f"{column} {op} :{name}")
            params[name] = value
    return conditions


def attach_trees(
    hits: Sequence[SearchHit],
    trees: Mapping[str, list],
    found: Mapping[str, tuple[Record, float]],
    relations: Mapping[Any, RecordRelation],
) -> None:
    """Hang each direct memory result's linked-result tree (graph.grow_trees) on its record.

    `found` gives each linked memory's record and distance, `relations` each node's relation.
    A memory can sit in several trees, each with its own subtree: a copy per extra node. A
    memory missing from `found` (deleted by another process since the links were read) is left
    out with its subtree, so a search never fails on what others do meanwhile.
    """
    used: set[str] = set()

    def build(branch: list) -> list[tuple[RecordRelation, SearchHit]]:
        built = []
        for node in branch:
            if node.record_id not in found:
                continue
            record, distance = found[node.record_id]
            if node.record_id in used:
                copy = object.__new__(type(record))
                copy.__dict__.update(record.__dict__)
                record = copy
            used.add(node.record_id)
            record.linked_results = build(node.children)
            built.append((relations[node.relation], SearchHit(record, distance)))
        return built

    for hit in hits:
        if hit[0].id in trees and hit[0].record_type in MEMORY_TYPES:
            hit[0].linked_results = build(trees[hit[0].id])
