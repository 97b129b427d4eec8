"""Imports uploaded in the dashboard, run in the background (exports, a read, are memory.queries.export).

An upload is kept under OAM_IMPORT_DIR (default var/imports/) and imported by a thread of the web
server process that received it: no task queue to run beside the server. The job's state lives in
Django's database (ImportJob) and is updated after every batch, so that any request (the polling
progress bar, another server process) reads how far it got. The thread first reads the whole file
without writing anything, a line at a time (memory.engine.transfer.check_export: a line the import
would refuse — damaged, too long, an id or image the store or the API would refuse, an id given
twice, a thread named that is nowhere — fails the job naming it, with nothing imported), then
imports it a batch at a time, one transaction per batch.

A process that stops mid-import (a restart, a crash) leaves its job `checking` or `running` with
no thread behind it: `refresh` shows such a job as `interrupted` (its process is gone, or it is
this process and no thread of it runs the job). Running it again (`resume`) imports the same file
from the start; every id already in the store is skipped, so it goes on where it stopped. The
upload is deleted once the job is done; a failed or interrupted job keeps it for the retry.
"""

from __future__ import annotations

import contextvars
import logging
import os
import threading
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import close_old_connections, connections
from django.utils import timezone

from memory.curation import Actor, Curation
from memory.engine import ExportFormatError, check_export
from memory.models import ImportJob, ImportStatus
from memory.services import get_agent_memory

logger = logging.getLogger(__name__)

ACTIVE = (ImportStatus.QUEUED, ImportStatus.CHECKING, ImportStatus.RUNNING)

_running: set[int] = set()
_lock = threading.Lock()


def import_dir() -> Path:
    folder = Path(settings.OAM_IMPORT_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def max_bytes() -> int:
    return settings.OAM_IMPORT_MAX_BYTES


def batch_size() -> int:
    return settings.OAM_IMPORT_BATCH_SIZE


# --- import ----------------------------------------------------------------------------------------


def start_import(user: Any, upload: UploadedFile) -> ImportJob:
    """Keep the upload (its header already checked by ImportForm) and start importing it in the
    background. The job, `queued` (or already finished when OAM_IMPORT_INLINE runs it at once)."""
    header = getattr(upload, "header", None) or {}
    total = sum(header.get("counts", {}).values())
    job = ImportJob.objects.create(
        **Actor(user).authorship(),
        file_name=(upload.name or "upload.jsonl")[:255],
        size=upload.size,
        total=total,
        path="",
    )
    path = import_dir() / f"import-{job.pk}.jsonl"
    with path.open("wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
    job.path = str(path)
    job.save(update_fields=["path"])
    launch(job)
    job.refresh_from_db()
    return job


def launch(job: ImportJob) -> None:
    """Run the job's import: in a thread of this process, or right away with OAM_IMPORT_INLINE
    (tests, whose database transaction a thread would not see)."""
    with _lock:  # first: a refresh() in between must not take the job for one whose process died
        _running.add(job.pk)
    job.status, job.pid, job.error, job.done, job.finished_at = ImportStatus.QUEUED, os.getpid(), "", 0, None
    job.save(update_fields=["status", "pid", "error", "done", "finished_at"])
    if settings.OAM_IMPORT_INLINE:
        run_import(job.pk)
        return
    # In a copy of the request's context: a scoped login's import stays inside its scope (memory.web.scopes).
    context = contextvars.copy_context()
    threading.Thread(target=context.run, args=(_in_thread, job.pk), name=f"oam-import-{job.pk}", daemon=True).start()


def _in_thread(job_id: int) -> None:
    close_old_connections()
    try:
        run_import(job_id)
    finally:
        connections.close_all()  # this thread's own connections


def run_import(job_id: int) -> None:
    """Check the job's file whole, then import it, recording progress after each batch and, at
    the end, what was imported and skipped, or why it failed."""
    job = ImportJob.objects.get(pk=job_id)
    jobs = ImportJob.objects.filter(pk=job_id)
    try:
        jobs.update(status=ImportStatus.CHECKING, started_at=timezone.now(), done=0)
        path = Path(job.path)
        try:
            with path.open("rb") as lines:
                check_export(get_agent_memory(), lines)
        except ExportFormatError as error:
            jobs.update(status=ImportStatus.FAILED, error=f"{job.file_name}: {error}. Nothing was imported.")
            path.unlink(missing_ok=True)  # running it again would fail the same way
            return
        jobs.update(status=ImportStatus.RUNNING)

        def progress(done: int, total: int) -> None:
            jobs.update(done=done, total=total)

        curation = Curation(get_agent_memory(), Actor(job.actor, via=job.via))
        with path.open("rb") as lines:
            report, change = curation.import_export(
                lines, summary=f"Imported {job.file_name}", batch_size=batch_size(), progress=progress
            )
        jobs.update(
            status=ImportStatus.DONE,
            change=change,
            done=report.lines,
            restored=report.restored,
            skipped=[{"kind": kind, "reason": reason, "count": n} for kind, reason, n in report.skipped_summary()],
        )
        path.unlink(missing_ok=True)
    except Exception as error:  # a background job must end in a state the page can show
        logger.exception("import job %s failed", job_id)
        jobs.update(
            status=ImportStatus.FAILED,
            error=f"{error}. The batches before it are in the store; run the import again to resume "
            "(what is there is skipped).",
        )
    finally:
        jobs.update(finished_at=timezone.now())
        with _lock:
            _running.discard(job_id)


def _alive(job: ImportJob) -> bool:
    if job.pid == os.getpid():
        with _lock:
            return job.pk in _running
    if job.pid is None:
        return False
    try:
        os.kill(job.pid, 0)  # another process of this host (another worker): is it still there?
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def refresh(job: ImportJob) -> ImportJob:
    """The job as it is now; one still marked active whose thread is gone becomes `interrupted`."""
    job.refresh_from_db()
    if job.status in ACTIVE and not _alive(job):
        ImportJob.objects.filter(pk=job.pk, status=job.status).update(
            status=ImportStatus.INTERRUPTED, finished_at=timezone.now()
        )
        job.refresh_from_db()
    return job


def resume(job: ImportJob) -> bool:
    """Run a failed or interrupted job's import again (what is in the store is skipped); False
    when it cannot be: still running, done, or its file is gone."""
    job = refresh(job)
    if job.status not in (ImportStatus.FAILED, ImportStatus.INTERRUPTED) or not Path(job.path).is_file():
        return False
    # Claimed in one UPDATE: of two requests to resume it (a double click, two tabs), one runs it.
    resumable = ImportJob.objects.filter(pk=job.pk, status__in=(ImportStatus.FAILED, ImportStatus.INTERRUPTED))
    with _lock:  # before the claim: this process runs it from then on (see _alive)
        _running.add(job.pk)
    if not resumable.update(status=ImportStatus.QUEUED, pid=os.getpid()):
        with _lock:
            _running.discard(job.pk)
        return False
    launch(job)
    return True


def can_resume(job: ImportJob) -> bool:
    return job.status in (ImportStatus.FAILED, ImportStatus.INTERRUPTED) and bool(job.path) and Path(job.path).is_file()
