"""The API's JSON: the engine's records under the engine's names, and the bodies writes accept.

Output serializers read the engine's record dataclasses; they also give the OpenAPI schema its
typed responses, so what is documented is what is sent. Times are ISO 8601 strings in UTC, as the
engine stores them.
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import QueryDict
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from memory.engine import (
    BUILTIN_RELATIONS,
    MAX_CONTENT_CHARS,
    MEMORY_TYPES,
    SEARCHABLE_TYPES,
    ImageMimeType,
    SearchStrategy,
    check_id_text,
    normalize_timestamp,
    parse_filter,
)
from memory.models import Action, ObjectKind
from memory.templatetags.oam import path_to
from memory.web.fields import JSONObjectField, check_relation_label, search_problems

STATUSES = ("valid", "invalid")
ID_MAX = 512


# What the API accepts is what its schema documents: DRF's fields take more (0 for "0", "7" for
# 7, "yes" or 1 for true), which a client generated from the schema would never send and a
# hand-written one should not rely on. A form body (multipart: an upload) is all text, so there a
# number or a flag is read from its text.


def sent_as_form(field: serializers.Field) -> bool:
    return isinstance(getattr(field.root, "initial_data", None), QueryDict)


class TextField(serializers.CharField):
    """Text, and only text: a JSON number or boolean where the schema says string is a 400 (DRF's
    CharField would store 0 as "0")."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class WholeNumberField(serializers.IntegerField):
    """A JSON integer, not a string of digits or a boolean (DRF's IntegerField takes "7" and
    true); in a form, "7" is the number."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not (isinstance(data, int) or (sent_as_form(self) and isinstance(data, str))):
            self.fail("invalid")
        return super().to_internal_value(data)


class FlagField(serializers.BooleanField):
    """A JSON true or false (DRF's BooleanField takes 0, 1, "yes", "on"…); in a form, "true"."""

    def to_internal_value(self, data: Any) -> bool:
        if not (isinstance(data, bool) or sent_as_form(self)):
            self.fail("invalid")
        return super().to_internal_value(data)


def engine_id(value: str) -> None:
    """The engine's rules for ids, roles and link types beyond a length in characters
    (limits.check_id_text): at most 512 bytes in UTF-8, valid Unicode, no control characters or
    line breaks, no whitespace at either end."""
    try:
        check_id_text("This", value)
    except ValueError as error:
        raise serializers.ValidationError(f"{error}.") from None


def id_field(**kwargs: Any) -> serializers.CharField:
    """An id (or a message's role, or a link type): text the engine takes as one, else a 400 under
    its name. Not trimmed (DRF's default): " a" would become "a", another id, without a word; the
    engine's rule refuses it instead."""
    return TextField(max_length=ID_MAX, trim_whitespace=False, validators=[engine_id], **kwargs)


class TimestampField(TextField):
    """An ISO 8601 time, as the engine stores it (canonical UTC), or the engine's message as a 400."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_length=64, **kwargs)

    def to_internal_value(self, data: Any) -> str | None:
        try:
            return normalize_timestamp(super().to_internal_value(data))
        except ValueError as error:
            raise serializers.ValidationError(str(error)) from None


def scope_field(what: str) -> serializers.CharField:
    return id_field(required=False, allow_null=True, help_text=f"The {what}'s id; null: none.")


def time_field(help_text: str, **kwargs) -> serializers.CharField:
    return TextField(allow_null=True, help_text=f"{help_text} ISO 8601, UTC.", **kwargs)


FORM_ONLY = {"csrfmiddlewaretoken"}
"""What a form body carries beside its fields: the CSRF token of the browsable API's forms."""


class BodySerializer(serializers.Serializer):
    """A request body, or an object inside one. A key it does not know is a 400 under that key
    (DRF would drop it silently, and a typo, "contents" or "memory_typ", would make a request that
    seems to work and does not do what was meant); its schema says so (BodySchema)."""

    def to_internal_value(self, data: Any) -> dict:
        if isinstance(data, dict | QueryDict):
            unknown = sorted(set(data) - set(self.fields) - (FORM_ONLY if isinstance(data, QueryDict) else set()))
            if unknown:
                known = ", ".join(self.fields)
                raise serializers.ValidationError(
                    {name: [f"Unknown field; the fields are {known}."] for name in unknown}
                )
        return super().to_internal_value(data)


class BodySchema(OpenApiSerializerExtension):
    """A BodySerializer's schema says what it refuses: no property but its fields
    (`additionalProperties: false`), so that a client generated from it never sends one."""

    target_class = BodySerializer
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        return {**schema, "additionalProperties": False}


class ErrorSerializer(serializers.Serializer):
    """Every error's body."""

    detail = serializers.CharField(help_text="What went wrong, for a person.")
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="With a 400: the messages per field or parameter (`non_field_errors`: the request as a whole).",
    )


class RecordSerializer(serializers.Serializer):
    """What every stored record has."""

    id = serializers.CharField()
    content = serializers.CharField(allow_blank=True)
    metadata = serializers.DictField(allow_null=True)
    status = serializers.ChoiceField(choices=STATUSES, help_text="invalid: retired by hand or by a link.")
    timestamp = time_field("When it happened.")
    created_at = time_field("When it was stored.")
    expires_at = time_field("When it expires; null: never.")
    version = serializers.IntegerField(help_text="Goes up with every change; the ETag of a single-record GET.")


class ScopedSerializer(RecordSerializer):
    user_id = serializers.CharField(allow_null=True)
    agent_id = serializers.CharField(allow_null=True)
    thread_id = serializers.CharField(allow_null=True)


class MemorySerializer(ScopedSerializer):
    memory_type = serializers.ChoiceField(choices=MEMORY_TYPES, source="record_type")


class MemoryCreateSerializer(BodySerializer):
    content = TextField(help_text="The memory's text.")
    memory_type = serializers.ChoiceField(choices=MEMORY_TYPES, required=False, help_text="Default: memory.")
    id = id_field(required=False, help_text="Its id; default: a new one. 409 if taken.")
    user_id = scope_field("user")
    agent_id = scope_field("agent")
    thread_id = scope_field("thread (it must exist; gives its user and agent when none is given)")
    metadata = serializers.DictField(required=False, allow_null=True)
    timestamp = TextField(required=False, allow_null=True, help_text="When it happened, ISO 8601.")
    ttl_days = WholeNumberField(required=False, min_value=1, help_text="Expires this many days after.")
    status = serializers.ChoiceField(choices=STATUSES, required=False)


class MemoryUpdateSerializer(BodySerializer):
    """A partial update: the fields given are written, the others kept."""

    content = TextField(required=False)
    memory_type = serializers.ChoiceField(choices=MEMORY_TYPES, required=False)
    user_id = scope_field("user")
    agent_id = scope_field("agent")
    metadata = serializers.DictField(required=False, allow_null=True)
    timestamp = TextField(required=False, help_text="When it happened, ISO 8601.")
    status = serializers.ChoiceField(choices=STATUSES, required=False)
    expires_at = TextField(required=False, allow_null=True, help_text="ISO 8601; null: never.")
    ttl_days = WholeNumberField(required=False, min_value=1, help_text="A new lifetime, counted from its creation.")

    def validate(self, data: dict) -> dict:
        if "expires_at" in data and "ttl_days" in data:
            raise serializers.ValidationError({"ttl_days": ["Give expires_at or ttl_days, not both."]})
        if not data:
            raise serializers.ValidationError("Give at least one field to change.")
        return data


def page_of(item: type[serializers.Serializer], name: str) -> type[serializers.Serializer]:
    """The serializer of a page of `item`s: `{"results": [...], "next": URL or null}`."""
    return type(
        name,
        (serializers.Serializer,),
        {
            "results": item(many=True),
            "next": serializers.URLField(allow_null=True, help_text="The next page; null on the last."),
            "__doc__": f"A page of {item.__name__.removesuffix('Serializer').lower()} records.",
        },
    )


# --- threads, their messages, context cards and summaries -------------------------------------

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


class ThreadSerializer(serializers.Serializer):
    """A thread: its scope, metadata, activity and the summary its LLM keeps."""

    id = serializers.CharField()
    user_id = serializers.CharField(allow_null=True)
    agent_id = serializers.CharField(allow_null=True)
    metadata = serializers.DictField(allow_null=True)
    created_at = time_field("When it was created.")
    updated_at = time_field("Its latest activity.")
    message_count = serializers.IntegerField(help_text="Its live messages.")
    summary = serializers.CharField(allow_null=True, help_text="The summary its LLM keeps; null: none yet.")
    topics = serializers.ListField(child=serializers.CharField(), allow_null=True)
    version = serializers.IntegerField(
        help_text="Goes up with every change of its metadata, summary or settings; the ETag of a thread's GET."
    )


class ThreadCreateSerializer(BodySerializer):
    id = id_field(required=False, help_text="Its id; default: a new one. 409 if taken.")
    user_id = id_field(
        required=False, allow_null=True, help_text="The user's id; omitted: a new one, as the engine makes; null: none."
    )
    agent_id = id_field(
        required=False,
        allow_null=True,
        help_text="The agent's id; omitted: a new one, as the engine makes; null: none.",
    )
    metadata = serializers.DictField(required=False, allow_null=True)


class ThreadUpdateSerializer(BodySerializer):
    metadata = serializers.DictField(allow_null=True, help_text="Replaces the metadata (no merge); null: none.")


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
        "id": {"type": "string", "maxLength": ID_MAX, "description": "The part's id; an image's is its record's."},
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
    role = id_field(help_text='Who said it: "user", "assistant", "system", "tool"…')
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
    role = id_field(required=False)
    metadata = serializers.DictField(required=False, allow_null=True, help_text="Replaces the metadata; null: none.")
    timestamp = TimestampField(required=False, help_text="When it was said, ISO 8601.")

    def validate(self, data: dict) -> dict:
        if not data:
            raise serializers.ValidationError("Give at least one field to change.")
        return data


@extend_schema_field(OpenApiTypes.NUMBER)
class NumberField(serializers.Field):
    """An int or a float, sent as it is."""

    def to_representation(self, value: Any) -> Any:
        return value


class CardResultSerializer(serializers.Serializer):
    """A record the card chose, in card order, with how it ranked."""

    rank = serializers.IntegerField(help_text="Its place in the card's relevant information, from 1.")
    id = serializers.CharField()
    record_type = serializers.CharField(help_text="message, memory, fact, guideline or preference.")
    content = serializers.CharField(allow_blank=True)
    status = serializers.ChoiceField(choices=STATUSES)
    timestamp = time_field("When it happened.")
    user_id = serializers.CharField(allow_null=True)
    agent_id = serializers.CharField(allow_null=True)
    thread_id = serializers.CharField(allow_null=True)
    metadata = serializers.DictField(allow_null=True)
    distance = serializers.FloatField(help_text="Smaller is closer.")
    scores = serializers.DictField(
        child=NumberField(),
        help_text="How it ranked: vector_rank, vector_distance, keyword_rank, keyword_score, score (hybrid).",
    )
    formatted_content = serializers.CharField(help_text="The result as the card shows it.")
    tokens = serializers.IntegerField(help_text="The engine's token estimate of formatted_content.")


class CardMessageSerializer(serializers.Serializer):
    """A recent message as the card shows it: its text."""

    id = serializers.CharField()
    role = serializers.CharField()
    content = serializers.CharField(allow_blank=True, help_text="Its text (text parts joined by newlines).")
    timestamp = time_field("When it was said.")
    metadata = serializers.DictField(allow_null=True)


class CardTokensSerializer(serializers.Serializer):
    """The engine's token estimate (about 3.5 characters a token) of the card and of each section."""

    card = serializers.IntegerField()
    summary = serializers.IntegerField()
    topics = serializers.IntegerField()
    relevant_results = serializers.IntegerField()
    recent_messages = serializers.IntegerField()


class ContextCardSerializer(serializers.Serializer):
    """A thread's context card: the text an agent puts in its prompt, and its parts."""

    thread_id = serializers.CharField()
    content = serializers.CharField(allow_blank=True, help_text="The card as the agent gets it: its sections.")
    summary = serializers.CharField(allow_blank=True, help_text="The stored summary, else a transcript.")
    topics = serializers.ListField(child=serializers.CharField(), allow_null=True)
    relevant_results = CardResultSerializer(many=True)
    recent_messages = CardMessageSerializer(many=True)
    tokens = CardTokensSerializer()
    as_of_message_id = serializers.CharField(allow_null=True, help_text="The message the card is taken as of.")
    messages_due_for_summary = serializers.IntegerField(
        help_text="Messages the agent's next card will first fold into the summary (0: none): this card, "
        "a read, did not refresh it."
    )


SUMMARY_SOURCES = {
    "llm": "the summary the thread's LLM keeps",
    "transcript": "no summary is stored: a transcript of the latest messages, as the card uses",
    "none": "nothing to summarise",
}


class ThreadSummarySerializer(serializers.Serializer):
    """A thread's summary as its context card uses it, read without refreshing it."""

    thread_id = serializers.CharField()
    summary = serializers.CharField(allow_blank=True)
    topics = serializers.ListField(child=serializers.CharField(), allow_null=True)
    source = serializers.ChoiceField(
        choices=list(SUMMARY_SOURCES), help_text="; ".join(f"{key}: {text}" for key, text in SUMMARY_SOURCES.items())
    )
    summarized_through = serializers.IntegerField(
        help_text="The seq_no of the last message the stored summary covers; -1: none."
    )
    messages_due_for_summary = serializers.IntegerField(
        help_text="Messages the agent's next card or summary will first fold in by asking the LLM (0: none due)."
    )


class SummaryRefreshSerializer(ThreadSummarySerializer):
    refreshed = serializers.BooleanField(
        help_text="false: no message came since the last summary; the LLM was not asked and nothing changed."
    )


# --- images, links, users and agents, store counts, graph data ----------------------------------

IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp")


class ImageSerializer(ScopedSerializer):
    """An image record: its description is its searchable text; the bytes are at `content_url`."""

    content = None
    description = serializers.CharField(source="content", allow_blank=True, help_text="The searchable text.")
    message_id = serializers.CharField(
        allow_null=True, help_text="The message it is part of (it goes with the message); null: standalone."
    )
    mime_type = serializers.SerializerMethodField(help_text="The stored content type of its bytes.")
    content_url = serializers.SerializerMethodField(help_text="Where its bytes are (GET, with their content type).")

    @extend_schema_field(serializers.ChoiceField(choices=IMAGE_TYPES))
    def get_mime_type(self, record: Any) -> str:
        return record.mime_type.value.lower()

    @extend_schema_field(OpenApiTypes.URI)
    def get_content_url(self, record: Any) -> str:
        path = path_to("api:image_content", record.id)
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


def json_object_text(value: Any) -> dict | None:
    """A JSON object sent as a form field's text (multipart has no JSON types): the dashboard's
    JSONObjectField parses it, with its messages."""
    if isinstance(value, dict):
        return value
    try:
        return JSONObjectField().clean(value)
    except DjangoValidationError as error:
        raise serializers.ValidationError(error.messages) from None


class ImageUploadSerializer(BodySerializer):
    """A multipart form. A field given empty is refused where the schema says it may not be empty
    (DRF would take it as not given: `-F thread_id=` from a script whose variable is unset would
    make an image of no thread, not an error)."""

    image = serializers.FileField(help_text="The image file: PNG, JPEG or WebP, within the store's limits.")
    thread_id = id_field(
        required=False, help_text="The thread it goes to (it must exist); its user and agent are the image's."
    )
    user_id = id_field(required=False, help_text="Without a thread: the user the image belongs to.")
    agent_id = id_field(required=False, help_text="Without a thread: the agent the image belongs to.")
    id = id_field(required=False, help_text="Its id; default: a new one. 409 if taken.")
    description = TextField(
        required=False,
        allow_blank=True,
        max_length=MAX_CONTENT_CHARS,
        help_text="Its searchable text; empty: the LLM describes it, if there is one.",
    )
    metadata = TextField(
        required=False, allow_blank=True, help_text='A JSON object, as text: {"source": "scan"}. Image records only.'
    )
    add_as = serializers.ChoiceField(
        choices=(("image", "a standalone image record"), ("message", "a new message of the thread with this image")),
        required=False,
        default="image",
        help_text="image (default): an image record; message: a new message of the thread holding it.",
    )
    role = id_field(required=False, default="user", help_text="With add_as=message: its role.")
    text = TextField(
        required=False, allow_blank=True, default="", help_text="With add_as=message: text sent with the image."
    )

    def to_internal_value(self, data: Any) -> dict:
        if isinstance(data, QueryDict):
            empty = [
                name
                for name, field in self.fields.items()
                if data.get(name) == "" and not getattr(field, "allow_blank", False)
            ]
            if empty:
                raise serializers.ValidationError(
                    {name: ["Empty: give a value, or leave the field out."] for name in empty}
                )
        return super().to_internal_value(data)

    def validate_metadata(self, value: str) -> dict | None:
        return json_object_text(value)

    def validate(self, data: dict) -> dict:
        if data.get("thread_id"):
            for name in ("user_id", "agent_id"):
                if data.get(name):
                    raise serializers.ValidationError({name: ["The thread gives the image its user and agent."]})
        elif data["add_as"] == "message":
            raise serializers.ValidationError({"thread_id": ["A message belongs to a thread: give its thread_id."]})
        return data


class ImageUpdateSerializer(BodySerializer):
    """A partial update: the fields given are written, the others kept."""

    description = TextField(
        required=False, allow_blank=True, max_length=MAX_CONTENT_CHARS, help_text="The searchable text."
    )
    metadata = serializers.DictField(required=False, allow_null=True, help_text="A JSON object; null: none.")

    def validate(self, data: dict) -> dict:
        if not data:
            raise serializers.ValidationError("Give at least one field to change.")
        return data


def relation_type_of(value: str, kept: str | None = None) -> str:
    """A relation type as the dashboard's link forms take it: a built-in mistyped is refused
    (memory.web.fields.check_relation_label); `kept`, the link's current type, passes as it is."""
    if value == kept:
        return value
    try:
        return check_relation_label(value)
    except DjangoValidationError as error:
        raise serializers.ValidationError(error.messages) from None


class LinkSerializer(serializers.Serializer):
    """A link between two memories, in its stored direction (source → target)."""

    id = serializers.CharField()
    source_record_id = serializers.CharField()
    source_record_type = serializers.ChoiceField(choices=MEMORY_TYPES)
    target_record_id = serializers.CharField()
    target_record_type = serializers.ChoiceField(choices=MEMORY_TYPES)
    relation_type = serializers.CharField(help_text="How it reads from source to target (supersedes, …).")
    opposite_relation_type = serializers.CharField(help_text="How it reads from target to source.")
    timestamp = time_field("When it was made.")
    metadata = serializers.DictField(allow_null=True)
    created_at = time_field("When it was stored.")
    version = serializers.IntegerField(help_text="Goes up with every change; the ETag of a single-link GET.")


class StatusChangeSerializer(serializers.Serializer):
    """A memory whose effective status the change turned from `before` to `after`."""

    id = serializers.CharField(source="memory.id")
    memory_type = serializers.ChoiceField(choices=MEMORY_TYPES, source="memory.record_type")
    content = serializers.CharField(source="memory.content")
    before = serializers.ChoiceField(choices=STATUSES)
    after = serializers.ChoiceField(choices=STATUSES)


class LinkChangeSerializer(LinkSerializer):
    status_changes = StatusChangeSerializer(
        many=True,
        help_text="The memories this change made valid or invalid (a supersedes, refines or duplicates link "
        "retires its target).",
    )


class LinkDeletedSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="The link deleted.")
    status_changes = StatusChangeSerializer(many=True, help_text="The memories its deletion made valid again.")


class LinkCreateSerializer(BodySerializer):
    source_record_id = id_field(help_text="The memory the link goes from.")
    target_record_id = id_field(help_text="The memory it goes to (a lifecycle type retires it).")
    relation_type = id_field(
        help_text="A built-in type (supersedes, refines, duplicates, supports, contradicts) or a label of your own.",
    )
    opposite_relation_type = id_field(
        required=False,
        allow_blank=True,
        allow_null=True,
        help_text="For a label of your own: how it reads from the target (default: the same label).",
    )
    metadata = serializers.DictField(required=False, allow_null=True)

    def validate_relation_type(self, value: str) -> str:
        return relation_type_of(value)

    def validate(self, data: dict) -> dict:
        relation_type, opposite = data["relation_type"], data.get("opposite_relation_type")
        fixed = BUILTIN_RELATIONS.get(relation_type)
        if opposite and fixed and opposite != fixed:
            raise serializers.ValidationError(
                {
                    "opposite_relation_type": [
                        f"{relation_type} is built in: it reads {fixed} backwards; leave this empty."
                    ]
                }
            )
        return data


class LinkUpdateSerializer(BodySerializer):
    """A partial update: the fields given are written, the others kept."""

    relation_type = id_field(required=False)
    opposite_relation_type = id_field(
        required=False,
        allow_blank=True,
        help_text="For a label of your own (a built-in type has its fixed opposite); empty: the same label.",
    )
    metadata = serializers.DictField(required=False, allow_null=True)

    def validate_relation_type(self, value: str) -> str:
        return relation_type_of(value, kept=self.context.get("relation_type"))

    def validate(self, data: dict) -> dict:
        if not data:
            raise serializers.ValidationError("Give at least one field to change.")
        return data


class ProfileSerializer(serializers.Serializer):
    information = serializers.CharField(source="content", allow_blank=True, help_text="The profile text; searchable.")
    version = serializers.IntegerField(help_text="The profile's version: the ETag of the user's or agent's GET.")


class OwnerCountsSerializer(serializers.Serializer):
    threads = serializers.IntegerField()
    messages = serializers.IntegerField(help_text="Live messages.")
    memories = serializers.IntegerField(help_text="Live memories.")


class OwnerSerializer(serializers.Serializer):
    """A user or agent: an id that owns a profile, a thread or a record."""

    id = serializers.CharField()
    profile = ProfileSerializer(allow_null=True, help_text="null: no profile stored.")
    counts = OwnerCountsSerializer()


class OwnerDetailCountsSerializer(OwnerCountsSerializer):
    images = serializers.IntegerField(help_text="Live images.")
    links = serializers.IntegerField(help_text="Links touching their memories.")
    expired = serializers.IntegerField(help_text="Records past their expiry, awaiting purge.")
    memory_types = serializers.DictField(child=serializers.IntegerField(), help_text="Live memories by type.")


class OwnerDetailSerializer(OwnerSerializer):
    counts = OwnerDetailCountsSerializer(help_text="What they own: what deleting them removes.")


class ProfileWriteSerializer(BodySerializer):
    information = TextField(
        allow_blank=True, trim_whitespace=False, max_length=MAX_CONTENT_CHARS, help_text="The profile text."
    )


class DayCountSerializer(serializers.Serializer):
    day = serializers.CharField(help_text="A UTC day, YYYY-MM-DD.")
    kind = serializers.ChoiceField(choices=("message", "memory"))
    count = serializers.IntegerField()


class StatusCountsSerializer(serializers.Serializer):
    valid = serializers.IntegerField()
    invalid = serializers.IntegerField()
    expired = serializers.IntegerField(help_text="Past their expiry, awaiting purge (whatever their status).")


class StatsSerializer(serializers.Serializer):
    """Counts of the store, or of what one thread, user or agent holds."""

    records = serializers.DictField(child=StatusCountsSerializer(), help_text="Per record type.")
    links = serializers.DictField(child=serializers.IntegerField(), help_text="Links per relation type.")
    threads = serializers.IntegerField()
    users = serializers.IntegerField()
    agents = serializers.IntegerField()
    messages = serializers.IntegerField(help_text="Live messages.")
    memories = serializers.IntegerField(help_text="Live memories of the four memory types.")
    images = serializers.IntegerField(help_text="Live images.")
    expired = serializers.IntegerField(help_text="Records past their expiry, awaiting purge.")
    link_count = serializers.IntegerField(help_text="Links in all.")
    by_day = DayCountSerializer(many=True, help_text="Live messages and memories per UTC day of their event time.")
    backend = serializers.CharField()
    embedder = serializers.CharField()
    vector_dim = serializers.IntegerField()
    schema_version = serializers.IntegerField()


class GraphNodeSerializer(serializers.Serializer):
    id = serializers.CharField()
    memory_type = serializers.ChoiceField(choices=MEMORY_TYPES)
    status = serializers.ChoiceField(choices=STATUSES)
    content = serializers.CharField(allow_blank=True, help_text="Its text, cut to 200 characters.")
    user_id = serializers.CharField(allow_null=True)
    agent_id = serializers.CharField(allow_null=True)
    thread_id = serializers.CharField(allow_null=True)
    degree = serializers.IntegerField(help_text="Its edges in this graph.")
    x = serializers.FloatField(help_text="Its position, laid out on the server.")
    y = serializers.FloatField()


class GraphEdgeSerializer(serializers.Serializer):
    id = serializers.CharField()
    source = serializers.CharField(help_text="The source memory's id.")
    target = serializers.CharField(help_text="The target memory's id.")
    relation_type = serializers.CharField()
    opposite_relation_type = serializers.CharField()


class GraphSerializer(serializers.Serializer):
    """Memories (nodes) and the links among them (edges, source → target)."""

    nodes = GraphNodeSerializer(many=True)
    edges = GraphEdgeSerializer(many=True)
    truncated = serializers.BooleanField(help_text="Whether max_nodes cut it (the most linked nodes are kept).")
    total_nodes = serializers.IntegerField(help_text="Nodes of the whole graph.")
    total_edges = serializers.IntegerField(help_text="Edges of the whole graph.")
    max_nodes = serializers.IntegerField()
    ideal_length = serializers.FloatField(help_text="The length a link settles near in the layout.")


# --- search (/api/v1/search/) ----------------------------------------------------------------


class FiniteFloatField(serializers.FloatField):
    """A float that JSON can carry: NaN or infinity (a linked result has no distance) is null."""

    def to_representation(self, value: Any) -> float | None:
        number = float(value)
        return number if math.isfinite(number) else None


class SearchFormatConfigSerializer(BodySerializer):
    """SearchResultFormatConfig: which parts of a result the formatted content shows. An option
    left out takes the engine's default."""

    show_timestamp = FlagField(required=False, help_text="Default: shown.")
    show_role = FlagField(required=False, help_text="A message's role. Default: shown.")
    show_status = FlagField(required=False, help_text="valid or invalid. Default: shown.")
    show_distance = FlagField(required=False, help_text="Default: hidden.")
    show_thread_id = FlagField(required=False, help_text="Default: hidden.")
    show_user_id = FlagField(required=False, help_text="Default: hidden.")
    show_agent_id = FlagField(required=False, help_text="Default: hidden.")
    show_metadata = FlagField(required=False, help_text="Default: hidden.")
    include_invalid_results = FlagField(
        required=False,
        help_text="Invalid linked memories in full; false: only as connectors to valid ones. Default: the search's.",
    )


@extend_schema_serializer(component_name="Search")
class SearchRequestSerializer(BodySerializer):
    """Every parameter of AgentMemory.search (and Thread.search), under the engine's names; the
    rules the dashboard's search form applies to them taken together (memory.web.fields.search_problems)."""

    query = TextField(max_length=10_000, help_text="What to search for.")
    layer = serializers.ChoiceField(
        choices=["client", "thread"],
        required=False,
        help_text="Search as the client (AgentMemory.search, the default: `user_id` required) or as the thread "
        "`thread_id` names (Thread.search: its user and agent by default).",
    )
    user_id = scope_field("user (a client search requires it; null: records without a user)")
    agent_id = scope_field("agent (null with exact_agent_match: records without an agent)")
    thread_id = scope_field("thread (with layer=thread: the thread searched as)")
    exact_user_match = FlagField(required=False, help_text="Client: always true.")
    exact_agent_match = FlagField(required=False, help_text="Default: client no; thread yes.")
    exact_thread_match = FlagField(required=False, help_text="Default: no.")
    unscoped = serializers.ListField(
        child=serializers.ChoiceField(choices=["user_id", "agent_id", "thread_id"]),
        required=False,
        help_text="Dimensions searched for records without one: as the id null with its exact_*_match true.",
    )
    record_types = serializers.ListField(
        child=serializers.ChoiceField(choices=SEARCHABLE_TYPES),
        required=False,
        allow_null=True,
        allow_empty=False,
        help_text="Default (or null): every type.",
    )
    metadata_filter = serializers.DictField(
        required=False, allow_null=True, help_text='The engine\'s filter, e.g. {"tags": {"$array_contains": "diet"}}.'
    )
    max_results = WholeNumberField(required=False, min_value=1, max_value=1000, help_text="Default 10.")
    token_budget = WholeNumberField(
        required=False, allow_null=True, min_value=1, help_text="Hard: results past it are dropped. Null: none."
    )
    soft_token_budget = WholeNumberField(
        required=False, allow_null=True, min_value=1, help_text="Stops after the result that reaches it. Null: none."
    )
    num_hops = WholeNumberField(
        required=False, min_value=0, max_value=5, help_text="Linked memories up to this many links away. Default 0."
    )
    max_linked_results = WholeNumberField(required=False, min_value=0, help_text="Default 100.")
    include_invalid_results = FlagField(required=False, help_text="Default: yes, kept as history.")
    strategy = serializers.ChoiceField(
        choices=[strategy.value for strategy in SearchStrategy],
        required=False,
        help_text="How this search ranks. Default: the store's.",
    )
    formatted = FlagField(
        default=False, help_text="Also answer each result as an agent receives it, with its token count."
    )
    format_config = SearchFormatConfigSerializer(required=False, help_text="With formatted: what the text shows.")

    def validate_metadata_filter(self, value: dict | None) -> dict | None:
        if value is not None:
            try:
                parse_filter(value)
            except (ValueError, RecursionError) as error:
                raise serializers.ValidationError(str(error)) from None
        return value

    def validate(self, data: dict) -> dict:
        problems: dict[str, list[str]] = {}
        for field, message in search_problems(data, choose="ask for"):
            problems.setdefault(field, []).append(message)
        if "format_config" in data and not data.get("formatted"):
            problems.setdefault("format_config", []).append("Ask for the formatted content with formatted: true.")
        if problems:
            raise serializers.ValidationError(problems)
        return data


class SearchScoresSerializer(serializers.Serializer):
    """How a result ranked, in each ranking it appeared in (null: not in that one)."""

    vector_rank = serializers.IntegerField(allow_null=True, help_text="Its rank by vector distance, from 1.")
    vector_distance = FiniteFloatField(allow_null=True, help_text="Its vector distance to the query.")
    keyword_rank = serializers.IntegerField(allow_null=True, help_text="Its rank by keyword match, from 1.")
    keyword_score = FiniteFloatField(allow_null=True, help_text="Its BM25 keyword score.")
    score = FiniteFloatField(allow_null=True, help_text="The fused score of a hybrid search.")


class SearchRecordSerializer(ScopedSerializer):
    """A found record of any type; the fields of other types are null (a profile has no scope)."""

    record_type = serializers.ChoiceField(choices=SEARCHABLE_TYPES)
    user_id = serializers.CharField(allow_null=True)
    agent_id = serializers.CharField(allow_null=True)
    thread_id = serializers.CharField(allow_null=True)
    role = serializers.CharField(allow_null=True, help_text="A message's role.")
    seq_no = serializers.IntegerField(allow_null=True, help_text="A message's place in its thread.")
    message_id = serializers.CharField(allow_null=True, help_text="An image's message, if it came in one.")
    mime_type = serializers.CharField(allow_null=True, help_text="An image's type.")


class SearchLinkSerializer(serializers.Serializer):
    """A link of the tree, in its stored direction (source → target)."""

    id = serializers.CharField()
    source_record_id = serializers.CharField()
    source_record_type = serializers.CharField()
    target_record_id = serializers.CharField()
    target_record_type = serializers.CharField()
    relation_type = serializers.CharField(help_text="As read from the source.")
    opposite_relation_type = serializers.CharField(help_text="As read from the target.")
    metadata = serializers.DictField(allow_null=True)
    timestamp = time_field("When it was made.")
    created_at = time_field("When it was stored.")
    version = serializers.IntegerField()


class SearchResultSerializer(serializers.Serializer):
    """A ranked record and the memories linked to it. `formatted_content` and `tokens` with
    `formatted: true` only (null otherwise, and in linked results)."""

    id = serializers.CharField()
    distance = FiniteFloatField(
        allow_null=True,
        help_text="0 best: the vector distance (vector), 1 - fused score / best possible (hybrid), growing with "
        "the rank (keyword). A linked memory's: its vector distance to the query (null if it has none).",
    )
    scores = SearchScoresSerializer()
    record = SearchRecordSerializer()
    formatted_content = serializers.CharField(
        allow_null=True, help_text="The result and its linked memories as an agent receives them."
    )
    tokens = serializers.IntegerField(allow_null=True, help_text="The formatted content's token estimate.")


class SearchLinkedResultSerializer(serializers.Serializer):
    """A linked memory: the link, how it reads from the parent, and the memory with its own links."""

    label = serializers.CharField(help_text="The relation as read from the parent record.")
    relation = SearchLinkSerializer()
    result = SearchResultSerializer()


SearchResultSerializer._declared_fields["linked_results"] = SearchLinkedResultSerializer(
    many=True, help_text="The link tree (num_hops deep), each link labelled as read from its parent."
)


class SearchResponseSerializer(serializers.Serializer):
    results = SearchResultSerializer(many=True, help_text="Best first.")
    call = serializers.CharField(help_text="The call made: AgentMemory.search, or Thread.search of the thread.")
    strategy = serializers.ChoiceField(
        choices=[strategy.value for strategy in SearchStrategy], help_text="The ranking used."
    )
    total_tokens = serializers.IntegerField(allow_null=True, help_text="With formatted: the sum of the results'.")


# --- history (/api/v1/history/) ---------------------------------------------------------------


class HistoryEntrySerializer(serializers.Serializer):
    """One change made through the dashboard or the API, with the object before and after it."""

    id = serializers.IntegerField(help_text="Also the cursor of the page after it.")
    at = serializers.DateTimeField(help_text="When it was made.")
    actor = serializers.CharField(source="actor_name", help_text="The username of who made it.")
    via = serializers.CharField(help_text="dashboard or api.")
    token_name = serializers.CharField(allow_null=True, help_text="The API token it was made with; null: none.")
    object_kind = serializers.ChoiceField(choices=ObjectKind.values)
    object_id = serializers.CharField()
    thread_id = serializers.CharField(allow_null=True, help_text="The thread the object belongs to; null: none.")
    action = serializers.ChoiceField(choices=Action.values)
    summary = serializers.CharField()
    before = serializers.JSONField(
        allow_null=True, help_text="The object before (a delete: the snapshot of everything that went with it)."
    )
    after = serializers.JSONField(allow_null=True, help_text="The object after.")
    reverts = serializers.IntegerField(source="reverts_id", allow_null=True, help_text="The entry this one undid.")
    bulk = serializers.IntegerField(
        source="bulk_id",
        allow_null=True,
        help_text="The bulk change this entry is one record of (the dashboard's /history/bulk/<id>/); null: none.",
    )

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data = super().to_representation(instance)
        for name in ("token_name", "thread_id"):
            data[name] = data[name] or None
        return data
