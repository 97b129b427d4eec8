"""The dashboard's settings for the crash tests' child processes: Django's database in a file the
test names (OAM_CRASH_DJANGO_DB), so that a killed process and the one after it share it."""

import os

from oam_site.settings import *  # noqa: F403

DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["OAM_CRASH_DJANGO_DB"]}}
