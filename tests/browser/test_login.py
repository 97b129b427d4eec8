"""Logging in through the real form in a real browser."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

from tests.browser.support import LOGIN_PATH, log_in


def test_a_curator_logs_in_through_the_form_and_lands_on_the_dashboard(page, curator):
    response = log_in(page, "carl", "carl-password")

    assert urlparse(page.url).path == "/"
    assert response is not None and response.status == 200
    assert page.locator('input[name="password"]').count() == 0
    assert "sessionid" in {cookie["name"] for cookie in page.context.cookies()}


def test_an_anonymous_visit_lands_on_the_login_form(page):
    response = page.goto("/")

    assert urlparse(page.url).path == LOGIN_PATH
    assert response.status == 200
    assert page.locator('input[name="password"]').is_visible()


@pytest.mark.parametrize("color_scheme", ["light", "dark"])
def test_a_logged_in_page_stays_logged_in_in_either_color_scheme(logged_in_page, color_scheme):
    response = logged_in_page.goto("/")

    assert urlparse(logged_in_page.url).path == "/"
    assert response.status == 200
    assert logged_in_page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") == (color_scheme == "dark")


@pytest.mark.parametrize("context_options", [{}, {"java_script_enabled": False}], ids=["js", "no-js"])
def test_the_account_menu_opens_from_the_keyboard_and_logs_out(logged_in_page, context_options):
    page = logged_in_page
    page.goto("/")
    menu = page.locator("details.oam-account")
    log_out = page.get_by_role("button", name="Log out")
    assert not log_out.is_visible()

    menu.locator("summary").focus()
    page.keyboard.press("Enter")
    assert log_out.is_visible()
    assert page.get_by_role("link", name="Export and import").is_visible()  # Carl curates
    if context_options.get("java_script_enabled", True):
        page.keyboard.press("Escape")
        assert not log_out.is_visible()
        page.keyboard.press("Enter")  # focus went back to the summary

    log_out.click()
    page.wait_for_load_state()
    assert urlparse(page.url).path == LOGIN_PATH
    assert "sessionid" not in {cookie["name"] for cookie in page.context.cookies()}
