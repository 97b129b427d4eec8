"""MemoryStore.health, on every backend: what /healthz reports of the store, read without a scan."""

from __future__ import annotations

from memory.engine import AgentMemory, StoreHealth
from memory.engine.stores.sql import SCHEMA_VERSION


def test_a_new_store_reports_its_schema_version_and_backend(memory, store):
    health = memory.health()

    assert isinstance(health, StoreHealth)
    assert (health.backend, health.schema_version) == (store.dialect.name, SCHEMA_VERSION)


def test_the_index_is_unknown_until_a_search_loads_it_then_in_step(memory, store, backend):
    memory.add_memory("likes tea", user_id="u1", memory_id="m1")
    before = memory.health()

    memory.search("tea", user_id="u1")
    after = memory.health()

    if backend == "sqlite":
        assert (before.index_in_step, after.index_in_step, after.index_behind) == (None, True, 0)
    else:  # no in-memory index: nothing to be in step
        assert (before.index_in_step, after.index_in_step) == (None, None)
    assert after.last_change == before.last_change > 0


def test_a_write_by_another_process_puts_the_index_behind_until_the_next_search(store_factory, backend):
    reader = AgentMemory(store_factory("shared"))
    writer = AgentMemory(store_factory("shared"))
    reader.add_memory("likes tea", user_id="u1", memory_id="m1")
    reader.search("tea", user_id="u1")

    writer.add_memory("likes coffee", user_id="u1", memory_id="m2")
    behind = reader.health()
    reader.search("coffee", user_id="u1")
    caught_up = reader.health()

    if backend == "sqlite":
        assert (behind.index_in_step, behind.index_behind) == (False, 1)
        assert (caught_up.index_in_step, caught_up.index_behind) == (True, 0)
    assert caught_up.last_change == behind.last_change
