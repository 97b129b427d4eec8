"""Entries of the curation history."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from memory.models import Action, ObjectKind


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
