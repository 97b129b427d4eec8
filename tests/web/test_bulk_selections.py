"""How a selection travels to the bulk actions (/memories/bulk/): ticked ids as repeated `ids` in a
URL, or, too many for a URL (the map selects up to 10,000, a URL holds about 100), posted as one
field of ids a line; past Django's field and size limits, a page that says the limit and what to
do instead. And ids reach the confirmation exactly as the engine stores them."""

from __future__ import annotations

import html
import re

import pytest
from django.test import override_settings
from django.urls import reverse

from memory.engine import AgentMemory
from memory.models import BulkChange

from .test_bulk import BULK, confirm

MAP_MEMORIES = 10_000


def form_fields(page: str, form_id: str) -> list[tuple[str, str]]:
    """The (name, value) of every hidden input, select and ticked box of one form of a page."""
    form = page[page.index(f'id="{form_id}"') :]
    form = form[: form.index("</form>")]
    return [(name, html.unescape(value)) for name, value in re.findall(r'name="([^"]+)" value="([^"]*)"', form)]


@pytest.fixture
def notes(agent_memory: AgentMemory) -> list[str]:
    """Four of bob's memories, n0…n3."""
    return [agent_memory.add_memory(f"Bob note {i}.", memory_id=f"n{i}", user_id="bob") for i in range(4)]


@pytest.fixture
def mapped(agent_memory: AgentMemory) -> list[str]:
    """MAP_MEMORIES of alice's memories (one batched write: the hashing embedder gives each a vector)."""
    ids = [f"m{i:05}" for i in range(MAP_MEMORIES)]
    agent_memory.store.add([f"Alice note {i}" for i in range(MAP_MEMORIES)], "fact", record_ids=ids, user_ids="alice")
    return ids


def test_ten_thousand_ids_from_the_map_reach_the_preview_and_the_confirmation_changes_them_all(
    curator_client, agent_memory, mapped
):
    # The map draws all of them, each a box of its form, which posts to the bulk actions.
    page = curator_client.get(reverse("memory:user_map", args=["alice"]), {"limit": MAP_MEMORIES}).content.decode()
    assert '<form id="map-selection" method="post" action="/memories/bulk/">' in page
    ticked = [value for name, value in form_fields(page, "map-selection") if name == "ids"]
    assert sorted(ticked) == mapped

    # What static/js/map.js posts: the ticked ids as one field, one id a line.
    chooser = curator_client.post(BULK, {"ids": "\n".join(ticked)})
    assert chooser.status_code == 200
    assert chooser.context["selected"] == MAP_MEMORIES
    page = chooser.content.decode()
    assert "Bulk action on 10000 memories" in page
    # The chooser sends them on the same way: one field of a POST form (a URL cannot hold them).
    assert '<form method="post" action="/memories/bulk/" class="card card-body py-2" id="bulk-chooser"' in page
    carried = dict(form_fields(page, "bulk-chooser"))
    assert carried["ids"].splitlines() == ticked

    preview = curator_client.post(BULK, {**carried, "action": "set_status", "status": "invalid"})
    assert preview.status_code == 200
    assert preview.context["plan"].count == MAP_MEMORIES
    assert "Set the status invalid on 10,000 memories?" in preview.content.decode()
    assert agent_memory.get_memory("m00000").status == "valid"  # a preview changes nothing

    done = confirm(curator_client, preview)

    change = BulkChange.objects.get()
    assert done.status_code == 302 and done["Location"] == reverse("memory:history_bulk", args=[change.pk])
    assert change.summary == "Set the status invalid on 10,000 memories"
    assert {record.status for record in agent_memory.list_memories(user_id="alice", limit=None)} == {"invalid"}


def test_a_posted_selection_that_fits_in_a_url_gets_a_get_chooser_and_a_preview_link(curator_client, notes):
    """The list's form posts (a page of rows with "select all" does not fit in gunicorn's 4 KB
    request line); a selection small enough still gets a preview at a URL to share."""
    response = curator_client.post(BULK, {"ids": ["n0", "n1"], "whole_page": "1", "page_ids": ["n2"]})

    assert response.status_code == 200
    assert response.context["selected"] == 3
    page = response.content.decode()
    assert '<form method="get" action="/memories/bulk/" class="card card-body py-2" id="bulk-chooser"' in page
    assert [value for name, value in form_fields(page, "bulk-chooser") if name == "ids"] == ["n0", "n1", "n2"]


def test_the_memory_list_posts_its_ticked_rows(curator_client, notes):
    page = curator_client.get(reverse("memory:memory_list"), {"user_id": "bob"}).content.decode()
    assert re.search(r'<form id="bulk-form" method="post" action="/memories/bulk/"><input [^>]*name="csrf', page)


def test_one_field_of_ids_a_line_selects_each_id_and_a_link_with_repeated_ids_still_works(viewer_client, notes):
    one_field = viewer_client.get(BULK, {"ids": "n0\r\nn1\nn2\n\nn0", "action": "delete"})
    repeated = viewer_client.get(BULK, {"ids": ["n0", "n1", "n2"], "action": "delete"})

    assert one_field.context["selected"] == repeated.context["selected"] == 3
    assert [r.id for r, _ in one_field.context["plan"].changes] == ["n0", "n1", "n2"]


@pytest.mark.parametrize(
    ("value", "message"),
    [(" n0", "must not begin or end with whitespace"), ("n0\t", "control characters"), ("é" * 300, "512")],
)
def test_an_id_the_engine_would_refuse_is_a_form_error_not_trimmed(viewer_client, notes, value, message):
    """An id of " n0" is not n0: trimming it would act on another memory than the one named."""
    response = viewer_client.get(BULK, {"ids": value, "action": "delete"})

    assert response.status_code == 400
    assert any(message in error for error in response.context["form"].errors["ids"])
    assert "plan" not in response.context


def test_a_viewer_cannot_post_a_selection(viewer_client, notes):
    """A viewer's POST is a 403, whatever it is (docs/security.md); a viewer's map links instead."""
    assert viewer_client.post(BULK, {"ids": "n0\nn1"}).status_code == 403


def test_ids_with_spaces_and_unusual_characters_reach_the_confirmation_exactly(curator_client, agent_memory):
    """Whatever the engine takes in an id survives the selection's lines and the chooser."""
    ids = ["a b", "a/b", "é\u00a0é", "zero\u200bwidth", "rtl\u202eid", "a\\nb", "3 4", '"><b>']
    for record_id in ids:
        agent_memory.add_memory(f"note {record_id}", memory_id=record_id, user_id="dan")
    chooser = curator_client.post(BULK, {"ids": ids})
    preview = curator_client.get(BULK, [*form_fields(chooser.content.decode(), "bulk-chooser"), ("action", "delete")])
    assert preview.context["plan"].count == len(ids)

    confirm(curator_client, preview)

    assert agent_memory.list_memories(user_id="dan", limit=None) == []


# --- past the limits: a page that says which and what to do -------------------------------------


@pytest.mark.parametrize("method", ["get", "post"])
def test_more_ticked_boxes_than_django_reads_get_a_page_saying_the_limit_and_what_to_do(curator_client, notes, method):
    """Without JavaScript each ticked box of the map's list is a field; Django reads 1,000."""
    response = getattr(curator_client, method)(BULK, {"ids": [f"n{i}" for i in range(1_001)]})

    assert response.status_code == 400
    page = response.content.decode()
    assert "The form has too many fields" in page
    assert "more than 1,000 fields" in page
    assert "Act on every memory these filters match" in page
    assert not BulkChange.objects.exists()


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1_000)
def test_a_selection_over_the_size_limit_gets_a_page_saying_the_limit_and_what_to_do(curator_client, notes):
    response = curator_client.post(BULK, {"ids": "\n".join(f"memory-{i}" for i in range(200))})

    assert response.status_code == 413
    page = response.content.decode()
    assert "over 1,000 bytes" in page
    assert "Act on every memory these filters match" in page


def test_more_ids_than_a_bulk_change_takes_are_a_form_error(curator_client, notes, monkeypatch):
    monkeypatch.setattr("memory.views.bulk.MAX_SELECTION", 3)
    response = curator_client.post(BULK, {"ids": "n0\nn1\nn2\nn3"})
    assert response.status_code == 400
    assert "You selected more than 3 memories" in response.content.decode()
