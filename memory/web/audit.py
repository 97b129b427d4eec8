"""Record pages and GETs by id read, as the activity log's "view" events (the audit of who read what).

One call per record page or endpoint, after the record is read: the engine queues the event (ids
and scope, no text) and the page does not wait for it. The caller is whoever the request acts as
(ActivityCallerMiddleware: the signed-in person; EngineView: an API token, on behalf of its
owner). Only whole reads count: an htmx request that swaps part of a page already shown (more
messages of a thread) is that page's view, not another one.
"""

from __future__ import annotations

import re
from typing import Any

from django.http import HttpRequest

from memory.services import get_agent_memory

_PARAMETER = re.compile(r"<(?:\w+:)?(\w+)>")


def call_of(request: HttpRequest) -> str:
    """The page or endpoint as the log names it: "GET /memories/{memory_id}/" (its route, not
    the ids, which are the event's results)."""
    match = request.resolver_match
    route = _PARAMETER.sub(r"{\1}", match.route) if match is not None and match.route else request.path
    return f"{request.method} /{route.lstrip('/')}"


def viewed(request: HttpRequest, *records: Any, **scope: str) -> None:
    """Note that the caller of `request` read these records (the engine's) whole; `scope`
    (user_id, agent_id, thread_id) names whose data it was when no record does (a user's page)."""
    htmx = getattr(request, "htmx", None)
    if htmx and not htmx.boosted and not htmx.history_restore_request:
        return
    get_agent_memory().record_view(call_of(request), list(records), **scope)
