"""Logins and their scopes (/settings/logins/), for staff: every login with its role and what it
sees, and a form per login to limit it to some users and/or agents or to clear its scope
(memory.web.scopes; the same as `manage.py oam_user scope`)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from memory.models import AccessScope
from memory.views.common import render_page
from memory.web.access import role_of
from memory.web.forms.scopes import ScopeForm
from memory.web.scopes import ScopeError, describe, set_scope


def _staff(request: HttpRequest) -> None:
    if role_of(request.user) != "admin":
        raise PermissionDenied("Only staff manage logins and their scopes.")


def _rows(forms: dict[int, ScopeForm] | None = None) -> list[dict]:
    scopes = {row.login_id: row for row in AccessScope.objects.all()}
    rows = []
    for login in get_user_model().objects.order_by("username"):
        scope = scopes.get(login.pk)
        visibility = None if scope is None else scope.visibility()
        form = (forms or {}).get(login.pk) or ScopeForm(
            prefix_id=login.pk,
            initial={
                "users": ", ".join(scope.users) if scope else "",
                "agents": ", ".join(scope.agents) if scope else "",
            },
        )
        rows.append(
            {"login": login, "role": role_of(login), "scope": visibility, "sees": describe(visibility), "form": form}
        )
    return rows


@never_cache
@require_http_methods(["GET"])
def login_list(request: HttpRequest) -> HttpResponse:
    """Every login with its role and scope, and a form per login."""
    _staff(request)
    return render_page(request, "logins/list.html", {"rows": _rows()})


@never_cache
@require_POST
def login_scope(request: HttpRequest, login_id: int) -> HttpResponse:
    """Set a login's scope from its form, or clear it (the Clear button, or both fields empty)."""
    _staff(request)
    login = get_object_or_404(get_user_model(), pk=login_id)
    form = ScopeForm(request.POST, prefix_id=login.pk)
    if "clear" in request.POST:
        set_scope(login, None, None)
        messages.success(request, f"{login.get_username()} now sees everything.")
        return redirect("memory:logins")
    if form.is_valid():
        try:
            scope = set_scope(login, form.cleaned_data["users"], form.cleaned_data["agents"])
        except ScopeError as error:
            form.add_error(error.field, str(error))
        else:
            messages.success(request, f"{login.get_username()} now sees {describe(scope)}.")
            return redirect("memory:logins")
    return render_page(request, "logins/list.html", {"rows": _rows({login.pk: form})}, status=400)
