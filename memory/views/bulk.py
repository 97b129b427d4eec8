"""Bulk actions on memories (/memories/bulk/): choose an action for a selection, see exactly what
it will change, confirm. The preview is a GET (a link to share, viewers may look); the
confirmation is a POST of the previewed ids and versions (curators only). A selection too large
for a URL (thousands of memories from the map) is posted instead, and the chooser then posts it
on (curators only, as every POST). And the bulk delete of messages ticked on a thread's page
(/threads/<id>/messages/delete/)."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from memory.curation import BulkOutcome, Curation
from memory.curation.bulk_plan import BulkPlan, matching_ids, plan
from memory.models import ObjectKind
from memory.services import get_agent_memory
from memory.text import plural
from memory.views.common import curation, gone, render_page
from memory.web.access import can_curate, curator_required, viewer_required
from memory.web.fields import MAX_SELECTION
from memory.web.filters import MemoryFilters, active_filters
from memory.web.forms.bulk import (
    ACTIONS,
    URL_SELECTION_BYTES,
    BulkForm,
    IdListField,
    action_query,
    filter_query,
    listing_query,
    parse_selection,
)


@viewer_required
@require_http_methods(["GET", "POST"])
def memory_bulk(request: HttpRequest) -> HttpResponse:
    """GET without `action`: the action chooser for the selection; GET with it: the preview;
    POST with `selection`: make the previewed change, then go to its page in the history. POST
    without it: the chooser or the preview, as a GET would show them, for a selection posted
    because a URL cannot carry it."""
    if request.method == "POST" and not can_curate(request.user):
        raise PermissionDenied("Only curators can change the memory store; your account can read it.")
    query = request.POST if request.method == "POST" else request.GET
    confirming = request.method == "POST" and "selection" in query
    if request.method == "GET" and "" in (value for _, values in query.lists() for value in values):
        # The chooser's unused fields: the same preview, at a URL without them.
        return redirect(f"{request.path}?{urlencode([(k, v) for k, vs in query.lists() for v in vs if v])}")
    form = BulkForm(action_query(query, query.get("action", "")))
    listing = listing_query(query, query.get("action", ""))
    filters = MemoryFilters(listing)
    context = {
        "form": form,
        "filters": filters,
        "actions": ACTIONS,
        "filter_query": filter_query(listing),
        "active_filters": active_filters(filters, listing) if query.get("all") else [],
        "list_url": list_url(listing if query.get("all") else None),
    }

    def page(status: int = 200) -> HttpResponse:
        carry_ids(context, request, form)
        return render_page(request, "memories/bulk.html", context, status=status)

    if not form.is_valid():
        return page(400)
    data = form.cleaned_data
    chosen: dict[str, int] = {}
    if confirming:
        try:
            chosen = parse_selection(data["selection"])
        except ValueError as error:
            form.add_error(None, str(error))
            return page(400)
        ids = list(chosen)
    elif data["all"]:
        if not filters.is_valid():
            return page(400)
        ids = matching_ids(get_agent_memory(), filters)
    else:
        ids = data["ids"]
    context["selected"] = len(ids)
    if len(ids) > MAX_SELECTION:
        chosen_by = "The filters match" if data["all"] else "You selected"
        form.add_error(
            None,
            f"{chosen_by} more than {MAX_SELECTION:,} memories: a bulk change acts on at most that many. "
            "Narrow the filters, or act on part of them at a time.",
        )
        return page(400)
    if not data["action"]:
        return page()
    try:
        preview = plan(get_agent_memory(), data["action"], form.parameters(), ids)
    except ValueError as error:
        form.add_error("keep", str(error).removeprefix("keep "))
        return page(400)
    context["plan"] = preview
    if not confirming:
        return page()
    if {record.id: record.version for record, _ in preview.changes} != chosen:
        context["stale"] = True  # what the confirmation would do is not what was previewed
        return page(409)
    outcome = apply(curation(request), preview)
    if outcome.change is None:
        messages.info(request, "Nothing changed: every memory had changed or gone since the preview.")
        return redirect("memory:memory_list")
    skipped = (
        f" {plural(len(outcome.skipped), 'memory', grouped=True)} left alone: changed since the preview, or refused."
        * bool(outcome.skipped)
    )
    messages.success(request, f"{outcome.change.summary}.{skipped} Undo it in one step from here.")
    return redirect("memory:history_bulk", outcome.change.pk)


def carry_ids(context: dict, request: HttpRequest, form: BulkForm) -> None:
    """The ids the chooser sends on (`carried_ids`), and how: as many `ids` fields of a GET form
    (a URL to share), or, when the selection came in a POST and would not fit in a URL, as one
    field of ids a line in a POST form (`carry_by_post`). After a confirmation, which carries
    no `ids`, they are the memories its preview showed; from a form with errors, the values sent."""
    preview = context.get("plan")
    if form.is_valid() and form.cleaned_data["ids"]:
        ids = form.cleaned_data["ids"]
    elif preview is not None:
        ids = [record.id for record, _ in preview.changes]
    else:
        ids = [value for value in form.data.getlist("ids") if value]
    context["carried_ids"] = ids
    context["carry_by_post"] = request.method == "POST" and url_bytes(ids) > URL_SELECTION_BYTES
    context["carried_text"] = "\n".join(ids) if context["carry_by_post"] else ""


def url_bytes(ids: list[str]) -> int:
    """What `ids=…&ids=…` takes in a URL, counted until it is over URL_SELECTION_BYTES."""
    total = 0
    for record_id in ids:
        total += len(quote(record_id, safe="")) + len("&ids=")
        if total > URL_SELECTION_BYTES:
            break
    return total


def list_url(listing: QueryDict | None) -> str:
    """The memory list to go back to: filtered as the bulk action's selection was, if it was."""
    query = filter_query(listing) if listing is not None else []
    return reverse("memory:memory_list") + (f"?{urlencode(query)}" if query else "")


def apply(service: Curation, preview: BulkPlan) -> BulkOutcome:
    """Make the change a preview showed, through the curation service."""
    summary = preview.describe()
    if preview.action == "delete":
        return service.bulk_delete_memories([(r.id, r.version) for r, _ in preview.changes], summary)
    if preview.action == "mark_duplicates":
        assert preview.keep is not None
        return service.mark_duplicates(preview.keep.id, [(r.id, r.version) for r, _ in preview.changes], summary)
    return service.bulk_update_memories(preview.changes, summary)


@curator_required
@require_http_methods(["GET", "POST"])
def message_bulk_delete(request: HttpRequest, thread_id: str) -> HttpResponse:
    """GET `ids` (repeated): the messages ticked on the thread's page, with their images, to
    confirm; POST: delete exactly those, as they were shown, as one bulk change."""
    agent_memory = get_agent_memory()
    try:
        agent_memory.get_thread_record(thread_id)
    except KeyError:
        return gone(request, ObjectKind.THREAD, thread_id)
    context: dict = {"thread_id": thread_id, "cancel_url": reverse("memory:thread_detail", args=[thread_id])}
    chosen: dict[str, int] = {}
    try:
        if request.method == "POST":
            chosen = parse_selection(request.POST.get("selection", ""))
            ids = list(chosen)
        else:
            ids = IdListField(required=False).clean(request.GET.getlist("ids"))
        if not ids:
            raise ValueError("No messages selected: tick some on the thread's page first.")
        if len(ids) > MAX_SELECTION:
            raise ValueError(f"A bulk change acts on at most {MAX_SELECTION:,} messages.")
    except (ValueError, ValidationError) as error:
        context["error"] = error.messages[0] if isinstance(error, ValidationError) else str(error)
        return render_page(request, "messages/bulk_delete.html", context, status=400)
    found, missing = [], []
    for message_id in ids:
        try:
            found.append(agent_memory.get_message_record(thread_id, message_id))
        except KeyError:
            missing.append(message_id)
    context.update(
        chosen_messages=found,
        missing=missing,
        image_count=sum(1 for message in found for part in message.parts or () if part.get("type") == "image"),
        selection="\n".join(f"{message.id} {message.version}" for message in found),
    )
    if request.method == "GET" or not found:
        return render_page(request, "messages/bulk_delete.html", context)
    if {message.id: message.version for message in found} != chosen:
        context["stale"] = True
        return render_page(request, "messages/bulk_delete.html", context, status=409)
    outcome = curation(request).bulk_delete_messages(
        thread_id, [(message.id, message.version) for message in found], f"Deleted {plural(len(found), 'message')}"
    )
    if outcome.change is None:
        messages.info(request, "Nothing changed: every message had changed or gone since.")
        return redirect("memory:thread_detail", thread_id)
    messages.success(request, f"{outcome.change.summary}. Undo it in one step from here.")
    return redirect("memory:history_bulk", outcome.change.pk)
