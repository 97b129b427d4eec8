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
