"""What every serializer of the API builds on: fields that take exactly what the schema
documents, request bodies that refuse unknown keys, records, pages and errors. Field rules shared
with the dashboard's forms (id length, lifetimes, metadata JSON, relation labels, search rules) are
memory.web.fields'."""

from __future__ import annotations

from typing import Any

from django.http import QueryDict
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memory.engine import (
    check_id_text,
    normalize_timestamp,
)
from memory.web.fields import ID_MAX_LENGTH, MESSAGE_ROLES, message_role_choices, message_role_error

STATUSES = ("valid", "invalid")


# What the API accepts is what its schema documents: DRF's fields take more (0 for "0", "7" for
# 7, "yes" or 1 for true), which a client generated from the schema would never send and a
# hand-written one should not rely on. A form body (multipart: an upload) is all text, so there a
# number or a flag is read from its text.


def sent_as_form(field: serializers.Field) -> bool:
    """Whether the field's body came as a form (multipart, all text) rather than JSON: there a
    number or a flag is read from its text."""
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
    return TextField(max_length=ID_MAX_LENGTH, trim_whitespace=False, validators=[engine_id], **kwargs)


@extend_schema_field(
    {
        "type": "string",
        "enum": list(MESSAGE_ROLES),
        "description": "\n".join(f"* `{role}` - {label}" for role, label in message_role_choices()),
    },
    component_name="MessageRoleEnum",
)
class MessageRoleField(serializers.ChoiceField):
    """A message's role: one of MESSAGE_ROLES (the schema's MessageRoleEnum), else a 400 under its
    name. An edit may send the role the message has (the serializer's context's `stored_role`),
    even one that is none of them: only a change must be to one of them."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=message_role_choices(), **kwargs)

    def to_internal_value(self, data: Any) -> str:
        if isinstance(data, str) and (data in MESSAGE_ROLES or data == self.context.get("stored_role")):
            return data
        raise serializers.ValidationError(message_role_error(data), code="invalid_choice")


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
