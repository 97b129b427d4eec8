"""The dashboard in a real browser: opening a thread, editing a message inline, fixing a JSON
error in a memory's metadata, deleting a memory and restoring it, switching the theme."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from tests.web.world import World, build_world


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def test_a_curator_opens_a_thread_from_the_list(logged_in_page: Page, world):
    page = logged_in_page
    page.get_by_role("link", name="Threads", exact=True).click()
    page.get_by_role("link", name=world.thread_id).click()

    expect(page).to_have_url(re.compile(re.escape(reverse("memory:thread_detail", args=[world.thread_id])) + "$"))
    timeline = page.locator("#timeline")
    expect(timeline.get_by_text("Find me a quiet hotel in Lisbon.")).to_be_visible()
    expect(page.get_by_role("img", name="A tiled street in Alfama")).to_be_visible()
    assert page.evaluate("document.querySelector('img.oam-thumb').naturalWidth") > 0  # the bytes were served


def test_a_message_is_edited_inline_without_leaving_the_thread(logged_in_page: Page, world, agent_memory):
    page = logged_in_page
    page.goto(reverse("memory:thread_detail", args=[world.thread_id]))
    first = page.locator(".oam-message").first
    first.get_by_role("link", name="Edit").click()

    content = page.get_by_label("Content")
    expect(content).to_be_visible()
    content.fill("I'm vegan now. Find me a quiet hotel in Porto.")
    page.get_by_role("button", name="Save message").click()

    expect(page.locator(".oam-message").first).to_contain_text("I'm vegan now.")
    expect(page.get_by_role("button", name="Save message")).to_have_count(0)
    assert page.url.endswith(reverse("memory:thread_detail", args=[world.thread_id]))  # no navigation
    assert agent_memory.get_message_record(world.thread_id, world.message_ids[0]).content.startswith("I'm vegan")


def test_a_json_error_in_a_memorys_metadata_is_shown_then_fixed(logged_in_page: Page, world, agent_memory):
    page = logged_in_page
    page.goto(reverse("memory:memory_edit", args=[world.fact_id]))
    metadata = page.get_by_label("Metadata")

    metadata.fill('{"source": "chat", "tags": ["diet",]}')
    page.get_by_role("button", name="Save the memory").click()

    expect(page.get_by_text("Not valid JSON")).to_be_visible()
    expect(page.get_by_label("Metadata")).to_have_attribute("aria-invalid", "true")
    assert agent_memory.get_memory(world.fact_id).metadata == {"source": "chat", "tags": ["diet"]}

    page.get_by_label("Metadata").fill('{"source": "chat", "tags": ["diet", "vegan"]}')
    page.get_by_role("button", name="Save the memory").click()

    expect(page.get_by_text("Saved the memory.")).to_be_visible()
    assert agent_memory.get_memory(world.fact_id).metadata == {"source": "chat", "tags": ["diet", "vegan"]}


def test_a_deleted_memory_is_restored_from_the_history(logged_in_page: Page, world, agent_memory):
    page = logged_in_page
    page.goto(reverse("memory:memory_detail", args=[world.fact_id]))
    page.get_by_role("link", name="Delete", exact=True).click()
    expect(page.get_by_text("1 link")).to_be_visible()
    page.get_by_role("button", name="Delete the memory").click()

    expect(page.get_by_text("It can be restored from the history")).to_be_visible()
    page.goto(reverse("memory:memory_detail", args=[world.fact_id]))
    page.get_by_role("link", name="Its history").click()
    page.get_by_role("link", name=re.compile("Deleted the fact")).click()
    page.get_by_role("link", name="Restore").click()
    page.get_by_role("button", name="Restore").click()

    expect(page.get_by_role("region", name="Content").get_by_text("Alice is vegetarian.")).to_be_visible()
    expect(page.locator(".oam-record-heading .oam-id")).to_contain_text(world.fact_id)
    assert agent_memory.get_memory(world.old_fact_id).status == "invalid"  # its link is back


@pytest.mark.parametrize("color_scheme", ["light", "dark"])
def test_the_theme_follows_the_system_and_can_be_switched(logged_in_page: Page, world, color_scheme):
    page = logged_in_page
    page.goto(reverse("memory:overview"))
    theme = "document.documentElement.getAttribute('data-bs-theme')"

    assert page.evaluate(theme) == color_scheme  # "auto" follows the system
    other = "light" if color_scheme == "dark" else "dark"
    page.get_by_role("button", name=f"{other.capitalize()} theme").click()

    assert page.evaluate(theme) == other
    page.goto(reverse("memory:thread_list"))
    assert page.evaluate(theme) == other  # remembered


def test_the_link_form_shows_each_chosen_memory_by_what_it_says(logged_in_page: Page, world):
    """An id alone says nothing to a person: each one typed or picked is shown by its content."""
    page = logged_in_page
    page.goto(reverse("memory:link_create") + f"?source_record_id={world.fact_id}")
    ends = page.locator("#link-ends")
    expect(ends).to_contain_text("Alice is vegetarian.")

    page.get_by_label("Target memory").fill(world.old_fact_id)
    page.get_by_label("Target memory").press("Tab")

    expect(ends.locator("dd").nth(1)).to_contain_text("Alice used to eat fish.")
    page.get_by_label("Target memory").fill("no-such-memory")
    page.get_by_label("Target memory").press("Tab")
    expect(ends).to_contain_text("no-such-memory (no such memory)")
