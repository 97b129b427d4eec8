"""gunicorn's configuration for `make serve` (gunicorn -c oam_site/gunicorn.conf.py oam_site.wsgi),
read from the environment (docs/deploy.md).

OAM_BIND     where to listen, `host:port` or `unix:/path.sock`, several comma-separated
             (default 127.0.0.1:8000: behind a reverse proxy on the same machine)
OAM_WORKERS  worker processes (default 2). Each keeps its own in-memory search index, so memory
             grows with workers; all share the one store and Django's database.
OAM_THREADS  threads per worker (default 4; gthread workers). Threads share their worker's index.
OAM_TIMEOUT  seconds a request may take before its worker is restarted (default 120: the
             dashboard's import uploads and bulk actions can be long)

The app is loaded in each worker after the fork (no preload): the memory store's connections and
background threads must not cross a fork. gunicorn's access log is off: the app logs each request
itself (oam_site.request_log), with its user and duration; gunicorn's own messages go to stderr,
as JSON lines unless OAM_LOG_FORMAT=text.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this file is read before the app
from oam_site.deploy import JSON_FORMATTER


def _positive(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip() or str(default)
    if not value.isdigit() or int(value) < 1:
        raise SystemExit(f"{name} must be a positive integer; got {value!r}")
    return int(value)


bind = [address.strip() for address in os.environ.get("OAM_BIND", "127.0.0.1:8000").split(",") if address.strip()]
workers = _positive("OAM_WORKERS", 2)
threads = _positive("OAM_THREADS", 4)
worker_class = "gthread"
timeout = _positive("OAM_TIMEOUT", 120)
graceful_timeout = 30
keepalive = 5
preload_app = False
accesslog = None
errorlog = "-"
loglevel = os.environ.get("OAM_LOG_LEVEL", "info").lower()
# The proxy's X-Forwarded-* are trusted from the loopback only (gunicorn's default), which is
# where docs/deploy.md's nginx runs; Django reads X-Forwarded-Proto itself with OAM_BEHIND_PROXY.
forwarded_allow_ips = os.environ.get("OAM_FORWARDED_ALLOW_IPS", "127.0.0.1,::1")

if os.environ.get("OAM_LOG_FORMAT", "json").strip().lower() == "json":
    logconfig_dict = {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": JSON_FORMATTER},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}},
        "root": {"handlers": ["stderr"], "level": loglevel.upper()},
        "loggers": {
            "gunicorn.error": {"handlers": ["stderr"], "level": loglevel.upper(), "propagate": False},
            # A logging config turns gunicorn's access log on: the app's request log replaces it.
            "gunicorn.access": {"handlers": [], "level": "CRITICAL", "propagate": False},
        },
    }
