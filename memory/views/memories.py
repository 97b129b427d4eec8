"""Memories: the browser (/memories/), a memory's page, create, edit and delete."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django.views.decorators.vary import vary_on_headers

from memory.access import curator_required, viewer_required
from memory.engine.types import LIFECYCLE_RELATIONS
from memory.forms import MemoryEditForm, MemoryForm
from memory.listing import MemoryFilters, active_filters
from memory.models import CurationEntry, ObjectKind
from memory.views.common import curation, engine, gone, refuse, render_page, saved, submit

LINKS_SHOWN = 200


@viewer_required
@vary_on_headers("HX-Request")
def memory_list(request: HttpRequest) -> HttpResponse:
    """Every memory, filtered by type, status, scope, metadata and text; newest first by default."""
    form = MemoryFilters(request.GET)
    page, status = [], 200
    if form.is_valid():
        try:
            page = engine().list_memories(**form.engine_arguments())
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
            "next_cursor": getattr(page, "next_cursor", None),
            "active_filters": active_filters(form, request.GET),
            "q": form.cleaned_data.get("q") if form.is_valid() else "",
        },
        fragment="results",
        status=status,
    )


@viewer_required
def memory_detail(request: HttpRequest, memory_id: str) -> HttpResponse:
    """Content first, then scope, status (and the link that made it invalid), lifetime, links in
    both directions (each labelled as seen from this memory) and history."""
    memory = engine()
    try:
        record = memory.get_memory(memory_id)
    except KeyError:
        return gone(request, ObjectKind.MEMORY, memory_id)
    links = memory.list_relations(record_id=memory_id, limit=LINKS_SHOWN)
    # The memories at the links' other ends, in one walk, to show them by content.
    neighbours = {node.id: node for node in memory.memory_graph(memory_id=memory_id, max_nodes=LINKS_SHOWN + 1).nodes}
    retiring = [
        (link, neighbours.get(link.source_record_id))
        for link in links
        if link.target_record_id == memory_id and link.relation_type in LIFECYCLE_RELATIONS
    ]
    return render_page(
        request,
        "memories/detail.html",
        {
            "memory": record,
            "links": [
                (link, link.label_from(memory_id), end, neighbours.get(end))
                for link in links
                for end in [other_end(link, memory_id)]
            ],
            "more_links": links.next_cursor is not None,
            "retiring": retiring,
            "history": CurationEntry.objects.filter(object_kind=ObjectKind.MEMORY, object_id=memory_id),
        },
    )


def other_end(link, memory_id: str) -> str:
    return link.target_record_id if link.source_record_id == memory_id else link.source_record_id


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
    memory = engine()
    try:
        record = memory.get_memory(memory_id)
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
    context = {"form": form, "memory": record}

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
            current=lambda: memory.get_memory(memory_id),
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
    memory = engine()
    try:
        record = memory.get_memory(memory_id)
    except KeyError:
        return gone(request, ObjectKind.MEMORY, memory_id)
    if request.method == "POST":
        try:
            curation(request).delete_memory(memory_id)
        except KeyError:
            return gone(request, ObjectKind.MEMORY, memory_id)
        messages.success(request, "Deleted the memory. It can be restored from the history.")
        return redirect("memory:memory_list")
    links = memory.list_relations(record_id=memory_id, limit=None)
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
        },
    )
