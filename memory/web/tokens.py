"""Personal API tokens: made, checked and revoked here, for the API's authentication, the
dashboard's /settings/tokens/ page and `manage.py oam_token` alike.

A token reads `oam_<prefix>_<secret>`: the prefix (stored in clear) names it in lists and logs, the
whole token's SHA-256 is what is stored. A token carries a role, no higher than its owner's, and
acts with the lower of the two: a curator demoted to viewer cannot write with an old curator token.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from memory.engine import check_id_text
from memory.models import ApiToken, TokenRole
from memory.web.access import role_of

PREFIX = "oam_"
LAST_USED_EVERY = timedelta(minutes=1)
"""How stale a token's last-used time may get: written at most this often, not on every request."""
MAX_EXPIRY_DAYS = 3650
NAME_LENGTH = ApiToken._meta.get_field("name").max_length
RANKS = {None: 0, "viewer": 1, "curator": 2, "admin": 2}


class TokenError(ValueError):
    """A token that cannot be made as asked (its role, name or expiry), with a message for the person
    and the argument it is about (`name`, `role` or `expires_days`), where a form shows it."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def allowed_roles(user: AbstractBaseUser) -> list[str]:
    """The token roles `user` may give: up to their own."""
    return [role for role in TokenRole.values if RANKS[role] <= RANKS[role_of(user)]]


def create_token(
    user: AbstractBaseUser, *, name: str, role: str, expires_days: int | None = None
) -> tuple[ApiToken, str]:
    """A new token of `user`'s, and the token itself (shown once: only its digest is kept)."""
    name = name.strip()
    if not name:
        raise TokenError("Give the token a name: what will use it.", "name")
    if len(name) > NAME_LENGTH:
        raise TokenError(f"A token's name is at most {NAME_LENGTH} characters.", "name")
    try:
        check_id_text("name", name)  # it is the caller of the token's calls in the activity log
    except ValueError:
        raise TokenError("A token's name is one line of text, without control characters.", "name") from None
    if role not in TokenRole.values:
        raise TokenError(f"The role is viewer or curator, not {role!r}.", "role")
    if role not in allowed_roles(user):
        have = role_of(user) or "no role"
        raise TokenError(f"A token's role is no higher than its owner's: {user.get_username()} has {have}.", "role")
    if expires_days is not None and not 1 <= expires_days <= MAX_EXPIRY_DAYS:
        raise TokenError(f"A token expires in 1 to {MAX_EXPIRY_DAYS} days, or never.", "expires_days")
    prefix = secrets.token_hex(4)
    token = f"{PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    expires_at = timezone.now() + timedelta(days=expires_days) if expires_days else None
    try:
        with transaction.atomic():
            record = ApiToken.objects.create(
                user=user, name=name, role=role, prefix=prefix, key_hash=digest(token), expires_at=expires_at
            )
    except IntegrityError:
        raise TokenError(
            f"{user.get_username()} already has a token named {name!r}: revoke it or pick another name.", "name"
        ) from None
    return record, token


def find_token(token: str) -> ApiToken | None:
    """The token this is, usable or not (None for no token of ours)."""
    if not token.startswith(PREFIX):
        return None
    return ApiToken.objects.select_related("user").filter(key_hash=digest(token)).first()


def mark_used(token: ApiToken) -> None:
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now


def token_role(token: ApiToken) -> str | None:
    """What the token may do now: its role, capped by its owner's current one."""
    owner = role_of(token.user)
    return token.role if RANKS[token.role] <= RANKS[owner] else owner


def revoke(token: ApiToken) -> None:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
