"""The Content-Security-Policy in a real browser: every main page loads, draws and reacts without
the browser refusing anything (a `securitypolicyviolation` event or a console message about the
policy fails the test). The policy allows only the site itself, so an inline script or style, a
`style=` attribute, a library injecting a <style>, or anything from a CDN would show up here.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.support import LOGIN_PATH
from tests.web.world import World, build_world

# Collects the page's violations from its first script on, for every document the page loads.
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(`${event.violatedDirective} refused ${event.blockedURI || "inline"}`
    + ` at ${event.sourceFile || location.pathname}:${event.lineNumber}`);
});
"""

# Redoc's bundle asks for its logo from its CDN: refusing it is the policy working
# (tests/browser/test_api_docs.py checks it is the only thing refused there).
EXPECTED = ("https://cdn.redoc.ly/",)

PAGES = [
    ("/", "#main"),
    ("/threads/", "#main"),
    ("/threads/trip-42/", "#main"),
    ("/threads/trip-42/edit/", "form"),
    ("/threads/trip-42/card/", "#main"),
    ("/memories/", "#main"),
    ("/memories/fact-vegetarian/", "#main"),
    ("/memories/fact-vegetarian/edit/", "form"),
    ("/memories/new/", "form"),
    ("/memories/bulk/?ids=fact-vegetarian&ids=fact-old", "#main"),
    ("/images/map-1/", "#main"),
    ("/users/", "#main"),
    ("/users/alice/", "#main"),
    ("/agents/atlas/", "#main"),
    ("/search/?q=hotel&user_id=alice", "#main"),
    ("/search/?q=hotel&user_id=alice&compare=1", "#main"),
    ("/links/new/?source_record_id=fact-vegetarian", "form"),
    ("/graph/?user_id=alice", "#graph canvas"),
    ("/users/alice/map/", "svg circle"),
    ("/history/", "#main"),
    ("/review/", "#main"),
    ("/review/duplicates/", "#main"),
    ("/settings/transfer/", "#main"),
    ("/settings/tokens/", "#main"),
    ("/api/v1/memories/", "body"),
    ("/api/docs/", ".swagger-ui .opblock"),
    ("/api/redoc/", "[id='operation/memories_list']"),
]


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def watch(page: Page) -> list[str]:
    """Console messages about the policy, from now on (the page's own record is read separately)."""
    messages: list[str] = []
    page.on(
        "console",
        lambda message: messages.append(message.text) if "Content Security Policy" in message.text else None,
    )
    page.add_init_script(RECORD_VIOLATIONS)
    return messages


def violations(page: Page, console: list[str]) -> list[str]:
    recorded = page.evaluate("window.__cspViolations || []")
    return [text for text in [*recorded, *console] if not any(allowed in text for allowed in EXPECTED)]


@pytest.mark.parametrize("color_scheme", ["light", "dark"])
def test_the_main_pages_break_no_rule_of_the_policy(logged_in_page: Page, world, color_scheme):
    page = logged_in_page
    console = watch(page)
    found = {}
    for path, ready in PAGES:
        response = page.goto(path)
        assert LOGIN_PATH not in page.url, f"{path}: logged out on the way, the page is {page.url}"
        assert response is not None and response.status == 200, path
        expect(page.locator(ready).first).to_be_attached(timeout=15_000)
        page.wait_for_load_state("networkidle")
        assert "Content-Security-Policy" in {name.title() for name in response.headers} or path.startswith("/api/"), (
            path
        )
        if problems := violations(page, console):
            found[path] = problems
        console.clear()
    assert found == {}


def test_the_interactive_parts_work_under_the_policy(logged_in_page: Page, world):
    """What scripts do after loading: the keyboard shortcuts' dialog, the theme switch, the thread
    page's htmx parts, the graph's canvas, the map's hover card."""
    page = logged_in_page
    console = watch(page)

    page.goto("/memories/")
    page.keyboard.press("?")
    expect(page.get_by_role("dialog")).to_be_visible()
    page.keyboard.press("Escape")
    with page.expect_navigation():
        page.get_by_role("button", name="Dark theme").click()
    expect(page.locator("html")).to_have_attribute("data-bs-theme", "dark")
    assert violations(page, console) == []

    page.goto("/threads/trip-42/")
    page.wait_for_load_state("networkidle")
    assert violations(page, console) == []

    page.goto("/graph/?memory_id=fact-vegetarian")
    page.wait_for_function("() => document.querySelector('#graph canvas') !== null")
    page.wait_for_load_state("networkidle")
    assert violations(page, console) == []

    page.goto("/users/alice/map/")
    point = page.locator("svg circle").first
    point.hover()
    page.wait_for_load_state("networkidle")
    assert violations(page, console) == []
