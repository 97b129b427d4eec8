"""Memories: the browser (/memories/), a memory's page, create, edit and delete."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django.views.decorators.vary import vary_on_headers

from memory.engine import LIFECYCLE_RELATIONS, MemoryRecord, RecordRelation
from memory.models import CurationEntry, ObjectKind, SavedView
from memory.queries.facets import memory_facets
from memory.queries.record_activity import record_activity, sources_of
from memory.queries.review.invalid import invalid_rows
from memory.services import get_agent_memory
from memory.views.common import Confirmed, confirm_delete, curation, gone, refuse, render_page, saved, submit
from memory.views.saved_views import saved_views_of
from memory.web.access import curator_required, viewer_required
from memory.web.audit import viewed
from memory.web.filters import MemoryFilters, active_filters
from memory.web.forms.bulk import filter_query
from memory.web.forms.records import MemoryEditForm, MemoryForm

LINKS_SHOWN = 200


@dataclass(frozen=True)
class LinkRow:
    """A link as seen from one of its memories: its label from there, the memory at its other
    end (None when that one expired), and whether the link goes out from here."""

    link: RecordRelation
    label: str
    other_id: str
    other: MemoryRecord | None
    outgoing: bool


def links_of(memory_id: str, limit: int) -> tuple[list[LinkRow], bool]:
    """A memory's first `limit` links, each with the memory at its other end (fetched in one walk
    of the graph: an id alone says nothing to a person), and whether it has more."""
    agent_memory = get_agent_memory()
    links = agent_memory.list_relations(record_id=memory_id, limit=limit)
    try:
        neighbours = {
            node.id: node for node in agent_memory.memory_graph(memory_id=memory_id, max_nodes=limit + 1).nodes
        }
    except KeyError:  # deleted meanwhile: the links are shown by their ids
        neighbours = {}
    rows = []
    for link in links:
        outgoing = link.source_record_id == memory_id
        other = link.target_record_id if outgoing else link.source_record_id
        rows.append(LinkRow(link, link.label_from(memory_id), other, neighbours.get(other), outgoing))
    return rows, links.next_cursor is not None


@viewer_required
@vary_on_headers("HX-Request")
def memory_list(request: HttpRequest) -> HttpResponse:
    """Every memory, filtered by type, status, scope, metadata and text; newest first by default.
    With `facets=1`, the total and the facets too: a grouping query each, which at 100k memories
    takes half a second, so the page itself comes first and fetches them after (htmx); without
    JavaScript, a link asks for them."""
    form = MemoryFilters(request.GET)
    page, facets, status = [], None, 200
    if form.is_valid():
        agent_memory, arguments = get_agent_memory(), form.engine_arguments()
        try:
            page = agent_memory.list_memories(**arguments)
            if request.GET.get("facets") == "1":  # asked for (htmx fetches it after the page)
                facets = memory_facets(agent_memory, arguments, request.GET)
        except ValueError as error:
            refuse(form, error)
    if form.errors:
        status = 400
    return render_page(
        request,
        "memories/list.html",
        {
            "form": form,
            "memories": page,
            "facets": facets,
            "saved_views": saved_views_of(request, SavedView.Listing.MEMORIES),
            "listing": SavedView.Listing.MEMORIES,
            "next_cursor": getattr(page, "next_cursor", None),
            "active_filters": active_filters(form, request.GET),
            "q": form.cleaned_data.get("q") if form.is_valid() else "",
            "bulk_all_query": urlencode([*filter_query(request.GET), ("all", "1")]),
        },
        fragment="results",
        status=status,
    )


@viewer_required
def memory_detail(request: HttpRequest, memory_id: str) -> HttpResponse:
    """Content first, then scope, status (and the link that made it invalid), lifetime, links in
    both directions (each labelled as seen from this memory), how often agents were served it,
    and its timeline (created, changed, served) beside the curation history."""
    agent_memory = get_agent_memory()
    try:
        record = agent_memory.get_memory(memory_id)
    except KeyError:
        return gone(request, ObjectKind.MEMORY, memory_id)
    viewed(request, record)
    links, more_links = links_of(memory_id, LINKS_SHOWN)
    sources, source_count = sources_of(agent_memory, record)
    return render_page(
        request,
        "memories/detail.html",
        {
            "memory": record,
            "links": links,
            "more_links": more_links,
            "sources": sources,
            "source_count": source_count,
            "more_sources": source_count - len(sources),
            "retiring": [row for row in links if not row.outgoing and row.link.relation_type in LIFECYCLE_RELATIONS],
            "history": CurationEntry.objects.of_memory(memory_id),
            "activity": record_activity(agent_memory, record),
            "here": request.get_full_path(),  # where link changes come back to
        },
    )


@curator_required
@require_http_methods(["GET", "POST"])
def memory_create(request: HttpRequest) -> HttpResponse:
    """A new memory. `?user_id=`, `?agent_id=` and `?thread_id=` pre-fill its scope."""
    initial = {name: request.GET[name] for name in ("user_id", "agent_id", "thread_id") if request.GET.get(name)}
    form = MemoryForm(request.POST or None, initial=initial)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                entry = curation(request).create_memory(**form.cleaned_data)
            except ValueError as error:
                refuse(form, error)
            else:
                messages.success(request, "Created the memory.")
                return redirect("memory:memory_detail", entry.object_id)
        status = 400
    return render_page(request, "memories/form.html", {"form": form}, status=status)


@curator_required
@require_http_methods(["GET", "POST"])
def memory_edit(request: HttpRequest, memory_id: str) -> HttpResponse:
    agent_memory = get_agent_memory()
    try:
        record = agent_memory.get_memory(memory_id)
    except KeyError:
        return gone(request, ObjectKind.MEMORY, memory_id)
    initial = {
        "content": record.content,
        "memory_type": record.record_type,
        "user_id": record.user_id,
        "agent_id": record.agent_id,
        "metadata": record.metadata,
        "status": record.status,
        "timestamp": record.timestamp,
        "version": record.version,
    }
    form = MemoryEditForm(request.POST or None, initial=initial)
    # A memory a link retires is invalid whatever its own flag: the form says which link, and how to undo it.
    retired_by = invalid_rows(agent_memory, [record])[0].retired_by if record.status == "invalid" else []
    context = {"form": form, "memory": record, "retired_by": retired_by, "here": request.get_full_path()}

    def save(data: dict) -> object:
        fields = dict(data)
        return curation(request).update_memory(memory_id, version=fields.pop("version"), **fields)

    if request.method == "POST":
        refused, result = submit(
            request,
            form,
            save,
            template="memories/form.html",
            context=context,
            current=lambda: agent_memory.get_memory(memory_id),
            name="memory",
            gone_as=(ObjectKind.MEMORY, memory_id),
        )
        if refused:
            return refused
        saved(request, result, "the memory")
        return redirect("memory:memory_detail", memory_id)
    return render_page(request, "memories/form.html", context)


@curator_required
@require_http_methods(["GET", "POST"])
def memory_delete(request: HttpRequest, memory_id: str) -> HttpResponse:
    """GET: the memory and the links that go with it, and whose status comes back; POST: delete."""
    agent_memory = get_agent_memory()
    try:
        record = agent_memory.get_memory(memory_id)
    except KeyError:
        return gone(request, ObjectKind.MEMORY, memory_id)
    confirmed = Confirmed()
    if request.method == "POST":
        confirmed = confirm_delete(request, lambda version: curation(request).delete_memory(memory_id, version=version))
        if confirmed.status == 200:
            messages.success(request, "Deleted the memory. It can be restored from the history.")
            return redirect("memory:memory_list")
        try:  # refused: confirm again what it is now
            record = agent_memory.get_memory(memory_id)
        except KeyError:
            return gone(request, ObjectKind.MEMORY, memory_id)
    links = agent_memory.list_relations(record_id=memory_id, limit=None)
    revived = [
        link.target_record_id
        for link in links
        if link.source_record_id == memory_id and link.relation_type in LIFECYCLE_RELATIONS
    ]
    return render_page(
        request,
        "memories/delete.html",
        {
            "memory": record,
            "link_count": len(links),
            "revived": revived,
            "cancel_url": reverse("memory:memory_detail", args=[memory_id]),
            "version": record.version,
            "refusal": confirmed.refusal,
        },
        status=confirmed.status,
    )
