"""One log line per request, for operators: who asked what, what it answered, how long it took.

The line's message reads on its own in development ("GET /memories/ 200 12.3 ms user=carl …");
with OAM_LOG_FORMAT=json the same facts are also fields of the JSON line (request_id, method,
path, status, duration_ms, user), which log shippers index. The path is logged without its query
string: search text and filters are people's words, not operational data.

The request id is the proxy's X-Request-ID when it sends a sane one (nginx: `$request_id`), so
the proxy's and the app's lines join up; otherwise a new one. The response carries it back.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

log = logging.getLogger("oam.request")

REQUEST_ID_HEADER = "X-Request-ID"
_SANE_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


def request_id_of(request: HttpRequest) -> str:
    """The incoming X-Request-ID if it is short and plain (it goes into logs), else a new one."""
    given = request.headers.get(REQUEST_ID_HEADER, "")
    return given if _SANE_ID.fullmatch(given) else uuid.uuid4().hex


class RequestLogMiddleware:
    """Logs every request once it is answered (errors included: Django turns them into responses
    inside), at INFO, and 5xx at ERROR (django.request already warns of each 4xx)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request.request_id = request_id_of(request)
        started = time.perf_counter()
        response = self.get_response(request)
        duration_ms = round((time.perf_counter() - started) * 1000, 1)
        response[REQUEST_ID_HEADER] = request_id
        # The API's token users are set on the request by DRF during the view, so read it now.
        user = getattr(request, "user", None)
        username = user.get_username() if user is not None and user.is_authenticated else "-"
        status = response.status_code
        level = logging.ERROR if status >= 500 else logging.INFO
        log.log(
            level,
            "%s %s %s %.1f ms user=%s id=%s",
            request.method,
            request.path,
            status,
            duration_ms,
            username,
            request_id,
            extra={
                "request_id": request_id,
                "method": request.method,
                "path": request.path,
                "status": status,
                "duration_ms": duration_ms,
                "user": username,
            },
        )
        return response
