"""Writes of threads: create, edit the metadata, delete with everything in them, and the LLM's
summary refresh and memory extraction (recorded as their effects)."""

from __future__ import annotations

from typing import Any

from memory.curation.recording import CurationError, Recorder, recorded
from memory.curation.values import describe_snapshot, expecting, summarized_through, unchanged_since
from memory.engine import NOT_SET, record_to_json, thread_to_json
from memory.models import Action, CurationEntry, ObjectKind


class ThreadWrites(Recorder):
    """Threads' writes."""

    @recorded
    def create_thread(
        self,
        *,
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata: dict | None = None,
    ) -> CurationEntry:
        """A new thread, as the engine creates one (AgentMemory.create_thread: omitted ids are
        generated, None leaves the thread unscoped on that dimension). The engine hands back the
        stored thread when the id is taken; here a taken id is refused, and nothing is recorded."""
        if thread_id is not NOT_SET:
            try:
                self.agent_memory.get_thread_record(thread_id)
            except KeyError:
                pass
            else:
                raise CurationError(f"a thread with id {thread_id!r} already exists")
        thread = self.agent_memory.create_thread(
            thread_id=thread_id, user_id=user_id, agent_id=agent_id, metadata=metadata
        )
        after = self.agent_memory.get_thread_record(thread.thread_id)
        return self._record(
            ObjectKind.THREAD,
            after.id,
            Action.CREATE,
            "Created the thread",
            after=thread_to_json(after),
            thread_id=after.id,
        )

    @recorded
    def update_thread(self, thread_id: str, *, metadata: dict | None, version: int) -> CurationEntry | None:
        before = self.agent_memory.get_thread_record(thread_id)
        if metadata == before.metadata:
            unchanged_since(before, version)
            return None
        self.agent_memory.update_thread(thread_id, metadata=metadata, expected_version=version)
        return self._thread_updated(before, "Edited the thread's metadata")

    def _thread_updated(self, before: Any, summary: str) -> CurationEntry:
        """Record an update of a thread: `before` as it was read, and the thread as it is now."""
        after = self.agent_memory.get_thread_record(before.id)
        return self._record(
            ObjectKind.THREAD,
            before.id,
            Action.UPDATE,
            summary,
            thread_to_json(before),
            thread_to_json(after),
            thread_id=before.id,
        )

    @recorded
    def delete_thread(self, thread_id: str, *, version: int | None = None) -> CurationEntry:
        """Delete a thread with everything in it; `version` as in delete_memory (the thread's own
        version: its metadata and summary)."""
        snapshot = self.agent_memory.snapshot(thread_id=thread_id)
        if not snapshot.threads:
            raise KeyError(f"no thread {thread_id!r}")
        return self._delete(
            ObjectKind.THREAD,
            thread_id,
            snapshot,
            lambda: self.agent_memory.delete_thread(thread_id, **expecting(version)),
            f"Deleted the thread with {describe_snapshot(snapshot)}",
            thread_id=thread_id,
        )

    def refresh_summary(self, thread_id: str) -> CurationEntry | None:
        """Ask the thread's LLM to fold the messages since the last summary into it, with new
        topics, now. None, and no entry, when no message came since: nothing was asked or changed.
        The entry keeps the thread before and after, so that a revert can put back the summary,
        the topics and the messages they covered (_put_back_summary)."""
        before = self.agent_memory.get_thread_record(thread_id)
        if self.agent_memory.get_thread(thread_id).refresh_summary() is None:
            return None
        return self._thread_updated(before, "Refreshed the summary with the LLM")

    def _put_back_summary(self, thread_id: str, earlier: dict[str, Any], *, version: int) -> CurationEntry | None:
        """Write back the summary and topics of `earlier` (a thread's JSON form) with the messages
        they covered, so that the next refresh folds in the later ones again; None when the thread
        has them already."""
        before = self.agent_memory.get_thread_record(thread_id)
        wanted = (earlier.get("summary"), earlier.get("topics"), summarized_through(earlier.get("settings")))
        if (before.summary, before.topics, summarized_through(before.settings)) == wanted:
            unchanged_since(before, version)
            return None
        summary, topics, through = wanted
        self.agent_memory.get_thread(thread_id).set_summary(
            summary, topics, summarized_through=through, expected_version=version
        )
        return self._thread_updated(before, "Put back the thread's summary and topics")

    def extract_memories(self, thread_id: str) -> list[CurationEntry]:
        """Ask the thread's LLM for memories from the messages no extraction has covered yet; one
        history entry per memory it made (each can be undone on its own)."""
        created = self.agent_memory.get_thread(thread_id).run_memory_extraction()
        entries = []
        for memory_id in created:
            record = self.agent_memory.get_memory(memory_id)
            entries.append(
                self._record(
                    ObjectKind.MEMORY,
                    memory_id,
                    Action.CREATE,
                    f"Extracted a {record.record_type} from the thread with the LLM",
                    after=record_to_json(record),
                    thread_id=thread_id,
                )
            )
        return entries
