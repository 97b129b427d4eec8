"""The error responses an operation documents: each with the one error body (errors.py)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse

from memory.api.serializers import ErrorSerializer

MEANINGS = {
    400: "Invalid input: `errors` holds the message of each field or parameter.",
    401: "No credentials, or an unknown, revoked or expired token.",
    403: "The role does not allow it (viewers read, curators write).",
    404: "No such record: it does not exist, or it has expired.",
    409: "A record with this id already exists.",
    412: "The record changed since the ETag given in If-Match.",
    413: "The upload is over the size limits.",
    415: "The body's content type is not one this operation reads.",
    429: "Too many requests: slow down (Retry-After says for how long).",
    502: "The LLM the server asked failed: try again later.",
}
ALWAYS = (401, 403, 429)


def errors_of(*codes: int) -> dict[int, OpenApiResponse]:
    """The responses for these error statuses and those every operation can answer (401, 403, 429)."""
    return {code: OpenApiResponse(ErrorSerializer, description=MEANINGS[code]) for code in sorted({*codes, *ALWAYS})}
