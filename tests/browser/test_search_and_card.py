"""The search workbench and the context card in a real browser: a hybrid search with a hop shows
its tree, a formatting toggle changes what the agent receives, the card follows its parameters."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from tests.web.world import World, build_world


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def test_a_hybrid_search_with_one_hop_shows_the_linked_tree(logged_in_page: Page, world):
    page = logged_in_page
    page.goto(reverse("memory:search"))
    page.get_by_label("Query", exact=True).fill("vegetarian")
    page.get_by_label("User", exact=True).fill("alice")
    page.get_by_label("Strategy").select_option("hybrid")
    page.get_by_label("Hops").fill("1")
    page.get_by_role("button", name="Search", exact=True).click()

    first = page.locator(".oam-result").first
    expect(first).to_contain_text("Alice is vegetarian.")
    expect(first.locator(".oam-tree")).to_contain_text("supersedes")
    expect(first.locator(".oam-tree")).to_contain_text("Alice used to eat fish.")
    assert "num_hops=1" in page.url and "strategy=hybrid" in page.url  # the search is a link to share
    assert "max_results=" not in page.url and "token_budget=" not in page.url  # what was asked, not every field


def test_a_formatting_toggle_changes_what_the_agent_receives(logged_in_page: Page, world):
    page = logged_in_page
    page.goto(reverse("memory:search") + "?q=vegetarian&user_id=alice&record_types=fact&max_results=1")
    received = page.locator(".oam-result pre").first
    page.locator(".oam-result summary").first.click()
    expect(received).not_to_contain_text("<user_id>")

    page.get_by_label("user id").check()  # htmx runs the search again on change

    expect(page.locator(".oam-result pre").first).to_contain_text("<user_id>alice</user_id>")


def test_the_context_card_follows_its_parameters(logged_in_page: Page, world):
    page = logged_in_page
    page.goto(reverse("memory:card_preview", args=[world.thread_id]))
    expect(page.locator("#card-text")).not_to_contain_text("<recent_messages>")

    page.get_by_label("Recent messages").fill("2")
    page.get_by_label("Recent messages").press("Tab")  # a change: htmx shows the new card

    expect(page.locator("#card-text")).to_contain_text("Príncipe Real is calm at night.")
    expect(page.get_by_role("heading", name="Recent messages")).to_be_visible()
    assert "max_recent_messages=2" in page.url


@pytest.mark.parametrize("viewport", [{"width": 390, "height": 844}])
def test_on_a_phone_the_results_come_before_the_folded_parameters(logged_in_page: Page, world, viewport):
    page = logged_in_page
    page.set_viewport_size(viewport)
    page.goto(reverse("memory:search"))
    expect(page.get_by_label("Query", exact=True)).to_be_visible()  # nothing searched yet: open

    page.goto(reverse("memory:search") + "?q=vegetarian&user_id=alice")

    expect(page.get_by_label("Query", exact=True)).to_be_hidden()
    expect(page.locator(".oam-result").first).to_be_in_viewport()
    page.get_by_text("Search parameters").click()
    expect(page.get_by_label("Query", exact=True)).to_have_value("vegetarian")
