"""Create the demo login ("demo", a curator) unless it exists; print its password once."""

from __future__ import annotations

import os

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand

DEMO_USERNAME = "demo"
DEMO_GROUP = "curators"


class Command(BaseCommand):
    help = (
        'Create the dashboard login "demo" in the curators group, with the password from '
        'OAM_DEMO_PASSWORD (default "demo"). An existing "demo" user is left untouched.'
    )

    def handle(self, *args, **options) -> None:
        User = get_user_model()
        if User.objects.filter(username=DEMO_USERNAME).exists():
            self.stdout.write(f'Demo login "{DEMO_USERNAME}" already exists; left unchanged.')
            return
        password = os.environ.get("OAM_DEMO_PASSWORD") or "demo"
        user = User.objects.create_user(username=DEMO_USERNAME, password=password)
        # The group normally comes from the data migration; recreate it if someone deleted it.
        group, _ = Group.objects.get_or_create(name=DEMO_GROUP)
        user.groups.add(group)
        self.stdout.write(
            self.style.SUCCESS(f'Created demo login: username "{DEMO_USERNAME}", password "{password}" ({DEMO_GROUP}).')
        )
