"""The API's documentation pages, Swagger UI at /api/docs/ and Redoc at /api/redoc/: for logged-in
users (anyone else goes to the login page), and offline. Their scripts and styles are
drf-spectacular-sidecar's static files, and a Content-Security-Policy keeps the browser from
fetching anything from another host: Redoc's bundle shows a logo from its CDN, and Swagger UI would
send the schema's URL to its online validator (SWAGGER_UI_SETTINGS turns that off as well)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse

DOCS_POLICY = "; ".join(
    (
        "default-src 'self'",
        # Both UIs start from an inline script and style their components with inline styles.
        "script-src 'self' 'unsafe-inline'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        # Redoc searches in a worker it makes from a blob.
        "worker-src 'self' blob:",
        "connect-src 'self'",
        "frame-ancestors 'none'",
    )
)


def docs_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A documentation page: login required (a redirect to the login page), nothing loaded from
    elsewhere."""

    @wraps(view)
    def page(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        response["Content-Security-Policy"] = DOCS_POLICY
        return response

    return login_required(page)
