"""The API's JSON: the engine's records under the engine's names, and the bodies writes accept.

Output serializers read the engine's record dataclasses; they also give the OpenAPI schema its
typed responses, so what is documented is what is sent. Times are ISO 8601 strings in UTC, as the
engine stores them.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memory.engine.limits import MAX_CONTENT_CHARS
from memory.engine.types import BUILTIN_RELATIONS, MEMORY_TYPES
from memory.forms import JSONObjectField, check_relation_label
from memory.templatetags.oam import path_to

STATUSES = ("valid", "invalid")
ID_MAX = 512


def id_field(**kwargs) -> serializers.CharField:
    return serializers.CharField(max_length=ID_MAX, **kwargs)


def scope_field(what: str) -> serializers.CharField:
    return id_field(required=False, allow_null=True, help_text=f"The {what}'s id; null: none.")


def time_field(help_text: str, **kwargs) -> serializers.CharField:
    return serializers.CharField(allow_null=True, help_text=f"{help_text} ISO 8601, UTC.", **kwargs)


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


class MemoryCreateSerializer(serializers.Serializer):
    content = serializers.CharField(help_text="The memory's text.")
    memory_type = serializers.ChoiceField(choices=MEMORY_TYPES, required=False, help_text="Default: memory.")
    id = id_field(required=False, help_text="Its id; default: a new one. 409 if taken.")
    user_id = scope_field("user")
    agent_id = scope_field("agent")
    thread_id = scope_field("thread (it must exist; gives its user and agent when none is given)")
    metadata = serializers.DictField(required=False, allow_null=True)
    timestamp = serializers.CharField(required=False, allow_null=True, help_text="When it happened, ISO 8601.")
    ttl_days = serializers.IntegerField(required=False, min_value=1, help_text="Expires this many days after.")
    status = serializers.ChoiceField(choices=STATUSES, required=False)


class MemoryUpdateSerializer(serializers.Serializer):
    """A partial update: the fields given are written, the others kept."""

    content = serializers.CharField(required=False)
    memory_type = serializers.ChoiceField(choices=MEMORY_TYPES, required=False)
    user_id = scope_field("user")
    agent_id = scope_field("agent")
    metadata = serializers.DictField(required=False, allow_null=True)
    timestamp = serializers.CharField(required=False, help_text="When it happened, ISO 8601.")
    status = serializers.ChoiceField(choices=STATUSES, required=False)
    expires_at = serializers.CharField(required=False, allow_null=True, help_text="ISO 8601; null: never.")
    ttl_days = serializers.IntegerField(
        required=False, min_value=1, help_text="A new lifetime, counted from its creation."
    )

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


class ImageUploadSerializer(serializers.Serializer):
    image = serializers.FileField(help_text="The image file: PNG, JPEG or WebP, within the store's limits.")
    thread_id = id_field(
        required=False, help_text="The thread it goes to (it must exist); its user and agent are the image's."
    )
    user_id = id_field(required=False, help_text="Without a thread: the user the image belongs to.")
    agent_id = id_field(required=False, help_text="Without a thread: the agent the image belongs to.")
    id = id_field(required=False, help_text="Its id; default: a new one. 409 if taken.")
    description = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=MAX_CONTENT_CHARS,
        help_text="Its searchable text; empty: the LLM describes it, if there is one.",
    )
    metadata = serializers.CharField(
        required=False, allow_blank=True, help_text='A JSON object, as text: {"source": "scan"}. Image records only.'
    )
    add_as = serializers.ChoiceField(
        choices=(("image", "a standalone image record"), ("message", "a new message of the thread with this image")),
        required=False,
        default="image",
        help_text="image (default): an image record; message: a new message of the thread holding it.",
    )
    role = serializers.CharField(
        required=False, default="user", max_length=ID_MAX, help_text="With add_as=message: its role."
    )
    text = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="With add_as=message: text sent with the image."
    )

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


class ImageUpdateSerializer(serializers.Serializer):
    """A partial update: the fields given are written, the others kept."""

    description = serializers.CharField(
        required=False, allow_blank=True, max_length=MAX_CONTENT_CHARS, help_text="The searchable text."
    )
    metadata = serializers.DictField(required=False, allow_null=True, help_text="A JSON object; null: none.")

    def validate(self, data: dict) -> dict:
        if not data:
            raise serializers.ValidationError("Give at least one field to change.")
        return data


def relation_type_of(value: str, kept: str | None = None) -> str:
    """A relation type as the dashboard's link forms take it: a built-in mistyped is refused
    (memory.forms.check_relation_label); `kept`, the link's current type, passes as it is."""
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


class LinkCreateSerializer(serializers.Serializer):
    source_record_id = id_field(help_text="The memory the link goes from.")
    target_record_id = id_field(help_text="The memory it goes to (a lifecycle type retires it).")
    relation_type = serializers.CharField(
        max_length=ID_MAX,
        help_text="A built-in type (supersedes, refines, duplicates, supports, contradicts) or a label of your own.",
    )
    opposite_relation_type = serializers.CharField(
        max_length=ID_MAX,
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


class LinkUpdateSerializer(serializers.Serializer):
    """A partial update: the fields given are written, the others kept."""

    relation_type = serializers.CharField(max_length=ID_MAX, required=False)
    opposite_relation_type = serializers.CharField(
        max_length=ID_MAX,
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


class ProfileWriteSerializer(serializers.Serializer):
    information = serializers.CharField(
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
