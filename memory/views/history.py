"""The curation history: every change people made, an entry's diff, and reverting it."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_http_methods
from django.views.decorators.vary import vary_on_headers

from memory.curation import ERASED_REFUSAL, CurationError, undone_by
from memory.engine import Snapshot
from memory.models import Action, BulkChange, CurationEntry, ObjectKind
from memory.queries.diffs import record_diff
from memory.queries.history import history_page
from memory.views.common import curation, memory_words, render_page, safe_next
from memory.web.access import curator_required, viewer_required
from memory.web.filters import HistoryFilters, active_filters

BULK_PAGE = 100

UNDO_LABELS = {
    Action.DELETE: "Restore",
    Action.UNLINK: "Restore the link",
    Action.CREATE: "Undo: delete it again",
    Action.RESTORE: "Undo: delete it again",
    Action.LINK: "Undo: remove the link",
    Action.UPDATE: "Revert to the values before",
}


@viewer_required
@vary_on_headers("HX-Request")
def history(request: HttpRequest) -> HttpResponse:
    form = HistoryFilters(request.GET)
    entries, next_cursor, status = [], None, 200
    if form.is_valid():
        entries, next_cursor = history_page(form, bulk_as_one=True)
    else:
        status = 400
    return render_page(
        request,
        "history/list.html",
        {
            "form": form,
            "entries": entries,
            "next_cursor": next_cursor,
            "active_filters": active_filters(form, request.GET),
            "bulk_counts": bulk_counts(entries) if form.is_valid() and form.bulk_changes_as_one() else {},
        },
        fragment="results",
        status=status,
    )


def bulk_counts(entries: list[CurationEntry]) -> dict[int, int]:
    """How many records each bulk change among `entries` changed (one query for the page)."""
    bulk_ids = {entry.bulk_id for entry in entries if entry.bulk_id}
    if not bulk_ids:
        return {}
    rows = CurationEntry.objects.filter(bulk_id__in=bulk_ids).values("bulk_id").annotate(n=Count("id"))
    return {row["bulk_id"]: row["n"] for row in rows}


OBJECT_PAGES = {
    ObjectKind.THREAD: "thread_detail",
    ObjectKind.MESSAGE: "message_detail",
    ObjectKind.MEMORY: "memory_detail",
    ObjectKind.IMAGE: "image_detail",
    ObjectKind.USER: "user_detail",
    ObjectKind.AGENT: "agent_detail",
}


def object_url(entry: CurationEntry) -> str | None:
    """The dashboard page of the entry's object, if its kind has one (a message's is under its thread)."""
    args = [entry.thread_id, entry.object_id] if entry.object_kind == ObjectKind.MESSAGE else [entry.object_id]
    try:
        return reverse(f"memory:{OBJECT_PAGES[entry.object_kind]}", args=args)
    except (KeyError, NoReverseMatch):
        return None


def deleted_contents(entry: CurationEntry) -> Snapshot | None:
    """For a delete: the snapshot of everything that went, shown before a restore."""
    if entry.action in (Action.DELETE, Action.UNLINK) and entry.before:
        return Snapshot.from_json(entry.before)
    return None


@viewer_required
def history_bulk(request: HttpRequest, change_id: int) -> HttpResponse:
    """A bulk change: who made it and when, what it did by kind of change, and its entries (paged
    by `cursor`, the id of the last shown), each a link to its own page and diff."""
    change = get_object_or_404(BulkChange.objects.select_related("reverts"), pk=change_id)
    entries = change.entries.order_by("id")
    cursor = request.GET.get("cursor", "")
    if cursor.isdigit():
        entries = entries.filter(id__gt=int(cursor))
    rows = list(entries[: BULK_PAGE + 1])
    return render_page(
        request,
        "history/bulk.html",
        {
            "change": change,
            "entries": [(entry, subject(entry)) for entry in rows[:BULK_PAGE]],
            "next_cursor": rows[BULK_PAGE - 1].id if len(rows) > BULK_PAGE else None,
            "tally": tally(change.entries.all()),
            "undone_by": undone_by(change),
        },
    )


def subject(entry: CurationEntry) -> str:
    """What an entry changed, in words a person recognises: the record's content; a link's, its
    ends' texts and its type (“source” supersedes “target”)."""
    for values in (entry.after, entry.before):
        links = values.get("relations") if isinstance(values, dict) else None  # a link deleted: a snapshot
        link = links[0] if links and isinstance(links[0], dict) else values
        if isinstance(link, dict) and {"source_record_id", "relation_type", "target_record_id"} <= link.keys():
            ends = memory_words(link["source_record_id"]), memory_words(link["target_record_id"])
            return f"{ends[0]} {link['relation_type']} {ends[1]}"
        if isinstance(values, dict) and isinstance(values.get("content"), str):
            return values["content"]
        records = values.get("records") if isinstance(values, dict) else None
        if records and isinstance(records[0].get("content"), str):
            return records[0]["content"]
    return ""


def tally(entries: QuerySet[CurationEntry]) -> list[tuple[str, str, int]]:
    """(kind, action, count) of some entries: "12 memory updated", most first."""
    rows = entries.values("object_kind", "action").annotate(n=Count("id")).order_by("-n")
    return [(row["object_kind"], Action(row["action"]), row["n"]) for row in rows]


UNDO_WORDS = {
    Action.UPDATE: (
        "gets back the values it had before it (the fields it changed; later changes to other fields stay)",
        "get back the values they had before it (the fields it changed; later changes to other fields stay)",
    ),
    Action.DELETE: (
        "deleted by it comes back, with its id and links (links to memories gone since are skipped)",
        "deleted by it come back, with their ids and links (links to memories gone since are skipped)",
    ),
    Action.UNLINK: ("it deleted comes back", "it deleted come back"),
    Action.LINK: (
        "it made is deleted again: the memory it retired becomes valid again, unless another link or its own "
        "status keeps it invalid",
        "it made are deleted again: the memories they retired become valid again, unless another link or "
        "their own status keeps them invalid",
    ),
    Action.CREATE: ("it created is deleted again", "it created are deleted again"),
    Action.RESTORE: ("it brought back is deleted again", "it brought back are deleted again"),
}
"""What undoing a bulk change does to the records of one kind of its entries: (for one, for several)."""


@curator_required
@require_http_methods(["GET", "POST"])
def history_bulk_revert(request: HttpRequest, change_id: int) -> HttpResponse:
    """GET: what undoing the whole bulk change does; POST: undo it in one step (Curation.revert_bulk),
    itself one bulk change."""
    change = get_object_or_404(BulkChange, pk=change_id)
    if request.method == "POST":
        try:
            undo = curation(request).revert_bulk(change)
        except CurationError as error:
            messages.error(request, f"Could not undo this change: {error}")
            return redirect("memory:history_bulk", change_id)
        failed = f" {len(undo.failed)} could not be undone: see below." if undo.failed else ""
        messages.success(request, f"{undo.change.summary}.{failed}")
        for entry, reason in undo.failed[:10]:
            messages.warning(request, f"#{entry.pk} {entry.summary}: {reason}")
        # `next`: the page it was undone from (the review queue's "Undo this"), else the undo's page.
        return redirect(safe_next(request, reverse("memory:history_bulk", args=[undo.change.pk])))
    left = change.entries.filter(reverted_by__isnull=True)
    return render_page(
        request,
        "history/bulk_revert.html",
        {
            "change": change,
            "undone_by": undone_by(change),
            "plan": [(kind, UNDO_WORDS[action][n != 1], n) for kind, action, n in tally(left)],
            "already": change.entries.count() - left.count(),
            "cancel_url": reverse("memory:history_bulk", args=[change_id]),
        },
    )


@viewer_required
def history_entry(request: HttpRequest, entry_id: int) -> HttpResponse:
    entry = get_object_or_404(CurationEntry.objects.select_related("reverts", "actor", "bulk"), pk=entry_id)
    return render_page(
        request,
        "history/entry.html",
        {
            "entry": entry,
            "diff": None if entry.action in (Action.DELETE, Action.UNLINK) else record_diff(entry.before, entry.after),
            "deleted": deleted_contents(entry),
            "object_url": object_url(entry),
            "undo_label": UNDO_LABELS[entry.action],
            "reverted_by": entry.reverted_by.order_by("-at").first(),
            "diff_split": DIFF_LAYOUTS.get(request.GET.get("diff", "")),
            "diff_toggle": True,
        },
    )


DIFF_LAYOUTS = {"split": True, "inline": False}
"""`?diff=` on an entry's page: its content side by side or inline (else: side by side when rewritten)."""


@curator_required
@require_http_methods(["GET", "POST"])
def history_revert(request: HttpRequest, entry_id: int) -> HttpResponse:
    """GET: what undoing the change will do; POST: undo it (itself a recorded change)."""
    entry = get_object_or_404(CurationEntry, pk=entry_id)
    service = curation(request)
    if request.method == "POST":
        try:
            done = service.revert(entry)
        except KeyError:
            messages.error(request, f"The {entry.object_kind} is gone, so there is nothing to undo.")
            return redirect("memory:history_entry", entry_id)
        except ValueError as error:  # the engine's, or the curation service's reason (CurationError)
            messages.error(request, f"Could not undo this change: {error}")
            return redirect("memory:history_entry", entry_id)
        messages.success(request, done.summary)
        # `next`: the page it was undone from (the review queue's "Undo this"), else the record's page.
        return redirect(safe_next(request, object_url(done) or reverse("memory:history_entry", args=[done.pk])))
    context = {
        "entry": entry,
        "undo_label": UNDO_LABELS[entry.action],
        "deleted": deleted_contents(entry),
        "cancel_url": reverse("memory:history_entry", args=[entry_id]),
        "reverted_by": entry.reverted_by.order_by("-at").first(),
    }
    if entry.erased:
        context["refused"] = f"{ERASED_REFUSAL[0].upper()}{ERASED_REFUSAL[1:]}."
        return render_page(request, "history/revert.html", context)
    if entry.action == Action.UPDATE:
        context.update(write_back_preview(service, entry))
    if entry.object_kind == ObjectKind.LINK:
        context["effects"] = service.revert_effects(entry)
    return render_page(request, "history/revert.html", context)


def write_back_preview(service, entry: CurationEntry) -> dict:
    """For an update: how the record changes if it is reverted now (from its current values, which
    later changes may have moved), or why it cannot be."""
    values = service.reverted_values(entry)
    if not values:
        return {"refused": "This change changed nothing that can be written back."}
    try:
        now = service.current_json(entry)
    except KeyError:
        return {"refused": f"The {entry.object_kind} no longer exists: restore it from its deletion first."}
    return {
        "diff": record_diff(now, {**now, **values}),
        "changed_since": now.get("version") != (entry.after or {}).get("version"),
    }
