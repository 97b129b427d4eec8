"""Erase a person completely: `manage.py oam_erase --user-id ID [--dry-run] [--no-input]`.

Everything of theirs leaves the store, its activity log, the curation history (entries stay as
tombstones) and kept import uploads, and is scrubbed from the files (memory.curation.erasure).
It cannot be undone: without --no-input the command asks for the id again and stops unless it
matches. --dry-run says what would go and changes nothing. A run that was interrupted is
finished by running the command again. The receipt's id is printed; /erasures/<id>/ shows it.
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.curation import Actor
from memory.curation.erasure import erase, preview
from memory.services import get_agent_memory


class Command(BaseCommand):
    help = "Erase a user (a person) from the store, the activity log, the history and import uploads, for good."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user-id", required=True, help="the user to erase")
        parser.add_argument("--dry-run", action="store_true", help="say what would go, change nothing")
        parser.add_argument("--no-input", action="store_true", help="do not ask for the id again (scripts)")

    def handle(self, *args, user_id: str, dry_run: bool, no_input: bool, **options) -> None:
        agent_memory = get_agent_memory()
        try:
            plan = preview(agent_memory, user_id)
        except ValueError as exc:
            raise CommandError(f"--user-id: {exc}") from exc
        if plan.empty:
            raise CommandError(f"there is no user {user_id!r} to erase")
        width = max(len(kind) for kind in plan.counts)
        self.stdout.write(f"{'Would erase' if dry_run else 'Erasing'} user {user_id}:")
        for kind, count in plan.counts.items():
            self.stdout.write(f"  {kind:<{width}}  {count}")
        for download in plan.downloads:
            self.stdout.write(
                f"  not reachable: an export of {download.scope} downloaded {download.at} by {download.by}"
            )
        if plan.resuming is not None:
            self.stdout.write(f"  (finishing the erasure started {plan.resuming.at:%Y-%m-%d %H:%M} UTC)")
        if dry_run:
            return
        if not no_input:
            self.stdout.write("This cannot be undone: nothing is kept to restore.")
            answer = input("Type the user id again to erase it: ")
            if answer != user_id:
                raise CommandError("the id did not match: nothing was erased")
        receipt = erase(agent_memory, Actor(None, via="command"), user_id)
        self.stdout.write(json.dumps(receipt.as_json(), indent=2, sort_keys=True))
        self.stdout.write(f"Erased user {user_id}: receipt {receipt.pk} (/erasures/{receipt.pk}/).")
