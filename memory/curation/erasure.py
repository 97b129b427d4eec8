"""Erasing a person: everything of theirs out of the store, the activity log, the curation
history and the kept import uploads, and out of the files that hold them, with a receipt that
keeps none of it.

`preview` says what an erasure of a user id would remove, per kind, and what it cannot reach
(exports already downloaded, from the activity log's `export` events); `erase` does it, in an
order that a crash at any point leaves resumable:

1. the receipt (`ErasureReceipt`) is written `started`, with the preview's counts and digest;
2. the store and its activity log lose the person in one transaction (AgentMemory.erase_user);
3. the history's entries of their records become tombstones (kind, when, by whom, "erased"),
   and the "not sensitive" decisions about their records and the saved views filtered to them go;
4. kept import uploads holding their records are rewritten without them, or deleted;
5. the store's files and Django's database file are scrubbed of the deleted rows;
6. the receipt is marked `done`.

A process killed between any two steps leaves the receipt `started`, and the next erasure of
the same id (the page, the API or `manage.py oam_erase`) finds it and does the steps again: each
one finds only what is left. Nothing is kept to restore: an erasure cannot be undone, and a
tombstone cannot be reverted.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from memory.curation.recording import Actor
from memory.engine import AgentMemory, ErasureReport
from memory.models import (
    BulkChange,
    CurationEntry,
    ErasureReceipt,
    ErasureStatus,
    HistoryOwner,
    ImportJob,
    ObjectKind,
    SavedView,
    SensitiveDismissal,
    joining,
)

ERASED_SUMMARY = "Erased with the person it belonged to"
"""A tombstone's summary: the content of its change is gone; what kind, when and by whom stay."""
BULK_ERASED_SUMMARY = "A bulk change of which a part was erased with the person it belonged to"
_ERASED_KEY = b'"user_id":'


@dataclass(frozen=True)
class Download:
    """An export that was downloaded before the erasure and held the person's records: the
    erasure cannot reach it. `scope` says what was exported (its filters, or the whole store)."""

    at: str
    by: str
    call: str
    scope: str

    def as_json(self) -> dict[str, str]:
        return {"at": self.at, "when": self.when, "by": self.by, "call": self.call, "scope": self.scope}

    @property
    def when(self) -> str:
        """The time as the pages show it: to the minute, UTC."""
        return f"{self.at[:16].replace('T', ' ')} UTC"


@dataclass(frozen=True)
class ErasurePlan:
    """What an erasure of `user_id` removes (`store`: the engine's counts and ids; the history's
    entries; the kept uploads holding their records) and cannot reach (`downloads`), and the
    unfinished erasure it would finish (`resuming`)."""

    user_id: str
    store: ErasureReport
    history_entries: int
    import_jobs: Sequence[ImportJob] = ()
    downloads: Sequence[Download] = ()
    resuming: ErasureReceipt | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """Nothing to erase and nothing left unfinished: the id is unknown (404)."""
        return not any(self.counts.values()) and self.resuming is None

    @property
    def digest(self) -> str:
        """SHA-256 over the user id, the counts and the sorted ids of what goes: a receipt can be
        checked against it without keeping any of it."""
        payload = {"user_id": self.user_id, "counts": self.counts, "erased": [list(pair) for pair in self.store.erased]}
        return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


CHUNK = 500
"""Ids per query: an erasure may name tens of thousands, more than a database takes binds in one."""


def _chunks(values: Sequence[Any]) -> Iterator[Sequence[Any]]:
    for start in range(0, len(values), CHUNK):
        yield values[start : start + CHUNK]


def _history_entry_ids(user_id: str, erased_ids: Sequence[str]) -> list[int]:
    """The history's entries of the person's records not yet tombstones, pending ones too: those
    their HistoryOwner rows name, their own profile's, and those of the erased records, threads
    and links by id."""
    entries = CurationEntry.with_pending.filter(erased=False)
    owned = Q(id__in=HistoryOwner.objects.filter(kind=ObjectKind.USER, owner_id=user_id).values("entry_id"))
    found = set(entries.filter(owned | Q(object_kind=ObjectKind.USER, object_id=user_id)).values_list("id", flat=True))
    for chunk in _chunks(list(erased_ids)):
        found.update(entries.filter(object_id__in=chunk).values_list("id", flat=True))
    return sorted(found)


def _holds_user(path: Path, user_id: str) -> bool:
    """Whether an export file names the user (a quick byte search, before it is read as JSON)."""
    needle = _ERASED_KEY + json.dumps(user_id).encode()
    try:
        with path.open("rb") as file:
            return any(needle in line for line in file)
    except OSError:
        return False


def _downloads(agent_memory: AgentMemory, user_id: str) -> list[Download]:
    """Exports the activity log recorded (kind "export": one event per user whose records a file
    held, whatever the export's filters) that held the person's: their files are out of reach.
    Read before the erasure, which strips those events of their request."""
    if agent_memory.activity is not None:
        agent_memory.activity.flush()
    try:
        events = agent_memory.list_activity(kind="export", user_id=user_id, limit=None)
    except ValueError:  # an activity log that does not record exports
        return []
    found, seen = [], set()
    for event in events:
        export_id = event.request.get("export_id") or event.id
        if export_id in seen:
            continue
        seen.add(export_id)
        filters = event.request.get("filters") or {}
        named = (f"{name.removesuffix('_id')} {value}" for name, value in sorted(filters.items()) if value)
        scope = ", ".join(named) or "the whole store"
        found.append(Download(event.time, event.on_behalf_of or event.caller, event.call, scope))
    return found


def preview(agent_memory: AgentMemory, user_id: str) -> ErasurePlan:
    """What an erasure of `user_id` would remove, per kind, and what it could not reach. ValueError
    for an id the engine refuses."""
    store = agent_memory.erase_user(user_id, dry_run=True)
    ids = [object_id for _, object_id in store.erased]
    history = len(_history_entry_ids(user_id, ids))
    jobs = [job for job in ImportJob.objects.exclude(path="") if _holds_user(Path(job.path), user_id)]
    resuming = ErasureReceipt.objects.filter(user_id=user_id, status=ErasureStatus.STARTED).first()
    dismissals = sum(SensitiveDismissal.objects.filter(record_id__in=chunk).count() for chunk in _chunks(ids))
    counts = {
        **store.counts,
        "history_entries": history,
        "sensitive_dismissals": dismissals,
        "saved_views": len(_saved_views_of(user_id)),
        "import_files": len(jobs),
    }
    return ErasurePlan(user_id, store, history, jobs, _downloads(agent_memory, user_id), resuming, counts)


def erase(agent_memory: AgentMemory, actor: Actor, user_id: str) -> ErasureReceipt:
    """Erase `user_id` everywhere (the module's steps), or finish an interrupted erasure of it;
    returns the receipt. KeyError when there is nothing to erase."""
    plan = preview(agent_memory, user_id)
    if plan.empty:
        raise KeyError(f"no user {user_id!r} to erase")
    receipt = plan.resuming or ErasureReceipt.objects.create(
        user_id=user_id,
        counts=plan.counts,
        digest=plan.digest,
        unreached=[download.as_json() for download in plan.downloads],
        **actor.authorship(),
    )
    report = agent_memory.erase_user(user_id, scrub=False)
    ids = sorted({object_id for _, object_id in (*plan.store.erased, *report.erased)})
    tombstone_history(user_id, ids)
    forget_dismissals(ids)
    forget_saved_views(user_id)
    imports = [*receipt.imports, *(_rewrite_upload(job, user_id) for job in plan.import_jobs)]
    files = {"store": _as_dict(agent_memory.scrub_files()), "django_database": scrub_django_database()}
    receipt.imports, receipt.files = imports, files
    receipt.status, receipt.finished_at = ErasureStatus.DONE, timezone.now()
    receipt.save(update_fields=["imports", "files", "status", "finished_at"])
    return receipt


def tombstone_history(user_id: str, erased_ids: Sequence[str]) -> int:
    """Make tombstones of the history's entries of the person's records: their before and after
    (the records' content) emptied, their summary "erased"; kind, object, when and by whom stay.
    A bulk change any of them belongs to loses its summary too (a merge's names the memories it
    kept by their text). Returns how many entries."""
    with secure_delete(), transaction.atomic():
        done = 0
        for chunk in _chunks(_history_entry_ids(user_id, erased_ids)):
            entries = CurationEntry.with_pending.filter(id__in=chunk)
            bulks = set(entries.exclude(bulk=None).values_list("bulk_id", flat=True))
            BulkChange.objects.filter(pk__in=bulks).update(summary=BULK_ERASED_SUMMARY)
            done += entries.update(before=None, after=None, summary=ERASED_SUMMARY, erased=True)
        return done


def forget_dismissals(erased_ids: Sequence[str]) -> int:
    """Delete the "not sensitive" decisions about the erased records: each keeps a digest and a
    masked preview of a value of theirs. Returns how many."""
    with secure_delete(), transaction.atomic():
        return sum(SensitiveDismissal.objects.filter(record_id__in=chunk).delete()[0] for chunk in _chunks(erased_ids))


def _saved_views_of(user_id: str) -> list[int]:
    """The saved views filtered to the person (user_id=<id> in their query string)."""
    needle = urlencode({"user_id": user_id})
    candidates = SavedView.objects.filter(query__contains=needle).values_list("pk", "query")
    return [pk for pk, query in candidates if user_id in parse_qs(query).get("user_id", [])]


def forget_saved_views(user_id: str) -> int:
    """Delete the saved views filtered to the person: a view's name and query are what someone
    typed about them ("alice's cat periwinkleosprey"), and it lists nothing once they are gone.
    Returns how many."""
    with secure_delete(), transaction.atomic():
        return SavedView.objects.filter(pk__in=_saved_views_of(user_id)).delete()[0]


def _replace_in(value: Any, text: str, replacement: str) -> Any:
    if isinstance(value, str):
        return value.replace(text, replacement)
    if isinstance(value, list):
        return [_replace_in(item, text, replacement) for item in value]
    if isinstance(value, dict):
        return {key: _replace_in(item, text, replacement) for key, item in value.items()}
    return value


def replace_in_history(record_ids: Sequence[str], text: str, replacement: str) -> int:
    """Replace `text` with `replacement` wherever the history's entries of these records (and of
    the links that join them) hold it: in their before and after JSON and their summary, and the
    summary of a bulk change they belong to. For a redaction (the span of a secret or a piece of
    personal data) the history must not keep either. Returns how many entries changed; Django's
    database file still needs `scrub_django_database` for the old rows' bytes."""
    if not isinstance(text, str) or not text:
        raise ValueError("text must be a non-empty string")
    if not isinstance(replacement, str):
        raise TypeError(f"replacement must be a string, not {type(replacement).__name__}")
    condition = Q(object_id__in=list(record_ids))
    for record_id in record_ids:
        condition |= joining(record_id)
    changed = 0
    with secure_delete(), transaction.atomic():
        for entry in (
            CurationEntry.with_pending.filter(condition).select_related("bulk").select_for_update(of=("self",))
        ):
            before, after = _replace_in(entry.before, text, replacement), _replace_in(entry.after, text, replacement)
            summary = entry.summary.replace(text, replacement)
            if (before, after, summary) != (entry.before, entry.after, entry.summary):
                entry.before, entry.after, entry.summary = before, after, summary
                entry.save(update_fields=["before", "after", "summary"])
                changed += 1
            if entry.bulk is not None and text in entry.bulk.summary:
                entry.bulk.summary = entry.bulk.summary.replace(text, replacement)[:300]
                entry.bulk.save(update_fields=["summary"])
    return changed


def replace_in_uploads(record_id: str, text: str, replacement: str) -> int:
    """Replace `text` with `replacement` in the record's line of every kept import upload that
    holds it (a redaction reaches the files as an erasure does); other records' lines stay as
    they were. Returns how many files changed."""
    if not isinstance(text, str) or not text:
        raise ValueError("text must be a non-empty string")
    forms = {text.encode(), json.dumps(text)[1:-1].encode()}
    changed = 0
    # Every login's uploads, not only those a scoped redactor's manager lists: only the line of
    # the record it redacts (one it sees) changes.
    for job in ImportJob._base_manager.exclude(path=""):
        path = Path(job.path)
        try:
            with path.open("rb") as file:
                lines = file.readlines()
        except OSError:
            continue
        rewritten = [_replaced_line(line, record_id, forms, text, replacement) for line in lines]
        if rewritten != lines:
            _replace_file(path, rewritten)
            changed += 1
    return changed


def _replaced_line(line: bytes, record_id: str, forms: set[bytes], text: str, replacement: str) -> bytes:
    if not any(form in line for form in forms):
        return line
    item = _line(line)
    record = item.get("record")
    if not isinstance(record, dict) or record.get("id") != record_id:
        return line
    item["record"] = _replace_in(record, text, replacement)
    return json.dumps(item, sort_keys=True, separators=(",", ":")).encode() + b"\n"


def _rewrite_upload(job: ImportJob, user_id: str) -> dict[str, Any]:
    """A kept import upload without the person's lines: their threads, the records of theirs or in
    their threads (a message's images with it), and links touching any of them; the header's
    counts follow. A file left with no thread or record is deleted. Says what was done."""
    path = Path(job.path)
    said = {"job": job.pk, "file_name": job.file_name, "uploaded_at": job.at.isoformat()}
    if not path.exists():
        return {**said, "action": "missing", "lines_removed": 0}
    threads: set[str] = set()
    gone: set[str] = set()
    with path.open("rb") as file:  # first pass: what is theirs (threads come before records)
        for line in file:
            item = _line(line)
            if "thread" in item and item["thread"].get("user_id") == user_id:
                threads.add(item["thread"].get("id"))
            elif "record" in item and _theirs(item["record"], user_id, threads, gone):
                gone.add(item["record"].get("id"))
    removed, kept, counts = 0, 0, {"threads": 0, "records": 0, "relations": 0}
    with path.open("rb") as source:
        header = source.readline()
        body = []
        for line in source:
            item = _line(line)
            if _dropped(item, threads, gone):
                removed += 1
                continue
            for kind in ("thread", "record", "relation"):
                if kind in item:
                    counts[f"{kind}s"] += 1
            kept += 1 if ("thread" in item or "record" in item) else 0
            body.append(line)
    if not kept:
        path.unlink()
        return {**said, "action": "deleted", "lines_removed": removed}
    head = _line(header)
    if isinstance(head.get("counts"), dict):
        head["counts"] = counts
        header = json.dumps(head, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    _replace_file(path, [header, *body])
    return {**said, "action": "rewritten", "lines_removed": removed}


def _replace_file(path: Path, lines: Sequence[bytes]) -> None:
    """The file's content replaced by `lines`: written aside, synced, then renamed over it, so
    that a crash leaves the old file or the new one whole (a re-run then finishes the job)."""
    aside = path.with_name(f".{path.name}.rewriting")
    with aside.open("wb") as target:
        target.writelines(lines)
        target.flush()
        os.fsync(target.fileno())
    os.replace(aside, path)


def _line(line: bytes) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _theirs(record: dict[str, Any], user_id: str, threads: set[str], gone: set[str]) -> bool:
    return (
        record.get("user_id") == user_id
        or record.get("thread_id") in threads
        or (record.get("record_type") == "user_profile" and record.get("id") == user_id)
        or record.get("message_id") in gone
    )


def _dropped(item: dict[str, Any], threads: set[str], gone: set[str]) -> bool:
    if "thread" in item:
        return item["thread"].get("id") in threads
    if "record" in item:
        return item["record"].get("id") in gone
    if "relation" in item:
        relation = item["relation"]
        return relation.get("source_record_id") in gone or relation.get("target_record_id") in gone
    return False


@contextmanager
def secure_delete() -> Iterator[None]:
    """SQLite's secure_delete on Django's connection for the block: the rows it deletes or
    rewrites are zeroed in the file's pages, not left in free space (other databases: nothing)."""
    sqlite = connection.vendor == "sqlite"
    if sqlite:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA secure_delete = ON")
    try:
        yield
    finally:
        if sqlite:
            with connection.cursor() as cursor:
                cursor.execute("PRAGMA secure_delete = OFF")


def scrub_django_database() -> dict[str, Any]:
    """Django's database file without copies of rows an erasure or redaction rewrote: SQLite's
    file is rewritten (VACUUM) and its write-ahead log, if any, emptied. Not inside a
    transaction (a test's, or a request's): then it says it could not. PostgreSQL and Oracle
    keep dead rows until their own vacuum or undo retention (docs/governance.md)."""
    if connection.vendor != "sqlite":
        return {"vendor": connection.vendor, "vacuumed": False}
    if connection.in_atomic_block:
        return {"vendor": "sqlite", "vacuumed": False, "reason": "inside a transaction"}
    with connection.cursor() as cursor:
        cursor.execute("VACUUM")
        cursor.execute("PRAGMA journal_mode")
        (mode,) = cursor.fetchone()
        if str(mode).lower() == "wal":
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return {"vendor": "sqlite", "vacuumed": True}


def _as_dict(report: Any) -> dict[str, Any]:
    return {name: getattr(report, name) for name in report.__dataclass_fields__}
