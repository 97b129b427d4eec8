"""The one place that changes the memory store on a person's behalf, and records that it did.

Every change goes through the engine (which re-embeds, recounts lifecycles, cascades) and is then
written to the curation history (`CurationEntry`) with who made it and the object's values before
and after, as the engine's JSON record form (memory.engine.snapshot). A delete keeps the engine's
snapshot of everything that went with it, so that `revert` can restore it with its original ids
and links; an update keeps the old values, so that `revert` can write back what it changed. A
revert is itself a recorded change.

An update writes only what differs from the stored record, and nothing at all (no entry either)
when nothing does. Edits carry the version of the record they were opened on: the engine refuses
them (StaleVersionError) when someone changed the record meanwhile, so no update is lost. An edit
that would change nothing is refused the same way when the record is no longer at its version
(unchanged_since): writers that read the same version and send the same values race, and the
first one's write leaves the others nothing to change; answering them "done" would tell several
writers that their conditional write was the one made.

Views (and API views) call this module for every write and never write to the engine themselves.

The store and Django's database are two databases, so a change and its history entries are
recorded in two phases, with the store as the judge (`_recorded`): the change is made in one store
transaction; before that transaction commits, its entries are written to Django's database
*pending* under a fresh token, and the store transaction records the outcome "committed" under
that token (AgentMemory.settle_outcome) as its last write; once it has committed, the entries are
confirmed (`pending` emptied) and the outcome forgotten. A crash at any point leaves either no
pending entries (nothing was stored), or pending entries that `reconcile_pending` settles: it asks
the store to record "aborted" under their token, which stands only if the change's transaction
never committed "committed" (the first outcome recorded wins), and then drops them (aborted) or
confirms them (committed). So every change the store holds has its entries, and every entry's
change is in the store, whenever the process dies: a bulk action's batch, an import's batch and a
single edit alike. A writer that finds its token aborted (a reconcile ran while it was between the
two phases) rolls its change back. Pages read confirmed entries only (CurationEntry.objects).

Not covered: the calls that hand work to the LLM (add_messages, add_image, update_message,
extract_memories, refresh_summary, describe_image_again) write the store first and their entries
right after, since the LLM work they schedule must see the change committed; a crash between the
two leaves such a change unrecorded (never an entry without its change).

`reconcile_pending` runs in `manage.py oam_check` (and the overview's check), and in each process
before its first change and every RECONCILE_AFTER after, for entries pending that long.
"""

from __future__ import annotations

import functools
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from memory.engine import (
    BUILTIN_RELATIONS,
    DEFAULT_IMPORT_BATCH,
    LIFECYCLE_RELATIONS,
    MEMORY_TYPES,
    NOT_SET,
    AgentMemory,
    ImageContent,
    ImportReport,
    RecordStatus,
    Snapshot,
    StaleVersionError,
    TextContent,
    import_export,
    record_to_json,
    relation_labels,
    relation_to_json,
    thread_named,
    thread_to_json,
)
from memory.models import Action, BulkChange, CurationEntry, ObjectKind, ReviewMark

BULK_BATCH = 500
"""Records a bulk change writes per transaction."""

COMMITTED, ABORTED = "committed", "aborted"
"""The outcomes the store records for a change's token (AgentMemory.settle_outcome)."""
RECONCILE_AFTER = timedelta(minutes=5)
"""How long an entry stays pending before a process's first change reconciles it: far longer than
the moment between its two phases, so that no running change is given up."""

PROFILE_KINDS = {ObjectKind.USER: "user_id", ObjectKind.AGENT: "agent_id"}

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

SUMMARY_FIELDS = {"summary", "topics"}
"""A thread's fields an LLM summary refresh changes: its revert puts them back together, with the
messages they covered."""


class CurationError(ValueError):
    """A change the store cannot make as asked (the record is gone, or the request contradicts
    the store), with a message for the person who asked."""


@dataclass(frozen=True)
class Actor:
    """Who makes a change, and through what: the dashboard, or the API (with the name of the
    token used, if one was)."""

    user: AbstractBaseUser | None
    via: str = "dashboard"
    token_name: str = ""

    @property
    def name(self) -> str:
        return self.user.get_username() if self.user is not None else "system"

    def authorship(self) -> dict[str, Any]:
        """The fields of a history row (`memory.models.Authored`) that say who made it, and how."""
        return {"actor": self.user, "actor_name": self.name, "via": self.via, "token_name": self.token_name}


def recorded(method: Callable[..., Any]) -> Callable[..., Any]:
    """A Curation method whose store writes are one transaction, recorded in two phases
    (Curation._recorded); called inside another such method or a bulk batch, part of that one."""

    @functools.wraps(method)
    def wrapper(self: Curation, *args: Any, **kwargs: Any) -> Any:
        with self._recorded():
            return method(self, *args, **kwargs)

    return wrapper


class Curation:
    """The changes one actor makes, through one AgentMemory, each recorded in the history."""

    def __init__(self, agent_memory: AgentMemory, actor: Actor) -> None:
        self.memory = agent_memory
        self.actor = actor
        self._bulk: BulkChange | None = None
        self._pending: list[CurationEntry] | None = None

    # --- recording ----------------------------------------------------------------------------

    @contextmanager
    def bulk(self, summary: str, *, reverts: BulkChange | None = None) -> Iterator[BulkChange]:
        """Group the changes made inside the `with` into one bulk change: the history lists them as
        one, and `revert_bulk` undoes them in one step. Nested, the outer change keeps them all.

        The bulk change is written first, so that its entries can point at it as they are recorded;
        if the block fails part-way, the change holds the entries of what was done (and can be
        undone), and its summary says it was interrupted.
        """
        if self._bulk is not None:
            yield self._bulk
            return
        change = BulkChange.objects.create(
            **self.actor.authorship(),
            summary=summary[:300],
            reverts=reverts,
        )
        self._bulk = change
        try:
            yield change
        except BaseException:
            if change.entries.exists():
                change.summary = f"{summary} (interrupted: {plural(change.entries.count(), 'change')} made)"[:300]
                change.save(update_fields=["summary"])
            else:
                change.delete()
            raise
        finally:
            self._bulk = None

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
        entry = CurationEntry(
            **self.actor.authorship(),
            object_kind=kind,
            object_id=object_id,
            thread_id=thread_id or "",
            action=action,
            summary=summary[:300],
            before=before,
            after=after,
            reverts=reverts,
            bulk=self._bulk,
        )
        if self._pending is not None:  # written with the rest of the change (_recorded)
            self._pending.append(entry)
        else:  # a change that hands work to the LLM: stored first, recorded right after
            entry.save(force_insert=True)
        return entry

    @contextmanager
    def _recorded(self) -> Iterator[None]:
        """Make the block's store writes one transaction and record its entries in two phases (the
        module's docstring): pending before the store commits, confirmed after. Nested, the block
        is part of the enclosing one."""
        if self._pending is not None:
            yield
            return
        reconcile_once(self.memory)
        token, written = uuid.uuid4().hex, False
        self._pending = entries = []
        try:
            with self.memory.transaction():
                yield
                if entries:
                    for entry in entries:
                        entry.pending = token
                    CurationEntry.with_pending.bulk_create(entries)  # committed: Django is in autocommit
                    written = True
                    if self.memory.settle_outcome(token, COMMITTED) != COMMITTED:
                        raise CurationError("this change was given up by a consistency check meanwhile: try again")
        except BaseException:
            if written:  # the store transaction did not commit: settle it so, unless it did after all
                settle([token], self.memory)
            raise
        finally:
            self._pending = None
        if entries:
            CurationEntry.with_pending.filter(pending=token).update(pending="")
            for entry in entries:
                entry.pending = ""
            self.memory.forget_outcomes([token])

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
                self.memory.get_thread_record(thread_id)
            except KeyError:
                pass
            else:
                raise CurationError(f"a thread with id {thread_id!r} already exists")
        thread = self.memory.create_thread(thread_id=thread_id, user_id=user_id, agent_id=agent_id, metadata=metadata)
        after = self.memory.get_thread_record(thread.thread_id)
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
        before = self.memory.get_thread_record(thread_id)
        if metadata == before.metadata:
            unchanged_since(before, version)
            return None
        self.memory.update_thread(thread_id, metadata=metadata, expected_version=version)
        return self._thread_updated(before, "Edited the thread's metadata")

    def _thread_updated(self, before: Any, summary: str) -> CurationEntry:
        """Record an update of a thread: `before` as it was read, and the thread as it is now."""
        after = self.memory.get_thread_record(before.id)
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

    def refresh_summary(self, thread_id: str) -> CurationEntry | None:
        """Ask the thread's LLM to fold the messages since the last summary into it, with new
        topics, now. None, and no entry, when no message came since: nothing was asked or changed.
        The entry keeps the thread before and after, so that a revert can put back the summary,
        the topics and the messages they covered (_put_back_summary)."""
        before = self.memory.get_thread_record(thread_id)
        if self.memory.get_thread(thread_id).refresh_summary() is None:
            return None
        return self._thread_updated(before, "Refreshed the summary with the LLM")

    def _put_back_summary(self, thread_id: str, earlier: dict[str, Any], *, version: int) -> CurationEntry | None:
        """Write back the summary and topics of `earlier` (a thread's JSON form) with the messages
        they covered, so that the next refresh folds in the later ones again; None when the thread
        has them already."""
        before = self.memory.get_thread_record(thread_id)
        wanted = (earlier.get("summary"), earlier.get("topics"), summarized_through(earlier.get("settings")))
        if (before.summary, before.topics, summarized_through(before.settings)) == wanted:
            unchanged_since(before, version)
            return None
        summary, topics, through = wanted
        self.memory.get_thread(thread_id).set_summary(
            summary, topics, summarized_through=through, expected_version=version
        )
        return self._thread_updated(before, "Put back the thread's summary and topics")

    def extract_memories(self, thread_id: str) -> list[CurationEntry]:
        """Ask the thread's LLM for memories from the messages no extraction has covered yet; one
        history entry per memory it made (each can be undone on its own)."""
        created = self.memory.get_thread(thread_id).run_memory_extraction()
        entries = []
        for memory_id in created:
            record = self.memory.get_memory(memory_id)
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

    # --- messages -----------------------------------------------------------------------------

    def add_messages(self, thread_id: str, messages: list[Any]) -> list[CurationEntry]:
        """Append messages to a thread as its agent would (Thread.add_messages: mappings with
        `role` and `content`, a string or text and image parts, and optional `id`, `timestamp`
        and `metadata`). The engine checks them all, images included, before it stores any, and
        then runs the thread's LLM work as it does for the agent. One entry per message, so that
        each can be undone on its own."""
        thread = self.memory.get_thread(thread_id)
        message_ids = thread.add_messages(messages)
        entries = []
        for message_id in message_ids:
            after = self.memory.get_message_record(thread_id, message_id)
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
        thread = self.memory.get_thread(thread_id)
        before = self.memory.get_message_record(thread_id, message_id)
        changes = differences(before, fields)
        if not changes:
            unchanged_since(before, version)
            return None
        if "content" in changes:
            changes["content"] = content_keeping_images(before, changes["content"])
        thread.update_message(message_id, expected_version=version, **changes)
        after = self.memory.get_message_record(thread_id, message_id)
        return self._updated(ObjectKind.MESSAGE, message_id, before, after, edited("message", before, after))

    @recorded
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

    @recorded
    def create_memory(self, **fields: Any) -> CurationEntry:
        """A new memory from the memory form's fields (empty ones left to the engine's defaults).
        Its thread must exist (the engine would make a bare one), and gives its user and agent
        when none is given."""
        given = {name: value for name, value in fields.items() if value not in (None, "")}
        if "thread_id" in given:
            try:
                thread = thread_named(self.memory.store, given["thread_id"])
            except ValueError as error:
                raise CurationError(str(error)) from None
            given.setdefault("user_id", thread.user_id)
            given.setdefault("agent_id", thread.agent_id)
        memory_id = self.memory.add_memory(autonomous_linking=False, **given)  # people link by hand
        after = self.memory.get_memory(memory_id)
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
        before = self.memory.get_memory(memory_id)
        ttl_days = fields.pop("ttl_days", None)
        if fields.pop("never_expires", False):
            fields["expires_at"] = None
        changes = differences(before, fields)
        if ttl_days:
            changes["ttl_days"] = ttl_days
        if not changes:
            unchanged_since(before, version)
            return None
        self.memory.update_memory(memory_id, expected_version=version, **changes)
        after = self.memory.get_memory(memory_id)
        return self._updated(ObjectKind.MEMORY, memory_id, before, after, edited(after.record_type, before, after))

    @recorded
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
            new_id = self.memory.add_image(
                data,
                description=description or None,
                user_id=user_id,
                agent_id=agent_id,
                **({"metadata": metadata} if metadata is not None else {}),
                **({"image_id": image_id} if image_id else {}),
            )
            return self._image_added(new_id)
        try:
            thread_named(self.memory.store, thread_id)
        except ValueError as error:
            raise CurationError(str(error)) from None
        thread = self.memory.get_thread(thread_id)
        if add_as == "message":
            if metadata is not None:
                raise CurationError("metadata is an image record's: an image in a message has none of its own")
            parts: list[Any] = [TextContent(text=text)] if text else []
            parts.append(
                ImageContent(bytes=data, description=description or None, **({"id": image_id} if image_id else {}))
            )
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
        after = self.memory.get_image(image_id)
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
        before = self.memory.get_image(image_id)
        changes = differences(before, fields)
        if not changes:
            unchanged_since(before, version)
            return None
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

    @recorded
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

    def profile(self, kind: str, owner_id: str) -> Any:
        return profile_of(self.memory, kind, owner_id)

    @recorded
    def save_profile(self, kind: str, owner_id: str, *, information: str, version: int) -> CurationEntry | None:
        """Write a user's or agent's profile text; `version` is the profile's as it was read, 0
        when it had none (then two people writing it at once cannot both succeed)."""
        before = self.profile(kind, owner_id)
        if before is not None and before.content == information:
            unchanged_since(before, version)
            return None
        add = self.memory.add_user if kind == ObjectKind.USER else self.memory.add_agent
        add(owner_id, information, expected_version=version)
        after = self.profile(kind, owner_id)
        return self._record(
            kind,
            owner_id,
            Action.UPDATE if before else Action.CREATE,
            f"{'Edited' if before else 'Wrote'} the {kind}'s profile",
            record_to_json(before) if before else None,
            record_to_json(after),
        )

    @recorded
    def delete_profile(self, kind: str, owner_id: str) -> CurationEntry:
        """Delete a user's or agent's profile alone; what they own stays."""
        if self.profile(kind, owner_id) is None:
            raise KeyError(f"no {kind} profile {owner_id!r}")
        profile_type = f"{kind}_profile"
        snapshot = self.memory.snapshot(record_ids=[(profile_type, owner_id)])
        delete = self.memory.delete_user if kind == ObjectKind.USER else self.memory.delete_agent
        return self._delete(
            kind, owner_id, snapshot, lambda: delete(owner_id, cascade=False), f"Deleted the {kind}'s profile"
        )

    @recorded
    def delete_owner(self, kind: str, owner_id: str) -> CurationEntry:
        """Delete a user or agent with everything they own (profile, threads, records, links)."""
        snapshot = self.memory.snapshot(**{PROFILE_KINDS[kind]: owner_id})
        if not snapshot.threads and not snapshot.records:
            raise KeyError(f"no {kind} {owner_id!r}")
        delete = self.memory.delete_user if kind == ObjectKind.USER else self.memory.delete_agent
        return self._delete(
            kind,
            owner_id,
            snapshot,
            lambda: delete(owner_id, cascade=True),
            f"Deleted the {kind} with {describe_snapshot(snapshot)}",
        )

    # --- links --------------------------------------------------------------------------------

    @recorded
    def create_link(
        self,
        *,
        source_record_id: str,
        target_record_id: str,
        relation_type: str,
        opposite_relation_type: str | None = None,
        metadata: dict | None = None,
    ) -> CurationEntry:
        """Link two memories, source → target (a lifecycle type retires the target)."""
        source, target = self.check_link(
            source_record_id=source_record_id,
            target_record_id=target_record_id,
            relation_type=relation_type,
            opposite_relation_type=opposite_relation_type,
        )
        relation_id = self.memory.link_records(
            source_record_id,
            source.record_type,
            target_record_id,
            target.record_type,
            relation_type,
            **({"opposite_relation_type": opposite_relation_type} if opposite_relation_type else {}),
            **({"metadata": metadata} if metadata is not None else {}),
        )
        return self._linked(relation_id)

    def _linked(self, relation_id: str) -> CurationEntry:
        """Record a link just made."""
        relation = self.memory.get_relation(relation_id)
        return self._record(
            ObjectKind.LINK,
            relation_id,
            Action.LINK,
            f"Linked {short(relation.source_record_id)} {relation.relation_type} {short(relation.target_record_id)}",
            after=relation_to_json(relation),
        )

    def check_link(
        self,
        *,
        source_record_id: str,
        target_record_id: str,
        relation_type: str,
        opposite_relation_type: str | None = None,
    ) -> tuple[Any, Any]:
        """The two memories of a link the store would make, or the reason it would not (a missing
        end, a memory linked to itself, labels the engine refuses, a pair already linked: one link
        per pair, either way), so that a preview never promises a link its confirmation refuses."""
        source = self._memory_end("source_record_id", source_record_id)
        target = self._memory_end("target_record_id", target_record_id)
        if source_record_id == target_record_id:
            raise CurationError("target_record_id is the source: a memory cannot be linked to itself")
        relation_labels(relation_type, opposite_relation_type or NOT_SET)
        for link in self.memory.list_relations(record_id=source_record_id, limit=None):
            if target_record_id in (link.source_record_id, link.target_record_id):
                raise CurationError(
                    f"target_record_id is already linked to the source ({link.label_from(source_record_id)}): "
                    "one link per pair of memories; edit that link instead"
                )
        return source, target

    def _memory_end(self, name: str, memory_id: str) -> Any:
        try:
            return self.memory.get_memory(memory_id)
        except KeyError:
            raise CurationError(f"{name} names no memory: {memory_id!r}") from None

    @recorded
    def update_link(self, relation_id: str, *, version: int, **fields: Any) -> CurationEntry | None:
        """Retype a link (`relation_type`, `opposite_relation_type`) or change its `metadata`."""
        before = self.memory.get_relation(relation_id)
        relation_type = fields.get("relation_type", before.relation_type)
        if relation_type in BUILTIN_RELATIONS:
            fields.pop("opposite_relation_type", None)  # a built-in type has its fixed opposite
        elif "opposite_relation_type" in fields and not fields["opposite_relation_type"]:
            fields["opposite_relation_type"] = relation_type  # left empty: it reads the same both ways
        changes = differences(before, fields)
        if not changes:
            unchanged_since(before, version)
            return None
        self.memory.update_record_link(relation_id, expected_version=version, **changes)
        after = self.memory.get_relation(relation_id)
        return self._record(
            ObjectKind.LINK,
            relation_id,
            Action.UPDATE,
            f"Changed the link {short(after.source_record_id)} {after.relation_type} {short(after.target_record_id)}",
            relation_to_json(before),
            relation_to_json(after),
        )

    @recorded
    def delete_link(self, relation_id: str) -> CurationEntry:
        relation = self.memory.get_relation(relation_id)
        if not self.memory.delete_record_link(relation_id=relation_id):
            raise KeyError(f"no relation {relation_id!r}")
        return self._record(
            ObjectKind.LINK,
            relation_id,
            Action.UNLINK,
            f"Unlinked {short(relation.source_record_id)} {relation.relation_type} {short(relation.target_record_id)}",
            before=Snapshot(relations=[relation]).to_json(),
        )

    def link_effects(self, *, add: tuple[str, str] | None = None, remove: Any = None) -> list[StatusChange]:
        """What a link change does to the status of its target memory, before it is made:
        `add` is (target id, relation type) of a link to create, `remove` a relation to delete.
        A retype is both (its old type removed, its new type added)."""
        target = add[0] if add else remove.target_record_id
        state = self.memory.lifecycle([target]).get(target)
        if state is None:
            return []
        retired_by = set(state.retired_by)
        if remove is not None:
            retired_by.discard(remove.id)
        if add is not None and add[1] in LIFECYCLE_RELATIONS:
            retired_by.add("the new link")
        valid_after = state.own_status == RecordStatus.VALID and not retired_by
        before, after = state.status.value, "valid" if valid_after else "invalid"
        if before == after:
            return []
        memory = self.memory.get_memory(target)
        return [StatusChange(memory, before, after)]

    # --- bulk changes -------------------------------------------------------------------------

    def bulk_update_memories(self, changes: Sequence[tuple[Any, dict[str, Any]]], summary: str) -> BulkOutcome:
        """Update many memories as one bulk change: each (the memory as it was seen, the fields
        to write), one history entry each, like `update_memory` but writing exactly the fields
        given (a bulk status change writes the flag it previewed). The write expects the version
        seen, so the memory seen is the one changed; a memory changed or deleted since is
        skipped and reported, never overwritten."""

        def update(before: Any, fields: dict[str, Any]) -> None:
            self.memory.update_memory(before.id, expected_version=before.version, **fields)
            after = self.memory.get_memory(before.id)
            self._updated(ObjectKind.MEMORY, before.id, before, after, edited(after.record_type, before, after))

        return self._in_batches(summary, changes, update)

    def bulk_delete_memories(self, chosen: Sequence[tuple[str, int]], summary: str) -> BulkOutcome:
        """Delete many memories (each with its links) as one bulk change; each (id, version seen)."""

        def delete(memory_id: str, version: int) -> None:
            unchanged_since(self.memory.get_memory(memory_id), version)
            self.delete_memory(memory_id)

        return self._in_batches(summary, chosen, delete)

    def bulk_delete_messages(self, thread_id: str, chosen: Sequence[tuple[str, int]], summary: str) -> BulkOutcome:
        """Delete many messages of a thread (each with its images) as one bulk change; each
        (id, version seen)."""

        def delete(message_id: str, version: int) -> None:
            unchanged_since(self.memory.get_message_record(thread_id, message_id), version)
            self.delete_message(thread_id, message_id)

        return self._in_batches(summary, chosen, delete)

    def mark_duplicates(self, keep_id: str, chosen: Sequence[tuple[str, int]], summary: str) -> BulkOutcome:
        """Link each chosen memory as a duplicate of the kept one, as one bulk change. The kept
        memory is each `duplicates` link's source (the preferred copy, unchanged); the others are
        targets, which the link makes invalid (spec: a lifecycle link retires its target)."""
        keep = self.memory.get_memory(keep_id)

        def link(memory_id: str, version: int) -> None:
            target = unchanged_since(self.memory.get_memory(memory_id), version)
            self._linked(
                self.memory.link_records(keep.id, keep.record_type, target.id, target.record_type, "duplicates")
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

    # --- review queues ------------------------------------------------------------------------

    @recorded
    def purge_expired(self) -> Purge:
        """Delete every expired record (AgentMemory.purge_expired), so that it can be undone: what
        will go is read first (one snapshot, expired records included), then purged, and recorded
        as one bulk change with an entry per record (a message with its images, a memory with its
        links), which `revert_bulk` puts back exactly as it was: still expired, hidden from every
        read, awaiting the next purge. A record that expired between the snapshot and the purge
        went without a copy: `unsaved` counts those (the summary says so). Nothing expired:
        nothing is recorded."""
        expired = [(record.record_type, record.id) for record in self.memory.list_expired(limit=None)]
        snapshot = self.memory.snapshot(record_ids=expired) if expired else Snapshot()  # no ids: the whole store
        groups = purge_groups(snapshot)
        with self.bulk(f"Purged {plural(len(snapshot.records), 'expired record')}") as change:
            purged = self.memory.purge_expired()
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

    @recorded
    def resolve_contradiction(self, relation_id: str, keep_id: str) -> BulkChange:
        """Settle a `contradicts` pair: keep one memory and retire the other with a `supersedes`
        link from the kept one (D2: a supersedes link makes its target invalid). A pair has one
        link, so the contradicts link goes and the supersedes link takes its place, as one bulk
        change (one undo brings the contradiction back)."""
        relation = self.memory.get_relation(relation_id)  # KeyError: gone meanwhile
        if relation.relation_type != "contradicts":
            raise CurationError(f"this link is a {relation.relation_type} link now, not a contradiction")
        ends = (relation.source_record_id, relation.target_record_id)
        if keep_id not in ends:
            raise CurationError("keep must be one of the two memories of the pair")
        retired_id = ends[1] if keep_id == ends[0] else ends[0]
        kept = self._memory_end("keep", keep_id)
        retired = self._memory_end("retired", retired_id)
        summary = f"Resolved a contradiction: {quoted(kept.content)} supersedes {quoted(retired.content)}"
        with self.bulk(summary) as change:
            self.delete_link(relation_id)
            self.create_link(
                source_record_id=keep_id,
                target_record_id=retired_id,
                relation_type="supersedes",
                metadata={"created_by": self.actor.name, "resolves": relation_id},
            )
        return change

    # --- duplicates ---------------------------------------------------------------------------

    @recorded
    def merge_duplicates(self, keep_id: str, retired_ids: list[str], *, how: str = "link") -> Merge:
        """Resolve a group of near-duplicates (AgentMemory.find_duplicates) in one bulk change,
        undone in one step: keep `keep_id` and retire each of `retired_ids`, linked as a
        `duplicates` of the kept memory (`how="link"`: kept → duplicates → retired, which makes it
        invalid but keeps it) or deleted (`how="delete"`).

        The links of the retired memories move to the kept one first (same type, direction and
        metadata), so that nothing the group knew is lost. A link that would join the kept memory
        to itself (it joined the kept memory, or two retired ones) or to a memory it is already
        linked with (one link per pair) is not moved, and is reported: it stays with the retired
        memory (and goes with it when it is deleted; an undo brings it back).
        """
        if how not in ("link", "delete"):
            raise CurationError(f"how must be 'link' or 'delete', not {how!r}")
        retired_ids = list(dict.fromkeys(retired_ids))
        if not retired_ids:
            raise CurationError("retired_ids is empty: choose at least one memory to retire")
        if keep_id in retired_ids:
            raise CurationError("keep is among the memories to retire: keep one, retire the others")
        keep = self._memory_end("keep", keep_id)
        retired = [self._memory_end("retired_ids", memory_id) for memory_id in retired_ids]
        group = {keep_id, *retired_ids}
        partners = {other_end(link, keep_id) for link in self.memory.list_relations(record_id=keep_id, limit=None)}
        done = "linked as its duplicates" if how == "link" else "deleted"
        merge = Merge(keep=keep, how=how)
        with self.bulk(f"Merged near-duplicates into {quoted(keep.content)}: {len(retired)} {done}") as change:
            merge.change = change
            for record in retired:
                for link in self.memory.list_relations(record_id=record.id, limit=None):
                    other = other_end(link, record.id)
                    if other == keep_id:
                        if how == "delete":
                            merge.skipped.append((link, "it joins the kept memory: moved, it would link it to itself"))
                        elif not is_duplicate_of(link, keep_id):  # one link per pair: the duplicates link replaces it
                            self.delete_link(link.id)
                            partners.discard(record.id)
                            merge.skipped.append((link, "replaced by the duplicates link"))
                        continue
                    if other in group:
                        merge.skipped.append((link, "it joins two of the retired memories"))
                        continue
                    if other in partners:
                        merge.skipped.append((link, "the kept memory is already linked with its other end"))
                        continue
                    self._move_link(link, record.id, keep_id)
                    partners.add(other)
                    merge.moved += 1
                if how == "delete":
                    self.delete_memory(record.id)
                elif record.id not in partners:  # a "duplicates" link from the kept memory may be there already
                    self.create_link(source_record_id=keep_id, target_record_id=record.id, relation_type="duplicates")
            if merge.moved:
                change.summary = f"{change.summary}; moved {plural(merge.moved, 'link')}"[:300]
                change.save(update_fields=["summary"])
        return merge

    def _move_link(self, link: Any, from_id: str, to_id: str) -> None:
        """Make the same link on `to_id` in place of `from_id` (its direction, labels and
        metadata kept), then delete the old one: two entries of the open bulk change."""
        moved_source = link.source_record_id == from_id
        relation_type = link.relation_type
        self.create_link(
            source_record_id=to_id if moved_source else link.source_record_id,
            target_record_id=link.target_record_id if moved_source else to_id,
            relation_type=relation_type,
            opposite_relation_type=None if relation_type in BUILTIN_RELATIONS else link.opposite_relation_type,
            metadata=link.metadata,
        )
        self.delete_link(link.id)

    # --- history ------------------------------------------------------------------------------

    @recorded
    def revert(self, entry: CurationEntry) -> CurationEntry:
        """Undo one recorded change: restore what a delete removed, delete what a create added,
        write back the values an update replaced (those it changed, no others)."""
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

    def import_export(
        self, lines: Any, *, summary: str, batch_size: int = DEFAULT_IMPORT_BATCH, progress: Any = None
    ) -> tuple[ImportReport, BulkChange]:
        """Import an oam-export file (memory.engine.transfer.import_export, a transaction per
        batch) as one bulk change: each batch's new objects are recorded as creations, so that the
        history lists the import as one change and `revert_bulk` undoes it in one step. A thread
        stands for its messages, images and memories; a link for itself only when neither end came
        with the import (deleting an end deletes its links). What the store already held is
        skipped, and recorded nothing."""
        with self.bulk(summary) as change:
            report = import_export(_ImportRecorder(self), lines, batch_size=batch_size, progress=progress)
        restored = report.restored
        change.summary = (
            f"{summary}: {plural(restored['threads'], 'thread')}, {plural(restored['records'], 'record')}, "
            f"{plural(restored['relations'], 'link')}"
            + (f" ({len(report.skipped)} already there, skipped)" if report.skipped else "")
        )[:300]
        change.save(update_fields=["summary"])
        return report, change

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
                self.memory.get_thread_record(entry.thread_id)
            except KeyError:  # a restore would bring the thread back bare, without its metadata
                raise CurationError(f"its thread {entry.thread_id} is deleted: restore the thread first") from None
        report = self.memory.restore(Snapshot.from_json(entry.before))
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
            current = self.memory.get_relation(entry.object_id)
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
            return self.memory.get_thread_record(object_id)
        if kind == ObjectKind.MESSAGE:
            return self.memory.get_message_record(entry.thread_id, object_id)
        if kind == ObjectKind.MEMORY:
            return self.memory.get_memory(object_id)
        if kind == ObjectKind.IMAGE:
            return self.memory.get_image(object_id)
        if kind in PROFILE_KINDS:
            profile = self.profile(kind, object_id)
            if profile is None:
                raise KeyError(f"no {kind} profile {object_id!r}")
            return profile
        if kind == ObjectKind.LINK:
            return self.memory.get_relation(object_id)
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


@dataclass(frozen=True)
class BulkOutcome:
    """What a bulk action did: its bulk change (None when nothing was left to change), how many
    records it changed, and the ids it skipped, each with the reason."""

    change: BulkChange | None
    done: int
    skipped: list[tuple[str, str]] = field(default_factory=list)


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


@dataclass
class Merge:
    """What merge_duplicates did: the memory kept, how the others were retired, the bulk change
    that holds it all, how many links moved to the kept memory, and the links left where they
    were (or that went), each with why."""

    keep: Any
    how: str
    change: BulkChange | None = None
    moved: int = 0
    skipped: list[tuple[Any, str]] = field(default_factory=list)


def other_end(link: Any, memory_id: str) -> str:
    """The id at the other end of a link from `memory_id`."""
    return link.target_record_id if link.source_record_id == memory_id else link.source_record_id


def is_duplicate_of(link: Any, keep_id: str) -> bool:
    """Whether a link already retires its target as a duplicate of `keep_id`."""
    return link.source_record_id == keep_id and link.relation_type == "duplicates"


@dataclass(frozen=True)
class StatusChange:
    """A memory whose effective status a change would turn from `before` to `after`."""

    memory: Any
    before: str
    after: str


def unchanged_since(record: Any, version: int) -> Any:
    """The record (a thread or a link too), if it is still at the version seen (StaleVersionError
    otherwise). It is the compare of a write that writes nothing: the record was read once, and
    that read both found nothing to change and is what is compared, so the answer holds at the
    moment of the read whatever other writers do after it."""
    if record.version != version:
        raise StaleVersionError(f"{getattr(record, 'record_type', 'relation')} {record.id!r}", version, record.version)
    return record


def short(record_id: str) -> str:
    """An id as a summary names it: a UUID by its first 8 characters."""
    return record_id[:8] if len(record_id) == 36 and record_id.count("-") == 4 else record_id


def quoted(text: str | None, width: int = 60) -> str:
    """A record's text as a message or a summary names it: “in quotes”, on one line, cut to
    `width` characters. People know memories by what they say, not by their ids (the pages that
    show it escape it, as any text)."""
    text = " ".join(str(text or "").split())
    return f"“{text if len(text) <= width else text[: width - 1] + '…'}”"


def profile_of(memory: AgentMemory, kind: str, owner_id: str) -> Any:
    """A user's or agent's stored profile, or None."""
    try:
        return (memory.get_user if kind == ObjectKind.USER else memory.get_agent)(owner_id)
    except KeyError:
        return None


def only_a_profile(entry: CurationEntry) -> bool:
    """Whether a creation or restore of a user or agent brought back their profile alone (then
    undoing it deletes the profile alone, not everything they own)."""
    if entry.action == Action.CREATE:
        return True
    restored = Snapshot.from_json(entry.after)
    return not restored.threads and all(record.record_type.endswith("_profile") for record in restored.records)


def differences(record: Any, fields: dict[str, Any]) -> dict[str, Any]:
    """The fields (curation arguments) whose value differs from the record's. A form's time,
    given to the second, is the stored one when they are the same second."""
    stored_names = {"memory_type": "record_type", "description": "content"}
    changes = {}
    for name, value in fields.items():
        stored = getattr(record, stored_names.get(name, name), None)
        if name == "timestamp" and (value is None or same_time(value, stored)):
            continue
        if value != stored:
            changes[name] = value
    return changes


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


def summarized_through(settings: dict[str, Any] | None) -> int:
    """The seq_no of the last message a thread's summary covers (-1: none): the progress its
    settings keep (Thread.set_summary)."""
    return ((settings or {}).get("llm") or {}).get("summarized_through", -1)


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
    fields = changed_fields(before, after) or ["values"]
    listed = ", ".join(fields[:-1]) + " and " + fields[-1] if len(fields) > 1 else fields[0]
    return f"Edited the {noun}'s {listed}"


def describe_snapshot(snapshot: Snapshot) -> str:
    """ "12 messages, 3 memories, 1 image and 2 links": what a snapshot holds, for summaries."""
    counts: dict[str, int] = {}
    for record in snapshot.records:
        kind = "memory" if record.record_type in MEMORY_TYPES else record.record_type
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
    irregular = {"memory": "memories", "batch": "batches"}
    return f"{count} {noun if count == 1 else irregular.get(noun, noun + 's')}"


RECORD_KINDS = {"message": ObjectKind.MESSAGE, "image": ObjectKind.IMAGE, "user_profile": ObjectKind.USER}
RECORD_KINDS |= {"agent_profile": ObjectKind.AGENT} | {memory_type: ObjectKind.MEMORY for memory_type in MEMORY_TYPES}


class _ImportRecorder:
    """What Curation.import_export hands the engine's import as its target: restores each batch
    into the store, then records the objects the batch created (one bulk insert of entries per
    batch, into the import's bulk change)."""

    def __init__(self, curation: Curation) -> None:
        self.curation = curation
        self.imported: set[str] = set()  # threads and records this import created (any batch)
        # What the engine's import checks each line against (memory.engine.transfer.ImportRules).
        self.store = curation.memory.store
        self.image_input_limit_config = curation.memory.image_input_limit_config

    def restore(self, snapshot: Snapshot, **options: Any) -> Any:
        with self.curation._recorded():
            return self._restore(snapshot, **options)

    def _restore(self, snapshot: Snapshot, **options: Any) -> Any:
        report = self.curation.memory.restore(snapshot, **options)
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


# --- reconciling ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reconciled:
    """What reconcile_pending settled: entries confirmed (their change is in the store), and entries
    dropped (it is not)."""

    confirmed: int = 0
    dropped: int = 0


def settle(tokens: Sequence[str], agent_memory: AgentMemory) -> Reconciled:
    """Settle the pending entries of these tokens by the store's outcome: "aborted" is recorded
    for each token that has none (so that its change can no longer commit), then the entries of
    committed tokens are confirmed and the others deleted, and the outcomes forgotten."""
    confirmed = dropped = 0
    for token in dict.fromkeys(tokens):
        entries = CurationEntry.with_pending.filter(pending=token)
        if agent_memory.settle_outcome(token, ABORTED) == COMMITTED:
            confirmed += entries.update(pending="")
        else:
            dropped += entries.count()
            entries.delete()
    # An aborted outcome is kept: a writer still between its two phases (a stalled process) must
    # find it. Committed ones are asked for no more.
    committed = [token for token, outcome in agent_memory.outcomes(list(tokens)).items() if outcome == COMMITTED]
    agent_memory.forget_outcomes(committed)
    return Reconciled(confirmed, dropped)


def reconcile_pending(agent_memory: AgentMemory, *, older_than: timedelta = RECONCILE_AFTER) -> Reconciled:
    """Settle every history entry left pending (`older_than` ago or more) by a change whose process
    died between its two phases. Safe to run at any time, from any process: a change still running
    when its entries are settled "aborted" rolls itself back.

    A bulk change such a crash left without entries stays: nothing lists it (the history lists
    entries), and age says nothing about whether it is still running (a long import may skip
    minutes of batches before its first new record)."""
    cutoff = timezone.now() - older_than
    stale = CurationEntry.with_pending.exclude(pending="").filter(at__lte=cutoff)
    tokens = list(stale.values_list("pending", flat=True).distinct())
    return settle(tokens, agent_memory) if tokens else Reconciled()


_last_reconcile: dict[int, float] = {}
_reconciled_lock = threading.Lock()


def reconcile_once(agent_memory: AgentMemory) -> None:
    """reconcile_pending before a process's first change, and again before a change once
    RECONCILE_AFTER has passed since: what a crash left pending is settled soon after a restart
    (one indexed query each time, nothing else when nothing is pending)."""
    now = time.monotonic()
    with _reconciled_lock:
        last = _last_reconcile.get(id(agent_memory))
        if last is not None and now - last < RECONCILE_AFTER.total_seconds():
            return
        _last_reconcile[id(agent_memory)] = now
    reconcile_pending(agent_memory)


def mark(actor: Actor, kind: str, link: Any) -> ReviewMark:
    """Record a review decision about a link that changes nothing in the store (accept, dismiss);
    a second one of the same kind for the same link keeps the first."""
    review_mark, _ = ReviewMark.objects.get_or_create(
        kind=kind,
        relation_id=link.id,
        defaults={
            **actor.authorship(),
            "relation_type": link.relation_type,
            "source_record_id": link.source_record_id,
            "target_record_id": link.target_record_id,
        },
    )
    return review_mark
