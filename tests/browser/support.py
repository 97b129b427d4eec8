"""Driving Debian's Chromium with Playwright: shared by the browser tests and docs/screenshots.py.

Playwright never downloads a browser here: it launches /usr/bin/chromium (`apt-get install chromium`).
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Browser, Page, Playwright, Response

CHROMIUM = Path("/usr/bin/chromium")
MISSING_CHROMIUM = f"{CHROMIUM} not found: install Debian's chromium: apt-get install chromium"

# Playwright already passes --no-sandbox (chromium_sandbox=False; Chromium refuses to run as root
# with its sandbox), --no-first-run, --disable-background-networking, --disable-component-update
# and --disable-sync. --disable-gpu keeps rendering in software on machines that have a GPU too,
# so screenshots do not depend on it. No network flag is needed: pages come from 127.0.0.1.
CHROMIUM_ARGS = ["--disable-gpu"]

VIEWPORT = {"width": 1400, "height": 900}
LOGIN_PATH = "/accounts/login/"


def launch_chromium(playwright: Playwright) -> Browser:
    return playwright.chromium.launch(
        executable_path=CHROMIUM, headless=True, chromium_sandbox=False, args=CHROMIUM_ARGS
    )


def log_in(page: Page, username: str, password: str) -> Response | None:
    """Log in through the real login form; returns the response of the page it lands on."""
    page.goto(LOGIN_PATH)
    page.fill('input[name="username"]', username)
    page.fill('input[name="password"]', password)
    with page.expect_navigation() as navigation:
        page.press('input[name="password"]', "Enter")
    if page.locator('input[name="password"]').count():
        raise AssertionError(f"logging in as {username!r} failed: the login form is still there ({page.url})")
    return navigation.value


def open_from_the_account_menu(page: Page, link: str) -> None:
    """Open the top bar's account menu and follow one of its links (API tokens, Export and import…)."""
    page.locator("details.oam-account > summary").click()
    page.get_by_role("link", name=link).click()
