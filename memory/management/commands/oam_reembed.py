"""Move the memory store to another embedder: `manage.py oam_reembed --embedder SPEC`.

SPEC is written as OAM_EMBEDDER is ("hashing:768", "openai:<model>[:<dim>]@<base_url>"); a new
vector dimension is fine. Every record with text is embedded again in batches (`--batch-size`),
with a progress bar on standard error, into a staging table committed batch by batch: the store
keeps its old vectors (and keeps serving) until all are done, an error leaves it unchanged, and
running the command again resumes after the last committed batch. Then the vectors and the
recorded embedder are swapped in at once. Stop the processes writing to the store first, and set
OAM_EMBEDDER=SPEC before starting them again: a store opened with the old embedder is refused.

The store is opened as the dashboard opens it, so OAM_EMBEDDER must still name the store's
current embedder while the command runs.
"""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.engine import DEFAULT_BATCH_SIZE, EmbedderMismatchError, embedder_from_spec
from memory.management.progress import progress_bar
from memory.services import get_agent_memory


class Command(BaseCommand):
    help = "Re-embed every record of the memory store with another embedder (a new dimension too); resumable."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--embedder", required=True, help="the new embedder, written as OAM_EMBEDDER is")
        parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="texts embedded per batch")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar on standard error")

    def handle(self, *args, embedder: str, batch_size: int, no_progress: bool, **options) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be 1 or more")
        try:
            new = embedder_from_spec(embedder)
            name, dim = new.name, new.dim  # an OpenAI-compatible server without a given dim is asked now
        except (ValueError, RuntimeError) as exc:
            raise CommandError(f"--embedder: {exc}") from exc
        try:
            agent_memory = get_agent_memory()
        except EmbedderMismatchError as exc:
            if (exc.stored_embedder, exc.stored_dim) == (name, dim):
                self.stdout.write(f"The store already uses {name} ({dim} dimensions): nothing to do.")
                self._tell_setting(embedder)
                return
            raise CommandError(
                f"The store's vectors were made by {exc.stored_embedder} ({exc.stored_dim} dimensions), but "
                f"OAM_EMBEDDER={settings.OAM_EMBEDDER!r} gives {exc.embedder} ({exc.dim}). Run this command "
                "with OAM_EMBEDDER set to the store's current embedder."
            ) from exc
        try:
            with progress_bar("re-embed", " records", disable=no_progress) as progress:
                report = agent_memory.reembed(new, batch_size=batch_size, progress=progress)
        except (ValueError, RuntimeError, OSError) as exc:
            raise CommandError(
                f"{exc}\nThe store is unchanged and still uses {agent_memory.store.embedder.name}; the batches "
                "embedded so far are kept: run the command again to resume."
            ) from exc
        if not report.changed:
            self.stdout.write(f"The store already uses {name} ({dim} dimensions): nothing to do.")
            self._tell_setting(embedder)
            return
        self.stdout.write(
            f"Re-embedded the store from {report.previous_embedder} ({report.previous_dim} dimensions) to "
            f"{report.embedder} ({report.vector_dim} dimensions): {report.records} records have a vector; "
            f"{report.embedded} embedded now, {report.resumed} by an earlier run."
        )
        if report.cleared:
            self.stdout.write(f"{report.cleared} vectors given without text could not be re-embedded and were dropped.")
        self._tell_setting(embedder)

    def _tell_setting(self, spec: str) -> None:
        try:
            configured = embedder_from_spec(settings.OAM_EMBEDDER).name
        except ValueError:
            configured = None
        if configured != embedder_from_spec(spec).name:
            self.stdout.write(
                f"Now set OAM_EMBEDDER={spec} and restart the dashboard and the agents: a store opened with "
                "the old embedder is refused."
            )
