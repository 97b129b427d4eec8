"""The store interface and the argument rules every backend shares (spec §3; DECISIONS D3, D4).

Backends implement the storage; the validation and broadcasting of `add`/`update`/`search`
arguments live here so that every backend refuses the same bad input with the same message.
"""

from __future__ import annotations

import asyncio
import base64
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..embedders import Embedder
from ..images import CheckedImage
from ..scope import check_scope_value
from ..ttl import check_ttl_days, normalize_timestamp
from ..types import (
    IMAGE_TYPE,
    MEMORY_TYPES,
    MESSAGE_TYPE,
    NOT_SET,
    SEARCHABLE_TYPES,
    Page,
    Record,
    RecordStatus,
    TimeToLiveAnchor,
    coerce_enum,
    new_ids,
)

ADDABLE_TYPES = (MESSAGE_TYPE, *MEMORY_TYPES, IMAGE_TYPE)
DEFAULT_BATCH_SIZE = 500
DEFAULT_LIST_LIMIT = 100
MAX_HOPS = 5


class SchemaError(RuntimeError):
    """The database does not hold the managed schema the store's policy requires."""


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


def check_hops(num_hops: Any, max_linked_results: Any) -> None:
    if isinstance(num_hops, bool) or not isinstance(num_hops, int) or not 0 <= num_hops <= MAX_HOPS:
        raise ValueError(f"num_hops must be an integer from 0 to {MAX_HOPS}, not {num_hops!r}")
    if isinstance(max_linked_results, bool) or not isinstance(max_linked_results, int) or max_linked_results < 0:
        raise ValueError(f"max_linked_results must be a non-negative integer, not {max_linked_results!r}")


def dump_metadata(metadata: Any, name: str = "metadata") -> str | None:
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        raise ValueError(f"{name} must be a dict or None, not {type(metadata).__name__}")
    try:
        return json.dumps(metadata, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be JSON-serialisable: {error}") from None


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
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0).astype(np.float32)


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
    """One argument of `add` as a list of `count` checked values; a broadcast scalar is checked once."""
    values = _per_record(name, value, count, scalar_types=scalar_types)
    if value is NOT_SET or value is None or isinstance(value, scalar_types):
        return [check(values[0], name)] * count if count else []
    return [check(v, f"{name}[{i}]") for i, v in enumerate(values)]


def _optional_str(value: Any, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be a string or None, not {type(value).__name__}")
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
    if all(given) and len(set(ids)) != count:
        raise ValueError("record_ids contains the same id twice")
    if not all(given):
        ids = new_ids(count)
    if index_texts is not NOT_SET and index_texts is not None:
        if not isinstance(index_texts, (list, tuple)) or len(index_texts) != count:
            raise ValueError(f"index_texts must be a list with one entry per content ({count})")
        index_texts = [_optional_str(t, f"index_texts[{i}]") for i, t in enumerate(index_texts)]
    else:
        index_texts = [None] * count
    thread_col = _column("thread_ids", thread_ids, count, _scope_value)
    user_col = _column("user_ids", user_ids, count, _scope_value)
    agent_col = _column("agent_ids", agent_ids, count, _scope_value)
    role_col = _column("roles", roles, count, _optional_str)
    if record_type != MESSAGE_TYPE:
        role_col = [None] * count
    timestamp_col = _column("timestamps", timestamps, count, normalize_timestamp)
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
) -> UpdatePlan:
    """Resolve the update table of spec §3.3.10 for one stored row."""
    if content is not NOT_SET:
        if text is not NOT_SET:
            raise ValueError("pass text= or content=, not both")
        text = content
    if content_parts is not NOT_SET and text is NOT_SET:
        raise ValueError("content_parts come with the text they describe")
    if not new_image and all(
        v is NOT_SET for v in (text, index_text, embedding, metadata, timestamp, ttl_days, ttl_anchor, status)
    ):
        raise ValueError("update needs at least one of text, index_text, embedding, metadata, timestamp, ttl or status")
    plan = UpdatePlan()
    if text is None:
        if index_text not in (NOT_SET, None) or (embedding is not NOT_SET and embedding is not None):
            raise ValueError(
                "text=None clears the text and its embedding; index_text and embedding must be omitted or None"
            )
        plan.content, plan.index_text, plan.embed_text = "", None, None
    elif text is not NOT_SET:
        if not isinstance(text, str):
            raise ValueError(f"text must be a string or None, not {type(text).__name__}")
        plan.content = text
    if text is not NOT_SET:
        plan.parts = dump_parts(None if content_parts is NOT_SET else content_parts)
    if text is not NOT_SET and text is not None and index_text is NOT_SET:
        # New text is the new indexing payload: an index text stored earlier described the old one.
        index_text = None
    if index_text is not NOT_SET and text is not None:
        if index_text is not None and not isinstance(index_text, str):
            raise ValueError(f"index_text must be a string or None, not {type(index_text).__name__}")
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


def decode_cursor(cursor: Any, arity: int) -> list:
    """Decode a listing cursor; a damaged or foreign one is a ValueError, not a crash."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        values = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (TypeError, ValueError, AttributeError):
        raise ValueError(f"invalid cursor: {cursor!r}") from None
    if not isinstance(values, list) or len(values) != arity:
        raise ValueError(f"invalid cursor: {cursor!r}")
    return values


class SearchHit(tuple):
    """A (record, distance) pair, as the spec's store search returns, plus `parts`: how it ranked.

    `parts` holds `vector_rank`/`vector_distance` and `keyword_rank`/`keyword_score` (BM25) for
    the rankings it appeared in (ranks from 1), and the fused `score` under the hybrid strategy.
    """

    parts: dict[str, float | int]

    def __new__(cls, record: Record, distance: float, parts: dict[str, float | int]) -> SearchHit:
        hit = super().__new__(cls, (record, distance))
        hit.parts = parts
        return hit


class MemoryStore(ABC):
    """Persistence and similarity search for records, threads and profiles.

    Implementations: SQLiteMemoryStore (embedded, the default) and OracleDBMemoryStore.
    The async entry points run the sync ones in a worker thread, so every backend gets them.
    """

    embedder: Embedder
    vector_dim: int

    @abstractmethod
    def add(self, contents: Sequence[str | None], record_type: str, *args: Any, **kwargs: Any) -> list[str]: ...

    @abstractmethod
    def add_user(self, user_id: str, information: str, metadata: dict | None = None) -> str: ...

    @abstractmethod
    def add_agent(self, agent_id: str, information: str, metadata: dict | None = None) -> str: ...

    @abstractmethod
    def get(self, record_type: str, record_id: str, include_bytes: bool = False) -> Record | None: ...

    @abstractmethod
    def list(self, record_type: str | Sequence[str], limit: int | None = DEFAULT_LIST_LIMIT, **kwargs: Any) -> Page: ...

    @abstractmethod
    def list_thread_messages(self, thread_id: str, last_n: int | None = None, **kwargs: Any) -> list: ...

    @abstractmethod
    def search(self, query: str | None = None, k: int = 10, **kwargs: Any) -> list[tuple[Record, float]]: ...

    @abstractmethod
    def update(self, record_type: str, record_id: str, **kwargs: Any) -> int: ...

    @abstractmethod
    def delete(self, record_type: str, record_id: str, cascade: bool = False) -> int: ...

    @abstractmethod
    def delete_thread(self, thread_id: str) -> int: ...

    @abstractmethod
    def purge_expired(self) -> int: ...

    @abstractmethod
    def close(self) -> None: ...

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
