"""The export/import format: a whole store or a scope as JSON Lines ("oam-export", version 1).

An export is UTF-8 text, one JSON object per line, keys sorted, no spaces, lines ending "\\n":

    {"counts":{"records":R,"relations":L,"threads":T},"format":"oam-export","scope":{...},"version":1}
    {"thread":{...}}        T lines: thread_to_json (metadata, settings, summary, topics, times, version)
    {"record":{...}}        R lines: Snapshot.record_json (messages, memories, images with their bytes
                            in base64, user and agent profiles; ids, times, expires_at, version, and
                            under "stored" the explicit status, event time and index text)
    {"relation":{...}}      L lines: relation_to_json (links with their ids, labels, times, metadata)

The first line, the header, names the format and its version, the scope exported ({} for the
whole store, else {"user_id": ...}, {"agent_id": ...} or {"thread_id": ...}: what the matching
delete would remove, MemoryStore.snapshot) and how many lines of each kind follow; records are in
the order they were stored (a message before its images), relations last (their ends before them).
Nothing in a file depends on when it was written: an export, imported into a fresh store and
exported again, gives the same bytes.

`write_export` builds on the engine's snapshot: MemoryStore.snapshot is one consistent read, so
the exported scope is held in memory once (as records; the lines are written one at a time).
`import_export` reads a file a batch of lines at a time and restores each batch with
MemoryStore.restore (skip_existing, keep_versions), one transaction per batch: an interrupted
import leaves whole batches, and running it again skips every id already there and goes on.
A file of another format or version is refused before anything is written; a damaged line is an
ExportFormatError naming its line number.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from .snapshot import Snapshot, relation_from_json, relation_to_json, thread_from_json, thread_to_json
from .types import NOT_SET

FORMAT_NAME = "oam-export"
FORMAT_VERSION = 1
"""The version of the export format; an import refuses a file of another version."""
DEFAULT_IMPORT_BATCH = 500
KINDS = ("thread", "record", "relation")
_COUNT_KEYS = {"thread": "threads", "record": "records", "relation": "relations"}
_SKIP_REASONS = {"exists": "already in the store (imported before, or an earlier run of this import)"}


class ExportFormatError(ValueError):
    """A file that is not an export of this format and version, or a damaged line (`line`, from 1)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message if line is None else f"line {line}: {message}")
        self.line = line


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False) + "\n"


def _scope(thread_id: Any, user_id: Any, agent_id: Any) -> dict[str, Any]:
    given = {"thread_id": thread_id, "user_id": user_id, "agent_id": agent_id}
    return {name: value for name, value in given.items() if value is not NOT_SET and value is not None}


def export_lines(
    source: Any, *, thread_id: Any = NOT_SET, user_id: Any = NOT_SET, agent_id: Any = NOT_SET
) -> Iterator[str]:
    """The lines of an export of `source` (an AgentMemory or a MemoryStore): the header, then one
    line per thread, record and relation. At most one scope argument (none: the whole store)."""
    scope = _scope(thread_id, user_id, agent_id)
    snapshot = source.snapshot(**scope)
    counts = {"threads": len(snapshot.threads), "records": len(snapshot.records), "relations": len(snapshot.relations)}
    yield _dumps({"format": FORMAT_NAME, "version": FORMAT_VERSION, "scope": scope, "counts": counts})
    for thread in snapshot.threads:
        yield _dumps({"thread": thread_to_json(thread)})
    for record in snapshot.records:
        yield _dumps({"record": snapshot.record_json(record)})
    for relation in snapshot.relations:
        yield _dumps({"relation": relation_to_json(relation)})


def write_export(
    source: Any,
    out: TextIO,
    *,
    thread_id: Any = NOT_SET,
    user_id: Any = NOT_SET,
    agent_id: Any = NOT_SET,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, int]:
    """Write an export to `out` (a text stream); `progress(done, total)` after each line after the
    header. The counts of the header."""
    lines = export_lines(source, thread_id=thread_id, user_id=user_id, agent_id=agent_id)
    header = next(lines)
    out.write(header)
    counts = json.loads(header)["counts"]
    total = sum(counts.values())
    for done, line in enumerate(lines, 1):
        out.write(line)
        if progress is not None:
            progress(done, total)
    return counts


# --- reading ---------------------------------------------------------------------------------------


@dataclass
class Batch:
    """Lines `first`..`last` of a file as a snapshot to restore, and how many lines it holds."""

    first: int
    last: int
    snapshot: Snapshot
    size: int


class ExportReader:
    """An export read line by line: `header` (checked on construction: format and version),
    `batches(size)` the rest as snapshots of at most `size` lines. Takes lines of text or bytes
    (an open file, a list). A damaged line is an ExportFormatError naming it; so is a file that
    ends before the header's counts (truncated) or goes on after them."""

    def __init__(self, lines: Iterable[str | bytes]) -> None:
        self._lines = iter(lines)
        self.line = 0
        first = self._next()
        if first is None:
            raise ExportFormatError("the file is empty: an export starts with its header line")
        self.header = self._header(first)
        self.counts = dict(self.header["counts"])
        self.total = sum(self.counts.values())
        self.seen: Counter[str] = Counter()

    def _next(self) -> str | None:
        try:
            raw = next(self._lines)
        except StopIteration:
            return None
        self.line += 1
        if isinstance(raw, bytes):
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ExportFormatError(f"not UTF-8 text ({error.reason} at byte {error.start})", self.line) from None
        return raw

    def _parse(self, text: str) -> Any:
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise ExportFormatError(f"not a JSON object ({error.msg} at column {error.colno})", self.line) from None
        except (RecursionError, ValueError) as error:  # nested too deeply; an integer too long to convert
            reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
            raise ExportFormatError(f"not a JSON object the engine can read ({reason})", self.line) from None

    def _header(self, text: str) -> dict[str, Any]:
        what = f"this is not an {FORMAT_NAME} file: its first line must be the header naming the format"
        try:
            header = json.loads(text)
        except (json.JSONDecodeError, RecursionError, ValueError):
            raise ExportFormatError(what, 1) from None
        if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
            raise ExportFormatError(what, 1)
        version = header.get("version")
        if version != FORMAT_VERSION:
            raise ExportFormatError(
                f"the file is {FORMAT_NAME} version {version!r}; this version of the engine reads version "
                f"{FORMAT_VERSION} only: export it again with the version that reads it, or convert it",
                1,
            )
        counts = header.get("counts")
        if (
            not isinstance(counts, dict)
            or sorted(counts) != sorted(_COUNT_KEYS.values())
            or not all(type(n) is int and n >= 0 for n in counts.values())
        ):
            raise ExportFormatError('the header\'s "counts" must give threads, records and relations', 1)
        if not isinstance(header.get("scope"), dict):
            raise ExportFormatError('the header\'s "scope" must be an object', 1)
        return header

    def entries(self) -> Iterator[tuple[int, str, Any]]:
        """(line number, kind, JSON value) of each line after the header, checked for shape."""
        order = 0
        while (text := self._next()) is not None:
            if not text.strip():
                raise ExportFormatError("an empty line (an export has none)", self.line)
            data = self._parse(text)
            if not isinstance(data, dict) or len(data) != 1 or next(iter(data)) not in KINDS:
                raise ExportFormatError(f"must be an object with one key, {', '.join(KINDS)}", self.line)
            kind, value = next(iter(data.items()))
            if KINDS.index(kind) < order:
                raise ExportFormatError(
                    f"a {kind} after the {KINDS[order]}s: threads come first, relations last", self.line
                )
            order = KINDS.index(kind)
            self.seen[_COUNT_KEYS[kind]] += 1
            if self.seen[_COUNT_KEYS[kind]] > self.counts[_COUNT_KEYS[kind]]:
                raise ExportFormatError(
                    f"more {_COUNT_KEYS[kind]} than the header's {self.counts[_COUNT_KEYS[kind]]}", self.line
                )
            yield self.line, kind, value
        missing = {key: n - self.seen[key] for key, n in self.counts.items() if self.seen[key] < n}
        if missing:
            lacking = ", ".join(f"{n} {key}" for key, n in missing.items())
            raise ExportFormatError(
                f"the file ends after line {self.line} but its header announces {lacking} more: it is truncated"
            )

    def batches(self, size: int = DEFAULT_IMPORT_BATCH) -> Iterator[Batch]:
        """The lines after the header as snapshots of at most `size` lines each (a line that is not
        a valid thread, record or relation is an ExportFormatError naming it)."""
        if type(size) is not int or size < 1:
            raise ValueError(f"size must be a positive integer, not {size!r}")
        batch: Batch | None = None
        for number, kind, value in self.entries():
            if batch is None:
                batch = Batch(number, number, Snapshot(), 0)
            try:
                if kind == "thread":
                    batch.snapshot.threads.append(thread_from_json(value, kind))
                elif kind == "record":
                    batch.snapshot.add_record_json(value, kind)
                else:
                    batch.snapshot.relations.append(relation_from_json(value, kind))
            except ValueError as error:
                raise ExportFormatError(str(error), number) from None
            batch.last, batch.size = number, batch.size + 1
            if batch.size >= size:
                yield batch
                batch = None
        if batch is not None:
            yield batch


def check_export(lines: Iterable[str | bytes]) -> dict[str, Any]:
    """Read a whole export without writing anything: its header, or an ExportFormatError naming
    the first damaged line."""
    reader = ExportReader(lines)
    for _ in reader.batches(DEFAULT_IMPORT_BATCH):
        pass
    return reader.header


# --- importing -------------------------------------------------------------------------------------


@dataclass
class ImportReport:
    """What import_export wrote (`restored` by kind), what it skipped ((kind, id, reason)), how
    many lines it read, and the batches it committed."""

    restored: dict[str, int] = field(default_factory=lambda: {"threads": 0, "records": 0, "relations": 0})
    skipped: list[tuple[str, str, str]] = field(default_factory=list)
    lines: int = 0
    batches: int = 0

    def skipped_summary(self) -> list[tuple[str, str, int]]:
        """(kind, reason, how many) of what was skipped, the reasons spelled out."""
        counts = Counter((kind, _SKIP_REASONS.get(reason, reason)) for kind, _, reason in self.skipped)
        return [(kind, reason, n) for (kind, reason), n in sorted(counts.items())]


def import_export(
    target: Any,
    lines: Iterable[str | bytes],
    *,
    batch_size: int = DEFAULT_IMPORT_BATCH,
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Import an export into `target` (an AgentMemory or a MemoryStore), `batch_size` lines per
    transaction: each batch is restored with its ids, times, statuses, expiry and versions; what
    is already there is skipped and reported, so that running an interrupted import again
    completes it. `progress(done, total)` after each batch. A damaged line or a failed batch
    raises (ExportFormatError naming the line, or the store's error with the batch's lines);
    the batches before it stay."""
    reader = ExportReader(lines)
    report = ImportReport()
    for batch in reader.batches(batch_size):
        try:
            result = target.restore(batch.snapshot, skip_existing=True, keep_versions=True)
        except ExportFormatError:
            raise
        except ValueError as error:
            raise ValueError(f"lines {batch.first}-{batch.last}: {error}") from error
        for kind, n in result.restored.items():
            report.restored[kind] += n
        report.skipped.extend(result.skipped)
        report.lines += batch.size
        report.batches += 1
        if progress is not None:
            progress(report.lines, reader.total)
    return report
