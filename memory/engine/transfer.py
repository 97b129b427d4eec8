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
ExportFormatError naming its line number. `check_export` reads a whole file as the import would,
writing nothing and keeping no record: every line within max_line_bytes, and everything the store
would refuse while writing a batch, or the API at an upload (ImportRules), refused with its line.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from .activity.audit import record_export
from .images import check_image
from .limits import MAX_CONTENT_CHARS, MAX_JSON_CHARS
from .snapshot import (
    RestorePlan,
    Snapshot,
    check_record,
    check_relation,
    check_thread,
    record_and_stored_from_json,
    relation_from_json,
    relation_to_json,
    thread_from_json,
    thread_to_json,
)
from .stores.arguments import kind_of, thread_named
from .types import (
    MESSAGE_TYPE,
    MIB,
    NOT_SET,
    ImageInputLimitConfig,
    ImageRecord,
    Record,
    RecordRelation,
    ThreadRecord,
)

FORMAT_NAME = "oam-export"
FORMAT_VERSION = 1
EXPORT_CALL = "export_lines"
"""The entry point an export's activity events name (the dashboard, the API and oam_export all read through it)."""
"""The version of the export format; an import refuses a file of another version."""
DEFAULT_IMPORT_BATCH = 500
MAX_BATCH_BYTES = 64 * MIB
"""An import batch also ends at the line that brings its lines to this many bytes: 500 lines of
full-size images would otherwise be held at once (about 15 GB)."""
LINE_SLACK_BYTES = MIB
"""What a line holds besides its texts and image at their limits: ids, field names, times, numbers."""
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
    line per thread, record and relation. At most one scope argument (none: the whole store).
    When the source records its activity, the export is recorded as read (activity/audit.py:
    an "export" event per user whose data it holds, ids and counts only) once its snapshot is
    taken, under the caller of the block that asks for the header."""
    scope = _scope(thread_id, user_id, agent_id)
    snapshot = source.snapshot(**scope)
    record_export(getattr(source, "activity", None), scope, snapshot, EXPORT_CALL)
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


def max_line_bytes(limits: ImageInputLimitConfig | None = None) -> int:
    """The longest line (its "\\n" apart) an export can hold for a store with these image limits
    (default: ImageInputLimitConfig's): an image record at the limits, its bytes in base64 with a
    description and an index text of MAX_CONTENT_CHARS characters each (six bytes a character at
    worst, written as JSON: "\\u001f") and MAX_JSON_CHARS of metadata (four bytes a character in
    UTF-8), plus LINE_SLACK_BYTES. No valid record is longer (a message's or a thread's texts are
    fewer), so a longer line is refused before it is read whole: an import holds at most this much
    of a line, whatever the file."""
    limits = limits or ImageInputLimitConfig()
    image = -(-limits.max_raw_image_bytes // 3) * 4
    return image + 2 * 6 * MAX_CONTENT_CHARS + 4 * MAX_JSON_CHARS + LINE_SLACK_BYTES


MAX_LINE_BYTES = max_line_bytes()
"""max_line_bytes for the default image limits (10 MiB): 31,029,592 bytes, about 30 MiB."""


def _bounded_lines(source: Any, limit: int) -> Iterator[str | bytes]:
    """A file's lines, each read with at most `limit` + 1 bytes (characters, from a text stream):
    a longer line comes as its first `limit` + 1, which the reader refuses without reading on."""
    while line := source.readline(limit + 1):
        yield line


@dataclass
class Batch:
    """Lines `first`..`last` of a file as a snapshot to restore, how many lines and bytes it holds."""

    first: int
    last: int
    snapshot: Snapshot
    size: int
    line_bytes: int = 0


class ImportRules:
    """What an import refuses beyond a line's shape, checked line by line as the file is read, so
    that the first pass (check_export) refuses everything the store would refuse while writing a
    batch, names its line, and nothing is imported:

    - the store's own rules of a record to restore (snapshot.check_thread, check_record,
      check_relation: ids — length, characters, the id rule of every write —, sizes, metadata);
    - an image's bytes, checked as an upload's are (images.check_image, with the image limits of
      the memory imported into): type, size, pixels, damage;
    - an id the file holds twice (a thread, a record of one kind, a link, or two links of one pair):
      across batches the second would be skipped as "already there", within one the store refuses;
    - a record naming a thread neither the file (threads come first) nor the store holds, as the
      dashboard and the API refuse one (stores.base.thread_named; a message needs a thread), and an
      image naming a message neither the file (before it) nor the store holds.

    Nothing of a line is kept but 128-bit hashes of its ids (and of the threads and messages found
    in the store), so the check of a file of any size holds one line at a time."""

    def __init__(self, target: Any) -> None:
        self.store = getattr(target, "store", target)  # an AgentMemory's store, or a MemoryStore
        self.limits = getattr(target, "image_input_limit_config", None) or ImageInputLimitConfig()
        self._seen: set[int] = set()

    @staticmethod
    def _key(*parts: str) -> int:
        text = "\x1f".join(parts).encode("utf-8", "surrogatepass")
        return int.from_bytes(hashlib.blake2b(text, digest_size=16).digest(), "big")

    def _once(self, what: str, *key: str) -> None:
        hashed = self._key(*key)
        if hashed in self._seen:
            raise ValueError(f"{what} is in the file twice (an id names one object)")
        self._seen.add(hashed)

    def _refer(self, kind: str, object_id: str, look_up: Callable[[], Any]) -> None:
        """An object a record names: one the file held before it, else one the store holds
        (`look_up` raises when it does not), which is then remembered."""
        if self._key(kind, object_id) in self._seen:
            return
        stored = self._key("stored " + kind, object_id)
        if stored not in self._seen:
            look_up()
            self._seen.add(stored)

    def thread(self, thread: ThreadRecord, where: str) -> None:
        check_thread(thread, where)
        self._once(f"the thread {thread.id!r}", "thread", thread.id)

    def record(self, record: Record, stored: dict[str, Any] | None, where: str) -> None:
        check_record(record, stored, where)
        if isinstance(record, ImageRecord):
            try:
                check_image(record.bytes, record.mime_type, self.limits)
            except ValueError as error:
                raise ValueError(f"{where}.bytes: {error}") from None
        kind = kind_of(record.record_type)
        self._once(f"the {kind} {record.id!r}", kind, record.id)
        thread_id = getattr(record, "thread_id", None)
        if thread_id is not None:
            self._refer("thread", thread_id, lambda: thread_named(self.store, thread_id, f"{where}.thread_id"))
        elif record.record_type == MESSAGE_TYPE:
            raise ValueError(f"{where}.thread_id is missing: a message belongs to a thread")
        message_id = getattr(record, "message_id", None)
        if message_id is not None:
            self._refer(MESSAGE_TYPE, message_id, lambda: self._stored_message(message_id, where))

    def _stored_message(self, message_id: str, where: str) -> None:
        if self.store.get(MESSAGE_TYPE, message_id) is None:
            raise ValueError(f"{where}.message_id names no message: {message_id!r}")

    def relation(self, relation: RecordRelation, where: str) -> None:
        check_relation(relation, where)
        self._once(f"the link {relation.id!r}", "relation", relation.id)
        ends = f"{relation.source_record_id!r} and {relation.target_record_id!r}"
        self._once(f"a link between {ends}", "pair", RestorePlan.pair(relation))


class ExportReader:
    """An export read line by line: `header` (checked on construction: format and version),
    `items()` the rest parsed, `batches(size)` as snapshots of at most `size` lines. Takes an
    open file (binary or text) or lines of text or bytes (a list). A damaged line is an
    ExportFormatError naming it; so is a line longer than max_line_bytes (read from a file, no
    more of it than that), a line `rules` (ImportRules) refuse, and a file that ends before the
    header's counts (truncated) or goes on after them."""

    def __init__(self, lines: Iterable[str | bytes], rules: ImportRules | None = None) -> None:
        self.rules = rules
        self.max_line_bytes = max_line_bytes(rules.limits if rules is not None else None)
        bounded = hasattr(lines, "readline")  # a file: each line read no further than the limit
        self._lines = _bounded_lines(lines, self.max_line_bytes) if bounded else iter(lines)
        self.line = 0
        self.line_bytes = 0
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
            self.line_bytes = len(raw) - raw.endswith(b"\n")
            self._check_length()
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ExportFormatError(f"not UTF-8 text ({error.reason} at byte {error.start})", self.line) from None
        else:
            self.line_bytes = len(raw) - raw.endswith("\n")
            self._check_length()  # as many characters are at least as many bytes
            if not raw.isascii():
                self.line_bytes = len(raw.encode("utf-8", "surrogatepass")) - raw.endswith("\n")
                self._check_length()
        return raw

    def _check_length(self) -> None:
        if self.line_bytes > self.max_line_bytes:
            raise ExportFormatError(
                f"the line is longer than {self.max_line_bytes:,} bytes, the most a record of an export "
                "can take (an image at the size limit, in base64, with its texts at theirs); it was not read further",
                self.line,
            )

    def _parse(self, text: str) -> Any:
        try:
            return json.loads(text, parse_constant=_no_constant)
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

    def items(self) -> Iterator[tuple[int, str, Any, dict[str, Any] | None]]:
        """(line number, kind, thread, record or relation, what is stored of a record) of each line
        after the header: a line that is not a valid one, or that the rules refuse, is an
        ExportFormatError naming it."""
        for number, kind, value in self.entries():
            stored = None
            try:
                if kind == "thread":
                    item = thread_from_json(value, kind)
                    if self.rules is not None:
                        self.rules.thread(item, kind)
                elif kind == "record":
                    item, stored = record_and_stored_from_json(value, kind)
                    if self.rules is not None:
                        self.rules.record(item, stored, kind)
                else:
                    item = relation_from_json(value, kind)
                    if self.rules is not None:
                        self.rules.relation(item, kind)
            except ValueError as error:
                raise ExportFormatError(str(error), number) from None
            yield number, kind, item, stored

    def batches(self, size: int = DEFAULT_IMPORT_BATCH) -> Iterator[Batch]:
        """The lines after the header (items()) as snapshots of at most `size` lines each, or
        fewer: a batch ends at the line that brings it to MAX_BATCH_BYTES."""
        if type(size) is not int or size < 1:
            raise ValueError(f"size must be a positive integer, not {size!r}")
        batch: Batch | None = None
        for number, kind, item, stored in self.items():
            if batch is None:
                batch = Batch(number, number, Snapshot(), 0)
            if kind == "thread":
                batch.snapshot.threads.append(item)
            elif kind == "record":
                batch.snapshot.add_record(item, stored)
            else:
                batch.snapshot.relations.append(item)
            batch.last, batch.size = number, batch.size + 1
            batch.line_bytes += self.line_bytes
            if batch.size >= size or batch.line_bytes >= MAX_BATCH_BYTES:
                yield batch
                batch = None
        if batch is not None:
            yield batch


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def check_export(target: Any, lines: Iterable[str | bytes]) -> dict[str, Any]:
    """Read a whole export as importing it into `target` (an AgentMemory or a MemoryStore) would,
    writing nothing: its header, or an ExportFormatError naming the first line the import would
    refuse (damaged, too long, or refused by ImportRules). One line at a time: it keeps no record."""
    reader = ExportReader(lines, ImportRules(target))
    for _ in reader.items():
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
    """Import an export into `target` (an AgentMemory or a MemoryStore, or what stands for one:
    its `restore`, `store` and `image_input_limit_config`), `batch_size` lines per transaction (or
    fewer, MAX_BATCH_BYTES): each batch is restored with its ids, times, statuses, expiry and
    versions; what is already there is skipped and reported, so that running an interrupted import
    again completes it. `progress(done, total)` after each batch. Each line is checked as
    check_export does, but only as it comes: a line the import refuses, or a failed batch, raises
    (ExportFormatError naming the line, or the store's error with the batch's lines) and the
    batches before it stay. Run check_export first to refuse a bad file with nothing imported."""
    reader = ExportReader(lines, ImportRules(target))
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
