"""The SQLite store's in-memory search index: embeddings and keyword postings of every live row.

Reading every embedding blob from SQLite per query costs far more than the scan itself, and
SQLite's FTS5 scores every row that matches any query word before it can filter by scope, so
the store keeps one copy of what search needs in memory:

- a float32 matrix of unit embeddings, for exact cosine top-k at NumPy speed;
- per-row codes (type, user, agent, thread, status, expiry) that turn filters into masks
  applied before ranking;
- the stemmed terms of each row, from which BM25 postings are built when first needed.

Keyword ranking is BM25 over two fields, as FTS5 ranks a multi-column row: the record's own
indexed text, and, for a message, its context (up to two turns before and after it in its
thread, and its date in words) at half weight. Conversations answer a question across turns,
and a message rarely repeats the words of the question it answers.

The index layer (index/__init__.py) keeps it in step with the store's change log, row by row,
whichever process wrote; `to_arrays`/`from_arrays` let it persist the cache for a fast cold start.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from ..keywords import Postings, Vocabulary, date_words, query_stems, term_counts, words

SCOPE_COLUMNS = ("user_id", "agent_id", "thread_id")
CONTEXT_TURNS = 2
"""How many turns on each side of a message form its keyword context."""
CONTEXT_WEIGHT = 0.5
BM25_K1, BM25_B = 1.2, 0.75
MAX_SEGMENTS = 16
"""Appends add postings segments; past this many (or when new rows outnumber indexed ones),
the postings are rebuilt as one."""
MAX_REWRITTEN_SHARE = 0.1
"""Rows rewritten in place (updated or deleted) are scored from a small overlay of postings; past
this share of the rows, the postings are rebuilt instead."""
GATHER_SHARE = 0.3
"""Below this share of the rows, a filtered vector search gathers the rows it keeps; above it,
it scans the whole matrix and keeps their distances."""
LOAD_BATCH = 10_000
"""Rows added at a time when the cache loads them all (their vectors as bytes are held until then)."""
MAX_DEAD_SHARE = 0.2
"""Deleted rows stay as tombstones (so no array is copied per delete) until they are this share."""
_EMPTY_TERMS = (np.empty(0, dtype=np.int32), np.empty(0, dtype=np.float32))
_NO_ROWS = np.zeros(1, dtype=np.int64)  # the CSR offsets of no rows


class RowTerms:
    """Each row's (term ids, counts), as a list of them would hold them. A generation's rows stay
    in its CSR arrays (offsets, terms, counts) and become views when asked for: making a million
    pairs of views up front took a new process most of its start at 1M records, and as many
    Python objects. Rows set or added since are kept as given."""

    def __init__(
        self,
        offsets: np.ndarray = _NO_ROWS,
        terms: np.ndarray = _EMPTY_TERMS[0],
        counts: np.ndarray = _EMPTY_TERMS[1],
    ) -> None:
        self._offsets, self._terms, self._counts = offsets, terms, counts
        self._stored = len(offsets) - 1
        self._changed: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._added: list[tuple[np.ndarray, np.ndarray]] = []

    @classmethod
    def of(cls, rows: Iterable[tuple[np.ndarray, np.ndarray]]) -> RowTerms:
        terms = cls()
        terms._added = list(rows)
        return terms

    def csr(self, start: int = 0, end: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows [start, end) as (each row's number of terms, their terms, their counts), joined
        from the stored arrays' runs of unchanged rows, not row by row."""
        end = len(self) if end is None else end
        lengths, terms, counts = [np.empty(0, dtype=np.int64)], [_EMPTY_TERMS[0]], [_EMPTY_TERMS[1]]

        def stored(first: int, last: int) -> None:
            if first < last:
                low, high = self._offsets[first], self._offsets[last]
                lengths.append(np.diff(self._offsets[first : last + 1]))
                terms.append(self._terms[low:high])
                counts.append(self._counts[low:high])

        def given(rows: list[tuple[np.ndarray, np.ndarray]]) -> None:
            lengths.append(np.fromiter((len(row_terms) for row_terms, _ in rows), dtype=np.int64, count=len(rows)))
            terms.extend(row_terms for row_terms, _ in rows)
            counts.extend(row_counts for _, row_counts in rows)

        at, stored_end = start, min(end, self._stored)
        for row in sorted(row for row in self._changed if start <= row < stored_end):
            stored(at, row)
            given([self._changed[row]])
            at = row + 1
        stored(at, stored_end)
        given(self._added[max(start - self._stored, 0) : max(end - self._stored, 0)])
        return np.concatenate(lengths), np.concatenate(terms), np.concatenate(counts)

    def __len__(self) -> int:
        return self._stored + len(self._added)

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        index = index + len(self) if index < 0 else index
        if index >= self._stored:
            return self._added[index - self._stored]
        changed = self._changed.get(index)
        if changed is not None:
            return changed
        start, end = self._offsets[index], self._offsets[index + 1]
        return self._terms[start:end], self._counts[start:end]

    def __setitem__(self, index: int, value: tuple[np.ndarray, np.ndarray]) -> None:
        if index >= self._stored:
            self._added[index - self._stored] = value
        else:
            self._changed[index] = value

    def append(self, value: tuple[np.ndarray, np.ndarray]) -> None:
        self._added.append(value)


class Vectors:
    """The rows' unit vectors: a generation's mapped matrix, which every process shares, and a
    private one for the rows added since (growing the mapped one would copy all of it into the
    process's memory at its first append)."""

    def __init__(self, base: np.ndarray) -> None:
        self.base = base
        self.added = np.empty((0, base.shape[1]), dtype=np.float32)

    def reserve(self, capacity: int, used: int) -> None:
        """Room for `capacity` rows, the first `used` kept."""
        extra = capacity - len(self.base)
        if extra > len(self.added):
            grown = np.zeros((extra, self.base.shape[1]), dtype=np.float32)
            kept = max(used - len(self.base), 0)
            grown[:kept] = self.added[:kept]
            self.added = grown

    def __setitem__(self, row: int, vector: np.ndarray | float) -> None:
        if row < len(self.base):
            self.base[row] = vector
        else:
            self.added[row - len(self.base)] = vector

    def rows(self, rows: np.ndarray) -> np.ndarray:
        """The vectors of these rows, gathered (a copy)."""
        split = len(self.base)
        if not len(rows) or rows.max() < split:
            return self.base[rows]
        gathered = np.empty((len(rows), self.base.shape[1]), dtype=np.float32)
        low = rows < split
        gathered[low], gathered[~low] = self.base[rows[low]], self.added[rows[~low] - split]
        return gathered

    def similarity(self, query: np.ndarray, n: int) -> np.ndarray:
        """The dot products of the first n rows with `query`."""
        split = len(self.base)
        if n <= split:
            return self.base[:n] @ query
        return np.concatenate([self.base @ query, self.added[: n - split] @ query])

    def parts(self, n: int) -> list[np.ndarray]:
        """The first n rows, as the (mapped, added) parts that hold them."""
        split = min(len(self.base), n)
        return [self.base[:split], self.added[: n - split]]


class MemoryIds:
    """Which memory each cached memory row is (links and graph requests name memories by id),
    both ways. A generation's pairs stay in its arrays, searched by bisection: its memories' pks
    in ascending order with their ids, and the ids sorted with their pks. Pairs set since are
    kept in dicts over them, and pks changed since in a set. (Two dicts of a million ids took a
    new process a third of a second and 200 MB before its first search.)"""

    def __init__(self, arrays: Any = None) -> None:
        empty_pks, empty_ids = np.empty(0, dtype=np.int64), np.empty(0, dtype=str)
        self._pks = empty_pks if arrays is None else arrays["memory_pks"]
        self._ids = empty_ids if arrays is None else arrays["memory_ids"]
        self._sorted_ids = empty_ids if arrays is None else arrays["memory_sorted_ids"]
        self._sorted_pks = empty_pks if arrays is None else arrays["memory_sorted_pks"]
        self._id_of: dict[int, str] = {}
        self._pk_of: dict[str, int] = {}
        self._changed: set[int] = set()  # pks whose stored pair, if any, no longer counts

    def set(self, pk: int, memory_id: str) -> None:
        self._id_of[pk], self._pk_of[memory_id] = memory_id, pk
        self._changed.add(pk)

    def remove(self, pk: int) -> None:
        memory_id = self._id_of.pop(pk, None)
        if memory_id is not None and self._pk_of.get(memory_id) == pk:
            del self._pk_of[memory_id]
        self._changed.add(pk)

    def pks_of(self, memory_ids: list[str]) -> list[int]:
        """The pk of each memory id, or -1 for one that is not cached."""
        positions = np.searchsorted(self._sorted_ids, memory_ids).tolist() if memory_ids else []
        pks = []
        for memory_id, at in zip(memory_ids, positions, strict=True):
            pk = self._pk_of.get(memory_id)
            if pk is None:
                stored = at < len(self._sorted_ids) and self._sorted_ids[at] == memory_id
                pk = int(self._sorted_pks[at]) if stored else -1
                pk = -1 if pk in self._changed else pk
            pks.append(pk)
        return pks

    def ids_of(self, pks: list[int]) -> list[str]:
        """The memory id of each of these pks of cached memories."""
        found = np.searchsorted(self._pks, pks).tolist()
        return [self._id_of[pk] if pk in self._id_of else str(self._ids[at]) for pk, at in zip(pks, found, strict=True)]

    def to_arrays(self) -> dict[str, np.ndarray]:
        changed = np.fromiter(self._changed, dtype=np.int64, count=len(self._changed))
        kept = ~np.isin(self._pks, changed)
        pks = np.concatenate([self._pks[kept], np.fromiter(self._id_of, dtype=np.int64, count=len(self._id_of))])
        ids = np.concatenate([self._ids[kept], np.array(list(self._id_of.values()), dtype=str)])
        order = np.argsort(pks, kind="stable")
        pks, ids = pks[order], ids[order]
        by_id = np.argsort(ids, kind="stable")
        return {"memory_pks": pks, "memory_ids": ids, "memory_sorted_ids": ids[by_id], "memory_sorted_pks": pks[by_id]}


@dataclass
class _Codes:
    """Dictionary encoding of one text column: 0 stands for NULL."""

    codes: dict[str, int] = field(default_factory=dict)

    def encode(self, value: str | None) -> int:
        if value is None:
            return 0
        code = self.codes.get(value)
        if code is None:
            code = self.codes[value] = len(self.codes) + 1
        return code

    def lookup(self, value: str | None) -> int | None:
        """The code of a value, or None when no row holds it (then nothing can match)."""
        return 0 if value is None else self.codes.get(value)


def _epoch(timestamp: str | None) -> float:
    return np.inf if timestamp is None else datetime.fromisoformat(timestamp).timestamp()


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def micros(timestamp: str) -> int:
    """Canonical UTC text as whole microseconds since 1970: exact, so that creation times
    compare in the index as they do in SQL."""
    return (datetime.fromisoformat(timestamp) - _EPOCH) // _MICROSECOND


@dataclass
class _Segment:
    """Postings of rows [start, end), as they were when the segment was built."""

    start: int
    end: int
    text: Postings
    dates: Postings

    def rows_of(self, postings: Postings, term: int) -> tuple[np.ndarray, np.ndarray]:
        rows, counts = postings.rows_of(term)
        return rows + self.start, counts


@dataclass
class _Overlay:
    """Postings of the rows rewritten since the segments were built; their segment postings are stale."""

    rows: np.ndarray  # the overlay's row numbers → cache rows
    stale: np.ndarray  # per cache row: its segment postings no longer count
    text: Postings
    dates: Postings

    def current(self, rows: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        keep = ~self.stale[rows]
        return rows[keep], counts[keep]

    def rows_of(self, postings: Postings, term: int) -> tuple[np.ndarray, np.ndarray]:
        rows, counts = postings.rows_of(term)
        return self.rows[rows], counts


@dataclass
class _KeywordIndex:
    """BM25 postings (in segments, plus an overlay) and length normalisation for the cached rows."""

    segments: list[_Segment]
    overlay: _Overlay | None
    neighbours: np.ndarray  # (2 * CONTEXT_TURNS, rows): row index of each context turn, or -1
    normaliser: np.ndarray  # BM25's k1 * (1 - b + b * length / average length), per row

    def _postings(self, field: str, term: int) -> tuple[np.ndarray, np.ndarray]:
        found = [segment.rows_of(getattr(segment, field), term) for segment in self.segments]
        if self.overlay is not None:
            found = [self.overlay.current(rows, counts) for rows, counts in found]
            found.append(self.overlay.rows_of(getattr(self.overlay, field), term))
        return np.concatenate([rows for rows, _ in found]), np.concatenate([counts for _, counts in found])

    def term_frequencies(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        """The rows that hold `term` in either field, and its weighted frequency there."""
        rows, counts = self._postings("text", term)
        spread = [(rows, counts)]
        for turn in self.neighbours:
            targets = turn[rows]
            found = targets >= 0
            spread.append((targets[found], CONTEXT_WEIGHT * counts[found]))
        date_rows, date_counts = self._postings("dates", term)
        spread.append((date_rows, CONTEXT_WEIGHT * date_counts))
        if all(len(extra) == 0 for extra, _ in spread[1:]):
            return rows, counts.astype(np.float64)
        matched, position = np.unique(np.concatenate([r for r, _ in spread]), return_inverse=True)
        return matched, np.bincount(position, weights=np.concatenate([c for _, c in spread]))


class SearchCache:
    """Live rows in primary-key order, with what vector and keyword ranking need of each."""

    def __init__(self, dim: int) -> None:
        self.size = 0
        self.pks = np.empty(0, dtype=np.int64)
        self.vectors = Vectors(np.empty((0, dim), dtype=np.float32))
        self.has_vector = np.empty(0, dtype=bool)
        self.types = np.empty(0, dtype=np.int16)
        self.scopes = {column: np.empty(0, dtype=np.int32) for column in SCOPE_COLUMNS}
        self.valid = np.empty(0, dtype=bool)
        self.expires = np.empty(0, dtype=np.float64)
        self.created = np.empty(0, dtype=np.int64)  # microseconds since 1970 (micros)
        self.is_message = np.empty(0, dtype=bool)
        self.seq = np.empty(0, dtype=np.int64)
        self.text_length = np.empty(0, dtype=np.float64)
        self.live = np.empty(0, dtype=bool)  # False: a tombstone (deleted; kept until compaction)
        self.dead = 0
        self.date_length = np.empty(0, dtype=np.float64)
        self.text_terms = RowTerms()
        self.date_terms = RowTerms()
        self.type_codes = _Codes()
        self.scope_codes = {column: _Codes() for column in SCOPE_COLUMNS}
        self.vocabulary = Vocabulary()
        self._keywords: _KeywordIndex | None = None
        # Searches share the cache (index/ lets them read at once); the postings they build lazily
        # are built by one of them at a time.
        self._keywords_lock = threading.Lock()
        # Postings are built per batch of appended rows; rows rewritten below them go to an overlay.
        self._segments: list[_Segment] = []
        self._rewritten: set[int] = set()
        self.memory_ids = MemoryIds()
        self._saved_turns: np.ndarray | None = None  # a generation's context turns, while still true

    # --- maintenance ------------------------------------------------------------------------

    _COLUMNS = (
        "pks",
        "has_vector",
        "types",
        "valid",
        "expires",
        "created",
        "is_message",
        "seq",
        "text_length",
        "date_length",
        "live",
    )

    def _arrays(self) -> list[np.ndarray]:
        return [*(getattr(self, name) for name in self._COLUMNS), *self.scopes.values()]

    def reserve(self, extra: int) -> None:
        """Grow the arrays geometrically, so appending n rows one batch at a time costs O(n).
        A generation's columns become private copies here, but not its matrix (Vectors), and
        grow by a quarter, not double: at 1M rows they take 64 MB, the matrix 1.5 GB."""
        needed = self.size + extra
        if needed <= len(self.pks):
            return
        capacity = max(needed, len(self.pks) + len(self.pks) // 4, 1024)
        self.vectors.reserve(capacity, self.size)

        def grown(array: np.ndarray) -> np.ndarray:
            bigger = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
            bigger[: self.size] = array[: self.size]
            return bigger

        for name in self._COLUMNS:
            setattr(self, name, grown(getattr(self, name)))
        self.scopes = {column: grown(codes) for column, codes in self.scopes.items()}

    def _write_row(self, index: int, row: Any) -> None:
        self.pks[index] = row["pk"]
        self.live[index] = True
        if row["embedding"] is None:
            self.vectors[index], self.has_vector[index] = 0.0, False
        else:
            self.vectors[index], self.has_vector[index] = np.frombuffer(row["embedding"], dtype=np.float32), True
        self.types[index] = self.type_codes.encode(row["record_type"])
        for column in SCOPE_COLUMNS:
            self.scopes[column][index] = self.scope_codes[column].encode(row[column])
        self.valid[index] = row["status"] == "valid"
        self.expires[index] = _epoch(row["expires_at"])
        self.created[index] = micros(row["created_at"])
        if row["kind"] == "memory":
            self.memory_ids.set(row["pk"], row["id"])
        message = row["kind"] == "message"
        self.is_message[index] = message
        self.seq[index] = row["seq_no"] if row["seq_no"] is not None else -1
        terms = term_counts(self.vocabulary.term_ids(words(row["text"]))) if row["text"] else _EMPTY_TERMS
        dates = date_words(row["timestamp"] or row["created_at"]) if message else []
        date_terms = term_counts(self.vocabulary.term_ids(dates)) if dates else _EMPTY_TERMS
        self.text_length[index], self.date_length[index] = terms[1].sum(), date_terms[1].sum()
        if index < len(self.text_terms):
            self.text_terms[index], self.date_terms[index] = terms, date_terms
        else:
            self.text_terms.append(terms)
            self.date_terms.append(date_terms)
        if index < self._indexed():
            self._rewritten.add(index)
        self._keywords, self._saved_turns = None, None

    def _bury(self, index: int) -> None:
        """Make a row a tombstone: it matches no filter, no vector and no keyword."""
        self.live[index], self.has_vector[index], self.valid[index], self.is_message[index] = False, False, False, False
        self.text_terms[index], self.date_terms[index] = _EMPTY_TERMS, _EMPTY_TERMS
        self.text_length[index] = self.date_length[index] = 0.0
        self.memory_ids.remove(int(self.pks[index]))
        if index < self._indexed():
            self._rewritten.add(index)
        self.dead += 1
        self._keywords, self._saved_turns = None, None

    def load(self, rows: Iterable[Any]) -> None:
        """Replace the contents with `rows` (live rows in primary-key order), a batch at a time:
        the rows of a million records (their vectors as bytes) take gigabytes while held."""
        self.size = 0
        self.text_terms, self.date_terms = RowTerms(), RowTerms()
        self.memory_ids = MemoryIds()
        self._keywords, self._segments, self._rewritten, self.dead = None, [], set(), 0
        for batch in itertools.batched(rows, LOAD_BATCH):
            self.append(batch)

    def append(self, rows: Iterable[Any]) -> None:
        """Add rows whose keys are above every cached key (new inserts)."""
        rows = list(rows)
        self.reserve(len(rows))
        for offset, row in enumerate(rows):
            self._write_row(self.size + offset, row)
        self.size += len(rows)

    def refresh(self, pks: Iterable[int], rows: Iterable[Any]) -> None:
        """Bring the rows with keys `pks` in line with `rows`, their current state (absent = gone)."""
        current = {row["pk"]: row for row in rows}
        keys = self.pks[: self.size]
        for pk in set(pks):
            index = int(np.searchsorted(keys, pk))
            if index < self.size and keys[index] == pk:
                if pk in current:
                    self._write_row(index, current.pop(pk))
                elif self.live[index]:
                    self._bury(index)
        if not isinstance(self.vectors.base, np.memmap):
            # A generation's rows stay tombstones until the next one (its writer compacts): every
            # process compacting would copy the whole mapped matrix into its own memory at once.
            self.compact_if_due()
        if current:
            newest = int(self.pks[self.size - 1]) if self.size else -1
            self.append(sorted(current.values(), key=lambda row: row["pk"]))
            if min(current) < newest:  # rows not cached yet but below the newest key: rare enough to re-sort
                self._select(np.argsort(self.pks[: self.size], kind="stable"))

    def compact_if_due(self) -> None:
        """Drop the tombstones once they are MAX_DEAD_SHARE of the rows."""
        if self.dead > max(1000, MAX_DEAD_SHARE * self.size):
            self._select(np.flatnonzero(self.live[: self.size]))

    def _select(self, indexes: np.ndarray) -> None:
        """Keep the cached rows at `indexes`, in that order, in every column alike."""
        count = len(indexes)
        for array in self._arrays():
            array[:count] = array[: self.size][indexes]
        self.vectors = Vectors(self.vectors.rows(indexes))
        self.vectors.reserve(len(self.pks), count)  # the other columns' capacity
        self.text_terms = RowTerms.of(self.text_terms[i] for i in indexes)
        self.date_terms = RowTerms.of(self.date_terms[i] for i in indexes)
        self.size = count
        self.dead = int(count - self.live[:count].sum())
        self._keywords, self._segments, self._rewritten, self._saved_turns = None, [], set(), None

    def memory_rows(self, memory_ids: list[str]) -> list[int | None]:
        """The cache rows of these memories (None for one that is not cached), in one pass."""
        pks = np.array(self.memory_ids.pks_of(memory_ids), dtype=np.int64)
        found = np.searchsorted(self.pks[: self.size], pks)
        rows = []
        for pk, row in zip(pks.tolist(), found.tolist(), strict=True):
            rows.append(row if pk >= 0 and row < self.size and self.pks[row] == pk else None)
        return rows

    def live_vectors(self) -> dict[int, bool]:
        """{pk: whether it has a vector} of every live cached row (for the consistency check)."""
        live = self.live[: self.size]
        return dict(zip(self.pks[: self.size][live].tolist(), self.has_vector[: self.size][live].tolist(), strict=True))

    def distances(self, rows: np.ndarray, query: np.ndarray | None) -> list[float]:
        """Cosine distances of these rows to a unit query vector; NaN where either has no vector."""
        if query is None:
            return [float("nan")] * len(rows)
        distances = 1.0 - self.vectors.rows(rows) @ query
        return np.where(self.has_vector[rows], distances, np.nan).tolist()

    # --- persistence ----------------------------------------------------------------------

    def to_arrays(self) -> dict[str, Any]:
        """Everything the cache holds, as flat arrays for a generation (generations.py): per-row
        terms become CSR, the postings one segment, and the matrix its parts, not joined."""
        n = self.size
        arrays: dict[str, Any] = {name: getattr(self, name)[:n] for name in self._COLUMNS}
        arrays["matrix"] = self.vectors.parts(n)
        arrays.update({f"scope_{column}": codes[:n] for column, codes in self.scopes.items()})
        for name, per_row in (("text", self.text_terms), ("date", self.date_terms)):
            lengths, arrays[f"{name}_terms"], arrays[f"{name}_counts"] = per_row.csr(0, n)
            arrays[f"{name}_offsets"] = np.concatenate([[0], np.cumsum(lengths)])
        arrays["type_values"] = _strings(self.type_codes.codes)
        for column, codes in self.scope_codes.items():
            arrays[f"scope_values_{column}"] = _strings(codes.codes)
        arrays["stems"] = _strings(self.vocabulary.ids)
        with self._keywords_lock:  # the postings too, as one segment, so that no process rebuilds them
            if len(self._segments) != 1 or self._rewritten or self._indexed() != n:
                self._keywords, self._segments, self._rewritten = None, [], set()
            keywords = self._keywords or self._build_keyword_index()
        for name, postings in (("text", keywords.segments[0].text), ("date", keywords.segments[0].dates)):
            for part in ("rows", "counts", "starts"):
                arrays[f"{name}_postings_{part}"] = getattr(postings, part)
        arrays["context_turns"] = keywords.neighbours
        arrays.update(self.memory_ids.to_arrays())
        return arrays

    @classmethod
    def from_arrays(cls, dim: int, arrays: Any) -> SearchCache:
        """The cache `to_arrays` saved, taking over the arrays of the mapping (no copies); a
        ValueError when they do not fit together."""
        cache = cls(dim)
        for name in cls._COLUMNS:
            setattr(cache, name, arrays[name])
        cache.vectors = Vectors(arrays["matrix"])
        cache.scopes = {column: arrays[f"scope_{column}"] for column in SCOPE_COLUMNS}
        cache.size = n = len(cache.pks)
        if cache.vectors.base.shape != (n, dim):
            raise ValueError(f"the saved index holds {cache.vectors.base.shape} vectors, not ({n}, {dim})")
        columns = [*(getattr(cache, name) for name in cls._COLUMNS), *cache.scopes.values()]
        if any(len(column) != n for column in columns) or arrays["context_turns"].shape != (2 * CONTEXT_TURNS, n):
            raise ValueError("the saved index's columns differ in length")
        cache.dead = int(n - cache.live.sum())
        for name in ("text", "date"):
            offsets, terms, counts = (arrays[f"{name}_{part}"] for part in ("offsets", "terms", "counts"))
            if len(offsets) != n + 1 or offsets[-1] != len(terms) or len(terms) != len(counts):
                raise ValueError(f"the saved index's {name} terms do not fit its rows")
            setattr(cache, f"{name}_terms", RowTerms(offsets, terms, counts))
        postings = {}
        for name in ("text", "date"):
            postings[name] = Postings.from_arrays(
                *(arrays[f"{name}_postings_{part}"] for part in ("rows", "counts", "starts"))
            )
        cache._segments = [_Segment(0, n, postings["text"], postings["date"])]
        cache._saved_turns = arrays["context_turns"]
        cache.type_codes = _Codes(_codes_of(arrays["type_values"]))
        cache.scope_codes = {column: _Codes(_codes_of(arrays[f"scope_values_{column}"])) for column in SCOPE_COLUMNS}
        cache.vocabulary.ids = {stem: i for i, stem in enumerate(arrays["stems"].tolist())}
        cache.memory_ids = MemoryIds(arrays)
        return cache

    # --- filters ----------------------------------------------------------------------------

    def filter_mask(
        self,
        types: tuple[str, ...],
        exact: dict[str, str | None],
        include_invalid: bool,
        now: float,
        allowed_pks: np.ndarray | None = None,
        created_at_or_before: str | None = None,
    ) -> np.ndarray | None:
        """Which rows pass the filters; None means every row does. `created_at_or_before`
        (canonical UTC text) keeps the rows created at or before it."""
        n = self.size
        mask: np.ndarray | None = None

        def narrow(condition: np.ndarray) -> None:
            nonlocal mask
            mask = condition if mask is None else mask & condition

        type_codes = [code for code in (self.type_codes.lookup(t) for t in types) if code is not None]
        if len(type_codes) < len(self.type_codes.codes):
            narrow(np.isin(self.types[:n], type_codes))
        for column, value in exact.items():
            code = self.scope_codes[column].lookup(value)
            narrow(np.zeros(n, dtype=bool) if code is None else self.scopes[column][:n] == code)
        if not include_invalid:
            narrow(self.valid[:n])
        if self.dead:
            narrow(self.live[:n])
        if np.isfinite(self.expires[:n]).any():
            narrow(self.expires[:n] > now)
        if allowed_pks is not None:
            narrow(np.isin(self.pks[:n], allowed_pks, assume_unique=True))
        if created_at_or_before is not None:
            narrow(self.created[:n] <= micros(created_at_or_before))
        return mask

    def status_mask(
        self, types: tuple[str, ...], exact: dict[str, str | None], statuses: frozenset[str], now: float
    ) -> np.ndarray:
        """filter_mask's rows (live, unexpired, of these types and scope) of these effective
        statuses ("valid", "invalid"), as a full boolean array."""
        n = self.size
        mask = self.filter_mask(types, exact, True, now)
        mask = self.live[:n].copy() if mask is None else mask & self.live[:n]  # never the cache's own array
        if "invalid" not in statuses:
            return mask & self.valid[:n]
        if "valid" not in statuses:
            return mask & ~self.valid[:n]
        return mask

    # --- vector ranking ---------------------------------------------------------------------

    def vector_top_k(self, query: np.ndarray, mask: np.ndarray | None, k: int) -> list[tuple[int, float]]:
        """The k nearest embedded rows by cosine distance, as (pk, distance); ties go to the older row."""
        n = self.size
        vectors = self.has_vector[:n]
        rows = None if mask is None and vectors.all() else np.flatnonzero(vectors if mask is None else mask & vectors)
        if rows is None:
            return _top_k(self.pks[:n], 1.0 - self.vectors.similarity(query, n), k)
        if len(rows) == 0:
            return []
        if len(rows) < GATHER_SHARE * n:  # a narrow filter: gather its rows, then scan them
            return _top_k(self.pks[rows], 1.0 - self.vectors.rows(rows) @ query, k)
        # A wide one: scanning every row costs less than copying most of the matrix.
        return _top_k(self.pks[rows], (1.0 - self.vectors.similarity(query, n))[rows], k)

    # --- keyword ranking --------------------------------------------------------------------

    def keyword_top_k(self, query: str, mask: np.ndarray | None, k: int) -> list[tuple[int, float]]:
        """The k rows with the highest BM25 score for the query, as (pk, score); ties go to the older row."""
        terms = self.vocabulary.lookup(query_stems(query))
        if not terms or self.size == 0:
            return []
        index = self._keyword_index()
        scores = np.zeros(self.size, dtype=np.float64)
        scored = []
        for term in terms:
            rows, tf = index.term_frequencies(term)
            # FTS5's IDF, over every row whatever the filters, with its floor for very common terms.
            idf = max(np.log((self.size - self.dead - len(rows) + 0.5) / (len(rows) + 0.5)), 1e-6)
            if mask is not None:
                keep = mask[rows]
                rows, tf = rows[keep], tf[keep]
            scores[rows] += idf * tf * (BM25_K1 + 1) / (tf + index.normaliser[rows])
            scored.append(rows)
        hits = np.unique(np.concatenate(scored))
        hits = hits[scores[hits] > 0]
        return [(pk, -negated) for pk, negated in _top_k(self.pks[hits], -scores[hits], k)]

    def _indexed(self) -> int:
        """How many rows (from the first) the postings segments cover."""
        return self._segments[-1].end if self._segments else 0

    def _keyword_index(self) -> _KeywordIndex:
        """Postings and context links: rows appended since the last search get a segment of their
        own (merged into one when segments pile up); context and lengths are recomputed."""
        with self._keywords_lock:
            return self._keywords or self._build_keyword_index()

    def _build_keyword_index(self) -> _KeywordIndex:
        n = self.size
        indexed = self._indexed()
        rebuild = len(self._rewritten) > MAX_REWRITTEN_SHARE * n
        if rebuild or len(self._segments) >= MAX_SEGMENTS or n - indexed > indexed:
            indexed, self._segments, self._rewritten = 0, [], set()
        if indexed < n or not self._segments:
            text, dates = Postings(*self.text_terms.csr(indexed, n)), Postings(*self.date_terms.csr(indexed, n))
            self._segments.append(_Segment(indexed, n, text, dates))
        overlay = None
        if self._rewritten:
            rows = np.array(sorted(self._rewritten), dtype=np.int64)
            stale = np.zeros(n, dtype=bool)
            stale[rows] = True
            text = RowTerms.of(self.text_terms[i] for i in rows.tolist()).csr()
            dates = RowTerms.of(self.date_terms[i] for i in rows.tolist()).csr()
            overlay = _Overlay(rows, stale, Postings(*text), Postings(*dates))
        neighbours = self._context_turns() if self._saved_turns is None else self._saved_turns
        text_lengths = self.text_length[:n]
        context_lengths = self.date_length[:n].copy()
        for turn in neighbours:
            found = turn >= 0
            context_lengths[found] += text_lengths[turn[found]]
        lengths = text_lengths + context_lengths
        average = max(float(lengths.sum()) / max(n - self.dead, 1), 1.0)
        normaliser = BM25_K1 * (1 - BM25_B + BM25_B * lengths / average)
        self._keywords = _KeywordIndex(list(self._segments), overlay, neighbours, normaliser)
        return self._keywords

    def _context_turns(self) -> np.ndarray:
        """For each row, the rows of the messages around it in its thread (-1 where there is none)."""
        n = self.size
        turns = np.full((2 * CONTEXT_TURNS, n), -1, dtype=np.int32)
        threads = self.scopes["thread_id"][:n]
        messages = np.flatnonzero(self.is_message[:n] & (threads != 0))
        ordered = messages[np.lexsort((self.seq[:n][messages], threads[messages]))]
        ordered_threads = threads[ordered]
        for distance in range(1, CONTEXT_TURNS + 1):
            same = ordered_threads[distance:] == ordered_threads[:-distance]
            later, earlier = ordered[distance:][same], ordered[:-distance][same]
            turns[distance - 1, later] = earlier  # the turn `distance` before
            turns[CONTEXT_TURNS + distance - 1, earlier] = later  # the turn `distance` after
        return turns


def _top_k(pks: np.ndarray, distances: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The k smallest distances as (pk, distance), ties broken by the smaller (older) key."""
    if k < len(distances):
        nearest = np.argpartition(distances, k - 1)[:k]
        # Rows tied with the k-th distance may sit outside the partition; take them all.
        nearest = np.flatnonzero(distances <= distances[nearest].max())
    else:
        nearest = np.arange(len(distances))
    order = np.lexsort((pks[nearest], distances[nearest]))[:k]
    return [(int(pks[nearest][i]), float(distances[nearest][i])) for i in order]


def _strings(codes: dict[str, int]) -> np.ndarray:
    """The keys of a code dictionary in code order (codes count up from 0 or 1 without gaps)."""
    return np.array(sorted(codes, key=codes.__getitem__), dtype=str)


def _codes_of(values: np.ndarray) -> dict[str, int]:
    """The inverse of `_strings` for a _Codes dictionary (codes start at 1; 0 is NULL)."""
    return {value: code for code, value in enumerate(values.tolist(), start=1)}
