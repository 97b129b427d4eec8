"""Logins and their scopes: manage.py oam_user add NAME --role viewer|curator|admin [--users …] [--agents …],
and manage.py oam_user scope NAME [--users …] [--agents …] [--clear]."""

from __future__ import annotations

import getpass
import sys

from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from memory.models import AccessScope
from memory.web.access import ROLES, grant_role
from memory.web.scopes import ScopeError, describe, set_scope

SCOPE_HELP = (
    "A scoped login (and every API token it owns) sees only the records of these users and/or agents "
    "(comma-separated ids), in the dashboard and the API alike."
)


class Command(BaseCommand):
    help = (
        "Add a dashboard login with a role: viewers read, curators also edit, admins are staff. "
        "The password comes from --password, or is asked for twice on a terminal. "
        "`scope` limits a login to some users and/or agents, or clears its scope."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="add|scope")
        add = actions.add_parser("add", help="create a login", description=self.help)
        add.add_argument("name", help="the username")
        add.add_argument("--role", required=True, choices=ROLES)
        add.add_argument("--password", help="the password (default: ask for it on the terminal)")
        add.add_argument("--email", default="")
        add.add_argument("--users", help="limit the login to these user ids, e.g. alice,bob")
        add.add_argument("--agents", help="limit the login to these agent ids, e.g. atlas")
        scope = actions.add_parser(
            "scope", help="show, set or clear a login's scope", description=f"{SCOPE_HELP} Without options: show it."
        )
        scope.add_argument("name", help="the username")
        scope.add_argument("--users", help='the user ids it sees, e.g. alice,bob ("" : every user)')
        scope.add_argument("--agents", help='the agent ids it sees, e.g. atlas ("" : every agent)')
        scope.add_argument("--clear", action="store_true", help="remove its scope: it sees everything")

    def handle(self, *args, action: str, name: str, **options) -> None:
        if action == "scope":
            self.scope(name, options["users"], options["agents"], options["clear"])
            return
        self.add(name, options["role"], options["password"], options["email"], options["users"], options["agents"])

    def add(
        self, name: str, role: str, password: str | None, email: str, users: str | None, agents: str | None
    ) -> None:
        User = get_user_model()
        if User.objects.filter(username=name).exists():
            raise CommandError(f'a login named "{name}" already exists')
        user = User(username=name, email=email)
        if password is None:
            password = self.ask_password()
        try:
            password_validation.validate_password(password, user)
        except ValidationError as error:
            raise CommandError("; ".join(error.messages)) from None
        try:
            with transaction.atomic():
                user.set_password(password)
                user.save()
                grant_role(user, role)
                scope = set_scope(user, users, agents) if users or agents else None
        except ScopeError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(self.style.SUCCESS(f'Created login "{name}" with role {role}; it sees {describe(scope)}.'))

    def scope(self, name: str, users: str | None, agents: str | None, clear: bool) -> None:
        login = get_user_model().objects.filter(username=name).first()
        if login is None:
            raise CommandError(f'no login named "{name}"')
        if clear and (users is not None or agents is not None):
            raise CommandError("--clear removes the whole scope: give it alone")
        if clear or users is not None or agents is not None:
            row = AccessScope.objects.filter(login=login).first()
            if not clear:  # an option not given keeps that part of the scope as it is
                users = ",".join(row.users) if users is None and row else users
                agents = ",".join(row.agents) if agents is None and row else agents
            try:
                scope = set_scope(login, None if clear else users, None if clear else agents)
            except ScopeError as error:
                raise CommandError(str(error)) from None
            self.stdout.write(self.style.SUCCESS(f'Login "{name}" now sees {describe(scope)}.'))
            return
        row = AccessScope.objects.filter(login=login).first()
        self.stdout.write(f'Login "{name}" sees {describe(None if row is None else row.visibility())}.')

    def ask_password(self) -> str:
        if not sys.stdin.isatty():
            raise CommandError("no terminal to ask for the password on: pass --password")
        password = getpass.getpass("Password: ")
        if password != getpass.getpass("Password (again): "):
            raise CommandError("the two passwords differ")
        return password
