"""The request bodies the API reads.

JSON bodies are capped at OAM_API_MAX_JSON_BYTES (docs/configuration.md: Limits), by their Content-Length before
a byte is read, and by what is actually read; over it the answer is a 413. A key given twice in
one object is a 400 naming it: JSON parsers differ on which one counts (Python's keeps the last),
so a body that says two things is refused rather than read one way. Django's
DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB) is the cap of the dashboard's forms: DRF 3.18 would apply it
to JSON too (it reads `request.body` for its own JSONParser and its subclasses), which leaves no
room for a message batch carrying a full-size image in base64 (13.4 MiB). So this parser is not a
subclass: DRF hands it the request's stream, and it reads at most the API's own limit.
"""

from __future__ import annotations

import codecs
import io
from collections import Counter
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from rest_framework import exceptions, parsers
from rest_framework.parsers import get_encoding
from rest_framework.utils import json

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


REPEATED = "Given more than once in the same object: send each key once."


def repeated_keys(data: Any, repeated: list[tuple[dict, str]]) -> dict[str, list[str]]:
    """The errors of the keys `repeated` names (object, key), each under its path in the body as
    the API's errors name nested fields (`messages[0].role`, `metadata.source`)."""
    paths = {id(item): path for item, path in walk(data)}
    return {join(paths[id(item)], key): [REPEATED] for item, key in repeated if id(item) in paths} or {
        "non_field_errors": [REPEATED]
    }


def walk(data: Any) -> Any:
    """(object, path) of every JSON object in `data`, iteratively (a body may nest deeply)."""
    pending = [(data, "")]
    while pending:
        item, path = pending.pop()
        if isinstance(item, dict):
            yield item, path
            pending.extend((value, join(path, key)) for key, value in item.items())
        elif isinstance(item, list):
            pending.extend((value, f"{path}[{index}]") for index, value in enumerate(item))


def join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class JSONParser(parsers.BaseParser):
    """DRF's JSON parsing, with its body capped at OAM_API_MAX_JSON_BYTES (a 413), a body nested
    deeper than Python's JSON decoder goes (a RecursionError, not a ValueError) a 400 like any other
    JSON it cannot read, not a 500, and a key repeated in one object a 400 under its path."""

    media_type = parsers.JSONParser.media_type
    renderer_class = parsers.JSONParser.renderer_class

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        limit = settings.OAM_API_MAX_JSON_BYTES
        request = (parser_context or {}).get("request")
        declared = content_length(request) if request is not None else 0
        if declared > limit:
            raise too_large(f"{declared:,}", limit)
        body = stream.read(limit + 1) if stream is not None else b""
        if len(body) > limit:
            raise too_large(f"over {limit:,}", limit)
        repeated: list[tuple[dict, str]] = []  # the objects are kept: their ids stay theirs

        def unique(pairs: list[tuple[str, Any]]) -> dict:
            item = dict(pairs)
            if len(item) < len(pairs):
                repeated.extend((item, key) for key, count in Counter(key for key, _ in pairs).items() if count > 1)
            return item

        text = codecs.getreader(get_encoding(parser_context or {}))(io.BytesIO(body))
        try:
            data = json.load(text, object_pairs_hook=unique)
        except ValueError as error:  # as DRF's JSONParser says it
            raise exceptions.ParseError(f"JSON parse error - {error}") from None
        except RecursionError:
            raise exceptions.ParseError("JSON parse error - the body is nested too deeply.") from None
        if repeated:
            raise exceptions.ValidationError(repeated_keys(data, repeated))
        return data
