"""Agent activity (/activity/): the timeline of recorded calls with its counts and chart, one call
as its agent saw it (/activity/<event_id>/), and Replay, the same call made today beside it
(/activity/<event_id>/replay/, a page of its own without JavaScript, swapped in place with htmx)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.vary import vary_on_headers

from memory.engine import AUDIT_KINDS, MEMORY_TYPES, RETRIEVAL_KINDS, ActivityEvent
from memory.queries.activity import (
    REPLAYED_CALLS,
    history_change,
    recorded_results,
    replay,
    timeline,
    write_summary,
)
from memory.services import get_agent_memory
from memory.views.common import render_page
from memory.web.access import viewer_required
from memory.web.filters import active_filters
from memory.web.forms.activity import KIND_LABELS, WHO, ActivityFilters


@viewer_required
@vary_on_headers("HX-Request")
def activity(request: HttpRequest) -> HttpResponse:
    form = ActivityFilters(request.GET)
    context: dict = {"form": form, "kind_labels": KIND_LABELS, "who_choices": WHO}
    if form.is_valid():
        try:
            context["timeline"] = timeline(get_agent_memory(), form)
        except ValueError as error:  # a cursor the engine did not make
            form.refuse(error)
    context["active_filters"] = active_filters(form, request.GET) if form.is_valid() else []
    context["whose"] = form.whose() if form.is_valid() else next(iter(WHO))
    return render_page(request, "activity/list.html", context, fragment="results", status=400 if form.errors else 200)


def event_page(request: HttpRequest, event_id: str, *, replaying: bool) -> HttpResponse:
    agent_memory = get_agent_memory()
    try:
        event = agent_memory.get_activity(event_id)
    except KeyError:
        return render(request, "activity/missing.html", {"event_id": event_id}, status=404)
    context = {
        "event": event,
        "results": recorded_results(agent_memory, event),
        "replayable": event.call in REPLAYED_CALLS,
        "retrieval": event.kind in RETRIEVAL_KINDS,
        "audit": event.kind in AUDIT_KINDS,
        "write": write_summary(event) if event.kind == "write" else None,
        "history_entries": history_change(event.history_ref),
        "request_items": request_items(event),
        "linked_count": sum(1 for result in event.results if result.hop),
        "memory_types": MEMORY_TYPES,
    }
    if replaying:
        context["replay"] = replay(agent_memory, event)
    return render_page(request, "activity/event.html", context, fragment="replay" if replaying else None)


def request_items(event: ActivityEvent) -> list[tuple[str, object]]:
    """Every parameter as passed, in the order the call took them (a write's operation is its heading)."""
    return [
        (name, value) for name, value in event.request.items() if not (event.kind == "write" and name == "operation")
    ]


@viewer_required
def activity_event(request: HttpRequest, event_id: str) -> HttpResponse:
    return event_page(request, event_id, replaying=False)


@viewer_required
@vary_on_headers("HX-Request")
def activity_replay(request: HttpRequest, event_id: str) -> HttpResponse:
    """The call made again today (unrecorded: nothing is written, so a GET), beside the recorded one."""
    return event_page(request, event_id, replaying=True)
