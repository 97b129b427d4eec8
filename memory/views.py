"""Dashboard pages: parse the request, call the engine, render. Every page requires a login."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render

from memory.engine import ThreadRecord
from memory.services import get_agent_memory

THREADS_PER_PAGE = 25
MAX_THREADS_PER_PAGE = 100


def _page_size(request: HttpRequest) -> int:
    """`?limit=` within 1..MAX_THREADS_PER_PAGE; anything unparsable means the default."""
    try:
        limit = int(request.GET.get("limit", THREADS_PER_PAGE))
    except ValueError:
        return THREADS_PER_PAGE
    return min(max(limit, 1), MAX_THREADS_PER_PAGE)


@dataclass(frozen=True)
class ThreadRow:
    """A thread as the list shows it: the engine's ISO timestamp as a datetime, metadata as text."""

    thread: ThreadRecord
    updated_at: datetime | None
    metadata: list[tuple[str, str]]

    @classmethod
    def of(cls, thread: ThreadRecord) -> ThreadRow:
        updated_at = datetime.fromisoformat(thread.updated_at) if thread.updated_at else None
        metadata = [(key, _as_text(value)) for key, value in (thread.metadata or {}).items()]
        return cls(thread, updated_at, metadata)


def _as_text(value: Any) -> str:
    """Strings as themselves; lists, objects and numbers as compact JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@login_required
def thread_list(request: HttpRequest) -> HttpResponse:
    """The store's threads, latest activity first, one cursor page at a time."""
    cursor = request.GET.get("cursor") or None
    try:
        threads = get_agent_memory().list_threads(limit=_page_size(request), cursor=cursor)
    except ValueError:
        # A cursor is opaque; one that was edited or comes from another store is rejected.
        return HttpResponseBadRequest("Invalid or expired page cursor.")
    return render(
        request,
        "memory/thread_list.html",
        {
            "rows": [ThreadRow.of(thread) for thread in threads],
            "next_cursor": threads.next_cursor,
            "is_first_page": cursor is None,
        },
    )
