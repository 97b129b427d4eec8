"""The conformance suite's fixtures: every engine test runs against each backend through `store`.

Backends are listed in BACKENDS; a backend that cannot run here (no server) skips with its reason.
"""

from __future__ import annotations

import pytest

from memory.engine import AgentMemory, HashingEmbedder, SchemaPolicy, SQLiteMemoryStore

from .helpers import CountingEmbedder

BACKENDS = ["sqlite"]


def make_store(backend: str, location, **options):
    """A store of `backend` at `location` (a file for SQLite); options go to its constructor."""
    options.setdefault("embedder", HashingEmbedder(64))
    options.setdefault("schema_policy", SchemaPolicy.CREATE_IF_NECESSARY)
    if backend == "sqlite":
        return SQLiteMemoryStore(str(location), **options)
    raise AssertionError(f"unknown backend {backend}")


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
