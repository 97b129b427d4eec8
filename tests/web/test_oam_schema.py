"""manage.py oam_schema, and the Oracle store settings."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command

from memory import services
from memory.engine import IndexRebuild, SchemaPolicy, SQLiteMemoryStore
from oam_site import settings as site_settings


def run(*args: str) -> str:
    out = StringIO()
    call_command("oam_schema", *args, stdout=out)
    return out.getvalue()


def test_print_sql_shows_the_sqlite_ddl_and_runs_nothing(tmp_path, settings):
    settings.OAM_STORE_URL = f"sqlite://{tmp_path / 'fresh.sqlite3'}"

    ddl = run("--print-sql")

    assert 'CREATE TABLE IF NOT EXISTS "OAM_RECORDS"' in ddl
    assert not (tmp_path / "fresh.sqlite3").exists()


def test_print_sql_shows_the_oracle_ddl_without_connecting(settings):
    settings.OAM_STORE_URL = "oracle://oam@db.invalid:1521/FREEPDB1"
    settings.OAM_ORACLE_VECTOR_INDEX = True

    ddl = run("--print-sql", "--policy", "recreate")

    assert ddl.index('DROP TABLE IF EXISTS "OAM_RECORDS"') < ddl.index('CREATE TABLE IF NOT EXISTS "OAM_RECORDS"')
    assert "embedding VECTOR(384, FLOAT32)" in ddl
    assert "ORGANIZATION INMEMORY NEIGHBOR GRAPH DISTANCE COSINE" in ddl
    assert "INDEXTYPE IS CTXSYS.CONTEXT" in ddl


def test_require_existing_refuses_a_store_without_schema(tmp_path, settings):
    settings.OAM_STORE_URL = f"sqlite://{tmp_path / 'empty.sqlite3'}"

    with pytest.raises(CommandError, match="create-if-necessary"):
        run()


def test_create_if_necessary_creates_it_and_require_existing_then_passes(tmp_path, settings):
    settings.OAM_STORE_URL = f"sqlite://{tmp_path / 'new.sqlite3'}"

    assert "in place (create-if-necessary)" in run("--policy", "create-if-necessary")
    assert "in place (require-existing)" in run()
    SQLiteMemoryStore(str(tmp_path / "new.sqlite3"), schema_policy=SchemaPolicy.REQUIRE_EXISTING).close()


def test_recreate_needs_yes_and_then_empties_the_store(agent_memory, settings):
    agent_memory.create_thread(thread_id="t1", user_id="u1")

    with pytest.raises(CommandError, match="--yes"):
        run("--policy", "recreate")
    assert [t.id for t in services.get_agent_memory().list_threads()] == ["t1"]

    run("--policy", "recreate", "--yes")
    assert list(services.get_agent_memory().list_threads()) == []


def test_an_oracle_url_without_a_password_is_a_clear_error(settings, monkeypatch):
    monkeypatch.delenv("OAM_ORACLE_PASSWORD", raising=False)
    settings.OAM_STORE_URL = "oracle://oam@db.invalid:1521/FREEPDB1"

    with pytest.raises(CommandError, match="OAM_ORACLE_PASSWORD"):
        run()


def test_store_options_carry_each_store_kinds_own_settings(settings):
    settings.OAM_ORACLE_POOL_MIN, settings.OAM_ORACLE_POOL_MAX = 2, 8
    settings.OAM_ORACLE_VECTOR_INDEX, settings.OAM_ORACLE_TARGET_ACCURACY = True, 90
    settings.OAM_ORACLE_VECTOR_INDEX_TRANSFORM = True
    settings.OAM_INDEX_REBUILD_CHANGES, settings.OAM_INDEX_REBUILD_SECONDS = 500, 30

    assert services.store_options("sqlite:///x.sqlite3") == {
        "search_index_rebuild": IndexRebuild(after_changes=500, after_seconds=30)
    }
    assert services.store_options("oracle://u@h/s", SchemaPolicy.RECREATE) == {
        "schema_policy": SchemaPolicy.RECREATE,
        "pool_min": 2,
        "pool_max": 8,
        "vector_index": True,
        "approximate_accuracy": 90,
        "vector_index_transform": True,
    }


@pytest.mark.parametrize(("value", "expected"), [("", None), (" 7 ", 7)])
def test_env_int_reads_positive_integers(monkeypatch, value, expected):
    monkeypatch.setenv("OAM_TEST_NUMBER", value)

    assert site_settings.env_int("OAM_TEST_NUMBER", None) == expected


@pytest.mark.parametrize("value", ["0", "-1", "ten", "1.5"])
def test_env_int_rejects_anything_else(monkeypatch, value):
    monkeypatch.setenv("OAM_TEST_NUMBER", value)

    with pytest.raises(ImproperlyConfigured, match="OAM_TEST_NUMBER"):
        site_settings.env_int("OAM_TEST_NUMBER", 1)
