"""The agent activity pages in a real browser: filter the timeline, open a call, replay it in place."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from memory.engine import acting_as
from tests.web.world import World, build_world


@pytest.fixture
def world(agent_memory) -> World:
    world = build_world(agent_memory)
    with acting_as("travel-planner"):
        agent_memory.search("quiet hotel", user_id="alice")
    with acting_as("support-bot"):
        agent_memory.search("vegetarian", user_id="alice", max_results=2)
    agent_memory.add_memory(
        "Alice is strictly vegetarian.", memory_type="fact", memory_id="fact-strict", user_id="alice"
    )
    assert agent_memory.activity.flush()
    return world


def test_a_call_is_found_opened_and_replayed(logged_in_page: Page, world):
    page = logged_in_page
    page.goto(reverse("memory:activity"))
    rows = page.locator("table.oam-activity-table tbody tr")
    expect(rows.filter(has_text="quiet hotel")).to_have_count(1)

    page.get_by_role("textbox", name="Caller").fill("support-bot")
    page.get_by_role("button", name="Apply filters").click()

    expect(rows.filter(has_text="quiet hotel")).to_have_count(0)
    expect(rows.filter(has_text="vegetarian")).to_have_count(1)
    assert "caller=support-bot" in page.url  # the URL is the state
    rows.filter(has_text="vegetarian").get_by_role("link", name="vegetarian").click()

    expect(page.get_by_role("heading", name="Search by support-bot")).to_be_visible()
    results = page.locator("table.oam-event-results tbody tr")
    expect(results.first).to_contain_text("Alice is vegetarian.")
    page.get_by_role("link", name="Replay now").click()  # htmx: the replay swaps in, the page stays

    replay = page.locator("#replay")
    expect(replay).to_contain_text("1 entered")
    expect(replay.locator("tr.oam-replay-entered")).to_contain_text("Alice is strictly vegetarian.")
    expect(replay.locator("tr.oam-replay-entered")).to_contain_text("new since: created after the call")
    expect(page.get_by_role("link", name="Replay again")).to_be_visible()
    assert "/replay/" not in page.url
