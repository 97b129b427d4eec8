"""Rate limits: per token (each script its own budget) and per user (all of a person's tokens and
their session together). Rates are REST_FRAMEWORK's `token` and `user` rates, from
OAM_API_TOKEN_RATE and OAM_API_USER_RATE ("600/minute", "10/second"…)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from memory.models import ApiToken


class SettingsRateThrottle(SimpleRateThrottle):
    """The rate as the settings say now: DRF's own throttles read theirs once, at import, so that
    a changed REST_FRAMEWORK setting (a test's, a reloaded configuration's) would go unseen."""

    def get_rate(self) -> str | None:
        try:
            return api_settings.DEFAULT_THROTTLE_RATES[self.scope]  # None: no limit
        except KeyError:
            raise ImproperlyConfigured(f"No DEFAULT_THROTTLE_RATES for the {self.scope!r} throttle.") from None


class TokenRateThrottle(SettingsRateThrottle):
    scope = "token"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if not isinstance(request.auth, ApiToken):
            return None  # not a token's request: the user's limit applies alone
        return self.cache_format % {"scope": self.scope, "ident": request.auth.pk}


class UserRateThrottle(SettingsRateThrottle):
    scope = "user"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        ident = request.user.pk if request.user.is_authenticated else f"ip:{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}
