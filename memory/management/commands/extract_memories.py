"""Run LLM memory extraction over stored threads: `manage.py extract_memories THREAD_ID ...`.

This is the on-demand path behind the dashboard's "extract memories" action, for threads written
before an LLM was configured or with extraction off. It needs OAM_LLM_BASE_URL and OAM_LLM_MODEL.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.engine import MemoryExtractionConfig
from memory.services import get_agent_memory


class Command(BaseCommand):
    help = "Extract memories (and refresh the summary) of the given threads with the configured LLM."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("thread_ids", nargs="+", metavar="THREAD_ID")
        parser.add_argument(
            "--all",
            action="store_true",
            dest="include_extracted",
            help="extract from every message, not only those no extraction has covered yet",
        )
        parser.add_argument("--no-summary", action="store_true", help="leave the thread summary as it is")

    def handle(self, *args, thread_ids: list[str], include_extracted: bool, no_summary: bool, **options) -> None:
        agent_memory = get_agent_memory()
        if agent_memory.llm is None:
            raise CommandError("no LLM is configured: set OAM_LLM_BASE_URL and OAM_LLM_MODEL")
        config = MemoryExtractionConfig(enable_context_summary=not no_summary)
        for thread_id in thread_ids:
            try:
                thread = agent_memory.get_thread(thread_id)
            except KeyError:
                raise CommandError(f"no thread {thread_id!r}") from None
            thread = agent_memory.create_thread(thread_id=thread.thread_id, memory_extraction_config=config)
            try:
                created = thread.run_memory_extraction(include_extracted=include_extracted)
            except (RuntimeError, ValueError) as exc:
                raise CommandError(f"extraction of thread {thread_id!r} failed: {exc}") from exc
            self.stdout.write(f"{thread_id}: {len(created)} new memor{'y' if len(created) == 1 else 'ies'}")
