"""Threads: the record, and the bodies that create and edit one."""

from __future__ import annotations

from rest_framework import serializers

from memory.api.serializers.common import BodySerializer, id_field, time_field


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
