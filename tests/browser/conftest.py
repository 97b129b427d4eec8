"""Browser tests: Playwright drives Debian's Chromium (/usr/bin/chromium) against pytest-django's
live server, over the per-test memory store of tests/conftest.py.

Fixtures:
- `browser`: one headless Chromium for the tests of this folder. Without /usr/bin/chromium the
  tests skip (install it: `apt-get install chromium`), or fail when OAM_REQUIRE_BROWSER=1, as in CI.
- `page`: a page in a fresh context (1400x900) whose relative URLs go to the live server;
  parametrize `color_scheme` ("light", "dark") to emulate the user's preference, and
  `context_options` for any other of the context's (a phone's viewport, JavaScript off).
- `logged_in_page`: `page`, logged in through the login form as Carl the curator.
- `live_app`: the live server's Django app, answering one request at a time on the test's own
  database connection (support.OneRequestAtATime says why); `page` waits for it to be idle
  before the test's database is emptied.

Every test here is marked `browser` (`pytest -m "not browser"` leaves them out).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import connections
from django.db.backends.signals import connection_created
from playwright.sync_api import Browser, Page, sync_playwright

from tests.browser.support import (
    CHROMIUM,
    MISSING_CHROMIUM,
    VIEWPORT,
    OneRequestAtATime,
    launch_chromium,
    log_in,
)

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.browser)


# Package scope, not session: Playwright's sync API keeps an asyncio loop running in this thread
# while it is started, and the tests that pytest-django orders after these ones (the engine's
# *_async tests call asyncio.run) must not find it running.
@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        if os.environ.get("OAM_REQUIRE_BROWSER") == "1":
            pytest.fail(f"OAM_REQUIRE_BROWSER=1 but {MISSING_CHROMIUM}", pytrace=False)
        pytest.skip(MISSING_CHROMIUM)
    # While Playwright's loop runs, Django refuses ORM calls from the tests (SynchronousOnlyOperation):
    # allow them. And asgiref would hand this thread a second set of database connections, without
    # the test database's serialized contents (serialized rollback restores nothing): keep the first.
    kept = {alias: connections[alias] for alias in connections}
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        for alias, connection in kept.items():
            connections[alias] = connection
        browser = launch_chromium(playwright)
        yield browser
        browser.close()


@pytest.fixture(scope="package")
def live_app(live_server, django_db_setup, django_db_blocker) -> Iterator[OneRequestAtATime]:
    """The live server answering one request at a time, every one on the test's in-memory database
    connection, however the live server was started.

    pytest-django hands the server the test's connection only when the test database exists before
    the server starts: so in a whole run (tests that use the database come first), not in a run of
    this folder alone, whose request threads then open connections of their own to the shared
    in-memory database (and meet "database table is locked" when two of them overlap). Both ways,
    requests that overlap break: one lock, and the one connection for all, make them take turns.
    """
    httpd = live_server.thread.httpd
    shared = live_server.thread.connections_override  # the dict each request thread takes its connections from
    for alias in connections:
        connection = connections[alias]
        if connection.vendor == "sqlite" and connection.is_in_memory_db():
            with django_db_blocker.unblock():
                read_uncommitted(connection=connection)
            if alias not in shared:
                connection.inc_thread_sharing()  # given back by the live server's stop(), as for its own
                shared[alias] = connection
    connection_created.connect(read_uncommitted)
    app = OneRequestAtATime(httpd.get_app())
    httpd.set_app(app)
    yield app
    httpd.set_app(app.app)
    connection_created.disconnect(read_uncommitted)


def read_uncommitted(connection, **signal) -> None:
    """Let this connection to the shared in-memory database read without table locks.

    A thread the app starts itself (an import job) opens a connection of its own to the test
    database, beside the one the requests share. In SQLite's shared-cache mode a reader holds a
    lock on each table it reads until its statement ends, and a write meeting one fails at once
    ("database table is locked"): the job recording its progress while a request reads the job.
    Read-uncommitted readers take no such lock (https://sqlite.org/sharedcache.html, 2.2.1).
    """
    if connection.vendor == "sqlite" and connection.is_in_memory_db():
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA read_uncommitted = 1")


@pytest.fixture
def color_scheme() -> str:
    """Override with @pytest.mark.parametrize("color_scheme", ["light", "dark"])."""
    return "light"


@pytest.fixture
def context_options() -> dict:
    """Override with @pytest.mark.parametrize("context_options", [{"java_script_enabled": False}])."""
    return {}


@pytest.fixture
def page(
    browser: Browser,
    live_server,
    live_app: OneRequestAtATime,
    django_db_serialized_rollback,
    color_scheme: str,
    context_options: dict,
) -> Iterator[Page]:
    # The live server needs transactional_db, which empties the database after each test;
    # serialized rollback restores what the migrations wrote (the viewers and curators groups).
    options = {"viewport": VIEWPORT, "color_scheme": color_scheme, "base_url": live_server.url, **context_options}
    context = browser.new_context(**options)
    yield context.new_page()
    context.close()
    # A request the page had sent may still be answered: not while the database is emptied.
    live_app.idle()


@pytest.fixture
def logged_in_page(page: Page, curator: User) -> Page:
    log_in(page, curator.username, f"{curator.username}-password")
    return page
