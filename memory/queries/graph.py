"""The link graph's query and data, shared by the dashboard's graph (memory.views.graph) and the
API's /api/v1/graph/: the filter form (one scope, hops, filters on links and nodes), the graph it
asks the engine for, and that graph as JSON, laid out on the server (memory.queries.graph_layout)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from django import forms
from django.http import QueryDict

from memory.engine import (
    BUILTIN_RELATIONS,
    DEFAULT_GRAPH_NODES,
    MAX_GRAPH_NODES,
    MAX_HOPS,
    NOT_SET,
    MemoryGraph,
    graph_request,
)
from memory.queries.graph_layout import IDEAL_LENGTH, layout
from memory.services import get_agent_memory
from memory.text import clip
from memory.web.engine_errors import field_errors
from memory.web.filters import (
    FILTER_CHECKBOX,
    RelationTypesField,
    id_filter,
    memory_type_filter,
    number_filter,
    status_filter,
)

SCOPES = ("user_id", "agent_id", "thread_id", "memory_id")
CONTENT_CHARS = 200
STATUSES = {"valid": "valid", "invalid": "invalid"}
MISSING_MEMORY = "No such memory: it does not exist, or it has expired."


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
            field, message = field_errors(error, self.fields)
            self.add_error(field, message)
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


def load(form: GraphFilters) -> tuple[MemoryGraph | None, int]:
    """The graph the valid form asks for, or (None, status) with the engine's message on the form."""
    try:
        return get_agent_memory().memory_graph(**form.engine_arguments()), 200
    except KeyError:
        form.add_error("memory_id", MISSING_MEMORY)
        return None, 404
    except ValueError as error:
        field, message = field_errors(error, form.fields)
        form.add_error(field, message)
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
