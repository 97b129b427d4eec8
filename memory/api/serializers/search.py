"""Search: the request with every parameter of the engine's search, and results with their scores and links."""

from __future__ import annotations

import math
from typing import Any

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from memory.api.serializers.common import (
    BodySerializer,
    FlagField,
    ScopedSerializer,
    TextField,
    WholeNumberField,
    scope_field,
    time_field,
)
from memory.engine import (
    SEARCHABLE_TYPES,
    SearchStrategy,
    parse_filter,
)
from memory.web.fields import search_problems


class FiniteFloatField(serializers.FloatField):
    """A float that JSON can carry: NaN or infinity (a linked result has no distance) is null."""

    def to_representation(self, value: Any) -> float | None:
        number = float(value)
        return number if math.isfinite(number) else None


class SearchFormatConfigSerializer(BodySerializer):
    """SearchResultFormatConfig: which parts of a result the formatted content shows. An option
    left out takes the engine's default."""

    show_timestamp = FlagField(required=False, help_text="Default: shown.")
    show_role = FlagField(required=False, help_text="A message's role. Default: shown.")
    show_status = FlagField(required=False, help_text="valid or invalid. Default: shown.")
    show_distance = FlagField(required=False, help_text="Default: hidden.")
    show_thread_id = FlagField(required=False, help_text="Default: hidden.")
    show_user_id = FlagField(required=False, help_text="Default: hidden.")
    show_agent_id = FlagField(required=False, help_text="Default: hidden.")
    show_metadata = FlagField(required=False, help_text="Default: hidden.")
    include_invalid_results = FlagField(
        required=False,
        help_text="Invalid linked memories in full; false: only as connectors to valid ones. Default: the search's.",
    )


@extend_schema_serializer(component_name="Search")
class SearchRequestSerializer(BodySerializer):
    """Every parameter of AgentMemory.search (and Thread.search), under the engine's names; the
    rules the dashboard's search form applies to them taken together (memory.web.fields.search_problems)."""

    query = TextField(max_length=10_000, help_text="What to search for.")
    layer = serializers.ChoiceField(
        choices=["client", "thread"],
        required=False,
        help_text="Search as the client (AgentMemory.search, the default: `user_id` required) or as the thread "
        "`thread_id` names (Thread.search: its user and agent by default).",
    )
    user_id = scope_field("user (a client search requires it; null: records without a user)")
    agent_id = scope_field("agent (null with exact_agent_match: records without an agent)")
    thread_id = scope_field("thread (with layer=thread: the thread searched as)")
    exact_user_match = FlagField(required=False, help_text="Client: always true.")
    exact_agent_match = FlagField(required=False, help_text="Default: client no; thread yes.")
    exact_thread_match = FlagField(required=False, help_text="Default: no.")
    unscoped = serializers.ListField(
        child=serializers.ChoiceField(choices=["user_id", "agent_id", "thread_id"]),
        required=False,
        help_text="Dimensions searched for records without one: as the id null with its exact_*_match true.",
    )
    record_types = serializers.ListField(
        child=serializers.ChoiceField(choices=SEARCHABLE_TYPES),
        required=False,
        allow_null=True,
        allow_empty=False,
        help_text="Default (or null): every type.",
    )
    metadata_filter = serializers.DictField(
        required=False, allow_null=True, help_text='The engine\'s filter, e.g. {"tags": {"$array_contains": "diet"}}.'
    )
    max_results = WholeNumberField(required=False, min_value=1, max_value=1000, help_text="Default 10.")
    token_budget = WholeNumberField(
        required=False, allow_null=True, min_value=1, help_text="Hard: results past it are dropped. Null: none."
    )
    soft_token_budget = WholeNumberField(
        required=False, allow_null=True, min_value=1, help_text="Stops after the result that reaches it. Null: none."
    )
    num_hops = WholeNumberField(
        required=False, min_value=0, max_value=5, help_text="Linked memories up to this many links away. Default 0."
    )
    max_linked_results = WholeNumberField(required=False, min_value=0, help_text="Default 100.")
    include_invalid_results = FlagField(required=False, help_text="Default: yes, kept as history.")
    strategy = serializers.ChoiceField(
        choices=[strategy.value for strategy in SearchStrategy],
        required=False,
        help_text="How this search ranks. Default: the store's.",
    )
    formatted = FlagField(
        default=False, help_text="Also answer each result as an agent receives it, with its token count."
    )
    format_config = SearchFormatConfigSerializer(required=False, help_text="With formatted: what the text shows.")

    def validate_metadata_filter(self, value: dict | None) -> dict | None:
        if value is not None:
            try:
                parse_filter(value)
            except (ValueError, RecursionError) as error:
                raise serializers.ValidationError(str(error)) from None
        return value

    def validate(self, data: dict) -> dict:
        problems: dict[str, list[str]] = {}
        for field, message in search_problems(data, choose="ask for"):
            problems.setdefault(field, []).append(message)
        if "format_config" in data and not data.get("formatted"):
            problems.setdefault("format_config", []).append("Ask for the formatted content with formatted: true.")
        if problems:
            raise serializers.ValidationError(problems)
        return data


class SearchScoresSerializer(serializers.Serializer):
    """How a result ranked, in each ranking it appeared in (null: not in that one)."""

    vector_rank = serializers.IntegerField(allow_null=True, help_text="Its rank by vector distance, from 1.")
    vector_distance = FiniteFloatField(allow_null=True, help_text="Its vector distance to the query.")
    keyword_rank = serializers.IntegerField(allow_null=True, help_text="Its rank by keyword match, from 1.")
    keyword_score = FiniteFloatField(allow_null=True, help_text="Its BM25 keyword score.")
    score = FiniteFloatField(allow_null=True, help_text="The fused score of a hybrid search.")


class SearchRecordSerializer(ScopedSerializer):
    """A found record of any type; the fields of other types are null (a profile has no scope)."""

    record_type = serializers.ChoiceField(choices=SEARCHABLE_TYPES)
    user_id = serializers.CharField(allow_null=True)
    agent_id = serializers.CharField(allow_null=True)
    thread_id = serializers.CharField(allow_null=True)
    role = serializers.CharField(allow_null=True, help_text="A message's role.")
    seq_no = serializers.IntegerField(allow_null=True, help_text="A message's place in its thread.")
    message_id = serializers.CharField(allow_null=True, help_text="An image's message, if it came in one.")
    mime_type = serializers.CharField(allow_null=True, help_text="An image's type.")


class SearchLinkSerializer(serializers.Serializer):
    """A link of the tree, in its stored direction (source → target)."""

    id = serializers.CharField()
    source_record_id = serializers.CharField()
    source_record_type = serializers.CharField()
    target_record_id = serializers.CharField()
    target_record_type = serializers.CharField()
    relation_type = serializers.CharField(help_text="As read from the source.")
    opposite_relation_type = serializers.CharField(help_text="As read from the target.")
    metadata = serializers.DictField(allow_null=True)
    timestamp = time_field("When it was made.")
    created_at = time_field("When it was stored.")
    version = serializers.IntegerField()


class SearchResultSerializer(serializers.Serializer):
    """A ranked record and the memories linked to it. `formatted_content` and `tokens` with
    `formatted: true` only (null otherwise, and in linked results)."""

    id = serializers.CharField()
    distance = FiniteFloatField(
        allow_null=True,
        help_text="0 best: the vector distance (vector), 1 - fused score / best possible (hybrid), growing with "
        "the rank (keyword). A linked memory's: its vector distance to the query (null if it has none).",
    )
    scores = SearchScoresSerializer()
    record = SearchRecordSerializer()
    formatted_content = serializers.CharField(
        allow_null=True, help_text="The result and its linked memories as an agent receives them."
    )
    tokens = serializers.IntegerField(allow_null=True, help_text="The formatted content's token estimate.")


class SearchLinkedResultSerializer(serializers.Serializer):
    """A linked memory: the link, how it reads from the parent, and the memory with its own links."""

    label = serializers.CharField(help_text="The relation as read from the parent record.")
    relation = SearchLinkSerializer()
    result = SearchResultSerializer()


SearchResultSerializer._declared_fields["linked_results"] = SearchLinkedResultSerializer(
    many=True, help_text="The link tree (num_hops deep), each link labelled as read from its parent."
)


class SearchResponseSerializer(serializers.Serializer):
    results = SearchResultSerializer(many=True, help_text="Best first.")
    call = serializers.CharField(help_text="The call made: AgentMemory.search, or Thread.search of the thread.")
    strategy = serializers.ChoiceField(
        choices=[strategy.value for strategy in SearchStrategy], help_text="The ranking used."
    )
    total_tokens = serializers.IntegerField(allow_null=True, help_text="With formatted: the sum of the results'.")
