"""A process the crash tests kill -9: it does one kind of work in batches and, at the point
OAM_CRASH_AT names ("<point>:<batch>"), writes "paused" to the file OAM_CRASH_MARKER and waits to
be killed. The points are reached by wrapping the real code (nothing in the project knows about
them), so the work is exactly what runs in production up to the kill.

Modes (argv[1]):
  ingest STORE            Thread.add_messages in batches of BATCH messages (ids m-<batch>-<i>).
                          Points: inside (the batch's rows written, not committed), after.
  bulk                    Curation.bulk_update_memories over every memory (Django; batches of
                          curation.bulk.BULK_BATCH = BATCH). Points: changed (store rows written, no
                          entries), pending (entries written pending), committed (store committed,
                          entries pending), confirmed (entries confirmed, outcome not forgotten).
  import-command FILE     manage.py oam_import FILE --batch-size BATCH. Points: inside, after.
  import-job FILE         the dashboard's background import (import_jobs.run_import), batches
                          of BATCH lines. Points: as for bulk.
  erase USER              memory.curation.erasure.erase of USER. Points: store (the store's
                          transaction committed, the history not yet tombstoned), scrub (all
                          but the scrubbing of the files done).
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path

BATCH = 10
BATCHES = 5


def pause() -> None:
    Path(os.environ["OAM_CRASH_MARKER"]).write_text("paused")
    while True:  # until the test kills this process
        time.sleep(1)


def crash_point() -> tuple[str, int]:
    point, batch = os.environ["OAM_CRASH_AT"].split(":")
    return point, int(batch)


def ingest(path: str) -> None:
    from memory.engine import AgentMemory, SQLiteMemoryStore

    point, at = crash_point()
    agent_memory = AgentMemory(SQLiteMemoryStore(path, schema_policy="create_if_necessary"))
    thread = agent_memory.get_thread("t-crash")
    for batch in range(BATCHES):
        messages = [
            {"id": f"m-{batch}-{i}", "role": "user", "content": f"crash note token{batch}q{i}"} for i in range(BATCH)
        ]
        if batch == at and point == "inside":
            with agent_memory.transaction():  # the batch's own transaction is part of this one: written, not committed
                thread.add_messages(messages)
                pause()
        thread.add_messages(messages)
        agent_memory.search("crash", user_id="u")  # the index follows the writes
        if batch == at and point == "after":
            pause()


def django_setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.crash.settings")
    import django

    django.setup()


def hook_recording() -> None:
    """Pause at the two-phase recording's point of the batch OAM_CRASH_AT names."""
    from memory import curation
    from memory.curation import bulk
    from memory.engine import AgentMemory
    from memory.models import CurationEntry

    point, at = crash_point()
    batches = {"n": -1}
    manager = CurationEntry.with_pending
    bulk_create = manager.bulk_create

    recorded = curation.Curation._recorded

    @contextmanager
    def counted(self):
        if self._pending is None:  # a batch (or a single change) begins
            batches["n"] += 1
        with recorded(self):
            yield

    curation.Curation._recorded = counted

    def hooked_bulk_create(entries, *args, **kwargs):
        if batches["n"] == at and point == "changed":
            pause()
        created = bulk_create(entries, *args, **kwargs)
        if batches["n"] == at and point == "pending":
            pause()
        return created

    manager.bulk_create = hooked_bulk_create
    transaction = AgentMemory.transaction

    @contextmanager
    def hooked_transaction(self):
        with transaction(self):
            yield
        if batches["n"] == at and point == "committed":
            pause()

    AgentMemory.transaction = hooked_transaction
    forget = AgentMemory.forget_outcomes

    def hooked_forget(self, tokens):
        if batches["n"] == at and point == "confirmed":
            pause()
        forget(self, tokens)

    AgentMemory.forget_outcomes = hooked_forget
    bulk.BULK_BATCH = BATCH


def bulk() -> None:
    django_setup()
    hook_recording()
    from django.contrib.auth.models import User

    from memory.curation import Actor, Curation
    from memory.services import get_agent_memory

    agent_memory = get_agent_memory()
    chosen = agent_memory.list_memories(limit=None)
    chosen = getattr(chosen, "items", chosen)
    changes = [(record, {"metadata": {**(record.metadata or {}), "reviewed": True}}) for record in chosen]
    Curation(agent_memory, Actor(User.objects.get(username="carl"))).bulk_update_memories(changes, "Marked reviewed")


def import_command(file: str) -> None:
    django_setup()
    from django.core.management import call_command

    from memory.engine.stores.sql import SQLMemoryStore

    point, at = crash_point()
    batches = {"n": -1}
    restore = SQLMemoryStore.restore

    def hooked_restore(self, snapshot, **options):
        batches["n"] += 1
        if batches["n"] == at and point == "inside":
            with self.transaction():
                restore(self, snapshot, **options)
                pause()
        report = restore(self, snapshot, **options)
        if batches["n"] == at and point == "after":
            pause()
        return report

    SQLMemoryStore.restore = hooked_restore
    call_command("oam_import", file, batch_size=BATCH, no_progress=True)


def import_job(file: str) -> None:
    django_setup()
    hook_recording()
    from django.contrib.auth.models import User

    from memory.curation import Actor, import_jobs
    from memory.models import ImportJob

    job = ImportJob.objects.create(
        **Actor(User.objects.get(username="carl")).authorship(), file_name="export.jsonl", path=file, size=1
    )
    import_jobs.launch(job)


def resume_job() -> None:
    django_setup()
    from memory.curation import import_jobs
    from memory.models import ImportJob

    assert import_jobs.resume(ImportJob.objects.get()), "the interrupted job could not be resumed"


def erase(user_id: str) -> None:
    """memory.curation.erasure.erase of `user_id`, paused (OAM_CRASH_AT "store:0") once the store's
    transaction has committed, before the history's tombstones, or ("scrub:0") once the history
    and uploads are done, before the files are scrubbed."""
    django_setup()
    from memory.curation import Actor, erasure
    from memory.engine import AgentMemory
    from memory.services import get_agent_memory

    point, _ = crash_point()
    if point == "store":
        erasure.tombstone_history = lambda *args, **kwargs: pause()
    elif point == "scrub":
        AgentMemory.scrub_files = lambda self, **kwargs: pause()
    erasure.erase(get_agent_memory(), Actor(None, via="command"), user_id)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    mode, *arguments = sys.argv[1:]
    {
        "ingest": ingest,
        "bulk": bulk,
        "import-command": import_command,
        "import-job": import_job,
        "resume-job": resume_job,
        "erase": erase,
    }[mode](*arguments)
