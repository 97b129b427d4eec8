"""On a phone (390 px wide) no page scrolls sideways, however long what it shows: a 5,000-character
filter value, a metadata value of hundreds of characters, fifty metadata keys. Wide tables scroll
inside their own box; everything else wraps or is clipped with an ellipsis."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import Page

from tests.web.world import World, build_world

PHONE = {"viewport": {"width": 390, "height": 844}}
LONG_URL = "https://example.com/" + "trip/lisbon-" * 415  # about 5,000 characters


@pytest.fixture
def world(agent_memory) -> World:
    world = build_world(agent_memory)
    metadata = {f"key_{n:02d}": f"value {n}" for n in range(50)} | {"source_url": LONG_URL}
    agent_memory.update_thread(world.thread_id, metadata=metadata)
    agent_memory.add_memory(f"Bookmark: {LONG_URL}", user_id="alice", memory_type="fact", metadata=metadata)
    return world


@pytest.mark.parametrize("context_options", [PHONE])
@pytest.mark.parametrize("color_scheme", ["light", "dark"])
def test_no_page_is_wider_than_the_phone(logged_in_page: Page, world, context_options, color_scheme):
    page = logged_in_page
    paths = [
        reverse("memory:memory_list"),
        reverse("memory:memory_list") + "?q=" + "x" * 5000,
        reverse("memory:memory_list") + "?user_id=" + "u" * 300 + "&thread_id=" + "t" * 300,
        reverse("memory:thread_list"),
        reverse("memory:thread_detail", args=[world.thread_id]),
        reverse("memory:history"),
        reverse("memory:review"),
        reverse("memory:tokens"),
    ]
    wider = {}
    for path in paths:
        page.goto(path)
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 390:
            wider[path[:80]] = width
    assert wider == {}, f"pages wider than the phone's 390 px: {wider}"


CONTRAST = """
(element) => {
  const rgb = (css) => css.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const luminance = ([r, g, b]) => {
    const linear = (c) => (c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
  };
  const chip = element.closest('.oam-filter-chip');
  const a = luminance(rgb(getComputedStyle(element).color));
  const b = luminance(rgb(getComputedStyle(chip).backgroundColor));
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}
"""


@pytest.mark.parametrize("color_scheme", ["light", "dark"])
def test_a_filter_chip_reads_in_both_themes(logged_in_page: Page, world, color_scheme):
    """The chip's muted label ("User:") against the chip's own background: WCAG's 4.5:1 for text."""
    page = logged_in_page
    page.goto(reverse("memory:memory_list") + "?user_id=alice")

    label = page.locator(".oam-filter-chip .text-body-secondary").first
    assert label.inner_text() == "User:"
    assert label.evaluate(CONTRAST) >= 4.5
