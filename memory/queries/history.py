"""The curation history as the dashboard and the API list it: keyset-paged entries, newest first,
with a bulk change as one row where the dashboard asks for it."""

from __future__ import annotations

from django.db import models
from django.db.models import Max

from memory.models import CurationEntry, ObjectKind
from memory.web.filters import DEFAULT_PAGE_SIZE, HistoryFilters


def history_page(filters: HistoryFilters, *, bulk_as_one: bool = False) -> tuple[list[CurationEntry], int | None]:
    """The entries of the valid filters' page and the cursor of the next one (None on the last
    page). `bulk_as_one` (the dashboard's list): a bulk change is one row, unless the filters ask
    for some objects' own changes (the API lists every entry, with its `bulk`)."""
    data = filters.cleaned_data
    entries = CurationEntry.objects.select_related("reverts", "bulk")
    for name, kind in (("user_id", ObjectKind.USER), ("agent_id", ObjectKind.AGENT)):
        if data.get(name):
            entries = entries.of_owner(kind, data[name])
    if bulk_as_one and filters.bulk_changes_as_one():
        entries = entries.filter(one_row_per_bulk_change(entries))
    if data.get("record_id"):
        entries = entries.of_record(data["record_id"])
    for name, lookup in (
        ("object_kind", "object_kind"),
        ("object_id", "object_id"),
        ("thread_id", "thread_id"),
        ("actor", "actor_name"),
        ("action", "action"),
        ("since", "at__gte"),
        ("until", "at__lt"),
        ("cursor", "id__lt"),
    ):
        if data.get(name):
            entries = entries.filter(**{lookup: data[name]})
    limit = data.get("limit") or DEFAULT_PAGE_SIZE
    rows = list(entries.order_by("-id")[: limit + 1])
    return rows[:limit], rows[limit - 1].id if len(rows) > limit else None


def owner_history(kind: str, owner_id: str, limit: int) -> list[CurationEntry]:
    """The latest changes to anything a user (`kind` "user") or agent owns, newest first, a bulk
    change as one row (its last entry touching them): their page lists these."""
    entries = CurationEntry.objects.of_owner(kind, owner_id)
    return list(
        entries.filter(one_row_per_bulk_change(entries)).select_related("reverts", "bulk").order_by("-id")[:limit]
    )


def one_row_per_bulk_change(among: models.QuerySet | None = None) -> models.Q:
    """Entries outside bulk changes, and the last entry of each bulk change, which stands for it
    (the history lists a bulk change as one row, where it ended; a filter on an object shows
    that object's own entries instead). `among`: the entries listed (those touching an owner),
    of which each bulk change's last stands for it."""
    entries = CurationEntry.objects.all() if among is None else among
    last = entries.filter(bulk__isnull=False).values("bulk").annotate(last=Max("id")).values("last")
    return models.Q(bulk__isnull=True) | models.Q(id__in=last)
