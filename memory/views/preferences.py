"""Per-browser preferences: the theme (light, dark, or following the system), kept in a cookie so
that it works without JavaScript and needs no account setting."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from memory.views.common import safe_next
from memory.web.access import viewers_may_post
from memory.web.context_processors import THEME_COOKIE, THEMES

ONE_YEAR = 365 * 24 * 3600


@viewers_may_post
@require_POST
def set_theme(request: HttpRequest) -> HttpResponse:
    """Any logged-in account may choose its theme: this writes a cookie, not the store."""
    theme = request.POST.get("theme")
    if theme not in THEMES:
        return HttpResponseBadRequest(f"theme must be one of {', '.join(THEMES)}")
    response = redirect(safe_next(request, "/"))
    response.set_cookie(THEME_COOKIE, theme, max_age=ONE_YEAR, samesite="Lax", httponly=True)
    return response
