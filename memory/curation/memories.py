"""Writes of memories: create (in an existing thread), edit (values, status, lifetime), delete with their links."""

from __future__ import annotations

from typing import Any

from memory.curation.recording import CurationError, Recorder, recorded
from memory.curation.values import differences, edited, expecting, unchanged_since
from memory.engine import record_to_json, thread_named
from memory.models import Action, CurationEntry, ObjectKind
from memory.text import plural, quoted


class MemoryWrites(Recorder):
    """Memories' writes."""

    @recorded
    def create_memory(self, **fields: Any) -> CurationEntry:
        """A new memory from the memory form's fields (empty ones left to the engine's defaults).
        Its thread must exist (the engine would make a bare one), and gives its user and agent
        when none is given."""
        given = {name: value for name, value in fields.items() if value not in (None, "")}
        if "thread_id" in given:
            try:
                thread = thread_named(self.agent_memory.store, given["thread_id"])
            except ValueError as error:
                raise CurationError(str(error)) from None
            given.setdefault("user_id", thread.user_id)
            given.setdefault("agent_id", thread.agent_id)
        memory_id = self.agent_memory.add_memory(autonomous_linking=False, **given)  # people link by hand
        after = self.agent_memory.get_memory(memory_id)
        return self._record(
            ObjectKind.MEMORY,
            memory_id,
            Action.CREATE,
            f"Created a {after.record_type}",
            after=record_to_json(after),
            thread_id=after.thread_id,
        )

    @recorded
    def update_memory(self, memory_id: str, *, version: int, **fields: Any) -> CurationEntry | None:
        """Edit a memory: `content`, `memory_type`, `user_id`, `agent_id`, `metadata`, `status`,
        `timestamp` and its lifetime: `expires_at` (an instant, or None for never), or
        `ttl_days` (a new lifetime counted from creation), or `never_expires`.

        An unchanged status is not written: a memory shown invalid because a link retires it
        keeps its own flag as it was.
        """
        before = self.agent_memory.get_memory(memory_id)
        ttl_days = fields.pop("ttl_days", None)
        if fields.pop("never_expires", False):
            fields["expires_at"] = None
        changes = differences(before, fields)
        if ttl_days:
            changes["ttl_days"] = ttl_days
        if not changes:
            unchanged_since(before, version)
            return None
        if changes.get("status") == "valid":
            self._refuse_while_retired(memory_id)
        self.agent_memory.update_memory(memory_id, expected_version=version, **changes)
        after = self.agent_memory.get_memory(memory_id)
        return self._updated(ObjectKind.MEMORY, memory_id, before, after, edited(after.record_type, before, after))

    def _refuse_while_retired(self, memory_id: str) -> None:
        """A memory that a lifecycle link retires (supersedes, refines, duplicates) stays invalid
        whatever its own flag says (D2): setting it valid would save nothing anyone could see, so
        it is refused with what would work instead."""
        retired_by = self.agent_memory.lifecycle([memory_id])[memory_id].retired_by
        if not retired_by:
            return
        link = self.agent_memory.get_relation(retired_by[0])
        try:
            source = quoted(self.agent_memory.get_memory(link.source_record_id).content)
        except KeyError:
            source = link.source_record_id
        others = f" and {plural(len(retired_by) - 1, 'other link')}" if len(retired_by) > 1 else ""
        raise CurationError(
            f"status stays invalid while a link retires this memory: {source} {link.relation_type} it{others}. "
            "Delete that link, or change its type to one that does not retire (supports, contradicts), "
            "and the memory is valid again."
        )

    @recorded
    def delete_memory(self, memory_id: str, *, version: int | None = None) -> CurationEntry:
        """Delete a memory with its links. With `version` (the one the person saw) the engine
        refuses it (StaleVersionError) when the memory changed since, inside the delete."""
        record = self.agent_memory.get_memory(memory_id)
        snapshot = self.agent_memory.snapshot(record_ids=[(record.record_type, memory_id)])
        links = len(snapshot.relations)
        return self._delete(
            ObjectKind.MEMORY,
            memory_id,
            snapshot,
            lambda: self.agent_memory.delete_memory(memory_id, **expecting(version)),
            f"Deleted the {record.record_type}" + (f" and its {plural(links, 'link')}" if links else ""),
            thread_id=record.thread_id,
        )
