"""Searches as both front doors run them: the call a search's parameters ask for (the client's or
a thread's), timed, and compared across the engine's strategies (the workbench's comparison)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from memory.engine import AgentMemory, SearchResult, SearchStrategy


@dataclass(frozen=True)
class Formatted:
    """A result with the text an agent would receive for it, and that text's token estimate."""

    result: SearchResult
    text: str
    tokens: int


@dataclass(frozen=True)
class Comparison:
    """One record's rank under each strategy (None: not among the results), and how it moved
    from the strategy of the search to each other one (positive: up)."""

    result: SearchResult
    ranks: dict[str, int | None]
    moves: dict[str, int | None]


def searcher(agent_memory: AgentMemory, given: Mapping[str, Any]) -> tuple[Callable[..., list[SearchResult]], str]:
    """The search call that a search's parameters (the form's, or the API's) ask for: the
    client's, or a thread's, and how to name it."""
    if given.get("layer") == "thread":
        thread_id = given["thread_id"]
        try:
            return agent_memory.get_thread(thread_id).search, f"Thread.search of {thread_id}"
        except KeyError:
            raise ValueError(f"thread_id names no thread: {thread_id!r}") from None
    return agent_memory.search, "AgentMemory.search"


def timed(search: Callable[..., list[SearchResult]], query: str, arguments: dict) -> tuple[list[SearchResult], float]:
    started = time.perf_counter()
    results = search(query, **arguments)
    return results, (time.perf_counter() - started) * 1000


def compare(search: Callable[..., list[SearchResult]], query: str, arguments: dict, chosen: str) -> tuple[list, dict]:
    """The query under every strategy: rows in the `chosen` strategy's order, then the records
    only the others found; and each strategy's engine time."""
    runs, elapsed = {}, {}
    for strategy in SearchStrategy:
        runs[strategy.value], elapsed[strategy.value] = timed(search, query, {**arguments, "strategy": strategy})
    ranks = {name: {result.id: rank for rank, result in enumerate(results, 1)} for name, results in runs.items()}
    order = [*runs[chosen], *(result for name in runs if name != chosen for result in runs[name])]
    rows, seen = [], set()
    for result in order:
        if result.id in seen:
            continue
        seen.add(result.id)
        these = {name: ranks[name].get(result.id) for name in runs}
        base = these[chosen]
        moves = {name: None if base is None or rank is None else base - rank for name, rank in these.items()}
        rows.append(Comparison(result, these, moves))
    return rows, elapsed


# What a result's distance (the one the results are ordered by) is under each strategy; the
# results page says it beside the raw vector distance, which it may differ from.
RANKING_DISTANCE = {
    SearchStrategy.HYBRID.value: "hybrid search: 1 \u2212 fused score ÷ the best possible fused score",
    SearchStrategy.VECTOR.value: "vector search: the vector distance itself",
    SearchStrategy.KEYWORD.value: "keyword search: grows with the keyword rank",
}
