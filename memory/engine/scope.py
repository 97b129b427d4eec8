"""Scope and SearchScope, and the scope-resolution rules of each layer (spec §2).

Every layer resolves a caller's scope the same way: for each dimension an omitted value or flag
takes the layer's default, then an exact flag that resolves to True turns the value (a concrete id
or None, meaning "unscoped") into an equality filter, and False leaves the dimension open.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .limits import check_id_text
from .types import NOT_SET

DIMENSIONS = ("user_id", "agent_id", "thread_id")
EXACT_FLAGS = {"user_id": "exact_user_match", "agent_id": "exact_agent_match", "thread_id": "exact_thread_match"}


@dataclass
class Scope:
    """Scope for inserting or searching: each field NOT_SET (omitted), an id, or None (unscoped)."""

    user_id: Any = NOT_SET
    agent_id: Any = NOT_SET
    thread_id: Any = NOT_SET


@dataclass
class SearchScope(Scope):
    """A Scope plus, per dimension, whether the resolved value must match exactly."""

    exact_user_match: Any = NOT_SET
    exact_agent_match: Any = NOT_SET
    exact_thread_match: Any = NOT_SET


@dataclass(frozen=True)
class ScopeFilter:
    """The outcome of resolution: the exact constraints a search applies, by column.

    A column absent from `exact` is unconstrained; present with None, it matches only records that
    are unscoped on that dimension.
    """

    exact: dict[str, str | None] = field(default_factory=dict)


def check_scope_value(name: str, value: Any) -> None:
    if value is not NOT_SET and value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be a string or None, not {type(value).__name__}")
    if isinstance(value, str):
        if not value:
            raise ValueError(f"{name} must not be an empty string; pass None for 'unscoped'")
        check_id_text(name, value)


def _check_flag(name: str, value: Any) -> None:
    if value is not NOT_SET and not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, not {value!r}")


def search_scope_from_args(scope: Any, **explicit: Any) -> SearchScope:
    """Merge the `scope=` argument with explicit id/flag arguments; combining both is an error."""
    given = {name: value for name, value in explicit.items() if value is not NOT_SET}
    if scope is NOT_SET or scope is None:
        return SearchScope(**explicit)
    if not isinstance(scope, Scope):
        raise ValueError(f"scope must be a SearchScope, not {type(scope).__name__}")
    if given:
        raise ValueError(f"pass either scope= or explicit scope arguments, not both (got {', '.join(sorted(given))})")
    if isinstance(scope, SearchScope):
        return scope
    return SearchScope(user_id=scope.user_id, agent_id=scope.agent_id, thread_id=scope.thread_id)


def resolve(scope: SearchScope, defaults: dict[str, tuple[Any, bool]]) -> ScopeFilter:
    """Resolve `scope` against a layer's defaults: {dimension: (default value, default exact flag)}."""
    exact: dict[str, str | None] = {}
    for dim in DIMENSIONS:
        flag_name = EXACT_FLAGS[dim]
        value, flag = getattr(scope, dim), getattr(scope, flag_name)
        check_scope_value(dim, value)
        _check_flag(flag_name, flag)
        default_value, default_flag = defaults[dim]
        value = default_value if value is NOT_SET else value
        flag = default_flag if flag is NOT_SET else flag
        if flag:
            exact[dim] = value
    return ScopeFilter(exact)


STORE_DEFAULTS = {dim: (None, False) for dim in DIMENSIONS}


def resolve_store_scope(scope: SearchScope) -> ScopeFilter:
    """Store layer: every dimension defaults to None with a non-exact match, i.e. unfiltered."""
    return resolve(scope, STORE_DEFAULTS)


def resolve_thread_scope(scope: SearchScope, user_id: str | None, agent_id: str | None, thread_id: str) -> ScopeFilter:
    """Thread layer: the thread's user and agent exactly, its own thread id non-exactly."""
    return resolve(scope, {"user_id": (user_id, True), "agent_id": (agent_id, True), "thread_id": (thread_id, False)})


def resolve_client_scope(scope: SearchScope) -> ScopeFilter:
    """Client layer: the user must be given explicitly and matched exactly; agent and thread are open."""
    if scope.user_id is NOT_SET:
        raise ValueError("AgentMemory.search requires user_id (pass None to search records without a user)")
    if scope.exact_user_match is False:
        raise ValueError("AgentMemory.search requires exact_user_match=True")
    return resolve(scope, {"user_id": (NOT_SET, True), "agent_id": (None, False), "thread_id": (None, False)})
