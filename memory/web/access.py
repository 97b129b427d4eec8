"""Who may do what: viewers read, curators also write, staff are admins.

Roles are Django groups (created by migration 0001). Login itself is required for every page by
LoginRequiredMiddleware; these checks come on top. A logged-in account without a role sees
nothing but a page saying so: being able to log in is not being allowed to read memories.

Writes are refused in one place, ReadOnlyViewersMiddleware: a POST (or any method but a read)
to a dashboard page from an account that cannot curate is a 403, whatever the page, so that no
read page answers a hand-made POST as if it had been a GET. The few pages where a viewer changes
their own settings, not the store (their API tokens, the theme), say so with `viewers_may_post`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

VIEWERS = "viewers"
CURATORS = "curators"
ROLES = ("viewer", "curator", "admin")
SAFE_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE")
NO_ROLE = "Your account has no role yet: ask an admin to make you a viewer or a curator."
READ_ONLY = "Only curators can change the memory store; your account can read it."


def role_of(user: AbstractBaseUser | AnonymousUser) -> str | None:
    """ "admin", "curator", "viewer" or None, computed once per user object (a request's user)."""
    if not user.is_authenticated or not user.is_active:
        return None
    cached = getattr(user, "_oam_role", "unknown")
    if cached != "unknown":
        return cached
    if user.is_staff or user.is_superuser:
        role = "admin"
    else:
        groups = set(user.groups.values_list("name", flat=True))
        role = "curator" if CURATORS in groups else "viewer" if VIEWERS in groups else None
    user._oam_role = role
    return role


def can_view(user: Any) -> bool:
    return role_of(user) is not None


def can_curate(user: Any) -> bool:
    return role_of(user) in ("curator", "admin")


def viewer_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A page that reads the store: any role (login is already required by the middleware)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not can_view(request.user):
            raise PermissionDenied(NO_ROLE)
        return view(request, *args, **kwargs)

    return wrapper


def curator_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A page that changes the store: curators and admins, for every method (a viewer does not
    even see the form, so its GET is refused too)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not can_curate(request.user):
            raise PermissionDenied(READ_ONLY)
        return view(request, *args, **kwargs)

    return wrapper


def viewers_may_post(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A page where any account may write what is its own (its API tokens, its theme), not the
    store: ReadOnlyViewersMiddleware lets its POSTs through to the view, which checks them."""
    view.viewers_may_post = True  # type: ignore[attr-defined]
    return view


class ReadOnlyViewersMiddleware:
    """A dashboard request that is not a read (POST, PUT, DELETE, …) from an account that cannot
    curate is a 403 before its view runs, unless the view is marked `viewers_may_post`. Read
    pages take no POST of their own, and would otherwise answer one with the page, a 200 that
    looks as if the write was accepted. The API has its own permissions (memory.api.permissions);
    anonymous requests are LoginRequiredMiddleware's, which comes before this one."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view: Callable[..., HttpResponse], *_: Any) -> None:
        if request.method in SAFE_METHODS or getattr(view, "viewers_may_post", False):
            return
        if request.resolver_match.namespace != "memory" or not request.user.is_authenticated:
            return
        if not can_curate(request.user):
            raise PermissionDenied(READ_ONLY if can_view(request.user) else NO_ROLE)


def grant_role(user: AbstractBaseUser, role: str) -> None:
    """Give `user` exactly one role: the viewers or curators group, or staff for admins."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    user.groups.remove(*Group.objects.filter(name__in=(VIEWERS, CURATORS)))
    user.is_staff = role == "admin"
    user.save(update_fields=["is_staff"])
    if role != "admin":
        group, _ = Group.objects.get_or_create(name=VIEWERS if role == "viewer" else CURATORS)
        user.groups.add(group)
