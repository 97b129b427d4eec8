"""The search index's generations on disk (stores/index/generations.py): mapped by every store on
a file, replaced in the background as changes accumulate, and never served when damaged."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import time_machine

from memory.engine import HashingEmbedder, IndexRebuild, SchemaPolicy, SearchStrategy, SQLiteMemoryStore
from memory.engine.stores.index import generations, search_cache
from memory.engine.stores.sql import changelog

ROOT = Path(__file__).resolve().parents[2]
DIM = 16


@pytest.fixture
def open_store(tmp_path):
    """Stores on one file (as processes on it would be), closed at the end."""
    made = []

    def open_one(**options) -> SQLiteMemoryStore:
        options.setdefault("schema_policy", SchemaPolicy.CREATE_IF_NECESSARY)
        options.setdefault("search_strategy", SearchStrategy.HYBRID)
        store = SQLiteMemoryStore(str(tmp_path / "memory.sqlite3"), embedder=HashingEmbedder(DIM), **options)
        made.append(store)
        return store

    yield open_one
    for store in made:
        store.close()


def folder(tmp_path: Path) -> Path:
    return tmp_path / "memory.sqlite3.oam-index"


def names(tmp_path: Path) -> list[str]:
    return sorted(path.name for path in folder(tmp_path).glob("g*"))


def hits(store: SQLiteMemoryStore, query: str = "pizza") -> list[str]:
    return sorted(record.id for record, _ in store.search(query, 100, record_types=("memory",)))


def filled(open_store, **options) -> SQLiteMemoryStore:
    store = open_store(**options)
    store.add([f"pizza note {i}" for i in range(30)], "memory", record_ids=[f"m{i}" for i in range(30)])
    assert len(hits(store)) == 30  # the first search builds the index and writes its first generation
    return store


def test_the_first_search_writes_a_generation_that_a_new_store_maps_without_reading(open_store, tmp_path):
    first = filled(open_store)
    [name] = names(tmp_path)
    assert {path.name for path in (folder(tmp_path) / name).iterdir()} >= {"manifest.json", "matrix.npy", "pks.npy"}
    second = open_store()
    assert hits(second) == hits(first)
    records = second.index.records
    assert second.index.generation.name == name
    assert isinstance(records.vectors.base, np.memmap) and isinstance(records.pks, np.memmap)


def test_rows_added_after_the_generation_leave_its_matrix_mapped(open_store, tmp_path):
    filled(open_store)
    second = open_store()
    hits(second)
    mapped = second.index.records.vectors.base
    second.add(["pizza late"], "memory", record_ids=["late"])
    assert "late" in hits(second)
    records = second.index.records
    assert records.vectors.base is mapped  # not grown into a private copy
    assert len(records.vectors.added) < 2048
    [(found, distance)] = second.search(query_vector=HashingEmbedder(DIM).embed(["pizza late"])[0], k=1)
    assert found.id == "late" and distance == pytest.approx(0.0, abs=1e-6)


def test_memory_ids_follow_changes_made_after_the_generation(open_store):
    store = filled(open_store)
    link = {"source_record_type": "memory", "target_record_type": "memory", "relation_type": "supports"}
    store.add_relations([{**link, "source_record_id": "m1", "target_record_id": "m2"}])
    second = open_store()
    hits(second)
    second.delete("memory", "m2")
    second.add(["pizza m2 again"], "memory", record_ids=["m2"])  # the same id, a new row
    second.add(["pizza new"], "memory", record_ids=["new"])
    store.add_relations([{**link, "source_record_id": "m1", "target_record_id": "new"}])
    graph = second.memory_graph(memory_id="m1")
    assert {node.id for node in graph.nodes} == {"m1", "new"}
    cache = second.index.records
    assert cache.memory_rows(["m2", "new", "m3", "nowhere"])[3] is None
    pks = cache.memory_ids.pks_of(["m2", "new", "m3"])
    assert cache.memory_ids.ids_of(pks) == ["m2", "new", "m3"]
    assert len(set(pks)) == 3 and min(pks) > 0


@pytest.mark.parametrize("damage", ["overwritten", "truncated", "extended", "garbled manifest", "no manifest"])
def test_a_damaged_generation_is_detected_removed_and_rebuilt_never_served(open_store, tmp_path, damage, caplog):
    filled(open_store)
    [name] = names(tmp_path)
    generation = folder(tmp_path) / name
    matrix = generation / "matrix.npy"
    if damage == "overwritten":  # same size: the modification time gives it away
        with open(generation / "live.npy", "r+b") as file:
            file.seek(-8, os.SEEK_END)
            file.write(b"\x00" * 8)
    elif damage == "truncated":
        os.truncate(matrix, matrix.stat().st_size - 64)
    elif damage == "extended":
        with open(matrix, "ab") as file:
            file.write(b"\x00" * 64)
    elif damage == "garbled manifest":
        (generation / "manifest.json").write_text('{"format": 4, "seq"')
    else:
        (generation / "manifest.json").unlink()
    full_loads = []
    second = open_store()
    original_load = search_cache.SearchCache.load
    second_load = lambda cache, rows: full_loads.append(1) or original_load(cache, rows)  # noqa: E731
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search_cache.SearchCache, "load", second_load)
        assert len(hits(second)) == 30
    assert full_loads == [1], "rebuilt from SQL"
    assert name not in names(tmp_path) and len(names(tmp_path)) == 1  # removed, and a good one written
    assert "removing the search index generation" in caplog.text or damage == "no manifest"


def test_damage_that_keeps_size_and_time_is_found_by_the_check_and_repaired(open_store, tmp_path):
    store = filled(open_store)
    [name] = names(tmp_path)
    rot(folder(tmp_path) / name / "matrix.npy")
    monkey = pytest.MonkeyPatch()
    monkey.setattr(generations, "VERIFY_AT_OPEN_BYTES", 0)  # as a large matrix is: checked by size and time only
    try:
        report = store.check()
        found = [example for finding in report.findings for example in finding.examples]
        assert any("does not match its checksum" in example for example in found), found
        store.check(repair=True)
        assert store.check().ok
    finally:
        monkey.undo()
    assert name not in names(tmp_path) and len(names(tmp_path)) == 1


def test_a_crash_while_writing_a_generation_leaves_the_previous_one_served(open_store, tmp_path, monkeypatch):
    first = filled(open_store, search_index_rebuild=IndexRebuild(after_changes=5))
    [before] = names(tmp_path)
    written = []

    def crash_midway(path, value):
        if written:
            raise OSError("disk full")
        written.append(path)
        return real_write(path, value)

    real_write = generations._write_array
    monkeypatch.setattr(generations, "_write_array", crash_midway)
    first.add([f"pizza more {i}" for i in range(6)], "memory", record_ids=[f"more{i}" for i in range(6)])
    assert not first.index.write_generation()
    monkeypatch.undo()
    assert names(tmp_path) == [before]
    assert not list(folder(tmp_path).glob("tmp-*")), "the writer removes what it left"
    second = open_store()
    assert len(hits(second)) == 36 and second.index.generation.name == before


def test_a_folder_left_by_a_killed_writer_is_removed_later(open_store, tmp_path):
    first = filled(open_store)
    abandoned = folder(tmp_path) / "tmp-0123"
    abandoned.mkdir()
    (abandoned / "pks.npy").write_bytes(b"half")
    first.index.generations.remove_unused(first.index.store_id)
    assert abandoned.exists()  # it may be a writer still at work
    with time_machine.travel(generations.time.time() + generations.ABANDONED_SECONDS + 5):
        first.index.generations.remove_unused(first.index.store_id)
    assert not abandoned.exists()
    assert len(names(tmp_path)) == 1


def test_after_enough_changes_a_new_generation_is_written_and_every_store_moves_to_it(open_store, tmp_path):
    policy = IndexRebuild(after_changes=10)
    writer, reader = filled(open_store, search_index_rebuild=policy), open_store(search_index_rebuild=policy)
    hits(reader)
    [first] = names(tmp_path)
    writer.add([f"pizza batch {i}" for i in range(9)], "memory", record_ids=[f"b{i}" for i in range(9)])
    hits(writer)
    writer.index.close()  # waits for a writer thread, if one had started
    assert names(tmp_path) == [first]  # nine changes: not yet
    writer.add(["pizza tenth"], "memory", record_ids=["tenth"])
    assert len(hits(writer)) == 40
    writer.index.close()
    [old, new] = names(tmp_path)
    assert old == first
    assert len(hits(reader)) == 40 and len(hits(writer)) == 40  # their next searches move them
    assert reader.index.generation.name == new and writer.index.generation.name == new
    assert reader.index.records.vectors.added.shape[0] == 0  # the changes are in the mapped files now
    with time_machine.travel(generations.time.time() + generations.SUPERSEDED_GRACE_SECONDS + 5):
        writer.index.generations.remove_unused(writer.index.store_id)
    assert names(tmp_path) == [new]
    assert len(hits(open_store())) == 40


def test_a_superseded_generation_goes_a_minute_after_the_next_one_at_a_search(open_store, tmp_path):
    policy = IndexRebuild(after_changes=1)
    writer, reader = filled(open_store, search_index_rebuild=policy), open_store(search_index_rebuild=policy)
    hits(reader)
    writer.add(["pizza next"], "memory", record_ids=["next"])
    hits(writer)
    writer.index.close()
    [old, new] = names(tmp_path)
    hits(reader)
    assert names(tmp_path) == [old, new]  # within the minute: a process may be opening it
    with time_machine.travel(generations.time.time() + generations.SUPERSEDED_GRACE_SECONDS + 5):
        assert len(hits(reader)) == 31
    assert names(tmp_path) == [new]


def test_generations_of_a_recreated_store_are_removed(open_store, tmp_path):
    filled(open_store)
    [stale] = names(tmp_path)
    recreated = open_store(schema_policy=SchemaPolicy.RECREATE)
    recreated.add(["pizza anew"], "memory", record_ids=["anew"])
    assert hits(recreated) == ["anew"]
    assert stale not in names(tmp_path) and len(names(tmp_path)) == 1


def test_a_generation_is_written_once_the_newest_is_old_enough(open_store, tmp_path):
    store = filled(open_store, search_index_rebuild=IndexRebuild(after_seconds=300))
    store.add(["pizza one more"], "memory", record_ids=["one"])
    hits(store)
    store.index.close()
    [before] = names(tmp_path)
    with time_machine.travel(generations.time.time() + 301):
        hits(store)
        store.index.close()
        [first, after] = names(tmp_path)  # the first one stays a minute, for processes opening it
        assert first == before and after > before
        assert len(hits(store)) == 31 and store.index.generation.name == after


def test_writing_a_generation_holds_up_neither_searches_nor_writes(open_store, tmp_path, monkeypatch):
    store = filled(open_store, search_index_rebuild=IndexRebuild(after_changes=1))
    entered, release = threading.Event(), threading.Event()
    real_write = generations.Generations.write

    def slow_write(self, *args):
        entered.set()
        assert release.wait(30)
        return real_write(self, *args)

    monkeypatch.setattr(generations.Generations, "write", slow_write)
    store.add(["pizza trigger"], "memory", record_ids=["trigger"])
    hits(store)  # starts the writer, which now waits inside write()
    assert entered.wait(30)
    store.add(["pizza meanwhile"], "memory", record_ids=["meanwhile"])
    assert {"trigger", "meanwhile"} <= set(hits(store))
    release.set()
    store.index.close()
    assert len(names(tmp_path)) == 2


def test_a_process_maps_a_generation_another_one_wrote(open_store, tmp_path):
    store = filled(open_store)
    store.add(["pizza fresh"], "memory", record_ids=["fresh"])
    script = (
        "import sys\n"
        "from memory.engine import HashingEmbedder, SQLiteMemoryStore\n"
        f"store = SQLiteMemoryStore(sys.argv[1], embedder=HashingEmbedder({DIM}))\n"
        "found = sorted(r.id for r, _ in store.search('pizza', 100, record_types=('memory',)))\n"
        "print(len(found), 'fresh' in found, type(store.index.records.vectors.base).__name__)\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "memory.sqlite3")],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.split()
    assert output == ["31", "True", "memmap"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"after_changes": 0}, "after_changes must be a positive integer"),
        ({"after_changes": 2.5}, "after_changes must be a positive integer"),
        ({"after_seconds": -1}, "after_seconds must be a positive number"),
        ({"after_seconds": float("nan")}, "after_seconds must be a positive number"),
        ({"after_seconds": True}, "after_seconds must be a positive number"),
    ],
)
def test_a_rebuild_policy_out_of_range_is_refused(options, message):
    with pytest.raises(ValueError, match=message):
        IndexRebuild(**options)


def test_a_store_refuses_a_rebuild_policy_of_another_type(tmp_path):
    with pytest.raises(ValueError, match="search_index_rebuild must be an IndexRebuild"):
        SQLiteMemoryStore(str(tmp_path / "x.sqlite3"), search_index_rebuild={"after_changes": 5})


def test_the_single_file_index_of_an_earlier_version_is_removed(tmp_path):
    old = tmp_path / "memory.sqlite3.oam-index.npz"
    old.write_bytes(b"old")
    vectors = tmp_path / "memory.sqlite3.oam-index.npz.0a1b.npy"
    vectors.write_bytes(b"old vectors")
    store = SQLiteMemoryStore(str(tmp_path / "memory.sqlite3"), schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)
    store.close()
    assert not old.exists() and not vectors.exists()


def test_an_index_built_from_sql_reads_the_records_a_page_at_a_time(open_store, tmp_path, monkeypatch):
    monkeypatch.setattr(changelog, "RECORD_PAGE", 7)
    store = filled(open_store)  # 30 records: five pages
    store.delete("memory", "m7")
    fresh = open_store(search_index_path=str(tmp_path / "fresh"))
    assert hits(fresh) == hits(store) and len(hits(fresh)) == 29


def rot(matrix: Path) -> None:
    """Damage the last vector the way a failing disk would: same size, modification time kept."""
    before = matrix.stat()
    with open(matrix, "r+b") as file:
        file.seek(-4, os.SEEK_END)
        file.write(b"\xff\xff\xff\xff")
    os.utime(matrix, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_the_check_of_a_new_process_reads_the_generation_it_loads(open_store, tmp_path, monkeypatch):
    filled(open_store)
    [name] = names(tmp_path)
    rot(folder(tmp_path) / name / "matrix.npy")
    monkeypatch.setattr(generations, "VERIFY_AT_OPEN_BYTES", 0)
    report = open_store().check()  # as `manage.py oam_check` does, before any search
    assert any("does not match its checksum" in example for finding in report.findings for example in finding.examples)
    assert name not in names(tmp_path)


def test_a_new_generation_is_never_copied_from_a_damaged_one(open_store, tmp_path, monkeypatch):
    store = filled(open_store)
    [name] = names(tmp_path)
    rot(folder(tmp_path) / name / "matrix.npy")
    monkeypatch.setattr(generations, "VERIFY_AT_OPEN_BYTES", 0)
    store.add(["pizza after"], "memory", record_ids=["after"])
    assert store.index.write_generation()  # from SQL, the damaged one removed
    [written] = names(tmp_path)
    assert written != name and open_store().check().ok
