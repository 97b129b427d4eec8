"""Visibility: the users and agents a restricted view of the store may see (scoped logins).

A record is visible when its user is one of `users` (when users are given; a record of no user
is then outside) and its agent is one of `agents` (when agents are given). A relation is visible
when both its ends are. `AgentMemory.restricted(visibility)` gives a view of the same store whose
every read applies this in SQL and whose every write outside it is refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from .limits import check_id_text


class OutsideVisibilityError(ValueError):
    """A write a restricted view refuses: a new record's user or agent outside it, or a change
    only an unrestricted view may make (restore, repair, re-embed, purge). `field` names the
    argument at fault when there is one."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def _ids(name: str, values: Any) -> frozenset[str] | None:
    if values is None:
        return None
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a collection of ids or None, not {type(values).__name__}")
    ids = frozenset(values)
    for value in ids:
        if not isinstance(value, str) or not value:
            raise ValueError(f"{name} must hold non-empty strings, not {value!r}")
        check_id_text(name, value)
    if not ids:
        raise ValueError(f"{name} must name at least one id, or be None (no restriction)")
    return ids


def _meet(first: frozenset[str] | None, second: frozenset[str] | None) -> frozenset[str] | None:
    if first is None or second is None:
        return first if second is None else second
    return first & second


@dataclass(frozen=True)
class Visibility:
    """The users and agents a view sees; None on a dimension leaves it open."""

    users: frozenset[str] | None = None
    agents: frozenset[str] | None = None

    def __init__(self, users: Iterable[str] | None = None, agents: Iterable[str] | None = None) -> None:
        object.__setattr__(self, "users", _ids("users", users))
        object.__setattr__(self, "agents", _ids("agents", agents))

    @property
    def unrestricted(self) -> bool:
        return self.users is None and self.agents is None

    def sees(self, user_id: Any, agent_id: Any) -> bool:
        """Whether a record of this user and agent (None: none) is visible."""
        if self.users is not None and user_id not in self.users:
            return False
        return self.agents is None or agent_id in self.agents

    def check_new(self, user_id: Any, agent_id: Any) -> None:
        """Refuse a new record (or a record moved) to this user and agent when it would be outside."""
        if self.users is not None and user_id not in self.users:
            raise OutsideVisibilityError(f"user_id must be one of {', '.join(sorted(self.users))}", "user_id")
        if self.agents is not None and agent_id not in self.agents:
            raise OutsideVisibilityError(f"agent_id must be one of {', '.join(sorted(self.agents))}", "agent_id")

    def narrowed(self, other: Visibility) -> Visibility:
        """What both let one see: a view restricted again never sees more than it did."""
        users, agents = _meet(self.users, other.users), _meet(self.agents, other.agents)
        for name, ids in (("users", users), ("agents", agents)):
            if ids is not None and not ids:
                raise ValueError(f"{name}: the two visibilities share none")
        return Visibility(users=users, agents=agents)

    def describe(self) -> str:
        """ "users alice, bob; agents atlas", or "everything"."""
        parts = []
        if self.users is not None:
            parts.append("users " + ", ".join(sorted(self.users)))
        if self.agents is not None:
            parts.append("agents " + ", ".join(sorted(self.agents)))
        return "; ".join(parts) or "everything"


_current: ContextVar[Visibility | None] = ContextVar("oam_visibility", default=None)


def current_visibility() -> Visibility | None:
    """The visibility the current caller was given by `visible_as` (None: unrestricted). The
    engine itself never applies it: a front door reads it to pick its restricted() view (the
    dashboard's `get_agent_memory()` and its history rows), as `acting_as` names the caller."""
    return _current.get()


@contextmanager
def visible_as(visibility: Visibility | None) -> Iterator[None]:
    """A block whose caller sees only `visibility` (None or unrestricted: everything); a thread
    started inside it keeps it only when run in a copy of the context (contextvars.copy_context)."""
    if visibility is not None and not isinstance(visibility, Visibility):
        raise TypeError(f"visibility must be a Visibility or None, not {type(visibility).__name__}")
    token = _current.set(None if visibility is None or visibility.unrestricted else visibility)
    try:
        yield
    finally:
        _current.reset(token)
