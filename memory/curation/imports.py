"""An import of an oam-export file as one bulk change (the dashboard's import jobs, memory.curation.import_jobs,
and `manage.py oam_import` --as: each batch restored and its new objects recorded as creations)."""

from __future__ import annotations

from typing import Any

from memory.curation.recording import Recorder
from memory.engine import (
    DEFAULT_IMPORT_BATCH,
    MEMORY_TYPES,
    ImportReport,
    Snapshot,
    import_export,
    record_to_json,
    relation_to_json,
    thread_to_json,
)
from memory.models import Action, BulkChange, CurationEntry, ObjectKind
from memory.text import plural


class ImportWrites(Recorder):
    """Imports of export files."""

    def import_export(
        self, lines: Any, *, summary: str, batch_size: int = DEFAULT_IMPORT_BATCH, progress: Any = None
    ) -> tuple[ImportReport, BulkChange | None]:
        """Import an oam-export file (memory.engine.transfer.import_export, a transaction per
        batch) as one bulk change: each batch's new objects are recorded as creations, so that the
        history lists the import as one change and `revert_bulk` undoes it in one step. A thread
        stands for its messages, images and memories; a link for itself only when neither end came
        with the import (deleting an end deletes its links). What the store already held is
        skipped, and recorded nothing: an import that imported nothing (every line already in the
        store) leaves no bulk change in the history, and its change is None."""
        with self.bulk(summary) as change:
            report = import_export(_ImportRecorder(self), lines, batch_size=batch_size, progress=progress)
        restored = report.restored
        if not any(restored.values()) and not CurationEntry.with_pending.filter(bulk=change).exists():
            change.delete()
            return report, None
        change.summary = (
            f"{summary}: {plural(restored['threads'], 'thread')}, {plural(restored['records'], 'record')}, "
            f"{plural(restored['relations'], 'link')}"
            + (f" ({len(report.skipped)} already there, skipped)" if report.skipped else "")
        )[:300]
        change.save(update_fields=["summary"])
        return report, change


RECORD_KINDS = {"message": ObjectKind.MESSAGE, "image": ObjectKind.IMAGE, "user_profile": ObjectKind.USER}
RECORD_KINDS |= {"agent_profile": ObjectKind.AGENT} | {memory_type: ObjectKind.MEMORY for memory_type in MEMORY_TYPES}


class _ImportRecorder:
    """What Curation.import_export hands the engine's import as its target: restores each batch
    into the store, then records the objects the batch created (one bulk insert of entries per
    batch, into the import's bulk change)."""

    def __init__(self, curation: ImportWrites) -> None:
        self.curation = curation
        self.imported: set[str] = set()  # threads and records this import created (any batch)
        # What the engine's import checks each line against (memory.engine.transfer.ImportRules).
        self.store = curation.agent_memory.store
        self.image_input_limit_config = curation.agent_memory.image_input_limit_config

    def restore(self, snapshot: Snapshot, **options: Any) -> Any:
        with self.curation._recorded():
            return self._restore(snapshot, **options)

    def _restore(self, snapshot: Snapshot, **options: Any) -> Any:
        report = self.curation.agent_memory.restore(snapshot, **options)
        skipped = {(kind, object_id) for kind, object_id, _ in report.skipped}
        entries = []
        for thread in snapshot.threads:
            if ("thread", thread.id) not in skipped:
                self.imported.add(thread.id)
                entries.append(self._created(ObjectKind.THREAD, thread.id, thread_to_json(thread), thread.id))
        for record in snapshot.records:
            if ("record", record.id) in skipped:
                continue
            thread_id = getattr(record, "thread_id", None)  # profiles have none
            covered = thread_id in self.imported  # deleting its thread deletes it
            self.imported.add(record.id)
            if not covered:
                kind = RECORD_KINDS.get(record.record_type, ObjectKind.MEMORY)
                entries.append(self._created(kind, record.id, record_to_json(record), thread_id))
        for relation in snapshot.relations:
            ends = {relation.source_record_id, relation.target_record_id}
            if ("relation", relation.id) not in skipped and not ends & self.imported:
                entries.append(self._created(ObjectKind.LINK, relation.id, relation_to_json(relation), None))
        self.curation._pending.extend(entries)
        return report

    def _created(self, kind: str, object_id: str, after: Any, thread_id: str | None) -> CurationEntry:
        return CurationEntry(
            **self.curation.actor.authorship(),
            object_kind=kind,
            object_id=object_id,
            thread_id=thread_id or "",
            action=Action.CREATE,
            summary=f"Imported the {kind}",
            after=after,
            bulk=self.curation._bulk,
        )
