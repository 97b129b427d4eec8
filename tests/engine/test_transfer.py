"""The export/import format (memory.engine.transfer), on every backend: export → import into a
fresh store → export again gives the same bytes; scopes; a file of another version is refused;
a damaged line is named; an interrupted import completes when run again."""

from __future__ import annotations

import base64
import io
import json
import weakref

import pytest

from memory.engine import AgentMemory, ImageInputLimitConfig, RecordStatus, snapshot, transfer
from memory.engine.snapshot import record_from_json
from memory.engine.transfer import (
    FORMAT_NAME,
    FORMAT_VERSION,
    MAX_LINE_BYTES,
    ExportFormatError,
    ExportReader,
    check_export,
    export_lines,
    import_export,
    max_line_bytes,
    write_export,
)

from .helpers import export_line, padded_export, write_long_line_export
from .test_images import JPEG, PNG
from .test_snapshot_restore import world  # noqa: F401  (the fixture: two users' threads, links, images, profiles)


def export_text(memory, **scope) -> str:
    out = io.StringIO()
    write_export(memory, out, **scope)
    return out.getvalue()


@pytest.fixture
def fresh(store_factory) -> AgentMemory:
    return AgentMemory(store_factory())


def test_round_trip_gives_the_same_file(world, fresh):  # noqa: F811
    exported = export_text(world)
    header = json.loads(exported.splitlines()[0])
    assert header == {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "scope": {},
        "counts": {"threads": 2, "records": 13, "relations": 3},
    }
    report = import_export(fresh, io.StringIO(exported), batch_size=4)
    assert report.restored == header["counts"]
    assert report.skipped == []
    assert export_text(fresh) == exported


def test_images_links_statuses_and_expiry_survive(world, fresh):  # noqa: F811
    import_export(fresh, io.StringIO(export_text(world)))
    assert fresh.get_image("img-p1", include_bytes=True).bytes == PNG
    assert fresh.get_image("img-p2", include_bytes=True).bytes == JPEG
    assert fresh.get_image("img-free", include_bytes=True).bytes == PNG
    assert {(r.id, r.relation_type) for r in fresh.list_relations(limit=None)} == {
        ("rel-in", "supersedes"),
        ("rel-out", "refines"),
        ("rel-custom", "mentions"),
    }
    assert {m.id: m.status for m in fresh.list_memories(limit=None)} == {
        m.id: m.status for m in world.list_memories(limit=None)
    }
    assert {m.id: m.status for m in fresh.list_memories(limit=None)}["m-old"] == RecordStatus.INVALID  # superseded
    expired = fresh.store.snapshot(record_ids=[("memory", "m-expired")]).records[0]
    assert expired.expires_at == world.store.snapshot(record_ids=[("memory", "m-expired")]).records[0].expires_at
    assert fresh.search("quiet hotel Lisbon", user_id="u2")  # the texts are indexed again


@pytest.mark.parametrize(
    ("scope", "threads"),
    [({"user_id": "u2"}, ["t2"]), ({"agent_id": "a1"}, ["t1"]), ({"thread_id": "t1"}, ["t1"])],
)
def test_a_scope_exports_what_its_delete_would_remove(world, fresh, scope, threads):  # noqa: F811
    exported = export_text(world, **scope)
    header, *lines = exported.splitlines()
    assert json.loads(header)["scope"] == scope
    assert [json.loads(line)["thread"]["id"] for line in lines if "thread" in json.loads(line)] == threads
    import_export(fresh, io.StringIO(exported))
    assert export_text(fresh, **scope) == exported
    assert [t.id for t in fresh.list_threads(limit=None)] == threads


def test_another_version_is_refused_before_anything_is_written(world, fresh):  # noqa: F811
    header, rest = export_text(world).split("\n", 1)
    data = json.loads(header)
    data["version"] = FORMAT_VERSION + 1
    with pytest.raises(ExportFormatError, match=rf"line 1: the file is {FORMAT_NAME} version 2; .* reads version 1"):
        import_export(fresh, io.StringIO(json.dumps(data) + "\n" + rest))
    with pytest.raises(ExportFormatError, match="line 1: this is not an oam-export file"):
        import_export(fresh, io.StringIO('{"threads": []}\n'))
    with pytest.raises(ExportFormatError, match="empty"):
        import_export(fresh, io.StringIO(""))
    with pytest.raises(ExportFormatError, match="line 1: this is not an oam-export file"):
        import_export(fresh, io.StringIO("[" * 100_000 + "]" * 100_000 + "\n"))
    assert fresh.stats().threads == 0


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda line: line[:20], r"line 5: not a JSON object"),
        (lambda line: '{"record": {"record_type": "fact"}}', r"line 5: record lacks id"),
        (lambda line: line.replace('"created_at":"', '"created_at":"yesterday'), r"line 5: record\.created_at"),
        (lambda line: '{"oops": 1}', r"line 5: must be an object with one key"),
        (lambda line: "", r"line 5: an empty line"),
        (
            lambda line: "[" * 100_000 + "]" * 100_000,
            r"line 5: not a JSON object the engine can read \(nested too deeply",
        ),
        (lambda line: '{"n": ' + "9" * 5000 + "}", r"line 5: not a JSON object the engine can read \(Exceeds"),
        (
            lambda line: line.replace('"metadata":', '"metadata":{"n":NaN},"was":', 1),
            r"line 5: not a JSON object the engine can read \(NaN is not a JSON value",
        ),
    ],
)
def test_a_damaged_line_is_named(world, fresh, damage, message):  # noqa: F811
    lines = export_text(world).splitlines()
    lines[4] = damage(lines[4])
    with pytest.raises(ExportFormatError, match=message) as raised:
        check_export(fresh, (line + "\n" for line in lines))
    assert raised.value.line == 5


def test_a_truncated_file_is_refused(world, fresh):  # noqa: F811
    lines = export_text(world).splitlines(keepends=True)
    with pytest.raises(
        ExportFormatError,
        match=r"ends after line 10 but its header announces 6 records, 3 relations more: it is truncated",
    ):
        check_export(fresh, lines[:10])


def test_an_interrupted_import_completes_when_run_again(world, fresh):  # noqa: F811
    exported = export_text(world)
    calls = []

    def interrupt(done, total):
        calls.append(done)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        import_export(fresh, io.StringIO(exported), batch_size=5, progress=interrupt)
    assert calls == [5, 10]  # two whole batches were committed
    report = import_export(fresh, io.StringIO(exported), batch_size=5)
    assert len(report.skipped) == 10 and {reason for _, _, reason in report.skipped} == {"exists"}
    assert report.skipped_summary() == [
        ("record", "already in the store (imported before, or an earlier run of this import)", 8),
        ("thread", "already in the store (imported before, or an earlier run of this import)", 2),
    ]
    assert export_text(fresh) == exported


def test_a_failed_batch_writes_nothing_of_itself(world, fresh, monkeypatch):  # noqa: F811
    exported = export_text(world)
    restore = fresh.store.restore
    calls = []

    def failing(snapshot, **options):
        calls.append(1)
        if len(calls) == 2:
            with fresh.store.transaction():
                restore(snapshot, **options)
                raise ValueError("the disk is full")
        return restore(snapshot, **options)

    monkeypatch.setattr(fresh.store, "restore", failing)
    with pytest.raises(ValueError, match="lines 6-9: the disk is full"):
        import_export(fresh, io.StringIO(exported), batch_size=4)
    assert fresh.stats().threads == 2
    assert len(fresh.store.snapshot().records) == 2  # the first batch: two threads, two records
    monkeypatch.undo()
    import_export(fresh, io.StringIO(exported), batch_size=4)
    assert export_text(fresh) == exported


def test_export_lines_are_sorted_compact_json(world):  # noqa: F811
    lines = list(export_lines(world, thread_id="t2"))
    for line in lines:
        assert line.endswith("\n") and "\n" not in line[:-1]
        assert line == json.dumps(json.loads(line), sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


# --- the first pass refuses what the import would -------------------------------------------------


def edited(exported: str, object_id: str, change) -> tuple[list[str], int]:
    """The export's lines with `change` applied to the object of that id, and its line number."""
    lines = exported.splitlines(keepends=True)
    for number, line in enumerate(lines[1:], 2):
        [(kind, value)] = json.loads(line).items()
        if value["id"] == object_id:
            change(value)
            lines[number - 1] = export_line({kind: value})
            return lines, number
    raise AssertionError(f"no {object_id!r} in the export")


def test_a_bad_line_past_the_first_batch_is_named_by_the_first_pass(world, fresh):  # noqa: F811
    """Issue 25, item 3: line 1,052 of 1,100 holds a 600-byte id. The first pass names that line
    (not a batch's "records[50]"), so nothing is imported."""
    lines = padded_export(export_text(world), 1100)
    record = json.loads(lines[1051])["record"]
    lines[1051] = export_line({"record": dict(record, id="x" * 600)})

    with pytest.raises(ExportFormatError, match=r"^line 1052: record\.id is 600 bytes in UTF-8; the limit is 512$"):
        check_export(fresh, lines)

    assert fresh.stats().threads == 0 and not fresh.store.snapshot().records


@pytest.mark.parametrize(
    ("object_id", "change", "message"),
    [
        ("m-t2", lambda r: r.update(id="m\x00t2"), r"record\.id must not contain NUL characters"),
        ("m-t2", lambda r: r.update(user_id="u" * 513), r"record\.user_id is 513 bytes in UTF-8; the limit is 512"),
        ("t2", lambda t: t.update(agent_id="a" * 513), r"thread\.agent_id is 513 bytes"),
        ("m-t2", lambda r: r.update(content="x" * 1_000_001), r"record\.content has 1,000,001 characters"),
        (
            "m-t2",
            lambda r: r.update(metadata=json.loads('{"a":' + "[" * 32 + "]" * 32 + "}")),
            r"record\.metadata is nested more than 32 levels deep",
        ),
        ("rel-in", lambda r: r.update(relation_type="x" * 513), r"relation\.relation_type is 513 bytes"),
        ("rel-in", lambda r: r.update(target_record_id=r["source_record_id"]), r"relation links a memory to itself"),
        ("m-t2", lambda r: r.update(thread_id="nope"), r"record\.thread_id names no thread: 'nope'"),
        ("msg-t2", lambda r: r.update(thread_id=None), r"record\.thread_id is missing: a message belongs to a thread"),
        ("img-p2", lambda r: r.update(message_id="nope"), r"record\.message_id names no message: 'nope'"),
        (
            "img-free",
            lambda r: r.update(bytes=base64.b64encode(b"not an image").decode()),
            r"record\.bytes: image is not a readable image \(PNG, JPEG or WebP\)",
        ),
        (
            "img-free",
            lambda r: r.update(mime_type="image/JPEG"),
            r"record\.bytes: mime_type says image/JPEG but the bytes are image/PNG",
        ),
        (
            "img-free",
            lambda r: r.update(bytes=base64.b64encode(PNG[:-30]).decode()),
            r"record\.bytes: damaged image: image file is truncated",
        ),
    ],
)
def test_the_first_pass_refuses_what_the_store_or_the_api_would(world, fresh, object_id, change, message):  # noqa: F811
    """Every rule of the store's restore, of an image upload and of a record's thread, on the line."""
    lines, number = edited(export_text(world), object_id, change)

    with pytest.raises(ExportFormatError, match=rf"^line {number}: {message}") as raised:
        check_export(fresh, lines)

    assert raised.value.line == number
    assert fresh.stats().threads == 0 and not fresh.store.snapshot().records


@pytest.mark.parametrize(
    ("object_id", "copy", "message"),
    [
        ("m-t2", lambda r: r, r"the memory 'm-t2' is in the file twice"),
        ("m-t2", lambda r: dict(r, record_type="preference"), r"the memory 'm-t2' is in the file twice"),
        ("rel-in", lambda r: dict(r, source_record_id="m-t2", target_record_id="m-new"), r"the link 'rel-in'"),
        ("rel-in", lambda r: dict(r, id="rel-again"), r"a link between 'm-mid' and 'm-old' is in the file twice"),
    ],
)
def test_an_id_the_file_holds_twice_is_refused_on_its_second_line(world, fresh, object_id, copy, message):  # noqa: F811
    """Even in another batch, where the import would skip it as "already there"."""
    header, *lines = export_text(world).splitlines(keepends=True)
    counts = json.loads(header)["counts"]
    [(kind, value)] = next(json.loads(line) for line in lines if f'"id":"{object_id}"' in line).items()
    at = counts["threads"] + counts["records"] + (counts["relations"] if kind == "relation" else 0)
    lines.insert(at, export_line({kind: copy(dict(value))}))
    document = json.loads(header)
    document["counts"][f"{kind}s"] += 1

    with pytest.raises(ExportFormatError, match=rf"^line {at + 2}: {message}"):
        check_export(fresh, [export_line(document), *lines])

    assert fresh.stats().threads == 0


def test_a_thread_given_twice_is_refused(world, fresh):  # noqa: F811
    header, *lines = export_text(world).splitlines(keepends=True)
    document = json.loads(header)
    document["counts"]["threads"] += 1

    with pytest.raises(ExportFormatError, match=r"^line 3: the thread 't1' is in the file twice"):
        check_export(fresh, [export_line(document), lines[0], *lines])


def test_the_first_pass_keeps_no_record(world, fresh, monkeypatch):  # noqa: F811
    """It streams: when a line is read, the records of the lines before the one just checked are gone."""
    made = []

    def tracked(data, where="record"):
        made.append(weakref.ref(record := record_from_json(data, where)))
        assert not [ref for ref in made[:-2] if ref() is not None], "a record of an earlier line is still held"
        return record

    monkeypatch.setattr(snapshot, "record_from_json", tracked)
    check_export(fresh, padded_export(export_text(world), 100))
    assert len(made) == 100 - 1 - 2 - 3  # every record line, the threads and links apart


def test_a_record_may_name_a_thread_the_store_holds(world, fresh):  # noqa: F811
    """A file of a thread's records without the thread is imported into a store that has it."""
    header, _thread, *lines = export_text(world, thread_id="t2").splitlines(keepends=True)
    document = json.loads(header)
    document["counts"]["threads"] = 0
    file = [export_line(document), *lines]

    with pytest.raises(ExportFormatError, match=r"^line 2: record\.thread_id names no thread: 't2'"):
        check_export(fresh, file)

    fresh.create_thread(thread_id="t2", user_id="u2", agent_id="a2")
    check_export(fresh, file)
    assert import_export(fresh, file).restored["records"] == len(lines)


def test_images_are_checked_with_the_limits_of_the_memory_imported_into(world, store_factory):  # noqa: F811
    small = AgentMemory(store_factory(), image_input_limit_config=ImageInputLimitConfig(max_image_pixels=10))
    lines, number = edited(export_text(world), "img-p1", lambda image: None)

    message = rf"^line {number}: record\.bytes: image is 8x8 pixels; the limit is 10 pixels"
    with pytest.raises(ExportFormatError, match=message):
        check_export(small, lines)


# --- one line's length is bounded ------------------------------------------------------------------


class CountedReads:
    """A binary file whose readline calls are counted: how many bytes the reader took of it."""

    def __init__(self, file) -> None:
        self.file, self.read = file, 0

    def readline(self, size: int = -1) -> bytes:
        line = self.file.readline(size)
        self.read += len(line)
        return line


def test_a_line_over_the_limit_is_refused_without_being_read_whole(tmp_path, fresh):
    """Issue 25, item 5: a line a mebibyte over the limit is refused having read one byte past it."""
    path = tmp_path / "long.jsonl"
    write_long_line_export(path, MAX_LINE_BYTES + 2**20)

    with path.open("rb") as file:
        counted = CountedReads(file)
        with pytest.raises(ExportFormatError, match=r"^line 2: the line is longer than 31,029,592 bytes") as raised:
            check_export(fresh, counted)

    header_bytes = len(path.open("rb").readline())
    assert counted.read == header_bytes + MAX_LINE_BYTES + 1
    assert raised.value.line == 2
    with path.open("rb") as file, pytest.raises(ExportFormatError, match=r"^line 2: the line is longer than"):
        import_export(fresh, file)
    assert not fresh.store.snapshot().records


def test_a_line_at_the_limit_is_read(tmp_path, fresh):
    path = tmp_path / "at-limit.jsonl"
    write_long_line_export(path, MAX_LINE_BYTES)

    with path.open("rb") as file, pytest.raises(ExportFormatError) as raised:
        check_export(fresh, file)

    assert str(raised.value).startswith("line 2: record.record_type must be one of")  # read, and parsed


def test_the_line_limit_holds_a_full_size_image_record():
    """The largest record: a 10 MiB image in base64 (13,981,016 bytes), its description and index
    text of 1,000,000 characters each, escaped (6 bytes each at worst), 1,000,000 characters of
    metadata as JSON (4 bytes each in UTF-8 at worst), and a mebibyte for its ids and field names;
    bigger image limits allow longer lines."""
    assert MAX_LINE_BYTES == 13_981_016 + 12_000_000 + 4_000_000 + 2**20
    assert max_line_bytes(ImageInputLimitConfig(max_raw_image_bytes=20 * 2**20)) > MAX_LINE_BYTES + 13_000_000


def test_a_batch_also_ends_at_max_batch_bytes(world, monkeypatch):  # noqa: F811
    """500 lines of full-size images are not held at once: a batch ends once its lines hold
    MAX_BATCH_BYTES."""
    lines = export_text(world).splitlines(keepends=True)
    monkeypatch.setattr(transfer, "MAX_BATCH_BYTES", 1000)

    sizes = [batch.size for batch in ExportReader(lines).batches(500)]

    assert sum(sizes) == len(lines) - 1 and max(sizes) < len(lines) - 1
