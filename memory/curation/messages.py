"""Writes of messages: append as the agent would, edit (keeping image parts), delete with their images."""

from __future__ import annotations

from typing import Any

from memory.curation.recording import Recorder, recorded
from memory.curation.values import content_keeping_images, differences, edited, expecting, unchanged_since
from memory.engine import record_to_json
from memory.models import Action, CurationEntry, ObjectKind
from memory.text import plural


class MessageWrites(Recorder):
    """Messages' writes."""

    def add_messages(self, thread_id: str, messages: list[Any]) -> list[CurationEntry]:
        """Append messages to a thread as its agent would (Thread.add_messages: mappings with
        `role` and `content`, a string or text and image parts, and optional `id`, `timestamp`
        and `metadata`). The engine checks them all, images included, before it stores any, and
        then runs the thread's LLM work as it does for the agent. One entry per message, so that
        each can be undone on its own."""
        thread = self.agent_memory.get_thread(thread_id)
        message_ids = thread.add_messages(messages)
        entries = []
        for message_id in message_ids:
            after = self.agent_memory.get_message_record(thread_id, message_id)
            images = sum(1 for part in after.parts or () if part.get("type") == "image")
            entries.append(
                self._record(
                    ObjectKind.MESSAGE,
                    message_id,
                    Action.CREATE,
                    "Added a message" + (f" with {plural(images, 'image')}" if images else ""),
                    after=record_to_json(after),
                    thread_id=thread_id,
                )
            )
        return entries

    def update_message(self, thread_id: str, message_id: str, *, version: int, **fields: Any) -> CurationEntry | None:
        """Edit a message's `content`, `role`, `metadata` and `timestamp` (those given). A message
        with image parts keeps them: the new text replaces its text parts, the images stay."""
        thread = self.agent_memory.get_thread(thread_id)
        before = self.agent_memory.get_message_record(thread_id, message_id)
        changes = differences(before, fields)
        if not changes:
            unchanged_since(before, version)
            return None
        if "content" in changes:
            changes["content"] = content_keeping_images(before, changes["content"])
        thread.update_message(message_id, expected_version=version, **changes)
        after = self.agent_memory.get_message_record(thread_id, message_id)
        return self._updated(ObjectKind.MESSAGE, message_id, before, after, edited("message", before, after))

    @recorded
    def delete_message(self, thread_id: str, message_id: str, *, version: int | None = None) -> CurationEntry:
        """Delete a message with its images; `version` as in delete_memory."""
        thread = self.agent_memory.get_thread(thread_id)
        self.agent_memory.get_message_record(thread_id, message_id)  # KeyError when it is not this thread's
        snapshot = self.agent_memory.snapshot(record_ids=[("message", message_id)])
        images = sum(1 for record in snapshot.records if record.record_type == "image")
        return self._delete(
            ObjectKind.MESSAGE,
            message_id,
            snapshot,
            lambda: thread.delete_message(message_id, **expecting(version)),
            "Deleted the message" + (f" and its {plural(images, 'image')}" if images else ""),
            thread_id=thread_id,
        )
