"""Request-wide plumbing of the engine: who the activity log records as the caller, and answers
for a store the process cannot use instead of a bare 500."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from memory.engine import EmbedderMismatchError, acting_as
from memory.services import embedder_spec


class StoreEmbedderMiddleware:
    """A store whose vectors another embedder made (re-embedded by `manage.py oam_reembed` while
    OAM_EMBEDDER still names the old one) is refused by the engine when it opens: every page then
    says so, with the setting to change, as a 503 (the site works again once it is fixed)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, EmbedderMismatchError):
            return None
        context = {"error": exception, "configured": settings.OAM_EMBEDDER}
        if request.path.startswith("/api/"):
            detail = (
                f"The memory store's vectors were made by {exception.stored_embedder} ({exception.stored_dim} "
                f"dimensions) but OAM_EMBEDDER gives {exception.embedder} ({exception.dim}); the administrator "
                f"must set OAM_EMBEDDER={embedder_spec(exception.stored_embedder, exception.stored_dim)} and restart."
            )
            return JsonResponse({"detail": detail}, status=503)
        return render(request, "errors/embedder_mismatch.html", context, status=503)


class ActivityCallerMiddleware:
    """The engine records each call's caller in its activity log: a signed-in person's requests
    are that person's (caller_kind "person"), so that their own dashboard searches and edits are
    told apart from the agents'. An API request made with a token names the token instead
    (memory.api.base.EngineView), on behalf of its owner."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return self.get_response(request)
        with acting_as(user.get_username(), caller_kind="person"):
            return self.get_response(request)
