"""Add a dashboard login with a role: manage.py oam_user add NAME --role viewer|curator|admin."""

from __future__ import annotations

import getpass
import sys

from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from memory.web.access import ROLES, grant_role


class Command(BaseCommand):
    help = (
        "Add a dashboard login with a role: viewers read, curators also edit, admins are staff. "
        "The password comes from --password, or is asked for twice on a terminal."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="add")
        add = actions.add_parser("add", help="create a login", description=self.help)
        add.add_argument("name", help="the username")
        add.add_argument("--role", required=True, choices=ROLES)
        add.add_argument("--password", help="the password (default: ask for it on the terminal)")
        add.add_argument("--email", default="")

    def handle(self, *args, action: str, name: str, role: str, password: str | None, email: str, **options) -> None:
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
        with transaction.atomic():
            user.set_password(password)
            user.save()
            grant_role(user, role)
        self.stdout.write(self.style.SUCCESS(f'Created login "{name}" with role {role}.'))

    def ask_password(self) -> str:
        if not sys.stdin.isatty():
            raise CommandError("no terminal to ask for the password on: pass --password")
        password = getpass.getpass("Password: ")
        if password != getpass.getpass("Password (again): "):
            raise CommandError("the two passwords differ")
        return password
