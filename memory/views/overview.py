"""The overview (/): what the store holds, from one engine call, the latest curation changes, the
memories' hygiene as agents' calls show it (with the activity recorder's health), and the latest
consistency check (with a button for curators to run it again, or to repair)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from memory.curation.consistency import check_and_record
from memory.engine import MEMORY_TYPES
from memory.models import CheckRun, CurationEntry
from memory.queries.history import one_row_per_bulk_change
from memory.queries.hygiene import memory_hygiene, recorder_health
from memory.services import get_agent_memory
from memory.text import plural
from memory.web.access import curator_required, viewer_required

CHART_DAYS = 60
CHART_WIDTH, CHART_HEIGHT = 600, 120


@dataclass(frozen=True)
class Bar:
    """One day of the records-over-time chart, in SVG user units."""

    x: float
    width: float
    day: date
    messages: int
    memories: int
    messages_height: float
    memories_height: float

    @property
    def memories_y(self) -> float:
        return CHART_HEIGHT - self.memories_height

    @property
    def messages_y(self) -> float:
        return CHART_HEIGHT - self.memories_height - self.messages_height


@dataclass(frozen=True)
class Chart:
    bars: list[Bar]
    peak: int
    first: date
    last: date

    @property
    def width(self) -> int:
        return CHART_WIDTH

    @property
    def height(self) -> int:
        return CHART_HEIGHT


def activity_chart(by_day: list[tuple[str, str, int]], today: date, days: int = CHART_DAYS) -> Chart | None:
    """Messages and memories per day (by their timestamp) over the `days` days up to today, or up
    to the latest day with records when the store has none that recent. None for an empty store."""
    counts: dict[date, dict[str, int]] = {}
    for day, kind, count in by_day:
        counts.setdefault(date.fromisoformat(day), {})[kind] = count
    if not counts:
        return None
    last = today if any(day > today - timedelta(days=days) for day in counts) else max(counts)
    first = last - timedelta(days=days - 1)
    window = [first + timedelta(days=i) for i in range(days)]
    peak = max((sum(counts.get(day, {}).values()) for day in window), default=0) or 1
    slot = CHART_WIDTH / days
    bars = []
    for i, day in enumerate(window):
        messages = counts.get(day, {}).get("message", 0)
        memories = counts.get(day, {}).get("memory", 0)
        bars.append(
            Bar(
                x=round(i * slot + 1, 2),
                width=round(slot - 2, 2),
                day=day,
                messages=messages,
                memories=memories,
                messages_height=round(messages / peak * CHART_HEIGHT, 2),
                memories_height=round(memories / peak * CHART_HEIGHT, 2),
            )
        )
    return Chart(bars, peak, first, last)


@viewer_required
def overview(request: HttpRequest) -> HttpResponse:
    stats = get_agent_memory().stats()
    memory_rows = [(memory_type, stats.records[memory_type]) for memory_type in MEMORY_TYPES]
    totals = {status: sum(counts[status] for _, counts in memory_rows) for status in ("valid", "invalid", "expired")}
    totals["all"] = sum(totals.values())
    return render(
        request,
        "overview.html",
        {
            "stats": stats,
            "memory_rows": memory_rows,
            "memory_totals": totals,
            # The cards count live records: each says how many more are expired, awaiting purge.
            "expired": {
                "messages": stats.records["message"]["expired"],
                "memories": totals["expired"],
                "images": stats.records["image"]["expired"],
            },
            "links": sorted(stats.links.items(), key=lambda item: (-item[1], item[0])),
            "chart": activity_chart(stats.by_day, datetime.now(UTC).date()),
            "latest_changes": CurationEntry.objects.filter(one_row_per_bulk_change()).select_related("bulk")[:8],
            "bulk_as_one": True,
            "last_check": CheckRun.objects.first(),
            # The store's recorded embedder beside OAM_EMBEDDER's: another process may have re-embedded it.
            "vectors": get_agent_memory().vector_state(),
            "configured_embedder": settings.OAM_EMBEDDER,
            "hygiene": memory_hygiene(get_agent_memory()),
            "recorder": recorder_health(get_agent_memory()),
        },
    )


@curator_required
@require_POST
def check_run(request: HttpRequest) -> HttpResponse:
    """Run the consistency check now (`repair=1`: repair what is safe first, as `manage.py
    oam_check --repair`), keep its result, and go back to the overview's panel; the activity log's
    calls past their retention are purged, as the command does. It runs in the request: on the
    demo store it takes a fraction of a second (the probe's searches dominate)."""
    repair = request.POST.get("repair") == "1"
    result, run = check_and_record(get_agent_memory(), repair=repair, user=request.user, via="dashboard")
    purge = result.activity
    if purge.purged:
        messages.info(
            request, f"Purged {plural(purge.purged, 'recorded call')} older than {purge.retention_days} days."
        )
    if result.ok:
        repaired = sum(finding.repaired for finding in result.findings)
        done = f" after repairing {repaired}" if repair and repaired else ""
        messages.success(request, f"The memory store is consistent{done} (checked in {run.seconds:.2f} s).")
    else:
        remaining = sum(finding.remaining for finding in result.findings)
        messages.warning(request, f"The check found {remaining} problem{'' if remaining == 1 else 's'}: see below.")
    return redirect(reverse("memory:overview") + "#check-heading")
