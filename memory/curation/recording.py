"""The two-phase recording protocol: every change a person makes through memory.curation is made in
one store transaction and recorded in the curation history (`CurationEntry`), with the store as the
judge of whether it happened.

The store and Django's database are two databases, so a change and its history entries are
recorded in two phases (`Recorder._recorded`): the change is made in one store transaction; before
that transaction commits, its entries are written to Django's database *pending* under a fresh
token, and the store transaction records the outcome "committed" under that token
(AgentMemory.settle_outcome) as its last write; once it has committed, the entries are confirmed
(`pending` emptied) and the outcome forgotten. A crash at any point leaves either no pending
entries (nothing was stored), or pending entries that `reconcile_pending` settles: it asks the
store to record "aborted" under their token, which stands only if the change's transaction never
committed "committed" (the first outcome recorded wins), and then drops them (aborted) or confirms
them (committed). So every change the store holds has its entries, and every entry's change is in
the store, whenever the process dies: a bulk action's batch, an import's batch and a single edit
alike. A writer that finds its token aborted (a reconcile ran while it was between the two phases)
rolls its change back. Pages read confirmed entries only (CurationEntry.objects).

The token stays on the entries (`change_token`), and the store's activity log records the
change's writes with it (`history_ref`): an event of a person's write leads to its history entries.

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
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import connections, router, transaction
from django.utils import timezone

from memory.engine import MEMORY_TYPES, AgentMemory, Snapshot, history_change, record_to_json
from memory.models import (
    OWNER_KINDS,
    Action,
    BulkChange,
    CurationEntry,
    HistoryOwner,
    Owner,
    named_owners,
    owners_of_entries,
)
from memory.text import plural

COMMITTED, ABORTED = "committed", "aborted"
"""The outcomes the store records for a change's token (AgentMemory.settle_outcome)."""


RECONCILE_AFTER = timedelta(minutes=5)
"""How long an entry stays pending before a process's first change reconciles it: far longer than
the moment between its two phases, so that no running change is given up."""


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
    def wrapper(self: Recorder, *args: Any, **kwargs: Any) -> Any:
        with self._recorded():
            return method(self, *args, **kwargs)

    return wrapper


class Recorder:
    """What every write of a Curation stands on: who makes it, through which AgentMemory, and the
    recording of its entries (one at a time, or pending for the two phases of `_recorded`)."""

    def __init__(self, agent_memory: AgentMemory, actor: Actor) -> None:
        self.agent_memory = agent_memory
        self.actor = actor
        self._bulk: BulkChange | None = None
        self._pending: list[CurationEntry] | None = None

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
            write_entries([entry], self.agent_memory)
        return entry

    @contextmanager
    def _recorded(self) -> Iterator[None]:
        """Make the block's store writes one transaction and record its entries in two phases (the
        module's docstring): pending before the store commits, confirmed after. Nested, the block
        is part of the enclosing one."""
        if self._pending is not None:
            yield
            return
        reconcile_once(self.agent_memory)
        token, written = uuid.uuid4().hex, False
        self._pending = entries = []
        try:
            with history_change(token), self.agent_memory.transaction():
                yield
                if entries:
                    for entry in entries:
                        entry.pending = entry.change_token = token
                    write_entries(entries, self.agent_memory)  # committed: Django is in autocommit
                    written = True
                    if self.agent_memory.settle_outcome(token, COMMITTED) != COMMITTED:
                        raise CurationError("this change was given up by a consistency check meanwhile: try again")
        except BaseException:
            if written:  # the store transaction did not commit: settle it so, unless it did after all
                settle([token], self.agent_memory)
            raise
        finally:
            self._pending = None
        if entries:
            CurationEntry.with_pending.filter(pending=token).update(pending="")
            for entry in entries:
                entry.pending = ""
            self.agent_memory.forget_outcomes([token])

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
        """Delete through `delete()` and record the snapshot taken just before. A delete that found
        nothing (gone since the snapshot: another writer deleted it first) is a KeyError, not a
        deletion recorded twice; a delete at a version the record is no longer at is the
        engine's StaleVersionError, nothing deleted or recorded."""
        if not delete():
            raise KeyError(f"no {kind} {object_id!r}")
        return self._record(kind, object_id, Action.DELETE, summary, before=snapshot.to_json(), **extra)


def write_entries(entries: list[CurationEntry], agent_memory: AgentMemory) -> None:
    """Write history entries with their owners (`HistoryOwner`: whose records each changed), in
    one transaction of Django's database. The owners of the memories at a link's ends come from
    the entries' own JSON, else from the store as it is inside the change (one read for them all).
    A database that gives no keys back from a bulk insert (Oracle) has its entries written one
    by one, since their owners point at them."""
    named = [named_owners(entry.object_kind, entry.object_id, entry.before, entry.after) for entry in entries]
    owners = owners_of_entries(named, lambda ids: memory_owners(agent_memory, ids))
    database = router.db_for_write(CurationEntry)
    with transaction.atomic(using=database):
        if len(entries) > 1 and connections[database].features.can_return_rows_from_bulk_insert:
            CurationEntry.with_pending.bulk_create(entries)
        else:
            for entry in entries:
                entry.save(force_insert=True)
        HistoryOwner.objects.bulk_create(
            [
                HistoryOwner(entry=entry, kind=kind, owner_id=owner_id)
                for entry, touched in zip(entries, owners, strict=True)
                for kind, owner_id in sorted(touched)
            ]
        )


def memory_owners(agent_memory: AgentMemory, memory_ids: set[str]) -> dict[str, frozenset[Owner]]:
    """The user and agent of each of these memories the store holds (expired ones too), by id."""
    try:
        records = agent_memory.store.list(MEMORY_TYPES, limit=None, record_id=sorted(memory_ids), include_expired=True)
    except ValueError:  # an id no store could hold names no memory
        return {}
    return {
        record.id: frozenset(
            (kind, value) for column, kind in OWNER_KINDS.items() if (value := getattr(record, column, None))
        )
        for record in records
    }


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
