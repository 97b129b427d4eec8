"""Memories: the record, and the bodies that create and edit one."""

from __future__ import annotations

from rest_framework import serializers

from memory.api.serializers.common import (
    STATUSES,
    BodySerializer,
    ScopedSerializer,
    TextField,
    WholeNumberField,
    id_field,
    scope_field,
)
from memory.engine import (
    MEMORY_TYPES,
)
from memory.web.fields import MAX_TTL_DAYS


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
    ttl_days = WholeNumberField(
        required=False, min_value=1, max_value=MAX_TTL_DAYS, help_text="Expires this many days after."
    )
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
    ttl_days = WholeNumberField(
        required=False,
        min_value=1,
        max_value=MAX_TTL_DAYS,
        help_text="A new lifetime, counted from its creation.",
    )

    def validate(self, data: dict) -> dict:
        if "expires_at" in data and "ttl_days" in data:
            raise serializers.ValidationError({"ttl_days": ["Give expires_at or ttl_days, not both."]})
        if not data:
            raise serializers.ValidationError("Give at least one field to change.")
        return data
