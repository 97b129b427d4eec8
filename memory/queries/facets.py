"""A listing's facets, as Datasette and Langfuse show them: the total the filters match, and beside
each value of type, status, user, agent and tag how many of those memories (or threads) have it,
each a link that narrows the listing to it (or, for a value already chosen, widens it again)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.http import QueryDict

from memory.engine import AgentMemory

FACET_VALUES = 8
"""Values shown per facet (the most frequent); the rest are counted as "n more"."""
FACETS = (
    ("memory_type", "Type"),
    ("status", "Status"),
    ("user_id", "User"),
    ("agent_id", "Agent"),
    ("tag", "Tag"),
)
THREAD_FACETS = (("user_id", "User"), ("agent_id", "Agent"), ("tag", "Tag"))
PAGING = ("cursor",)
"""Parameters a narrower listing starts without: it starts at its own first page."""


@dataclass(frozen=True)
class FacetValue:
    value: Any
    label: str
    count: int
    chosen: bool
    query: str | None
    """The listing's query string with this value chosen (or, when it is, without it); None where
    the listing has no filter for it (threads without a user)."""


@dataclass(frozen=True)
class Facet:
    name: str
    label: str
    values: list[FacetValue]
    more: int
    """Values left out (past FACET_VALUES)."""


@dataclass(frozen=True)
class Facets:
    total: int
    facets: list[Facet]
    noun: str = "memory"
    expired: int = 0
    """Memories the filters match but the listing leaves out, past their expiry (awaiting purge)."""


def memory_facets(agent_memory: AgentMemory, arguments: dict[str, Any], query: QueryDict) -> Facets:
    """The facets of the memory listing the engine `arguments` (MemoryFilters.engine_arguments)
    list: the total, and the counts of each facet's values (one grouping query each, and a count
    of the expired, which the listing's status filter offers too)."""
    filters = {name: value for name, value in arguments.items() if name not in ("cursor", "limit", "newest_first")}
    counted = agent_memory.memory_facets([name for name, _ in FACETS], **filters)
    total = agent_memory.count_memories(**filters)
    expired = 0
    if filters.get("status") == "expired":  # past their expiry: neither valid nor invalid to a reader
        counted["status"] = [("expired", total)]
    elif "status" not in filters:  # the live ones are listed and counted; the expired apart
        expired = agent_memory.count_memories(**{**filters, "status": "expired"})
        counted["status"] += [("expired", expired)] if expired else []
    return Facets(total, shown_facets(FACETS, counted, query), expired=expired)


def thread_facets(agent_memory: AgentMemory, arguments: dict[str, Any], query: QueryDict) -> Facets:
    """The facets of the thread listing the engine `arguments` (ThreadFilters.engine_arguments)
    list: its total (the user facet's counts: every thread has one user value) and the counts of
    each facet's values."""
    filters = {name: value for name, value in arguments.items() if name not in ("cursor", "limit")}
    counted = agent_memory.thread_facets([name for name, _ in THREAD_FACETS], **filters)
    total = sum(count for _, count in counted["user_id"])
    return Facets(total, shown_facets(THREAD_FACETS, counted, query, unscoped=False), noun="thread")


def shown_facets(
    names: tuple[tuple[str, str], ...], counted: dict[str, list], query: QueryDict, *, unscoped: bool = True
) -> list[Facet]:
    """The facets with values, each value's first FACET_VALUES with their links."""
    facets = []
    for name, label in names:
        values = [facet_value(name, value, count, query, unscoped) for value, count in counted[name][:FACET_VALUES]]
        if values:
            facets.append(Facet(name, label, values, max(0, len(counted[name]) - FACET_VALUES)))
    return facets


def facet_value(name: str, value: Any, count: int, query: QueryDict, unscoped: bool = True) -> FacetValue:
    """One value of a facet with the query string that chooses it, or drops it when chosen; no
    query for None (no user, no agent) where the listing has no `unscoped` filter."""
    narrowed = query.copy()
    for parameter in PAGING:
        narrowed.pop(parameter, None)
    narrowed.pop("facets", None)  # the narrower listing comes first and fetches its own after
    if name == "tag":
        chosen_filter = json.dumps({"tags": {"$array_contains": value}}, ensure_ascii=False)
        chosen = query.get("metadata_filter", "").strip() == chosen_filter
        narrowed.setlist("metadata_filter", [] if chosen else [chosen_filter])
    elif value is None and not unscoped:
        label = {"user_id": "no user", "agent_id": "no agent"}[name]
        return FacetValue(value, label, count, False, None)
    elif value is None:  # no user, no agent: the listing's "unscoped" choice
        chosen = name in query.getlist("unscoped")
        others = [item for item in narrowed.getlist("unscoped") if item != name]
        narrowed.setlist("unscoped", others if chosen else [*others, name])
        narrowed.pop(name, None)
    else:
        chosen = str(value) in query.getlist(name)
        narrowed.setlist(name, [] if chosen else [str(value)])
    label = {"user_id": "no user", "agent_id": "no agent"}.get(name, "") if value is None else str(value)
    return FacetValue(value, label, count, chosen, narrowed.urlencode())
