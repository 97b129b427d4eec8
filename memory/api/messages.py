"""/api/v1/threads/<id>/messages/: a thread's messages in order, by cursor or in the engine's windows
(`last_n`, seq_no ranges); add a batch as an agent would; read, edit and delete one message."""

from __future__ import annotations

import dataclasses
from typing import Any

from django import forms
from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import exceptions, status
from rest_framework.request import Request
from rest_framework.response import Response

from memory.api.base import PRECONDITION, EngineView, expected_version, form_parameters, query_form, with_etag
from memory.api.errors import IMAGE_TOO_LARGE
from memory.api.paging import page_response
from memory.api.responses import errors_of
from memory.api.serializers.common import page_of
from memory.api.serializers.messages import (
    MessageBatchResultSerializer,
    MessageBatchSerializer,
    MessageSerializer,
    MessageUpdateSerializer,
)
from memory.engine import MAX_INT, AgentMemory, MessageRecord, decode_cursor, encode_cursor
from memory.web.audit import viewed
from memory.web.filters import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, ListingForm
from memory.web.forms.search import optional_flag

MessagePage = page_of(MessageSerializer, "MessagePage")


def seq_no_field(help_text: str) -> forms.IntegerField:
    return forms.IntegerField(required=False, min_value=0, max_value=MAX_INT, help_text=help_text)


class ImageBytes(forms.Form):
    include_image_bytes = optional_flag("Image bytes", "true: image parts carry their bytes, base64. Default: no.")


class MessageWindow(ListingForm, ImageBytes):
    """Which of a thread's messages, in order: a page after `cursor`, or one of the windows of the
    engine's thread message listing (AgentMemory.list_thread_messages_by_seq_no), under its names."""

    last_n = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_PAGE_SIZE,
        help_text="The newest n messages (of the seq_no range, if one is given), in order, in one page; "
        "not with cursor or limit.",
    )
    range_start_seq_no = seq_no_field("The first seq_no of the range (included).")
    range_end_seq_no = seq_no_field("The end of the range: the first seq_no after it (excluded).")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("last_n") is not None:
            for name in ("cursor", "limit"):
                if data.get(name):
                    self.add_error(name, "last_n is a window of its own: give last_n, or limit and cursor.")
        start, end = data.get("range_start_seq_no"), data.get("range_end_seq_no")
        if start is not None and end is not None and end <= start:
            self.add_error("range_end_seq_no", "The range ends after it starts: range_end_seq_no > range_start_seq_no.")
        if data.get("cursor"):
            try:
                [data["after_seq_no"]] = decode_cursor(data["cursor"], (int,))
            except ValueError as error:
                self.add_error("cursor", str(error))
        return data


def message_page(agent_memory: AgentMemory, thread_id: str, data: dict[str, Any]) -> tuple[list[MessageRecord], Any]:
    """The messages of the window `data` asks for, in seq_no order, and the next page's cursor
    (the seq_no of the last message shown; None on the last page)."""
    start, end = data.get("range_start_seq_no"), data.get("range_end_seq_no")
    if data.get("last_n") is not None:
        records = agent_memory.list_thread_messages_by_seq_no(
            thread_id, last_n=data["last_n"], range_start_seq_no=start, range_end_seq_no=end
        )
        return records, None
    limit = data.get("limit") or DEFAULT_PAGE_SIZE
    low = max(start or 0, data["after_seq_no"] + 1 if "after_seq_no" in data else 0)
    # The position of the first message from `low` on; the listing goes by position, so it starts
    # one earlier (a message deleted meanwhile would shift the rest) and keeps the seq_nos asked for.
    first = agent_memory.count_thread_messages(thread_id, through_seq_no=low - 1) if low else 0
    rows = agent_memory.list_thread_messages(thread_id, start=max(0, first - 1), limit=limit + 2)
    rows = [row for row in rows if row.seq_no >= low and (end is None or row.seq_no < end)]
    page = rows[:limit]
    return page, encode_cursor(page[-1].seq_no) if len(rows) > limit else None


def message_data(agent_memory: AgentMemory, records: list[MessageRecord], *, include_image_bytes: bool = False) -> list:
    """Messages as MessageSerializer reads them: each image part with its image's type and
    description (and bytes, when asked), read in one listing."""
    image_ids = [part["id"] for record in records for part in record.parts or () if part.get("type") == "image"]
    images = {}
    if image_ids:
        listed = agent_memory.list_images(image_id=image_ids, include_bytes=include_image_bytes, limit=len(image_ids))
        images = {image.id: image for image in listed}
    return MessageSerializer([with_parts(record, images, include_image_bytes) for record in records], many=True).data


def with_parts(record: MessageRecord, images: dict[str, Any], include_image_bytes: bool) -> MessageRecord:
    if not record.parts:
        return record
    parts = []
    for part in record.parts:
        shown = {"type": part["type"], "id": part["id"], "timestamp": part.get("timestamp")}
        if part["type"] == "text":
            parts.append({**shown, "text": part.get("text", ""), "mime_type": None, "description": None})
            continue
        image = images.get(part["id"])
        shown.update(
            text=None,
            mime_type=image.mime_type.value if image is not None and image.mime_type else None,
            description=image.content if image is not None else None,
        )
        if include_image_bytes and image is not None and image.bytes is not None:
            shown["bytes"] = image.bytes
        parts.append(shown)
    return dataclasses.replace(record, parts=parts)


def one_message(agent_memory: AgentMemory, record: MessageRecord) -> Response:
    return with_etag(Response(message_data(agent_memory, [record])[0]), record.version)


ONE_PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNgYPgPAAEDAQAIicLsAAAAAElFTkSuQmCC"

TEXT_AND_IMAGE = {
    "messages": [
        {"role": "user", "content": "I'm vegetarian. Find me a quiet hotel in Lisbon.", "metadata": {"channel": "web"}},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Here is the street I liked."},
                {
                    "type": "image",
                    "bytes": ONE_PIXEL_PNG,
                    "mime_type": "image/png",
                    "description": "A tiled street in Alfama",
                },
            ],
        },
        {"role": "assistant", "content": "Príncipe Real is calm at night.", "timestamp": "2026-05-01T09:30:00Z"},
    ]
}


class MessageList(EngineView):
    @extend_schema(
        operation_id="threads_messages_list",
        summary="List a thread's messages",
        description="The thread's messages in order (seq_no), a page at a time (`cursor`, `limit`), or a "
        "window as the engine's thread listing takes it: `last_n` (the newest n) and the seq_no range "
        "[`range_start_seq_no`, `range_end_seq_no`). A range is paged too; `last_n` answers in one page.",
        parameters=form_parameters(MessageWindow),
        responses={200: MessagePage, **errors_of(400, 404)},
        tags=["messages"],
    )
    def get(self, request: Request, thread_id: str) -> Response:
        self.agent_memory.get_thread_record(thread_id)  # 404 for a thread that does not exist
        data = query_form(MessageWindow, request).cleaned_data
        records, next_cursor = message_page(self.agent_memory, thread_id, data)
        results = message_data(self.agent_memory, records, include_image_bytes=bool(data.get("include_image_bytes")))
        return page_response(request, results, next_cursor)

    @extend_schema(
        operation_id="threads_messages_create",
        summary="Add messages to a thread",
        description="Appends a batch of messages as the thread's agent would (the engine's "
        "Thread.add_messages): each a string or a list of text and image parts, images in base64. "
        "The engine checks every message and image before it stores any: a batch is stored whole or "
        "not at all. The thread's LLM work (memory extraction, summary) follows as for the agent. "
        "Location: the batch's messages, as a seq_no range of the list.",
        request=MessageBatchSerializer,
        responses={
            201: MessageBatchResultSerializer,
            **errors_of(400, 404, 409, 413, 415, meanings={413: "An image is over the size limits (bytes or pixels)."}),
        },
        examples=[OpenApiExample("Text, and text with an image", value=TEXT_AND_IMAGE, request_only=True)],
        tags=["messages"],
    )
    def post(self, request: Request, thread_id: str) -> Response:
        self.agent_memory.get_thread_record(thread_id)
        batch = self.valid_body(MessageBatchSerializer)["messages"]
        try:
            entries = self.curation().add_messages(thread_id, [dict(item) for item in batch])
        except ValueError as error:
            raise_under_messages(error)
        records = [self.agent_memory.get_message_record(thread_id, entry.object_id) for entry in entries]
        response = Response({"messages": message_data(self.agent_memory, records)}, status=status.HTTP_201_CREATED)
        seq_nos = [record.seq_no for record in records]
        response["Location"] = (
            reverse("api:thread_messages", args=[thread_id])
            + f"?range_start_seq_no={min(seq_nos)}&range_end_seq_no={max(seq_nos) + 1}"
        )
        return response


def raise_under_messages(error: ValueError) -> None:
    """The engine's refusal of a batch ("messages[1].content…", "timestamps[0]…", "image is not a
    readable image…") as a 400 under `messages`; a taken id (409) and an image over the limits
    (413) as the exception handler says them."""
    message = str(error)
    if "already exists" in message or IMAGE_TOO_LARGE.search(message):
        raise error
    raise exceptions.ValidationError({"messages": [message]}) from None


class MessageDetail(EngineView):
    @extend_schema(
        operation_id="threads_messages_retrieve",
        summary="Get a message",
        parameters=form_parameters(ImageBytes),
        responses={200: MessageSerializer, **errors_of(400, 404)},
        tags=["messages"],
    )
    def get(self, request: Request, thread_id: str, message_id: str) -> Response:
        record = self.agent_memory.get_message_record(thread_id, message_id)
        flags = query_form(ImageBytes, request).cleaned_data
        data = message_data(self.agent_memory, [record], include_image_bytes=bool(flags.get("include_image_bytes")))
        viewed(request, record)
        return with_etag(Response(data[0]), record.version)

    @extend_schema(
        operation_id="threads_messages_partial_update",
        summary="Update a message",
        description="Writes the fields given (re-embedding new text). New `content` replaces the "
        "message's text; its images stay. With `If-Match`, only if the message is still at that ETag.",
        request=MessageUpdateSerializer,
        parameters=[PRECONDITION],
        responses={200: MessageSerializer, **errors_of(400, 404, 412, 415)},
        examples=[
            OpenApiExample(
                "A corrected message",
                value={"content": "I'm vegetarian. Find me a quiet hotel in Porto.", "metadata": {"edited": True}},
                request_only=True,
            )
        ],
        tags=["messages"],
    )
    def patch(self, request: Request, thread_id: str, message_id: str) -> Response:
        record = self.agent_memory.get_message_record(thread_id, message_id)
        fields = self.valid_body(MessageUpdateSerializer, context={"stored_role": record.role})
        version = expected_version(request, record.version)
        self.curation().update_message(thread_id, message_id, version=version, **fields)
        return one_message(self.agent_memory, self.agent_memory.get_message_record(thread_id, message_id))

    @extend_schema(
        operation_id="threads_messages_destroy",
        summary="Delete a message",
        description="Deletes it and its images (memories extracted from it stay); the history keeps a "
        "snapshot to restore them.",
        parameters=[PRECONDITION],
        responses={204: None, **errors_of(400, 404, 412)},
        tags=["messages"],
    )
    def delete(self, request: Request, thread_id: str, message_id: str) -> Response:
        record = self.agent_memory.get_message_record(thread_id, message_id)
        version = expected_version(request, record.version)
        self.curation().delete_message(thread_id, message_id, version=version)  # compared again inside the delete
        return Response(status=status.HTTP_204_NO_CONTENT)
