"""/api/v1/activity/: the calls agents (and people) made to memory, as the dashboard's timeline
lists them, and one call with its results and text as the caller saw them. Viewers may read it."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response

from memory.api.base import EngineView, form_errors, form_parameters, query_form
from memory.api.paging import page_response
from memory.api.responses import errors_of
from memory.api.serializers.activity import ActivityEventSerializer
from memory.api.serializers.common import page_of
from memory.web.forms.activity import ActivityFilters

ActivityPage = page_of(ActivityEventSerializer, "ActivityPage")

EVENT = {
    "id": "5b0f6c1e-93a4-4f7e-9d59-0c1f4d2b8a10",
    "kind": "search",
    "call": "AgentMemory.search",
    "time": "2026-12-05T09:30:00.123456+00:00",
    "caller": "support-bot",
    "caller_kind": "agent",
    "on_behalf_of": None,
    "scope": {"user_id": "alice", "agent_id": None, "thread_id": None},
    "request": {"query": "dietary restrictions", "user_id": "alice", "max_results": 3},
    "results": [
        {
            "record_id": "fact-vegetarian",
            "record_type": "fact",
            "rank": 1,
            "status": "valid",
            "version": 2,
            "scores": {"distance": 0.0, "vector_distance": 0.41, "vector_rank": 1, "keyword_score": 3.2, "score": 0.27},
            "tokens": 31,
            "hop": 0,
            "path": [],
        }
    ],
    "result_count": 1,
    "content": '<memory id="fact-vegetarian" type="fact" status="valid">Alice is vegetarian</memory>',
    "content_chars": 83,
    "truncated": False,
    "tokens": 31,
    "duration_ms": 4.2,
    "cause": None,
    "history_ref": None,
}
FILTERS = {
    "who": "Whose calls: `agents` (the default: agents, scripts and API tokens; `all` when `kind` is `view` "
    "or `export`), `people` (people's own dashboard calls) or `all`.",
    "kind": "Only calls of this kind: `search`, `card`, `summary`, `write`, or the audit's `view` (a record's "
    "page or GET by id) and `export` (a download of an export, one event per user it held).",
    "caller": "Only the calls of this caller (an agent's caller name, an API token's name, or a username).",
    "user_id": "Only calls made in this user's scope (with `kind=view` or `export`: who read this user's data).",
    "agent_id": "Only calls made in this agent's scope.",
    "thread_id": "Only calls made in this thread.",
    "record_id": "Only the calls that returned or changed this record.",
    "q": "Only searches whose query holds this text, in any case.",
    "since": "Only calls made at or after this time (UTC; a date alone is its start).",
    "until": "Only calls made before this time (UTC; a date alone takes in that whole day).",
}
EVENT_EXAMPLE = OpenApiExample("A search an agent made", value=EVENT, response_only=True)


def event_data(event) -> dict:
    """An ActivityEvent as the API answers it."""
    return ActivityEventSerializer(
        {
            **{name: getattr(event, name) for name in ActivityEventSerializer().fields if name != "results"},
            "results": [result.to_json() for result in event.results],
        }
    ).data


class ActivityList(EngineView):
    @extend_schema(
        operation_id="activity_list",
        summary="List the recorded calls",
        description="The calls made to memory, newest first, with the filters of the dashboard's timeline: "
        "`who` (agents by default; `people` for people's own dashboard calls, `all`), `kind`, `caller`, "
        "`user_id`, `agent_id`, `thread_id`, `q` (text in the query), `since` and `until` (UTC). Each call "
        "has its parameters, results in the order the caller got them with their scores, and its text.",
        parameters=form_parameters(ActivityFilters, descriptions=FILTERS),
        responses={200: ActivityPage, **errors_of(400)},
        tags=["activity"],
    )
    def get(self, request: Request) -> Response:
        form = query_form(ActivityFilters, request)
        try:
            page = self.agent_memory.list_activity(**form.engine_arguments())
        except ValueError as error:  # a cursor the API did not make, or a filter the engine refuses
            form.refuse(error)
            raise exceptions.ValidationError(form_errors(form)) from None
        return page_response(request, [event_data(event) for event in page], page.next_cursor)


class ActivityDetail(EngineView):
    @extend_schema(
        operation_id="activity_retrieve",
        summary="Get a recorded call",
        description="One call as its caller saw it: every parameter, every result in rank order with its "
        "score parts, hop and link path as they were, the text handed back and its tokens.",
        responses={200: ActivityEventSerializer, **errors_of(404)},
        examples=[EVENT_EXAMPLE],
        tags=["activity"],
    )
    def get(self, request: Request, event_id: str) -> Response:
        try:
            event = self.agent_memory.get_activity(event_id)
        except KeyError:
            raise exceptions.NotFound(f"No recorded call {event_id}.") from None
        return Response(event_data(event))
