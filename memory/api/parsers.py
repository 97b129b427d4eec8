"""The request bodies the API reads.

JSON bodies are capped at OAM_API_MAX_JSON_BYTES (README: Limits), by their Content-Length before
a byte is read, and by what is actually read; over it the answer is a 413. Django's
DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB) is the cap of the dashboard's forms: DRF 3.18 would apply it
to JSON too (it reads `request.body` for its own JSONParser and its subclasses), which leaves no
room for a message batch carrying a full-size image in base64 (13.4 MiB). So this parser is not a
subclass: DRF hands it the request's stream, and it reads at most the API's own limit.
"""

from __future__ import annotations

import io
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from rest_framework import exceptions, parsers

from memory.api.errors import PayloadTooLarge


def content_length(request: HttpRequest | Any) -> int:
    """The request's declared body size (0 when missing or not a number)."""
    try:
        return max(int(request.META.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0


def too_large(size: int | str, limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"The JSON body is {size} bytes; the limit is {limit:,} bytes (OAM_API_MAX_JSON_BYTES). "
        "Send fewer messages or images per request."
    )


class JSONParser(parsers.BaseParser):
    """DRF's JSON parsing, with its body capped at OAM_API_MAX_JSON_BYTES (a 413), and a body nested
    deeper than Python's JSON decoder goes (a RecursionError, not a ValueError) a 400 like any other
    JSON it cannot read, not a 500."""

    media_type = parsers.JSONParser.media_type
    renderer_class = parsers.JSONParser.renderer_class

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        limit = settings.OAM_API_MAX_JSON_BYTES
        request = (parser_context or {}).get("request")
        declared = content_length(request) if request is not None else 0
        if declared > limit:
            raise too_large(f"{declared:,}", limit)
        if stream is not None:
            body = stream.read(limit + 1)
            if len(body) > limit:
                raise too_large(f"over {limit:,}", limit)
            stream = io.BytesIO(body)
        try:
            return parsers.JSONParser().parse(stream, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError("JSON parse error - the body is nested too deeply.") from None
