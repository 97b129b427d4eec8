"""The browsable API (a browser's view of /api/v1/ with a session), under the site's
Content-Security-Policy.

DRF's page template styles a few elements with `style=` attributes and highlights code with an
inline <style>: without 'unsafe-inline' for styles the page still works but the browser reports
each refusal. Its scripts are all files from this site, so only styles are widened, and only on
the HTML answers this renderer makes (the JSON answers keep the strict policy).
"""

from __future__ import annotations

from typing import Any

from csp.constants import UNSAFE_INLINE
from rest_framework import renderers

BROWSABLE_POLICY = {"style-src": [UNSAFE_INLINE]}


class BrowsableAPIRenderer(renderers.BrowsableAPIRenderer):
    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: dict[str, Any] | None = None
    ) -> Any:
        rendered = super().render(data, accepted_media_type, renderer_context)
        response = (renderer_context or {}).get("response")
        if response is not None:
            response._csp_update = BROWSABLE_POLICY  # read by csp.middleware.CSPMiddleware
        return rendered
