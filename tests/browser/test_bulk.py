"""A bulk action in a real browser: tick rows in the memory list, preview, confirm, then undo the
whole change in one step from the history; and "select all on this page" with and without
JavaScript."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from memory.engine import AgentMemory, record_to_json

FACTS = ["Bob likes trains.", "Bob likes tea.", "Bob likes maps.", "Bob likes jazz."]


@pytest.fixture
def facts(agent_memory: AgentMemory) -> list[str]:
    for n, text in enumerate(FACTS):
        agent_memory.add_memory(text, memory_type="fact", memory_id=f"f{n}", user_id="bob", metadata={"n": n})
    return [f"f{n}" for n in range(len(FACTS))]


def stored(memory: AgentMemory) -> dict:
    """Every memory as stored, less what each write moves (version, update time)."""
    records = {r.id: record_to_json(r) for r in memory.list_memories(limit=None)}
    for record in records.values():
        record.pop("version"), record.pop("updated_at", None)
    return records


@pytest.mark.parametrize("color_scheme", ["light", "dark"])
def test_a_curator_previews_confirms_and_undoes_a_bulk_change(logged_in_page: Page, facts, agent_memory):
    page = logged_in_page
    before = stored(agent_memory)
    page.goto(reverse("memory:memory_list") + "?user_id=bob")
    page.get_by_role("checkbox", name="Select “Bob likes tea.”").check()
    page.get_by_role("checkbox", name="Select “Bob likes maps.”").check()
    expect(page.get_by_text("2 selected")).to_be_visible()

    page.get_by_role("button", name="Act on the selected…").click()
    expect(page.get_by_role("heading", name="Bulk action on 2 memories")).to_be_visible()
    page.get_by_label("Action").select_option("set_status")
    expect(page.get_by_label("Metadata key")).to_be_hidden()  # only the fields the action needs
    page.get_by_label("New status").select_option("invalid")
    page.get_by_role("button", name="Preview the change").click()

    preview = page.locator("#bulk-preview")
    expect(preview).to_contain_text("2 memories will change.")
    expect(preview).to_contain_text("Each of the 2 becomes invalid")
    assert agent_memory.get_memory("f1").status == "valid"  # nothing changed yet
    preview.get_by_role("button", name="Set the status invalid on 2 memories").click()

    expect(page).to_have_url(re.compile(r"/history/bulk/\d+/$"))
    expect(page.get_by_role("alert").or_(page.locator(".alert-success"))).to_contain_text(
        "Set the status invalid on 2 memories"
    )
    assert [agent_memory.get_memory(i).status for i in facts] == ["valid", "invalid", "invalid", "valid"]

    page.get_by_role("navigation", name="Sections").get_by_role("link", name="History").click()
    page.get_by_role("link", name="Set the status invalid on 2 memories").click()
    page.get_by_role("link", name="Undo all").click()
    expect(page.get_by_text("The 2 memories get back the values they had before it")).to_be_visible()
    page.get_by_role("button", name="Undo all").click()

    expect(page.get_by_role("heading", name=re.compile("Undone: Set the status invalid"))).to_be_visible()
    assert stored(agent_memory) == before


@pytest.mark.parametrize("context_options", [{}, {"java_script_enabled": False}], ids=["js", "no-js"])
def test_select_all_on_the_page_takes_every_row(logged_in_page: Page, facts, context_options):
    page = logged_in_page
    page.goto(reverse("memory:memory_list") + "?user_id=bob")
    page.get_by_role("checkbox", name="Select all memories on this page").check()

    with page.expect_request(re.compile(r"/memories/bulk/$")) as sent:
        page.get_by_role("button", name="Act on the selected…").click()

    expect(page.get_by_role("heading", name="Bulk action on 4 memories")).to_be_visible()
    assert sent.value.method == "POST"  # a page of ids does not fit in a URL
    if context_options:  # without JavaScript every field shows, each saying which action it is for
        expect(page.get_by_label("Metadata key")).to_be_visible()
    else:
        assert "page_ids" not in sent.value.post_data  # the ticked rows say it all
