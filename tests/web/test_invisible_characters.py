"""Invisible and direction-changing characters are shown as their code points wherever a page
shows content, ids and metadata, and kept as stored where text is edited or sent to the API."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.text import INVISIBLE

EVIL = "Zero\u200bwidth and \u202eevil\u202c text"
MARKER = '<span class="oam-invisible" title="Invisible character: {name}">U+{code}</span>'


@pytest.fixture
def hidden(agent_memory):
    agent_memory.add_memory(
        EVIL,
        memory_type="fact",
        memory_id="evil\u2066id",
        user_id="alice",
        metadata={"no\u200bte": "see\u00adme"},
    )
    agent_memory.add_memory("A family: 👩\u200d👩\u200d👧, a heart: ❤\ufe0f.", memory_type="fact", memory_id="emoji")
    return agent_memory


def marker(character: str, name: str) -> str:
    return MARKER.format(name=name, code=f"{ord(character):04X}")


def test_a_list_and_a_record_page_show_each_invisible_character(curator_client, hidden):
    for url in (reverse("memory:memory_list"), reverse("memory:memory_detail", args=["evil\u2066id"])):
        response = curator_client.get(url)
        page = response.content.decode()

        assert int(response.get("Content-Length", len(response.content))) == len(response.content)
        assert marker("\u200b", "ZERO WIDTH SPACE") in page
        assert marker("\u202e", "RIGHT-TO-LEFT OVERRIDE") in page
        assert marker("\u202c", "POP DIRECTIONAL FORMATTING") in page
        assert marker("\u00ad", "SOFT HYPHEN") in page  # in a metadata value
        text = page.split("<body", 1)[1]
        shown = "".join(piece.split(">", 1)[-1] for piece in text.split("<"))  # text between tags
        assert not INVISIBLE.search(shown)


def test_a_record_page_shows_them_in_its_id(curator_client, hidden):
    page = curator_client.get(reverse("memory:memory_detail", args=["evil\u2066id"])).content.decode()

    assert "evil" + marker("\u2066", "LEFT-TO-RIGHT ISOLATE") + "id" in page


def test_an_emoji_sequence_is_left_whole(curator_client, hidden):
    page = curator_client.get(reverse("memory:memory_detail", args=["emoji"])).content.decode()

    assert "👩\u200d👩\u200d👧" in page and "❤\ufe0f" in page
    assert "oam-invisible" not in page


def test_a_form_and_the_api_keep_the_text_as_stored(curator_client, hidden):
    form = curator_client.get(reverse("memory:memory_edit", args=["evil\u2066id"])).content.decode()
    assert f"\n{EVIL}</textarea>" in form

    api = curator_client.get("/api/v1/memories/evil%E2%81%A6id/").json()
    assert api["content"] == EVIL and api["metadata"] == {"no\u200bte": "see\u00adme"}


def test_an_unchanged_edit_saves_the_text_as_it_was(curator_client, hidden):
    """The edit form sends back the characters it was given, not their markers."""
    form = curator_client.get(reverse("memory:memory_edit", args=["evil\u2066id"]))
    data = {
        field.html_name: field.value() if field.value() is not None else ""
        for field in form.context["form"]
        if not field.field.disabled
    }
    response = curator_client.post(reverse("memory:memory_edit", args=["evil\u2066id"]), data)

    assert response.status_code == 302
    assert hidden.get_memory("evil\u2066id").content == EVIL
