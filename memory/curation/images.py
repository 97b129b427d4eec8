"""Writes of images: upload (as a message part or a standalone record), edit, describe again with the LLM, delete."""

from __future__ import annotations

from typing import Any

from memory.curation.recording import CurationError, Recorder, recorded
from memory.curation.values import differences, edited, expecting, unchanged_since
from memory.engine import ImageContent, TextContent, record_to_json, thread_named
from memory.models import Action, CurationEntry, ObjectKind


class ImageWrites(Recorder):
    """Images' writes."""

    def add_image(
        self,
        thread_id: str | None,
        data: bytes,
        *,
        description: str,
        add_as: str,
        role: str = "user",
        text: str = "",
        metadata: dict | None = None,
        image_id: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> CurationEntry:
        """Add an uploaded image to a thread, as a new message with an image part or as a
        standalone image record (with its `metadata`); without a thread, as an image record of
        `user_id` and `agent_id` (each None: none). The engine checks the image against its
        limits before anything is stored. `image_id`: its id (default: a new one)."""
        if thread_id is None:
            if add_as == "message":
                raise CurationError("thread_id is needed: a message belongs to a thread")
            new_id = self.agent_memory.add_image(
                data,
                description=description or None,
                user_id=user_id,
                agent_id=agent_id,
                **({"metadata": metadata} if metadata is not None else {}),
                **({"image_id": image_id} if image_id else {}),
            )
            return self._image_added(new_id)
        try:
            thread_named(self.agent_memory.store, thread_id)
        except ValueError as error:
            raise CurationError(str(error)) from None
        thread = self.agent_memory.get_thread(thread_id)
        if add_as == "message":
            if metadata is not None:
                raise CurationError("metadata is an image record's: an image in a message has none of its own")
            parts: list[Any] = [TextContent(text=text)] if text else []
            parts.append(
                ImageContent(bytes=data, description=description or None, **({"id": image_id} if image_id else {}))
            )
            [message_id] = thread.add_messages([{"role": role, "content": parts}])
            after = self.agent_memory.get_message_record(thread_id, message_id)
            return self._record(
                ObjectKind.MESSAGE,
                message_id,
                Action.CREATE,
                "Added a message with an image",
                after=record_to_json(after),
                thread_id=thread_id,
            )
        scope = {name: value for name, value in (("user_id", user_id), ("agent_id", agent_id)) if value is not None}
        new_id = thread.add_image(
            data,
            description=description or None,
            **scope,
            **({"metadata": metadata} if metadata is not None else {}),
            **({"image_id": image_id} if image_id else {}),
        )
        return self._image_added(new_id)

    def _image_added(self, image_id: str) -> CurationEntry:
        after = self.agent_memory.get_image(image_id)
        return self._record(
            ObjectKind.IMAGE,
            image_id,
            Action.CREATE,
            "Added an image",
            after=record_to_json(after),
            thread_id=after.thread_id,
        )

    @recorded
    def update_image(self, image_id: str, *, version: int, **fields: Any) -> CurationEntry | None:
        """Edit an image's `description` and `metadata` (those given)."""
        before = self.agent_memory.get_image(image_id)
        changes = differences(before, fields)
        if not changes:
            unchanged_since(before, version)
            return None
        self.agent_memory.update_image(image_id, expected_version=version, **changes)
        after = self.agent_memory.get_image(image_id)
        return self._updated(ObjectKind.IMAGE, image_id, before, after, edited("image", before, after))

    def describe_image_again(self, image_id: str) -> CurationEntry:
        """Ask the LLM for a new caption (the engine writes it when the description is cleared)."""
        if self.agent_memory.llm is None:
            raise CurationError("describing images needs an LLM: set OAM_LLM_BASE_URL and OAM_LLM_MODEL")
        before = self.agent_memory.get_image(image_id)
        self.agent_memory.update_image(image_id, description=None)
        after = self.agent_memory.get_image(image_id)
        return self._updated(ObjectKind.IMAGE, image_id, before, after, "Asked the LLM to describe the image again")

    @recorded
    def delete_image(self, image_id: str, *, version: int | None = None) -> CurationEntry:
        """Delete a standalone image; `version` as in delete_memory."""
        record = self.agent_memory.get_image(image_id)
        if record.message_id is not None:
            raise CurationError(
                f"this image is part of message {record.message_id}; edit or delete the message instead"
            )
        snapshot = self.agent_memory.snapshot(record_ids=[("image", image_id)])
        return self._delete(
            ObjectKind.IMAGE,
            image_id,
            snapshot,
            lambda: self.agent_memory.delete_image(image_id, **expecting(version)),
            "Deleted the image",
            thread_id=record.thread_id,
        )
