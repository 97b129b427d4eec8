"""The API's docs in a real browser: Swagger UI and Redoc show the operations from the schema,
loading everything from this site: nothing from a CDN, no validator badge, no web fonts. Redoc's
bundle asks for a logo from its CDN: the page's Content-Security-Policy refuses it before any
network (so the docs behave the same offline)."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect


@pytest.mark.parametrize(
    ("path", "operation"),
    [
        ("/api/docs/", "#operations-memories-memories_list"),
        ("/api/redoc/", "[id='operation/memories_list']"),
    ],
)
def test_the_docs_render_the_schema_from_this_site_alone(logged_in_page, live_server, path, operation):
    page = logged_in_page
    ours = urlparse(live_server.url).netloc
    elsewhere: list[str] = []
    page.on("request", lambda request: elsewhere.append(request.url) if urlparse(request.url).netloc != ours else None)
    refused: list[str] = []
    page.on(
        "requestfailed",
        lambda request: refused.append(request.url) if request.failure == "csp" else None,
    )
    schema_responses = []
    page.on(
        "response",
        lambda response: schema_responses.append(response.status) if "/api/schema/" in response.url else None,
    )

    response = page.goto(path)
    expect(page.locator(operation).get_by_text("List memories").first).to_be_visible(timeout=15_000)
    page.wait_for_load_state("networkidle")

    assert response.status == 200
    assert schema_responses == [200]
    data_urls = [url for url in elsewhere if urlparse(url).scheme in ("data", "blob")]
    assert sorted(set(elsewhere) - set(data_urls)) == sorted(set(refused))
    if path == "/api/redoc/":
        assert refused == ["https://cdn.redoc.ly/redoc/logo-mini.svg"]


def test_anonymous_visitors_are_sent_to_the_login_page(page):
    for path in ("/api/docs/", "/api/redoc/"):
        page.goto(path)
        assert urlparse(page.url).path == "/accounts/login/"


@pytest.mark.parametrize("path", ["/api/docs/", "/api/redoc/"])
def test_the_docs_lead_back_to_the_dashboard(logged_in_page, path):
    page = logged_in_page
    page.goto(path)

    page.get_by_role("link", name="← Back to the dashboard").click()
    expect(page.locator("h1")).to_have_text("Overview")


INVERTED = "(element) => getComputedStyle(element).filter"


@pytest.mark.parametrize("color_scheme", ["light", "dark"])
def test_swagger_ui_follows_the_system_theme(logged_in_page, color_scheme):
    page = logged_in_page
    page.goto("/api/docs/")
    expect(page.locator("#operations-memories-memories_list")).to_be_visible(timeout=15_000)

    shown = page.locator(".oam-docs-invertible").evaluate(INVERTED)
    assert ("invert" in shown) == (color_scheme == "dark"), shown


def test_swagger_ui_follows_the_theme_chosen_on_the_dashboard(logged_in_page):
    page = logged_in_page
    page.goto("/")
    page.get_by_role("button", name="Dark theme").click()
    page.goto("/api/docs/")

    assert "invert" in page.locator(".oam-docs-invertible").evaluate(INVERTED)
