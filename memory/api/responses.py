"""The error responses an operation documents: each with the one error body (errors.py)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse

from memory.api.serializers.common import ErrorSerializer

MEANINGS = {
    400: "Invalid input: `errors` holds the message of each field or parameter (`If-Match` included).",
    401: "No credentials, or an unknown, revoked or expired token.",
    403: "The role does not allow it (viewers read, curators write).",
    404: "No such record: it does not exist, it has expired, or no record can have its id (over 512 bytes in UTF-8).",
    409: "A record with this id already exists.",
    412: "The record changed since the ETag given in If-Match.",
    413: "The request body, or an image in it, is over the size limits (docs/configuration.md: Limits).",
    415: "The body's content type is not one this operation reads.",
    429: "Too many requests: slow down (Retry-After says for how long).",
    502: "The LLM the server asked failed: try again later.",
}
ALWAYS = (401, 403, 429)


def errors_of(*codes: int, meanings: dict[int, str] | None = None) -> dict[int, OpenApiResponse]:
    """The responses for these error statuses and those every operation can answer (401, 403, 429);
    `meanings`: what a status means for this operation, where it says more than MEANINGS. An
    operation that reads a body (it documents 415) can also find it too large: 413."""
    meanings = {**MEANINGS, **(meanings or {})}
    codes = {*codes, *ALWAYS, *((413,) if 415 in codes else ())}
    return {code: OpenApiResponse(ErrorSerializer, description=meanings[code]) for code in sorted(codes)}
