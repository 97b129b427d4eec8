"""`Authorization: Bearer <token>` with a personal API token (memory.web.tokens)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from memory.web.scopes import adopt
from memory.web.tokens import find_token, mark_used


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """A token that is unknown, revoked or expired is a 401 that says which, not a silent
    anonymous request: a script with a stale token should learn why at once."""

    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        keyword, _, token = header.partition(" ")
        if keyword.lower() != self.keyword.lower():
            return None
        token = token.strip()
        if not token or " " in token:
            raise exceptions.AuthenticationFailed("The Authorization header is `Bearer <token>`.")
        record = find_token(token)
        if record is None:
            raise exceptions.AuthenticationFailed("Unknown API token.")
        if record.revoked_at is not None:
            raise exceptions.AuthenticationFailed("This API token was revoked.")
        if record.expired:
            raise exceptions.AuthenticationFailed("This API token has expired.")
        if not record.user.is_active:
            raise exceptions.AuthenticationFailed("This API token's owner is inactive.")
        mark_used(record)
        adopt(request, record.user)  # the token sees what its owner's scope lets it (memory.web.scopes)
        return record.user, record

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="api"'


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """How the OpenAPI schema documents the token (drf-spectacular finds it by subclassing)."""

    target_class = BearerTokenAuthentication
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal API token, made at /settings/tokens/ or with `manage.py oam_token create`.",
        }
