"""The overview reads the store in a fixed number of statements, whatever its size: one stats()
and one activity_hygiene() a page, and as many statements for a few old memories and agents'
calls as for many (no read per record). Counted, not timed; that no statement reads a table
through (what made the hygiene panel most of the overview's 150 ms at 100k memories,
bench/pages.py) is tests/engine/test_activity_hygiene.py's."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.urls import reverse

from memory.engine import AgentMemory, acting_as
from memory.queries import review

pytestmark = pytest.mark.django_db
OVERVIEW = reverse("memory:overview")


def grow(agent_memory: AgentMemory, start: int, count: int) -> None:
    """`count` more memories stored 40 days ago (before the hygiene panel's 30 days), each of the
    first half found by an agent's search today; every write logged too."""
    with time_machine.travel(datetime.now(UTC) - timedelta(days=40)):
        for n in range(start, start + count):
            agent_memory.add_memory(
                f"Alice collects stamp number {n}.", memory_id=f"stamp-{n}", user_id="alice", autonomous_linking=False
            )
    with acting_as("support-bot"):
        for n in range(start, start + count // 2):
            agent_memory.search(f"stamp number {n}", user_id="alice", max_results=1)
    agent_memory.activity.flush()


def overview_reads(client, agent_memory: AgentMemory, monkeypatch) -> tuple[int, Counter]:
    """The store statements one overview sends, and its engine calls by name (the navigation's
    Review badge counted again, as it is every few seconds)."""
    review._pending.clear()
    statements = 0
    calls: Counter = Counter()
    fetch = agent_memory.store._fetch

    def counting(*args, **kwargs):
        nonlocal statements
        statements += 1
        return fetch(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(agent_memory.store, "_fetch", counting)
        for name in ("stats", "activity_hygiene", "vector_state", "count_relations", "count_memories"):
            method = getattr(agent_memory, name)

            def spying(*args, _name=name, _method=method, **kwargs):
                calls[_name] += 1
                return _method(*args, **kwargs)

            patch.setattr(agent_memory, name, spying)
        response = client.get(OVERVIEW)
    assert response.status_code == 200
    return statements, calls


def test_the_overview_reads_as_much_of_a_large_store_as_of_a_small_one(viewer_client, agent_memory, monkeypatch):
    grow(agent_memory, 0, 12)
    few, calls = overview_reads(viewer_client, agent_memory, monkeypatch)
    grow(agent_memory, 12, 60)
    many, more_calls = overview_reads(viewer_client, agent_memory, monkeypatch)

    assert many == few
    assert more_calls == calls
    assert calls["stats"] == 1 and calls["activity_hygiene"] == 1 and calls["vector_state"] == 1
    html = viewer_client.get(OVERVIEW).content.decode()
    assert 'data-never-served="36"' in html  # the second half of the 72 old memories, never found
