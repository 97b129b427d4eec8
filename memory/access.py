"""Who may do what: viewers read, curators also write, staff are admins.

Roles are Django groups (created by migration 0001). Login itself is required for every page by
LoginRequiredMiddleware; these checks come on top. A logged-in account without a role sees
nothing but a page saying so: being able to log in is not being allowed to read memories.
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
            raise PermissionDenied("Your account has no role yet: ask an admin to make you a viewer or a curator.")
        return view(request, *args, **kwargs)

    return wrapper


def curator_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A page that changes the store: curators and admins, for every method (a viewer does not
    even see the form, so its GET is refused too)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not can_curate(request.user):
            raise PermissionDenied("Only curators can change the memory store; your account can read it.")
        return view(request, *args, **kwargs)

    return wrapper


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
