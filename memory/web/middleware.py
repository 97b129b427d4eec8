"""Request-wide plumbing: who the activity log records as the caller, answers for a store the
process cannot use instead of a bare 500, and invisible characters shown on every page."""

from __future__ import annotations

import re
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from memory.engine import EmbedderMismatchError, acting_as
from memory.services import embedder_spec
from memory.text import INVISIBLE, visible_code_point


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


# A page's tags, and the elements whose text is not shown as markup (a <textarea> holds the text a
# form sends back: a marker there would be saved), each kept as it is.
KEPT_AS_IS = re.compile(r"(<(script|style|textarea|title)\b.*?</\2\s*>|<[^>]*>)", re.IGNORECASE | re.DOTALL)


class VisibleInvisiblesMiddleware:
    """Every invisible or direction-changing character in a page's text (memory.text.INVISIBLE) is
    shown as its code point, wherever a page shows content, ids or metadata: a zero-width space
    is seen, and "\u202eevil" reads "U+202E evil", not "live". Attributes, form fields and the API
    keep the text as stored. Pages without such a character (nearly all) cost one search."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.streaming or not response.get("Content-Type", "").startswith("text/html"):
            return response
        page = response.content.decode(response.charset)
        if INVISIBLE.search(page) is None:
            return response
        pieces = KEPT_AS_IS.split(page)
        # split() gives text, tag, group 2, text, …: every third piece from 0 is text between tags.
        for index in range(0, len(pieces), 3):
            pieces[index] = INVISIBLE.sub(lambda match: visible_code_point(match.group()), pieces[index])
        response.content = "".join(piece for index, piece in enumerate(pieces) if index % 3 != 2)
        if response.has_header("Content-Length"):  # set by CommonMiddleware, for the text as it was
            response["Content-Length"] = str(len(response.content))
        return response
