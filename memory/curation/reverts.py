"""Reverts: undo one recorded change (restore what a delete removed, delete what a create added,
write back what an update replaced) or a whole bulk change, and what an undo would do, said before."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory.curation.recording import CurationError, Recorder, recorded
from memory.curation.values import PROFILE_KINDS, StatusChange, only_a_profile
from memory.engine import Snapshot, record_to_json, relation_to_json, thread_to_json
from memory.models import Action, BulkChange, CurationEntry, ObjectKind
from memory.text import plural

REVERTIBLE = {
    ObjectKind.THREAD: {"metadata": "metadata", "summary": "summary", "topics": "topics"},
    ObjectKind.MESSAGE: {"content": "content", "role": "role", "metadata": "metadata", "timestamp": "timestamp"},
    ObjectKind.MEMORY: {
        "content": "content",
        "record_type": "memory_type",
        "user_id": "user_id",
        "agent_id": "agent_id",
        "metadata": "metadata",
        "status": "status",
        "timestamp": "timestamp",
        "expires_at": "expires_at",
    },
    ObjectKind.IMAGE: {"content": "description", "metadata": "metadata"},
    ObjectKind.USER: {"content": "information"},
    ObjectKind.AGENT: {"content": "information"},
    ObjectKind.LINK: {
        "relation_type": "relation_type",
        "opposite_relation_type": "opposite_relation_type",
        "metadata": "metadata",
    },
}
"""Per kind of object: the fields (in the JSON form) an update can change, and the argument of
the curation call that writes each."""


ERASED_REFUSAL = "this change was erased with the person it belonged to: nothing of it is kept, so it cannot be undone"
"""Why a tombstone of the history (memory.curation.erasure) cannot be reverted or restored."""


SUMMARY_FIELDS = {"summary", "topics"}
"""A thread's fields an LLM summary refresh changes: its revert puts them back together, with the
messages they covered."""


class RevertWrites(Recorder):
    """Reverts of recorded changes."""

    @recorded
    def revert(self, entry: CurationEntry) -> CurationEntry:
        """Undo one recorded change: restore what a delete removed, delete what a create added,
        write back the values an update replaced (those it changed, no others). A tombstone (its
        content erased with a person) cannot be undone: nothing of it is kept."""
        if entry.erased:
            raise CurationError(ERASED_REFUSAL)
        if entry.action in (Action.DELETE, Action.UNLINK):
            undone = self._restore(entry)
        elif entry.action in (Action.CREATE, Action.RESTORE, Action.LINK):
            undone = self._delete_for_revert(entry)
        else:
            undone = self._write_back(entry)
            undone.summary = f"Reverted: {entry.summary}"[:300]
        undone.reverts = entry
        if undone.pk is not None:  # else it is written with its batch, as it is now
            undone.save(update_fields=["summary", "reverts"])
        return undone

    def revert_bulk(self, change: BulkChange) -> BulkUndo:
        """Undo a bulk change in one step: revert its entries newest first, as one new bulk change.

        Entries already reverted one by one are skipped. An entry that cannot be reverted (its
        record was changed or deleted since in a way that blocks it) does not stop the others: it is
        reported in `failed`, and the undo holds everything else.
        """
        if undone_by(change) is not None:
            raise CurationError("this bulk change is already undone")
        entries = list(change.entries.exclude(reverted_by__isnull=False).order_by("-at", "-id"))
        if not entries:
            raise CurationError("nothing in this bulk change is left to undo")
        with self.bulk(f"Undone: {change.summary}", reverts=change) as undo:
            failed = self._batched(entries, self.revert, (CurationError, KeyError, ValueError))
        if len(failed) == len(entries):
            undo.delete()
            raise CurationError(f"none of its changes could be undone: {failed[0][1]}")
        return BulkUndo(undo, failed)

    def _restore(self, entry: CurationEntry) -> CurationEntry:
        if entry.thread_id and entry.object_kind != ObjectKind.THREAD:
            try:
                self.agent_memory.get_thread_record(entry.thread_id)
            except KeyError:  # a restore would bring the thread back bare, without its metadata
                raise CurationError(f"its thread {entry.thread_id} is deleted: restore the thread first") from None
        report = self.agent_memory.restore(Snapshot.from_json(entry.before))
        if entry.object_kind == ObjectKind.LINK and not report.restored.get("relations"):
            raise CurationError("a memory this link joined is gone, so the link cannot come back")
        skipped = f"; skipped {plural(len(report.skipped), 'link')} to memories gone since" if report.skipped else ""
        return self._record(
            entry.object_kind,
            entry.object_id,
            Action.RESTORE,
            f"Restored the {entry.object_kind} deleted {entry.at:%Y-%m-%d %H:%M} UTC{skipped}",
            after=entry.before,
            thread_id=entry.thread_id,
        )

    def _delete_for_revert(self, entry: CurationEntry) -> CurationEntry:
        kind, object_id = entry.object_kind, entry.object_id
        if kind == ObjectKind.MEMORY:
            return self.delete_memory(object_id)
        if kind == ObjectKind.MESSAGE:
            return self.delete_message(entry.thread_id, object_id)
        if kind == ObjectKind.IMAGE:
            return self.delete_image(object_id)
        if kind == ObjectKind.THREAD:
            return self.delete_thread(object_id)
        if kind in PROFILE_KINDS and only_a_profile(entry):
            return self.delete_profile(kind, object_id)
        if kind in PROFILE_KINDS:
            return self.delete_owner(kind, object_id)
        if kind == ObjectKind.LINK:
            return self.delete_link(object_id)
        raise CurationError(f"a {kind} cannot be reverted here")

    def revert_effects(self, entry: CurationEntry) -> list[StatusChange]:
        """What undoing a link change would do to memories' status, said before it is undone as
        the link forms say it: a link deleted again, brought back, or retyped back."""
        if entry.object_kind != ObjectKind.LINK:
            return []
        try:
            if entry.action == Action.UNLINK:
                [relation] = entry.before["relations"]
                return self.link_effects(add=(relation["target_record_id"], relation["relation_type"]))
            current = self.agent_memory.get_relation(entry.object_id)
            if entry.action == Action.UPDATE:
                return self.link_effects(add=(current.target_record_id, entry.before["relation_type"]), remove=current)
            return self.link_effects(remove=current)  # a link made (or brought back) is deleted
        except KeyError:  # the link or its memory is gone: the undo page says so when it is tried
            return []

    def reverted_values(self, entry: CurationEntry) -> dict[str, Any]:
        """What an update's revert writes: the fields the update changed, as they were before it
        (JSON names). Later changes to other fields are kept."""
        before, after = entry.before or {}, entry.after or {}
        return {name: before.get(name) for name in REVERTIBLE[entry.object_kind] if before.get(name) != after.get(name)}

    def current(self, entry: CurationEntry) -> Any:
        """The entry's object as it is now (KeyError when it is gone)."""
        kind, object_id = entry.object_kind, entry.object_id
        if kind == ObjectKind.THREAD:
            return self.agent_memory.get_thread_record(object_id)
        if kind == ObjectKind.MESSAGE:
            return self.agent_memory.get_message_record(entry.thread_id, object_id)
        if kind == ObjectKind.MEMORY:
            return self.agent_memory.get_memory(object_id)
        if kind == ObjectKind.IMAGE:
            return self.agent_memory.get_image(object_id)
        if kind in PROFILE_KINDS:
            profile = self.profile(kind, object_id)
            if profile is None:
                raise KeyError(f"no {kind} profile {object_id!r}")
            return profile
        if kind == ObjectKind.LINK:
            return self.agent_memory.get_relation(object_id)
        raise CurationError(f"a {kind} cannot be reverted here")

    def current_json(self, entry: CurationEntry) -> dict[str, Any]:
        """The entry's object as it is now, in the JSON form its entry keeps (KeyError when it is
        gone), to compare with the entry's values."""
        current = self.current(entry)
        if entry.object_kind == ObjectKind.THREAD:
            return thread_to_json(current)
        if entry.object_kind == ObjectKind.LINK:
            return relation_to_json(current)
        return record_to_json(current)

    def _write_back(self, entry: CurationEntry) -> CurationEntry:
        """Write an update's old values back, as a new update of the current record."""
        kind, object_id = entry.object_kind, entry.object_id
        values = {REVERTIBLE[kind][name]: value for name, value in self.reverted_values(entry).items()}
        if not values:
            raise CurationError("this change changed nothing that can be written back")
        try:
            current = self.current(entry)
        except KeyError:
            raise CurationError(f"this {kind} no longer exists; restore it from its deletion first") from None
        if kind == ObjectKind.THREAD and values.keys() & SUMMARY_FIELDS:
            undone = self._put_back_summary(object_id, entry.before, version=current.version)
        elif kind == ObjectKind.THREAD:
            undone = self.update_thread(object_id, version=current.version, **values)
        elif kind == ObjectKind.MESSAGE:
            undone = self.update_message(entry.thread_id, object_id, version=current.version, **values)
        elif kind == ObjectKind.MEMORY:
            undone = self.update_memory(object_id, version=current.version, **values)
        elif kind == ObjectKind.IMAGE:
            undone = self.update_image(object_id, version=current.version, **values)
        elif kind == ObjectKind.LINK:
            undone = self.update_link(object_id, version=current.version, **values)
        else:
            undone = self.save_profile(kind, object_id, version=current.version, **values)
        if undone is None:
            raise CurationError(f"the {kind} already has the values from before this change")
        return undone


@dataclass(frozen=True)
class BulkUndo:
    """The bulk change that undid another, and the entries of that one it could not revert, each
    with the reason."""

    change: BulkChange
    failed: list[tuple[CurationEntry, str]] = field(default_factory=list)


def undone_by(change: BulkChange) -> BulkChange | None:
    """The bulk change that undid this one and still stands (not undone itself), if any."""
    for undo in change.reverted_by.order_by("-at", "-id"):
        if undone_by(undo) is None:
            return undo
    return None
