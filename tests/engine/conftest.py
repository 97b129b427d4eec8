"""The conformance suite's fixtures: every engine test runs against each backend through `store`.

Backends are listed in BACKENDS. The Oracle run needs a server: set OAM_TEST_ORACLE_DSN
(host:port/service), OAM_TEST_ORACLE_USER and OAM_TEST_ORACLE_PASSWORD; without them its tests
skip with that reason. Each Oracle "database" of a test is a table prefix of its own, dropped
when the test ends.
"""

from __future__ import annotations

import hashlib
import os

import pytest

from memory.engine import AgentMemory, HashingEmbedder, OracleDBMemoryStore, SchemaPolicy, SQLiteMemoryStore
from memory.engine.stores.oracle import OracleSchema

from .helpers import CountingEmbedder

BACKENDS = ["sqlite", "sqlite-sql", "oracle"]
"""sqlite: the embedded store as shipped, searching its in-memory index; sqlite-sql: the same
store with the index off, so every search is plain SQL (FTS5 for keywords), as on Oracle;
oracle: the Oracle store on a live server."""
ORACLE_SKIP_REASON = (
    "the Oracle conformance run needs a server: set OAM_TEST_ORACLE_DSN, OAM_TEST_ORACLE_USER and "
    "OAM_TEST_ORACLE_PASSWORD (docs/oracle.md)"
)


def oracle_connection():
    """A new connection to the test server (thin mode), or a skip with the reason."""
    dsn = os.environ.get("OAM_TEST_ORACLE_DSN")
    if not dsn:
        pytest.skip(ORACLE_SKIP_REASON)
    import oracledb

    return oracledb.connect(
        dsn=dsn, user=os.environ.get("OAM_TEST_ORACLE_USER"), password=os.environ.get("OAM_TEST_ORACLE_PASSWORD")
    )


def oracle_prefix(location, options) -> str:
    """The table prefix standing for one test database: the same location, the same tables."""
    digest = hashlib.sha1(str(location).encode()).hexdigest()[:10]
    return f"T{digest}_{options.get('table_name_prefix') or ''}"


def make_store(backend: str, location, **options):
    """A store of `backend` at `location` (a file for SQLite, a table prefix for Oracle)."""
    options.setdefault("embedder", HashingEmbedder(64))
    options.setdefault("schema_policy", SchemaPolicy.CREATE_IF_NECESSARY)
    if backend == "sqlite":
        return SQLiteMemoryStore(str(location), **options)
    if backend == "sqlite-sql":
        return SQLiteMemoryStore(str(location), search_index=False, **options)
    if backend == "oracle":
        embedder = options.pop("embedder")
        options["table_name_prefix"] = oracle_prefix(location, options)
        return OracleDBMemoryStore(embedder, oracle_connection(), **options)
    raise AssertionError(f"unknown backend {backend}")


def drop_oracle_tables(prefixes: set[str]) -> None:
    connection = oracle_connection()
    try:
        cursor = connection.cursor()
        for prefix in prefixes:
            for statement in OracleSchema(prefix, 1).drop_sql():
                cursor.execute(statement)
    finally:
        connection.close()


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture
def store_factory(backend, tmp_path):
    """Builds stores of the current backend with custom options (retention, prefix, …).

    Each call gets a new empty database unless `name` repeats an earlier one, which opens a second
    store on the same database (as another process would).
    """
    made = []

    def factory(name: str | None = None, **options):
        store = make_store(backend, tmp_path / f"{name or len(made)}.sqlite3", **options)
        made.append(store)
        return store

    yield factory
    for store in made:
        store.close()
    if backend == "oracle" and made:
        drop_oracle_tables({store.schema.names["meta"].removesuffix("OAM_META") for store in made})


@pytest.fixture
def store(store_factory):
    return store_factory()


@pytest.fixture
def memory(store) -> AgentMemory:
    return AgentMemory(store)


@pytest.fixture
def thread(memory):
    return memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")


@pytest.fixture
def other_thread(memory):
    """A second thread of the same user and agent as `thread`."""
    return memory.create_thread(thread_id="t2", user_id="u1", agent_id="a1")


@pytest.fixture
def embedder() -> CountingEmbedder:
    return CountingEmbedder()


@pytest.fixture
def counted_store(store_factory, embedder):
    """A store whose embedder records what it embeds, starting from no calls."""
    store = store_factory(embedder=embedder)
    embedder.reset()
    return store
