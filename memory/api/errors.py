"""Every API error as one JSON shape, and the engine's exceptions as HTTP statuses.

    {"detail": "What went wrong.", "errors": {"field": ["message", ...]}}

`errors` comes with a 400 only: each message under the parameter or field it is about
(`non_field_errors` for the request as a whole). The engine's errors map as the dashboard's do:
KeyError → 404 (the record does not exist, or has expired), a duplicate id → 409, a stale version →
412, any other ValueError or TypeError → 400 under the field it names. DRF's own exceptions keep
their status (401, 403, 405, 415, 429…). A JSON body over OAM_API_MAX_JSON_BYTES (memory.api.parsers)
or a form body over Django's DATA_UPLOAD_MAX_MEMORY_SIZE is a 413
(PayloadTooLarge, as an image over the engine's limits is), too many fields or files a 400; an
image the engine cannot read (not PNG, JPEG or WebP, animated, damaged) is a 415.
"""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from memory.engine import StaleVersionError
from memory.web.engine_errors import NON_FIELD, field_errors, flatten


class PreconditionFailed(exceptions.APIException):
    status_code = status.HTTP_412_PRECONDITION_FAILED
    default_detail = "The record changed since the ETag given in If-Match: read it again."
    default_code = "precondition_failed"


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "A record with this id already exists."
    default_code = "conflict"


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is over the size limits."
    default_code = "payload_too_large"


IMAGE_TOO_LARGE = re.compile(r"\bimage is (\d+ bytes|\d+x\d+ pixels); the limit is|\bexceeds limit\b")
"""The engine's image checks (memory.engine.images.check_image) refusing an image over its limits."""
IMAGE_UNREADABLE = re.compile(
    r"\bimage is not a readable image|\bunsupported image format|\banimated \w+ images are not supported"
    r"|\bdamaged image|\bmime_type says \S+ but the bytes are"
)
"""… and an image it cannot read as one of the types it keeps."""


def engine_error(error: Exception, context: dict[str, Any]) -> exceptions.APIException | None:
    """The API exception for an exception the engine (or the curation service) raised."""
    if isinstance(error, RequestDataTooBig):
        return PayloadTooLarge(f"{PayloadTooLarge.default_detail} ({error})")
    if isinstance(error, TooManyFieldsSent | TooManyFilesSent):
        return exceptions.ParseError(str(error))
    if isinstance(error, StaleVersionError):
        return PreconditionFailed(f"{PreconditionFailed.default_detail} ({error})")
    if isinstance(error, KeyError):
        return exceptions.NotFound(str(error.args[0]) if error.args else "Not found.")
    if isinstance(error, ValueError) and "already exists" in str(error):
        return Conflict(str(error))
    if isinstance(error, ValueError) and IMAGE_TOO_LARGE.search(str(error)):
        return PayloadTooLarge(str(error))
    if isinstance(error, ValueError) and IMAGE_UNREADABLE.search(str(error)):
        return exceptions.UnsupportedMediaType("image", f"{error}: send a PNG, JPEG or WebP image.")
    if isinstance(error, ValueError | TypeError):
        request = context.get("request")
        names = set(request.data.keys()) | set(request.query_params.keys()) if request is not None else set()
        field, message = field_errors(ValueError(str(error)), names)
        if field is None:  # "invalid cursor: …": the parameter named anywhere in the message
            field = next((name for name in sorted(names) if re.search(rf"\b{re.escape(name)}\b", message)), None)
        return exceptions.ValidationError({field or NON_FIELD: [message]})
    return None


def handle(error: Exception, context: dict[str, Any]) -> Response | None:
    if not isinstance(error, exceptions.APIException | Http404 | PermissionDenied):
        error = engine_error(error, context) or error
    response = exception_handler(error, context)
    if response is None:
        return None
    if isinstance(error, exceptions.ValidationError):
        errors = flatten(error.detail)
        first = next(iter(errors.values()))[0] if errors else "Invalid input."
        response.data = {"detail": f"Invalid input: {first}", "errors": errors}
    elif isinstance(response.data, dict) and "detail" in response.data:
        response.data = {"detail": str(response.data["detail"])}
    return response


def form_too_large_message(request: HttpRequest) -> str:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0
    if request.path == reverse("memory:memory_bulk"):
        return (
            f"The selection's ids are over {limit:,} bytes, the most the site reads of a form "
            f"(DATA_UPLOAD_MAX_MEMORY_SIZE). {LARGE_SELECTIONS}"
        )
    return (
        f"The request's form fields are over {limit:,} bytes, the most the site reads "
        "(DATA_UPLOAD_MAX_MEMORY_SIZE; files are counted apart). Text fields hold up to 1,000,000 characters, "
        "but characters beyond ASCII take up to 12 bytes each once a browser encodes them: split the text, "
        "or send it through the REST API as JSON."
    )


LARGE_SELECTIONS = (
    "To act on more memories at once, use “Act on every memory these filters match” in the memory list "
    "(up to 20,000), or select them on a user's embedding map with JavaScript on (it sends up to 10,000 "
    "as one field); or act on part of them at a time."
)


def too_many_fields_message(request: HttpRequest) -> str:
    limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS or 0
    message = f"The request has more than {limit:,} fields, the most the site reads (DATA_UPLOAD_MAX_NUMBER_FIELDS)."
    if request.path == reverse("memory:memory_bulk"):
        return f"{message} Each ticked box is one field. {LARGE_SELECTIONS}"
    return message


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """The site's handler400. Django refuses these before any view runs (even CSRF's check), so
    they are answered here, saying the limit and what to do: a body over
    DATA_UPLOAD_MAX_MEMORY_SIZE is a 413, more fields than DATA_UPLOAD_MAX_NUMBER_FIELDS (over a
    thousand ticked boxes) a 400, as JSON under /api/. Any other bad request is Django's plain 400."""
    if isinstance(exception, RequestDataTooBig):
        message, heading, code = form_too_large_message(request), "The form is too large", 413
    elif isinstance(exception, TooManyFieldsSent):
        message, heading, code = too_many_fields_message(request), "The form has too many fields", 400
    else:
        return defaults.bad_request(request, exception)
    if request.path.startswith("/api/"):
        detail = f"{PayloadTooLarge.default_detail} ({exception})" if code == 413 else message
        return JsonResponse({"detail": detail}, status=code)
    return render(request, "errors/too_large.html", {"message": message, "heading": heading}, status=code)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """The site's handler404: under /api/, a 404 in the API's error body (a path no view takes: a
    history entry id that is not a number, an id no record can have, over 512 bytes in UTF-8), not
    the dashboard's HTML page."""
    if request.path.startswith("/api/"):
        return JsonResponse(
            {"detail": "Not found: no such resource, or an id no record can have."}, status=status.HTTP_404_NOT_FOUND
        )
    return defaults.page_not_found(request, exception)
