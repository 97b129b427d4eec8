"""/api/v1/history/: the curation history (every change made through the dashboard or the API),
filtered as the dashboard's history page filters it, one entry, and undoing one."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response

from memory.api.base import EngineView, form_parameters, query_form
from memory.api.errors import Conflict
from memory.api.paging import page_response
from memory.api.responses import errors_of
from memory.api.serializers.common import page_of
from memory.api.serializers.history import HistoryEntrySerializer
from memory.models import CurationEntry
from memory.queries.history import history_page
from memory.web.filters import HistoryFilters

HistoryEntryPage = page_of(HistoryEntrySerializer, "HistoryEntryPage")

ENTRY = {
    "id": 42,
    "at": "2025-05-01T09:30:00.123456Z",
    "actor": "carl",
    "via": "api",
    "token_name": "nightly-cleanup",
    "object_kind": "memory",
    "object_id": "fact-vegetarian",
    "thread_id": "trip-42",
    "action": "update",
    "summary": "Edited the memory",
    "before": {"id": "fact-vegetarian", "content": "Alice is vegetarian", "version": 1},
    "after": {"id": "fact-vegetarian", "content": "Alice is vegetarian.", "version": 2},
    "reverts": None,
}
ENTRY_EXAMPLE = OpenApiExample("A memory edited with a token", value=ENTRY, response_only=True)
PAGE_EXAMPLE = OpenApiExample(
    "A page of the history",
    value={"results": [ENTRY], "next": "https://oam.example/api/v1/history/?actor=carl&limit=1&cursor=42"},
    response_only=True,
)


def entry_of(entry_id: int) -> CurationEntry:
    try:
        return CurationEntry.objects.select_related("reverts").get(pk=entry_id)
    except CurationEntry.DoesNotExist:
        raise exceptions.NotFound(f"No history entry {entry_id}.") from None


def entry_response(entry: CurationEntry, **kwargs) -> Response:
    return Response(HistoryEntrySerializer(entry).data, **kwargs)


class HistoryList(EngineView):
    @extend_schema(
        operation_id="history_list",
        summary="List the curation history",
        description="Every change made through the dashboard or the API, newest first, filtered as on the "
        "dashboard's history page. `record_id`: the changes of one record and of the links that join it. "
        "`since` and `until` are ISO 8601 times (without a zone: the server's).",
        parameters=form_parameters(
            HistoryFilters,
            descriptions={
                "user_id": "A user's id: the changes to anything they own (their profile, threads, messages, "
                "memories and images, and the links that join their memories)",
                "agent_id": "An agent's id: the changes to anything it owns, as for a user",
            },
        ),
        responses={200: HistoryEntryPage, **errors_of(400)},
        examples=[PAGE_EXAMPLE],
        tags=["history"],
    )
    def get(self, request: Request) -> Response:
        form = query_form(HistoryFilters, request)
        entries, next_cursor = history_page(form)
        return page_response(request, HistoryEntrySerializer(entries, many=True).data, next_cursor)


class HistoryDetail(EngineView):
    @extend_schema(
        operation_id="history_retrieve",
        summary="Get a history entry",
        description="One change, with its object before and after (a delete keeps the snapshot of everything "
        "that went with it, which a revert restores).",
        responses={200: HistoryEntrySerializer, **errors_of(404)},
        examples=[ENTRY_EXAMPLE],
        tags=["history"],
    )
    def get(self, request: Request, entry_id: int) -> Response:
        return entry_response(entry_of(entry_id))


class HistoryRevert(EngineView):
    @extend_schema(
        operation_id="history_revert",
        summary="Undo a change",
        description="Undoes the change as the dashboard's undo does: restores what a delete removed (with its "
        "ids and links), deletes what a create added, writes back the values an update replaced (only those). "
        "The undo is itself a change: answered 201 with its new entry, whose `reverts` is this one. 409 when "
        "the store no longer allows it (the object is gone, or is back already), with the reason.",
        request=None,
        responses={
            201: HistoryEntrySerializer,
            **errors_of(404, 409, meanings={409: "The store no longer allows the undo: `detail` says why."}),
        },
        tags=["history"],
    )
    def post(self, request: Request, entry_id: int) -> Response:
        entry = entry_of(entry_id)
        try:
            done = self.curation().revert(entry)
        except KeyError:
            raise Conflict(f"The {entry.object_kind} is gone, so there is nothing to undo.") from None
        except ValueError as error:  # the engine's, or the curation service's reason (CurationError)
            raise Conflict(f"This change cannot be undone: {error}") from None
        return self.created(entry_response(done), "api:history_entry", done.pk)
