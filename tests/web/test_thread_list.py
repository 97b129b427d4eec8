"""The thread list at /: login required, shows the store's threads, pages with the engine's cursor."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.urls import reverse

THREAD_LIST = reverse("memory:thread_list")


def add_thread(agent_memory, thread_id: str, messages: int = 2, **metadata) -> None:
    thread = agent_memory.create_thread(thread_id=thread_id, user_id="u-ana", agent_id="a-guide", metadata=metadata)
    thread.add_messages(
        [
            {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} in {thread_id}"}
            for i in range(messages)
        ]
    )


def next_link(html: str) -> str | None:
    match = re.search(r'<a rel="next" href="([^"]+)"', html)
    return match.group(1).replace("&amp;", "&") if match else None


def test_it_redirects_anonymous_users_to_login(client):
    response = client.get(THREAD_LIST)

    assert response.status_code == 302
    assert response["Location"] == f"{reverse('login')}?next={THREAD_LIST}"


def test_it_shows_the_stores_threads(viewer_client, agent_memory):
    add_thread(agent_memory, "trip-to-porto", messages=4, topic="travel", tags=["trip", "urgent"])

    response = viewer_client.get(THREAD_LIST)

    assert response.status_code == 200
    html = response.content.decode()
    assert "trip-to-porto" in html
    assert "u-ana" in html
    assert "a-guide" in html
    assert "travel" in html
    assert "[&quot;trip&quot;, &quot;urgent&quot;]" in html  # lists shown as JSON, not Python reprs
    [row] = response.context["rows"]
    assert row.thread.message_count == 4


def test_it_shows_the_seeded_demo_threads(viewer_client, agent_memory):
    call_command("seed_demo", "--seed=1", "--end-date=2026-01-15")

    html = viewer_client.get(THREAD_LIST).content.decode()

    assert html.count("<code>demo-") == 12
    assert "Lisbon long weekend" in html


def test_it_lists_latest_activity_first(viewer_client, agent_memory):
    add_thread(agent_memory, "older")
    add_thread(agent_memory, "newer")

    response = viewer_client.get(THREAD_LIST)

    assert [row.thread.id for row in response.context["rows"]] == ["newer", "older"]


def test_it_says_so_when_the_store_is_empty(viewer_client):
    response = viewer_client.get(THREAD_LIST)

    assert response.status_code == 200
    assert "No threads yet" in response.content.decode()
    assert response.context["next_cursor"] is None


def test_it_pages_through_every_thread_once_with_the_next_link(viewer_client, agent_memory):
    thread_ids = {f"thread-{n}" for n in range(5)}
    for thread_id in sorted(thread_ids):
        add_thread(agent_memory, thread_id)

    seen, pages, url = [], 0, f"{THREAD_LIST}?limit=2"
    while url:
        response = viewer_client.get(url)
        assert response.status_code == 200
        seen += [row.thread.id for row in response.context["rows"]]
        pages += 1
        url = next_link(response.content.decode())

    assert pages == 3
    assert sorted(seen) == sorted(thread_ids)


def test_the_next_link_keeps_the_page_size(viewer_client, agent_memory):
    for n in range(3):
        add_thread(agent_memory, f"thread-{n}")

    link = next_link(viewer_client.get(f"{THREAD_LIST}?limit=1").content.decode())

    assert "limit=1" in link
    assert "cursor=" in link


def test_later_pages_link_back_to_the_first(viewer_client, agent_memory):
    for n in range(2):
        add_thread(agent_memory, f"thread-{n}")
    link = next_link(viewer_client.get(f"{THREAD_LIST}?limit=1").content.decode())

    html = viewer_client.get(link).content.decode()

    assert "First page" in html
    assert next_link(html) is None


@pytest.mark.parametrize("cursor", ["not-a-cursor", "WyJ4Il0"])
def test_it_rejects_a_damaged_cursor(viewer_client, agent_memory, cursor):
    add_thread(agent_memory, "thread-0")

    response = viewer_client.get(THREAD_LIST, {"cursor": cursor})

    assert response.status_code == 400


@pytest.mark.parametrize(("limit", "expected"), [("abc", 25), ("0", 1), ("1000", 100)])
def test_it_keeps_the_page_size_within_bounds(viewer_client, agent_memory, monkeypatch, limit, expected):
    requested = []
    list_threads = agent_memory.list_threads

    def recording_list_threads(**kwargs):
        requested.append(kwargs["limit"])
        return list_threads(**kwargs)

    monkeypatch.setattr(agent_memory, "list_threads", recording_list_threads)

    viewer_client.get(THREAD_LIST, {"limit": limit})

    assert requested == [expected]


def test_it_reads_only_the_session_and_user_from_djangos_database(
    viewer_client, agent_memory, django_assert_max_num_queries
):
    for n in range(30):
        add_thread(agent_memory, f"thread-{n}")

    with django_assert_max_num_queries(2):
        viewer_client.get(THREAD_LIST)
