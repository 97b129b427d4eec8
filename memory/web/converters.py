"""A URL path segment for engine ids, which may hold "/" and any character the engine allows.

A "/" cannot travel percent-encoded (WSGI servers decode %2F before Django routes), so the
converter escapes it, and "~" (the escape character), as ~2F and ~7E; "." and ".." become ~2E
and ~2E~2E, which a browser would otherwise resolve as relative paths. Ordinary ids (UUIDs,
"demo-trip") read unchanged in the address bar.
"""

from __future__ import annotations

import re

from memory.engine import check_id_text

_ESCAPED = re.compile(r"~(2F|2E|7E)")
_UNESCAPE = {"2F": "/", "2E": ".", "7E": "~"}


class EngineIdConverter:
    regex = r"[^/]+"

    def to_python(self, value: str) -> str:
        """The id, or ValueError (a 404, for Django) for one no record can have: the engine's
        id rules (at most 512 bytes, no control characters, no whitespace at either end) are
        checked here, before any view sees it."""
        record_id = _ESCAPED.sub(lambda match: _UNESCAPE[match.group(1)], value)
        check_id_text("id", record_id)
        return record_id

    def to_url(self, value: str) -> str:
        if value in (".", ".."):
            return "~2E" * len(value)
        return value.replace("~", "~7E").replace("/", "~2F")
