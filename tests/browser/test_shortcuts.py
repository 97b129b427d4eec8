"""Keyboard shortcuts in a real browser (static/js/shortcuts.js), on the demo world's memories:
"/" focuses the filter box, j and k move the current row, Enter opens it, e edits, x selects, ?
lists the keys; none of them fires while typing in a field."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.urls import reverse
from playwright.sync_api import Locator, Page, expect

from tests.browser.support import log_in


@pytest.fixture
def demo(agent_memory):
    call_command("seed_demo", "--seed=1", "--end-date=2026-11-20")
    return agent_memory


def memory_rows(page: Page) -> Locator:
    page.goto(reverse("memory:memory_list"))
    return page.locator("[data-shortcut-list] tbody > tr")


def expect_current(rows: Locator, index: int) -> None:
    """Only the index-th row is the current one, and the focus is on its link."""
    expect(rows.nth(index)).to_have_attribute("aria-current", "true")
    expect(rows.nth(index)).to_have_class(re.compile(r"\boam-current\b"))
    expect(rows.nth(index).locator("a").first).to_be_focused()
    expect(rows.and_(rows.page.locator("[aria-current]"))).to_have_count(1)


def test_slash_focuses_the_listings_filter_box(logged_in_page: Page, demo):
    page = logged_in_page
    memory_rows(page)
    page.keyboard.press("/")
    expect(page.get_by_label("Text", exact=True)).to_be_focused()
    expect(page.get_by_label("Text", exact=True)).to_have_value("")  # the slash itself was not typed


def test_j_and_k_move_the_current_row_and_enter_opens_it(logged_in_page: Page, demo):
    page = logged_in_page
    rows = memory_rows(page)
    assert rows.count() > 3
    expect(rows.and_(page.locator("[aria-current]"))).to_have_count(0)

    page.keyboard.press("j")
    expect_current(rows, 0)
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect_current(rows, 2)
    page.keyboard.press("k")
    expect_current(rows, 1)

    # Enter on the focused link follows it anyway: take the focus away so that the script opens the row.
    href = rows.nth(1).locator("a").first.get_attribute("href")
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(re.escape(href) + "$"))
    assert href.startswith("/memories/")


def test_k_stops_at_the_first_row(logged_in_page: Page, demo):
    page = logged_in_page
    rows = memory_rows(page)
    page.keyboard.press("k")
    page.keyboard.press("k")
    expect_current(rows, 0)


def test_e_on_a_memorys_page_opens_its_edit_form(logged_in_page: Page, demo):
    page = logged_in_page
    memory_id = demo.list_memories(limit=1)[0].id
    page.goto(reverse("memory:memory_detail", args=[memory_id]))
    page.keyboard.press("e")
    expect(page).to_have_url(re.compile(re.escape(reverse("memory:memory_edit", args=[memory_id])) + "$"))
    expect(page.get_by_label("Content")).to_be_visible()


@pytest.mark.parametrize(
    ("listing", "edit_page"),
    [
        ("memory:memory_list", re.compile(r"/memories/[^/]+/edit/$")),
        ("memory:thread_list", re.compile(r"/threads/[^/]+/edit/$")),
        ("memory:user_list", re.compile(r"/users/[^/]+/edit/$")),
    ],
)
def test_e_on_a_listings_current_row_opens_its_edit_page(logged_in_page: Page, demo, listing, edit_page):
    page = logged_in_page
    page.goto(reverse(listing))
    rows = page.locator("[data-shortcut-list] tbody > tr")
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect_current(rows, 1)
    detail = rows.nth(1).locator("a").first.get_attribute("href")
    page.keyboard.press("e")
    expect(page).to_have_url(edit_page)
    assert page.url.endswith(detail + "edit/")  # the current row's record, not another's
    expect(page.locator("form[method=post]").last).to_be_visible()


def test_e_on_a_listing_tells_a_viewer_they_can_only_read(page: Page, viewer, demo):
    log_in(page, viewer.username, f"{viewer.username}-password")
    rows = memory_rows(page)
    page.keyboard.press("j")
    expect_current(rows, 0)
    url = page.url
    page.keyboard.press("e")
    expect(page.get_by_role("status").filter(has_text="You can only read")).to_be_visible()
    assert page.url == url
    expect(page.get_by_role("status").filter(has_text="You can only read")).to_be_hidden(timeout=6000)


def test_e_on_a_threads_current_message_edits_it_inline(logged_in_page: Page, demo):
    page = logged_in_page
    page.goto(reverse("memory:thread_detail", args=["demo-balcony-vegetable-garden"]) + "?start=0")
    page.keyboard.press("j")
    page.keyboard.press("j")
    second = page.locator("#timeline .oam-message").nth(1)
    expect(second).to_have_attribute("aria-current", "true")
    page.keyboard.press("e")
    expect(page.get_by_role("button", name="Save message")).to_have_count(1)
    assert page.url.endswith("?start=0")  # edited in place, no navigation


def test_x_ticks_the_current_rows_box_on_the_embedding_maps_list(logged_in_page: Page, demo):
    page = logged_in_page
    page.goto(reverse("memory:user_map", args=["alice"]))
    page.evaluate(
        """() => { window.oamChanges = 0;
                   document.addEventListener("change", () => window.oamChanges++, true); }"""
    )
    rows = page.locator("#map-list tbody > tr")
    expect(rows.first).to_be_hidden()  # the list starts folded under the map

    page.keyboard.press("j")  # unfolds it
    page.keyboard.press("j")
    expect_current(rows, 1)
    box = rows.nth(1).locator("input[type=checkbox][name=ids]")
    page.keyboard.press("x")
    expect(box).to_be_checked()
    expect(rows.nth(0).locator("input[name=ids]")).not_to_be_checked()
    page.keyboard.press("x")
    expect(box).not_to_be_checked()
    assert page.evaluate("window.oamChanges") == 2  # each toggle fired change (the map follows the boxes)


def test_x_toggles_the_current_rows_checkbox(logged_in_page: Page, demo):
    page = logged_in_page
    rows = memory_rows(page)
    page.evaluate(
        """() => { window.oamChanges = 0;
                   document.addEventListener("change", () => window.oamChanges++, true); }"""
    )
    page.keyboard.press("j")
    page.keyboard.press("j")
    box = rows.nth(1).locator("input[type=checkbox][name=ids]")
    expect(box).not_to_be_checked(timeout=1000)
    page.keyboard.press("x")
    expect(box).to_be_checked()
    page.keyboard.press("x")
    expect(box).not_to_be_checked()
    expect(rows.nth(0).locator("input[type=checkbox][name=ids]")).not_to_be_checked()
    assert page.evaluate("window.oamChanges") == 2


def test_question_mark_lists_the_shortcuts_and_escape_closes_them(logged_in_page: Page, demo):
    page = logged_in_page
    memory_rows(page)
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_hidden()

    page.keyboard.press("?")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("heading", name="Keyboard shortcuts")).to_be_visible()
    expect(dialog.get_by_role("row", name=re.compile("Open the current row"))).to_be_visible()
    page.keyboard.press("j")  # the keys wait while the dialog is open
    expect(page.locator("[aria-current=true]")).to_have_count(0)
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    # The footer's button opens it too, and its Close button closes it, giving the focus back.
    opener = page.get_by_role("button", name="Keyboard shortcuts")
    opener.click()
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()
    expect(opener).to_be_focused()


def test_typing_j_in_a_field_types_it(logged_in_page: Page, demo):
    page = logged_in_page
    rows = memory_rows(page)
    text = page.get_by_label("Text", exact=True)
    text.click()
    page.keyboard.type("jk/e?")
    expect(text).to_have_value("jk/e?")
    expect(rows.and_(page.locator("[aria-current]"))).to_have_count(0)
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_hidden()


def test_keys_with_ctrl_are_the_browsers(logged_in_page: Page, demo):
    page = logged_in_page
    rows = memory_rows(page)
    page.keyboard.press("Control+j")
    page.keyboard.press("Alt+k")
    expect(rows.and_(page.locator("[aria-current]"))).to_have_count(0)


def test_on_the_graph_slash_finds_and_the_graphs_own_keys_stay_its_own(logged_in_page: Page, demo):
    page = logged_in_page
    page.goto("/graph/?user_id=alice")
    graph = page.locator("#graph")
    expect(graph).to_have_attribute("data-drawn", "true", timeout=30_000)
    graph.focus()
    page.keyboard.press("n")  # the graph's: select a memory
    expect(page.locator("#graph-status")).to_contain_text("Memory 1 of")
    page.keyboard.press("Enter")  # the graph's: add its neighbours, not a shortcut's "open"
    expect(graph).to_be_focused()
    assert page.url.endswith("/graph/?user_id=alice")

    page.keyboard.press("/")
    expect(page.get_by_label("Find a memory in the graph")).to_be_focused()
