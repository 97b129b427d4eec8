"""Search at the thread and client layers: SearchResult, its XML-safe rendering, token budgets.

Threads and the client differ only in how they resolve scope (scope.py); once resolved, both
run the same search here, so their ranking, filters and budgets cannot drift apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .formatting import SearchResultFormatConfig, format_result
from .limits import check_int_range
from .scope import ScopeFilter
from .types import NOT_SET, MemorySearchConfig, Record

CHARS_PER_TOKEN = 3.5


def estimate_tokens(text: str) -> int:
    """The engine's token estimate (D7): about 3.5 characters a token, rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass
class SearchResult:
    """One ranked record. Smaller `distance` is better; `linked_results` holds the link tree."""

    distance: float
    record: Record
    id: str | None = None
    linked_results: list = field(default_factory=list)
    scores: dict[str, float | int] = field(default_factory=dict)
    """How the record ranked: `vector_rank`, `vector_distance`, `keyword_rank`, `keyword_score`
    (BM25) for the rankings it appeared in, and the fused `score` of a hybrid search."""
    include_invalid_results: bool = True
    """The option of the search that produced the result; formatting follows it by default."""

    def __post_init__(self) -> None:
        if self.id is None:
            self.id = self.record.id

    @property
    def content(self) -> str:
        return self.record.content

    @property
    def metadata(self) -> dict[str, Any] | None:
        return self.record.metadata

    @property
    def timestamp(self) -> str | None:
        return self.record.timestamp

    def format_content(self, config: SearchResultFormatConfig | None = None) -> str:
        """The result and its linked memories as XML-safe prompt text (formatting.py, D6)."""
        return format_result(self, config)

    @property
    def formatted_content(self) -> str:
        """The default rendering: timestamp, role and status shown; the search's invalid-results option."""
        return format_result(self)


def apply_token_budgets(results: list[SearchResult], token_budget: Any, soft_token_budget: Any) -> list[SearchResult]:
    """Keep whole results in rank order within a hard budget and up to a soft target.

    The hard budget stops at the first result that would overflow it (so a first result that is
    too big alone leaves nothing); the soft target keeps the result that reaches it and drops the
    rest. A budget that is None or <= 0 is off.
    """
    hard = token_budget if isinstance(token_budget, int) and token_budget > 0 else None
    soft = soft_token_budget if isinstance(soft_token_budget, int) and soft_token_budget > 0 else None
    if hard is None and soft is None:
        return results
    kept, total = [], 0
    for result in results:
        tokens = estimate_tokens(result.formatted_content)
        if hard is not None and total + tokens > hard:
            break
        kept.append(result)
        total += tokens
        if soft is not None and total >= soft:
            break
    return kept


def check_budget(name: str, value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"{name} must be an integer or None, not {value!r}")
    if value is not None:
        check_int_range(name, value)


def search_records(
    store: Any,
    query: Any,
    scope: ScopeFilter,
    *,
    max_results: Any,
    token_budget: Any,
    soft_token_budget: Any,
    record_types: Any,
    metadata_filter: Any,
    include_invalid_results: Any,
    num_hops: Any,
    max_linked_results: Any,
    search_config: MemorySearchConfig,
    strategy: Any = NOT_SET,
    created_at_or_before: Any = NOT_SET,
) -> list[SearchResult]:
    """Run a resolved search against the store and apply the token budgets. `strategy` and
    `created_at_or_before` are MemoryStore.search's."""
    if not isinstance(query, str):
        raise ValueError(f"query must be a string, not {type(query).__name__}")
    if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
        raise ValueError(f"max_results must be an integer >= 1, not {max_results!r}")
    check_int_range("max_results", max_results)
    if metadata_filter is not None and not isinstance(metadata_filter, dict):
        raise ValueError(f"metadata_filter must be a dict or None, not {type(metadata_filter).__name__}")
    token_budget = search_config.token_budget if token_budget is NOT_SET else token_budget
    soft_token_budget = search_config.soft_token_budget if soft_token_budget is NOT_SET else soft_token_budget
    check_budget("token_budget", token_budget)
    check_budget("soft_token_budget", soft_token_budget)
    flags = {"user_id": "exact_user_match", "agent_id": "exact_agent_match", "thread_id": "exact_thread_match"}
    scope_args: dict[str, Any] = {}
    for dimension, flag in flags.items():
        if dimension in scope.exact:
            scope_args[dimension], scope_args[flag] = scope.exact[dimension], True
    hits = store.search(
        query,
        max_results,
        record_types=None if record_types is NOT_SET else record_types,
        metadata_filter=metadata_filter,
        include_invalid_results=include_invalid_results,
        num_hops=num_hops,
        max_linked_results=max_linked_results,
        strategy=strategy,
        created_at_or_before=created_at_or_before,
        **scope_args,
    )
    results = [result_from_hit(hit, include_invalid_results) for hit in hits]
    return apply_token_budgets(results, token_budget, soft_token_budget)


def result_from_hit(hit: Any, include_invalid_results: bool) -> SearchResult:
    """A SearchResult, with its linked tree, from a store's (record, distance) hit."""
    record, distance = hit[0], hit[1]
    linked = [(relation, result_from_hit(child, include_invalid_results)) for relation, child in record.linked_results]
    return SearchResult(
        distance=distance,
        record=record,
        linked_results=linked,
        scores=dict(getattr(hit, "parts", {})),
        include_invalid_results=include_invalid_results,
    )
