"""Links between memories: create, retype and delete them, each after the page has said what the
change does to the memories' status (a supersedes, refines or duplicates link retires its target)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from memory.engine import BUILTIN_RELATIONS
from memory.models import ObjectKind
from memory.services import get_agent_memory
from memory.views.common import Confirmed, confirm_delete, curation, gone, refuse, render_page, safe_next, saved, submit
from memory.web.access import curator_required, viewer_required
from memory.web.forms.records import LinkEditForm, LinkForm

PICKS = 10
LINK_CHECKED = ("source_record_id", "target_record_id", "relation_type", "opposite_relation_type")
"""What decides whether the store makes a link (its metadata is any JSON object)."""


def memory_url(memory_id: str) -> str:
    return reverse("memory:memory_detail", args=[memory_id])


def back(request: HttpRequest) -> str:
    """Where the person came from (`next`: the memory page or the graph), to return there."""
    return safe_next(request, "")


def ends(source_id: str | None, target_id: str | None) -> list[tuple[str, str, object]]:
    """A link's two memories, to show them by their content (ids alone say nothing to a person):
    (label, id, the memory or None when there is none by that id), for the ids given."""
    agent_memory = get_agent_memory()
    shown = []
    for label, memory_id in (("From", source_id), ("To", target_id)):
        if memory_id:
            try:
                shown.append((label, memory_id, agent_memory.get_memory(memory_id)))
            except KeyError:
                shown.append((label, memory_id, None))
    return shown


@curator_required
@require_http_methods(["GET", "POST"])
def link_create(request: HttpRequest) -> HttpResponse:
    """A new link. `?source_record_id=` pre-fills the source. The first POST shows what the link
    will do (which memory becomes invalid); a POST confirming exactly that preview makes it."""
    initial = {name: request.GET[name] for name in ("source_record_id", "target_record_id") if request.GET.get(name)}
    form = LinkForm(request.POST or None, initial=initial)
    context = {"form": form, "relation_types": BUILTIN_RELATIONS, "back": back(request)}
    status = 200
    if request.method == "POST":
        service = curation(request)
        if form.is_valid():
            data = form.link_arguments()
            try:
                if form.confirmed():
                    service.create_link(**data)
                    messages.success(request, "Linked the memories.")
                    return redirect(safe_next(request, memory_url(data["source_record_id"])))
                service.check_link(**{name: data[name] for name in LINK_CHECKED})
                context.update(
                    effects=service.link_effects(add=(data["target_record_id"], data["relation_type"])),
                    preview=form.preview_digest(),
                )
            except ValueError as error:
                refuse(form, error)
        if form.errors:
            status = 400
    chosen = form.cleaned_data if form.is_bound else initial
    context["ends"] = ends(chosen.get("source_record_id"), chosen.get("target_record_id"))
    return render_page(request, "links/form.html", context, status=status)


@curator_required
@require_http_methods(["GET", "POST"])
def link_edit(request: HttpRequest, relation_id: str) -> HttpResponse:
    """Retype a link or change its metadata; a retype that changes a memory's status is shown first."""
    service = curation(request)
    agent_memory = get_agent_memory()
    try:
        relation = agent_memory.get_relation(relation_id)
    except KeyError:
        return gone(request, ObjectKind.LINK, relation_id)
    initial = {
        "relation_type": relation.relation_type,
        # A built-in type's opposite is fixed: an empty field, so that a retype to a label of
        # one's own does not carry it over.
        "opposite_relation_type": ""
        if relation.relation_type in BUILTIN_RELATIONS
        else relation.opposite_relation_type,
        "metadata": relation.metadata,
        "version": relation.version,
    }
    form = LinkEditForm(request.POST or None, initial=initial)
    context = {
        "form": form,
        "relation": relation,
        "relation_types": BUILTIN_RELATIONS,
        "ends": ends(relation.source_record_id, relation.target_record_id),
        "back": back(request),
    }
    if request.method != "POST":
        return render_page(request, "links/form.html", context)
    if form.is_valid() and not form.confirmed():
        new_type = form.cleaned_data["relation_type"]
        if new_type != relation.relation_type:
            effects = service.link_effects(add=(relation.target_record_id, new_type), remove=relation)
            if effects:  # say what the retype does, and ask again
                context.update(effects=effects, preview=form.preview_digest())
                return render_page(request, "links/form.html", context)
    refused, result = submit(
        request,
        form,
        lambda data: service.update_link(relation_id, **{k: v for k, v in data.items() if k != "confirm"}),
        template="links/form.html",
        context=context,
        current=lambda: agent_memory.get_relation(relation_id),
        name="relation",
        gone_as=(ObjectKind.LINK, relation_id),
    )
    if refused:
        return refused
    saved(request, result, "the link")
    return redirect(safe_next(request, memory_url(relation.source_record_id)))


@curator_required
@require_http_methods(["GET", "POST"])
def link_delete(request: HttpRequest, relation_id: str) -> HttpResponse:
    """GET: the link, and which memory becomes valid again without it; POST: delete it."""
    service = curation(request)
    try:
        relation = get_agent_memory().get_relation(relation_id)
    except KeyError:
        return gone(request, ObjectKind.LINK, relation_id)
    confirmed = Confirmed()
    if request.method == "POST":
        confirmed = confirm_delete(request, lambda version: service.delete_link(relation_id, version=version))
        if confirmed.status == 200:
            messages.success(request, "Deleted the link. It can be restored from the history.")
            return redirect(safe_next(request, memory_url(relation.source_record_id)))
        try:  # refused: confirm again what it is now
            relation = get_agent_memory().get_relation(relation_id)
        except KeyError:
            return gone(request, ObjectKind.LINK, relation_id)
    return render_page(
        request,
        "links/delete.html",
        {
            "relation": relation,
            "ends": ends(relation.source_record_id, relation.target_record_id),
            "effects": service.link_effects(remove=relation),
            "cancel_url": safe_next(request, memory_url(relation.source_record_id)),
            "back": back(request),
            "version": relation.version,
            "refusal": confirmed.refusal,
        },
        status=confirmed.status,
    )


@viewer_required
@require_GET
def memory_picks(request: HttpRequest) -> HttpResponse:
    """Suggestions for a memory field (a datalist): memories whose content, id or metadata holds
    what was typed, newest first. The page sends the field being typed in, alone."""
    typed = next((value for value in request.GET.values() if value.strip()), "")[:500]
    try:
        picks = get_agent_memory().list_memories(text=typed, limit=PICKS, newest_first=True) if typed else []
    except ValueError:  # text the engine cannot search for (a NUL character): no suggestions
        picks = []
    return render_page(request, "links/picks.html", {"picks": picks})
