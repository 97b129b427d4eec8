"""Bulk actions on memories (/memories/bulk/): the chooser, the preview (counts, lifecycle effects,
sample), the confirmation per persona, every action, the filter-matched mode, bad input, and the
one-step undo from the history that puts every record back exactly."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from memory.curation import Actor, Curation
from memory.engine import AgentMemory, RecordStatus, record_to_json, relation_to_json
from memory.models import BulkChange, CurationEntry

BULK = reverse("memory:memory_bulk")
NOTES = ["pizza on fridays", "window seats", "quiet hotels", "trains over planes", "tea, not coffee", "early flights"]


@pytest.fixture
def notes(agent_memory: AgentMemory) -> list[str]:
    """Six of bob's facts (n0…n5, metadata {"source": "chat", "n": i}); n4 is invalid by its own
    flag; n5 supersedes n3 (so n3 is invalid by that link). And one of carol's (c0)."""
    for i, text in enumerate(NOTES):
        agent_memory.add_memory(
            f"Bob likes {text}.",
            memory_type="fact",
            memory_id=f"n{i}",
            user_id="bob",
            metadata={"source": "chat", "n": i},
            autonomous_linking=False,
        )
    agent_memory.update_memory("n4", status=RecordStatus.INVALID)
    agent_memory.link_records("n5", "fact", "n3", "fact", "supersedes", relation_id="rel-5-3")
    agent_memory.add_memory("Carol likes jazz.", memory_type="preference", memory_id="c0", user_id="carol")
    return [f"n{i}" for i in range(6)]


def state(memory: AgentMemory) -> dict:
    """Every memory and link as stored, less what a write always moves (versions, update times)."""
    records = {r.id: record_to_json(r) for r in memory.list_memories(limit=None)}
    links = {link.id: relation_to_json(link) for link in memory.list_relations(limit=None)}
    for value in [*records.values(), *links.values()]:
        for moving in ("version", "updated_at"):
            value.pop(moving, None)
    return {"records": records, "links": links}


def preview(client, **query):
    return client.get(BULK, query)


def confirm(client, response, url=BULK, **extra):
    """POST the confirmation form of a preview, as the page sends it."""
    page = response.content.decode()
    form = page[page.index('id="bulk-confirm"') :]
    form = form[: form.index("</form>")]
    data = {name: html.unescape(value) for name, value in re.findall(r'name="([^"]+)" value="([^"]*)"', form)}
    data.update(extra)
    return client.post(url, data)


# --- who may do what ---------------------------------------------------------------------------


def test_anonymous_visitors_are_sent_to_log_in(client, notes):
    response = client.get(BULK, {"ids": "n0", "action": "delete"})
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_a_viewer_sees_the_preview_but_cannot_confirm(viewer_client, notes, agent_memory):
    response = preview(viewer_client, ids=["n0", "n1"], action="delete")
    assert response.status_code == 200
    assert response.context["plan"].count == 2
    assert 'id="bulk-confirm"' not in response.content.decode()
    assert "Only curators can make this change" in response.content.decode()

    posted = viewer_client.post(BULK, {"action": "delete", "selection": "n0 1\nn1 1"})

    assert posted.status_code == 403
    assert agent_memory.get_memory("n0")
    assert not BulkChange.objects.exists()


def test_a_viewer_sees_no_checkboxes_in_the_memory_list(viewer_client, notes):
    html = viewer_client.get(reverse("memory:memory_list")).content.decode()
    assert 'name="ids"' not in html


def test_a_curator_ticks_rows_in_the_memory_list(curator_client, notes):
    html = curator_client.get(reverse("memory:memory_list"), {"user_id": "bob"}).content.decode()
    assert html.count('type="checkbox" name="ids"') == 6
    assert 'aria-label="Select all memories on this page"' in html
    assert f'href="{BULK}?user_id=bob&amp;all=1"' in html


# --- the chooser and the preview ---------------------------------------------------------------


def test_ids_without_an_action_show_the_chooser_for_them(viewer_client, notes):
    response = preview(viewer_client, ids=["n0", "n1", "n0"])
    html = response.content.decode()
    assert response.status_code == 200
    assert response.context["selected"] == 2
    assert "Bulk action on 2 memories" in html
    assert html.count('<input type="hidden" name="ids"') == 2
    assert "Choose an action" in html


def test_select_all_on_the_page_takes_the_page_ids(viewer_client, notes):
    response = preview(viewer_client, whole_page="1", page_ids=["n0", "n1", "n2"], ids=["n1"])
    assert response.context["selected"] == 3


def test_the_status_preview_counts_only_what_changes_and_says_the_effects(viewer_client, notes):
    response = preview(viewer_client, ids=["n0", "n1", "n3", "n4"], action="set_status", status="invalid")
    plan = response.context["plan"]
    html = response.content.decode()

    # n3 is already invalid (a link retires it), n4 by its own flag: neither counts
    assert [record.id for record, _ in plan.changes] == ["n0", "n1"]
    assert plan.unchanged == 2
    assert [(c.memory.id, c.after) for c in plan.effects] == [("n0", "invalid"), ("n1", "invalid")]
    assert "<strong>2 memories</strong> will change" in html
    assert "2 memories already have that value" in html
    assert "Each of the 2 becomes <strong>invalid</strong>" in html


def test_setting_valid_skips_a_memory_a_link_retires(viewer_client, notes):
    plan = preview(viewer_client, ids=["n3", "n4", "n0"], action="set_status", status="valid").context["plan"]

    assert [record.id for record, _ in plan.changes] == ["n4"]
    assert [(record.id, reason.split(":")[0]) for record, reason in plan.skipped] == [("n3", "a link retires it")]
    assert plan.unchanged == 1
    assert [(c.memory.id, c.after) for c in plan.effects] == [("n4", "valid")]


def test_ids_of_no_live_memory_are_left_out_and_said(viewer_client, notes):
    response = preview(viewer_client, ids=["n0", "nope"], action="delete")
    assert response.context["plan"].missing == ["nope"]
    assert "1 selected id name no live memory" in response.content.decode()


def test_the_delete_preview_names_the_memories_that_become_valid_again(viewer_client, notes):
    plan = preview(viewer_client, ids=["n5", "n0"], action="delete").context["plan"]
    assert plan.count == 2
    assert [(c.memory.id, c.after) for c in plan.effects] == [("n3", "valid")]


def test_a_delete_with_the_retired_memory_revives_nothing(viewer_client, notes):
    plan = preview(viewer_client, ids=["n5", "n3"], action="delete").context["plan"]
    assert plan.effects == []


def test_the_duplicates_preview_keeps_one_valid_and_retires_the_others(viewer_client, notes):
    response = preview(viewer_client, ids=["n0", "n1", "n2", "n4"], action="mark_duplicates", keep="n0")
    plan = response.context["plan"]

    assert plan.keep.id == "n0"
    assert [record.id for record, _ in plan.changes] == ["n1", "n2", "n4"]  # the kept one is left out
    assert [c.memory.id for c in plan.effects] == ["n1", "n2"]  # n4 is invalid already
    page = response.content.decode()
    assert "Kept, unchanged" in page
    assert page.count("will become <strong>invalid</strong>") == 2


def test_a_memory_already_linked_to_the_kept_one_is_skipped(viewer_client, notes):
    plan = preview(viewer_client, ids=["n3", "n1"], action="mark_duplicates", keep="n5").context["plan"]
    assert [record.id for record, _ in plan.changes] == ["n1"]
    assert [record.id for record, _ in plan.skipped] == ["n3"]


def test_the_metadata_previews_count_only_records_that_differ(viewer_client, notes, agent_memory):
    agent_memory.update_memory("n1", metadata={"source": "import", "n": 1})
    set_plan = preview(viewer_client, ids=["n0", "n1"], action="set_metadata", key="source", value='"import"').context[
        "plan"
    ]
    remove_plan = preview(viewer_client, ids=["n0", "c0"], action="remove_metadata", key="n").context["plan"]

    assert [(r.id, fields) for r, fields in set_plan.changes] == [("n0", {"metadata": {"source": "import", "n": 0}})]
    assert set_plan.unchanged == 1
    assert [change for _, change in set_plan.sample] == ['source: "chat" → "import"']
    assert [change for _, change in remove_plan.sample] == ["n: 0 → (removed)"]
    assert [(r.id, fields) for r, fields in remove_plan.changes] == [("n0", {"metadata": {"source": "chat"}})]


# --- the filter-matched mode -------------------------------------------------------------------


def test_all_acts_on_every_memory_the_filters_match(viewer_client, notes):
    response = preview(viewer_client, all="1", user_id="bob", status="valid", action="set_type", memory_type="memory")
    plan = response.context["plan"]
    assert sorted(record.id for record, _ in plan.changes) == ["n0", "n1", "n2", "n5"]
    assert "every memory the filters match" in response.content.decode()


def test_in_all_mode_the_last_status_is_the_actions_and_the_others_filter(curator_client, notes, agent_memory):
    # the chooser sends the filters it carries first, then the action's own fields
    query = "all=1&user_id=bob&status=valid&action=set_status&status=invalid"
    shown = curator_client.get(f"{BULK}?{query}")

    assert sorted(record.id for record, _ in shown.context["plan"].changes) == ["n0", "n1", "n2", "n5"]
    assert shown.context["list_url"] == reverse("memory:memory_list") + "?status=valid&user_id=bob"
    confirm(curator_client, shown)
    assert not agent_memory.list_memories(user_id="bob", status="valid", limit=None)


def test_all_without_filters_matches_the_whole_store_through_the_cursor(viewer_client, notes, monkeypatch):
    monkeypatch.setattr("memory.curation.bulk_plan.BATCH", 2)  # several pages of the engine's cursor
    response = preview(viewer_client, all="1")
    assert response.context["selected"] == 7


def test_a_bad_filter_in_all_mode_is_a_form_error(viewer_client, notes):
    response = preview(viewer_client, all="1", metadata_filter="{nope", action="delete")
    assert response.status_code == 400
    assert "Not valid JSON" in response.content.decode()


def test_more_than_the_limit_is_refused(viewer_client, notes, monkeypatch):
    monkeypatch.setattr("memory.views.bulk.MAX_SELECTION", 3)
    response = preview(viewer_client, all="1", action="delete")
    assert response.status_code == 400
    assert "more than 3 memories" in response.content.decode()


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ({"ids": "n0", "action": "explode"}, "action", "Select a valid choice"),
        ({"ids": "n0", "action": "set_metadata", "key": "source", "value": "chat"}, "value", "Not valid JSON"),
        ({"ids": "n0", "action": "set_metadata", "key": "source"}, "value", "Give the value to set"),
        ({"ids": "n0", "action": "set_metadata", "key": "k", "value": "NaN"}, "value", "NaN and Infinity"),
        ({"ids": "n0", "action": "set_metadata", "key": "k", "value": "1e400"}, "value", "NaN and Infinity"),
        ({"ids": "n0", "action": "set_metadata", "key": "k", "value": "[" * 40 + "]" * 40}, "value", "nested more"),
        ({"ids": "n0", "action": "set_metadata", "key": "k", "value": "1" + "0" * 38}, "value", "38 digits"),
        ({"ids": "n0", "action": "set_status"}, "status", "needs this"),
        ({"ids": "n0", "action": "set_type", "memory_type": "poem"}, "memory_type", "Select a valid choice"),
        ({"ids": "n0", "action": "mark_duplicates"}, "keep", "needs this"),
        ({"ids": "n0", "action": "mark_duplicates", "keep": "ghost"}, "keep", "names no memory"),
        ({"action": "delete"}, None, "No memories selected"),
    ],
)
def test_bad_input_is_a_form_error_and_changes_nothing(curator_client, notes, agent_memory, query, field, message):
    before = state(agent_memory)
    response = curator_client.get(BULK, query)
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert any(message in error for error in errors.get(field or "__all__", [])), errors
    assert "plan" not in response.context
    assert state(agent_memory) == before


def test_a_damaged_confirmation_is_refused(curator_client, notes):
    response = curator_client.post(BULK, {"action": "delete", "selection": "n0 one"})
    assert response.status_code == 400
    assert "damaged" in response.content.decode()


# --- confirming, and undoing in one step -------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "check"),
    [
        (
            {"action": "set_status", "status": "invalid"},
            lambda m: [m.get_memory(i).status for i in ("n0", "n1")] == ["invalid", "invalid"],
        ),
        (
            {"action": "set_metadata", "key": "review", "value": '{"status": "done"}'},
            lambda m: m.get_memory("n0").metadata == {"source": "chat", "n": 0, "review": {"status": "done"}},
        ),
        (
            {"action": "remove_metadata", "key": "source"},
            lambda m: m.get_memory("n1").metadata == {"n": 1},
        ),
        (
            {"action": "set_type", "memory_type": "preference"},
            lambda m: (
                m.get_memory("n5").record_type == "preference"
                and m.get_relation("rel-5-3").source_record_type == "preference"
            ),
        ),
        (
            {"action": "mark_duplicates", "keep": "n5"},
            lambda m: m.get_memory("n0").status == "invalid" and m.get_memory("n5").status == "valid",
        ),
        ({"action": "delete"}, lambda m: not m.list_memories(user_id="bob", limit=None)),
    ],
)
def test_every_action_is_made_as_one_bulk_change_and_undone_in_one_step(
    curator_client, notes, agent_memory, query, check
):
    before = state(agent_memory)
    shown = preview(curator_client, ids=notes, **query)

    done = confirm(curator_client, shown)

    change = BulkChange.objects.get()
    assert done.status_code == 302
    assert done["Location"] == reverse("memory:history_bulk", args=[change.pk])
    assert change.entries.count() == shown.context["plan"].count > 0
    assert check(agent_memory)
    page = curator_client.get(done["Location"]).content.decode()
    assert html.escape(change.summary) in page and "Undo all" in page

    asked = curator_client.get(reverse("memory:history_bulk_revert", args=[change.pk]))
    assert asked.status_code == 200
    undone = curator_client.post(reverse("memory:history_bulk_revert", args=[change.pk]))

    assert undone.status_code == 302
    assert state(agent_memory) == before  # content, status, metadata, types and links, exactly
    undo = BulkChange.objects.get(reverts=change)
    assert undone["Location"] == reverse("memory:history_bulk", args=[undo.pk])


def test_the_confirmation_touches_only_the_previewed_records(curator_client, notes, agent_memory):
    shown = preview(curator_client, all="1", user_id="bob", action="set_metadata", key="seen", value="true")
    agent_memory.add_memory("Bob likes maps.", memory_type="fact", memory_id="n6", user_id="bob")

    confirm(curator_client, shown)

    assert agent_memory.get_memory("n6").metadata is None
    assert agent_memory.get_memory("n0").metadata["seen"] is True


def test_a_record_changed_since_the_preview_shows_the_preview_again(curator_client, notes, agent_memory):
    shown = preview(curator_client, ids=["n0", "n1"], action="set_status", status="invalid")
    agent_memory.update_memory("n1", content="Bob likes aisle seats.")

    again = confirm(curator_client, shown)

    assert again.status_code == 409
    assert "changed or went since your preview" in again.content.decode()
    assert agent_memory.get_memory("n0").status == "valid"
    assert not BulkChange.objects.exists()
    assert confirm(curator_client, again).status_code == 302  # confirming what is shown now works
    assert agent_memory.get_memory("n1").status == "invalid"


def test_the_history_lists_a_bulk_change_as_one_row_with_its_count(curator_client, notes, agent_memory):
    confirm(curator_client, preview(curator_client, ids=notes, action="set_type", memory_type="memory"))
    change = BulkChange.objects.get()

    listing = curator_client.get(reverse("memory:history"))
    page = listing.content.decode()

    assert len(listing.context["entries"]) == 1
    assert "6 records" in page and html.escape(change.summary) in page
    narrowed = curator_client.get(reverse("memory:history"), {"object_id": "n2"}).context["entries"]
    assert [entry.object_id for entry in narrowed] == ["n2"]
    entry_page = curator_client.get(reverse("memory:history_entry", args=[narrowed[0].pk])).content.decode()
    assert f"bulk change {change.pk}" in entry_page
    assert reverse("memory:history_bulk", args=[change.pk]) in entry_page


def test_a_viewer_reads_a_bulk_change_but_cannot_undo_it(curator_client, viewer, notes, agent_memory, client):
    confirm(curator_client, preview(curator_client, ids=notes, action="delete"))
    change = BulkChange.objects.get()
    client.force_login(viewer)

    page = client.get(reverse("memory:history_bulk", args=[change.pk]))
    assert page.status_code == 200 and "Undo all" not in page.content.decode()
    assert client.get(reverse("memory:history_bulk_revert", args=[change.pk])).status_code == 403
    assert client.post(reverse("memory:history_bulk_revert", args=[change.pk])).status_code == 403
    assert not agent_memory.list_memories(user_id="bob", limit=None)


def test_a_bulk_change_is_undone_only_once(curator_client, notes):
    confirm(curator_client, preview(curator_client, ids=notes, action="set_status", status="invalid"))
    change = BulkChange.objects.get()
    url = reverse("memory:history_bulk_revert", args=[change.pk])
    curator_client.post(url)

    again = curator_client.post(url, follow=True)

    assert "already undone" in again.content.decode()
    assert BulkChange.objects.count() == 2
    assert CurationEntry.objects.filter(bulk__reverts=change).count() == 4


# --- messages of a thread ----------------------------------------------------------------------


@pytest.fixture
def world(agent_memory):
    from .world import build_world

    return build_world(agent_memory)


def message_url(world) -> str:
    return reverse("memory:message_bulk_delete", args=[world.thread_id])


def test_a_curator_ticks_messages_on_the_thread_page(curator_client, world):
    page = curator_client.get(reverse("memory:thread_detail", args=[world.thread_id])).content.decode()
    assert page.count('name="ids"') == 3 and 'form="message-bulk"' in page
    assert f'action="{message_url(world)}"' in page


def test_a_viewer_sees_no_message_checkboxes(viewer_client, world):
    page = viewer_client.get(reverse("memory:thread_detail", args=[world.thread_id])).content.decode()
    assert 'name="ids"' not in page and "message-bulk" not in page


def test_messages_are_deleted_together_and_come_back_in_one_step(curator_client, world, agent_memory):
    thread = agent_memory.get_thread(world.thread_id)
    before = [(m.id, m.content, m.seq_no) for m in agent_memory.list_thread_messages(world.thread_id)]
    shown = curator_client.get(message_url(world), {"ids": list(world.message_ids[:2])})
    page = shown.content.decode()
    assert shown.status_code == 200
    assert "Delete 2 messages of the thread?" in page and "<strong>1 image</strong>" in page

    done = confirm(curator_client, shown, url=message_url(world))

    change = BulkChange.objects.get()
    assert done["Location"] == reverse("memory:history_bulk", args=[change.pk])
    assert [m.id for m in thread.get_messages()] == [world.message_ids[2]]
    assert change.summary == "Deleted 2 messages" and change.entries.count() == 2
    curator_client.post(reverse("memory:history_bulk_revert", args=[change.pk]))
    assert [(m.id, m.content, m.seq_no) for m in agent_memory.list_thread_messages(world.thread_id)] == before
    assert agent_memory.get_image(world.photo_id)


def test_deleting_messages_is_for_curators(viewer_client, world, agent_memory):
    url = message_url(world)
    assert viewer_client.get(url, {"ids": world.message_ids[0]}).status_code == 403
    assert viewer_client.post(url, {"selection": f"{world.message_ids[0]} 1"}).status_code == 403
    assert len(agent_memory.get_thread(world.thread_id).get_messages()) == 3


@pytest.mark.parametrize(
    ("method", "data", "message"),
    [
        ("get", {}, "No messages selected"),
        ("post", {"selection": "m1 x"}, "damaged"),
    ],
)
def test_bad_message_selections_are_refused(curator_client, world, method, data, message):
    response = getattr(curator_client, method)(message_url(world), data)
    assert response.status_code == 400
    assert message in response.content.decode()


def test_a_message_edited_since_the_confirmation_page_is_shown_again(curator_client, world, agent_memory):
    shown = curator_client.get(message_url(world), {"ids": [world.message_ids[0], "not-a-message"]})
    assert shown.context["missing"] == ["not-a-message"]
    agent_memory.get_thread(world.thread_id).update_message(world.message_ids[0], content="Edited meanwhile.")

    again = curator_client.post(message_url(world), {"selection": shown.context["selection"]})

    assert again.status_code == 409
    assert len(agent_memory.get_thread(world.thread_id).get_messages()) == 3


def test_keys_values_and_contents_are_escaped_in_the_preview(viewer_client, agent_memory):
    agent_memory.add_memory("<script>alert(1)</script>", memory_id="evil", user_id="eve", autonomous_linking=False)
    page = preview(viewer_client, ids="evil", action="set_metadata", key="<b>k</b>", value='"<i>v</i>"')

    html_text = page.content.decode()
    assert "<script>alert(1)</script>" not in html_text and "&lt;script&gt;" in html_text
    assert "<b>k</b>" not in html_text and "&lt;b&gt;k&lt;/b&gt;" in html_text
    assert "<i>v</i>" not in html_text


def test_the_overview_shows_a_bulk_change_once_and_a_memory_page_its_part(curator_client, notes):
    confirm(curator_client, preview(curator_client, ids=notes, action="set_type", memory_type="memory"))
    change = BulkChange.objects.get()
    bulk_url = reverse("memory:history_bulk", args=[change.pk])

    overview = curator_client.get(reverse("memory:overview")).content.decode()
    memory_page = curator_client.get(reverse("memory:memory_detail", args=["n1"])).content.decode()

    assert overview.count(bulk_url) == 1 and html.escape(change.summary) in overview
    assert f'part of <a href="{bulk_url}">bulk change {change.pk}</a>' in memory_page


# --- what the page says, and what its chooser sends ---------------------------------------------


def test_the_chooser_does_not_send_the_filters_type_again_as_the_new_type(viewer_client, notes):
    # the chooser's form, as a person gets it after previewing with a type filter
    page = preview(viewer_client, all="1", user_id="bob", memory_type="fact", action="set_status", status="invalid")
    text = page.content.decode()
    chooser = text[text.index('id="bulk-chooser"') : text.index("</form>", text.index('id="bulk-chooser"'))]
    assert re.search(r'<option value="fact" selected>', chooser) is None  # "New type" is not pre-filled
    assert text.count("Type: fact") == 1  # the filter chip, once


def test_a_preview_url_leaves_out_the_empty_fields(viewer_client, notes):
    response = viewer_client.get(
        BULK, {"all": "1", "user_id": "bob", "action": "set_status", "status": "invalid", "key": "", "value": ""}
    )
    assert response.status_code == 302
    assert response["Location"] == f"{BULK}?all=1&user_id=bob&action=set_status&status=invalid"


def test_nothing_to_do_is_said_and_offers_no_confirmation(curator_client, notes):
    text = preview(curator_client, ids=["n0"], action="set_status", status="valid").content.decode()
    assert "Nothing to do: no memory would change." in text
    assert 'id="bulk-confirm"' not in text and "Set the status valid on 0" not in text


@pytest.mark.parametrize(
    ("query", "question"),
    [
        ({"action": "remove_metadata", "key": "n"}, "Remove the metadata key n from 2 memories?"),
        ({"action": "set_type", "memory_type": "preference"}, "Change 2 memories into preferences?"),
        ({"action": "delete"}, "Delete 2 memories?"),
    ],
)
def test_the_preview_asks_what_it_will_do(viewer_client, notes, query, question):
    text = preview(viewer_client, ids=["n0", "n1"], **query).content.decode()
    assert question in text


def test_no_status_box_when_no_memory_changes_status(viewer_client, notes):
    text = preview(viewer_client, ids=["n0", "n1"], action="remove_metadata", key="n").content.decode()
    assert "What this does to the memories' status" not in text
    assert "What this does to the memories' status" in (
        preview(viewer_client, ids=["n0"], action="set_status", status="invalid").content.decode()
    )


def test_the_undo_question_agrees_with_one_record(curator_client, notes, agent_memory):
    change = Curation(agent_memory, Actor(None)).resolve_contradiction(
        agent_memory.link_records("n0", "fact", "n1", "fact", "contradicts", relation_id="rel-0-1"), "n0"
    )
    text = curator_client.get(reverse("memory:history_bulk_revert", args=[change.pk])).content.decode()
    assert "The <strong>1 link</strong> it made is deleted again: the memory it retired becomes valid" in text
    assert "The <strong>1 link</strong> it deleted comes back." in text


def test_the_service_skips_a_memory_the_store_refuses_now_and_does_the_others(curator, notes, agent_memory):
    """Between the view's last check and the write (another process linked the pair): the store
    refuses that one link, the bulk change holds the others and says how many it skipped."""
    agent_memory.link_records("n0", "fact", "n2", "fact", "supports")
    chosen = [("n1", agent_memory.get_memory("n1").version), ("n2", agent_memory.get_memory("n2").version)]

    outcome = Curation(agent_memory, Actor(curator)).mark_duplicates("n0", chosen, "Marked 2 duplicates of n0")

    assert [memory_id for memory_id, _ in outcome.skipped] == ["n2"]
    assert outcome.change.summary == "Marked 2 duplicates of n0 (1 record skipped)"
    assert [entry.object_kind for entry in outcome.change.entries.all()] == ["link"]
    assert agent_memory.get_memory("n1").status == RecordStatus.INVALID
