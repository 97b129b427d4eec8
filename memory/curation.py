"""The one place that changes the memory store on a person's behalf, and records that it did.

Every change goes through the engine (which re-embeds, recounts lifecycles, cascades) and is then
written to the curation history (`CurationEntry`) with who made it and the object's values before
and after, as the engine's JSON record form (memory.engine.snapshot). A delete keeps the engine's
snapshot of everything that went with it, so that `revert` can restore it with its original ids
and links; an update keeps the old values, so that `revert` can write them back. A revert is
itself a recorded change.

Views (and API views) call this module for every write and never write to the engine themselves.
Edits carry the version of the record they were opened on: the engine refuses them
(StaleVersionError) when someone changed the record meanwhile, so no update is lost.

The store and Django's database are two databases: the engine's write commits first, then its
history entry. If writing the entry failed after the store changed, the change would be
unrecorded; it never happens the other way round (an entry for a change that did not happen).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from memory.engine import NOT_SET, AgentMemory, ImageContent, TextContent
from memory.engine.snapshot import Snapshot, record_to_json, thread_to_json
from memory.models import Action, CurationEntry, ObjectKind

PROFILE_KINDS = {ObjectKind.USER: "user_id", ObjectKind.AGENT: "agent_id"}


class CurationError(ValueError):
    """A change the store cannot make as asked (the record is gone, or the request contradicts
    the store), with a message for the person who asked."""


@dataclass(frozen=True)
class Actor:
    """Who makes a change, and through what (the dashboard, or later an API token)."""

    user: AbstractBaseUser | None
    via: str = "dashboard"

    @property
    def name(self) -> str:
        return self.user.get_username() if self.user is not None else "system"


ENGINE_ARGUMENTS = {
    "text": "content",
    "contents": "content",
    "user_ids": "user_id",
    "agent_ids": "agent_id",
    "thread_ids": "thread_id",
    "roles": "role",
    "timestamps": "timestamp",
}
"""Engine argument names that differ from the form field they come from (the store's batch names)."""


def field_errors(error: ValueError, fields: Any) -> tuple[str | None, str]:
    """The form field an engine ValueError names ("metadata must be a dict…"), and its message.

    The engine names the argument at the start of its messages (a batch argument with its index,
    "contents[0] has…"); an argument that is no field of the form (or no argument at all) gives
    None: the error belongs to the form as a whole.
    """
    message = str(error)
    match = re.match(r"(?:the )?([a-z_]+)(?:\[\d+\])?\b", message)
    if match:
        name = ENGINE_ARGUMENTS.get(match.group(1), match.group(1))
        if name in fields:
            return name, message
    return None, message


class Curation:
    """The changes one actor makes, through one AgentMemory, each recorded in the history."""

    def __init__(self, agent_memory: AgentMemory, actor: Actor) -> None:
        self.memory = agent_memory
        self.actor = actor

    # --- recording ----------------------------------------------------------------------------

    def _record(
        self,
        kind: str,
        object_id: str,
        action: str,
        summary: str,
        before: Any = None,
        after: Any = None,
        *,
        thread_id: str | None = None,
        reverts: CurationEntry | None = None,
    ) -> CurationEntry:
        with transaction.atomic():
            return CurationEntry.objects.create(
                actor=self.actor.user,
                actor_name=self.actor.name,
                via=self.actor.via,
                object_kind=kind,
                object_id=object_id,
                thread_id=thread_id or "",
                action=action,
                summary=summary[:300],
                before=before,
                after=after,
                reverts=reverts,
            )

    def _updated(self, kind: str, object_id: str, before: Any, after: Any, summary: str) -> CurationEntry:
        """Record an update of a record (a message, memory or image) with both its versions."""
        return self._record(
            kind,
            object_id,
            Action.UPDATE,
            summary,
            record_to_json(before),
            record_to_json(after),
            thread_id=after.thread_id,
        )

    def _delete(self, kind: str, object_id: str, snapshot: Snapshot, delete: Any, summary: str, **extra: Any):
        """Delete through `delete()` and record the snapshot taken just before."""
        delete()
        return self._record(kind, object_id, Action.DELETE, summary, before=snapshot.to_json(), **extra)

    # --- threads ------------------------------------------------------------------------------

    def update_thread(self, thread_id: str, *, metadata: dict | None, version: int) -> CurationEntry:
        before = self.memory.get_thread_record(thread_id)
        self.memory.update_thread(thread_id, metadata=metadata, expected_version=version)
        after = self.memory.get_thread_record(thread_id)
        return self._record(
            ObjectKind.THREAD,
            thread_id,
            Action.UPDATE,
            "Edited the thread's metadata",
            thread_to_json(before),
            thread_to_json(after),
            thread_id=thread_id,
        )

    def delete_thread(self, thread_id: str) -> CurationEntry:
        snapshot = self.memory.snapshot(thread_id=thread_id)
        if not snapshot.threads:
            raise KeyError(f"no thread {thread_id!r}")
        return self._delete(
            ObjectKind.THREAD,
            thread_id,
            snapshot,
            lambda: self.memory.delete_thread(thread_id),
            f"Deleted the thread with {describe_snapshot(snapshot)}",
            thread_id=thread_id,
        )

    # --- messages -----------------------------------------------------------------------------

    def update_message(
        self,
        thread_id: str,
        message_id: str,
        *,
        content: str,
        role: str,
        metadata: dict | None,
        timestamp: str | None,
        version: int,
    ) -> CurationEntry:
        """Edit a message's text, role, metadata and time. A message with image parts keeps them:
        the new text replaces its text parts, the images stay where they were."""
        thread = self.memory.get_thread(thread_id)
        before = self.memory.get_message_record(thread_id, message_id)
        changes: dict[str, Any] = {"expected_version": version}
        if metadata != before.metadata:
            changes["metadata"] = metadata
        if content != before.content:
            changes["content"] = content_keeping_images(before, content)
        if role != before.role:
            changes["role"] = role
        if timestamp is not None and not same_time(timestamp, before.timestamp):
            changes["timestamp"] = timestamp
        thread.update_message(message_id, **changes)
        after = self.memory.get_message_record(thread_id, message_id)
        return self._updated(ObjectKind.MESSAGE, message_id, before, after, edited("message", before, after))

    def delete_message(self, thread_id: str, message_id: str) -> CurationEntry:
        thread = self.memory.get_thread(thread_id)
        self.memory.get_message_record(thread_id, message_id)  # KeyError when it is not this thread's
        snapshot = self.memory.snapshot(record_ids=[("message", message_id)])
        images = sum(1 for record in snapshot.records if record.record_type == "image")
        return self._delete(
            ObjectKind.MESSAGE,
            message_id,
            snapshot,
            lambda: thread.delete_message(message_id),
            "Deleted the message" + (f" and its {plural(images, 'image')}" if images else ""),
            thread_id=thread_id,
        )

    # --- memories -----------------------------------------------------------------------------

    def create_memory(self, **fields: Any) -> CurationEntry:
        ttl_days = fields.pop("ttl_days", None)
        timestamp = fields.pop("timestamp", None)
        memory_id = self.memory.add_memory(
            autonomous_linking=False,  # a person's memory is linked by people
            ttl_days=ttl_days if ttl_days else NOT_SET,
            timestamp=timestamp if timestamp else NOT_SET,
            **fields,
        )
        after = self.memory.get_memory(memory_id)
        return self._record(
            ObjectKind.MEMORY,
            memory_id,
            Action.CREATE,
            f"Created a {after.record_type}",
            after=record_to_json(after),
            thread_id=after.thread_id,
        )

    def update_memory(self, memory_id: str, *, version: int, **fields: Any) -> CurationEntry:
        """Edit a memory: content, type, scope, metadata, status, timestamp and lifetime
        (`ttl_days` sets a new one from creation; `never_expires` removes it; neither keeps it).

        Only what differs from the stored memory is sent to the engine: an unchanged text is not
        embedded again, and an unchanged status is not written as the memory's own flag (a
        memory shown invalid because a link retires it keeps its own flag as it was).
        """
        before = self.memory.get_memory(memory_id)
        fields["memory_type"] = fields.pop("memory_type", before.record_type)
        changes = {
            name: value
            for name, value in fields.items()
            if name not in ("ttl_days", "never_expires", "expires_at")
            and value != getattr(before, "record_type" if name == "memory_type" else name)
            and not (name == "timestamp" and (value is None or same_time(value, before.timestamp)))
        }
        if fields.get("never_expires"):
            changes["expires_at"] = None
        elif fields.get("ttl_days"):
            changes["ttl_days"] = fields["ttl_days"]
        elif "expires_at" in fields and fields["expires_at"] != before.expires_at:
            changes["expires_at"] = fields["expires_at"]
        self.memory.update_memory(memory_id, expected_version=version, **changes)
        after = self.memory.get_memory(memory_id)
        return self._updated(ObjectKind.MEMORY, memory_id, before, after, edited(after.record_type, before, after))

    def delete_memory(self, memory_id: str) -> CurationEntry:
        record = self.memory.get_memory(memory_id)
        snapshot = self.memory.snapshot(record_ids=[(record.record_type, memory_id)])
        links = len(snapshot.relations)
        return self._delete(
            ObjectKind.MEMORY,
            memory_id,
            snapshot,
            lambda: self.memory.delete_memory(memory_id),
            f"Deleted the {record.record_type}" + (f" and its {plural(links, 'link')}" if links else ""),
            thread_id=record.thread_id,
        )

    # --- images -------------------------------------------------------------------------------

    def add_image(
        self, thread_id: str, data: bytes, *, description: str, add_as: str, role: str, text: str
    ) -> CurationEntry:
        """Add an uploaded image to a thread, as a new message with an image part or as a
        standalone image record; the engine checks the image against its limits."""
        thread = self.memory.get_thread(thread_id)
        if add_as == "message":
            parts: list[Any] = [TextContent(text=text)] if text else []
            parts.append(ImageContent(bytes=data, description=description or None))
            [message_id] = thread.add_messages([{"role": role, "content": parts}])
            after = self.memory.get_message_record(thread_id, message_id)
            return self._record(
                ObjectKind.MESSAGE,
                message_id,
                Action.CREATE,
                "Added a message with an image",
                after=record_to_json(after),
                thread_id=thread_id,
            )
        image_id = thread.add_image(data, description=description or None)
        after = self.memory.get_image(image_id)
        return self._record(
            ObjectKind.IMAGE,
            image_id,
            Action.CREATE,
            "Added an image",
            after=record_to_json(after),
            thread_id=thread_id,
        )

    def update_image(self, image_id: str, *, description: str, metadata: dict | None, version: int) -> CurationEntry:
        before = self.memory.get_image(image_id)
        changes = {
            name: value
            for name, value, stored in (
                ("description", description, before.content),
                ("metadata", metadata, before.metadata),
            )
            if value != stored
        }
        self.memory.update_image(image_id, expected_version=version, **changes)
        after = self.memory.get_image(image_id)
        return self._updated(ObjectKind.IMAGE, image_id, before, after, edited("image", before, after))

    def describe_image_again(self, image_id: str) -> CurationEntry:
        """Ask the LLM for a new caption (the engine writes it when the description is cleared)."""
        if self.memory.llm is None:
            raise CurationError("describing images needs an LLM: set OAM_LLM_BASE_URL and OAM_LLM_MODEL")
        before = self.memory.get_image(image_id)
        self.memory.update_image(image_id, description=None)
        after = self.memory.get_image(image_id)
        return self._updated(ObjectKind.IMAGE, image_id, before, after, "Asked the LLM to describe the image again")

    def delete_image(self, image_id: str) -> CurationEntry:
        record = self.memory.get_image(image_id)
        if record.message_id is not None:
            raise CurationError(
                f"this image is part of message {record.message_id}; edit or delete the message instead"
            )
        snapshot = self.memory.snapshot(record_ids=[("image", image_id)])
        return self._delete(
            ObjectKind.IMAGE,
            image_id,
            snapshot,
            lambda: self.memory.delete_image(image_id),
            "Deleted the image",
            thread_id=record.thread_id,
        )

    # --- users and agents ---------------------------------------------------------------------

    def save_profile(self, kind: str, owner_id: str, information: str, version: int | None) -> CurationEntry:
        """Write a user's or agent's profile text; `version` is the profile's when it had one."""
        get, add = (
            (self.memory.get_user, self.memory.add_user)
            if kind == ObjectKind.USER
            else (self.memory.get_agent, self.memory.add_agent)
        )
        try:
            before = record_to_json(get(owner_id))
        except KeyError:
            before = None
        add(owner_id, information, expected_version=NOT_SET if version is None else version)
        after = record_to_json(get(owner_id))
        return self._record(
            kind,
            owner_id,
            Action.UPDATE if before else Action.CREATE,
            f"{'Edited' if before else 'Wrote'} the {kind}'s profile",
            before,
            after,
        )

    def delete_owner(self, kind: str, owner_id: str) -> CurationEntry:
        """Delete a user or agent with everything they own (profile, threads, records, links)."""
        scope = {PROFILE_KINDS[kind]: owner_id}
        snapshot = self.memory.snapshot(**scope)
        delete = self.memory.delete_user if kind == ObjectKind.USER else self.memory.delete_agent
        return self._delete(
            kind,
            owner_id,
            snapshot,
            lambda: delete(owner_id, cascade=True),
            f"Deleted the {kind} with {describe_snapshot(snapshot)}",
        )

    # --- history ------------------------------------------------------------------------------

    def revert(self, entry: CurationEntry) -> CurationEntry:
        """Undo one recorded change: restore what a delete removed, delete what a create added,
        write back the values an update replaced."""
        if entry.action in (Action.DELETE, Action.UNLINK):
            report = self.memory.restore(Snapshot.from_json(entry.before))
            skipped = f"; skipped {len(report.skipped)}" if report.skipped else ""
            return self._record(
                entry.object_kind,
                entry.object_id,
                Action.RESTORE,
                f"Restored the {entry.object_kind} deleted {entry.at:%Y-%m-%d %H:%M} UTC{skipped}",
                after=entry.before,
                thread_id=entry.thread_id,
                reverts=entry,
            )
        if entry.action in (Action.CREATE, Action.RESTORE, Action.LINK):
            undone = self._delete_for_revert(entry)
            undone.reverts = entry
            undone.save(update_fields=["reverts"])
            return undone
        return self._write_back(entry)

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
        if kind in PROFILE_KINDS:
            return self.delete_owner(kind, object_id)
        raise CurationError(f"a {kind} cannot be reverted here")

    def _write_back(self, entry: CurationEntry) -> CurationEntry:
        """Write an update's old values back, as a new update of the current record."""
        old, kind, object_id = entry.before, entry.object_kind, entry.object_id
        try:
            if kind == ObjectKind.THREAD:
                current = self.memory.get_thread_record(object_id)
                undone = self.update_thread(object_id, metadata=old.get("metadata"), version=current.version)
            elif kind == ObjectKind.MESSAGE:
                current = self.memory.get_message_record(entry.thread_id, object_id)
                undone = self.update_message(
                    entry.thread_id,
                    object_id,
                    content=old.get("content") or "",
                    role=old.get("role") or current.role,
                    metadata=old.get("metadata"),
                    timestamp=old.get("timestamp"),
                    version=current.version,
                )
            elif kind == ObjectKind.MEMORY:
                current = self.memory.get_memory(object_id)
                undone = self.update_memory(
                    object_id,
                    version=current.version,
                    content=old["content"],
                    memory_type=old["record_type"],
                    user_id=old.get("user_id"),
                    agent_id=old.get("agent_id"),
                    metadata=old.get("metadata"),
                    status=old["status"],
                    timestamp=old.get("timestamp"),
                    expires_at=old.get("expires_at"),
                )
            elif kind == ObjectKind.IMAGE:
                current = self.memory.get_image(object_id)
                undone = self.update_image(
                    object_id,
                    description=old.get("content") or "",
                    metadata=old.get("metadata"),
                    version=current.version,
                )
            elif kind in PROFILE_KINDS:
                undone = self.save_profile(kind, object_id, old.get("content") or "", None)
            else:
                raise CurationError(f"a {kind} cannot be reverted here")
        except KeyError:
            raise CurationError(
                f"this {kind} no longer exists; restore it from its deletion in the history first"
            ) from None
        undone.summary = f"Reverted: {entry.summary}"[:300]
        undone.reverts = entry
        undone.save(update_fields=["summary", "reverts"])
        return undone


def content_keeping_images(message: Any, text: str) -> Any:
    """New message content: the text alone, or, for a message with image parts, the text as its
    one text part in front of the same images (parts without bytes keep the stored image)."""
    images = [part for part in message.parts or () if part.get("type") == "image"]
    if not images:
        return text
    parts: list[Any] = [TextContent(text=text)] if text else []
    parts += [ImageContent(id=part["id"]) for part in images]
    return parts


def same_time(given: str, stored: str | None) -> bool:
    """Whether a time from a form is the stored one: forms show times to the second, so a stored
    time with microseconds comes back without them and must not be written over by them."""
    if stored is None:
        return False
    given_at, stored_at = datetime.fromisoformat(given), datetime.fromisoformat(stored)
    return given_at == stored_at or (given_at.microsecond == 0 and given_at == stored_at.replace(microsecond=0))


def changed_fields(before: Any, after: Any) -> list[str]:
    """The names of what differs between two versions of a record, as a person would say them."""
    names = {
        "content": "content",
        "record_type": "type",
        "user_id": "user",
        "agent_id": "agent",
        "metadata": "metadata",
        "status": "status",
        "timestamp": "timestamp",
        "expires_at": "expiry",
        "role": "role",
    }
    return [label for name, label in names.items() if getattr(before, name, None) != getattr(after, name, None)]


def edited(noun: str, before: Any, after: Any) -> str:
    """ "Edited the fact's content and metadata": an update's summary in the history."""
    fields = changed_fields(before, after)
    if not fields:
        return f"Saved the {noun} unchanged"
    listed = ", ".join(fields[:-1]) + " and " + fields[-1] if len(fields) > 1 else fields[0]
    return f"Edited the {noun}'s {listed}"


def describe_snapshot(snapshot: Snapshot) -> str:
    """ "12 messages, 3 memories, 1 image and 2 links": what a snapshot holds, for summaries."""
    counts: dict[str, int] = {}
    for record in snapshot.records:
        kind = "memory" if record.record_type in ("memory", "fact", "guideline", "preference") else record.record_type
        counts[kind] = counts.get(kind, 0) + 1
    parts = [
        plural(counts.get(kind, 0), noun)
        for kind, noun in (("message", "message"), ("memory", "memory"), ("image", "image"))
    ]
    parts.append(plural(len(snapshot.relations), "link"))
    if len(snapshot.threads) > 1:
        parts.insert(0, plural(len(snapshot.threads), "thread"))
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def plural(count: int, noun: str) -> str:
    irregular = {"memory": "memories"}
    return f"{count} {noun if count == 1 else irregular.get(noun, noun + 's')}"
