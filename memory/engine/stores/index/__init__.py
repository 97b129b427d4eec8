"""Optional in-memory acceleration of SQLMemoryStore's searches, kept in step by the change log.

SQL answers every search on its own; this layer answers the costly parts faster from memory: a
float32 matrix of the vectors and per-row filter codes (exact top-k at NumPy speed), BM25
postings with message context for keywords (search_cache.py), and every link for graph walks
(link_index.py). Records themselves are always read from SQL.

It is fed by the store's single write path: every write appends (seq, entity, key, op) rows to
the change log in its own transaction, whichever process made it. Before a search the index
applies the entries above the last one it saw, re-reading just those rows, so another process's
one-record write costs the next search one small query, not a reload. A log trimmed past what
the index saw (a process asleep for a long time) makes it reload everything.

For a fast cold start the record index is saved to `snapshot_path` (NumPy arrays, the vectors
in a file of their own that a new process maps rather than reads), stamped with the store's id
and change sequence; a new process loads it and catches up from the log, or rebuilds when the
stamp no longer matches the store.
"""

from __future__ import annotations

import glob
import logging
import os
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from .link_index import LinkIndex
from .search_cache import SearchCache

log = logging.getLogger(__name__)

SNAPSHOT_FORMAT = 3
SAVE_EVERY = 20_000
"""Re-save the snapshot once this many changes were applied since the last save."""


@dataclass(frozen=True)
class LogState:
    """Where the store's change log stands: which store, the newest entry, what was trimmed."""

    store_id: str
    last_seq: int
    trimmed_to: int


class ChangeSource(Protocol):
    """What the index reads from its store, all within one read of the database."""

    def log_state(self) -> LogState: ...

    def changes_since(self, seq: int) -> list[tuple[int, str, int, int]]:
        """(seq, entity, first key, last key) of every change above `seq`, in order; entity is
        record or link, and the keys a range of pks or link positions."""

    def record_rows(self, pks: Sequence[int] | None) -> Iterable[Mapping[str, Any]]:
        """Rows (SearchCache's columns) of these records, or of all of them (None), by pk."""

    def link_rows(self, positions: Sequence[int] | None) -> Iterable[Sequence[Any]]:
        """LinkIndex rows of these links, or of all of them (None), by position."""


def changed_keys(changes: Iterable[tuple[int, str, int, int]], entity: str) -> set[int]:
    """The keys the change-log entries of one entity name (their ranges spelled out)."""
    keys: set[int] = set()
    for _, kind, first, last in changes:
        if kind == entity:
            keys.update(range(first, last + 1))
    return keys


class ReadWriteLock:
    """Many readers at once, or one writer: searches share the index, a catch-up has it alone."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._readers = 0
        self._writing = False

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._condition:
            self._condition.wait_for(lambda: not self._writing)
            self._readers += 1
        try:
            yield
        finally:
            with self._condition:
                self._readers -= 1
                if not self._readers:
                    self._condition.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        with self._condition:
            self._condition.wait_for(lambda: not self._writing and not self._readers)
            self._writing = True
        try:
            yield
        finally:
            with self._condition:
                self._writing = False
                self._condition.notify_all()


class MemoryIndex:
    """The in-memory record and link indexes of one store, and the change sequence they reflect."""

    def __init__(self, dim: int, snapshot_path: str | os.PathLike | None = None) -> None:
        self.dim = dim
        self.snapshot_path = None if snapshot_path is None else Path(snapshot_path)
        self.records: SearchCache | None = None
        self.links: LinkIndex | None = None
        self.seq = -1
        self.store_id: str | None = None
        self._lock = ReadWriteLock()
        self._applied_since_save = 0

    @contextmanager
    def reading(self, source: ChangeSource, *, links: bool = False) -> Iterator[MemoryIndex]:
        """The index caught up with `source`, held for reading (other searches may read too)."""
        if self._behind(source, links):
            with self._lock.writing():
                self._catch_up(source, links)
        with self._lock.reading():
            yield self

    def _behind(self, source: ChangeSource, links: bool) -> bool:
        """Whether the source's snapshot holds what the index has not seen: new entries, or a
        different store (recreated or replaced: its new log may not even reach our sequence)."""
        if self.records is None or (links and self.links is None):
            return True
        state = source.log_state()
        return state.store_id != self.store_id or state.last_seq > self.seq or self.seq < state.trimmed_to

    def standing(self, state: LogState) -> tuple[bool | None, int]:
        """Whether the index has applied every change of `state` (None: not loaded yet), and how
        many log entries it has still to apply (a replaced or trimmed log counts them all)."""
        if self.records is None:
            return None, 0
        if state.store_id != self.store_id or self.seq < state.trimmed_to:
            return False, state.last_seq - state.trimmed_to
        behind = max(state.last_seq - self.seq, 0)
        return behind == 0, behind

    # --- catching up ------------------------------------------------------------------------

    def _catch_up(self, source: ChangeSource, links: bool) -> None:
        state = source.log_state()
        if self.records is None or state.store_id != self.store_id or self.seq < state.trimmed_to:
            self._load(source, state)
        elif state.last_seq > self.seq:
            self._apply(source, source.changes_since(self.seq))
        # else another search, on a later snapshot, caught the index up first: it never goes back.
        if links and self.links is None:
            self.links = LinkIndex(source.link_rows(None))

    def _load(self, source: ChangeSource, state: LogState) -> None:
        """Everything from scratch, or from the snapshot plus the log after it. Links loaded before
        are loaded again: searches waiting to read may rely on them."""
        had_links, self.links = self.links is not None, None
        records = self._read_snapshot(state)
        if records is not None:
            self.records, self.store_id, self.seq = records
            self._apply(source, source.changes_since(self.seq))
        else:
            # The sequence is read before the rows: changes between the two are applied again, harmlessly.
            cache = SearchCache(self.dim)
            cache.load(source.record_rows(None))
            self.records, self.store_id, self.seq = cache, state.store_id, state.last_seq
            self._save()
        if had_links:
            self.links = LinkIndex(source.link_rows(None))

    def _apply(self, source: ChangeSource, changes: list[tuple[int, str, int, int]]) -> None:
        """Bring the changed records and links in line with their current rows (absent: deleted)."""
        if not changes:
            return
        record_keys = sorted(changed_keys(changes, "record"))
        link_keys = sorted(changed_keys(changes, "link"))
        if record_keys:
            self.records.refresh(record_keys, source.record_rows(record_keys))
        if link_keys and self.links is not None:
            for position in link_keys:
                self.links.remove(position)
            for row in source.link_rows(link_keys):
                self.links.add(row)
        self.seq = changes[-1][0]
        self._applied_since_save += len(changes)
        if self._applied_since_save >= SAVE_EVERY:
            self._save()

    # --- the consistency check ---------------------------------------------------------------

    def contents(self, source: ChangeSource) -> tuple[dict[int, bool], dict[int, int]]:
        """What the index holds once caught up with `source`: {pk: has a vector} of its live
        records and {position: version} of its links (both loaded if they were not)."""
        with self.reading(source, links=True):
            return self.records.live_vectors(), self.links.versions()

    def rebuild(self, source: ChangeSource) -> None:
        """Everything again from the database, never from the snapshot (which is written anew):
        for an index found out of step with its store."""
        with self._lock.writing():
            state = source.log_state()
            cache = SearchCache(self.dim)
            cache.load(source.record_rows(None))
            self.records, self.store_id, self.seq = cache, state.store_id, state.last_seq
            self.links = LinkIndex(source.link_rows(None))
            self._save()

    # --- the snapshot -----------------------------------------------------------------------

    def _read_snapshot(self, state: LogState) -> tuple[SearchCache, str, int] | None:
        path = self.snapshot_path
        if path is None or not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as saved:
                arrays = dict(saved)
            store_id, seq, version, token = arrays.pop("header").tolist()
            if int(version) != SNAPSHOT_FORMAT or store_id != state.store_id:
                return None
            if not state.trimmed_to <= int(seq) <= state.last_seq:
                return None  # older than the log reaches, or newer than the store: rebuild
            # The matrix is mapped, not read: pages load as searches touch them; writes stay private.
            arrays["matrix"] = np.load(self._matrix_path(token), mmap_mode="c", allow_pickle=False)
            return SearchCache.from_arrays(self.dim, arrays), store_id, int(seq)
        except (OSError, ValueError, KeyError, IndexError) as error:
            log.warning("ignoring the search index snapshot %s: %s", path, error)
            return None

    def _matrix_path(self, token: str) -> Path:
        return self.snapshot_path.with_name(f"{self.snapshot_path.name}.{token}.npy")

    def save(self) -> None:
        """Write the snapshot now (the store calls it on close) if changes were applied since."""
        if self._applied_since_save:
            with self._lock.reading():
                self._save()

    def _save(self) -> None:
        """Write the vectors (a .npy file that loads as a memory map) and then the rest (.npz)
        naming them; each file appears whole (written aside, then renamed), the old matrix goes."""
        path = self.snapshot_path
        if path is None or self.records is None:
            return
        token = uuid.uuid4().hex
        arrays = self.records.to_arrays()
        matrix, temporary = self._matrix_path(token), path.with_name(f"{path.name}.{token}.tmp")
        try:
            with open(temporary, "wb") as file:
                np.save(file, arrays.pop("matrix"))
            os.replace(temporary, matrix)
            with open(temporary, "wb") as file:
                np.savez(file, header=np.array([self.store_id, str(self.seq), str(SNAPSHOT_FORMAT), token]), **arrays)
            os.replace(temporary, path)
            self._applied_since_save = 0
        except OSError as error:  # a read-only directory costs cold starts, nothing else
            log.warning("could not save the search index snapshot %s: %s", path, error)
            temporary.unlink(missing_ok=True)
            matrix.unlink(missing_ok=True)
            return
        for old in path.parent.glob(f"{glob.escape(path.name)}.*.npy"):
            # Older matrices go (a process still mapping one keeps its pages); one written in the
            # last minute may be another process's save in progress, so it stays.
            try:
                if old != matrix and time.time() - old.stat().st_mtime > 60:
                    old.unlink()
            except OSError:
                pass
