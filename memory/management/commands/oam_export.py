"""Export the memory store, or one user's, agent's or thread's part of it, as an oam-export file:
`manage.py oam_export [--user-id ID | --agent-id ID | --thread-id ID] [--output FILE]`.

The format (JSON Lines, versioned) is memory.engine.transfer's; `manage.py oam_import FILE`
reads it back into the store OAM_STORE_URL names. Without --output the file goes to standard
output; the progress bar goes to standard error. The activity log records the export (kind
"export") under the command's name, on behalf of the account that ran it.
"""

from __future__ import annotations

import getpass
from contextlib import ExitStack, suppress
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.engine import acting_as, write_export
from memory.management.progress import progress_bar
from memory.services import get_agent_memory


class Command(BaseCommand):
    help = "Export the memory store (or a user's, agent's or thread's part) as an oam-export JSON Lines file."

    def add_arguments(self, parser: CommandParser) -> None:
        scope = parser.add_mutually_exclusive_group()
        scope.add_argument("--user-id", help="what deleting this user would remove: threads, records, links")
        scope.add_argument("--agent-id", help="what deleting this agent would remove")
        scope.add_argument("--thread-id", help="this thread, its messages, images and memories, and their links")
        parser.add_argument("--output", "-o", help="the file to write (default: standard output)")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar on standard error")

    def handle(self, *args, user_id, agent_id, thread_id, output, no_progress, **options) -> None:
        scope = {
            name: value
            for name, value in (("user_id", user_id), ("agent_id", agent_id), ("thread_id", thread_id))
            if value
        }
        try:
            with exporter(), progress_bar("export", " lines", disable=no_progress) as progress:
                if output is None:
                    counts = write_export(get_agent_memory(), self.stdout, progress=progress, **scope)
                else:
                    with Path(output).open("w", encoding="utf-8", newline="\n") as out:
                        counts = write_export(get_agent_memory(), out, progress=progress, **scope)
        except (ValueError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        self.stderr.write(
            f"Exported {counts['threads']} threads, {counts['records']} records and {counts['relations']} links"
            + (f" to {output}." if output else ".")
        )


def exporter() -> ExitStack:
    """The export recorded as the command's (OAM_CALLER, else "manage.py oam_export") on behalf of
    the operating-system account that ran it, when it has a name a log can hold."""
    stack = ExitStack()
    recorder = get_agent_memory().activity
    if recorder is not None:
        # No login name (a container's numeric user), or one no log could hold: the command's name alone.
        with suppress(OSError, KeyError, ValueError):
            stack.enter_context(acting_as(recorder.caller, on_behalf_of=getpass.getuser()))
    return stack
