"""Users and agents: their profile, what they own, and the profile body."""

from __future__ import annotations

from rest_framework import serializers

from memory.api.serializers.common import BodySerializer, TextField
from memory.engine import (
    MAX_CONTENT_CHARS,
)


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
