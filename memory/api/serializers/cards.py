"""Context cards and thread summaries, as Thread.get_context_card and the summary refresh give them."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memory.api.serializers.common import STATUSES, time_field


@extend_schema_field(OpenApiTypes.NUMBER)
class NumberField(serializers.Field):
    """An int or a float, sent as it is."""

    def to_representation(self, value: Any) -> Any:
        return value


class CardResultSerializer(serializers.Serializer):
    """A record the card chose, in card order, with how it ranked."""

    rank = serializers.IntegerField(help_text="Its place in the card's relevant information, from 1.")
    id = serializers.CharField()
    record_type = serializers.CharField(help_text="message, memory, fact, guideline or preference.")
    content = serializers.CharField(allow_blank=True)
    status = serializers.ChoiceField(choices=STATUSES)
    timestamp = time_field("When it happened.")
    user_id = serializers.CharField(allow_null=True)
    agent_id = serializers.CharField(allow_null=True)
    thread_id = serializers.CharField(allow_null=True)
    metadata = serializers.DictField(allow_null=True)
    distance = serializers.FloatField(help_text="Smaller is closer.")
    scores = serializers.DictField(
        child=NumberField(),
        help_text="How it ranked: vector_rank, vector_distance, keyword_rank, keyword_score, score (hybrid).",
    )
    formatted_content = serializers.CharField(help_text="The result as the card shows it.")
    tokens = serializers.IntegerField(help_text="The engine's token estimate of formatted_content.")


class CardMessageSerializer(serializers.Serializer):
    """A recent message as the card shows it: its text."""

    id = serializers.CharField()
    role = serializers.CharField()
    content = serializers.CharField(allow_blank=True, help_text="Its text (text parts joined by newlines).")
    timestamp = time_field("When it was said.")
    metadata = serializers.DictField(allow_null=True)


class CardTokensSerializer(serializers.Serializer):
    """The engine's token estimate (about 3.5 characters a token) of the card and of each section."""

    card = serializers.IntegerField()
    summary = serializers.IntegerField()
    topics = serializers.IntegerField()
    relevant_results = serializers.IntegerField()
    recent_messages = serializers.IntegerField()


class ContextCardSerializer(serializers.Serializer):
    """A thread's context card: the text an agent puts in its prompt, and its parts."""

    thread_id = serializers.CharField()
    content = serializers.CharField(allow_blank=True, help_text="The card as the agent gets it: its sections.")
    summary = serializers.CharField(allow_blank=True, help_text="The stored summary, else a transcript.")
    topics = serializers.ListField(child=serializers.CharField(), allow_null=True)
    relevant_results = CardResultSerializer(many=True)
    recent_messages = CardMessageSerializer(many=True)
    tokens = CardTokensSerializer()
    as_of_message_id = serializers.CharField(allow_null=True, help_text="The message the card is taken as of.")
    messages_due_for_summary = serializers.IntegerField(
        help_text="Messages the agent's next card will first fold into the summary (0: none): this card, "
        "a read, did not refresh it."
    )


SUMMARY_SOURCES = {
    "llm": "the summary the thread's LLM keeps",
    "transcript": "no summary is stored: a transcript of the latest messages, as the card uses",
    "none": "nothing to summarise",
}


class ThreadSummarySerializer(serializers.Serializer):
    """A thread's summary as its context card uses it, read without refreshing it."""

    thread_id = serializers.CharField()
    summary = serializers.CharField(allow_blank=True)
    topics = serializers.ListField(child=serializers.CharField(), allow_null=True)
    source = serializers.ChoiceField(
        choices=list(SUMMARY_SOURCES), help_text="; ".join(f"{key}: {text}" for key, text in SUMMARY_SOURCES.items())
    )
    summarized_through = serializers.IntegerField(
        help_text="The seq_no of the last message the stored summary covers; -1: none."
    )
    messages_due_for_summary = serializers.IntegerField(
        help_text="Messages the agent's next card or summary will first fold in by asking the LLM (0: none due)."
    )


class SummaryRefreshSerializer(ThreadSummarySerializer):
    refreshed = serializers.BooleanField(
        help_text="false: no message came since the last summary; the LLM was not asked and nothing changed."
    )
