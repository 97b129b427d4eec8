"""/api/v1/memories/: list with the dashboard's filters, create, read, update and delete."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from memory.api.base import PRECONDITION, EngineView, expected_version, form_parameters, query_form, with_etag
from memory.api.paging import page_response
from memory.api.responses import errors_of
from memory.api.serializers.common import page_of
from memory.api.serializers.memories import MemoryCreateSerializer, MemorySerializer, MemoryUpdateSerializer
from memory.web.audit import viewed
from memory.web.filters import MemoryFilters

MemoryPage = page_of(MemorySerializer, "MemoryPage")


class MemoryList(EngineView):
    @extend_schema(
        operation_id="memories_list",
        summary="List memories",
        description="Memory records (facts, preferences, guidelines, memories), newest first unless "
        "`order=oldest`, filtered as in the dashboard's memory browser.",
        parameters=form_parameters(MemoryFilters),
        responses={200: MemoryPage, **errors_of(400)},
        tags=["memories"],
    )
    def get(self, request: Request) -> Response:
        form = query_form(MemoryFilters, request)
        page = self.agent_memory.list_memories(**form.engine_arguments())
        return page_response(request, MemorySerializer(page, many=True).data, page.next_cursor)

    @extend_schema(
        operation_id="memories_create",
        summary="Create a memory",
        description="Stores it (the history records who, with which token): 201 with the memory, its "
        "`Location` and its `ETag`.",
        request=MemoryCreateSerializer,
        responses={201: MemorySerializer, **errors_of(400, 409, 415)},
        examples=[
            OpenApiExample(
                "A preference of a user",
                value={"content": "Alice prefers window seats.", "memory_type": "preference", "user_id": "alice"},
                request_only=True,
            )
        ],
        tags=["memories"],
    )
    def post(self, request: Request) -> Response:
        fields = self.valid_body(MemoryCreateSerializer, id_as="memory_id")
        entry = self.curation().create_memory(**fields)
        record = self.agent_memory.get_memory(entry.object_id)
        return self.created(with_etag(Response(MemorySerializer(record).data), record.version), "api:memory", record.id)


class MemoryDetail(EngineView):
    @extend_schema(
        operation_id="memories_retrieve",
        summary="Get a memory",
        description="The memory, with its version as `ETag` (give it as `If-Match` to a later write).",
        responses={200: MemorySerializer, **errors_of(404)},
        tags=["memories"],
    )
    def get(self, request: Request, memory_id: str) -> Response:
        record = self.agent_memory.get_memory(memory_id)
        viewed(request, record)
        return with_etag(Response(MemorySerializer(record).data), record.version)

    @extend_schema(
        operation_id="memories_partial_update",
        summary="Update a memory",
        description="Writes the fields given (re-embedding new content). With `If-Match`, only if "
        "the memory is still at that ETag.",
        request=MemoryUpdateSerializer,
        parameters=[PRECONDITION],
        responses={200: MemorySerializer, **errors_of(400, 404, 412, 415)},
        examples=[
            OpenApiExample(
                "New content",
                value={"content": "Alice prefers aisle seats now."},
                request_only=True,
            ),
            OpenApiExample(
                "Retire it, and let it expire in 30 days",
                value={"status": "invalid", "ttl_days": 30},
                request_only=True,
            ),
        ],
        tags=["memories"],
    )
    def patch(self, request: Request, memory_id: str) -> Response:
        record = self.agent_memory.get_memory(memory_id)
        fields = self.valid_body(MemoryUpdateSerializer)
        version = expected_version(request, record.version)
        self.curation().update_memory(memory_id, version=version, **fields)
        record = self.agent_memory.get_memory(memory_id)
        return with_etag(Response(MemorySerializer(record).data), record.version)

    @extend_schema(
        operation_id="memories_destroy",
        summary="Delete a memory",
        description="Deletes it and its links; the history keeps a snapshot to restore them.",
        parameters=[PRECONDITION],
        responses={204: None, **errors_of(400, 404, 412)},
        tags=["memories"],
    )
    def delete(self, request: Request, memory_id: str) -> Response:
        record = self.agent_memory.get_memory(memory_id)
        version = expected_version(request, record.version)
        self.curation().delete_memory(memory_id, version=version)  # compared again inside the delete
        return Response(status=status.HTTP_204_NO_CONTENT)
