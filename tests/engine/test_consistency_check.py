"""MemoryStore.check: each inconsistency made on purpose (by writing to the SQLite tables behind
the store's back) is found, and `repair=True` fixes what is safe without deleting a record."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from memory.engine import AgentMemory, CheckReport, HashingEmbedder, SchemaPolicy, SQLiteMemoryStore

from .test_image_messages import add_look_message


@pytest.fixture(params=["index", "sql"])
def setup(request, tmp_path):
    """An AgentMemory over a SQLite file (with and without the in-memory index), a thread with a
    few memories, and a raw connection to the same file for breaking it."""
    path = tmp_path / "check.sqlite3"
    store = SQLiteMemoryStore(
        str(path),
        embedder=HashingEmbedder(64),
        schema_policy=SchemaPolicy.CREATE_IF_NECESSARY,
        search_index=request.param == "index",
    )
    memory = AgentMemory(store)
    thread = memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    for number in range(3):
        thread.add_memory(f"fact number {number} about lighthouses", memory_id=f"m{number}")
    raw = sqlite3.connect(path)
    yield memory, thread, raw
    raw.close()
    memory.close()


def write(raw: sqlite3.Connection, sql: str, *params) -> None:
    raw.execute(sql, params)
    raw.commit()


def counts(report: CheckReport) -> dict[str, tuple[int, int]]:
    return {finding.name: (finding.found, finding.remaining) for finding in report.findings if finding.found}


def test_a_sound_store_has_no_findings(setup):
    memory, thread, _ = setup
    add_look_message(thread)
    thread.link_records("m0", "memory", "m1", "memory", "supports")
    thread.search("lighthouses")  # the index is loaded
    report = memory.check()
    assert report.ok and report.problems == () and not report.repaired
    assert [finding.name for finding in report.findings] == [
        "missing_vectors",
        "wrong_dimension",
        "orphan_links",
        "orphan_images",
        "orphan_image_bytes",
        "index_out_of_step",
    ]


def test_a_record_without_a_vector_is_found_and_embedded_again(setup):
    memory, thread, raw = setup
    thread.search("lighthouses")
    write(raw, "UPDATE OAM_RECORDS SET embedding = NULL WHERE id = 'm1'")
    report = memory.check()
    assert not report.ok
    assert report.finding("missing_vectors").found == 1
    assert report.finding("missing_vectors").examples == ("m1",)
    if memory.store.index is not None:  # the index never learnt of the write
        assert report.finding("index_out_of_step").examples == ("record 2",)
    repaired = memory.check(repair=True)
    assert repaired.finding("missing_vectors").repaired == 1 and repaired.ok
    assert memory.check().ok
    [(record, distance)] = memory.store.search("fact number 1 about lighthouses", k=1, strategy="vector")
    assert record.id == "m1" and distance < 0.01


def test_a_vector_of_the_wrong_dimension_is_found_and_replaced(setup):
    memory, _, raw = setup
    write(raw, "UPDATE OAM_RECORDS SET embedding = ? WHERE id = 'm2'", np.ones(32, dtype=np.float32).tobytes())
    report = memory.check()
    assert report.finding("wrong_dimension").examples == ("m2",)
    assert memory.check(repair=True).ok
    [[blob]] = raw.execute("SELECT embedding FROM OAM_RECORDS WHERE id = 'm2'").fetchall()
    assert len(blob) == 64 * 4


def test_an_orphan_link_is_found_and_deleted_but_no_record_is(setup):
    memory, thread, raw = setup
    thread.link_records("m0", "memory", "m1", "memory", "supports")
    relation_id = thread.link_records("m1", "memory", "m2", "memory", "supports")
    write(raw, "DELETE FROM OAM_RECORDS WHERE id = 'm2'")  # the record goes, its link stays
    report = memory.check()
    assert report.finding("orphan_links").examples == (relation_id,)
    repaired = memory.check(repair=True)
    assert repaired.finding("orphan_links").repaired == 1 and repaired.ok
    assert [row[0] for row in raw.execute("SELECT id FROM OAM_RECORDS WHERE kind = 'memory' ORDER BY id")] == [
        "m0",
        "m1",
    ]
    assert raw.execute("SELECT count(*) FROM OAM_RELATIONS").fetchone()[0] == 1


def test_an_image_whose_message_is_gone_is_reported_and_kept(setup):
    memory, thread, raw = setup
    message_id, image_id = add_look_message(thread)
    write(raw, "DELETE FROM OAM_RECORDS WHERE kind = 'message' AND id = ?", message_id)
    report = memory.check(repair=True)
    finding = report.finding("orphan_images")
    assert (finding.found, finding.remaining, finding.examples, finding.repairable) == (1, 1, (image_id,), False)
    assert not report.ok
    assert memory.store.get("image", image_id) is not None


def test_image_bytes_without_their_record_are_reported(setup):
    memory, thread, raw = setup
    _, image_id = add_look_message(thread)
    raw.execute("PRAGMA foreign_keys = OFF")
    write(raw, "DELETE FROM OAM_RECORDS WHERE kind = 'image' AND id = ?", image_id)
    report = memory.check()
    assert report.finding("orphan_image_bytes").found == 1
    assert report.finding("orphan_images").found == 0


def test_the_index_out_of_step_with_the_database_is_rebuilt(setup):
    memory, thread, raw = setup
    if memory.store.index is None:
        pytest.skip("the store searches with SQL: no in-memory index to fall out of step")
    thread.link_records("m0", "memory", "m1", "memory", "supports")
    thread.search("lighthouses", num_hops=1)  # records and links loaded
    # Behind the change log's back: a record appears, a link changes version.
    write(
        raw,
        "INSERT INTO OAM_RECORDS (id, kind, record_type, content, search_text, created_at, embedding) "
        "VALUES ('ghost', 'memory', 'fact', 'ghost', 'ghost', '2024-01-01T00:00:00.000000+00:00', ?)",
        (np.ones(64, dtype=np.float32) / np.float32(8)).tobytes(),
    )
    write(raw, "UPDATE OAM_RELATIONS SET version = version + 1")
    report = memory.check()
    finding = report.finding("index_out_of_step")
    assert finding.found == 2 and finding.examples[1] == "link 1"
    assert "ghost" not in [record.id for record, _ in memory.store.search("ghost", record_types=["fact"])]
    repaired = memory.check(repair=True)
    assert repaired.finding("index_out_of_step").repaired == 2 and repaired.ok
    assert "ghost" in [record.id for record, _ in memory.store.search("ghost", record_types=["fact"])]


def test_examples_are_capped(setup):
    memory, _, raw = setup
    write(raw, "UPDATE OAM_RECORDS SET embedding = NULL WHERE kind = 'memory'")
    finding = memory.check(examples=2).finding("missing_vectors")
    assert (finding.found, finding.examples) == (3, ("m0", "m1"))
    with pytest.raises(ValueError):
        memory.check(examples=0)
