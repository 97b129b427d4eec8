"""Every list keeps to its box, at 1400 px and on a phone (390 px), whatever a record holds: a
5,000-character token with no space to break at (a URL, a hash, base64), fifty metadata keys.
On a phone a list still shows each record's content, type and status, its actions stay on the
screen, and the navigation folds behind one Menu button."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from memory.engine import llm_link_metadata
from tests.web.world import World, build_world

PHONE = {"viewport": {"width": 390, "height": 844}}
DESKTOP = {"viewport": {"width": 1400, "height": 900}}
TOKEN = "https://example.com/" + "a1b2c3d4e5" * 500  # 5,020 characters, no space, no hyphen

TABLES_WIDER_THAN_THEIR_BOX = """
() => [...document.querySelectorAll('main table')]
  .filter((table) => table.getBoundingClientRect().width > table.parentElement.clientWidth + 1)
  .map((table) => [table.className, Math.round(table.getBoundingClientRect().width), table.parentElement.clientWidth])
"""


@pytest.fixture
def world(agent_memory) -> World:
    world = build_world(agent_memory)
    metadata = {f"key_{n:02d}": f"value {n}" for n in range(50)} | {"source_url": TOKEN}
    agent_memory.add_memory(
        f"Bookmark {TOKEN}", memory_type="fact", memory_id="bookmark", user_id="alice", metadata=metadata
    )
    agent_memory.update_thread(world.thread_id, metadata=metadata)
    agent_memory.add_memory("Alice drinks coffee.", memory_type="fact", memory_id="coffee", user_id="alice")
    agent_memory.add_memory("Alice drinks tea.", memory_type="fact", memory_id="tea", user_id="alice")
    agent_memory.link_records(
        "coffee", "fact", "tea", "fact", "supersedes", metadata=llm_link_metadata("openai:test-model")
    )
    agent_memory.link_records("bookmark", "fact", "coffee", "fact", "supports", metadata=metadata)
    return world


def list_pages(world: World) -> list[str]:
    return [
        reverse("memory:overview"),
        reverse("memory:memory_list"),
        reverse("memory:memory_list") + "?q=" + "x" * 5000,
        reverse("memory:memory_detail", args=["bookmark"]),
        reverse("memory:memory_detail", args=["coffee"]),
        reverse("memory:thread_list"),
        reverse("memory:thread_detail", args=[world.thread_id]),
        reverse("memory:user_list"),
        reverse("memory:user_detail", args=["alice"]),
        reverse("memory:review") + "?queue=llm",
        reverse("memory:review") + "?queue=invalid",
        reverse("memory:history"),
        reverse("memory:search") + "?q=bookmark",
        reverse("memory:activity"),
    ]


@pytest.mark.parametrize("context_options", [DESKTOP, PHONE], ids=["1400px", "390px"])
def test_no_table_is_wider_than_its_box(logged_in_page: Page, world, context_options):
    page = logged_in_page
    width = context_options["viewport"]["width"]
    found = {}
    for path in list_pages(world):
        page.goto(path)
        wider = page.evaluate(TABLES_WIDER_THAN_THEIR_BOX)
        page_width = page.evaluate("document.documentElement.scrollWidth")
        if wider or page_width > width:
            found[path[:60]] = (page_width, wider)
    assert found == {}, f"pages whose tables or body are wider than their box at {width} px: {found}"


def on_screen(page: Page, locator) -> bool:
    """Visible, and wholly inside the viewport's width (not clipped off to the side)."""
    box = locator.bounding_box()
    return locator.is_visible() and box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390


@pytest.mark.parametrize("context_options", [PHONE])
def test_a_phone_shows_each_memorys_content_type_and_status(logged_in_page: Page, world, context_options):
    page = logged_in_page
    page.goto(reverse("memory:memory_list") + "?user_id=alice")

    rows = page.locator("main tbody tr")
    assert rows.count() >= 4
    for index in range(rows.count()):
        row = rows.nth(index)
        for part in (".oam-content-cell a", ".oam-type", ".badge.rounded-pill"):
            assert on_screen(page, row.locator(part).first), f"row {index}: {part} is not on the screen"
    superseded = page.locator("main tbody tr", has_text="Alice drinks tea.")
    expect(superseded.locator(".badge.rounded-pill")).to_have_text("invalid")


@pytest.mark.parametrize("context_options", [PHONE])
def test_a_phone_reaches_every_action(logged_in_page: Page, world, context_options):
    page = logged_in_page
    page.goto(reverse("memory:review") + "?queue=llm")
    for name in ("Accept the retirement of tea", "Revert the link, making tea valid again"):
        assert on_screen(page, page.get_by_role("button", name=name)), f"{name!r} is off the screen"

    page.goto(reverse("memory:memory_detail", args=["coffee"]))
    links = page.locator("main table tbody tr")
    assert links.count() == 2
    for index in range(links.count()):
        for action in links.nth(index).locator("a.btn, button").all():
            assert on_screen(page, action), f"a link's {action.inner_text()!r} is off the screen"


@pytest.mark.parametrize("context_options", [PHONE])
def test_a_phones_navigation_folds_behind_one_button(logged_in_page: Page, world, context_options):
    page = logged_in_page
    page.goto(reverse("memory:memory_list"))
    header = page.locator("header.oam-topbar").bounding_box()
    assert header is not None and header["height"] <= 64, f"the top bar takes {header} on a phone"
    threads = page.locator("nav.oam-nav").get_by_role("link", name="Threads")
    expect(threads).to_be_hidden()

    page.locator("label.oam-menu-button").click()
    expect(threads).to_be_visible()
    expect(page.get_by_role("searchbox", name="Search the store")).to_be_visible()
    threads.click()
    expect(page.locator("h1")).to_contain_text("Threads")


@pytest.mark.parametrize("context_options", [DESKTOP])
def test_a_desktop_shows_the_navigation_without_a_menu_button(logged_in_page: Page, world, context_options):
    page = logged_in_page
    page.goto(reverse("memory:memory_list"))
    expect(page.locator("nav.oam-nav").get_by_role("link", name="Threads")).to_be_visible()
    expect(page.locator("label.oam-menu-button")).to_be_hidden()
    header = page.locator("header.oam-topbar").bounding_box()
    assert header is not None and header["height"] <= 60, f"the top bar wraps to a second line: {header}"
