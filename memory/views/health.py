"""/healthz: is this process able to serve? For load balancers, systemd and monitoring.

No login (a probe has none), no session, never cached, not subject to the login throttle or the
API's rate limits. It answers 200 with what it found, or 503 with "status": "unavailable" when
the memory store or Django's database cannot be reached, with the activity recorder's counts
(events lost are reported, and never make the answer 503). Cheap enough to call every few
seconds: a handful of single-row reads (AgentMemory.health, a `SELECT 1`), never a scan. Errors
are named by their type only: the probe is public, and paths or DSNs in messages are not.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from memory.queries.hygiene import recorder_health
from memory.services import get_agent_memory

log = logging.getLogger(__name__)


def store_health() -> dict[str, Any]:
    """The memory store's part of the answer: reachable, its schema version and whether the
    search index is in step (null: no in-memory index, or not loaded yet)."""
    try:
        health = get_agent_memory().health()
    except Exception as error:
        log.warning("health check: the memory store is not reachable: %s", error)
        return {"reachable": False, "error": type(error).__name__}
    return {
        "reachable": True,
        "backend": health.backend,
        "schema_version": health.schema_version,
        "index_in_step": health.index_in_step,
        "index_behind": health.index_behind,
    }


def activity_health() -> dict[str, Any] | None:
    """This process's activity recorder: enabled (OAM_ACTIVITY), events recorded, dropped (queue
    full), failed (the store refused them), queued, and the last error's time and type. Lost
    events do not make the process unavailable: recording never fails a call. None when the
    store cannot be opened (its part says why)."""
    try:
        agent_memory = get_agent_memory()
    except Exception:
        return None
    return recorder_health(agent_memory).as_json()


def database_health() -> dict[str, Any]:
    """Django's database (logins, sessions, the curation history): reachable or not."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1" if connection.vendor != "oracle" else "SELECT 1 FROM DUAL")
            cursor.fetchone()
    except Exception as error:
        log.warning("health check: Django's database is not reachable: %s", error)
        return {"reachable": False, "error": type(error).__name__}
    return {"reachable": True, "vendor": connection.vendor}


@login_not_required
@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    store, database = store_health(), database_health()
    ok = store["reachable"] and database["reachable"]
    return JsonResponse(
        {"status": "ok" if ok else "unavailable", "store": store, "database": database, "activity": activity_health()},
        status=200 if ok else 503,
    )
