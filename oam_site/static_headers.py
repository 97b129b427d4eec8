"""The security headers of static files (WHITENOISE_ADD_HEADERS_FUNCTION).

whitenoise answers /static/ from its middleware, so Django's clickjacking middleware and
django-csp's, below it, never see those answers (SecurityMiddleware, above it, still adds nosniff,
Referrer-Policy and Cross-Origin-Opener-Policy). Without this a static file opened by itself or
framed (an SVG, the API docs' vendored HTML and scripts) would carry no frame or content policy;
with it, each carries the pages' own.
"""

from __future__ import annotations

from typing import Any

from csp.utils import build_policy
from django.conf import settings


def add_security_headers(headers: Any, path: str, url: str) -> None:
    """Called by whitenoise once per file (each request in development) with its headers."""
    headers["X-Frame-Options"] = settings.X_FRAME_OPTIONS
    headers["Content-Security-Policy"] = build_policy()
