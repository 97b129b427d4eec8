"""Record operations shared by Thread and AgentMemory: adding, updating, deleting and listing
memories and images, and add_memory's link to an existing memory.

Both layers write these records with the same checks; each layer only decides the scope (a
thread its own, spec §4.4; the client the caller's). The shared operations live here so that the
client does not import record logic from the thread module, and a fix applies to both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .graph import relation_labels
from .images import check_image
from .stores.arguments import check_record_type
from .stores.base import MemoryStore
from .types import IMAGE_TYPE, MEMORY_TYPES, NOT_SET, ImageInputLimitConfig, ImageRecord, MemoryRecord, Page, check_bool


def find_memory(store: MemoryStore, memory_id: Any) -> MemoryRecord | None:
    """The live memory-like record with this id, whatever its type."""
    if not isinstance(memory_id, str):
        return None
    found = store.list(MEMORY_TYPES, limit=1, record_id=memory_id)
    return found[0] if found else None


@dataclass(frozen=True)
class MemoryLink:
    """The `memory_id_to_link`/`link_*` arguments of add_memory: a link from the new memory."""

    target_id: Any = NOT_SET
    link_type: Any = NOT_SET
    link_id: Any = NOT_SET
    timestamp: Any = NOT_SET
    metadata: Any = NOT_SET

    @property
    def wanted(self) -> bool:
        if (self.target_id is NOT_SET) != (self.link_type is NOT_SET):
            raise ValueError("pass memory_id_to_link and link_type together, or neither")
        return self.target_id is not NOT_SET


def link_spec(
    source_record_id: Any,
    source_record_type: Any,
    target_record_id: Any,
    target_record_type: Any,
    relation_type: Any,
    opposite_relation_type: Any = NOT_SET,
    relation_id: Any = NOT_SET,
    timestamp: Any = NOT_SET,
    metadata: Any = NOT_SET,
) -> dict[str, Any]:
    """link_records' arguments as the store's relation mapping (omitted options left out)."""
    spec = {
        "source_record_id": source_record_id,
        "source_record_type": source_record_type,
        "target_record_id": target_record_id,
        "target_record_type": target_record_type,
        "relation_type": relation_type,
        "opposite_relation_type": opposite_relation_type,
        "id": relation_id,
        "timestamp": timestamp,
        "metadata": metadata,
    }
    return {key: value for key, value in spec.items() if value is not NOT_SET}


def add_memory_record(
    store: MemoryStore,
    content: Any,
    *,
    memory_type: Any,
    memory_id: Any,
    metadata: Any,
    timestamp: Any,
    ttl_days: Any,
    ttl_anchor: Any,
    status: Any,
    scope: dict[str, Any],
    default_scope: dict[str, Any],
    link: MemoryLink,
    link_thread_id: Any = NOT_SET,
    **store_kwargs: Any,
) -> str:
    """The write shared by Thread.add_memory and AgentMemory.add_memory.

    Omitted scope values come from `default_scope`, or from the linked memory when there is a
    link. The link's target and type are checked before anything is written; the memory and its
    link are one transaction, so a link that still fails stores neither.
    """
    if not isinstance(content, str):
        raise ValueError(f"content must be a string, not {type(content).__name__}")
    memory_type = "memory" if memory_type is NOT_SET else check_record_type(memory_type, MEMORY_TYPES)
    if link.wanted:
        target = find_memory(store, link.target_id)
        if target is None or (link_thread_id is not NOT_SET and target.thread_id != link_thread_id):
            where = "" if link_thread_id is NOT_SET else f" in thread {link_thread_id!r}"
            raise ValueError(f"no memory {link.target_id!r} to link to{where}")
        relation_labels(link.link_type)
        default_scope = {"user_id": target.user_id, "agent_id": target.agent_id, "thread_id": target.thread_id}
    resolved = {key: default_scope[key] if value is NOT_SET else value for key, value in scope.items()}
    with store.transaction():  # the memory and its link, or neither
        [new_memory] = store.add(
            [content],
            memory_type,
            record_ids=NOT_SET if memory_id is NOT_SET else [memory_id],
            thread_ids=resolved["thread_id"],
            user_ids=resolved["user_id"],
            agent_ids=resolved["agent_id"],
            timestamps=None if timestamp is NOT_SET else timestamp,
            metadata=None if metadata is NOT_SET else metadata,
            statuses=NOT_SET if status is NOT_SET else [status],
            ttl_days=ttl_days,
            ttl_anchor=ttl_anchor,
            **store_kwargs,
        )
        if link.wanted:
            spec = link_spec(
                new_memory,
                memory_type,
                target.id,
                target.record_type,
                link.link_type,
                relation_id=link.link_id,
                timestamp=link.timestamp,
                metadata=link.metadata,
            )
            store.add_relations([spec], thread_id=link_thread_id)
    return new_memory


def update_memory_record(store: MemoryStore, record: MemoryRecord, **changes: Any) -> str:
    """The update shared by Thread.update_memory and AgentMemory.update_memory."""
    if changes.get("content") is None:
        raise ValueError("a memory's content cannot be cleared; delete the memory instead")
    if store.update(record.record_type, record.id, **changes) == 0:
        raise KeyError(f"no memory {record.id!r}")
    return record.id


def add_image_record(
    store: MemoryStore,
    image: Any,
    limits: ImageInputLimitConfig,
    *,
    description: Any,
    mime_type: Any,
    image_id: Any,
    metadata: Any,
    timestamp: Any,
    ttl_days: Any,
    ttl_anchor: Any,
    scope: dict[str, Any],
    **store_kwargs: Any,
) -> str:
    """The write shared by Thread.add_image and AgentMemory.add_image."""
    checked = check_image(image, mime_type, limits)
    if description is not NOT_SET and description is not None and not isinstance(description, str):
        raise ValueError(f"description must be a string or None, not {type(description).__name__}")
    return store.add(
        ["" if description is NOT_SET or description is None else description],
        IMAGE_TYPE,
        record_ids=NOT_SET if image_id is NOT_SET else [image_id],
        thread_ids=scope["thread_id"],
        user_ids=scope["user_id"],
        agent_ids=scope["agent_id"],
        timestamps=None if timestamp is NOT_SET else timestamp,
        metadata=None if metadata is NOT_SET else metadata,
        ttl_days=ttl_days,
        ttl_anchor=ttl_anchor,
        images=[checked],
        **store_kwargs,
    )[0]


def update_image_record(
    store: MemoryStore,
    record: ImageRecord,
    limits: ImageInputLimitConfig,
    *,
    image: Any,
    description: Any,
    mime_type: Any,
    metadata: Any,
    timestamp: Any,
    ttl_days: Any,
    ttl_anchor: Any,
    expected_version: Any = NOT_SET,
) -> str:
    """The update shared by Thread.update_image and AgentMemory.update_image (spec §4.3.4)."""
    if image is not NOT_SET and mime_type is NOT_SET:
        raise ValueError("a new image needs its mime_type")
    if record.message_id is not None and (ttl_days is not NOT_SET or ttl_anchor is not NOT_SET):
        raise ValueError(f"image {record.id!r} is part of message {record.message_id!r}: change its lifetime there")
    changes: dict[str, Any] = {
        "metadata": metadata,
        "timestamp": timestamp,
        "ttl_days": ttl_days,
        "ttl_anchor": ttl_anchor,
        "expected_version": expected_version,
    }
    if image is not NOT_SET:
        changes["image"] = check_image(image, mime_type, limits)
    if description is not NOT_SET:
        if description is not None and not isinstance(description, str):
            raise ValueError(f"description must be a string or None, not {type(description).__name__}")
        changes["text"] = description or ""  # None asks an LLM for a caption; without one it is cleared
    if store.update(IMAGE_TYPE, record.id, **changes) == 0:
        raise KeyError(f"no image {record.id!r}")
    return record.id


def delete_image_record(store: MemoryStore, record: ImageRecord, *, expected_version: Any = NOT_SET) -> int:
    """The delete shared by Thread.delete_image and AgentMemory.delete_image (`expected_version`
    compared by the store inside the delete)."""
    if record.message_id is not None:
        raise ValueError(f"image {record.id!r} is part of message {record.message_id!r}: delete or edit the message")
    return store.delete(IMAGE_TYPE, record.id, expected_version=expected_version)


def list_image_records(
    store: MemoryStore,
    image_id: Any,
    metadata_filter: Any,
    include_bytes: Any,
    limit: Any,
    *,
    cursor: str | None = None,
    **scope: Any,
) -> Page:
    """Images in store order, a Page whose `next_cursor` continues it (a list, for the SDK)."""
    if check_bool("include_bytes", include_bytes) and image_id is NOT_SET:
        raise ValueError("include_bytes=True needs an image_id: bytes are loaded one image at a time")
    options: dict[str, Any] = {}
    if metadata_filter is not NOT_SET and metadata_filter is not None:  # None: no filter, as in searches (D8)
        options["metadata_filter"] = metadata_filter
    if image_id is not NOT_SET:
        options["record_id"] = image_id
    if limit is not NOT_SET:
        options["limit"] = limit
    return store.list(IMAGE_TYPE, include_bytes=include_bytes, cursor=cursor, **options, **scope)
