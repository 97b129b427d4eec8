"""Stores written by earlier engines open and are upgraded in place by CREATE_IF_NECESSARY.

fixtures/store_v4.sqlite3 was written by the schema-version-4 SQLiteMemoryStore (the embedded
store before the one SQL store); fixtures/store_v4.expected.json is what that engine listed from
it, cursors included. fixtures/store_v5.sqlite3 is that file opened once with
CREATE_IF_NECESSARY by the schema-version-5 engine (commit 32d833b), then VACUUMed: the same
records in the layout before record versions. After the upgrade (to 6) the same calls must give
the same answers, every row at version 1.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from memory.engine import AgentMemory, HashingEmbedder, SchemaError, SchemaPolicy, SearchStrategy, SQLiteMemoryStore
from memory.engine.stores.sql import SCHEMA_VERSION
from memory.engine.types import MEMORY_TYPES

FIXTURES = Path(__file__).parent / "fixtures"
EXPECTED = json.loads((FIXTURES / "store_v4.expected.json").read_text())
LISTED = ["message", *MEMORY_TYPES, "image"]
PROFILES = ("user_profile", "agent_profile")


def copy_fixture(tmp_path, name: str) -> Path:
    path = tmp_path / f"{name}.sqlite3"
    shutil.copy(FIXTURES / f"{name}.sqlite3", path)
    return path


@pytest.fixture
def v4_path(tmp_path) -> Path:
    return copy_fixture(tmp_path, "store_v4")


@pytest.fixture
def v5_path(tmp_path) -> Path:
    return copy_fixture(tmp_path, "store_v5")


@pytest.fixture(params=["store_v4", "store_v5"])
def old_path(request, tmp_path) -> Path:
    return copy_fixture(tmp_path, request.param)


def open_store(path, **options) -> SQLiteMemoryStore:
    return SQLiteMemoryStore(str(path), embedder=HashingEmbedder(64), **options)


def as_json(record) -> dict:
    """The record as the version-4 engine listed it: without bytes, and without the version
    (schema 6), which every upgraded row starts at 1 (0 for a listed owner without a profile)."""
    fields = {key: value for key, value in dataclasses.asdict(record).items() if key != "bytes"}
    assert fields.pop("version") == (
        0 if getattr(record, "record_type", "") in PROFILES and not record.created_at else 1
    )
    return json.loads(json.dumps(fields, default=str))


@pytest.fixture(params=[True, False], ids=["index", "sql"])
def upgraded(request, old_path):
    store = open_store(old_path, schema_policy=SchemaPolicy.CREATE_IF_NECESSARY, search_index=request.param)
    yield store
    store.close()


@pytest.mark.parametrize("version", [4, 5])
def test_an_older_file_is_refused_without_create_if_necessary_and_left_untouched(version, tmp_path):
    path = copy_fixture(tmp_path, f"store_v{version}")
    before = path.read_bytes()
    with pytest.raises(
        SchemaError, match=rf"version {version}; this engine needs {SCHEMA_VERSION}.*CREATE_IF_NECESSARY"
    ):
        open_store(path)
    assert path.read_bytes() == before


def test_a_version_5_file_gains_versions_and_the_activity_log_and_versions_move_from_1(v5_path):
    store = open_store(v5_path, schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)
    memory = AgentMemory(store)
    assert {record.version for record in store.list(LISTED, limit=None)} == {1}
    assert {thread.version for thread in store.list_threads(limit=None)} == {1}
    assert {relation.version for relation in store.list_relations(limit=None)} == {1}
    memory.update_memory("m-new", metadata={"edited": True}, expected_version=1)
    assert memory.get_memory("m-new").version == 2
    store.close()
    with sqlite3.connect(v5_path) as connection:
        columns = {
            table: {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
            for table in ("OAM_RECORDS", "OAM_THREADS", "OAM_RELATIONS")
        }
        version = connection.execute("SELECT meta_value FROM OAM_META WHERE meta_key = 'schema_version'").fetchone()
        activity = connection.execute("SELECT caller, kind FROM OAM_ACTIVITY").fetchall()
    assert all("version" in names for names in columns.values()) and version == (str(SCHEMA_VERSION),)
    assert activity == [(memory.activity.caller, "write")]  # the update above
    open_store(v5_path).close()  # REQUIRE_EXISTING now passes


def test_a_failed_version_5_upgrade_leaves_the_file_as_it_was(v5_path, monkeypatch):
    from memory.engine.stores import sqlite as sqlite_store

    def broken(self, cursor):
        raise RuntimeError("disk full")

    monkeypatch.setattr(sqlite_store.SQLiteSchema, "upgrade_sql", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        open_store(v5_path, schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)
    monkeypatch.undo()
    with pytest.raises(SchemaError, match="version 5"):
        open_store(v5_path)


def test_the_upgrade_keeps_every_record_link_thread_and_profile(upgraded):
    assert [as_json(record) for record in upgraded.list(LISTED, limit=None)] == EXPECTED["records"]
    assert [as_json(relation) for relation in upgraded.list_relations(limit=None)] == EXPECTED["relations"]
    assert [as_json(thread) for thread in upgraded.list_threads(limit=None)] == EXPECTED["threads"]
    assert [as_json(user) for user in upgraded.list_users(limit=None)] == EXPECTED["users"]
    assert [as_json(agent) for agent in upgraded.list_agents(limit=None)] == EXPECTED["agents"]
    image_ids = list(EXPECTED["image_bytes"])
    assert {key: len(data) for key, data in upgraded.image_bytes(image_ids).items()} == EXPECTED["image_bytes"]


def test_cursors_handed_out_by_the_old_engine_continue_where_they_were(upgraded):
    page = upgraded.list(LISTED, limit=5)
    assert [record.id for record in page] == EXPECTED["first_page"] and page.next_cursor == EXPECTED["cursor"]
    assert [record.id for record in upgraded.list(LISTED, limit=None, cursor=EXPECTED["cursor"])] == EXPECTED["rest"]
    assert upgraded.list_relations(limit=1).next_cursor == EXPECTED["relations_cursor"]
    assert upgraded.list_threads(limit=1).next_cursor == EXPECTED["threads_cursor"]


def test_the_upgraded_store_searches_writes_and_keeps_lifecycle_and_cascades(upgraded, old_path):
    memory = AgentMemory(upgraded)
    assert memory.get_memory("m-old").status.value == "invalid"  # superseded by m-new, as before
    hits = memory.search("starter feeding", user_id="u1", num_hops=1, max_linked_results=5)
    assert "m-new" in [hit.id for hit in hits]
    keywords = open_store(old_path, search_strategy=SearchStrategy.KEYWORD, search_index=upgraded.index is not None)
    found = keywords.search("acetone", 5)
    keywords.close()
    assert found[0][0].content == "My sourdough starter smells of acetone."  # (the index adds neighbouring turns)
    memory.add_memory("Ana bakes on Sundays", user_id="u1", memory_id="m-after")
    assert upgraded.list(LISTED, limit=None)[-1].id == "m-after"  # keys carry on above the old ones
    assert memory.delete_memory("m-new") == 1  # its links go with it, and m-old is valid again
    assert memory.get_memory("m-old").status.value == "valid"
    assert [relation.id for relation in upgraded.list_relations(limit=None)] == []


def test_the_upgrade_happens_once_and_the_file_then_opens_as_current(v4_path):
    open_store(v4_path, schema_policy=SchemaPolicy.CREATE_IF_NECESSARY).close()
    with sqlite3.connect(v4_path) as connection:
        version = connection.execute("SELECT meta_value FROM OAM_META WHERE meta_key = 'schema_version'").fetchone()
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert version == (str(SCHEMA_VERSION),)
    assert not {name for name in tables if name.endswith("_v4")}
    store = open_store(v4_path)  # REQUIRE_EXISTING now passes
    assert [record.id for record in store.list(LISTED, limit=None)] == EXPECTED["first_page"] + EXPECTED["rest"]
    store.close()


def test_a_version_1_file_loses_its_fts_table_and_is_upgraded_too(v4_path):
    with sqlite3.connect(v4_path) as connection:  # what version 1 had: its FTS5 table, a trigger, the number
        connection.execute("CREATE VIRTUAL TABLE oam_records_fts USING fts5(text, content='')")
        connection.execute("CREATE TRIGGER oam_records_fts_delete AFTER DELETE ON oam_records BEGIN SELECT 1; END")
        connection.execute("UPDATE oam_meta SET value = '1' WHERE key = 'schema_version'")
    with pytest.raises(SchemaError, match=r"version 1.*CREATE_IF_NECESSARY"):
        open_store(v4_path)
    store = open_store(v4_path, schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)
    assert store.get("fact", "m-new").content == "Ana feeds her starter twice a day"
    assert store.delete("fact", "m-new") == 1
    store.close()
    with sqlite3.connect(v4_path) as connection:
        names = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    assert "oam_records_fts" not in names and "oam_records_fts_delete" not in names


def test_a_failed_upgrade_leaves_the_old_file_as_it_was(v4_path, monkeypatch):
    before = sqlite3.connect(v4_path).execute("SELECT count(*) FROM oam_records").fetchone()
    from memory.engine.stores import sqlite as sqlite_store

    def broken(self):
        raise RuntimeError("disk full")

    monkeypatch.setattr(sqlite_store.SQLiteSchema, "create_sql", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        open_store(v4_path, schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)
    monkeypatch.undo()
    with pytest.raises(SchemaError, match="version 4"):
        open_store(v4_path)
    assert sqlite3.connect(v4_path).execute("SELECT count(*) FROM oam_records").fetchone() == before
