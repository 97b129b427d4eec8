"""MemoryStore writes down the whole store contract, and the one implementation follows it."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from memory.engine.stores.base import MemoryStore
from memory.engine.stores.sql import SQLMemoryStore

ENGINE = Path(__file__).resolve().parents[2] / "memory" / "engine"


def test_every_declared_method_is_implemented_with_the_declared_parameters():
    assert not SQLMemoryStore.__abstractmethods__
    for name in MemoryStore.__abstractmethods__:
        declared = inspect.signature(getattr(MemoryStore, name)).parameters
        implemented = inspect.signature(getattr(SQLMemoryStore, name)).parameters
        assert list(implemented) == list(declared), name
        assert getattr(MemoryStore, name).__doc__, f"{name} has no contract"


def test_the_engine_calls_only_methods_the_contract_declares():
    called = set()
    for path in ENGINE.glob("*.py"):  # the client, threads, cards, extraction: the stores' users
        called |= set(re.findall(r"\bstore\.([a-z][a-z_]*)\(", path.read_text()))
    public = {name for name in dir(MemoryStore) if not name.startswith("_")}
    assert called and called <= public, called - public


def test_both_databases_settle_names_and_the_default_embedder_the_same_way(tmp_path):
    """Upper-case table names under any prefix, and embedder=None meaning the hashing embedder."""
    from memory.engine import SchemaPolicy, SQLiteMemoryStore
    from memory.engine.stores.oracle import OracleDBMemoryStore, OracleSchema

    from .oracle_double import RecordingConnection, managed_schema

    sqlite = SQLiteMemoryStore(
        str(tmp_path / "s.sqlite3"), table_name_prefix="t1_", schema_policy=SchemaPolicy.CREATE_IF_NECESSARY
    )
    with sqlite._read() as cursor:
        tables = {
            row["name"] for row in sqlite._fetch("SELECT name FROM sqlite_master WHERE type = 'table'", {}, cursor)
        }
    sqlite.close()
    connection = RecordingConnection()
    managed_schema(connection, list(OracleSchema("t1_", 384).names.values()), 384, "hashing-384")
    oracle = OracleDBMemoryStore(None, connection, table_name_prefix="t1_")
    assert set(oracle.schema.names.values()) <= tables  # the same names, as SQLite stores them
    assert "T1_OAM_RECORDS" in tables and "T1_OAM_CHANGES" in tables
    assert sqlite.embedder.name == oracle.embedder.name == "hashing-384"
