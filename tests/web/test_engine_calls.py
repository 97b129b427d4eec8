"""List pages make a fixed number of engine calls, whatever their page size (no call per row)."""

from __future__ import annotations

from collections import Counter

import pytest
from django.urls import reverse

from memory.engine import AgentMemory
from memory.queries import review


@pytest.fixture
def counted(agent_memory, monkeypatch) -> Counter:
    """Counts calls to the AgentMemory's public methods (and so to the store behind them): those
    of the page itself, the navigation's review counts being counted already and kept for the
    test (memory.queries.review.pending, tests/web/test_review_badge.py)."""
    monkeypatch.setattr(review, "PENDING_SECONDS", 3600)
    review.pending(agent_memory)
    calls: Counter = Counter()
    for name in dir(AgentMemory):
        if name.startswith("_") or not callable(getattr(AgentMemory, name)):
            continue
        method = getattr(agent_memory, name)

        def counting(*args, _name=name, _method=method, **kwargs):
            calls[_name] += 1
            return _method(*args, **kwargs)

        monkeypatch.setattr(agent_memory, name, counting)
    return calls


@pytest.fixture
def populated(agent_memory):
    for n in range(30):
        user = f"user-{n}"
        agent_memory.add_user(user, f"profile {n}")
        thread = agent_memory.create_thread(thread_id=f"thread-{n}", user_id=user, agent_id=f"agent-{n}")
        thread.add_messages([{"role": "user", "content": f"message {i}"} for i in range(3)])
        agent_memory.add_memory(
            f"memory {n}", memory_type="fact", user_id=user, thread_id=thread.thread_id, autonomous_linking=False
        )
    return agent_memory


@pytest.mark.parametrize(
    "url",
    [
        reverse("memory:thread_list"),
        reverse("memory:memory_list"),
        reverse("memory:user_list"),
        reverse("memory:agent_list"),
        reverse("memory:history"),
        reverse("memory:overview"),
    ],
)
def test_engine_calls_do_not_grow_with_the_page_size(viewer_client, populated, counted, url):
    def calls_for(limit: int) -> Counter:
        counted.clear()
        separator = "&" if "?" in url else "?"
        assert viewer_client.get(f"{url}{separator}limit={limit}").status_code == 200
        return Counter(counted)

    small, large = calls_for(2), calls_for(25)

    assert small == large
    assert sum(large.values()) <= 4


def test_the_list_pages_read_only_session_user_and_saved_views_from_djangos_database(
    viewer_client, populated, django_assert_max_num_queries
):
    """Session, user, the login's scope and groups; and on the memory and thread lists, the person's
    saved views (one query however many rows the page lists)."""
    for url, queries in (
        (reverse("memory:thread_list"), 5),
        (reverse("memory:memory_list"), 5),
        (reverse("memory:user_list"), 4),
    ):
        with django_assert_max_num_queries(queries):
            viewer_client.get(url)


def test_a_thread_page_makes_as_many_engine_calls_for_a_long_thread_as_for_a_short_one(
    viewer_client, counted, agent_memory
):
    from tests.web.world import png_bytes

    for thread_id, count in (("short", 2), ("long", 60)):
        thread = agent_memory.create_thread(thread_id=thread_id, user_id="u", agent_id="a")
        thread.add_messages(
            [
                {
                    "role": "user",
                    "content": [{"type": "text", "text": f"m{i}"}, {"type": "image", "bytes": png_bytes()}],
                }
                for i in range(count)
            ]
        )

    def calls_for(thread_id: str) -> Counter:
        counted.clear()
        assert viewer_client.get(reverse("memory:thread_detail", args=[thread_id])).status_code == 200
        return Counter(counted)

    assert calls_for("short") == calls_for("long")
