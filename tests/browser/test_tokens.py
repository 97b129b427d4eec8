"""API tokens in a real browser: made in the page, copied, used against the API, revoked."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from playwright.sync_api import Browser, Page, expect

from memory.models import ApiToken
from tests.browser.support import open_from_the_account_menu

TOKENS = reverse("memory:tokens")
API = "/api/v1/memories/"


def api_status(browser: Browser, base_url: str, token: str) -> int:
    """The API's answer to a client that has nothing but the token: a context with no cookies."""
    client = browser.new_context(base_url=base_url)
    try:
        return client.request.get(API, headers={"Authorization": f"Bearer {token}"}).status
    finally:
        client.close()


def test_a_token_is_made_copied_used_and_revoked(logged_in_page: Page, browser, live_server):
    page = logged_in_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    open_from_the_account_menu(page, "API tokens")
    expect(page.get_by_role("heading", name="API tokens")).to_be_visible()
    expect(page.get_by_text("No tokens yet.")).to_be_visible()

    page.get_by_label("Name", exact=True).fill("browser-made")
    page.get_by_label("Role").select_option("curator")
    page.get_by_label("Expires after (days)").fill("7")
    page.get_by_role("button", name="Create the token").click()

    expect(page.get_by_text("Copy it now: it will not be shown again.")).to_be_visible()
    shown = page.locator("#new-token").inner_text()
    assert re.fullmatch(r"oam_[0-9a-f]{8}_[A-Za-z0-9_-]{43}", shown)
    page.get_by_role("button", name="Copy the token").click()
    expect(page.locator("[data-copy].copied")).to_have_count(1)  # the button says it copied
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == shown
    assert api_status(browser, live_server.url, copied) == 200

    page.reload()  # a new GET: the token is not shown again
    expect(page.locator("#new-token")).to_have_count(0)
    assert copied not in page.content()
    row = page.get_by_role("row").filter(has_text="browser-made")
    expect(row).to_contain_text("curator")
    expect(row).to_contain_text("active")

    row.get_by_role("link", name="Revoke the token browser-made").click()
    expect(page.get_by_role("heading", name="Revoke the token “browser-made”?")).to_be_visible()
    page.get_by_role("button", name="Revoke the token").click()

    expect(page.get_by_text("Revoked the token “browser-made”")).to_be_visible()
    expect(page.get_by_role("row").filter(has_text="browser-made")).to_contain_text("revoked")
    assert api_status(browser, live_server.url, copied) == 401
    assert ApiToken.objects.get().revoked_at is not None


def test_the_form_is_used_with_the_keyboard_and_shows_errors_on_the_field(logged_in_page: Page):
    page = logged_in_page
    page.goto(TOKENS)
    page.get_by_label("Name", exact=True).focus()
    page.keyboard.type("   ")
    page.keyboard.press("Tab")  # the role
    page.keyboard.press("Tab")  # the expiry
    page.keyboard.type("0")
    page.keyboard.press("Enter")

    expect(page.get_by_label("Name", exact=True)).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Expires after (days)")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_text("A token expires in 1 to 3650 days")).to_be_visible()
    expect(page.locator("#new-token")).to_have_count(0)
    assert not ApiToken.objects.exists()


@pytest.mark.parametrize("context_options", [{"java_script_enabled": False}])
def test_without_javascript_the_token_is_one_click_to_select(logged_in_page: Page):
    page = logged_in_page
    page.goto(TOKENS)
    page.get_by_label("Name", exact=True).fill("no-js")
    page.get_by_role("button", name="Create the token").click()

    block = page.locator("#new-token")
    expect(block).to_be_visible()
    expect(page.get_by_role("button", name="Copy the token")).to_be_hidden()  # it would do nothing
    block.click()
    selected = page.evaluate("getSelection().toString()")
    assert selected == block.inner_text()
    assert selected.startswith("oam_")
