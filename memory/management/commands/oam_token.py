"""Personal API tokens from the command line: manage.py oam_token create | list | revoke.

The same tokens as the dashboard's /settings/tokens/ page (memory.web.tokens makes, checks and revokes
them): shown once, stored hashed, with a role no higher than their owner's.
"""

from __future__ import annotations

from argparse import RawDescriptionHelpFormatter
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.management.base import BaseCommand, CommandError, CommandParser, DjangoHelpFormatter
from django.db.models import QuerySet

from memory.models import ApiToken, TokenRole
from memory.web.tokens import MAX_EXPIRY_DAYS, PREFIX, TokenError, create_token, find_token, revoke

DESCRIPTION = """Personal API tokens, sent to the REST API as `Authorization: Bearer <token>`.

  oam_token create USER --name NAME --role viewer|curator [--expires-days N]
      Make a token for USER. Its role is no higher than USER's (a viewer makes viewer tokens).
      The token is printed once, alone on the LAST line (the lines before it describe it):
      TOKEN=$(manage.py oam_token create alice --name nightly --role viewer | tail -n 1)
  oam_token list [USER]
      Every token (of USER), newest first: owner, name, prefix, role, created, last used,
      expiry and state (active, expired, revoked). The secret part of a token is never shown.
  oam_token revoke PREFIX
  oam_token revoke USER --name NAME
      Revoke a token by the prefix that `list` shows (oam_1a2b3c4d or 1a2b3c4d; the whole token
      works too), or by its owner and name. Requests with it get a 401 from then on."""


class HelpFormatter(DjangoHelpFormatter, RawDescriptionHelpFormatter):
    """Django's option order, and the description's lines as written."""


def state(token: ApiToken) -> str:
    return "revoked" if token.revoked_at else "expired" if token.expired else "active"


def moment(value: Any) -> str:
    return f"{value:%Y-%m-%d %H:%M} UTC" if value else "never"


class Command(BaseCommand):
    help = "Create, list and revoke personal API tokens (create prints the token on its last line)."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.description = DESCRIPTION
        parser.formatter_class = HelpFormatter
        return parser

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="{create,list,revoke}")
        create = actions.add_parser(
            "create", help="make a token and print it on the last line", description="Make a token for USER."
        )
        create.add_argument("user", metavar="USER", help="the username of the token's owner")
        create.add_argument("--name", required=True, help="what will use it (unique among USER's active tokens)")
        create.add_argument("--role", required=True, choices=TokenRole.values, help="no higher than USER's role")
        create.add_argument(
            "--expires-days",
            type=int,
            metavar="N",
            help=f"expire after N days (1 to {MAX_EXPIRY_DAYS}; default: never)",
        )
        listing = actions.add_parser("list", help="list tokens", description="List every token, or USER's.")
        listing.add_argument("user", metavar="USER", nargs="?", help="only this user's tokens")
        revoking = actions.add_parser(
            "revoke",
            help="revoke a token by prefix, or by USER --name NAME",
            description="Revoke a token: `revoke PREFIX` (as `list` shows it) or `revoke USER --name NAME`.",
        )
        revoking.add_argument("target", metavar="PREFIX|USER", help="a token's prefix, or its owner with --name")
        revoking.add_argument("--name", help="the token's name (PREFIX|USER is then its owner's username)")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        getattr(self, f"handle_{action}")(**options)

    # --- create ---------------------------------------------------------------------------------

    def handle_create(self, *, user: str, name: str, role: str, expires_days: int | None, **options: Any) -> None:
        owner = self.user(user)
        try:
            token, secret = create_token(owner, name=name, role=role, expires_days=expires_days)
        except TokenError as error:
            raise CommandError(str(error)) from None
        expiry = f"expires {moment(token.expires_at)}" if token.expires_at else "never expires"
        self.stdout.write(
            f'Created the {token.role} token "{token.name}" ({PREFIX}{token.prefix}_…) for {owner.get_username()}; '
            f"it {expiry}."
        )
        self.stdout.write("It is shown once, on the next line: only its hash is kept.")
        self.stdout.write(secret)

    # --- list -----------------------------------------------------------------------------------

    def handle_list(self, *, user: str | None, **options: Any) -> None:
        tokens = ApiToken.objects.select_related("user")
        if user is not None:
            tokens = tokens.filter(user=self.user(user))
        rows = [
            (
                token.user.get_username(),
                token.name,
                f"{PREFIX}{token.prefix}",
                token.role,
                moment(token.created_at),
                moment(token.last_used_at),
                moment(token.expires_at),
                state(token),
            )
            for token in tokens
        ]
        if not rows:
            self.stdout.write(f"{user} has no tokens." if user else "No tokens.")
            return
        header = ("USER", "NAME", "PREFIX", "ROLE", "CREATED", "LAST USED", "EXPIRES", "STATE")
        widths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header))]
        for row in [header, *rows]:
            self.stdout.write("  ".join(value.ljust(width) for value, width in zip(row, widths, strict=True)).rstrip())

    # --- revoke ---------------------------------------------------------------------------------

    def handle_revoke(self, *, target: str, name: str | None, **options: Any) -> None:
        token = self.by_name(self.user(target), name) if name is not None else self.by_prefix(target)
        owner = token.user.get_username()
        if token.revoked_at is not None:
            self.stdout.write(f'The token "{token.name}" of {owner} was already revoked ({moment(token.revoked_at)}).')
            return
        revoke(token)
        self.stdout.write(
            self.style.SUCCESS(f'Revoked the token "{token.name}" ({PREFIX}{token.prefix}_…) of {owner}.')
        )

    def by_prefix(self, text: str) -> ApiToken:
        whole = find_token(text)
        if whole is not None:
            return whole
        prefix = text.removeprefix(PREFIX).split("_", 1)[0].strip().lower()
        if not prefix:
            raise CommandError(f"No prefix in {text!r}: give one as `list` shows it, e.g. {PREFIX}1a2b3c4d.")
        matches = list(ApiToken.objects.select_related("user").filter(prefix=prefix)[:10])
        if not matches:
            raise CommandError(f"No token has the prefix {PREFIX}{prefix}: see `manage.py oam_token list`.")
        active = [token for token in matches if token.revoked_at is None]
        if len(active) > 1 or (not active and len(matches) > 1):
            owners = ", ".join(sorted(f'"{token.name}" of {token.user.get_username()}' for token in matches))
            raise CommandError(
                f"Several tokens have the prefix {PREFIX}{prefix} ({owners}): revoke by USER --name NAME instead."
            )
        return active[0] if active else matches[0]

    def by_name(self, owner: AbstractBaseUser, name: str) -> ApiToken:
        tokens: QuerySet[ApiToken] = owner.api_tokens.select_related("user").filter(name=name.strip())
        token = tokens.filter(revoked_at__isnull=True).first() or tokens.first()
        if token is None:
            raise CommandError(f'{owner.get_username()} has no token named "{name}": see `manage.py oam_token list`.')
        return token

    def user(self, username: str) -> AbstractBaseUser:
        User = get_user_model()
        try:
            return User.objects.get(**{User.USERNAME_FIELD: username})
        except User.DoesNotExist:
            raise CommandError(f'No login named "{username}" (add one with `manage.py oam_user add`).') from None
