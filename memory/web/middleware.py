"""Answers for a store the process cannot use, instead of a bare 500."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from memory.engine import EmbedderMismatchError
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
