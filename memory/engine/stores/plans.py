"""The write plans every store shares: the arguments of `add`, `update`, and of relation and
thread changes, checked, broadcast and resolved into the rows and column values a backend writes
(spec §3.3.1, §3.3.10). Nothing is stored on any error: a backend writes a plan or nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from ..graph import check_label, relation_labels
from ..images import CheckedImage
from ..limits import (
    MAX_JSON_CHARS,
    check_id_text,
    check_length,
    dump_metadata,
)
from ..scope import check_scope_value
from ..ttl import check_ttl_days, normalize_timestamp
from ..types import (
    BUILTIN_RELATIONS,
    IMAGE_TYPE,
    MEMORY_TYPES,
    MESSAGE_TYPE,
    NOT_SET,
    RecordStatus,
    TimeToLiveAnchor,
    coerce_enum,
    new_id,
    new_ids,
)
from .arguments import check_record_type, dump_parts

ADDABLE_TYPES = (MESSAGE_TYPE, *MEMORY_TYPES, IMAGE_TYPE)


def _per_record(name: str, value: Any, count: int, *, scalar_types: tuple[type, ...]) -> list:
    """Broadcast a scalar (or None) to every record, or check a list has one entry per record."""
    if value is NOT_SET or value is None or isinstance(value, scalar_types):
        return [None if value is NOT_SET else value] * count
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{name} must be a scalar or a list with one entry per content, not {type(value).__name__}")
    if len(value) != count:
        raise ValueError(f"{name} has {len(value)} entries for {count} contents")
    return list(value)


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


@dataclass
class AddPlan:
    """A checked `add` batch: its rows, unit vectors, images (with their messages) and expiries."""

    rows: list[NewRecord]
    vectors: list[np.ndarray | None]
    images: list[tuple[Any, str | None]]
    expiries: list[str | None]
    now: str


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
