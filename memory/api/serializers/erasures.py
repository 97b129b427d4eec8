"""The body of POST /api/v1/users/{id}/erase/ and its answers."""

from __future__ import annotations

from rest_framework import serializers

from .common import BodySerializer


class EraseRequestSerializer(BodySerializer):
    dry_run = serializers.BooleanField(
        required=False, default=False, help_text="Say what would go, per kind, and change nothing."
    )


class DownloadSerializer(serializers.Serializer):
    at = serializers.CharField()
    when = serializers.CharField(help_text="The same time to the minute, as the pages show it.")
    by = serializers.CharField()
    call = serializers.CharField()
    scope = serializers.CharField(help_text="What was exported: its filters, or the whole store.")


class ErasurePreviewSerializer(serializers.Serializer):
    user_id = serializers.CharField()
    dry_run = serializers.BooleanField()
    counts = serializers.DictField(child=serializers.IntegerField(), help_text="What would go, per kind.")
    not_reached = DownloadSerializer(many=True, help_text="Exports downloaded before, out of the erasure's reach.")
    resuming = serializers.IntegerField(allow_null=True, help_text="The unfinished erasure this one would finish.")


class ErasureReceiptSerializer(serializers.Serializer):
    receipt = serializers.IntegerField()
    user_id = serializers.CharField()
    status = serializers.CharField()
    erased_by = serializers.CharField()
    via = serializers.CharField()
    token_name = serializers.CharField()
    started_at = serializers.CharField()
    finished_at = serializers.CharField(allow_null=True)
    counts = serializers.DictField(child=serializers.IntegerField())
    digest_sha256 = serializers.CharField()
    not_reached = serializers.DictField()
    import_uploads = serializers.ListField(child=serializers.DictField())
    files = serializers.DictField()
