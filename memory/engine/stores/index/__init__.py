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

The record index lives on disk in generations that every process maps (generations.py): a new
process opens the newest one, reads nothing up front, and applies the log after it; each process
keeps only the changes since its generation in its own memory. Once the changes reach a count
or an age (IndexRebuild), one process writes a new generation in a background thread, from the
current one and the log, without holding up searches or writes; every process moves to it at
its next search, and the old one is removed. A generation of another store, too old for the
log, or whose files are not as written is never served: the index is rebuilt from SQL instead.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from .generations import SUPERSEDED_GRACE_SECONDS, CorruptGeneration, Generation, Generations
from .link_index import LinkIndex
from .search_cache import SearchCache

log = logging.getLogger(__name__)

WRITER_NICENESS = 10
RETRY_SECONDS = 60.0
"""After a generation could not be written, how long a process waits before it tries again."""


@dataclass(frozen=True)
class IndexRebuild:
    """When a new generation of the search index is written: once `after_changes` records
    have changed since the newest one, or once it is `after_seconds` old with any change
    after it. Until then every process holds those changes in its own memory and every new
    process applies them from the change log at its start; a generation at 1M records takes a
    few seconds of one core to write, in the background."""

    after_changes: int = 20_000
    after_seconds: float = 600.0

    def __post_init__(self) -> None:
        if type(self.after_changes) is not int or self.after_changes < 1:
            raise ValueError(f"after_changes must be a positive integer, not {self.after_changes!r}")
        seconds = self.after_seconds
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds < float("inf"):
            raise ValueError(f"after_seconds must be a positive number of seconds, not {seconds!r}")


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
        """Rows (SearchCache's columns) of these records, or of all of them (None, read a page
        at a time as they are consumed), by pk."""

    def record_count(self) -> int:
        """How many records there are (rows of record_rows(None))."""

    def link_rows(self, positions: Sequence[int] | None) -> Iterable[Sequence[Any]]:
        """LinkIndex rows of these links, or of all of them (None), by position."""


def changed_keys(changes: Iterable[tuple[int, str, int, int]], entity: str) -> set[int]:
    """The keys the change-log entries of one entity name (their ranges spelled out)."""
    keys: set[int] = set()
    for _, kind, first, last in changes:
        if kind == entity:
            keys.update(range(first, last + 1))
    return keys


def _from_sql(dim: int, source: ChangeSource) -> SearchCache:
    """The record index built from every record row, its arrays sized once up front (grown as
    rows came, the 1.5 GB matrix of 1M records would be copied at each step)."""
    cache = SearchCache(dim)
    cache.reserve(source.record_count())
    cache.load(source.record_rows(None))
    return cache


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
    """The in-memory record and link indexes of one store, and the change sequence they reflect.
    `folder` holds the record index's generations (None: kept in memory only); `open_source`
    opens a read of the store for the background writer of a new generation."""

    def __init__(
        self,
        dim: int,
        folder: str | os.PathLike | None = None,
        *,
        open_source: Callable[[], AbstractContextManager[ChangeSource]] | None = None,
        rebuild: IndexRebuild = IndexRebuild(),
    ) -> None:
        self.dim = dim
        self.generations = None if folder is None else Generations(folder)
        self.rebuild_policy = rebuild
        self.records: SearchCache | None = None
        self.links: LinkIndex | None = None
        self.seq = -1
        self.store_id: str | None = None
        self.generation: Generation | None = None  # the one `records` maps, if any
        self._changed = 0  # records changed since that generation (or the build from SQL)
        self._base_written_at = time.time()
        self._seen_stamp = 0
        self._open_source = open_source
        self._lock = ReadWriteLock()
        self._writer: threading.Thread | None = None
        self._retry_at = 0.0
        self._cleaned_at = time.time()

    def reopened(self, dim: int) -> MemoryIndex:
        """An empty index like this one for vectors of another dimension (a new embedder), once
        a generation this one is writing is complete."""
        self.close()
        folder = None if self.generations is None else self.generations.root
        return MemoryIndex(dim, folder, open_source=self._open_source, rebuild=self.rebuild_policy)

    @contextmanager
    def reading(self, source: ChangeSource, *, links: bool = False) -> Iterator[MemoryIndex]:
        """The index caught up with `source`, held for reading (other searches may read too).
        Afterwards a new generation is started in the background if one is due."""
        if self._behind(source, links) or self._newer_generation():
            with self._lock.writing():
                self._catch_up(source, links)
        with self._lock.reading():
            yield self
        self._write_generation_if_due()

    def _behind(self, source: ChangeSource, links: bool) -> bool:
        """Whether the source's snapshot holds what the index has not seen: new entries, or a
        different store (recreated or replaced: its new log may not even reach our sequence)."""
        if self.records is None or (links and self.links is None):
            return True
        state = source.log_state()
        return state.store_id != self.store_id or state.last_seq > self.seq or self.seq < state.trimmed_to

    def _newer_generation(self) -> bool:
        """Whether a generation newer than the one served has appeared (one stat when none did)."""
        if self.generations is None or self.records is None:
            return False
        stamp = self.generations.stamp()
        if stamp == self._seen_stamp:
            return False
        self._seen_stamp = stamp
        names = self.generations.names()
        return bool(names) and (self.generation is None or names[-1] > self.generation.name)

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
        else:
            newer = self._newest_generation(state, after=self.generation)
            since = self.seq if newer is None else min(self.seq, newer[0].seq)
            changes = source.changes_since(since)
            if newer is not None:
                self._serve(*newer, source, [change for change in changes if change[0] > newer[0].seq])
            else:
                self._apply_records(self.records, source, [change for change in changes if change[0] > self.seq])
            self._apply_links(source, [change for change in changes if change[0] > self.seq])
            if changes:
                self.seq = max(self.seq, changes[-1][0])
        if links and self.links is None:
            self.links = LinkIndex(source.link_rows(None))

    def _load(self, source: ChangeSource, state: LogState) -> None:
        """Everything from the newest generation plus the log after it, or from SQL (and then a
        first generation is written). Links loaded before are loaded again: searches waiting to
        read may rely on them."""
        had_links, self.links = self.links is not None, None
        # Until it has loaded, the index holds nothing: a load that fails is tried again at the
        # next search, never answered from the previous store's records.
        self.records, self.generation, self.store_id = None, None, state.store_id
        newest = self._newest_generation(state)
        if newest is not None:
            changes = source.changes_since(newest[0].seq)
            self._serve(*newest, source, changes)
            self.seq = changes[-1][0] if changes else newest[0].seq
        else:
            # The sequence is read before the rows: changes between the two are applied again, harmlessly.
            self._build_from_sql(source, state)
        if had_links:
            self.links = LinkIndex(source.link_rows(None))

    def _build_from_sql(self, source: ChangeSource, state: LogState) -> None:
        """The record index read from SQL, then written as a generation and served from its
        maps (the rows read are this process's alone until then)."""
        cache = _from_sql(self.dim, source)
        self.records, self.store_id, self.seq = cache, state.store_id, state.last_seq
        self.generation, self._changed, self._base_written_at = None, 0, time.time()
        claim = None if self.generations is None else self.generations.claim_writer()
        if claim is None:
            return  # no folder, or another process is writing: its generation is taken up later
        try:
            with claim:
                name = self.generations.write(state.store_id, state.last_seq, cache.to_arrays())
            generation = self.generations.open(name)
            self._serve(generation, SearchCache.from_arrays(self.dim, generation.arrays), source, [])
            self.generations.remove_unused(state.store_id)
        except (OSError, ValueError) as error:  # a read-only folder costs cold starts, nothing else
            log.warning("could not write the search index to %s: %s", self.generations.root, error)

    def _newest_generation(
        self, state: LogState, after: Generation | None = None, *, verify: bool = False
    ) -> tuple[Generation, SearchCache] | None:
        """The newest generation (newer than `after`) of this store and its vectors' dimension
        that the log reaches and that holds nothing the store's snapshot does not, opened (every
        checksum read with `verify`); damaged ones are removed."""
        if self.generations is None:
            return None
        for name in reversed(self.generations.names()):
            if after is not None and name <= after.name:
                return None
            try:
                manifest = self.generations.manifest(name)
                if manifest["store_id"] != state.store_id or manifest["seq"] < state.trimmed_to:
                    continue  # another store's (recreated), or older than the log reaches
                if manifest["seq"] > state.last_seq:
                    continue  # written after this read began: the next search takes it
                if manifest["files"]["matrix"]["shape"][1:] != [self.dim]:
                    continue  # another embedder's (a re-embedding under way)
                generation = self.generations.open(name, verify=verify)
                return generation, SearchCache.from_arrays(self.dim, generation.arrays)
            except (CorruptGeneration, ValueError, KeyError, IndexError, TypeError) as error:
                self.generations.discard(name, error)
        return None

    def _serve(self, generation: Generation, records: SearchCache, source: ChangeSource, changes: list) -> None:
        """Answer from this generation's records, brought up to date with `changes`."""
        changed = self._changed
        self._changed = 0
        try:
            self._apply_records(records, source, changes)
        except BaseException:
            self._changed = changed
            raise
        self.records, self.generation, self._base_written_at = records, generation, generation.written_at

    def _apply_records(self, records: SearchCache, source: ChangeSource, changes: list) -> None:
        """Bring the changed records in line with their current rows (absent: deleted)."""
        keys = sorted(changed_keys(changes, "record"))
        if keys:
            records.refresh(keys, source.record_rows(keys))
            self._changed += len(keys)

    def _apply_links(self, source: ChangeSource, changes: list) -> None:
        keys = sorted(changed_keys(changes, "link"))
        if keys and self.links is not None:
            for position in keys:
                self.links.remove(position)
            for row in source.link_rows(keys):
                self.links.add(row)

    # --- new generations --------------------------------------------------------------------

    def _write_generation_if_due(self) -> None:
        """Start writing a new generation in the background when the changes since the served
        one reach the policy's count or age, unless a thread or process is writing one; and,
        a minute apart, remove the generations no longer used."""
        if self.generations is None or self._open_source is None:
            return
        now = time.time()
        if now - self._cleaned_at > SUPERSEDED_GRACE_SECONDS and self.store_id is not None:
            self._cleaned_at = now
            self.generations.remove_unused(self.store_id)
        if not self._changed:
            return
        policy = self.rebuild_policy
        due = self._changed >= policy.after_changes or now - self._base_written_at >= policy.after_seconds
        if not due or now < self._retry_at or (self._writer is not None and self._writer.is_alive()):
            return
        self._writer = threading.Thread(target=self._write_in_background, name="oam-index-writer")
        self._writer.start()

    def _write_in_background(self) -> None:
        """write_generation at a lower CPU priority (Linux gives each thread its own), so that
        searches and writes take the cores first. Not the lowest: under searches that keep
        every core busy, nice 19 starved a 5M-record write for over half an hour."""
        with contextlib.suppress(AttributeError, OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WRITER_NICENESS)
        self.write_generation()

    def write_generation(self) -> bool:
        """Write a new generation now, in this thread: the newest one plus the log after it (or
        SQL), in memory of its own, read in one snapshot of the store and written once that is
        closed. False when another thread or process is writing one, or nothing changed."""
        claim = self.generations.claim_writer()
        if claim is None:
            self._retry_at = time.time() + 1.0
            return False
        try:
            with claim:
                with self._open_source() as source:
                    state = source.log_state()
                    # Every checksum read: what the new one copies must not carry a damaged page on.
                    newest = self._newest_generation(state, verify=True)
                    if newest is None:
                        records, seq = _from_sql(self.dim, source), state.last_seq
                    else:
                        records, changes = newest[1], source.changes_since(newest[0].seq)
                        if not changes:
                            self._retry_at = time.time() + RETRY_SECONDS
                            return False  # another process wrote it meanwhile; this one moves to it
                        keys = sorted(changed_keys(changes, "record"))
                        records.refresh(keys, source.record_rows(keys))
                        seq = changes[-1][0]
                records.compact_if_due()
                self.generations.write(state.store_id, seq, records.to_arrays())
            self.generations.remove_unused(state.store_id)
        except Exception:
            self._retry_at = time.time() + RETRY_SECONDS
            log.exception("could not write a new generation of the search index in %s", self.generations.root)
            return False
        return True

    def rewrite(self, source: ChangeSource, *, timeout: float = 60.0) -> int | None:
        """Write a generation from the store's rows alone (never from an earlier generation,
        whose vocabulary keeps every word it ever saw), serve it, and remove every other
        generation at once: for an erasure or a redaction. Waits up to `timeout` seconds for a
        writer in another thread or process to finish; returns how many generations went, None
        when there is no folder. TimeoutError when the writer's claim never came."""
        if self.generations is None:
            with self._lock.writing():
                self.records = _from_sql(self.dim, source)
                state = source.log_state()
                self.store_id, self.seq, self.generation, self._changed = state.store_id, state.last_seq, None, 0
                if self.links is not None:
                    self.links = LinkIndex(source.link_rows(None))
            return None
        claim = self.generations.wait_for_writer(timeout)
        if claim is None:
            raise TimeoutError(f"another process kept writing the search index in {self.generations.root}")
        with claim, self._lock.writing():
            state = source.log_state()
            cache = _from_sql(self.dim, source)
            name = self.generations.write(state.store_id, state.last_seq, cache.to_arrays())
            generation = self.generations.open(name)
            self.records, self.store_id, self.seq = None, state.store_id, state.last_seq
            self._changed = 0
            self._serve(generation, SearchCache.from_arrays(self.dim, generation.arrays), source, [])
            if self.links is not None:
                self.links = LinkIndex(source.link_rows(None))
            return self.generations.remove_all_but(name)

    def close(self) -> None:
        """Wait for a generation being written to be complete. (A process killed midway leaves
        the previous one served and its unfinished folder to be removed later.)"""
        if self._writer is not None:
            self._writer.join()

    # --- the consistency check ---------------------------------------------------------------

    def contents(self, source: ChangeSource) -> tuple[dict[int, bool], dict[int, int]]:
        """What the index holds once caught up with `source`: {pk: has a vector} of its live
        records and {position: version} of its links (both loaded if they were not)."""
        with self.reading(source, links=True):
            return self.records.live_vectors(), self.links.versions()

    def damage(self) -> str | None:
        """What is wrong with the files of the generation served (each one read in full against
        its checksum), or None. A damaged generation is removed at once, so that no process
        opens it again, and this index reloads at its next search; `rebuild` writes another."""
        generation = self.generation
        if generation is None or self.generations is None:
            return None
        try:
            self.generations.open(generation.name, verify=True)
        except CorruptGeneration as error:
            self.generations.discard(generation.name, error)
            with self._lock.writing():
                self.records, self.generation = None, None
            return f"{generation.name}: {error}"
        return None

    def rebuild(self, source: ChangeSource) -> None:
        """Everything again from the database, never from a generation (one is written anew):
        for an index found out of step with its store."""
        with self._lock.writing():
            self._build_from_sql(source, source.log_state())
            self.links = LinkIndex(source.link_rows(None))
