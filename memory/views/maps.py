"""The embedding map of a user's memories (/users/<id>/map/): their vectors laid out in 2-D on the
server by t-SNE (memory.queries.map; each layout kept in Django's cache, shared by the workers) and
drawn as an inline SVG, each point a link to its memory with its content as the tooltip, beside a
list of the same memories. static/js/map.js adds rectangle selection, which ticks the list's boxes;
the list is a GET form to the bulk actions page, so the selection works without JavaScript too (tick
the boxes)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from memory.engine import DEFAULT_MAP_MEMORIES, MEMORY_TYPES
from memory.models import ObjectKind
from memory.queries.map import FEWEST_FOR_TSNE, HEIGHT, WIDTH, map_points
from memory.queries.people import owns_anything
from memory.services import get_agent_memory
from memory.views.common import gone, refuse, render_page
from memory.web.access import viewer_required
from memory.web.filters import STATUSES, memory_type_filter, number_filter, status_filter

MAX_MAP_MEMORIES = 10_000


class MapFilters(forms.Form):
    """Which of the user's memories to map: types, status (live memories only: expired ones await
    purge and have left search already) and how many at most, newest first."""

    memory_type = memory_type_filter()
    status = status_filter({name: STATUSES[name] for name in ("valid", "invalid")})
    limit = number_filter(
        "At most",
        1,
        MAX_MAP_MEMORIES,
        f"The newest memories first; {DEFAULT_MAP_MEMORIES:,} unless you say.",
    )

    def engine_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "memory_types": data.get("memory_type") or None,
            "status": data.get("status") or None,
            "limit": data.get("limit") or DEFAULT_MAP_MEMORIES,
        }


def point_radius(count: int) -> float:
    """Points big enough to hit with the mouse when few, small enough not to cover each other when many."""
    return 7 if count <= 200 else 5 if count <= 1000 else 3.5


@viewer_required
def user_map(request: HttpRequest, owner_id: str) -> HttpResponse:
    agent_memory = get_agent_memory()
    if not owns_anything(agent_memory.stats(user_id=owner_id)):
        return gone(request, ObjectKind.USER, owner_id)
    form = MapFilters(request.GET)
    context: dict[str, Any] = {"owner_id": owner_id, "form": form, "width": WIDTH, "height": HEIGHT}
    status = 200
    if form.is_valid():
        arguments = form.engine_arguments()
        if arguments["status"] is None:
            del arguments["status"]
        try:
            found = agent_memory.memory_vectors(owner_id, **arguments)
        except ValueError as error:
            refuse(form, error)
        else:
            points, layout = map_points(found.records, found.matrix, cache)
            context.update(
                points=points,
                method=layout.method,
                fewest_for_tsne=FEWEST_FOR_TSNE,
                radius=point_radius(len(points)),
                capped=found.more,
                limit=f"{arguments['limit']:,}",
            )
    if form.errors:
        status = 400
    context.update(memory_types=MEMORY_TYPES, bulk_url=reverse("memory:memory_bulk"))
    return render_page(request, "people/map.html", context, status=status)
