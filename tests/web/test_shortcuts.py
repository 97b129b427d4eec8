"""Keyboard shortcuts, as the server renders them: every page loads static/js/shortcuts.js and holds
the dialog that lists the keys, and the pages mark what the keys act on (the search box, the main
list, a record's Edit button). The keys themselves are tried in tests/browser/test_shortcuts.py."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.urls import reverse

from memory.curation import Actor, Curation
from memory.web.tokens import create_token

from .world import World, build_world


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


class Tags(HTMLParser):
    """Every start tag of a page, with its attributes, and the text inside each <dialog>."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.dialog_text: list[str] = []
        self.in_dialog = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append((tag, dict(attrs)))
        self.in_dialog = self.in_dialog or tag == "dialog"

    def handle_endtag(self, tag: str) -> None:
        self.in_dialog = self.in_dialog and tag != "dialog"

    def handle_data(self, data: str) -> None:
        if self.in_dialog:
            self.dialog_text.append(data)

    def find(self, tag: str | None = None, **attributes: str | None) -> list[dict[str, str | None]]:
        """The attributes of each tag (of that name) that has these attributes (None: any value)."""
        wanted = {name.replace("_", "-"): value for name, value in attributes.items()}
        return [
            attrs
            for name, attrs in self.tags
            if (tag is None or name == tag)
            and all(key in attrs and (value is None or attrs[key] == value) for key, value in wanted.items())
        ]


def page(client, url: str) -> Tags:
    response = client.get(url)
    assert response.status_code == 200, url
    return Tags(response.content.decode())


def full_pages(world: World) -> list[str]:
    return [
        reverse("memory:overview"),
        reverse("memory:thread_list"),
        reverse("memory:thread_detail", args=[world.thread_id]),
        reverse("memory:memory_list"),
        reverse("memory:memory_detail", args=[world.fact_id]),
        reverse("memory:memory_edit", args=[world.fact_id]),
        reverse("memory:user_list"),
        reverse("memory:history"),
        reverse("memory:search") + "?q=vegetarian&user_id=alice",
        reverse("memory:graph") + f"?user_id={world.user_id}",
        reverse("memory:tokens"),
    ]


def test_every_page_loads_the_shortcuts_and_holds_their_dialog(curator_client, world):
    for url in full_pages(world):
        tags = page(curator_client, url)
        assert len(tags.find("script", src="/static/js/shortcuts.js")) == 1, url
        [dialog] = tags.find("dialog", id="keyboard-shortcuts")
        [heading] = tags.find(id=dialog["aria-labelledby"])
        assert heading  # the dialog is named by its heading
        assert len(tags.find("button", data_shortcuts_open=None, type="button")) == 1, url


def test_the_dialog_lists_every_key_and_closes_with_a_button(curator_client, world):
    tags = page(curator_client, reverse("memory:memory_list"))
    text = " ".join("".join(tags.dialog_text).split())
    assert "Keyboard shortcuts" in text
    for key, does in [
        ("/", "Focus the search or filter box"),
        ("j", "Next or previous row of the list"),
        ("Enter", "Open the current row"),
        ("e", "Edit the current row, or the record of the page"),
        ("x", "Select or unselect the current row for a bulk action"),
        ("?", "Show these shortcuts"),
        ("Esc", "Close this list"),
    ]:
        assert key in text and does in text, key
    assert tags.find("form", method="dialog")  # Close works without the script
    assert tags.find("button", type="submit", autofocus=None)


def test_the_login_page_has_no_shortcuts(client, db):
    tags = page(client, reverse("login"))
    assert not tags.find("dialog")
    assert not tags.find(data_shortcuts_open=None)


@pytest.mark.parametrize("name", ["memory_list", "thread_list"])
def test_a_listing_marks_its_text_filter_and_its_rows(curator_client, world, name):
    tags = page(curator_client, reverse(f"memory:{name}"))
    assert [attrs["name"] for attrs in tags.find("input", data_shortcut="search")] == ["q"]
    assert tags.find(data_shortcut_list=None) == tags.find("div", id="results")  # its rows are the table's


@pytest.mark.parametrize(
    ("name", "marked"), [("user_list", "div"), ("agent_list", "div"), ("history", "div"), ("tokens", "tbody")]
)
def test_other_listings_mark_their_rows(curator_client, curator, world, agent_memory, name, marked):
    create_token(curator, name="nightly", role="viewer")
    memory = agent_memory.get_memory(world.fact_id)
    Curation(agent_memory, Actor(curator)).update_memory(memory.id, version=memory.version, content="Alice is vegan.")
    tags = page(curator_client, reverse(f"memory:{name}"))
    assert [tag for tag, attrs in tags.tags if "data-shortcut-list" in attrs] == [marked]
    assert len(tags.find("tr")) > 1  # a row besides the header's


def test_the_embedding_maps_list_is_the_list_of_its_page(curator_client, world):
    tags = page(curator_client, reverse("memory:user_map", args=[world.user_id]))
    assert [tag for tag, attrs in tags.tags if "data-shortcut-list" in attrs] == ["tbody"]
    assert tags.find("input", type="checkbox", name="ids")  # what x ticks


def test_search_marks_its_query_and_its_results(curator_client, world):
    tags = page(curator_client, reverse("memory:search") + "?q=vegetarian&user_id=alice")
    assert [attrs["name"] for attrs in tags.find("input", data_shortcut="search")] == ["q"]
    assert len(tags.find(id="results", data_shortcut_list=None)) == 1
    results = tags.find("article", data_shortcut_item=None)
    assert results and len(tags.find("a", data_shortcut="open")) == len(results)


def test_a_threads_messages_are_its_list_each_with_open_and_edit(curator_client, world):
    tags = page(curator_client, reverse("memory:thread_detail", args=[world.thread_id]))
    assert len(tags.find("section", id="timeline", data_shortcut_list=None)) == 1
    assert len(tags.find("article", data_shortcut_item=None)) == len(world.message_ids)
    opens = [attrs["href"] for attrs in tags.find("a", data_shortcut="open")]
    assert opens == [reverse("memory:message_detail", args=[world.thread_id, m]) for m in world.message_ids]
    edits = [attrs["href"] for attrs in tags.find("a", data_shortcut="edit")]
    # Each message's inline Edit, and the thread's own (what e edits with no current message).
    assert reverse("memory:thread_edit", args=[world.thread_id]) in edits
    assert len(edits) == len(world.message_ids) + 1


def record_pages(world: World) -> dict[str, str]:
    """Each record page, and the edit form its e opens."""
    message = [world.thread_id, world.message_ids[0]]
    return {
        reverse("memory:memory_detail", args=[world.fact_id]): reverse("memory:memory_edit", args=[world.fact_id]),
        reverse("memory:message_detail", args=message): reverse("memory:message_edit", args=message),
        reverse("memory:image_detail", args=[world.image_id]): reverse("memory:image_edit", args=[world.image_id]),
        reverse("memory:user_detail", args=[world.user_id]): reverse("memory:user_edit", args=[world.user_id]),
        reverse("memory:agent_detail", args=[world.agent_id]): reverse("memory:agent_edit", args=[world.agent_id]),
    }


def test_a_record_page_marks_its_edit_button_for_curators(curator_client, world):
    for url, edit_url in record_pages(world).items():
        edits = page(curator_client, url).find("a", data_shortcut="edit")
        assert edits[0]["href"] == edit_url, url  # e clicks the first (a message's page has its inline one too)


def test_a_viewer_has_nothing_to_edit_with_e(viewer_client, world):
    for url in [reverse("memory:thread_detail", args=[world.thread_id]), *record_pages(world)]:
        assert not page(viewer_client, url).find(data_shortcut="edit"), url
