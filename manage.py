#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "oam_site.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # A bad setting (an OAM_* environment variable) is the administrator's to fix, not a bug:
        # its message alone, as a command's own errors are printed, instead of a traceback.
        sys.stderr.write(f"Error: the settings are wrong: {exc}\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
