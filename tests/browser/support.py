"""Driving Debian's Chromium with Playwright: shared by the browser tests and docs/screenshots.py.

Playwright never downloads a browser here: it launches /usr/bin/chromium (`apt-get install chromium`).
"""

from __future__ import annotations

import threading
import time
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


class OneRequestAtATime:
    """A WSGI app that lets the live server's threads run `app` for one request at a time.

    pytest-django's live server answers each browser connection in a thread of its own, and with
    the tests' in-memory SQLite database every one of those threads (and the test's) uses the same
    connection object. Neither Django's connection nor Python's sqlite3 connection is safe to use
    from two threads at once: two requests running the same query (every request looks its session
    up with the same SQL) share sqlite3's cached statement, and one closing its cursor resets the
    statement under the other, which then finds no row. A session found missing that way makes
    SessionMiddleware delete the browser's cookie: the page after it is the login page.

    A request holds the lock from the call until its answer's close(), after the last byte is sent.
    """

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()
        self.count_lock = threading.Lock()
        self.in_flight = 0  # requests that reached the app and are not closed yet, waiting ones included

    def __call__(self, environ, start_response):
        with self.count_lock:
            self.in_flight += 1
        self.lock.acquire()
        try:
            return _ReleasedOnClose(self.app(environ, start_response), self._release)
        except BaseException:
            self._release()
            raise

    def _release(self) -> None:
        with self.count_lock:
            self.in_flight -= 1
        self.lock.release()

    def idle(self, timeout: float = 30) -> None:
        """Wait until no request is being answered or waiting to be (once the browser has stopped
        sending them: after its context is closed)."""
        deadline = time.monotonic() + timeout
        quiet = 0
        while quiet < 2:  # twice in a row, a little apart: a request read just before may reach the app
            quiet = quiet + 1 if self.in_flight == 0 else 0
            if time.monotonic() > deadline:
                busy = self.in_flight
                raise AssertionError(f"the live server was still answering {busy} request(s) after {timeout} s")
            time.sleep(0.02)


class _ReleasedOnClose:
    """The app's answer, passed through; the server's close() ends the request's turn, once."""

    def __init__(self, result, release):
        self.result, self.release = result, release

    def __iter__(self):
        return iter(self.result)

    def close(self) -> None:
        try:
            if hasattr(self.result, "close"):
                self.result.close()  # Django's request_finished: the connection's end-of-request checks
        finally:
            release, self.release = self.release, None
            if release is not None:
                release()
