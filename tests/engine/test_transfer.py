"""The export/import format (memory.engine.transfer), on every backend: export → import into a
fresh store → export again gives the same bytes; scopes; a file of another version is refused;
a damaged line is named; an interrupted import completes when run again."""

from __future__ import annotations

import io
import json

import pytest

from memory.engine import AgentMemory, RecordStatus
from memory.engine.transfer import (
    FORMAT_NAME,
    FORMAT_VERSION,
    ExportFormatError,
    check_export,
    export_lines,
    import_export,
    write_export,
)

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
    ],
)
def test_a_damaged_line_is_named(world, fresh, damage, message):  # noqa: F811
    lines = export_text(world).splitlines()
    lines[4] = damage(lines[4])
    with pytest.raises(ExportFormatError, match=message) as raised:
        check_export(line + "\n" for line in lines)
    assert raised.value.line == 5


def test_a_truncated_file_is_refused(world, fresh):  # noqa: F811
    lines = export_text(world).splitlines(keepends=True)
    with pytest.raises(
        ExportFormatError,
        match=r"ends after line 10 but its header announces 6 records, 3 relations more: it is truncated",
    ):
        check_export(lines[:10])


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
