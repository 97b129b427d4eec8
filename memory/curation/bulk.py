"""Bulk changes: many memories (or messages) changed as one bulk change, BULK_BATCH records per
store transaction, a record changed since the preview skipped and reported; and the purge of
expired records, recorded so that it can be undone."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.curation.recording import Recorder, recorded
from memory.curation.values import describe_snapshot, edited, unchanged_since
from memory.engine import Snapshot
from memory.models import Action, BulkChange, ObjectKind
from memory.text import plural

BULK_BATCH = 500
"""Records a bulk change writes per transaction."""


class BulkWrites(Recorder):
    """Bulk changes."""

    def bulk_update_memories(self, changes: Sequence[tuple[Any, dict[str, Any]]], summary: str) -> BulkOutcome:
        """Update many memories as one bulk change: each (the memory as it was seen, the fields
        to write), one history entry each, like `update_memory` but writing exactly the fields
        given (a bulk status change writes the flag it previewed). The write expects the version
        seen, so the memory seen is the one changed; a memory changed or deleted since is
        skipped and reported, never overwritten."""

        def update(before: Any, fields: dict[str, Any]) -> None:
            self.agent_memory.update_memory(before.id, expected_version=before.version, **fields)
            after = self.agent_memory.get_memory(before.id)
            self._updated(ObjectKind.MEMORY, before.id, before, after, edited(after.record_type, before, after))

        return self._in_batches(summary, changes, update)

    def bulk_delete_memories(self, chosen: Sequence[tuple[str, int]], summary: str) -> BulkOutcome:
        """Delete many memories (each with its links) as one bulk change; each (id, version seen)."""

        def delete(memory_id: str, version: int) -> None:
            self.delete_memory(memory_id, version=version)  # refused inside the delete when changed

        return self._in_batches(summary, chosen, delete)

    def bulk_delete_messages(self, thread_id: str, chosen: Sequence[tuple[str, int]], summary: str) -> BulkOutcome:
        """Delete many messages of a thread (each with its images) as one bulk change; each
        (id, version seen)."""

        def delete(message_id: str, version: int) -> None:
            self.delete_message(thread_id, message_id, version=version)  # refused inside the delete when changed

        return self._in_batches(summary, chosen, delete)

    def mark_duplicates(self, keep_id: str, chosen: Sequence[tuple[str, int]], summary: str) -> BulkOutcome:
        """Link each chosen memory as a duplicate of the kept one, as one bulk change. The kept
        memory is each `duplicates` link's source (the preferred copy, unchanged); the others are
        targets, which the link makes invalid (spec: a lifecycle link retires its target)."""
        keep = self.agent_memory.get_memory(keep_id)

        def link(memory_id: str, version: int) -> None:
            target = unchanged_since(self.agent_memory.get_memory(memory_id), version)
            self._linked(
                self.agent_memory.link_records(keep.id, keep.record_type, target.id, target.record_type, "duplicates")
            )

        return self._in_batches(summary, chosen, link)

    def _in_batches(self, summary: str, items: Sequence[tuple[Any, ...]], change: Callable[..., None]) -> BulkOutcome:
        """Apply `change(*item)` to every item inside one bulk change; an item whose record
        changed or went since the preview, or that the store refuses now (linked meanwhile, metadata
        grown over the limits: a ValueError before anything of it is written), is skipped and
        reported, and the others are done."""
        with self.bulk(summary) as bulk_change:
            failed = self._batched(items, lambda item: change(*item), (ValueError, KeyError))
        skipped = [(getattr(item[0], "id", item[0]), reason) for item, reason in failed]
        done = len(items) - len(skipped)
        if not done:
            bulk_change.delete()
            return BulkOutcome(None, 0, skipped)
        if skipped:
            bulk_change.summary = f"{summary} ({plural(len(skipped), 'record')} skipped)"[:300]
            bulk_change.save(update_fields=["summary"])
        return BulkOutcome(bulk_change, done, skipped)

    def _batched(
        self, items: Sequence[Any], change: Callable[[Any], object], refused: tuple[type[Exception], ...]
    ) -> list[tuple[Any, str]]:
        """Apply `change(item)` to each item, BULK_BATCH at a time: each batch is one transaction
        of the store, its history entries recorded in two phases around its commit (`_recorded`), so that a batch that
        fails is neither stored nor recorded while the batches before it stay, recorded, and a
        batch costs one commit of each, not one per record; its history entries are written
        together at its end. An item whose change raises one of
        `refused` (before it wrote anything) is left as it is: (item, the reason) in the answer."""
        failed: list[tuple[Any, str]] = []
        for start in range(0, len(items), BULK_BATCH):
            with self._recorded():
                for item in items[start : start + BULK_BATCH]:
                    try:
                        change(item)
                    except refused as error:
                        failed.append((item, str(error.args[0]) if error.args else str(error)))
        return failed

    @recorded
    def purge_expired(self) -> Purge:
        """Delete every expired record (AgentMemory.purge_expired), so that it can be undone: what
        will go is read first (one snapshot, expired records included), then purged, and recorded
        as one bulk change with an entry per record (a message with its images, a memory with its
        links), which `revert_bulk` puts back exactly as it was: still expired, hidden from every
        read, awaiting the next purge. A record that expired between the snapshot and the purge
        went without a copy: `unsaved` counts those (the summary says so). Nothing expired:
        nothing is recorded."""
        expired = [(record.record_type, record.id) for record in self.agent_memory.list_expired(limit=None)]
        snapshot = self.agent_memory.snapshot(record_ids=expired) if expired else Snapshot()  # no ids: the whole store
        groups = purge_groups(snapshot)
        with self.bulk(f"Purged {plural(len(snapshot.records), 'expired record')}") as change:
            purged = self.agent_memory.purge_expired()
            for record, group in groups:
                kind = PURGED_KINDS.get(record.record_type, ObjectKind.MEMORY)
                went = describe_snapshot(group) if kind == ObjectKind.MESSAGE else plural(len(group.relations), "link")
                self._record(
                    kind,
                    record.id,
                    Action.DELETE,
                    f"Purged the expired {record.record_type} (with {went})",
                    before=group.to_json(),
                    thread_id=getattr(record, "thread_id", None),
                )
            unsaved = max(0, purged - len(snapshot.records))
            if unsaved:
                change.summary = (
                    f"Purged {plural(purged, 'expired record')} ({unsaved} expired during the purge and "
                    "cannot be brought back)"
                )[:300]
                change.save(update_fields=["summary"])
        if not purged and not groups:
            change.delete()
            return Purge(None, 0, 0)
        return Purge(change, purged, unsaved)


@dataclass(frozen=True)
class BulkOutcome:
    """What a bulk action did: its bulk change (None when nothing was left to change), how many
    records it changed, and the ids it skipped, each with the reason."""

    change: BulkChange | None
    done: int
    skipped: list[tuple[str, str]] = field(default_factory=list)


PURGED_KINDS = {"message": ObjectKind.MESSAGE, "image": ObjectKind.IMAGE}
"""The history's kind of a purged record (every other expiring type is a memory)."""


@dataclass(frozen=True)
class Purge:
    """What a purge did: its bulk change (None when nothing had expired), how many records went,
    and how many of them expired after the snapshot and so cannot be put back."""

    change: BulkChange | None
    purged: int
    unsaved: int


def purge_groups(snapshot: Snapshot) -> list[tuple[Any, Snapshot]]:
    """A purge's snapshot split per record, each a snapshot that restores on its own: a message
    with its images, a memory with its links, a standalone image. A link between two purged
    memories goes with the first of them, whose entry is undone last (revert_bulk undoes the
    newest first), when its other end is back."""
    messages = {record.id for record in snapshot.records if record.record_type == "message"}
    groups: dict[tuple[str, str], tuple[Any, Snapshot]] = {}
    for record in snapshot.records:
        if not (record.record_type == "image" and getattr(record, "message_id", None) in messages):
            groups[(record.record_type, record.id)] = (record, Snapshot())
    for record in snapshot.records:
        key = (record.record_type, record.id)
        _, group = groups[("message", record.message_id)] if key not in groups else groups[key]
        group.records.append(record)
        if key in snapshot.stored:
            group.stored[key] = snapshot.stored[key]
    position = {key: index for index, key in enumerate(groups)}
    for relation in snapshot.relations:
        ends = [
            end
            for end in (
                (relation.source_record_type, relation.source_record_id),
                (relation.target_record_type, relation.target_record_id),
            )
            if end in groups
        ]
        if ends:
            groups[min(ends, key=position.__getitem__)][1].relations.append(relation)
    return list(groups.values())
