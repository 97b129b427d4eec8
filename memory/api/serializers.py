"""The API's JSON: the engine's records under the engine's names, and the bodies writes accept.

Output serializers read the engine's record dataclasses; they also give the OpenAPI schema its
typed responses, so what is documented is what is sent. Times are ISO 8601 strings in UTC, as the
engine stores them.
"""

from __future__ import annotations

from typing import Any

from django.http import QueryDict
from rest_framework import serializers

from memory.engine.types import MEMORY_TYPES

STATUSES = ("valid", "invalid")
ID_MAX = 512


class TextField(serializers.CharField):
    """Text, and only text: a JSON number or boolean where the schema says string is a 400 (DRF's
    CharField would store 0 as "0"), so that what the API accepts is what its schema documents."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class WholeNumberField(serializers.IntegerField):
    """A JSON integer, not a string of digits or a boolean (DRF's IntegerField takes "7" and
    true); a form body's values are all text, so there "7" is the number."""

    def to_internal_value(self, data: Any) -> int:
        from_form = isinstance(getattr(self.root, "initial_data", None), QueryDict)
        if isinstance(data, bool) or not (isinstance(data, int) or (from_form and isinstance(data, str))):
            self.fail("invalid")
        return super().to_internal_value(data)


def id_field(**kwargs) -> serializers.CharField:
    return TextField(max_length=ID_MAX, **kwargs)


def scope_field(what: str) -> serializers.CharField:
    return id_field(required=False, allow_null=True, help_text=f"The {what}'s id; null: none.")


def time_field(help_text: str, **kwargs) -> serializers.CharField:
    return TextField(allow_null=True, help_text=f"{help_text} ISO 8601, UTC.", **kwargs)


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


class MemoryUpdateSerializer(serializers.Serializer):
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
