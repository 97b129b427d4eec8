"""Scoped logins in a real browser: an admin limits a login to one user on the Logins page, on a
phone; that login then reads its scope in the account menu and finds no other user's memory."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.urls import reverse
from playwright.sync_api import Page, expect

from tests.browser.support import log_in, open_from_the_account_menu
from tests.web.world import build_world

PHONE = {"viewport": {"width": 390, "height": 844}}


@pytest.fixture
def people(agent_memory, db) -> User:
    build_world(agent_memory)  # alice's world
    agent_memory.add_memory("Bob drinks green tea.", memory_type="fact", user_id="bob", agent_id="atlas")
    User.objects.create_superuser("root", password="root-password")
    sam = User.objects.create_user("sam", password="sam-password")
    sam.groups.add(Group.objects.get(name="viewers"))
    return sam


@pytest.mark.parametrize("context_options", [PHONE])
def test_an_admin_scopes_a_login_and_it_sees_only_its_user(page: Page, people, context_options, browser, live_server):
    log_in(page, "root", "root-password")
    page.locator("label.oam-menu-button").click()
    open_from_the_account_menu(page, "Logins and scopes")
    expect(page.get_by_role("heading", name="Logins", exact=True)).to_be_visible()
    card = page.locator("li.card", has=page.get_by_role("heading", name="sam"))
    card.get_by_label("Users it sees").fill("bob")
    card.get_by_role("button", name="Save the scope of sam").click()
    expect(page.get_by_text("sam now sees bob.")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    other = browser.new_context(base_url=live_server.url, viewport=PHONE["viewport"])
    try:
        sam_page = other.new_page()
        log_in(sam_page, "sam", "sam-password")
        sam_page.goto(reverse("memory:memory_list"))
        expect(sam_page.get_by_text("Bob drinks green tea.")).to_be_visible()
        expect(sam_page.get_by_text("Alice is vegetarian.")).to_have_count(0)
        assert sam_page.goto(reverse("memory:memory_detail", args=["fact-vegetarian"])).status == 404
    finally:
        other.close()
