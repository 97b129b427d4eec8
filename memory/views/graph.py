"""The link graph: the page (/graph/), its data (/graph/data/) and a memory's side panel.

The page is a filter form, a canvas that static/js/graph.js fills from /graph/data/ (same query
string), a legend and the controls; without JavaScript it links to the same graph as tables
(`?view=table`). Asked for without a scope, it opens on the user (else the agent) with the most
links and offers the others with the most as starting points. The data is laid out once on the
server (memory.queries.graph_layout), so the browser only draws. Cytoscape.js draws it: measured
in headless Chromium against sigma.js (see docs/dashboard.md, "The link graph"). The query and
the data are memory.queries.graph's, shared with the API.
"""

from __future__ import annotations

from typing import Any, NamedTuple
from urllib.parse import urlencode

from django import forms
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.urls import reverse
from django.views.decorators.vary import vary_on_headers

from memory.engine import MAX_GRAPH_NODES, MEMORY_TYPES, MemoryGraph, MemoryRecord
from memory.models import ObjectKind
from memory.queries.graph import Start, degrees, graph_json, load, starting_points
from memory.services import get_agent_memory
from memory.text import plural
from memory.views.common import gone, render_page
from memory.views.memories import links_of
from memory.web.access import viewer_required
from memory.web.converters import path_to
from memory.web.filters import GRAPH_SCOPES, MISSING_MEMORY, GraphFilters

PANEL_LINKS = 50


def error_messages(form: forms.Form) -> dict[str, list[str]]:
    return {name: [str(message) for message in messages] for name, messages in form.errors.items()}


@viewer_required
def graph_data(request: HttpRequest) -> JsonResponse:
    """The graph as JSON; 400 (404 for a missing memory) with {"errors": {field: [message]}}."""
    form = GraphFilters(request.GET)
    if not form.is_valid():
        return JsonResponse({"errors": error_messages(form)}, status=400)
    try:
        graph = load(get_agent_memory(), form)
    except (KeyError, ValueError) as error:
        return JsonResponse({"errors": error_messages(form)}, status=refusal_status(error))
    return JsonResponse(graph_json(graph, form.engine_arguments()["max_nodes"]), json_dumps_params={"indent": None})


def refusal_status(error: KeyError | ValueError) -> int:
    """The status of a graph the engine refused (memory.queries.graph.load): 404 when its memory
    is gone, 400 for an argument it refuses."""
    return 404 if isinstance(error, KeyError) else 400


def with_query(query: QueryDict, **changes: Any) -> str:
    """The graph page's URL with some parameters replaced (None drops one)."""
    pairs = [(key, value) for key, values in query.lists() if key not in changes for value in values]
    for key, value in changes.items():
        if value is None:
            continue
        for item in value if isinstance(value, list) else [value]:
            pairs.append((key, item))
    return reverse("memory:graph") + ("?" + urlencode(pairs) if pairs else "")


def narrowing(form: GraphFilters, query: QueryDict) -> list[tuple[str, str]]:
    """Links to a smaller graph than this one: fewer hops, valid memories only, one memory type."""
    hops = form.engine_arguments()["hops"]
    links = []
    if hops > 0:
        links.append((plural(hops - 1, "hop"), with_query(query, hops=hops - 1)))
    if not form.cleaned_data.get("status"):
        links.append(("valid memories only", with_query(query, status="valid")))
    if not form.cleaned_data.get("memory_type"):
        links += [(f"only {name}", with_query(query, memory_type=name)) for name in MEMORY_TYPES]
    return links


def widening(form: GraphFilters, query: QueryDict) -> str | None:
    """The same graph under the largest cap, unless it has it already: the other way out of a
    truncated graph, offered apart from the narrower ones."""
    if form.engine_arguments()["max_nodes"] >= MAX_GRAPH_NODES:
        return None
    return with_query(query, max_nodes=MAX_GRAPH_NODES)


class LinkEnd(NamedTuple):
    """One end of a link in the table view, as links/other_end.html reads it (the memory page's
    links): its id, and its record (None when the graph left it out)."""

    other_id: str
    other: MemoryRecord | None


def graph_tables(graph: MemoryGraph) -> dict[str, Any]:
    """The graph as the table view lists it: each memory with its number of links, and each link
    with both its memories by their content, type and status (an id alone says nothing)."""
    degree = degrees(graph)
    records = {node.id: node for node in graph.nodes}
    return {
        "memories": [(node, degree[node.id]) for node in graph.nodes],
        "links": [
            (
                edge,
                LinkEnd(edge.source_record_id, records.get(edge.source_record_id)),
                LinkEnd(edge.target_record_id, records.get(edge.target_record_id)),
            )
            for edge in graph.edges
        ],
        "truncated": graph.truncated,
        "total_nodes": graph.total_nodes,
        "total_edges": graph.total_edges,
    }


SCOPE_PAGES = {
    "user_id": ("user", "memory:user_detail"),
    "agent_id": ("agent", "memory:agent_detail"),
    "thread_id": ("thread", "memory:thread_detail"),
    "memory_id": ("memory", "memory:memory_detail"),
}


class Opening(NamedTuple):
    """A graph asked for without a scope: whose graph it opens on (`chosen`, the first of the
    starting points) and the others offered, each with the page's URL from it."""

    chosen: Start
    others: list[tuple[Start, str]]


def opening(query: QueryDict, starts: list[Start]) -> Opening:
    """The opening graph of a page asked for without a scope: the busiest user's (else agent's),
    the others one click away with the same filters."""
    cleared: dict[str, Any] = dict.fromkeys(GRAPH_SCOPES)
    others = [(start, with_query(query, **{**cleared, start.param: start.owner.owner_id})) for start in starts[1:]]
    return Opening(starts[0], others)


@viewer_required
@vary_on_headers("HX-Request")
def graph_page(request: HttpRequest) -> HttpResponse:
    """The page. It draws nothing itself (the browser fetches /graph/data/), so it costs no store
    call, except as tables (`view=table`, the page without JavaScript), and without a scope: then
    it opens on the user (else the agent) with the most links, says so, and offers the others
    with the most as starting points (two grouped counts, memoised by the store); with no link in
    the store it says how to make one. Its links and data URL name the scope it shows."""
    query = request.GET.copy()
    start = None
    unlinked = False
    if not any(query.get(name) for name in GRAPH_SCOPES):
        starts = starting_points(get_agent_memory())
        for name in GRAPH_SCOPES:
            query.pop(name, None)
        if starts:
            start = opening(query, starts)
            query[start.chosen.param] = start.chosen.owner.owner_id
        else:
            unlinked = True  # no two memories linked: the page says how to link them
    asked = not unlinked and any(name in GraphFilters.base_fields for name in query)
    form = GraphFilters(query if asked else None)
    context: dict[str, Any] = {
        "form": form,
        "memory_types": MEMORY_TYPES,
        "table": query.get("view") == "table",
        "max_graph_nodes": f"{MAX_GRAPH_NODES:,}",
        "start": start,
        "unlinked": unlinked,
    }
    status = 200
    if asked:
        if form.is_valid() and form.cleaned_data.get("memory_id"):
            try:
                get_agent_memory().get_memory(form.cleaned_data["memory_id"])
            except KeyError:
                form.add_error("memory_id", MISSING_MEMORY)
                status = 404
        if form.is_valid():
            name, value = form.scope()
            kind, route = SCOPE_PAGES[name]
            query.pop("view", None)
            context.update(
                scope_kind=kind,
                scope_id=value,
                scope_url=path_to(route, value),
                data_url=reverse("memory:graph_data") + "?" + query.urlencode(),
                table_url=with_query(query, view="table"),
                graph_url=with_query(query, view=None),
                narrowing=narrowing(form, query),
                widening=widening(form, query),
            )
            if context["table"]:
                try:
                    graph = load(get_agent_memory(), form)
                except (KeyError, ValueError) as error:
                    status = refusal_status(error)
                else:
                    form.offer_relation_types(edge.relation_type for edge in graph.edges)
                    context["graph"] = graph_tables(graph)
        elif status == 200:
            status = 400
    return render_page(request, "graph/page.html", context, status=status)


@viewer_required
def graph_node(request: HttpRequest, memory_id: str) -> HttpResponse:
    """A memory as the graph's side panel shows it (a fragment for htmx, a page otherwise)."""
    agent_memory = get_agent_memory()
    try:
        record = agent_memory.get_memory(memory_id)
    except KeyError:
        if getattr(request, "htmx", False):
            return render_page(request, "graph/node.html", {"missing": memory_id}, fragment="panel", status=404)
        return gone(request, ObjectKind.MEMORY, memory_id)
    links, more_links = links_of(memory_id, PANEL_LINKS)
    return render_page(
        request,
        "graph/node.html",
        {
            "memory": record,
            "links": links,
            "more_links": more_links,
            # Link changes come back to the graph the panel is shown on (the page's own URL).
            "here": (request.htmx and request.htmx.current_url_abs_path) or request.get_full_path(),
            "centre_url": reverse("memory:graph") + "?" + urlencode({"memory_id": memory_id, "hops": 2}),
        },
        fragment="panel",
    )
