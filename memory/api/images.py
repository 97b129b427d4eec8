"""/api/v1/images/: list by scope, upload (multipart), read, describe and annotate, delete, and the
image's bytes with their stored content type (/api/v1/images/<id>/content/)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from memory.api.base import PRECONDITION, EngineView, expected_version, form_parameters, query_form, with_etag
from memory.api.errors import Conflict, PayloadTooLarge
from memory.api.paging import page_response
from memory.api.parsers import content_length
from memory.api.responses import errors_of
from memory.api.serializers.common import page_of
from memory.api.serializers.images import IMAGE_TYPES, ImageSerializer, ImageUpdateSerializer, ImageUploadSerializer
from memory.models import ObjectKind
from memory.web.audit import viewed
from memory.web.filters import ImageFilters

ImagePage = page_of(ImageSerializer, "ImagePage")
UNDECLARED = ("", "application/octet-stream")
"""A file part's content type that says nothing (curl's for an unknown extension): the bytes decide."""


def image_response(request: Request, record: Any, status_code: int = status.HTTP_200_OK) -> Response:
    response = Response(ImageSerializer(record, context={"request": request}).data, status=status_code)
    return with_etag(response, record.version)


class ImageList(EngineView):
    parser_classes = (MultiPartParser,)

    @extend_schema(
        operation_id="images_list",
        summary="List images",
        description="Image records in store order (their bytes at each one's `content_url`), filtered "
        "exactly by scope and metadata.",
        parameters=form_parameters(ImageFilters),
        responses={200: ImagePage, **errors_of(400)},
        tags=["images"],
    )
    def get(self, request: Request) -> Response:
        form = query_form(ImageFilters, request)
        page = self.agent_memory.list_images(**form.engine_arguments())
        data = ImageSerializer(page, many=True, context={"request": request}).data
        return page_response(request, data, page.next_cursor)

    @extend_schema(
        operation_id="images_create",
        summary="Upload an image",
        description="A `multipart/form-data` upload of one PNG, JPEG or WebP image (file field `image`), into a "
        "thread (as an image record, or as a new message holding it: `add_as=message`) or, without a "
        "thread, for a user and/or agent. The store checks the bytes, not the file name: over its size "
        "limits is a 413, anything but a still PNG, JPEG or WebP image a 415. Answers the image record.",
        request={"multipart/form-data": ImageUploadSerializer},
        responses={
            201: ImageSerializer,
            **errors_of(
                400,
                409,
                413,
                415,
                meanings={
                    413: "The upload, or the image, is over the size limits (bytes or pixels).",
                    415: "The body is not multipart/form-data, or the file is not a still PNG, JPEG or WebP image.",
                },
            ),
        },
        examples=[
            OpenApiExample(
                "A scanned map into a thread",
                value={
                    "image": "(the file: map.png)",
                    "thread_id": "trip-42",
                    "description": "A hand-drawn map of Lisbon",
                    "metadata": '{"source": "scan"}',
                },
                request_only=True,
                media_type="multipart/form-data",  # the examples shown are those of the body's media type
            )
        ],
        tags=["images"],
    )
    def post(self, request: Request) -> Response:
        limits = self.agent_memory.image_input_limit_config
        slack = settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0  # the other fields and the multipart framing
        length = content_length(request)
        if length > limits.max_raw_image_bytes + slack:
            raise PayloadTooLarge(f"The upload is {length} bytes; an image may have {limits.max_raw_image_bytes}.")
        fields = self.valid_body(ImageUploadSerializer)
        upload = fields.pop("image")
        if upload.size > limits.max_raw_image_bytes:
            raise PayloadTooLarge(f"image is {upload.size} bytes; the limit is {limits.max_raw_image_bytes}")
        declared = (upload.content_type or "").lower()
        if declared not in IMAGE_TYPES + UNDECLARED:
            raise exceptions.UnsupportedMediaType(
                declared, f"{declared} is not an image type the store keeps: send PNG, JPEG or WebP."
            )
        thread_id = fields.pop("thread_id", None) or None
        entry = self.curation().add_image(
            thread_id,
            upload.read(),
            description=fields.pop("description", ""),
            image_id=fields.pop("id", None),
            **fields,
        )
        image_id = entry.object_id
        if entry.object_kind == ObjectKind.MESSAGE:  # the image is the new message's image part
            message = self.agent_memory.get_message_record(thread_id, entry.object_id)
            image_id = next(part["id"] for part in message.parts or () if part.get("type") == "image")
        record = self.agent_memory.get_image(image_id)
        return self.created(image_response(request, record), "api:image", record.id)


class ImageDetail(EngineView):
    @extend_schema(
        operation_id="images_retrieve",
        summary="Get an image's record",
        responses={200: ImageSerializer, **errors_of(404)},
        tags=["images"],
    )
    def get(self, request: Request, image_id: str) -> Response:
        record = self.agent_memory.get_image(image_id)
        viewed(request, record)
        return image_response(request, record)

    @extend_schema(
        operation_id="images_partial_update",
        summary="Describe or annotate an image",
        description="Writes its description (re-embedded: it is the searchable text) and/or metadata. "
        "With `If-Match`, only if the image is still at that ETag.",
        request=ImageUpdateSerializer,
        parameters=[PRECONDITION],
        responses={200: ImageSerializer, **errors_of(400, 404, 412, 415)},
        examples=[
            OpenApiExample(
                "A better description",
                value={"description": "A hand-drawn map of Lisbon's Alfama", "metadata": {"source": "scan"}},
                request_only=True,
            )
        ],
        tags=["images"],
    )
    def patch(self, request: Request, image_id: str) -> Response:
        record = self.agent_memory.get_image(image_id)
        fields = self.valid_body(ImageUpdateSerializer)
        version = expected_version(request, record.version)
        self.curation().update_image(image_id, version=version, **fields)
        return image_response(request, self.agent_memory.get_image(image_id))

    @extend_schema(
        operation_id="images_destroy",
        summary="Delete an image",
        description="Deletes a standalone image with its bytes; the history keeps a snapshot to restore it. "
        "An image that is part of a message goes with its message (409).",
        parameters=[PRECONDITION],
        responses={
            204: None,
            **errors_of(
                400, 404, 409, 412, meanings={409: "The image is part of a message: it goes with the message."}
            ),
        },
        tags=["images"],
    )
    def delete(self, request: Request, image_id: str) -> Response:
        record = self.agent_memory.get_image(image_id)
        version = expected_version(request, record.version)
        if record.message_id is not None:
            raise Conflict(f"This image is part of message {record.message_id}: edit or delete the message instead.")
        self.curation().delete_image(image_id, version=version)  # compared again inside the delete
        return Response(status=status.HTTP_204_NO_CONTENT)


BINARY = OpenApiResponse(OpenApiTypes.BINARY, description="The image's bytes, with their stored content type.")


class ImageContent(EngineView):
    """The bytes are sent whatever `Accept` asks for (an `image/*` client included); errors in
    JSON (EngineView's AnyAccept)."""

    @extend_schema(
        operation_id="images_content",
        summary="Get an image's bytes",
        description="The stored bytes, with the stored content type (never sniffed: `nosniff`) and the image's ETag.",
        responses={**{(200, media_type): BINARY for media_type in IMAGE_TYPES}, **errors_of(404)},
        tags=["images"],
    )
    def get(self, request: Request, image_id: str) -> HttpResponse:
        record = self.agent_memory.get_image(image_id, include_bytes=True)
        viewed(request, record)
        response = HttpResponse(record.bytes, content_type=record.mime_type.value.lower())
        response["X-Content-Type-Options"] = "nosniff"
        response["Content-Security-Policy"] = "default-src 'none'; sandbox"
        response["Content-Disposition"] = "inline"
        response["Cache-Control"] = "private, max-age=300"
        return with_etag(response, record.version)
