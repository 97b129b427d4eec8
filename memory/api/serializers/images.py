"""Images: the record (with its content's URL), and the upload and edit bodies."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import QueryDict
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memory.api.serializers.common import BodySerializer, MessageRoleField, ScopedSerializer, TextField, id_field
from memory.engine import (
    MAX_CONTENT_CHARS,
)
from memory.web.converters import path_to
from memory.web.fields import JSONObjectField

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
    role = MessageRoleField(required=False, default="user", help_text="With add_as=message: its role.")
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
