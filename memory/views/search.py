"""The search workbench (/search/): run the engine's search with every parameter, see why each
result ranked where it did, what an agent would receive, and how the strategies differ."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.vary import vary_on_headers

from memory.engine import estimate_tokens
from memory.queries.search import RANKING_DISTANCE, Formatted, compare, searcher, timed
from memory.services import get_agent_memory
from memory.views.common import refuse, render_page
from memory.web.access import viewer_required
from memory.web.forms.search import SearchForm

USERS_OFFERED = 24
"""Users offered to a client search that names none (the top bar's)."""


def run_search(form: SearchForm, *, comparing: bool) -> dict:
    """The search the form describes, each result formatted as an agent receives it, and the
    strategies compared when asked; the engine's ValueErrors pass through, for the form."""
    query, arguments = form.cleaned_data["q"], form.search_arguments()
    search_call, layer = searcher(get_agent_memory(), form.cleaned_data)
    own_strategy = get_agent_memory().store.search_strategy.value
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
        context["users"] = get_agent_memory().list_users(limit=USERS_OFFERED)
    elif valid:
        try:
            context.update(run_search(form, comparing=bool(request.GET.get("compare"))))
        except ValueError as error:
            refuse(form, error)
    status = 400 if form.errors else 200
    return render_page(request, "search/page.html", context, fragment="results", status=status)
