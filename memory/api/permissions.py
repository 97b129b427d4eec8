"""Viewers read, curators write: with a token, the lower of its role and its owner's."""

from __future__ import annotations

from typing import Any

from rest_framework import permissions
from rest_framework.request import Request

from memory.models import ApiToken
from memory.web.access import role_of
from memory.web.tokens import RANKS, token_role


def request_role(request: Request) -> str | None:
    if isinstance(request.auth, ApiToken):
        return token_role(request.auth)
    return role_of(request.user)


class ReadOrCurate(permissions.BasePermission):
    """Safe methods need any role; every other method needs a curator (or admin)."""

    def has_permission(self, request: Request, view: Any) -> bool:
        role = request_role(request)
        if request.method in permissions.SAFE_METHODS:
            self.message = "Your account has no role yet: ask an admin to make you a viewer or a curator."
            return RANKS[role] >= RANKS["viewer"]
        self.message = "Only curators can change the memory store: this token or account can read it."
        return RANKS[role] >= RANKS["curator"]


class Reads(permissions.BasePermission):
    """An operation that only reads, whatever its method (a search takes its parameters as a JSON
    body, so it is a POST): any role."""

    message = "Your account has no role yet: ask an admin to make you a viewer or a curator."

    def has_permission(self, request: Request, view: Any) -> bool:
        return RANKS[request_role(request)] >= RANKS["viewer"]
