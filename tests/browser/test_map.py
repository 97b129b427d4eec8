"""The embedding map in a real browser: a point's tooltip is its content, a click opens its memory,
and dragging a rectangle selects the memories inside it and sends them to the bulk actions."""

from __future__ import annotations

import re
from urllib.parse import parse_qs

import pytest
from playwright.sync_api import Page, expect

from tests.web.world import build_world


@pytest.fixture
def world(agent_memory):
    world = build_world(agent_memory)
    agent_memory.add_memory(
        "Alice reads on night trains.", user_id="alice", memory_type="preference", memory_id="trains"
    )
    return world


def point_centre(page: Page, memory_id: str) -> tuple[float, float]:
    box = page.locator(f'.oam-map-point[data-id="{memory_id}"] circle').bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_a_point_shows_its_content_on_hover_and_opens_its_memory(logged_in_page: Page, world):
    page = logged_in_page
    page.goto("/users/alice/map/")
    expect(page.locator("#map[data-ready]")).to_be_attached()  # map.js has set up the selection
    point = page.locator('.oam-map-point[data-id="trains"]')
    # The server's <title> became the link's name (no second, slower tooltip from the browser).
    expect(point).to_have_attribute("aria-label", "preference, valid: Alice reads on night trains.")
    label = page.locator("#map-label")
    expect(label).to_be_hidden()

    point.hover()
    expect(point.locator("circle")).to_have_css("stroke-width", "2px")  # the hovered point stands out
    expect(label).to_be_visible()
    expect(label).to_have_text("preference, validAlice reads on night trains.")
    label_box, dot = label.bounding_box(), point.locator("circle").bounding_box()
    assert (
        abs(label_box["x"] - (dot["x"] + dot["width"])) < 40 or abs(label_box["x"] + label_box["width"] - dot["x"]) < 40
    )
    page.mouse.move(1, 1)
    expect(label).to_be_hidden()
    point.hover()
    point.click()

    expect(page).to_have_url(re.compile(r"/memories/trains/$"))


def looks_disabled(button) -> bool:
    """Greyed out and faint, not a primary button at two-thirds strength that reads as enabled."""
    style = button.evaluate("(b) => [getComputedStyle(b).filter, getComputedStyle(b).opacity]")
    return "grayscale(1)" in style[0] and float(style[1]) <= 0.5


def test_dragging_a_rectangle_selects_the_points_inside_and_offers_the_bulk_actions(logged_in_page: Page, world):
    page = logged_in_page
    page.goto("/users/alice/map/")
    expect(page.locator("#map[data-ready]")).to_be_attached()  # map.js has set up the selection
    expect(page.locator("#map-count")).to_have_text("0 selected")
    bulk = page.get_by_role("button", name="Bulk actions for the selected")
    expect(bulk).to_be_disabled()
    assert looks_disabled(bulk)
    centres = {memory_id: point_centre(page, memory_id) for memory_id in ("fact-old", "fact-vegetarian", "trains")}
    target = centres["trains"]

    # A small rectangle around one point (starting on the background) selects it alone.
    page.mouse.move(target[0] - 12, target[1] - 12)
    page.mouse.down()
    page.mouse.move(target[0] + 12, target[1] + 12, steps=4)
    page.mouse.up()

    expect(page.locator("#map-count")).to_have_text("1 selected")
    expect(bulk).to_be_enabled()
    assert not looks_disabled(bulk)
    expect(page.locator('.oam-map-point[data-id="trains"]')).to_have_class(re.compile("oam-map-selected"))
    expect(page.locator('input[name="ids"][value="trains"]')).to_be_checked()
    expect(page).to_have_url(re.compile(r"/users/alice/map/$"))  # the drag opened nothing

    # A rectangle over the whole map, with Shift, adds the rest.
    box = page.locator("#map").bounding_box()
    page.keyboard.down("Shift")
    page.mouse.move(box["x"] + 2, box["y"] + 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] - 2, box["y"] + box["height"] - 2, steps=6)
    page.mouse.up()
    page.keyboard.up("Shift")
    expect(page.locator("#map-count")).to_have_text("3 selected")

    with page.expect_request(re.compile(r"/memories/bulk/$")) as sent:
        page.get_by_role("button", name="Bulk actions for the selected").click()
    expect(page.get_by_role("heading", name="Bulk action on 3 memories")).to_be_visible()
    # One field of ids a line (CRLF, as browsers send line breaks), however many: Django reads 1,000 fields.
    assert sorted(parse_qs(sent.value.post_data)["ids"][0].splitlines()) == ["fact-old", "fact-vegetarian", "trains"]
    chosen = page.locator('#bulk-chooser input[name="ids"]')
    assert sorted(chosen.evaluate_all("inputs => inputs.map(input => input.value)")) == [
        "fact-old",
        "fact-vegetarian",
        "trains",
    ]


def test_escape_clears_the_selection(logged_in_page: Page, world):
    page = logged_in_page
    page.goto("/users/alice/map/")
    expect(page.locator("#map[data-ready]")).to_be_attached()  # map.js has set up the selection
    page.locator("#map-list summary").click()
    page.locator('#map-selection input[name="ids"]').first.check()
    expect(page.locator("#map-count")).to_have_text("1 selected")  # ticking the list selects on the map too

    page.keyboard.press("Escape")

    expect(page.locator("#map-count")).to_have_text("0 selected")
    expect(page.locator(".oam-map-selected")).to_have_count(0)


MANY = 1_200
"""More than Django reads as separate fields (1,000): the selection must travel as one."""


def test_a_rectangle_over_more_than_a_thousand_points_reaches_the_bulk_actions_and_changes_them_all(
    logged_in_page: Page, agent_memory
):
    ids = [f"many-{i:04}" for i in range(MANY)]
    agent_memory.store.add([f"Bea note {i}" for i in range(MANY)], "fact", record_ids=ids, user_ids="bea")
    page = logged_in_page
    page.goto(f"/users/bea/map/?limit={MANY}")
    expect(page.locator("#map[data-ready]")).to_be_attached()
    box = page.locator("#map").bounding_box()

    page.mouse.move(box["x"] + 1, box["y"] + 1)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] - 1, box["y"] + box["height"] - 1, steps=6)
    page.mouse.up()
    expect(page.locator("#map-count")).to_have_text(f"{MANY} selected")
    page.get_by_role("button", name="Bulk actions for the selected").click()

    expect(page.get_by_role("heading", name=f"Bulk action on {MANY} memories")).to_be_visible()
    page.get_by_label("Action").select_option("set_status")
    page.get_by_label("New status").select_option("invalid")
    page.get_by_role("button", name="Preview the change").click()
    preview = page.locator("#bulk-preview")
    expect(preview).to_contain_text(f"{MANY} memories will change.")
    preview.get_by_role("button", name="Set the status invalid on 1,200 memories").click()

    expect(page).to_have_url(re.compile(r"/history/bulk/\d+/$"))
    assert {record.status for record in agent_memory.list_memories(user_id="bea", limit=None)} == {"invalid"}


def test_back_from_the_bulk_page_the_selection_is_still_there_to_send_again(logged_in_page: Page, world):
    page = logged_in_page
    page.goto("/users/alice/map/")
    expect(page.locator("#map[data-ready]")).to_be_attached()
    page.locator("#map-list summary").click()
    page.locator('#map-selection input[name="ids"][value="trains"]').check()
    page.get_by_role("button", name="Bulk actions for the selected").click()
    expect(page.get_by_role("heading", name="Bulk action on 1 memory")).to_be_visible()

    page.go_back()

    expect(page.locator("#map-count")).to_have_text("1 selected")
    expect(page.locator('#map-selection input[name="ids"][value="trains"]')).to_be_enabled()
    expect(page.locator("#map-selection input[data-map-joined]")).to_have_count(0)
    page.get_by_role("button", name="Bulk actions for the selected").click()
    expect(page.get_by_role("heading", name="Bulk action on 1 memory")).to_be_visible()
