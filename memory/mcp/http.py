"""/mcp/: MCP's streamable HTTP transport inside the Django process, on the site's own port.

The SDK's transport is an ASGI app and the site is WSGI (runserver, gunicorn). Each request is
served by the SDK in its stateless, JSON-response mode (one POST: one JSON-RPC answer, no session
kept between requests, no stream left open), on an event loop that lives exactly as long as the
request (`anyio.run`): nothing runs in the background between requests, and no second server.

Only an API token opens it (`Authorization: Bearer oam_…`, made at /settings/tokens/ or with
`manage.py oam_token`): a session cookie does not, so no cross-site page can call it and CSRF
has nothing to protect (csrf_exempt). The token acts as the API's does: with its role (a viewer's
token lists and calls the read tools only), its owner's scope (memory.web.scopes.scope_of, made
the engine's visibility for each call, as the API's authentication does), its name as the
caller in the activity log, and the API's rate limits (memory.api.throttling: the same budgets).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import anyio
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from memory.api.throttling import TokenRateThrottle, UserRateThrottle
from memory.mcp.server import SERVER, serving
from memory.mcp.tools import Caller
from memory.web.scopes import scope_of
from memory.web.tokens import find_token, mark_used, token_role

REALM = 'Bearer realm="mcp"'
TOO_LARGE = "The request is larger than the site reads (DATA_UPLOAD_MAX_MEMORY_SIZE)."
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length"}


def unauthorized(message: str, *, token_given: bool) -> HttpResponse:
    response = JsonResponse({"detail": message}, status=401)
    challenge = REALM
    if token_given:
        challenge += f', error="invalid_token", error_description="{message}"'
    response["WWW-Authenticate"] = challenge
    return response


def token_caller(request: HttpRequest) -> Caller | HttpResponse:
    """The caller the request's bearer token makes, or the 401/403 that says why there is none."""
    header = request.headers.get("Authorization", "")
    keyword, _, token = header.partition(" ")
    if not header or keyword.lower() != "bearer":
        return unauthorized("An API token is required: Authorization: Bearer <token>.", token_given=False)
    token = token.strip()
    if not token or " " in token:
        return unauthorized("The Authorization header is `Bearer <token>`.", token_given=True)
    record = find_token(token)
    if record is None:
        return unauthorized("Unknown API token.", token_given=True)
    if record.revoked_at is not None:
        return unauthorized("This API token was revoked.", token_given=True)
    if record.expired:
        return unauthorized("This API token has expired.", token_given=True)
    if not record.user.is_active:
        return unauthorized("This API token's owner is inactive.", token_given=True)
    role = token_role(record)
    if role is None:
        return JsonResponse({"detail": "This API token's owner has no role: ask an admin for one."}, status=403)
    throttled = throttle(request, record)
    if throttled is not None:
        return throttled
    mark_used(record)
    return Caller(
        name=record.name,
        writes=role in ("curator", "admin"),
        user=record.user,
        scope=scope_of(record.user),
        token_name=record.name,
    )


def throttle(request: HttpRequest, record: Any) -> HttpResponse | None:
    """The API's rate limits, with the same budgets: a token's calls over MCP and over the API
    count together (OAM_API_TOKEN_RATE), and with its owner's (OAM_API_USER_RATE). A 429 with
    Retry-After when spent."""
    shim = SimpleNamespace(auth=record, user=record.user, META=request.META)
    for throttle_class in (TokenRateThrottle, UserRateThrottle):
        limit = throttle_class()
        if not limit.allow_request(shim, None):
            wait = limit.wait()
            response = JsonResponse({"detail": "Too many requests: slow down."}, status=429)
            if wait is not None:
                response["Retry-After"] = str(max(1, round(wait)))
            return response
    return None


def asgi_scope(request: HttpRequest) -> dict[str, Any]:
    host, _, port = request.get_host().rpartition(":") if ":" in request.get_host() else (request.get_host(), "", "")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode(),
        "root_path": "",
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in request.headers.items()
        ],
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
        "server": (host, int(port) if port.isdigit() else 80),
    }


async def serve(scope: dict[str, Any], body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """The SDK's answer to one request: (status, headers, body)."""
    answered = anyio.Event()
    sent_body = False
    start: dict[str, Any] = {}
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": body, "more_body": False}
        await answered.wait()  # the client is there until the answer is made
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                answered.set()

    manager = StreamableHTTPSessionManager(SERVER, json_response=True, stateless=True)
    async with manager.run():
        await manager.handle_request(scope, receive, send)
    answered.set()
    return start.get("status", 500), list(start.get("headers", [])), b"".join(chunks)


@csrf_exempt
@login_not_required
def endpoint(request: HttpRequest) -> HttpResponse:
    caller = token_caller(request)
    if isinstance(caller, HttpResponse):
        return caller
    try:
        body = request.body
    except RequestDataTooBig:
        return JsonResponse(
            {"detail": "The request is larger than the site reads (DATA_UPLOAD_MAX_MEMORY_SIZE)."}, status=413
        )
    with serving(caller):
        status, headers, content = anyio.run(serve, asgi_scope(request), body)
    response = HttpResponse(content, status=status)
    for name, value in headers:
        name_text = name.decode("latin-1")
        if name_text.lower() not in HOP_BY_HOP:
            response[name_text] = value.decode("latin-1")
    return response
