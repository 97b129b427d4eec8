"""Cursor paging: every list answers `{"results": [...], "next": <URL of the next page or null>}`.

The cursor is the engine's (opaque, checked by the engine) or, for the history, an entry id: a page
stays right while records are added, which offsets cannot promise. `limit` sets the page size.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param


def page_response(request: Request, results: Iterable[Any], next_cursor: Any) -> Response:
    next_url = None
    if next_cursor is not None:
        next_url = replace_query_param(request.build_absolute_uri(), "cursor", str(next_cursor))
    return Response({"results": list(results), "next": next_url})
