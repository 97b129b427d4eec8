"""The near-duplicate finder in a real browser: a group resolved in one click (htmx swaps it in
place), then undone in one step; and the same without JavaScript, as plain forms."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

URL = reverse("memory:review_duplicates")


@pytest.fixture
def dupes(agent_memory):
    """alice: two rewordings of her job (j1 first) and of her seat (s1, s2); j2 supports s1."""
    add = agent_memory.add_memory
    add("Alice lives in Lyon and works as a product designer.", memory_type="fact", user_id="alice", memory_id="j1")
    add("Alice works as a product designer and lives in Lyon.", memory_type="fact", user_id="alice", memory_id="j2")
    add("Alice prefers window seats on flights.", memory_type="preference", user_id="alice", memory_id="s1")
    add("Alice prefers window seats on long flights.", memory_type="preference", user_id="alice", memory_id="s2")
    agent_memory.link_records("j2", "fact", "s1", "preference", "supports", relation_id="j2-s1")
    return agent_memory


def linked(memory, memory_id: str) -> set[tuple[str, str, str]]:
    return {
        (link.source_record_id, link.relation_type, link.target_record_id)
        for link in memory.list_relations(record_id=memory_id, limit=None)
    }


def test_a_group_is_resolved_in_place_then_undone(logged_in_page: Page, dupes):
    page = logged_in_page
    page.goto(f"{URL}?user_id=alice")
    groups = page.locator(".oam-duplicate-group")
    expect(groups).to_have_count(2)
    jobs = groups.filter(has_text="product designer")
    expect(jobs.locator("ins").first).to_be_visible()  # the second memory's words the first lacks

    jobs.get_by_label("Keep this one").nth(1).check()  # keep j2, the second
    jobs.get_by_role("button", name="Keep the chosen one, link the others as its duplicates").click()

    resolved = page.locator(".oam-duplicate-resolved")
    expect(resolved).to_contain_text(
        "Merged near-duplicates into “Alice works as a product designer and lives in Lyon.”: 1 linked as its duplicates"
    )
    expect(groups).to_have_count(1)  # the other group is still there, untouched: no reload
    assert dupes.get_memory("j1").status == "invalid"
    assert linked(dupes, "j2") == {("j2", "duplicates", "j1"), ("j2", "supports", "s1")}

    resolved.get_by_role("button", name="Undo this merge").click()
    expect(page.get_by_text("Undone: Merged near-duplicates into “Alice works as")).to_be_visible()
    expect(groups).to_have_count(2)
    assert dupes.get_memory("j1").status == "valid"
    assert linked(dupes, "j2") == {("j2", "supports", "s1")}


@pytest.mark.parametrize("context_options", [{"java_script_enabled": False}])
def test_without_javascript_a_delete_is_a_plain_form(logged_in_page: Page, dupes):
    page = logged_in_page
    page.goto(f"{URL}?user_id=alice")
    seats = page.locator(".oam-duplicate-group").filter(has_text="window seats")
    seats.get_by_role("button", name="Keep the chosen one, delete the others").click()  # s1, the first, kept

    expect(page.get_by_role("heading", name="Delete 1 memory and keep one?")).to_be_visible()  # it asks first
    assert dupes.get_memory("s2").status == "valid"
    page.get_by_role("button", name="Delete 1 memory").click()

    expect(page.locator(".oam-duplicate-resolved")).to_contain_text("1 deleted")
    expect(page.locator(".oam-duplicate-group")).to_have_count(1)
    with pytest.raises(KeyError):
        dupes.get_memory("s2")
    assert "user_id=alice" in page.url


def test_with_htmx_a_delete_asks_in_place_then_the_summary_follows(logged_in_page: Page, dupes):
    page = logged_in_page
    page.goto(f"{URL}?user_id=alice")
    seats = page.locator(".oam-duplicate-group").filter(has_text="window seats")
    seats.get_by_role("button", name="Keep the chosen one, delete the others").click()

    question = page.locator(".oam-confirm")
    expect(question).to_contain_text("Delete 1 memory and keep one?")
    expect(page.locator(".oam-duplicate-group")).to_have_count(1)  # the other group stays: no reload
    question.get_by_role("button", name="Delete 1 memory").click()

    expect(page.locator(".oam-duplicate-resolved")).to_contain_text("1 deleted")
    expect(page.locator("#duplicates-summary")).to_contain_text("1 group within a distance")
    with pytest.raises(KeyError):
        dupes.get_memory("s2")
