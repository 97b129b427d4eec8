"""Links between memories: the record, what a change does to memories' status, and the write bodies."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from memory.api.serializers.common import STATUSES, BodySerializer, id_field, time_field
from memory.engine import (
    BUILTIN_RELATIONS,
    MEMORY_TYPES,
)
from memory.web.fields import check_relation_label


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
