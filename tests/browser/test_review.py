"""The review queues in a real browser: a curator accepts one automatic retirement and reverts
another, then resolves a contradiction, with the keyboard alone (no JavaScript needed)."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from memory.engine import llm_link_metadata


@pytest.fixture
def queues(agent_memory):
    memory = agent_memory
    for memory_id, content in (
        ("porto", "Alice lives in Porto."),
        ("lisbon", "Alice lives in Lisbon."),
        ("tea", "Alice drinks tea."),
        ("coffee", "Alice drinks coffee."),
        ("club-fiction", "The book club prefers fiction."),
        ("club-poll", "The book club polled two non-fiction books."),
    ):
        memory.add_memory(content, memory_type="fact", memory_id=memory_id, user_id="alice", autonomous_linking=False)
    llm = llm_link_metadata("openai:test-model")
    memory.link_records("lisbon", "fact", "porto", "fact", "supersedes", relation_id="rel-home", metadata=llm)
    memory.link_records("coffee", "fact", "tea", "fact", "supersedes", relation_id="rel-drink", metadata=llm)
    memory.link_records("club-poll", "fact", "club-fiction", "fact", "contradicts", relation_id="rel-club")
    return memory


@pytest.mark.parametrize("color_scheme", ["light", "dark"])
def test_a_curator_works_through_the_queues_with_the_keyboard(logged_in_page: Page, queues, color_scheme):
    page = logged_in_page
    page.goto(reverse("memory:review"))
    expect(page.get_by_role("link", name="Retired by the LLM 2")).to_be_visible()

    page.get_by_role("button", name="Accept the retirement of porto").focus()
    page.keyboard.press("Enter")
    expect(
        page.get_by_text("Accepted: “Alice lives in Porto.” stays invalid, superseded by “Alice lives in Lisbon.”.")
    ).to_be_visible()
    page.get_by_role("button", name="Revert the link, making tea valid again").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_text("Reverted the automatic link: “Alice drinks tea.” is valid again.")).to_be_visible()
    expect(page.get_by_text("No automatic retirement is waiting for review.")).to_be_visible()
    assert queues.get_memory("porto").status.value == "invalid"
    assert queues.get_memory("tea").status.value == "valid"

    page.get_by_role("link", name="Contradictions 1").click()
    page.get_by_role("button", name="Keep “The book club prefers fiction.” and supersede the other").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_text("No unresolved contradiction.")).to_be_visible()
    assert queues.get_memory("club-poll").status.value == "invalid"
    assert queues.get_memory("club-fiction").status.value == "valid"
