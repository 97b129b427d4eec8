"""The search workbench (/search/): run the engine's search with every parameter, see why each
result ranked where it did, what an agent would receive, and how the strategies differ."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.views.decorators.vary import vary_on_headers

from memory.engine import SearchResult, SearchStrategy, estimate_tokens
from memory.views.common import engine, refuse, render_page
from memory.web.access import viewer_required
from memory.web.forms.search import SearchForm

USERS_OFFERED = 24
"""Users offered to a client search that names none (the top bar's)."""


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


def searcher(given: Mapping[str, Any]) -> tuple[Callable[..., list[SearchResult]], str]:
    """The search call that a search's parameters (the form's, or the API's) ask for: the
    client's, or a thread's, and how to name it."""
    memory = engine()
    if given.get("layer") == "thread":
        thread_id = given["thread_id"]
        try:
            return memory.get_thread(thread_id).search, f"Thread.search of {thread_id}"
        except KeyError:
            raise ValueError(f"thread_id names no thread: {thread_id!r}") from None
    return memory.search, "AgentMemory.search"


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


def run_search(form: SearchForm, *, comparing: bool) -> dict:
    """The search the form describes, each result formatted as an agent receives it, and the
    strategies compared when asked; the engine's ValueErrors pass through, for the form."""
    query, arguments = form.cleaned_data["q"], form.search_arguments()
    search_call, layer = searcher(form.cleaned_data)
    own_strategy = engine().store.search_strategy.value
    strategy = arguments.get("strategy") or own_strategy
    results, elapsed = timed(search_call, query, arguments)
    config = form.format_config()
    formatted = [Formatted(r, text := r.format_content(config), estimate_tokens(text)) for r in results]
    found = {
        "results": formatted,
        "elapsed": elapsed,
        "layer": layer,
        "strategy": strategy if "strategy" in arguments else f"{strategy} (the store's)",
        "total_tokens": sum(item.tokens for item in formatted),
        "ranking_distance_meaning": RANKING_DISTANCE[strategy],
    }
    if not results and arguments.get("token_budget"):  # say so when the budget is why nothing came back
        unbudgeted = search_call(query, **{**arguments, "token_budget": None, "max_results": 1})
        if unbudgeted:
            found["over_budget"] = (arguments["token_budget"], estimate_tokens(unbudgeted[0].format_content(config)))
    if comparing:
        found["comparison"], found["compared_in"] = compare(search_call, query, arguments, strategy)
    return found


@viewer_required
@vary_on_headers("HX-Request")
def search(request: HttpRequest) -> HttpResponse:
    """A GET: the URL holds every parameter, so a search is a link to share. The engine's errors
    (a bad filter, a thread that is not there) are the form's; a client search without its user
    (the top bar's) asks whom to search as."""
    form = SearchForm(request.GET or None)
    valid = form.is_bound and form.is_valid()
    # The query as a name of its own: a template's lookup of form.cleaned_data first tries
    # form["cleaned_data"], a KeyError that Django words at length, once for each result.
    context: dict = {"form": form, "query": form.cleaned_data.get("q", "") if form.is_bound else ""}
    if valid and form.needs_user():
        context["users"] = engine().list_users(limit=USERS_OFFERED)
    elif valid:
        try:
            context.update(run_search(form, comparing=bool(request.GET.get("compare"))))
        except ValueError as error:
            refuse(form, error)
    status = 400 if form.errors else 200
    return render_page(request, "search/page.html", context, fragment="results", status=status)
