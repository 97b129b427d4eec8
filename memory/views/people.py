"""Users and agents: the lists, a page each with its profile, threads and memory counts, the
profile editor and the cascading delete. Both kinds work the same way; `OWNERS` says how they
differ (names, engine calls)."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django.views.decorators.vary import vary_on_headers

from memory.engine import MEMORY_TYPES
from memory.models import ObjectKind
from memory.queries.history import owner_history
from memory.queries.people import owns_anything, profile_of
from memory.services import get_agent_memory
from memory.views.common import curation, gone, refuse, render_page, saved, submit
from memory.web.access import curator_required, viewer_required
from memory.web.audit import viewed
from memory.web.filters import ListingForm
from memory.web.forms.records import ProfileForm

SHOWN_ON_PAGE = 20


@dataclass(frozen=True)
class Owner:
    kind: str  # "user" or "agent", as ObjectKind and the engine's owner_counts name them
    plural: str
    scope: str  # the engine's argument: "user_id" or "agent_id"

    def url(self, name: str, *args: str) -> str:
        return reverse(f"memory:{self.kind}_{name}", args=args)

    @property
    def list_url(self) -> str:
        return self.url("list")

    def profile(self, owner_id: str):
        return profile_of(get_agent_memory(), self.kind, owner_id)


OWNERS = {"user": Owner("user", "users", "user_id"), "agent": Owner("agent", "agents", "agent_id")}


@viewer_required
@vary_on_headers("HX-Request")
def owner_list(request: HttpRequest, kind: str) -> HttpResponse:
    """Every user (or agent) id that owns a profile, thread or record, with what they own."""
    owner = OWNERS[kind]
    agent_memory = get_agent_memory()
    form = ListingForm(request.GET)
    page, counts, status = [], {}, 200
    if form.is_valid():
        arguments = form.engine_arguments()
        try:
            page = (agent_memory.list_users if kind == "user" else agent_memory.list_agents)(**arguments)
        except ValueError as error:
            refuse(form, error)
        else:
            counts = agent_memory.owner_counts(kind, [profile.id for profile in page])
    if form.errors:
        status = 400
    rows = [(profile, counts.get(profile.id, {})) for profile in page]
    return render_page(
        request,
        "people/list.html",
        {"owner": owner, "rows": rows, "form": form, "next_cursor": getattr(page, "next_cursor", None)},
        fragment="results",
        status=status,
    )


@viewer_required
def owner_detail(request: HttpRequest, kind: str, owner_id: str) -> HttpResponse:
    owner = OWNERS[kind]
    agent_memory = get_agent_memory()
    scope = {owner.scope: owner_id}
    stats = agent_memory.stats(**scope)
    if not owns_anything(stats):
        return gone(request, kind, owner_id)  # owns nothing: no such user (or agent), or no longer
    profile = owner.profile(owner_id)
    viewed(request, *([profile] if profile else []), **scope)
    threads = agent_memory.list_threads(**scope, limit=SHOWN_ON_PAGE)
    memories = agent_memory.list_memories(**scope, limit=SHOWN_ON_PAGE, newest_first=True)
    return render_page(
        request,
        "people/detail.html",
        {
            "owner": owner,
            "owner_id": owner_id,
            "profile": profile,
            "stats": stats,
            "threads": threads,
            "memories": memories,
            "memory_counts": [(memory_type, stats.records[memory_type]) for memory_type in MEMORY_TYPES],
            "edit_url": owner.url("edit", owner_id),
            "delete_url": owner.url("delete", owner_id),
            "history": owner_history(kind, owner_id, SHOWN_ON_PAGE),
        },
    )


@curator_required
@require_http_methods(["GET", "POST"])
def owner_edit(request: HttpRequest, kind: str, owner_id: str) -> HttpResponse:
    """Write the profile text (a new profile when there is none)."""
    owner = OWNERS[kind]
    profile = owner.profile(owner_id)
    initial = {"information": profile.content if profile else "", "version": profile.version if profile else 0}
    form = ProfileForm(request.POST or None, initial=initial)
    context = {"owner": owner, "owner_id": owner_id, "profile": profile, "form": form}
    if request.method == "POST":
        refused, result = submit(
            request,
            form,
            lambda data: curation(request).save_profile(kind, owner_id, **data),
            template="people/edit.html",
            context=context,
            current=lambda: owner.profile(owner_id),
            name="profile",
            gone_as=(kind, owner_id),
        )
        if refused:
            return refused
        saved(request, result, f"the {kind}'s profile")
        return redirect(owner.url("detail", owner_id))
    return render_page(request, "people/edit.html", context)


@curator_required
@require_http_methods(["GET", "POST"])
def owner_delete(request: HttpRequest, kind: str, owner_id: str) -> HttpResponse:
    """GET: everything that goes with them, counted; POST: delete it all (restorable)."""
    owner = OWNERS[kind]
    stats = get_agent_memory().stats(**{owner.scope: owner_id})
    if not owns_anything(stats):
        return gone(request, kind, owner_id)
    if request.method == "POST":
        curation(request).delete_owner(ObjectKind(kind), owner_id)
        messages.success(
            request, f"Deleted {kind} {owner_id} and everything they owned. It can be restored from the history."
        )
        return redirect(owner.url("list"))
    return render_page(
        request,
        "people/delete.html",
        {"owner": owner, "owner_id": owner_id, "stats": stats, "cancel_url": owner.url("detail", owner_id)},
    )
