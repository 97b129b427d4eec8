"""The activity log: one recorded call as its caller saw it, with its results as they were."""

from __future__ import annotations

from rest_framework import serializers

from memory.api.serializers.search import FiniteFloatField
from memory.engine import KINDS


class ActivityScopeSerializer(serializers.Serializer):
    """The user, agent and thread the call was made in (null: not given)."""

    user_id = serializers.CharField(allow_null=True)
    agent_id = serializers.CharField(allow_null=True)
    thread_id = serializers.CharField(allow_null=True)


class ActivityResultSerializer(serializers.Serializer):
    """One record the call returned (in the order the caller got it) or changed, as it was then."""

    record_id = serializers.CharField()
    record_type = serializers.CharField()
    rank = serializers.IntegerField(allow_null=True, help_text="1 = the first result; null for a write.")
    status = serializers.CharField(allow_null=True, help_text="valid or invalid at the time of the call.")
    version = serializers.IntegerField(allow_null=True, help_text="The record's version at the time of the call.")
    scores = serializers.DictField(
        child=FiniteFloatField(),
        help_text="The ranking's parts: distance, vector_distance, vector_rank, keyword_score (BM25), "
        "keyword_rank and the fused score, for the rankings the record appeared in.",
    )
    tokens = serializers.IntegerField(help_text="The engine's estimate of the text this result added.")
    hop = serializers.IntegerField(help_text="0: a ranked result; 1, 2…: reached through links from result `rank`.")
    path = serializers.ListField(
        child=serializers.CharField(), help_text="The ids and link labels from the ranked result to this one."
    )


class ActivityEventSerializer(serializers.Serializer):
    """One recorded call of the engine."""

    id = serializers.CharField()
    kind = serializers.ChoiceField(choices=list(KINDS))
    call = serializers.CharField(help_text="The engine's entry point: AgentMemory.search, Thread.get_context_card…")
    time = serializers.CharField(help_text="When the call started (ISO 8601, UTC).")
    caller = serializers.CharField(help_text="The agent (its caller name, or an API token's name) or the person.")
    caller_kind = serializers.ChoiceField(choices=["agent", "person"])
    on_behalf_of = serializers.CharField(allow_null=True, help_text="An API token's owner.")
    scope = ActivityScopeSerializer()
    request = serializers.DictField(help_text="Every parameter as passed; a write's `operation` and details.")
    results = ActivityResultSerializer(many=True)
    result_count = serializers.IntegerField(help_text="Ranked results (a write: records changed), all of them.")
    content = serializers.CharField(allow_blank=True, help_text="The text the caller received, cut at the cap.")
    content_chars = serializers.IntegerField(help_text="The whole text's length.")
    truncated = serializers.BooleanField(help_text="Whether `content` was cut at OAM_ACTIVITY_CONTENT_CHARS.")
    tokens = serializers.IntegerField()
    duration_ms = serializers.FloatField()
    cause = serializers.DictField(allow_null=True, help_text="Why the engine's LLM work made a write.")
    history_ref = serializers.CharField(
        allow_null=True, help_text="The curation-history change a person's write belongs to (history `change`)."
    )
