"""The API's documentation pages, Swagger UI at /api/docs/ and Redoc at /api/redoc/: for logged-in
users (anyone else goes to the login page), and offline. Their scripts and styles are
drf-spectacular-sidecar's static files, and a Content-Security-Policy keeps the browser from
fetching anything from another host: Redoc's bundle shows a logo from its CDN, and Swagger UI would
send the schema's URL to its online validator (SWAGGER_UI_SETTINGS turns that off as well).
The site's policy allows no inline script or style; these pages need both, so they alone widen it
(DOCS_POLICY)."""

from __future__ import annotations

from collections.abc import Callable

from csp.constants import SELF, UNSAFE_INLINE
from csp.decorators import csp_update
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse

DOCS_POLICY = {
    # Both UIs start from an inline script and style their components with inline styles.
    "script-src": [UNSAFE_INLINE],
    "style-src": [UNSAFE_INLINE],
    # Redoc embeds its fonts and icons as data: URLs, and searches in a worker it makes from a blob.
    "font-src": ["data:"],
    "worker-src": [SELF, "blob:"],
}
"""What these two pages add to the site's Content-Security-Policy (settings.CONTENT_SECURITY_POLICY):
still nothing from another host."""


def docs_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A documentation page: login required (a redirect to the login page), nothing loaded from
    elsewhere."""
    return login_required(csp_update(DOCS_POLICY)(view))
