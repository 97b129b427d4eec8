"""The settings a deployment chooses by URL: Django's database, its cache and its logging.

Pure functions of their arguments (the database's also of OAM_DATABASE_PASSWORD and
OAM_DATABASE_CONN_MAX_AGE), so that tests can check what a URL becomes without connecting to
anything. docs/deploy.md.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

DATABASE_SCHEMES = ("sqlite", "postgres", "postgresql", "pgsql", "oracle")


def database_settings(url: str, default_sqlite: Path) -> dict[str, Any]:
    """DATABASES["default"] for OAM_DATABASE_URL (dj-database-url), the SQLite file
    `default_sqlite` when it is empty.

    - `sqlite:////absolute/path.sqlite3`
    - `postgres://user@host:5432/name` (needs `pip install psycopg[binary]`)
    - `oracle://user@host:1521/service`: the path is a service name, as in OAM_STORE_URL (Django
      alone would read it as a SID), so it becomes the Easy Connect string `host:1521/service`.

    The password may stay out of the URL: OAM_DATABASE_PASSWORD gives it. OAM_DATABASE_CONN_MAX_AGE
    keeps connections open that many seconds (0, the default, closes each at the request's end;
    health checks then test a kept connection before use).
    """
    url = url.strip()
    if not url:
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": default_sqlite}
    scheme = urlsplit(url).scheme
    if scheme not in DATABASE_SCHEMES:
        raise ImproperlyConfigured(
            f"OAM_DATABASE_URL must start with one of {', '.join(s + '://' for s in DATABASE_SCHEMES)}; got {scheme!r}"
        )
    conn_max_age = os.environ.get("OAM_DATABASE_CONN_MAX_AGE", "0").strip() or "0"
    if not conn_max_age.isdigit():
        raise ImproperlyConfigured(f"OAM_DATABASE_CONN_MAX_AGE must be a number of seconds; got {conn_max_age!r}")
    database = dj_database_url.parse(url, conn_max_age=int(conn_max_age), conn_health_checks=int(conn_max_age) > 0)
    if scheme == "sqlite":
        if not database["NAME"] or database["NAME"] == ":memory:":
            raise ImproperlyConfigured("OAM_DATABASE_URL=sqlite:// needs a file: sqlite:////absolute/path.sqlite3")
        database["NAME"] = Path(unquote(database["NAME"]))
    if scheme == "oracle" and database["HOST"]:
        port = f":{database['PORT']}" if database["PORT"] else ""
        database.update(NAME=f"{database['HOST']}{port}/{database['NAME']}", HOST="", PORT="")
    password = os.environ.get("OAM_DATABASE_PASSWORD")
    if password:
        database["PASSWORD"] = password
    return database


def cache_settings(url: str, default_directory: Path, *, debug: bool) -> dict[str, Any]:
    """CACHES["default"] for OAM_CACHE_URL.

    - `locmem://`: the process's memory (each worker its own; the default with DEBUG on)
    - `file:///absolute/dir`: files shared by the workers of one machine (the default with DEBUG
      off, in `default_directory`)
    - `db://table_name`: a table in Django's database, shared by every machine using it (create it
      with `manage.py createcachetable`, which `make serve` runs)
    - `redis://host:6379/0`: Django's Redis cache (needs `pip install redis`)
    """
    url = url.strip()
    if not url:
        url = "locmem://" if debug else f"file://{default_directory}"
    parts = urlsplit(url)
    if parts.scheme == "locmem":
        return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "oam"}
    if parts.scheme == "file":
        location = unquote(parts.path)
        if parts.netloc or not location.startswith("/"):
            raise ImproperlyConfigured(
                f"OAM_CACHE_URL=file:// needs an absolute directory (file:///var/cache/oam); got {url!r}"
            )
        return {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": location}
    if parts.scheme == "db":
        table = parts.netloc or parts.path.strip("/")
        if not table.replace("_", "").isalnum():
            raise ImproperlyConfigured(f"OAM_CACHE_URL=db:// needs a table name (db://oam_cache); got {url!r}")
        return {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": table}
    if parts.scheme in ("redis", "rediss"):
        return {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}
    raise ImproperlyConfigured(
        f"OAM_CACHE_URL must start with locmem://, file://, db:// or redis://; got {parts.scheme!r}"
    )


LOG_FORMATS = ("json", "text")
JSON_FORMATTER = {
    "()": "pythonjsonlogger.json.JsonFormatter",
    "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
    "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
}
"""One JSON object a line: time, level, logger, message and the record's extra fields. Shared
with gunicorn's own messages (oam_site/gunicorn.conf.py)."""


def logging_settings(log_format: str, level: str) -> dict[str, Any]:
    """LOGGING: everything on stderr, as JSON lines (python-json-logger; a request's line carries
    request_id, method, path, status, duration_ms and user as fields) or as readable text."""
    log_format, level = log_format.strip().lower(), level.strip().upper()
    if log_format not in LOG_FORMATS:
        raise ImproperlyConfigured(f"OAM_LOG_FORMAT must be json or text; got {log_format!r}")
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise ImproperlyConfigured(f"OAM_LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or CRITICAL; got {level!r}")
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "json": JSON_FORMATTER,
            "text": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        },
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": log_format}},
        "root": {"handlers": ["stderr"], "level": level},
        "loggers": {
            # Django's own request errors reach the root handler once, not twice.
            "django": {"level": level},
            # runserver's access lines repeat the request log's in development.
            "django.server": {"level": "WARNING", "propagate": True},
            # The MCP SDK starts and stops a stateless transport for each /mcp/ request (memory.mcp.http).
            "mcp": {"level": "WARNING"},
        },
    }
