"""/api/v1/threads/: list with the dashboard's filters, create, read, update metadata, delete."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from memory.api.base import PRECONDITION, EngineView, expected_version, form_parameters, query_form, with_etag
from memory.api.paging import page_response
from memory.api.responses import errors_of
from memory.api.serializers.common import page_of
from memory.api.serializers.threads import ThreadCreateSerializer, ThreadSerializer, ThreadUpdateSerializer
from memory.web.audit import viewed
from memory.web.filters import ThreadFilters

ThreadPage = page_of(ThreadSerializer, "ThreadPage")


class ThreadList(EngineView):
    @extend_schema(
        operation_id="threads_list",
        summary="List threads",
        description="Threads, latest activity first, filtered as in the dashboard's thread list.",
        parameters=form_parameters(ThreadFilters),
        responses={200: ThreadPage, **errors_of(400)},
        tags=["threads"],
    )
    def get(self, request: Request) -> Response:
        form = query_form(ThreadFilters, request)
        page = self.agent_memory.list_threads(**form.engine_arguments())
        return page_response(request, ThreadSerializer(page, many=True).data, page.next_cursor)

    @extend_schema(
        operation_id="threads_create",
        summary="Create a thread",
        description="A new thread, as the engine makes one: an omitted id, user_id or agent_id is a new "
        "UUID; null leaves the thread without a user or agent.",
        request=ThreadCreateSerializer,
        responses={201: ThreadSerializer, **errors_of(400, 409, 415)},
        examples=[
            OpenApiExample(
                "A trip planning conversation",
                value={"id": "trip-42", "user_id": "alice", "agent_id": "atlas", "metadata": {"topic": "travel"}},
                request_only=True,
            )
        ],
        tags=["threads"],
    )
    def post(self, request: Request) -> Response:
        fields = self.valid_body(ThreadCreateSerializer, id_as="thread_id")
        entry = self.curation().create_thread(**fields)
        thread = self.agent_memory.get_thread_record(entry.object_id)
        return self.created(with_etag(Response(ThreadSerializer(thread).data), thread.version), "api:thread", thread.id)


class ThreadDetail(EngineView):
    @extend_schema(
        operation_id="threads_retrieve",
        summary="Get a thread",
        responses={200: ThreadSerializer, **errors_of(404)},
        tags=["threads"],
    )
    def get(self, request: Request, thread_id: str) -> Response:
        thread = self.agent_memory.get_thread_record(thread_id)
        viewed(request, thread)
        return with_etag(Response(ThreadSerializer(thread).data), thread.version)

    @extend_schema(
        operation_id="threads_partial_update",
        summary="Update a thread's metadata",
        description="Replaces the metadata. With `If-Match`, only if the thread is still at that ETag.",
        request=ThreadUpdateSerializer,
        parameters=[PRECONDITION],
        responses={200: ThreadSerializer, **errors_of(400, 404, 412, 415)},
        examples=[
            OpenApiExample(
                "New metadata", value={"metadata": {"topic": "travel", "status": "booked"}}, request_only=True
            )
        ],
        tags=["threads"],
    )
    def patch(self, request: Request, thread_id: str) -> Response:
        thread = self.agent_memory.get_thread_record(thread_id)
        fields = self.valid_body(ThreadUpdateSerializer)
        version = expected_version(request, thread.version)
        self.curation().update_thread(thread_id, metadata=fields["metadata"], version=version)
        thread = self.agent_memory.get_thread_record(thread_id)
        return with_etag(Response(ThreadSerializer(thread).data), thread.version)

    @extend_schema(
        operation_id="threads_destroy",
        summary="Delete a thread",
        description="Deletes it with its messages, memories, images and links; the history keeps a "
        "snapshot to restore them.",
        parameters=[PRECONDITION],
        responses={204: None, **errors_of(400, 404, 412)},
        tags=["threads"],
    )
    def delete(self, request: Request, thread_id: str) -> Response:
        thread = self.agent_memory.get_thread_record(thread_id)
        version = expected_version(request, thread.version)
        self.curation().delete_thread(thread_id, version=version)  # compared again inside the delete
        return Response(status=status.HTTP_204_NO_CONTENT)
