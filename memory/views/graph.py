"""The link graph: the page (/graph/), its data (/graph/data/) and a memory's side panel.

The page is a filter form, a canvas that static/js/graph.js fills from /graph/data/ (same query
string), a legend and the controls; without JavaScript it links to the same graph as tables
(`?view=table`). The data is laid out once on the server (memory.graph_layout), so the browser
only draws. Cytoscape.js draws it: measured in headless Chromium against sigma.js (see README,
"The link graph").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, NamedTuple
from urllib.parse import urlencode

from django import forms
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.urls import reverse
from django.views.decorators.vary import vary_on_headers

from memory.access import viewer_required
from memory.curation import plural
from memory.engine.stores.base import DEFAULT_GRAPH_NODES, MAX_GRAPH_NODES, MAX_HOPS, graph_request
from memory.engine.types import BUILTIN_RELATIONS, MEMORY_TYPES, NOT_SET, MemoryGraph, MemoryRecord
from memory.graph_layout import IDEAL_LENGTH, layout
from memory.listing import FILTER_CHECKBOX, id_filter, memory_type_filter, number_filter, status_filter
from memory.models import ObjectKind
from memory.templatetags.oam import clip, path_to
from memory.views.common import engine, gone, refuse, render_page
from memory.views.memories import links_of

SCOPES = ("user_id", "agent_id", "thread_id", "memory_id")
CONTENT_CHARS = 200
PANEL_LINKS = 50
STATUSES = {"valid": "valid", "invalid": "invalid"}
MISSING_MEMORY = "No such memory: it does not exist, or it has expired."


class RelationTypesField(forms.MultipleChoiceField):
    """Repeatable `relation_type`: the built-in types are offered as boxes to tick, any other
    label is taken as it is (a store may hold custom relation types) and checked by the engine.
    The form's box for typing a custom type sends `relation_type=` when left empty: that asks
    for nothing, so empty values are dropped."""

    def to_python(self, value: Any) -> list[str]:
        return [item for item in super().to_python(value) if item != ""]

    def valid_value(self, value: str) -> bool:
        return True


class GraphFilters(forms.Form):
    """The graph's query string: one scope (a user, agent, thread or memory), how many hops, and
    filters on links and nodes. Checked with the engine's own argument checks, so that its
    messages are the form's errors without a call to the store."""

    user_id = id_filter("User")
    agent_id = id_filter("Agent")
    thread_id = id_filter("Thread")
    memory_id = id_filter("Memory")
    hops = number_filter("Hops", 0, MAX_HOPS, "Links away, 0 to 5.")
    relation_type = RelationTypesField(
        label="Relation",
        required=False,
        choices=[(name, name) for name in BUILTIN_RELATIONS],
        widget=forms.CheckboxSelectMultiple(attrs=FILTER_CHECKBOX),
    )
    memory_type = memory_type_filter()
    status = status_filter(STATUSES)
    max_nodes = number_filter(
        "At most", 1, MAX_GRAPH_NODES, f"Nodes drawn (up to {MAX_GRAPH_NODES:,}); the most linked are kept."
    )

    def __init__(self, data: QueryDict | None, *args: Any, **kwargs: Any) -> None:
        super().__init__(data, *args, **kwargs)
        # Relation types given beyond the built-in ones get a box of their own, ticked.
        self.offer_relation_types(data.getlist("relation_type") if data is not None else [])

    def offer_relation_types(self, names: Iterable[str]) -> None:
        """A box for each relation type among `names` that has none yet (custom types: the
        engine lists no store's types, but a graph drawn shows those of its links)."""
        field = self.fields["relation_type"]
        offered = {value for value, _ in field.choices}
        fresh = [name for name in dict.fromkeys(names) if name and name not in offered]
        field.choices = [*field.choices, *((name, name) for name in fresh)]

    def scope(self) -> tuple[str, str] | None:
        """The (parameter, id) the graph is drawn around, when the form is valid and names one."""
        data = self.cleaned_data
        given = [(name, data[name]) for name in SCOPES if data.get(name)]
        return given[0] if len(given) == 1 else None

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        given = [name for name in SCOPES if data.get(name)]
        if len(given) != 1:
            # The engine's message names its arguments ("pass exactly one of user_id, …"): say it
            # in the form's words instead.
            self.add_error(None, scope_message(given))
            return data
        try:
            graph_request(**self.engine_arguments(data))
        except ValueError as error:
            refuse(self, error)
        return data

    def engine_arguments(self, data: dict[str, Any] | None = None) -> dict[str, Any]:
        """memory_graph's keyword arguments (the form's names are the query string's)."""
        data = self.cleaned_data if data is None else data
        arguments: dict[str, Any] = {name: data.get(name) or NOT_SET for name in SCOPES}
        arguments["hops"] = 1 if data.get("hops") is None else data["hops"]
        arguments["max_nodes"] = data.get("max_nodes") or DEFAULT_GRAPH_NODES
        arguments["relation_types"] = data.get("relation_type") or NOT_SET
        arguments["memory_types"] = data.get("memory_type") or NOT_SET
        arguments["statuses"] = data.get("status") or NOT_SET
        return arguments


SCOPE_NOUNS = {"user_id": "a user", "agent_id": "an agent", "thread_id": "a thread", "memory_id": "a memory"}


def scope_message(given: list[str]) -> str:
    """What to fix when the query names no scope, or several (`given`, in SCOPES order)."""
    message = "Choose one scope: a user, an agent, a thread or a memory"
    if not given:
        return message + "."
    nouns = [SCOPE_NOUNS[name] for name in given]
    if len(nouns) == 2:
        return f"{message} — not both {nouns[0]} and {nouns[1]}."
    return f"{message} — not {', '.join(nouns[:-1])} and {nouns[-1]} at once."


def error_messages(form: forms.Form) -> dict[str, list[str]]:
    return {name: [str(message) for message in messages] for name, messages in form.errors.items()}


def load(form: GraphFilters) -> tuple[MemoryGraph | None, int]:
    """The graph the valid form asks for, or (None, status) with the engine's message on the form."""
    try:
        return engine().memory_graph(**form.engine_arguments()), 200
    except KeyError:
        form.add_error("memory_id", MISSING_MEMORY)
        return None, 404
    except ValueError as error:
        refuse(form, error)
        return None, 400


def degrees(graph: MemoryGraph) -> Counter[str]:
    """How many of the graph's edges each of its memories has."""
    degree: Counter[str] = Counter()
    for edge in graph.edges:
        degree[edge.source_record_id] += 1
        degree[edge.target_record_id] += 1
    return degree


def graph_json(graph: MemoryGraph, max_nodes: int) -> dict[str, Any]:
    """The JSON of /graph/data/: nodes with their degree among the edges and their position,
    edges in their stored direction (source → target)."""
    degree = degrees(graph)
    ids = [node.id for node in graph.nodes]
    positions = layout(ids, [(edge.source_record_id, edge.target_record_id) for edge in graph.edges])
    nodes = [
        {
            "id": node.id,
            "memory_type": node.record_type,
            "status": str(node.status),
            "content": clip(node.content, CONTENT_CHARS),
            "user_id": node.user_id,
            "agent_id": node.agent_id,
            "thread_id": node.thread_id,
            "degree": degree[node.id],
            "x": round(float(x), 1),
            "y": round(float(y), 1),
        }
        for node, (x, y) in zip(graph.nodes, positions.tolist(), strict=True)
    ]
    edges = [
        {
            "id": edge.id,
            "source": edge.source_record_id,
            "target": edge.target_record_id,
            "relation_type": edge.relation_type,
            "opposite_relation_type": edge.opposite_relation_type,
        }
        for edge in graph.edges
    ]
    return {
        "nodes": nodes,
        "edges": edges,
        "truncated": graph.truncated,
        "total_nodes": graph.total_nodes if graph.truncated else len(nodes),
        "total_edges": graph.total_edges if graph.truncated else len(edges),
        "max_nodes": max_nodes,
        "ideal_length": IDEAL_LENGTH,
    }


@viewer_required
def graph_data(request: HttpRequest) -> JsonResponse:
    """The graph as JSON; 400 (404 for a missing memory) with {"errors": {field: [message]}}."""
    form = GraphFilters(request.GET)
    if not form.is_valid():
        return JsonResponse({"errors": error_messages(form)}, status=400)
    graph, status = load(form)
    if graph is None:
        return JsonResponse({"errors": error_messages(form)}, status=status)
    return JsonResponse(graph_json(graph, form.engine_arguments()["max_nodes"]), json_dumps_params={"indent": None})


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


@viewer_required
@vary_on_headers("HX-Request")
def graph_page(request: HttpRequest) -> HttpResponse:
    """The page. It draws nothing itself (the browser fetches /graph/data/), so it costs no store
    call, except as tables (`view=table`, the page without JavaScript)."""
    asked = any(name in GraphFilters.base_fields for name in request.GET)
    form = GraphFilters(request.GET if asked else None)
    context: dict[str, Any] = {
        "form": form,
        "memory_types": MEMORY_TYPES,
        "table": request.GET.get("view") == "table",
        "max_graph_nodes": f"{MAX_GRAPH_NODES:,}",
    }
    status = 200
    if asked:
        if form.is_valid() and form.cleaned_data.get("memory_id"):
            try:
                engine().get_memory(form.cleaned_data["memory_id"])
            except KeyError:
                form.add_error("memory_id", MISSING_MEMORY)
                status = 404
        if form.is_valid():
            name, value = form.scope()
            kind, route = SCOPE_PAGES[name]
            query = request.GET.copy()
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
                graph, status = load(form)
                if graph is not None:
                    form.offer_relation_types(edge.relation_type for edge in graph.edges)
                    context["graph"] = graph_tables(graph)
        elif status == 200:
            status = 400
    return render_page(request, "graph/page.html", context, status=status)


@viewer_required
def graph_node(request: HttpRequest, memory_id: str) -> HttpResponse:
    """A memory as the graph's side panel shows it (a fragment for htmx, a page otherwise)."""
    memory = engine()
    try:
        record = memory.get_memory(memory_id)
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
