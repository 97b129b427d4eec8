"""Login throttling (django-axes): after OAM_LOGIN_FAILURES failed logins for one username from
one address, that pair is locked out for OAM_LOGIN_COOLOFF_MINUTES, and the login page says so.

Only the login form is throttled. The REST API's tokens never go through `authenticate()` (they
are checked against their hash in memory.api.authentication), so a locked-out login leaves a
script's token working, and a flood of bad tokens cannot lock anyone out of the dashboard.
"""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


class LoginThrottleBackend(AxesStandaloneBackend):
    """Axes' lockout check for the requests that log in through a form. `authenticate()` called
    from code without a request (management commands, `ensure_demo_user`'s checks, a shell) has
    no address to throttle: it is left to the next backend instead of being refused."""

    def authenticate(self, request: HttpRequest | None, *args: Any, **kwargs: Any) -> None:
        if request is None:
            return None
        return super().authenticate(request, *args, **kwargs)


def cooloff_minutes() -> int:
    return int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)


def lockout_response(request: HttpRequest, original_response: Any = None, credentials: Any = None) -> HttpResponse:
    """The login page again, with why the login is refused and for how long, as a 429."""
    username = (credentials or {}).get("username") or request.POST.get("username", "")
    form = AuthenticationForm(request, initial={"username": username})
    context = {
        "form": form,
        "locked_out": True,
        "failure_limit": settings.AXES_FAILURE_LIMIT,
        "cooloff_minutes": cooloff_minutes(),
        "next": request.POST.get("next", ""),
    }
    return render(request, "registration/login.html", context, status=429)
