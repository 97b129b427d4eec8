"""Messages and their content parts, between the API's shapes and the stored rows (spec §9).

A message is a string or an ordered sequence of text and image parts. It is stored as its text
(what gets indexed), a JSON list describing its parts in order, and one image record per image
part, whose id is the part's id and whose `message_id` ties it to the message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .images import CheckedImage, check_image
from .ttl import normalize_timestamp
from .types import (
    NOT_SET,
    ImageContent,
    ImageInputLimitConfig,
    ImageRecord,
    Message,
    MessageContent,
    MessageRecord,
    TextContent,
)

_MESSAGE_KEYS = {"role", "content", "id", "timestamp", "metadata"}
_TEXT_KEYS = {"type", "text", "id", "timestamp"}
_IMAGE_KEYS = {"type", "bytes", "mime_type", "description", "id", "timestamp"}


def part_from_mapping(part: Any, where: str) -> MessageContent:
    """A content part from a TextContent/ImageContent or a mapping with a "type" of text or image."""
    if isinstance(part, (TextContent, ImageContent)):
        return part
    if not isinstance(part, Mapping):
        raise ValueError(f"{where} must be a TextContent, ImageContent or a mapping, not {type(part).__name__}")
    kind = part.get("type", "text" if "text" in part else None)
    allowed = {"text": _TEXT_KEYS, "image": _IMAGE_KEYS}.get(kind)
    if allowed is None:
        raise ValueError(f"{where}: a content part's type is 'text' or 'image', not {kind!r}")
    extra = set(part) - allowed
    if extra:
        raise ValueError(f"{where}: unknown keys {sorted(extra)} in an {kind} part")
    options = {key: part[key] for key in ("id", "timestamp") if part.get(key) is not None}
    if kind == "text":
        return TextContent(text=part.get("text"), **options)
    return ImageContent(
        bytes=part.get("bytes"), mime_type=part.get("mime_type"), description=part.get("description"), **options
    )


def content_from(content: Any, where: str) -> str | tuple[MessageContent, ...]:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, (bytes, bytearray)):
        if not content:
            raise ValueError(f"{where} must not be an empty sequence")
        return tuple(part_from_mapping(part, f"{where}[{i}]") for i, part in enumerate(content))
    raise ValueError(f"{where} must be a string or a sequence of content parts, not {type(content).__name__}")


def to_message(message: Any, index: int = 0) -> Message:
    """A Message from a Message or a mapping with role, content and optional id/timestamp/metadata."""
    if isinstance(message, Message):
        return Message(
            message.role,
            content_from(message.content, f"messages[{index}].content"),
            message.timestamp,
            message.metadata,
            message.id,
        )
    if not isinstance(message, Mapping):
        raise ValueError(f"messages[{index}] must be a Message or a mapping, not {type(message).__name__}")
    unknown = set(message) - _MESSAGE_KEYS
    if unknown:
        raise ValueError(f"messages[{index}] has unknown keys {sorted(unknown)}; allowed: {sorted(_MESSAGE_KEYS)}")
    if "role" not in message or "content" not in message:
        raise ValueError(f"messages[{index}] needs 'role' and 'content'")
    content = message["content"]
    return Message(
        role=message["role"],
        content=content_from("" if content is None else content, f"messages[{index}].content"),
        timestamp=message.get("timestamp"),
        metadata=message.get("metadata"),
        id=message.get("id"),
    )


@dataclass
class StoredContent:
    """A message's content as stored: its text, its parts in order, and the images to add."""

    text: str
    parts: list[dict[str, Any]] | None
    new_images: list[tuple[ImageContent, CheckedImage]] = field(default_factory=list)

    @property
    def image_ids(self) -> list[str]:
        return [part["id"] for part in self.parts or () if part["type"] == "image"]


def stored_content(
    content: str | tuple[MessageContent, ...], limits: ImageInputLimitConfig, kept_image_ids: frozenset = frozenset()
) -> StoredContent:
    """Check a message's content (every image is validated here, before anything is stored).

    An image part carries its bytes, except one that keeps an image the message already has
    (`kept_image_ids`, when a message is edited).
    """
    if isinstance(content, str):
        return StoredContent(content, None)
    parts, texts, new_images = [], [], []
    for part in content:
        if isinstance(part, TextContent):
            parts.append({"type": "text", "id": part.id, "text": part.text, "timestamp": _part_time(part)})
            texts.append(part.text)
            continue
        if part.id in kept_image_ids:
            pass  # an image the message already has (perhaps read back with its bytes) stays as it is
        elif part.bytes is None:
            raise ValueError(f"image part {part.id!r} has no bytes; a new image needs them")
        else:
            mime = NOT_SET if part.mime_type is None else part.mime_type
            new_images.append((part, check_image(part.bytes, mime, limits)))
        parts.append({"type": "image", "id": part.id, "timestamp": _part_time(part)})
    return StoredContent("\n".join(texts), parts, new_images)


def _part_time(part: MessageContent) -> str | None:
    """A part's timestamp as stored: canonical UTC text, as every record's (a datetime included)."""
    return normalize_timestamp(part.timestamp, f"timestamp of part {part.id!r}")


def message_from_record(
    record: MessageRecord, images: Mapping[str, ImageRecord], image_bytes: Mapping[str, bytes]
) -> Message:
    """The API's Message for a stored message; image parts carry bytes only when loaded."""
    content: str | tuple[MessageContent, ...] = record.content
    if record.parts:
        built: list[MessageContent] = []
        for part in record.parts:
            if part["type"] == "text":
                built.append(TextContent(text=part["text"], id=part["id"], timestamp=part.get("timestamp")))
            elif part["id"] in images:
                image = images[part["id"]]
                built.append(
                    ImageContent(
                        id=image.id,
                        timestamp=part.get("timestamp"),
                        bytes=image_bytes.get(image.id),
                        mime_type=image.mime_type,
                        description=image.content or None,
                    )
                )
        content = tuple(built)
    return Message(
        role=record.role or "", content=content, timestamp=record.timestamp, metadata=record.metadata, id=record.id
    )
