"""The findings of secrets and personal data as the API shows them: masked, never the value."""

from __future__ import annotations

from rest_framework import serializers

from memory.engine import SENSITIVE_KINDS


class FindingSerializer(serializers.Serializer):
    """A secret or piece of personal data found in a stored record, masked."""

    id = serializers.CharField(help_text="The finding's id: redact or dismiss it by it.")
    kind = serializers.ChoiceField(choices=sorted(SENSITIVE_KINDS), help_text="What was found.")
    label = serializers.CharField(help_text="The kind, as the dashboard names it.")
    preview = serializers.CharField(help_text="The value masked (`4111 •••• •••• 1111`).")
    field = serializers.CharField(help_text="The record's field it is in (its text).")
    start = serializers.IntegerField(help_text="Where it starts in the field (characters).")
    end = serializers.IntegerField(help_text="Where it ends in the field (characters, exclusive).")
    record_id = serializers.CharField()
    record_type = serializers.CharField()
    user_id = serializers.CharField(allow_null=True)
    agent_id = serializers.CharField(allow_null=True)
    thread_id = serializers.CharField(allow_null=True)
    masked_text = serializers.CharField(help_text="The record's text with every finding in it masked.")
    found_at = serializers.DateTimeField()


class FindingFiltersSerializer(serializers.Serializer):
    """The query parameters of the findings' listing."""

    user_id = serializers.CharField(required=False, help_text="Only the findings in this user's records.")
    agent_id = serializers.CharField(required=False, help_text="Only the findings in this agent's records.")
    kind = serializers.MultipleChoiceField(
        choices=sorted(SENSITIVE_KINDS), required=False, help_text="Only these kinds (repeat the parameter)."
    )
    limit = serializers.IntegerField(required=False, min_value=1, max_value=500, default=50)
    cursor = serializers.CharField(required=False)
