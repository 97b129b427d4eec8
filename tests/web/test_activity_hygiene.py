"""Memory hygiene on the overview (most served, never served, invalid memories still served, the
slowest calls), the activity recorder's health on the overview and /healthz, and the activity
log purged past its retention by `manage.py oam_check` and the overview's check button."""

from __future__ import annotations

import io
import queue
import re
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core.management import call_command
from django.urls import reverse

from memory import services
from memory.engine import ActivityEvent, acting_as

pytestmark = pytest.mark.django_db
OVERVIEW = reverse("memory:overview")


def panel(client) -> str:
    response = client.get(OVERVIEW)
    assert response.status_code == 200, response.content.decode()[:3000]
    html = response.content.decode()
    start = html.index('aria-labelledby="hygiene-heading"')
    return html[start : html.index("</section>", start)]


def memory_url(memory_id: str) -> str:
    return reverse("memory:memory_detail", args=[memory_id])


@pytest.fixture
def memories(agent_memory) -> list[str]:
    """Six of Alice's memories stored 40 days ago (before the panel's 30 days), and one today."""
    add = agent_memory.add_memory
    with time_machine.travel(datetime.now(UTC) - timedelta(days=40)):
        ids = [
            add(text, memory_id=memory_id, user_id="alice", autonomous_linking=False)
            for memory_id, text in (
                ("tea", "Alice drinks green tea."),
                ("trains", "Alice travels by train."),
                ("cats", "Alice has two cats."),
                ("old-address", "Alice lives in Porto."),
                ("piano", "Alice plays the piano."),
                ("jazz", "Alice likes jazz."),
            )
        ]
    ids.append(add("Alice lives in Lisbon.", memory_id="address", user_id="alice", autonomous_linking=False))
    agent_memory.update_memory("old-address", status="invalid")
    return ids


def test_the_panel_ranks_the_most_served_and_counts_the_never_served(viewer_client, agent_memory, memories):
    with acting_as("support-bot"):
        for query, times in (("green tea", 3), ("train travel", 2)):
            for _ in range(times):
                agent_memory.search(query, user_id="alice", max_results=1)
    with acting_as("carl", caller_kind="person"):  # people's own searches do not count
        for _ in range(5):
            agent_memory.search("cats", user_id="alice", max_results=1)
    agent_memory.activity.flush()

    html = panel(viewer_client)

    most = html[html.index("Most served memories") : html.index("Never served")]
    shown = re.findall(r'<a href="([^"]+)">[^<]+</a> <span class="text-body-secondary">· (\d+) calls?</span>', most)
    assert shown == [(memory_url("tea"), "3"), (memory_url("trains"), "2")]
    never = html[html.index("Never served") : html.index("Invalid but served")]
    # stored before the 30 days and served to no agent: cats (a person's searches only), the
    # invalid old address, piano, jazz; not today's address
    assert 'data-never-served="4"' in never and "4 memories stored before then" in never
    assert [memory_url(memory_id) for memory_id in ("cats", "old-address", "piano", "jazz")] == re.findall(
        r'<a href="([^"]+)">', never
    )
    assert "Agents are being handed retired facts" not in html


def test_the_panel_counts_memories_alone_not_profiles_or_messages(viewer_client, agent_memory, memories):
    agent_memory.add_user("alice", "Alice drinks green tea every morning.")
    with acting_as("support-bot"):
        for _ in range(3):
            agent_memory.search("green tea", user_id="alice", max_results=2)
    agent_memory.activity.flush()
    assert agent_memory.served_records(["alice", "tea"], caller_kind="agent").keys() == {"alice", "tea"}

    most = panel(viewer_client).split("Most served memories")[1].split("Never served")[0]

    assert re.findall(r'<a href="([^"]+)">', most) == [memory_url("tea")]


def test_invalid_memories_still_served_are_a_visible_warning(viewer_client, agent_memory, memories):
    with acting_as("support-bot"):
        agent_memory.search("Where does Alice live? Porto", user_id="alice", max_results=2)
        agent_memory.search("Alice lives in Porto", user_id="alice", max_results=2, include_invalid_results=False)
    agent_memory.activity.flush()

    html = panel(viewer_client)

    warning = html[html.index("data-invalid-served") : html.index("Most served")]
    assert "Agents are being handed retired facts: these memories were invalid when agents were served them." in warning
    assert warning.count("<li") == 1
    assert f'href="{memory_url("old-address")}"' in warning and "1 call" in warning
    assert f'href="{reverse("memory:review")}?queue=invalid"' in warning


def test_the_slowest_calls_are_listed_slowest_first_and_linked(viewer_client, agent_memory, memories):
    agent_memory.activity.flush()
    now = datetime.now(UTC)
    agent_memory.store.append_activity(
        [
            ActivityEvent(
                id=f"slow-{ms}",
                kind="search",
                call="AgentMemory.search",
                time=(now - timedelta(minutes=ms)).isoformat(),
                caller="a-very-long-caller-name-" + "z" * 200,
                request={"query": "tea"},
                duration_ms=float(ms),
            )
            for ms in (120, 4500, 900)
        ]
    )

    html = panel(viewer_client)

    slowest = html[html.index("Slowest calls") :]
    assert re.findall(r'<a href="/activity/([^/]+)/">search</a> (\d+) ms', slowest)[:3] == [
        ("slow-4500", "4500"),
        ("slow-900", "900"),
        ("slow-120", "120"),
    ]


def test_an_empty_log_says_so_in_each_part(viewer_client, agent_memory):
    html = panel(viewer_client)

    assert "No agent was served a memory." in html
    assert re.search(r"No memory stored before \d+ \w+ \d{4} went unserved\.", html)
    assert "None: no invalid memory was served." in html
    assert "No agent call recorded." in html
    assert "data-recorder" not in html


# --- the recorder's health: the overview and /healthz --------------------------------------------------


def test_a_log_the_store_refuses_is_reported_with_counts_and_error_never_raised(client, viewer_client, agent_memory):
    def refuse(events):
        raise OSError("disk I/O error writing /srv/secret/memory.sqlite3")

    agent_memory.store.append_activity = refuse
    for _ in range(2):
        agent_memory.search("tea", user_id="alice")  # the calls themselves succeed
    agent_memory.activity.flush()

    html = panel(viewer_client)
    body = client.get("/healthz").json()

    assert 'data-recorder="troubled"' in html and "The activity log is missing calls." in html
    assert "recorder failed to write 2 (the store refused them);" in html and "dropped" not in html
    assert "OSError: disk I/O error writing /srv/secret/memory.sqlite3" in html
    assert body["status"] == "ok"  # lost events do not make the process unavailable
    assert body["activity"]["failed"] == 2 and body["activity"]["enabled"] is True
    assert body["activity"]["last_error"]["type"] == "OSError"
    assert "/srv/secret" not in str(body)  # the public probe names no paths


def test_a_full_queue_is_reported_as_dropped_events(client, viewer_client, agent_memory, monkeypatch):
    def full(draft):
        raise queue.Full

    monkeypatch.setattr(agent_memory.activity._queue, "put_nowait", full)
    for _ in range(3):
        agent_memory.search("tea", user_id="alice")

    html = panel(viewer_client)
    body = client.get("/healthz").json()

    assert "dropped 3 events (its queue was full);" in html and "failed to write" not in html
    assert (body["activity"]["dropped"], body["activity"]["failed"], body["activity"]["last_error"]) == (3, 0, None)


def test_healthz_counts_what_the_recorder_wrote(client, agent_memory):
    for _ in range(3):
        agent_memory.search("tea", user_id="alice")
    agent_memory.activity.flush()

    activity = client.get("/healthz").json()["activity"]

    recorded = agent_memory.activity.stats()["recorded"]
    assert recorded >= 3
    assert activity == {
        "enabled": True,
        "recorded": recorded,
        "dropped": 0,
        "failed": 0,
        "queued": 0,
        "last_error": None,
    }


def test_with_recording_off_the_overview_and_healthz_say_so(client, viewer_client, monkeypatch, db):
    monkeypatch.setenv("OAM_ACTIVITY", "off")
    services.reset_agent_memory()
    services.get_agent_memory().search("tea", user_id="alice")

    html = panel(viewer_client)
    activity = client.get("/healthz").json()["activity"]

    assert 'data-recorder="off"' in html and "<code>OAM_ACTIVITY=off</code>" in html
    assert activity == {"enabled": False, "recorded": 0, "dropped": 0, "failed": 0, "queued": 0, "last_error": None}


# --- the purge past the retention ------------------------------------------------------------------------


def old_and_new_events(agent_memory) -> None:
    """Three calls recorded 45 days ago (past the default retention of 30) and three 2 days ago."""
    if agent_memory.activity is not None:
        agent_memory.activity.flush()
    now = datetime.now(UTC)
    agent_memory.store.append_activity(
        [
            ActivityEvent(
                id=f"{label}-{n}", kind="search", call="AgentMemory.search", time=when.isoformat(), caller="bot"
            )
            for label, when in (("old", now - timedelta(days=45)), ("recent", now - timedelta(days=2)))
            for n in range(3)
        ]
    )


def test_oam_check_purges_the_calls_past_the_retention_and_says_how_many(agent_memory):
    old_and_new_events(agent_memory)
    output = io.StringIO()

    call_command("oam_check", stdout=output)

    assert "purge activity: 3 recorded calls older than 30 days deleted" in output.getvalue()
    left = {event.id for event in agent_memory.list_activity(caller="bot")}
    assert left == {"recent-0", "recent-1", "recent-2"}


def test_oam_check_keeps_the_log_when_the_retention_is_forever(monkeypatch, db):
    monkeypatch.setenv("OAM_ACTIVITY_RETENTION_DAYS", "0")
    services.reset_agent_memory()
    agent_memory = services.get_agent_memory()
    old_and_new_events(agent_memory)
    output = io.StringIO()

    call_command("oam_check", stdout=output)

    assert "the log is kept forever (OAM_ACTIVITY_RETENTION_DAYS=0), nothing purged" in output.getvalue()
    assert len(agent_memory.list_activity(caller="bot")) == 6


def test_oam_check_purges_even_with_recording_off_here(monkeypatch, db):
    monkeypatch.setenv("OAM_ACTIVITY", "off")
    services.reset_agent_memory()
    agent_memory = services.get_agent_memory()
    old_and_new_events(agent_memory)

    call_command("oam_check", stdout=io.StringIO())

    assert len(agent_memory.list_activity(caller="bot")) == 3


def test_the_overview_check_button_purges_and_says_so(curator_client, agent_memory):
    old_and_new_events(agent_memory)

    html = curator_client.post(reverse("memory:check_run"), follow=True).content.decode()

    assert "Purged 3 recorded calls older than 30 days." in html
    assert len(agent_memory.list_activity(caller="bot")) == 3
