"""/api/v1/search/: the engine's search with every parameter, under the engine's names.

A POST because its parameters (a metadata filter, lists of types) are a JSON body; it only reads,
so viewers may call it. The body is checked as the dashboard's search form checks its query string
(memory.web.fields.search_problems), and the same call is made (memory.queries.search.searcher).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response

from memory.api.base import EngineView
from memory.api.errors import NON_FIELD
from memory.api.permissions import Reads
from memory.api.responses import errors_of
from memory.api.serializers.search import SearchRequestSerializer, SearchResponseSerializer
from memory.engine import SearchResult, SearchResultFormatConfig, estimate_tokens
from memory.queries.search import searcher
from memory.web.engine_errors import field_errors
from memory.web.fields import search_arguments


def result_example(record_id: str, content: str, **fields: Any) -> dict[str, Any]:
    """A fact found by a search, as the examples show it (unformatted, without links)."""
    record = {
        "id": record_id,
        "record_type": "fact",
        "content": content,
        "metadata": None,
        "status": fields.get("status", "valid"),
        "timestamp": "2025-05-01T09:30:00+00:00",
        "created_at": "2025-05-01T09:30:00+00:00",
        "expires_at": None,
        "version": fields.get("version", 1),
        "user_id": "alice",
        "agent_id": "atlas",
        "thread_id": "trip-42",
        "role": None,
        "seq_no": None,
        "message_id": None,
        "mime_type": None,
    }
    scores = dict.fromkeys(("vector_rank", "vector_distance", "keyword_rank", "keyword_score", "score"))
    return {
        "id": record_id,
        "distance": fields.get("distance"),
        "scores": scores,
        "record": record,
        "formatted_content": None,
        "tokens": None,
        "linked_results": [],
    }


EXAMPLES = [
    OpenApiExample(
        "A client search",
        summary="What an agent's memory.search(query, user_id=...) finds",
        value={"query": "Where does Alice like to sit?", "user_id": "alice", "max_results": 5},
        request_only=True,
    ),
    OpenApiExample(
        "Every option",
        summary="Scope, types, a metadata filter, budgets, linked memories, a strategy and the formatted text",
        value={
            "query": "diet",
            "user_id": "alice",
            "agent_id": "atlas",
            "exact_agent_match": True,
            "record_types": ["fact", "preference"],
            "metadata_filter": {"tags": {"$array_contains": "diet"}},
            "max_results": 10,
            "token_budget": 2000,
            "num_hops": 2,
            "max_linked_results": 20,
            "include_invalid_results": False,
            "strategy": "hybrid",
            "formatted": True,
            "format_config": {"show_user_id": True, "show_distance": True},
        },
        request_only=True,
    ),
    OpenApiExample(
        "As a thread",
        summary="Thread.search: the thread's user and agent by default",
        value={"query": "hotel", "layer": "thread", "thread_id": "trip-42", "record_types": ["message"]},
        request_only=True,
    ),
    OpenApiExample(
        "Records without a user",
        summary="The engine's None: records shared with no user",
        value={"query": "opening hours", "user_id": None},
        request_only=True,
    ),
    OpenApiExample(
        "A result with its linked memory",
        value={
            "results": [
                {
                    **result_example("fact-vegetarian", "Alice is vegetarian.", distance=0.0, version=2),
                    "scores": {
                        "vector_rank": 1,
                        "vector_distance": 0.42,
                        "keyword_rank": 1,
                        "keyword_score": 2.1,
                        "score": 0.0328,
                    },
                    "formatted_content": '<record type="fact"><timestamp>2025-05-01T09:30:00+00:00</timestamp>'
                    "<status>valid</status><content>Alice is vegetarian.</content>"
                    '<linked_memories><linked_memory relation="supersedes"><record type="fact">'
                    "<timestamp>2025-04-02T18:00:00+00:00</timestamp><status>invalid</status>"
                    "<content>Alice eats fish.</content></record></linked_memory></linked_memories></record>",
                    "tokens": 98,
                    "linked_results": [
                        {
                            "label": "supersedes",
                            "relation": {
                                "id": "link-1",
                                "source_record_id": "fact-vegetarian",
                                "source_record_type": "fact",
                                "target_record_id": "fact-old",
                                "target_record_type": "fact",
                                "relation_type": "supersedes",
                                "opposite_relation_type": "is_superseded_by",
                                "metadata": None,
                                "timestamp": "2025-05-01T09:30:00+00:00",
                                "created_at": "2025-05-01T09:30:00+00:00",
                                "version": 1,
                            },
                            "result": result_example("fact-old", "Alice eats fish.", status="invalid"),
                        }
                    ],
                }
            ],
            "call": "AgentMemory.search",
            "strategy": "hybrid",
            "total_tokens": 98,
        },
        response_only=True,
    ),
]


def result_data(result: SearchResult, config: SearchResultFormatConfig | None) -> dict[str, Any]:
    """A result and its link tree as SearchResultSerializer reads it; formatted when `config` is given."""
    text = result.format_content(config) if config is not None else None
    return {
        "id": result.id,
        "distance": result.distance,
        "scores": result.scores,
        "record": result.record,
        "formatted_content": text,
        "tokens": estimate_tokens(text) if text is not None else None,
        "linked_results": [
            {"label": relation.label_from(result.record.id), "relation": relation, "result": result_data(child, None)}
            for relation, child in result.linked_results
        ],
    }


class Search(EngineView):
    permission_classes = (Reads,)

    @extend_schema(
        operation_id="search_create",
        summary="Search the memory store",
        description="AgentMemory.search (or, with `layer: thread`, Thread.search) with every parameter under "
        "the engine's names. Each result comes with its distance, how it ranked under each strategy "
        "(`scores`), its linked memories as a tree, and with `formatted: true` the text an agent receives "
        "and its token estimate. The engine's scope rules are 400s under the parameter: a client search "
        "needs `user_id` (null: records without a user) and matches it exactly. Viewers may search.",
        request=SearchRequestSerializer,
        responses={200: SearchResponseSerializer, **errors_of(400, 415)},
        examples=EXAMPLES,
        tags=["search"],
    )
    def post(self, request: Request) -> Response:
        body = SearchRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        given = body.validated_data
        arguments = search_arguments(given)
        try:
            search, call = searcher(self.agent_memory, given)
            results = search(given["query"], **arguments)
            config = SearchResultFormatConfig(**given.get("format_config", {})) if given["formatted"] else None
        except ValueError as error:  # the engine's: its scope rules, ids and numbers it refuses
            field, message = field_errors(error, body.fields)
            raise exceptions.ValidationError({field or NON_FIELD: [message]}) from None
        data = [result_data(result, config) for result in results]
        payload = {
            "results": data,
            "call": call,
            "strategy": arguments.get("strategy") or self.agent_memory.store.search_strategy.value,
            "total_tokens": sum(item["tokens"] for item in data) if config is not None else None,
        }
        return Response(SearchResponseSerializer(payload).data)
