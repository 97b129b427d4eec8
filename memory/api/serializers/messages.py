"""Messages: the record with its parts, and the bodies that append (text and image parts, base64) and edit."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memory.api.serializers.common import (
    ID_MAX_LENGTH,
    BodySerializer,
    MessageRoleField,
    ScopedSerializer,
    TextField,
    TimestampField,
    id_field,
    time_field,
)
from memory.engine import (
    MAX_CONTENT_CHARS,
    ImageMimeType,
)

MAX_BATCH = 500
"""Messages one POST may add."""


MAX_PARTS = 100
"""Content parts of one message."""


PART_TYPES = ("text", "image")


MIME_TYPES = tuple(member.value for member in ImageMimeType)


@extend_schema_field(OpenApiTypes.BYTE)
class Base64BytesField(serializers.Field):
    """Bytes as base64 text (RFC 4648, with padding)."""

    def to_internal_value(self, data: Any) -> bytes:
        if not isinstance(data, str):
            raise serializers.ValidationError("Give base64 text.")
        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError) as error:
            raise serializers.ValidationError(f"Not valid base64: {str(error).rstrip('.')}.") from None

    def to_representation(self, value: bytes) -> str:
        return base64.b64encode(value).decode("ascii")


class MessagePartSerializer(serializers.Serializer):
    """One part of a message's content, in order: a text, or an image (the image record of its id)."""

    type = serializers.ChoiceField(choices=PART_TYPES)
    id = serializers.CharField()
    timestamp = time_field("The part's own time, if it has one.")
    text = serializers.CharField(allow_null=True, allow_blank=True, help_text="A text part's text; null for an image.")
    mime_type = serializers.ChoiceField(
        choices=MIME_TYPES, allow_null=True, help_text="An image's type, read from its bytes; null for a text."
    )
    description = serializers.CharField(
        allow_null=True, allow_blank=True, help_text="An image's description (its searchable text); null for a text."
    )
    bytes = Base64BytesField(required=False, help_text="An image's bytes, base64; only with include_image_bytes=true.")


class MessageSerializer(ScopedSerializer):
    """A stored message: `content` is its text (its text parts joined by newlines); `parts`, for a
    message of text and image parts, lists them in order."""

    role = serializers.CharField()
    seq_no = serializers.IntegerField(help_text="Its sequence number in the thread: the order of its messages.")
    parts = MessagePartSerializer(many=True, allow_null=True, help_text="null: a message of plain text.")


PART_SCHEMA = {
    "type": "object",
    "description": "A text part (`text`) or an image part (`type: image`, `bytes` in base64; the engine reads "
    "its type from them, checks it against `mime_type` if given, and refuses an image over its limits).",
    "properties": {
        "type": {"type": "string", "enum": list(PART_TYPES), "description": "Default: text."},
        "text": {"type": "string", "description": "A text part's text."},
        "bytes": {"type": "string", "format": "byte", "description": "An image's bytes, base64."},
        "mime_type": {"type": "string", "description": "image/png, image/jpeg or image/webp (any case); optional."},
        "description": {"type": "string", "nullable": True, "description": "An image's description."},
        "id": {
            "type": "string",
            "maxLength": ID_MAX_LENGTH,
            "description": "The part's id; an image's is its record's.",
        },
        "timestamp": {"type": "string", "nullable": True, "description": "ISO 8601."},
    },
    "additionalProperties": False,
}


class ContentPartInputSerializer(BodySerializer):
    type = serializers.ChoiceField(choices=PART_TYPES, required=False)
    text = TextField(required=False, allow_blank=True, trim_whitespace=False, max_length=MAX_CONTENT_CHARS)
    bytes = Base64BytesField(required=False)
    mime_type = TextField(required=False, max_length=32)
    description = TextField(
        required=False, allow_null=True, allow_blank=True, trim_whitespace=False, max_length=MAX_CONTENT_CHARS
    )
    id = id_field(required=False)
    timestamp = TimestampField(required=False, allow_null=True)

    def validate_mime_type(self, value: str) -> str:
        if ImageMimeType._missing_(value) is None:
            raise serializers.ValidationError(f"Use one of {', '.join(MIME_TYPES)}.")
        return value

    def validate(self, data: dict) -> dict:
        kind = data.get("type") or ("text" if "text" in data else None)
        if kind is None:
            raise serializers.ValidationError({"type": ["Say `text` or `image` (or give `text`)."]})
        other = ("bytes", "mime_type", "description") if kind == "text" else ("text",)
        misplaced = {name: [f"Not a field of a {kind} part."] for name in other if name in data}
        if misplaced:
            raise serializers.ValidationError(misplaced)
        if kind == "text" and "text" not in data:
            raise serializers.ValidationError({"text": ["A text part needs its text."]})
        if kind == "image" and "bytes" not in data:
            raise serializers.ValidationError({"bytes": ["A new image needs its bytes."]})
        return {**data, "type": kind}


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "description": "Plain text."},
            {"type": "array", "items": PART_SCHEMA, "minItems": 1, "maxItems": MAX_PARTS},
        ]
    }
)
class MessageContentField(serializers.Field):
    """A message's content as the engine takes it: a string, or a list of text and image parts."""

    def to_internal_value(self, data: Any) -> str | list[dict]:
        if isinstance(data, str):  # checked as a text part's text is
            return TextField(allow_blank=True, trim_whitespace=False, max_length=MAX_CONTENT_CHARS).run_validation(data)
        if not isinstance(data, list):
            raise serializers.ValidationError("Give a string or a list of content parts.")
        if not data or len(data) > MAX_PARTS:
            raise serializers.ValidationError(f"Give from 1 to {MAX_PARTS} content parts.")
        parts, errors = [], []
        for item in data:
            part = ContentPartInputSerializer(data=item)
            valid = part.is_valid()
            errors.append({} if valid else part.errors)
            parts.append(part.validated_data if valid else None)
        if any(errors):
            raise serializers.ValidationError(errors)
        return parts

    def to_representation(self, value: Any) -> Any:
        return value


class MessageInputSerializer(BodySerializer):
    role = MessageRoleField(help_text="Who said it: user (the person), assistant (the agent), system or tool.")
    content = MessageContentField()
    id = id_field(required=False, help_text="Its id; default: a new one. 409 if taken.")
    timestamp = TimestampField(required=False, allow_null=True, help_text="When it was said, ISO 8601; default: now.")
    metadata = serializers.DictField(required=False, allow_null=True)


class MessageBatchSerializer(BodySerializer):
    messages = MessageInputSerializer(
        many=True, allow_empty=False, max_length=MAX_BATCH, help_text=f"From 1 to {MAX_BATCH} messages, in order."
    )


class MessageBatchResultSerializer(serializers.Serializer):
    messages = MessageSerializer(many=True, help_text="The messages as stored, in the order given.")


class MessageUpdateSerializer(BodySerializer):
    """A partial update: the fields given are written, the others kept."""

    content = TextField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        max_length=MAX_CONTENT_CHARS,
        help_text="The new text. A message with image parts keeps its images: the text replaces its text parts.",
    )
    role = MessageRoleField(
        required=False,
        help_text="One of the roles; a message stored with another role may send it unchanged.",
    )
    metadata = serializers.DictField(required=False, allow_null=True, help_text="Replaces the metadata; null: none.")
    timestamp = TimestampField(required=False, help_text="When it was said, ISO 8601.")

    def validate(self, data: dict) -> dict:
        if not data:
            raise serializers.ValidationError("Give at least one field to change.")
        return data
