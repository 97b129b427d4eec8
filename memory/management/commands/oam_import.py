"""Import an oam-export file into the store OAM_STORE_URL names: `manage.py oam_import FILE`.

The file is checked whole first, one line at a time (format, version, and every line as the
import would take it: its shape and length, ids, sizes, image bytes, ids given twice, the threads
and messages records name; the first line refused is named, and nothing is written); then it is
imported a batch of lines at a time, one transaction per batch, with its ids, times, statuses,
expiry and versions. What the store already holds is skipped and counted in the summary, so
running the command again after an interruption (or a failed batch) finishes the import. `-` reads
standard input (not checked first: a line refused stops the import there).
"""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.engine import DEFAULT_IMPORT_BATCH, ExportFormatError, check_export, import_export
from memory.management.progress import progress_bar
from memory.services import get_agent_memory
from memory.text import plural


class Command(BaseCommand):
    help = "Import an oam-export JSON Lines file (manage.py oam_export) into the memory store."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the export to import ('-': standard input)")
        parser.add_argument("--batch-size", type=int, default=DEFAULT_IMPORT_BATCH, help="lines per transaction")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar on standard error")

    def handle(self, *args, file: str, batch_size: int, no_progress: bool, **options) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be 1 or more")
        try:
            agent_memory = get_agent_memory()
            with progress_bar("import", " lines", disable=no_progress) as progress:
                if file == "-":
                    stdin = getattr(sys.stdin, "buffer", sys.stdin)  # bytes: the reader decodes UTF-8 itself
                    report = import_export(agent_memory, stdin, batch_size=batch_size, progress=progress)
                else:
                    path = Path(file)
                    with path.open("rb") as lines:
                        check_export(agent_memory, lines)
                    with path.open("rb") as lines:
                        report = import_export(agent_memory, lines, batch_size=batch_size, progress=progress)
        except ExportFormatError as exc:
            raise CommandError(f"{file}: {exc}") from exc
        except (ValueError, OSError) as exc:
            raise CommandError(
                f"{file}: {exc}\nThe batches before it are in the store; run the command again to resume "
                "(what is there is skipped)."
            ) from exc
        restored = report.restored
        self.stdout.write(
            f"Imported {plural(restored['threads'], 'thread')}, {plural(restored['records'], 'record')} and "
            f"{plural(restored['relations'], 'link')} from {plural(report.lines, 'line')} in "
            f"{plural(report.batches, 'batch')}."
        )
        skipped = report.skipped_summary()
        if not skipped:
            self.stdout.write("Nothing was skipped.")
        for kind, reason, n in skipped:
            self.stdout.write(f"Skipped {n} {kind}{'' if n == 1 else 's'}: {reason}.")
