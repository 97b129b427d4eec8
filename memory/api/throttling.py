"""Rate limits: per token (each script its own budget) and per user (all of a person's tokens and
their session together). Rates are REST_FRAMEWORK's `token` and `user` rates, from
OAM_API_TOKEN_RATE and OAM_API_USER_RATE ("600/minute", "10/second"…)."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from memory.models import ApiToken


class TokenRateThrottle(SimpleRateThrottle):
    scope = "token"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if not isinstance(request.auth, ApiToken):
            return None  # not a token's request: the user's limit applies alone
        return self.cache_format % {"scope": self.scope, "ident": request.auth.pk}


class UserRateThrottle(SimpleRateThrottle):
    scope = "user"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        ident = request.user.pk if request.user.is_authenticated else f"ip:{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}
