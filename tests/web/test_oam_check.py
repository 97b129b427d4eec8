"""`manage.py oam_check [--repair]` and the deleted-records probe behind it."""

from __future__ import annotations

import io
import sqlite3

import pytest
from django.core.management import CommandError, call_command

from memory.curation import Actor, Curation
from memory.curation.consistency import deleted_still_searchable
from memory.models import Action, CurationEntry

from .world import build_world

pytestmark = pytest.mark.django_db


def oam_check(*args: str) -> str:
    output = io.StringIO()
    call_command("oam_check", *args, stdout=output)
    return output.getvalue()


def store_file(url: str) -> sqlite3.Connection:
    """A raw connection to the test's store, for breaking it behind the engine's back."""
    return sqlite3.connect(url.removeprefix("sqlite://"))


def test_a_consistent_store_passes(agent_memory, curator):
    build_world(agent_memory)
    Curation(agent_memory, Actor(curator)).delete_memory("fact-old")

    output = oam_check()

    assert "ok    orphan_links: none" in output
    assert (
        "ok    deleted_still_searchable: none (records deleted through the dashboard that search still returns (1"
        in output
    )
    assert "purge activity: 0 recorded calls older than 30 days deleted" in output
    assert output.endswith("The memory store is consistent.\n")


def test_problems_are_printed_with_counts_and_examples_and_fail_until_repaired(agent_memory, memory_store_url):
    world = build_world(agent_memory)
    raw = store_file(memory_store_url)
    raw.execute("UPDATE OAM_RECORDS SET embedding = NULL WHERE id = ?", (world.fact_id,))
    raw.execute("DELETE FROM OAM_RECORDS WHERE id = ?", (world.old_fact_id,))
    raw.commit()
    raw.close()

    with pytest.raises(CommandError, match=r"remain; `manage\.py oam_check --repair`"):
        oam_check()
    output = oam_check("--repair")

    assert "FIXED missing_vectors: 1 found, 1 repaired, 0 remaining" in output
    assert f"e.g. {world.fact_id}" in output
    assert "FIXED orphan_links: 1 found, 1 repaired, 0 remaining" in output
    assert output.endswith("The memory store is consistent.\n")
    assert oam_check().endswith("The memory store is consistent.\n")


def test_what_cannot_be_repaired_keeps_the_exit_status_non_zero(agent_memory, memory_store_url):
    world = build_world(agent_memory)
    raw = store_file(memory_store_url)
    raw.execute("DELETE FROM OAM_THREADS WHERE id = ?", (world.thread_id,))
    raw.commit()
    raw.close()

    with pytest.raises(CommandError, match=r"remain$"):
        oam_check("--repair")


def test_the_probe_finds_a_deleted_record_that_search_still_returns(agent_memory, curator):
    world = build_world(agent_memory)
    fact = agent_memory.get_memory(world.fact_id)
    Curation(agent_memory, Actor(curator)).delete_memory(world.fact_id)
    assert deleted_still_searchable(agent_memory).found == 0
    # The record is gone from the store, but a stale search still returns it: put a record of the
    # same id back behind the history's back, and make the store's get() miss it.
    entry = CurationEntry.objects.get(action=Action.DELETE)
    agent_memory.add_memory(fact.content, memory_type=fact.record_type, memory_id=world.fact_id)
    store = agent_memory.store
    real_get = store.get
    store.get = lambda record_type, record_id, include_bytes=False: (
        None if record_id == world.fact_id else real_get(record_type, record_id, include_bytes)
    )
    try:
        finding = deleted_still_searchable(agent_memory)
    finally:
        del store.get
    assert entry.object_id == world.fact_id
    assert (finding.found, finding.examples) == (1, (world.fact_id,))
