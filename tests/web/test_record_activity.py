"""Agent activity where records appear: a memory's "Served to agents" panel and its timeline, the
agent calls on a thread's page, and the cards actually served on a thread's card page."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse
from django.utils.html import escape

from memory import services
from memory.curation import Actor, Curation
from memory.engine import SOURCE_MESSAGES_KEY, acting_as, caused_by

from .world import World, build_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def event_url(event_id: str) -> str:
    return reverse("memory:activity_event", args=[event_id])


def memory_page(client, memory_id: str) -> str:
    response = client.get(reverse("memory:memory_detail", args=[memory_id]))
    assert response.status_code == 200, response.content.decode()[:3000]
    return response.content.decode()


def section(html: str, heading_id: str) -> str:
    """The HTML of the <section> a heading labels, to assert on one panel alone."""
    start = html.index(f'aria-labelledby="{heading_id}"')
    return html[start : html.index("</section>", start)]


def served_by(agent_memory, caller: str, query: str, times: int = 1, **scope) -> None:
    with acting_as(caller):
        for _ in range(times):
            agent_memory.search(query, **{"user_id": "alice", **scope})


# --- a memory's page: served to agents ----------------------------------------------------------


def test_the_panel_counts_the_calls_that_served_it_by_caller(viewer_client, agent_memory, world):
    served_by(agent_memory, "support-bot", "vegetarian food", times=3)
    served_by(agent_memory, "travel-bot", "vegetarian")
    with acting_as("carl", caller_kind="person"):  # a person's own search is not an agent's
        agent_memory.search("vegetarian", user_id="alice")
    agent_memory.activity.flush()

    panel = section(memory_page(viewer_client, world.fact_id), "served-heading")

    assert "<strong>4 calls</strong>" in panel
    rows = re.findall(r'<td class="text-break" title="([^"]+)">[^<]+</td><td class="text-end">(\d+)</td>', panel)
    assert rows == [("support-bot", "3"), ("travel-bot", "1")]
    assert "carl" not in panel


def test_the_latest_calls_link_to_their_events_newest_first_with_the_rank(viewer_client, agent_memory, world):
    served_by(agent_memory, "support-bot", "vegetarian")
    served_by(agent_memory, "travel-bot", "Alice used to eat fish")
    agent_memory.activity.flush()
    events = agent_memory.list_activity(record_id=world.fact_id, kind="search")
    expected = [(event.id, next(r.rank for r in event.results if r.record_id == world.fact_id)) for event in events]

    panel = section(memory_page(viewer_client, world.fact_id), "served-heading")

    latest = panel[panel.index("Latest calls that returned it") :]
    shown = re.findall(r'<a href="/activity/([^/]+)/">search</a>\s*·\s*rank (\d+)', latest)
    assert [(event_id, int(rank)) for event_id, rank in shown] == expected
    assert [event_url(event_id) for event_id, _ in expected] == [f"/activity/{event_id}/" for event_id, _ in shown]
    assert "“Alice used to eat fish”" in latest


def test_a_memory_no_agent_was_served_says_so(viewer_client, world):
    panel = section(memory_page(viewer_client, world.fact_id), "served-heading")

    assert "No agent was served it in the last 30 days." in panel
    assert "Latest calls" not in panel


def test_fifty_callers_show_the_busiest_ten_and_count_the_rest(viewer_client, agent_memory, world):
    long_name = "a-caller-with-a-very-long-name-" + "x" * 150
    served_by(agent_memory, long_name, "vegetarian", times=3)
    for n in range(49):
        served_by(agent_memory, f"bot-{n:02d}", "vegetarian", times=2 if n < 4 else 1)
    agent_memory.activity.flush()

    panel = section(memory_page(viewer_client, world.fact_id), "served-heading")

    rows = re.findall(r'<td class="text-break" title="([^"]+)">[^<]+</td><td class="text-end">(\d+)</td>', panel)
    assert rows[:5] == [(long_name, "3"), ("bot-00", "2"), ("bot-01", "2"), ("bot-02", "2"), ("bot-03", "2")]
    assert f'title="{long_name}">{long_name[:59]}…</td>' in panel  # cut to 60 characters, whole on hover
    assert len(rows) == 10
    assert "40 other callers" in panel and '<td class="text-end text-body-secondary">40</td>' in panel
    assert "<strong>56 calls</strong>" in panel


def test_a_call_that_served_it_while_invalid_is_marked(viewer_client, agent_memory, world):
    with acting_as("support-bot"):
        agent_memory.search("eat fish", user_id="alice", include_invalid_results=True)
    agent_memory.activity.flush()

    panel = section(memory_page(viewer_client, world.old_fact_id), "served-heading")

    assert "invalid then" in panel


# --- a memory's page: its timeline ---------------------------------------------------------------


def timeline_items(html: str) -> list[tuple[str, str]]:
    """(kind, text) of each timeline entry, in page order, whitespace squeezed and tags dropped."""
    timeline = section(html, "record-timeline-heading")
    items = re.findall(r'<li class="list-group-item[^"]*" data-kind="(\w+)">(.*?)</li>', timeline, re.S)
    return [(kind, " ".join(re.sub(r"<[^>]+>", " ", body).split())) for kind, body in items]


def test_the_timeline_tells_who_created_changed_and_was_served_it_oldest_first(
    viewer_client, agent_memory, world, curator
):
    with acting_as("ingest-bot"):
        agent_memory.add_memory("Alice likes trams.", memory_id="trams", user_id="alice", autonomous_linking=False)
    with acting_as("fixer-bot"):
        agent_memory.update_memory("trams", metadata={"checked": True})
    served_by(agent_memory, "support-bot", "trams")
    agent_memory.activity.flush()
    record = agent_memory.get_memory("trams")
    entry = Curation(agent_memory, Actor(curator)).update_memory(
        "trams", version=record.version, content="Alice loves trams."
    )
    agent_memory.activity.flush()

    html = memory_page(viewer_client, "trams")
    items = timeline_items(html)

    kinds = [kind for kind, _ in items]
    assert kinds[:3] == ["created", "changed", "served"]
    assert "Created" in items[0][1] and "ingest-bot" in items[0][1]
    assert "Changed its metadata" in items[1][1] and "fixer-bot" in items[1][1]
    assert "support-bot" in items[2][1] and "rank 1" in items[2][1] and "“trams”" in items[2][1]
    person = [text for kind, text in items if "carl" in text]
    assert person and all(kind == "changed" for kind, text in items if "carl" in text)
    assert f'href="{reverse("memory:history_entry", args=[entry.pk])}"' in section(html, "record-timeline-heading")
    write_events = agent_memory.list_activity(record_id="trams", kind="write", caller="ingest-bot")
    assert f'href="{event_url(write_events[0].id)}"' in section(html, "record-timeline-heading")


def test_a_persons_logged_write_and_its_history_entry_are_one_entry(viewer_client, agent_memory, world, curator):
    with acting_as("carl", caller_kind="person"):  # as the dashboard records a person's changes
        entry = Curation(agent_memory, Actor(curator)).update_memory(
            world.fact_id, version=agent_memory.get_memory(world.fact_id).version, content="Alice is vegan."
        )
    agent_memory.activity.flush()
    [write] = agent_memory.list_activity(record_id=world.fact_id, kind="write", caller="carl")

    html = memory_page(viewer_client, world.fact_id)

    carl = [text for kind, text in timeline_items(html) if "carl" in text]
    assert len(carl) == 1 and carl[0].startswith(f"changed {escape(entry.summary)} · the logged call")
    timeline = section(html, "record-timeline-heading")
    assert f'href="{reverse("memory:history_entry", args=[entry.pk])}"' in timeline
    assert f'href="{event_url(write.id)}"' in timeline


def test_a_memory_the_llm_extracted_names_the_messages_it_came_from(viewer_client, agent_memory, world):
    with caused_by({"what": "extraction", "message_ids": [world.message_ids[0]]}):
        agent_memory.add_memory(
            "Alice wants quiet hotels.",
            memory_id="quiet",
            user_id="alice",
            thread_id=world.thread_id,
            metadata={SOURCE_MESSAGES_KEY: [world.message_ids[0]]},
            autonomous_linking=False,
        )
    agent_memory.activity.flush()

    [(kind, text)] = timeline_items(memory_page(viewer_client, "quiet"))

    assert kind == "created" and "LLM extraction" in text and "from message #1" in text
    message_url = reverse("memory:message_detail", args=[world.thread_id, world.message_ids[0]])
    assert f'href="{message_url}"' in section(memory_page(viewer_client, "quiet"), "record-timeline-heading")


def test_a_memory_made_before_the_log_is_created_by_nobody_known(viewer_client, agent_memory, world):
    agent_memory.activity.flush()
    agent_memory.purge_activity(before=(datetime.now(UTC) + timedelta(days=1)).isoformat())

    [(kind, text)] = timeline_items(memory_page(viewer_client, world.fact_id))

    assert kind == "created" and "Who made it is not known" in text


def test_the_timeline_says_when_it_shows_only_the_latest_calls(viewer_client, agent_memory, world):
    served_by(agent_memory, "support-bot", "vegetarian", times=23)
    agent_memory.activity.flush()

    html = memory_page(viewer_client, world.fact_id)

    assert "The latest 20 of the 23 calls that served it to agents are shown." in html
    assert [kind for kind, _ in timeline_items(html)].count("served") == 20


def test_with_recording_off_the_page_works_and_says_so(viewer_client, monkeypatch):
    monkeypatch.setenv("OAM_ACTIVITY", "off")
    services.reset_agent_memory()
    agent_memory = services.get_agent_memory()
    assert agent_memory.activity is None
    world = build_world(agent_memory)
    agent_memory.search("vegetarian", user_id="alice")

    html = memory_page(viewer_client, world.fact_id)

    assert "Recording is off in this dashboard (<code>OAM_ACTIVITY=off</code>)" in section(html, "served-heading")
    assert "No agent was served it in the last 30 days." in html
    assert "Who made it is not known" in section(html, "record-timeline-heading")


# --- a thread's page: the agent calls made in it ---------------------------------------------------


def thread_page(client, thread_id: str, **query) -> str:
    response = client.get(reverse("memory:thread_detail", args=[thread_id]), query)
    assert response.status_code == 200, response.content.decode()[:3000]
    return response.content.decode()


def test_the_thread_page_lists_its_agent_calls_newest_first(viewer_client, agent_memory, world):
    thread = agent_memory.get_thread(world.thread_id)
    with acting_as("support-bot"):
        thread.get_context_card()
        thread.search("quiet hotel")
        thread.add_messages([{"role": "assistant", "content": "Try Casa Amora."}])
    with acting_as("carl", caller_kind="person"):
        thread.search("hotel")
    with acting_as("other-bot"):
        agent_memory.search("vegetarian", user_id="alice")  # not in the thread
    agent_memory.activity.flush()
    write, search, card = agent_memory.list_activity(thread_id=world.thread_id, caller="support-bot")
    total = agent_memory.activity_counts(thread_id=world.thread_id, caller_kind="agent").total

    calls = section(thread_page(viewer_client, world.thread_id), "calls-heading")

    row = (
        r'<a href="/activity/([^/]+)/">(\w+)</a>[^<]*(?:<span[^>]*>(\w+)</span>)?</td>'
        r'\s*<td class="text-break" title="([^"]+)">'
    )
    rows = re.findall(row, calls)
    assert rows[:3] == [
        (write.id, "write", "add", "support-bot"),
        (search.id, "search", "", "support-bot"),
        (card.id, "card", "", "support-bot"),
    ]
    assert {caller for *_, caller in rows} == {
        "support-bot",
        "pytest",
    }  # the world's writes; no person, no other thread
    assert f'<td class="text-end">{search.result_count}</td>' in calls
    assert f'href="{reverse("memory:activity")}?thread_id={world.thread_id}"' in calls and f"All {total}" in calls


def test_each_message_is_followed_by_the_calls_made_before_the_next(viewer_client, agent_memory, world):
    thread = agent_memory.get_thread(world.thread_id)
    with acting_as("support-bot"):
        thread.get_context_card()
    [fourth] = thread.add_messages([{"role": "user", "content": "And a museum?"}])
    with acting_as("museum-bot"):
        thread.search("museum")
        thread.search("art museum")
    agent_memory.activity.flush()

    html = thread_page(viewer_client, world.thread_id)

    after = {
        number: " ".join(re.sub(r"<[^>]+>", " ", text).split())
        for number, text in re.findall(r'aria-label="Agent calls after message #(\d+)">(.*?)</div>', html, re.S)
    }
    assert list(after) == ["3", "4"]
    assert after["3"].startswith("then a context card by support-bot") and "museum-bot" not in after["3"]
    assert after["4"].count("a search by museum-bot") == 2 and "support-bot" not in after["4"]
    searches = agent_memory.list_activity(thread_id=world.thread_id, caller="museum-bot")
    assert all(f'href="{event_url(event.id)}"' in html for event in searches)
    assert fourth in html


def test_a_thread_without_calls_says_so_with_recording_off(viewer_client, monkeypatch):
    monkeypatch.setenv("OAM_ACTIVITY", "off")
    services.reset_agent_memory()
    world = build_world(services.get_agent_memory())
    services.get_agent_memory().get_thread(world.thread_id).search("hotel")

    html = thread_page(viewer_client, world.thread_id)

    assert "No agent call was recorded in this thread." in section(html, "calls-heading")
    assert "Agent calls after message" not in html


# --- a thread's card page: the cards actually served -----------------------------------------------


def card_page(client, thread_id: str, query: str = "") -> str:
    response = client.get(reverse("memory:card_preview", args=[thread_id]) + query)
    assert response.status_code == 200, response.content.decode()[:3000]
    return response.content.decode()


def served_items(html: str) -> list[str]:
    served = section(html, "served-heading")
    return re.findall(
        r'<li class="list-group-item py-2[^"]*">(.*?)</li>\s*(?=<li class="list-group-item|</ol>)', served, re.S
    )


def test_the_cards_served_are_listed_newest_first_at_their_message(viewer_client, agent_memory, world):
    thread = agent_memory.get_thread(world.thread_id)
    with acting_as("support-bot"):
        thread.get_context_card(max_relevant_results=3)
    [fourth] = thread.add_messages([{"role": "user", "content": "Vegetarian restaurants nearby?"}])
    with acting_as("concierge-bot"):
        thread.get_context_card(token_budget=400)
        thread.get_context_card(as_of_message_id=world.message_ids[0])
    agent_memory.activity.flush()
    named, latest, first = agent_memory.list_activity(thread_id=world.thread_id, kind="card")

    items = served_items(card_page(viewer_client, world.thread_id))

    assert len(items) == 3
    for item, event in zip(items, (named, latest, first), strict=True):
        assert f'href="{event_url(event.id)}"' in item
        assert f"{event.tokens} token" in item
        ids = re.findall(r'\d+\. <a href="[^"]+" title="([^"]+)">', item)
        assert ids == [result.record_id for result in event.results if result.hop == 0]
    message_url = lambda message_id: reverse("memory:message_detail", args=[world.thread_id, message_id])  # noqa: E731
    assert (
        f'href="{message_url(world.message_ids[0])}">message #1</a>' in items[0] and "(the call named it)" in items[0]
    )
    assert f'href="{message_url(fourth)}">message #4</a>' in items[1] and "concierge-bot" in items[1]
    assert f'href="{message_url(world.message_ids[2])}">message #3</a>' in items[2] and "support-bot" in items[2]
    assert "token_budget=400" in items[1] and "as_of_message_id" not in items[1]  # no message since: as it is now
    assert "max_relevant_results=3" in items[2] and f"as_of_message_id={world.message_ids[2]}" in items[2]
    assert f"as_of_message_id={world.message_ids[0]}" in items[0]


def test_a_served_card_is_set_beside_todays_rebuild(viewer_client, agent_memory, world, curator):
    thread = agent_memory.get_thread(world.thread_id)
    with acting_as("support-bot"):
        thread.get_context_card()
    agent_memory.activity.flush()
    [event] = agent_memory.list_activity(thread_id=world.thread_id, kind="card")
    served_ids = [result.record_id for result in event.results if result.hop == 0]
    gone = served_ids[0]
    Curation(agent_memory, Actor(curator)).delete_memory(gone)
    link = re.search(r'href="\?([^"#]+)#beside-heading"', served_items(card_page(viewer_client, world.thread_id))[0])

    html = card_page(viewer_client, world.thread_id, "?" + link.group(1).replace("&amp;", "&"))

    beside = section(html, "beside-heading")
    assert "support-bot" in beside
    served_then, rebuilt = beside.split("Rebuilt today with the same parameters")
    assert re.findall(r'<li><a href="[^"]+" title="([^"]+)">', served_then) == served_ids
    assert "not in today's card" in served_then.split(f'title="{gone}"')[1].split("</li>")[0]
    assert f'title="{gone}"' not in rebuilt and rebuilt.count("<li><a href=") == len(served_ids) - 1
    assert escape(event.content) in served_then
    assert f'href="{event_url(event.id)}"' in beside
    assert f'href="{reverse("memory:activity_replay", args=[event.id])}"' in beside
    assert "No message came since: the thread as it is now." in beside
    agent_memory.activity.flush()
    assert len(agent_memory.list_activity(thread_id=world.thread_id, kind="card")) == 1  # looking records nothing


def test_an_unknown_served_card_is_said_so_and_the_card_still_shown(viewer_client, world):
    html = card_page(viewer_client, world.thread_id, "?served=" + "x" * 5000)

    assert "No card served in this thread is recorded as" in html
    assert "The card as the agent gets it" in html
    assert "No card served in this thread was recorded." in html


def test_the_card_page_works_with_recording_off(viewer_client, monkeypatch):
    monkeypatch.setenv("OAM_ACTIVITY", "off")
    services.reset_agent_memory()
    world = build_world(services.get_agent_memory())
    services.get_agent_memory().get_thread(world.thread_id).get_context_card()

    html = card_page(viewer_client, world.thread_id)

    assert "No card served in this thread was recorded." in html and "The card as the agent gets it" in html
