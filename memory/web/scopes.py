"""Scoped logins: a login (and every API token it owns) limited to some users and/or agents.

The scope is an `AccessScope` row (none: everything). It is enforced in one place below the views:
for each request, `ScopeMiddleware` names the signed-in person's scope as the engine's current
visibility (`memory.engine.visible_as`), and the API's token authentication does the same for a
token's owner (`adopt`); `memory.services.get_agent_memory()` then hands every read model and
every write the engine's restricted view, and `CurationEntry.objects` filters the history. The
scope ends with the request; a streamed answer (an export) is produced inside it, and a thread a
request starts keeps it when run in a copy of the request's context (`contextvars.copy_context`).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memory.engine import OutsideVisibilityError, Visibility, check_id_text, visible_as
from memory.models import AccessScope
from memory.web.access import role_of

STACK = "_oam_scope_stack"


class ScopeError(ValueError):
    """A scope that cannot be given: `field` names the form field at fault."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def scope_of(user: AbstractBaseUser | AnonymousUser | None) -> Visibility | None:
    """The login's scope, or None when it sees everything (looked up once per user object)."""
    if user is None or not user.is_authenticated:
        return None
    cached = getattr(user, "_oam_scope", "unknown")
    if cached != "unknown":
        return cached
    row = AccessScope.objects.filter(login=user).order_by("pk").first()  # one query, no join
    scope = None if row is None else row.visibility()
    scope = None if scope is None or scope.unrestricted else scope
    user._oam_scope = scope
    return scope


def describe(scope: Visibility | None) -> str:
    """ "alice, bob" / "alice, bob (agent atlas)" / "agents atlas, zeus" / "everything"."""
    if scope is None:
        return "everything"
    parts = []
    if scope.users is not None:
        parts.append(", ".join(sorted(scope.users)))
    if scope.agents is not None:
        agents = ", ".join(sorted(scope.agents))
        label = "agent" if len(scope.agents) == 1 else "agents"
        parts.append(f"({label} {agents})" if parts else f"{label} {agents}")
    return " ".join(parts)


def parse_ids(field: str, value: str | Iterable[str] | None) -> list[str]:
    """Ids from "alice, bob" (or a list): trimmed, each checked as the engine checks an id,
    duplicates dropped, in the order given."""
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else list(value)
    ids: list[str] = []
    for item in items:
        item = str(item).strip()
        if not item:
            continue
        try:
            check_id_text(field, item)
        except ValueError as error:
            raise ScopeError(str(error), field) from None
        if item not in ids:
            ids.append(item)
    return ids


def set_scope(login: AbstractBaseUser, users: Iterable[str] | None, agents: Iterable[str] | None) -> Visibility | None:
    """Limit `login` to these users and agents (empty or None on both: clear its scope, so it sees
    everything). An admin sees everything: giving one a scope is refused."""
    users, agents = sorted(parse_ids("users", users)), sorted(parse_ids("agents", agents))
    with transaction.atomic():
        if not users and not agents:
            AccessScope.objects.filter(login=login).delete()
            scope = None
        else:
            if role_of(login) == "admin":
                raise ScopeError("an admin sees everything: give the scope to a viewer or curator login")
            AccessScope.objects.update_or_create(login=login, defaults={"users": users, "agents": agents})
            scope = Visibility(users=users or None, agents=agents or None)
    login._oam_scope = scope
    return scope


def adopt(request: Any, user: AbstractBaseUser) -> None:
    """The rest of this request sees what `user` (an API token's owner) may see; the scope ends
    with the request (ScopeMiddleware's block). Without that block a scoped login is refused
    rather than answered unscoped."""
    scope = scope_of(user)
    stack = getattr(getattr(request, "_request", request), STACK, None)
    if stack is None:
        if scope is None:
            return
        raise RuntimeError("memory.web.scopes.ScopeMiddleware must run for a scoped login's requests")
    stack.enter_context(visible_as(scope))


def _in_context(context: contextvars.Context, chunks: Iterable[Any]) -> Iterator[Any]:
    iterator = iter(chunks)
    while True:
        try:
            yield context.run(next, iterator)
        except StopIteration:
            return


class ScopeMiddleware:
    """Every request of a scoped login sees only its scope (module docstring); after
    AuthenticationMiddleware. A streamed answer's chunks are made inside the request's scope."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with ExitStack() as stack:
            setattr(request, STACK, stack)
            stack.enter_context(visible_as(scope_of(getattr(request, "user", None))))
            response = self.get_response(request)
            if getattr(response, "streaming", False):
                response.streaming_content = _in_context(contextvars.copy_context(), response.streaming_content)
            return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        """A change of the whole store (a consistency check or repair, a re-embedding) asked by a
        scoped login: refused with a page that says why, not a 500."""
        if isinstance(exception, OutsideVisibilityError):
            return render(request, "errors/scoped.html", {"reason": str(exception)}, status=403)
        return None
