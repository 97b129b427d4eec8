"""Django settings for the OAM Dashboard, read from the environment (OAM_* variables, see docs/configuration.md).

Local state (Django's own database, the generated secret key) lives in var/, which is created on
first use and ignored by git. The memory engine's data lives wherever OAM_STORE_URL points.
"""

from __future__ import annotations

import os
import secrets
from datetime import timedelta
from pathlib import Path

from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from memory.engine.embedders import check_spec
from oam_site.deploy import cache_settings, database_settings, logging_settings
from oam_site.static_headers import add_security_headers

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"
VAR_DIR.mkdir(exist_ok=True)

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    if value.strip().lower() in _TRUE:
        return True
    if value.strip().lower() in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be one of 1/0, true/false, yes/no, on/off; got {value!r}")


def env_int(name: str, default: int | None) -> int | None:
    """A positive integer from the environment; unset or blank gives `default`."""
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    if not value.isdigit() or int(value) < 1:
        raise ImproperlyConfigured(f"{name} must be a positive integer; got {value!r}")
    return int(value)


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def persisted_secret_key(path: Path) -> str:
    """The key stored at `path`, generated on first use so that no key is ever written in code.

    The new key is written to a private temporary file and hard-linked into place, so a process
    starting at the same moment (runserver runs two) sees either no file or the complete key.
    """
    if not path.exists():
        temporary = path.with_name(f".{path.name}.{os.getpid()}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as file:
            file.write(secrets.token_urlsafe(50) + "\n")
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process got there first; everyone uses its key
        finally:
            temporary.unlink()
    key = path.read_text().strip()
    if not key:
        raise ImproperlyConfigured(f"{path} is empty; delete it to generate a new key")
    return key


# --- OAM settings ---------------------------------------------------------------------------

# Where the memory engine keeps its records: "sqlite:///abs/path.sqlite3", "sqlite://:memory:" or
# "oracle://user@host:port/service". memory.services builds the one AgentMemory from it.
OAM_STORE_URL = os.environ.get("OAM_STORE_URL") or f"sqlite://{VAR_DIR / 'memory.sqlite3'}"

# The embedded store's search index: a new generation of its files (mapped by every process) is
# written once this many records changed since the newest one, or once that one is this many
# seconds old with changes after it.
OAM_INDEX_REBUILD_CHANGES = env_int("OAM_INDEX_REBUILD_CHANGES", 20_000)
OAM_INDEX_REBUILD_SECONDS = env_int("OAM_INDEX_REBUILD_SECONDS", 600)

# Oracle stores (OAM_STORE_URL=oracle://user@host:port/service): the password is read by the
# engine from OAM_ORACLE_PASSWORD itself, so that it never sits in settings or logs.
OAM_ORACLE_POOL_MIN = env_int("OAM_ORACLE_POOL_MIN", 1)
OAM_ORACLE_POOL_MAX = env_int("OAM_ORACLE_POOL_MAX", 4)
OAM_ORACLE_VECTOR_INDEX = env_bool("OAM_ORACLE_VECTOR_INDEX", default=False)
OAM_ORACLE_TARGET_ACCURACY = env_int("OAM_ORACLE_TARGET_ACCURACY", None)
OAM_ORACLE_VECTOR_INDEX_TRANSFORM = env_bool("OAM_ORACLE_VECTOR_INDEX_TRANSFORM", default=False)

# Parsed by memory.engine.embedders.embedder_from_spec: "hashing", "hashing:<dim>",
# "openai:<model>[:<dim>]@<base_url>" (its key comes from OAM_EMBEDDER_API_KEY).
OAM_EMBEDDER = os.environ.get("OAM_EMBEDDER", "hashing")
try:
    check_spec(OAM_EMBEDDER)  # at startup, for the site and every command: not on the first page
except ValueError as exc:
    raise ImproperlyConfigured(str(exc)) from None

# The LLM behind memory extraction, summaries, automatic links and image captions: any server
# speaking the OpenAI chat-completions protocol. Unset base URL: those features are off.
OAM_LLM_BASE_URL = os.environ.get("OAM_LLM_BASE_URL", "")
OAM_LLM_MODEL = os.environ.get("OAM_LLM_MODEL", "")
OAM_LLM_API_KEY = os.environ.get("OAM_LLM_API_KEY", "")
if OAM_LLM_BASE_URL.strip() and not OAM_LLM_MODEL.strip():
    raise ImproperlyConfigured("OAM_LLM_BASE_URL is set but OAM_LLM_MODEL is not: name the model to use")

# What a write does with a secret or personal data found in its text (memory.engine.sensitive):
# "flag" (stored, and listed on /review/sensitive/), "redact" ([REDACTED:<kind>] stored instead)
# or "refuse" (the write fails). Agent processes read the same variable through the engine.
OAM_SENSITIVE_POLICY = os.environ.get("OAM_SENSITIVE_POLICY", "").strip().lower() or "flag"
if OAM_SENSITIVE_POLICY not in ("flag", "redact", "refuse"):
    raise ImproperlyConfigured(f"OAM_SENSITIVE_POLICY must be flag, redact or refuse, not {OAM_SENSITIVE_POLICY!r}")

# Imports uploaded in the dashboard (memory.curation.import_jobs): where uploads are kept, the largest
# file taken, the lines per transaction, and (the tests) whether they run in the request instead.
OAM_IMPORT_DIR = Path(os.environ.get("OAM_IMPORT_DIR") or VAR_DIR / "imports")
OAM_IMPORT_MAX_BYTES = env_int("OAM_IMPORT_MAX_BYTES", 2 * 1024**3)
OAM_IMPORT_BATCH_SIZE = env_int("OAM_IMPORT_BATCH_SIZE", 500)
OAM_IMPORT_INLINE = env_bool("OAM_IMPORT_INLINE", default=False)

DEBUG = env_bool("OAM_DEBUG", default=True)

# Development generates a key and keeps it in var/; production must be given one, so that every
# worker and every machine signs sessions and tokens alike, and a lost var/ logs nobody out.
_given_key = os.environ.get("OAM_SECRET_KEY", "").strip()
if not DEBUG and (len(_given_key) < 50 or _given_key.startswith("change-me")):
    raise ImproperlyConfigured(
        "OAM_DEBUG is off but OAM_SECRET_KEY is not set, too short or the sample's placeholder: give the "
        "site a secret key of 50 or more random "
        "characters, the same for every worker and machine, e.g. "
        "export OAM_SECRET_KEY=\"$(python3 -c 'import secrets; print(secrets.token_urlsafe(50))')\""
    )
SECRET_KEY = _given_key or persisted_secret_key(VAR_DIR / "secret_key")

ALLOWED_HOSTS = env_list("OAM_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("OAM_CSRF_TRUSTED_ORIGINS", [])

# --- Production switches (docs/deploy.md) ---------------------------------------------------

# Served over HTTPS (directly or behind a proxy that terminates TLS): cookies only over HTTPS,
# plain HTTP redirected (except /healthz, for load balancers probing the app's own port), and
# browsers told to use HTTPS only for a year. includeSubDomains and preload are on by default, as
# `check --deploy` asks; turn them off for a host whose subdomains still serve plain HTTP.
OAM_HTTPS = env_bool("OAM_HTTPS", default=False)
if OAM_HTTPS:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = True
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SECURE_HSTS_SECONDS = env_int("OAM_HSTS_SECONDS", 365 * 24 * 60 * 60)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("OAM_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env_bool("OAM_HSTS_PRELOAD", default=True)

# Behind a reverse proxy that sets X-Forwarded-Proto (and strips it from clients' requests):
# trust it to tell HTTPS requests apart. Never set this without such a proxy in front.
if env_bool("OAM_BEHIND_PROXY", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    # The login throttle's client address: the proxy's X-Real-IP (deploy/nginx.conf sets it from
    # the connection), not REMOTE_ADDR (the proxy itself for every client).
    AXES_IPWARE_META_PRECEDENCE_ORDER = ("HTTP_X_REAL_IP",)

# --- Django ---------------------------------------------------------------------------------

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "csp",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "axes",
    "memory",
]

MIDDLEWARE = [
    # One log line per request (oam_site.request_log), timed around everything below it.
    "oam_site.request_log.RequestLogMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Static files straight from the WSGI app, compressed and cached for a year once collected.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Zero-width and direction-changing characters in a page's text shown as code points.
    "memory.web.middleware.VisibleInvisiblesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # A scoped login sees only its users and agents, on every page and endpoint (memory.web.scopes).
    "memory.web.scopes.ScopeMiddleware",
    # Every page needs a login unless its view says otherwise (login_not_required).
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    # Any write to a dashboard page from an account that cannot curate is a 403 (memory.web.access).
    "memory.web.access.ReadOnlyViewersMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Login throttling (memory.web.login_throttle): a locked-out login's answer; after authentication.
    "axes.middleware.AxesMiddleware",
    # A store re-embedded for another embedder than OAM_EMBEDDER: a page that says so, not a 500.
    "memory.web.middleware.StoreEmbedderMiddleware",
    # The activity log records a signed-in person's calls as theirs (memory.engine.activity).
    "memory.web.middleware.ActivityCallerMiddleware",
]

ROOT_URLCONF = "oam_site.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "memory.web.context_processors.dashboard",
                "memory.views.navigation.review_badge",
            ],
        },
    },
]

WSGI_APPLICATION = "oam_site.wsgi.application"
ASGI_APPLICATION = "oam_site.asgi.application"

# Django's own database holds auth, sessions and the curation history; memories live in the engine's store.
# OAM_DATABASE_URL picks it (oam_site.deploy.database_settings): SQLite in var/ by default, PostgreSQL
# or Oracle when several machines serve the site.
DATABASES = {"default": database_settings(os.environ.get("OAM_DATABASE_URL", ""), VAR_DIR / "django.sqlite3")}

# The API's throttle counters (and anything else cached) must be shared by every worker, or each
# worker counts on its own: OAM_CACHE_URL (oam_site.deploy.cache_settings), by default a directory
# in var/ when DEBUG is off (workers on one machine) and the process's memory in development.
CACHES = {"default": cache_settings(os.environ.get("OAM_CACHE_URL", ""), VAR_DIR / "cache", debug=DEBUG)}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Login throttling (django-axes, memory.web.login_throttle): OAM_LOGIN_FAILURES failed logins for one
# username from one address lock that pair out for OAM_LOGIN_COOLOFF_MINUTES; a success resets the
# count. API tokens are not passwords and never reach authenticate(): they stay unaffected.
AUTHENTICATION_BACKENDS = [
    "memory.web.login_throttle.LoginThrottleBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("OAM_LOGIN_FAILURES", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("OAM_LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "memory.web.login_throttle.lockout_response"
AXES_HTTP_RESPONSE_CODE = 429
AXES_VERBOSE = False  # no banner on every manage.py command; lockouts are still logged

# The largest JSON body the REST API reads (memory.api.parsers, which keeps Django's 2.5 MB
# DATA_UPLOAD_MAX_MEMORY_SIZE for the dashboard's forms): room for a message batch with two
# full-size images in base64 (10 MiB each, 13.4 MiB once encoded). Over it: a 413.
OAM_API_MAX_JSON_BYTES = env_int("OAM_API_MAX_JSON_BYTES", 32 * 1024**2)

# Security headers (django.middleware.security, clickjacking), sent on every page and API answer;
# Django's defaults, stated so that they are not lost by accident (tests/hostile/test_headers.py).
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "memory:overview"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("OAM_STATIC_ROOT") or VAR_DIR / "static")
# Production serves what `collectstatic` (make serve) wrote: names with a content hash, gzip and
# Brotli copies, cached for a year. Development and the tests serve the source files as they are,
# so neither needs a collectstatic first.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Fixed at start, as DEBUG then was (the tests turn DEBUG off later): development serves the
# source files through the finders, and needs no STATIC_ROOT.
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG
# Static answers skip the clickjacking and CSP middleware (whitenoise answers above them): they
# get the pages' X-Frame-Options and Content-Security-Policy here (tests/hostile/test_headers.py).
WHITENOISE_ADD_HEADERS_FUNCTION = add_security_headers

# Content-Security-Policy (django-csp): everything from the site itself, nothing inline, no
# plugins, no framing. `data:` images are Bootstrap's own (its CSS draws checkboxes, selects and
# toggles as inline SVG). The API's documentation pages widen it for themselves (memory.api.docs).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# Logs: one line per request (oam_site.request_log) and everything else, on stderr; JSON lines
# when DEBUG is off (for journald, Docker and log shippers), readable text in development.
LOGGING = logging_settings(
    os.environ.get("OAM_LOG_FORMAT") or ("text" if DEBUG else "json"), os.environ.get("OAM_LOG_LEVEL") or "INFO"
)

# The REST API (memory/api/): a personal token (`Authorization: Bearer …`) or the dashboard's
# session (CSRF kept); viewers read, curators write; throttled per token, or per user for a session.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "memory.api.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["memory.api.permissions.ReadOrCurate"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "memory.api.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_PARSER_CLASSES": [
        "memory.api.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_THROTTLE_CLASSES": ["memory.api.throttling.TokenRateThrottle", "memory.api.throttling.UserRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "token": os.environ.get("OAM_API_TOKEN_RATE", "3000/minute"),
        "user": os.environ.get("OAM_API_USER_RATE", "6000/minute"),
    },
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "memory.api.errors.handle",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "OAM Dashboard API",
    "DESCRIPTION": (
        "The agent memory store over HTTP: threads and their messages, memories, images, links, "
        "search, context cards, users and agents, the link graph and the curation history. "
        "Authenticate with a personal token (`Authorization: Bearer <token>`, made at /settings/tokens/) "
        "or the dashboard's session. Viewers read; curators write. Lists are cursor-paged: follow `next`."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and its docs pages are for users of the API: a token or a login (memory.api.docs).
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Offline docs: no online validator badge (it would send the schema's URL away), system fonts.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    "REDOC_UI_SETTINGS": {
        "theme": {
            "typography": {
                "fontFamily": "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
                "headings": {"fontFamily": "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"},
            }
        }
    },
    "ENUM_NAME_OVERRIDES": {
        "MemoryTypeEnum": "memory.engine.types.MEMORY_TYPES",
        "StatusEnum": "memory.api.serializers.common.STATUSES",
        "SearchableRecordTypeEnum": "memory.engine.types.SEARCHABLE_TYPES",
    },
    "GET_LIB_DOC_EXCLUDES": "memory.api.base.lib_doc_excludes",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "memory.api.base.complete_parameters",
    ],
}
