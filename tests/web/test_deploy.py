"""Deploying: settings from the environment, `check --deploy`, /healthz, the Content-Security-Policy,
the request log and a production server (gunicorn, whitenoise) as `make serve` starts it.

Settings that are read once at start are checked in a fresh Python process with the environment
given; the production server test starts gunicorn on a free port over a throwaway database,
store and static root, and always stops it.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from memory import services
from oam_site.deploy import cache_settings, database_settings, logging_settings

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
TIMEOUT = 300  # seconds any subprocess may take: generous, the machine is shared


def production_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a production process whose state all lives in tmp_path."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("OAM_", "DJANGO_"))}
    env.update(
        OAM_DEBUG="false",
        OAM_SECRET_KEY=secrets.token_urlsafe(50),
        OAM_HTTPS="true",
        OAM_DATABASE_URL=f"sqlite:///{tmp_path / 'django.sqlite3'}",
        OAM_STORE_URL=f"sqlite://{tmp_path / 'memory.sqlite3'}",
        OAM_CACHE_URL=f"file://{tmp_path / 'cache'}",
        OAM_STATIC_ROOT=str(tmp_path / "static"),
        OAM_IMPORT_DIR=str(tmp_path / "imports"),
        DJANGO_SETTINGS_MODULE="oam_site.settings",
    )
    env.update(extra)
    return env


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False)


def settings_in(env: dict[str, str], *names: str) -> dict[str, object]:
    """The named Django settings as a fresh process with `env` sees them (repr'd where not JSON)."""
    script = (
        "import json, django; django.setup(); from django.conf import settings; "
        f"print(json.dumps({{n: getattr(settings, n, None) for n in {list(names)!r}}}, default=repr))"
    )
    result = run([PYTHON, "-c", script], env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


# --- Django's database from OAM_DATABASE_URL --------------------------------------------------


def test_without_a_url_the_database_is_the_sqlite_file_in_var(tmp_path):
    assert database_settings("", tmp_path / "django.sqlite3") == {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": tmp_path / "django.sqlite3",
    }


def test_a_sqlite_url_names_its_file(tmp_path):
    database = database_settings("sqlite:////srv/oam/django.sqlite3", tmp_path / "unused")

    assert (database["ENGINE"], database["NAME"]) == ("django.db.backends.sqlite3", Path("/srv/oam/django.sqlite3"))


def test_a_postgres_url_gives_django_its_postgresql_backend(tmp_path, monkeypatch):
    monkeypatch.delenv("OAM_DATABASE_PASSWORD", raising=False)
    database = database_settings("postgres://oam:s3cret@db.example.org:5432/oam_web", tmp_path / "unused")

    assert database["ENGINE"] == "django.db.backends.postgresql"
    assert (database["HOST"], database["PORT"], database["NAME"]) == ("db.example.org", 5432, "oam_web")
    assert (database["USER"], database["PASSWORD"], database["CONN_MAX_AGE"]) == ("oam", "s3cret", 0)


def test_an_oracle_url_names_a_service_as_the_store_url_does(tmp_path, monkeypatch):
    monkeypatch.setenv("OAM_DATABASE_PASSWORD", "from-the-environment")
    monkeypatch.setenv("OAM_DATABASE_CONN_MAX_AGE", "60")
    database = database_settings("oracle://oam_web@dbhost:1521/FREEPDB1", tmp_path / "unused")

    assert database["ENGINE"] == "django.db.backends.oracle"
    # An Easy Connect string (host:port/service): Django would take NAME beside HOST/PORT for a SID.
    assert (database["NAME"], database["HOST"], database["PORT"]) == ("dbhost:1521/FREEPDB1", "", "")
    assert (database["USER"], database["PASSWORD"]) == ("oam_web", "from-the-environment")
    assert (database["CONN_MAX_AGE"], database["CONN_HEALTH_CHECKS"]) == (60, True)


@pytest.mark.parametrize("url", ["mysql://u@h/db", "sqlite://", "not a url"])
def test_an_unusable_database_url_is_refused_by_name(tmp_path, url):
    with pytest.raises(ImproperlyConfigured, match="OAM_DATABASE_URL"):
        database_settings(url, tmp_path / "unused")


def test_the_site_takes_its_database_from_the_environment(tmp_path):
    env = production_env(tmp_path, OAM_DATABASE_URL="oracle://oam_web@dbhost:1521/FREEPDB1")

    database = settings_in(env, "DATABASES")["DATABASES"]["default"]

    assert (database["ENGINE"], database["NAME"]) == ("django.db.backends.oracle", "dbhost:1521/FREEPDB1")


# --- the cache -------------------------------------------------------------------------------


def test_the_cache_is_per_process_in_development_and_shared_files_in_production(tmp_path):
    assert cache_settings("", tmp_path, debug=True)["BACKEND"].endswith("LocMemCache")
    assert cache_settings("", tmp_path, debug=False) == {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(tmp_path),
    }


@pytest.mark.parametrize(
    ("url", "backend", "location"),
    [
        ("file:///var/cache/oam", "filebased.FileBasedCache", "/var/cache/oam"),
        ("db://oam_cache", "db.DatabaseCache", "oam_cache"),
        ("redis://cache.internal:6379/0", "redis.RedisCache", "redis://cache.internal:6379/0"),
        ("locmem://", "locmem.LocMemCache", "oam"),
    ],
)
def test_a_cache_url_picks_djangos_backend(tmp_path, url, backend, location):
    cache = cache_settings(url, tmp_path, debug=False)

    assert (cache["BACKEND"], cache["LOCATION"]) == (f"django.core.cache.backends.{backend}", location)


@pytest.mark.parametrize("url", ["memcached://h", "file://relative/dir", "db://bad;name"])
def test_an_unusable_cache_url_is_refused_by_name(tmp_path, url):
    with pytest.raises(ImproperlyConfigured, match="OAM_CACHE_URL"):
        cache_settings(url, tmp_path, debug=False)


# --- production switches and check --deploy --------------------------------------------------


def test_https_turns_on_secure_cookies_the_redirect_and_a_year_of_hsts(tmp_path):
    found = settings_in(
        production_env(tmp_path, OAM_BEHIND_PROXY="true"),
        "DEBUG",
        "SESSION_COOKIE_SECURE",
        "CSRF_COOKIE_SECURE",
        "SECURE_SSL_REDIRECT",
        "SECURE_HSTS_SECONDS",
        "SECURE_HSTS_INCLUDE_SUBDOMAINS",
        "SECURE_PROXY_SSL_HEADER",
        "AXES_IPWARE_META_PRECEDENCE_ORDER",
        "STORAGES",
    )

    assert found["DEBUG"] is False
    assert found["SESSION_COOKIE_SECURE"] and found["CSRF_COOKIE_SECURE"] and found["SECURE_SSL_REDIRECT"]
    assert found["SECURE_HSTS_SECONDS"] == 365 * 24 * 3600 and found["SECURE_HSTS_INCLUDE_SUBDOMAINS"]
    assert found["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert found["AXES_IPWARE_META_PRECEDENCE_ORDER"] == ["HTTP_X_REAL_IP"]  # the login throttle's client
    assert found["STORAGES"]["staticfiles"]["BACKEND"] == "whitenoise.storage.CompressedManifestStaticFilesStorage"


def test_without_https_or_a_proxy_none_of_it_is_on(tmp_path):
    env = production_env(tmp_path)
    del env["OAM_HTTPS"]

    found = settings_in(env, "SESSION_COOKIE_SECURE", "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS")

    assert found == {"SESSION_COOKIE_SECURE": False, "SECURE_SSL_REDIRECT": False, "SECURE_HSTS_SECONDS": 0}


def test_check_deploy_finds_no_issues_in_production(tmp_path):
    result = run([PYTHON, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], production_env(tmp_path))

    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_check_deploy_warns_in_development(tmp_path):
    env = production_env(tmp_path, OAM_DEBUG="true")

    result = run([PYTHON, "manage.py", "check", "--deploy"], env)

    assert "security.W018" in result.stdout + result.stderr  # DEBUG on


@pytest.mark.parametrize(
    "key",
    [None, "short-key", "change-me-to-a-long-random-string" + "x" * 30],
    ids=["missing", "short", "the sample's placeholder"],
)
def test_production_without_a_real_secret_key_refuses_to_start(tmp_path, key):
    env = production_env(tmp_path)
    if key is None:
        del env["OAM_SECRET_KEY"]
    else:
        env["OAM_SECRET_KEY"] = key

    result = run([PYTHON, "manage.py", "check"], env)

    assert result.returncode != 0
    assert "OAM_DEBUG is off but OAM_SECRET_KEY is not set" in result.stderr


# --- /healthz ----------------------------------------------------------------------------------


def test_healthz_answers_without_login_with_the_store_and_database(client, agent_memory, db):
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert "no-cache" in response["Cache-Control"]
    body = response.json()
    assert body["status"] == "ok"
    assert body["store"] == {
        "reachable": True,
        "backend": "sqlite",
        "schema_version": agent_memory.stats().schema_version,
        "index_in_step": None,  # nothing searched yet: the index loads on the first search
        "index_behind": 0,
    }
    assert body["database"] == {"reachable": True, "vendor": "sqlite"}
    assert body["activity"]["enabled"] is True and body["activity"]["dropped"] == body["activity"]["failed"] == 0


def test_healthz_says_when_the_index_is_in_step(client, agent_memory, db):
    agent_memory.add_memory("likes tea", user_id="u1")
    agent_memory.search("tea", user_id="u1")

    assert client.get("/healthz").json()["store"]["index_in_step"] is True


def test_healthz_is_503_when_the_store_cannot_be_opened(client, settings, tmp_path, db):
    (tmp_path / "a-directory").mkdir()
    settings.OAM_STORE_URL = f"sqlite://{tmp_path / 'a-directory'}"
    services.reset_agent_memory()

    response = client.get("/healthz")

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["store"]["reachable"] is False
    assert str(tmp_path) not in response.content.decode()  # the public probe names no paths
    assert body["activity"] is None  # no store, no recorder: the store's part says why


def test_healthz_is_503_when_the_store_file_is_not_a_database(client, agent_memory, memory_store_url, db):
    services.reset_agent_memory()
    path = Path(memory_store_url.removeprefix("sqlite://"))
    for leftover in path.parent.glob(path.name + "-*"):
        leftover.unlink()
    path.write_bytes(b"this is not a SQLite database" * 100)

    response = client.get("/healthz")

    assert (response.status_code, response.json()["status"]) == (503, "unavailable")
    assert response.json()["database"]["reachable"] is True


def test_healthz_only_reads(client, db):
    assert client.post("/healthz").status_code == 405


def test_healthz_is_not_redirected_to_https(client, settings, db):
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

    assert client.get("/healthz").status_code == 200
    assert client.get("/accounts/login/").status_code == 301


# --- the Content-Security-Policy -------------------------------------------------------------


def policy(response) -> dict[str, set[str]]:
    directives = [part.split() for part in response["Content-Security-Policy"].split(";") if part.strip()]
    return {name: set(values) for name, *values in directives}


def test_pages_allow_only_the_site_itself(viewer_client):
    response = viewer_client.get("/memories/")

    found = policy(response)
    assert found["default-src"] == {"'self'"}
    assert found["script-src"] == {"'self'"} and found["style-src"] == {"'self'"}
    assert found["connect-src"] == {"'self'"} and found["object-src"] == {"'none'"}
    assert found["frame-ancestors"] == {"'none'"} and found["form-action"] == {"'self'"}
    assert found["img-src"] == {"'self'", "data:"}  # Bootstrap's own inline SVG


def test_the_login_page_and_the_api_have_the_policy_too(client, db):
    assert policy(client.get("/accounts/login/"))["default-src"] == {"'self'"}
    assert policy(client.get("/api/v1/memories/"))["default-src"] == {"'self'"}


def test_only_the_api_docs_allow_inline_scripts_and_styles(viewer_client):
    found = policy(viewer_client.get("/api/docs/"))

    assert found["script-src"] == {"'self'", "'unsafe-inline'"}
    assert found["style-src"] == {"'self'", "'unsafe-inline'"}
    assert found["worker-src"] == {"'self'", "blob:"}
    assert all(not value.startswith("http") for values in found.values() for value in values)


def test_no_template_has_an_inline_script_style_or_handler():
    """What the policy would block: inline <script> code, style attributes, on* handlers."""
    offenders = []
    for path in (ROOT / "templates").rglob("*.html"):
        if path.parent.name == "drf_spectacular":
            continue  # the API docs pages, with their own policy
        text = path.read_text()
        for needle in (" style=", " onclick=", " onload=", " onchange=", " onsubmit=", "javascript:"):
            if needle in text:
                offenders.append(f"{path.relative_to(ROOT)}: {needle.strip()}")
        for chunk in text.split("<script")[1:]:
            tag, _, body = chunk.partition(">")
            if "src=" not in tag and 'type="application/json"' not in tag and body.split("</script>")[0].strip():
                offenders.append(f"{path.relative_to(ROOT)}: inline <script>")
    assert offenders == []


# --- the request log ---------------------------------------------------------------------------


def test_every_request_is_logged_with_its_id_user_status_and_duration(viewer_client, caplog):
    with caplog.at_level("INFO", logger="oam.request"):
        response = viewer_client.get("/memories/?q=private+words", HTTP_X_REQUEST_ID="proxy-42")

    [record] = [r for r in caplog.records if r.name == "oam.request"]
    assert response["X-Request-ID"] == "proxy-42"
    assert (record.request_id, record.method, record.path, record.status, record.user) == (
        "proxy-42",
        "GET",
        "/memories/",
        200,
        "vera",
    )
    assert record.duration_ms >= 0
    assert "private" not in record.getMessage()  # the query string stays out of the logs

    formatter_config = dict(logging_settings("json", "INFO")["formatters"]["json"])
    formatter = import_string(formatter_config.pop("()"))(**formatter_config)
    line = json.loads(formatter.format(record))
    assert {key: line[key] for key in ("level", "logger", "request_id", "status", "user", "path")} == {
        "level": "INFO",
        "logger": "oam.request",
        "request_id": "proxy-42",
        "status": 200,
        "user": "vera",
        "path": "/memories/",
    }


def test_a_hostile_request_id_is_replaced(client, db, caplog):
    with caplog.at_level("INFO", logger="oam.request"):
        response = client.get("/healthz", HTTP_X_REQUEST_ID="x\nFAKE LOG LINE")

    assert response["X-Request-ID"] != "x\nFAKE LOG LINE" and len(response["X-Request-ID"]) == 32
    [record] = [r for r in caplog.records if r.name == "oam.request"]
    assert record.user == "-" and "FAKE" not in record.getMessage()


def test_the_log_format_and_level_are_checked(tmp_path):
    with pytest.raises(ImproperlyConfigured, match="OAM_LOG_FORMAT"):
        logging_settings("xml", "INFO")
    with pytest.raises(ImproperlyConfigured, match="OAM_LOG_LEVEL"):
        logging_settings("json", "LOUD")


# --- a production server, as make serve starts it ----------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def fetch(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of a GET, redirects not followed."""
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.build_opener(NoRedirects).open(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


HTTPS = {"X-Forwarded-Proto": "https"}
"""What the reverse proxy adds to a request that came over HTTPS (OAM_BEHIND_PROXY trusts it)."""


@pytest.fixture(scope="module")
def production_server(tmp_path_factory) -> Iterator[tuple[str, Path, Path]]:
    """deploy/serve.sh (what make serve runs: migrate, collectstatic, gunicorn with the project's
    config) over a throwaway site: (base URL, static root, its output). Stopped (and killed if it
    must be) at the end."""
    tmp_path = tmp_path_factory.mktemp("serve")
    port = free_port()
    env = production_env(
        tmp_path, OAM_BIND=f"127.0.0.1:{port}", OAM_WORKERS="1", OAM_THREADS="2", OAM_BEHIND_PROXY="true"
    )
    log_path = tmp_path / "serve.log"
    with open(log_path, "wb") as log_file:
        server = subprocess.Popen(
            ["deploy/serve.sh"],
            cwd=ROOT,
            env={**env, "OAM_VENV": str(Path(PYTHON).parent.parent)},
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            assert server.poll() is None, log_path.read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "gunicorn did not start listening:\n" + log_path.read_text()
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}", tmp_path / "static", log_path
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)


def test_the_production_server_answers_healthz_over_plain_http(production_server):
    base, _, _ = production_server

    status, _, body = fetch(f"{base}/healthz")

    assert status == 200 and json.loads(body)["status"] == "ok"


def test_the_production_server_redirects_plain_http_and_serves_what_the_proxy_says_is_https(production_server):
    base, _, _ = production_server

    status, headers, _ = fetch(f"{base}/accounts/login/")
    assert status == 301 and headers["Location"] == f"https://{base.removeprefix('http://')}/accounts/login/"

    status, headers, _ = fetch(f"{base}/accounts/login/", **HTTPS)
    assert status == 200
    assert headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    assert "Secure" in headers["Set-Cookie"]  # the CSRF cookie


def test_whitenoise_serves_hashed_static_files_compressed_and_cached_for_a_year(production_server):
    base, static_root, _ = production_server
    manifest = json.loads((static_root / "staticfiles.json").read_text())["paths"]
    hashed = manifest["css/oam.css"]
    assert hashed != "css/oam.css"

    status, headers, body = fetch(f"{base}/static/{hashed}", **HTTPS, **{"Accept-Encoding": "gzip"})

    assert status == 200
    assert headers["Content-Encoding"] == "gzip"
    assert "max-age=315360000" in headers["Cache-Control"] and "immutable" in headers["Cache-Control"]
    assert body[:2] == b"\x1f\x8b"


def test_every_static_file_a_template_names_is_in_the_production_manifest(production_server):
    """A name missing from collectstatic's manifest would make its page a 500 with DEBUG off."""
    _, static_root, _ = production_server
    manifest = json.loads((static_root / "staticfiles.json").read_text())["paths"]
    named = {
        name
        for path in (ROOT / "templates").rglob("*.html")
        for name in re.findall(r"""{% static ['"]([^'"]+)['"]""", path.read_text())
    }

    assert len(named) > 10 and named - set(manifest) == set()


def test_the_production_server_logs_json_lines(production_server):
    base, _, log_path = production_server
    fetch(f"{base}/healthz", **{"X-Request-ID": "probe-7"})

    deadline = time.monotonic() + 30
    while True:
        lines = [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]
        requests = [line for line in lines if line.get("request_id") == "probe-7"]
        if requests or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert requests, log_path.read_text()
    assert {key: requests[0][key] for key in ("method", "path", "status", "user")} == {
        "method": "GET",
        "path": "/healthz",
        "status": 200,
        "user": "-",
    }
    gunicorn_lines = [line for line in lines if line["logger"].startswith("gunicorn")]
    assert any("Listening at" in line["message"] for line in gunicorn_lines)
