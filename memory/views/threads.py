"""Threads: the list (/threads/), a thread's page with its timeline, and its metadata and delete
actions. Messages have their own module."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django.views.decorators.vary import vary_on_headers

from memory.models import CurationEntry, ObjectKind, SavedView
from memory.queries.facets import thread_facets
from memory.queries.thread_activity import thread_calls
from memory.services import get_agent_memory
from memory.views.common import Confirmed, confirm_delete, curation, gone, refuse, render_page, saved, submit
from memory.views.saved_views import saved_views_of
from memory.web.access import curator_required, viewer_required
from memory.web.audit import viewed
from memory.web.filters import ThreadFilters, active_filters
from memory.web.forms.records import ThreadMetadataForm

MESSAGES_PER_PAGE = 50
THREAD_MEMORIES_SHOWN = 50


@viewer_required
@vary_on_headers("HX-Request")
def thread_list(request: HttpRequest) -> HttpResponse:
    """Threads, latest activity first, filtered by owner, metadata and text; cursor-paged. With
    `facets=1`, their total and facets too (fetched after the page, as the memory list's)."""
    form = ThreadFilters(request.GET)
    page, facets, status = [], None, 200
    if form.is_valid():
        agent_memory, arguments = get_agent_memory(), form.engine_arguments()
        try:
            page = agent_memory.list_threads(**arguments)
            if request.GET.get("facets") == "1":
                facets = thread_facets(agent_memory, arguments, request.GET)
        except ValueError as error:  # a cursor from elsewhere, or a filter past the engine's limits
            refuse(form, error)
    if form.errors:
        status = 400
    return render_page(
        request,
        "threads/list.html",
        {
            "form": form,
            "threads": page,
            "facets": facets,
            "saved_views": saved_views_of(request, SavedView.Listing.THREADS),
            "listing": SavedView.Listing.THREADS,
            "query": form.cleaned_data.get("q", ""),  # see search(): a name of its own is cheaper
            "next_cursor": getattr(page, "next_cursor", None),
            "active_filters": active_filters(form, request.GET),
        },
        fragment="results",
        status=status,
    )


def message_window(request: HttpRequest, total: int) -> tuple[int, int]:
    """The positions (first, count) of the timeline page asked for by `?start=` (and `?limit=`):
    by default the latest messages, which is what a person opening a thread wants to see first.
    A negative start counts from the end, as the engine's get_messages does."""
    latest = max(0, total - MESSAGES_PER_PAGE)
    try:
        start = int(request.GET.get("start", latest))
        count = int(request.GET.get("limit", MESSAGES_PER_PAGE))
    except ValueError:
        start, count = latest, MESSAGES_PER_PAGE
    if start < 0:
        start = max(0, total + start)
    return (start if start < total else latest), min(max(count, 1), MESSAGES_PER_PAGE)


@viewer_required
@vary_on_headers("HX-Request")
def thread_detail(request: HttpRequest, thread_id: str) -> HttpResponse:
    """The thread's messages (a page of them), with the agent calls made after each; its details,
    summary, card, memories, images, the latest agent calls and curation changes."""
    agent_memory = get_agent_memory()
    try:
        thread = agent_memory.get_thread_record(thread_id)
        summary_due = agent_memory.get_thread(thread_id).messages_due_for_summary()
    except KeyError:
        return gone(request, ObjectKind.THREAD, thread_id)
    viewed(request, thread)
    start, count = message_window(request, thread.message_count)
    timeline = agent_memory.list_thread_messages(thread_id, start=start, limit=count)
    shown = [part["id"] for message in timeline for part in message.parts or () if part.get("type") == "image"]
    images = {image.id: image for image in agent_memory.list_images(image_id=shown, limit=len(shown))} if shown else {}
    memories = agent_memory.list_memories(thread_id=thread_id, limit=THREAD_MEMORIES_SHOWN, newest_first=True)
    # The thread's own pictures (those of no message): among its first images, in store order.
    standalone = [image for image in agent_memory.list_images(thread_id=thread_id) if image.message_id is None]
    later = start + len(timeline) if start + len(timeline) < thread.message_count else None
    return render_page(
        request,
        "threads/detail.html",
        {
            "thread": thread,
            "timeline": timeline,
            "images": images,
            "memories": memories,
            "standalone_images": standalone,
            "start": start,
            "last_shown": start + len(timeline),
            # The page before this one ends where this one starts (so pages never overlap).
            "earlier": (max(0, start - MESSAGES_PER_PAGE), min(start, MESSAGES_PER_PAGE)) if start > 0 else None,
            "later": later,
            "history": CurationEntry.objects.filter(thread_id=thread_id)[:10],
            "summary_due": summary_due,
            "calls": thread_calls(agent_memory, thread_id, timeline, later),
        },
        fragment="timeline",
    )


@curator_required
@require_http_methods(["GET", "POST"])
def thread_edit(request: HttpRequest, thread_id: str) -> HttpResponse:
    """Edit a thread's metadata; refused when the thread changed since the form was opened."""
    agent_memory = get_agent_memory()
    try:
        thread = agent_memory.get_thread_record(thread_id)
    except KeyError:
        return gone(request, ObjectKind.THREAD, thread_id)
    form = ThreadMetadataForm(request.POST or None, initial={"metadata": thread.metadata, "version": thread.version})
    context = {"thread": thread, "form": form}
    if request.method == "POST":
        refused, result = submit(
            request,
            form,
            lambda data: curation(request).update_thread(thread_id, metadata=data["metadata"], version=data["version"]),
            template="threads/edit.html",
            context=context,
            current=lambda: agent_memory.get_thread_record(thread_id),
            name="thread",
            gone_as=(ObjectKind.THREAD, thread_id),
        )
        if refused:
            return refused
        saved(request, result, "the thread's metadata")
        return redirect("memory:thread_detail", thread_id)
    return render_page(request, "threads/edit.html", context)


@curator_required
@require_http_methods(["GET", "POST"])
def thread_delete(request: HttpRequest, thread_id: str) -> HttpResponse:
    """GET: what goes with the thread (messages, memories, images, links); POST: delete it."""
    agent_memory = get_agent_memory()
    try:
        thread = agent_memory.get_thread_record(thread_id)
    except KeyError:
        return gone(request, ObjectKind.THREAD, thread_id)
    confirmed = Confirmed()
    if request.method == "POST":
        confirmed = confirm_delete(request, lambda version: curation(request).delete_thread(thread_id, version=version))
        if confirmed.status == 200:
            messages.success(request, f"Deleted thread {thread_id}. It can be restored from the history.")
            return redirect("memory:thread_list")
        try:  # refused: confirm again what it is now
            thread = agent_memory.get_thread_record(thread_id)
        except KeyError:
            return gone(request, ObjectKind.THREAD, thread_id)
    return render_page(
        request,
        "threads/delete.html",
        {
            "thread": thread,
            "stats": agent_memory.stats(thread_id=thread_id),
            "cancel_url": reverse("memory:thread_detail", args=[thread_id]),
            "version": thread.version,
            "refusal": confirmed.refusal,
        },
        status=confirmed.status,
    )
