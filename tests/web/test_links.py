"""Link curation: create, retype and delete links, each after the page says what it does to the
memories' status; every change recorded and revertible."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.curation import Actor, Curation
from memory.models import CurationEntry
from memory.views.common import memory_words

from .world import World, build_world, confirm_delete

CREATE = reverse("memory:link_create")


@pytest.fixture
def world(agent_memory) -> World:
    world = build_world(agent_memory)
    agent_memory.add_memory(
        "Alice avoids meat.", memory_type="fact", memory_id="fact-new", user_id="alice", autonomous_linking=False
    )
    return world


def status(agent_memory, memory_id: str) -> str:
    return agent_memory.get_memory(memory_id).status.value


def confirmed(client, url: str, fields: dict):
    """Post the fields, then confirm the preview they got (when the page showed one)."""
    response = client.post(url, fields)
    digest = response.context and response.context.get("preview")
    return client.post(url, {**fields, "confirm": digest}) if digest else response


def test_the_form_takes_its_source_from_the_query_and_shows_it_by_content(curator_client, world, agent_memory):
    response = curator_client.get(CREATE, {"source_record_id": world.fact_id})

    assert response.context["form"].initial["source_record_id"] == world.fact_id
    assert agent_memory.get_memory(world.fact_id).content in response.content.decode()


def test_the_ends_of_a_link_are_shown_by_content(curator_client, world, agent_memory):
    refused = curator_client.post(
        CREATE, {"source_record_id": "fact-new", "target_record_id": "nothing-here", "relation_type": "supports"}
    )
    deletion = curator_client.get(reverse("memory:link_delete", args=[world.link_id])).content.decode()

    assert refused.status_code == 400
    assert "names no memory" in refused.context["form"].errors["target_record_id"][0]
    assert "Alice avoids meat." in refused.content.decode()  # the source, still shown by its content
    assert agent_memory.get_memory(world.fact_id).content in deletion
    assert agent_memory.get_memory(world.old_fact_id).content in deletion


def test_a_supersedes_link_is_previewed_then_made_and_retires_its_target(curator_client, world, agent_memory):
    fields = {
        "source_record_id": "fact-new",
        "target_record_id": world.fact_id,
        "relation_type": "supersedes",
        "metadata": "",
    }

    preview = curator_client.post(CREATE, fields)
    assert preview.status_code == 200
    assert "will become <strong>invalid</strong>" in preview.content.decode()
    assert status(agent_memory, world.fact_id) == "valid"  # nothing made yet

    response = curator_client.post(CREATE, {**fields, "confirm": preview.context["preview"]})

    assert response.status_code == 302
    assert status(agent_memory, world.fact_id) == "invalid"
    entry = CurationEntry.objects.get()
    assert (entry.object_kind, entry.action) == ("link", "link")
    assert entry.after["relation_type"] == "supersedes"


def test_a_field_changed_after_the_preview_is_previewed_again(curator_client, world, agent_memory):
    fields = {"source_record_id": "fact-new", "target_record_id": world.fact_id, "relation_type": "supports"}
    preview = curator_client.post(CREATE, fields)
    assert "No memory changes status." in preview.content.decode()

    changed = curator_client.post(
        CREATE, {**fields, "relation_type": "supersedes", "confirm": preview.context["preview"]}
    )

    assert changed.status_code == 200
    assert "will become <strong>invalid</strong>" in changed.content.decode()
    assert not agent_memory.list_relations(record_id="fact-new")
    assert status(agent_memory, world.fact_id) == "valid"


def test_undoing_a_link_deletes_it_and_the_target_is_valid_again(curator_client, world, agent_memory):
    fields = {"source_record_id": "fact-new", "target_record_id": world.fact_id, "relation_type": "duplicates"}
    confirmed(curator_client, CREATE, fields)

    curator_client.post(reverse("memory:history_revert", args=[CurationEntry.objects.get().pk]))

    assert status(agent_memory, world.fact_id) == "valid"
    assert not [link for link in agent_memory.list_relations(record_id="fact-new")]


def test_a_custom_label_reads_back_with_its_opposite(curator_client, world, agent_memory):
    fields = {
        "source_record_id": "fact-new",
        "target_record_id": world.fact_id,
        "relation_type": "inspired",
        "opposite_relation_type": "inspired_by",
    }
    confirmed(curator_client, CREATE, fields)

    [link] = agent_memory.list_relations(record_id="fact-new")
    assert (link.relation_type, link.opposite_relation_type) == ("inspired", "inspired_by")
    assert status(agent_memory, world.fact_id) == "valid"
    html = curator_client.get(reverse("memory:memory_detail", args=[world.fact_id])).content.decode()
    assert "<code>inspired_by</code>" in html


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"source_record_id": "nope", "target_record_id": "fact-new"}, "source_record_id", "names no memory"),
        ({"source_record_id": "fact-new", "target_record_id": "fact-new"}, "target_record_id", "itself"),
        ({"source_record_id": "fact-old", "target_record_id": "fact-vegetarian"}, "target_record_id", "already linked"),
        (
            {"source_record_id": "fact-new", "target_record_id": "fact-old", "opposite_relation_type": "x"},
            None,
            "built in",
        ),
        (
            {"source_record_id": "fact-new", "target_record_id": "fact-old", "relation_type": "Supersedes"},
            "relation_type",
            "lower case",
        ),
        (
            {"source_record_id": "fact-new", "target_record_id": "fact-old", "relation_type": "is_superseded_by"},
            "relation_type",
            "from the other memory",
        ),
        ({"source_record_id": "fact-new", "target_record_id": ""}, "target_record_id", "required"),
        (
            {"source_record_id": "fact-new", "target_record_id": "fact-old", "relation_type": ""},
            "relation_type",
            "required",
        ),
    ],
)
def test_bad_links_are_form_errors_before_any_preview(curator_client, world, agent_memory, fields, field, message):
    """Refused when first posted: the preview never promises a link its confirmation refuses."""
    before = len(agent_memory.list_relations())

    response = curator_client.post(CREATE, {"relation_type": "supports", **fields})

    assert response.status_code == 400
    assert message in response.content.decode()
    if field:
        assert field in response.context["form"].errors
    assert len(agent_memory.list_relations()) == before
    assert not CurationEntry.objects.exists()


def test_retyping_a_link_says_the_target_comes_back_then_does_it(curator_client, world, agent_memory):
    url = reverse("memory:link_edit", args=[world.link_id])
    version = agent_memory.get_relation(world.link_id).version
    fields = {"relation_type": "supports", "opposite_relation_type": "", "metadata": "", "version": version}

    preview = curator_client.post(url, fields)
    assert "will become <strong>valid</strong> again" in preview.content.decode()
    assert status(agent_memory, world.old_fact_id) == "invalid"

    curator_client.post(url, {**fields, "confirm": preview.context["preview"]})

    assert agent_memory.get_relation(world.link_id).relation_type == "supports"
    assert status(agent_memory, world.old_fact_id) == "valid"
    entry = CurationEntry.objects.get()
    curator_client.post(reverse("memory:history_revert", args=[entry.pk]))
    assert agent_memory.get_relation(world.link_id).relation_type == "supersedes"
    assert status(agent_memory, world.old_fact_id) == "invalid"


def test_retyping_to_a_label_of_ones_own_reads_the_same_both_ways_unless_told(curator_client, world, agent_memory):
    url = reverse("memory:link_edit", args=[world.link_id])
    form = curator_client.get(url).context["form"]
    assert form["opposite_relation_type"].value() == ""  # not the built-in's fixed opposite

    fields = {
        "relation_type": "related",
        "opposite_relation_type": "",
        "metadata": "",
        "version": form.initial["version"],
    }
    confirmed(curator_client, url, fields)
    link = agent_memory.get_relation(world.link_id)
    assert (link.relation_type, link.opposite_relation_type) == ("related", "related")

    confirmed(curator_client, url, {**fields, "opposite_relation_type": "relates_back", "version": link.version})
    assert agent_memory.get_relation(world.link_id).opposite_relation_type == "relates_back"


def test_a_links_metadata_is_saved_without_a_preview(curator_client, world, agent_memory):
    relation = agent_memory.get_relation(world.link_id)

    response = curator_client.post(
        reverse("memory:link_edit", args=[world.link_id]),
        {
            "relation_type": "supersedes",
            "opposite_relation_type": "is_superseded_by",
            "metadata": '{"why": "diet"}',
            "version": relation.version,
        },
    )

    assert response.status_code == 302
    assert agent_memory.get_relation(world.link_id).metadata == {"why": "diet"}


def test_a_link_changed_meanwhile_is_not_overwritten(curator_client, world, agent_memory):
    opened = agent_memory.get_relation(world.link_id).version
    agent_memory.update_record_link(world.link_id, metadata={"by": "someone else"})

    response = curator_client.post(
        reverse("memory:link_edit", args=[world.link_id]),
        {"relation_type": "supersedes", "opposite_relation_type": "", "metadata": '{"by": "me"}', "version": opened},
    )

    assert response.status_code == 409
    assert agent_memory.get_relation(world.link_id).metadata == {"by": "someone else"}


def test_deleting_a_link_says_what_comes_back_and_can_be_undone(curator_client, world, agent_memory):
    url = reverse("memory:link_delete", args=[world.link_id])

    confirmation = curator_client.get(url).content.decode()
    assert "will become <strong>valid</strong> again" in confirmation

    confirm_delete(curator_client, url)
    assert status(agent_memory, world.old_fact_id) == "valid"
    assert curator_client.get(url).status_code == 404

    curator_client.post(reverse("memory:history_revert", args=[CurationEntry.objects.get().pk]))
    assert agent_memory.get_relation(world.link_id).relation_type == "supersedes"
    assert status(agent_memory, world.old_fact_id) == "invalid"


def test_a_link_to_a_deleted_memory_cannot_come_back(curator_client, world, agent_memory):
    confirm_delete(curator_client, reverse("memory:link_delete", args=[world.link_id]))
    agent_memory.delete_memory(world.old_fact_id)

    response = curator_client.post(reverse("memory:history_revert", args=[CurationEntry.objects.get().pk]), follow=True)

    assert "cannot come back" in response.content.decode()


def test_memory_picks_suggest_memories_by_text_escaped(viewer_client, world, agent_memory):
    agent_memory.add_memory('Alice <b>"x"</b>', memory_type="fact", autonomous_linking=False)

    html = viewer_client.get(reverse("memory:memory_picks"), {"source_record_id": "alice"}).content.decode()

    assert 'value="fact-vegetarian"' in html
    assert "&lt;b&gt;&quot;x&quot;&lt;/b&gt;" in html


def test_the_memory_page_offers_link_actions_to_curators_only(curator_client, viewer, world):
    from django.test import Client

    url = reverse("memory:memory_detail", args=[world.fact_id])
    edit = reverse("memory:link_edit", args=[world.link_id])
    reader = Client()
    reader.force_login(viewer)

    assert edit in curator_client.get(url).content.decode()
    assert edit not in reader.get(url).content.decode()


def test_a_memorys_history_lists_the_changes_of_its_links(curator_client, world, agent_memory):
    fields = {"source_record_id": "fact-new", "target_record_id": world.fact_id, "relation_type": "supersedes"}
    confirmed(curator_client, CREATE, fields)
    [link] = agent_memory.list_relations(record_id="fact-new")
    confirm_delete(curator_client, reverse("memory:link_delete", args=[link.id]))
    unlink = CurationEntry.objects.get(action="unlink")
    curator_client.post(reverse("memory:history_revert", args=[unlink.pk]))

    for memory_id in ("fact-new", world.fact_id):
        history = curator_client.get(reverse("memory:memory_detail", args=[memory_id])).context["history"]
        assert [entry.action for entry in history] == ["restore", "unlink", "link"]
    other = curator_client.get(reverse("memory:memory_detail", args=[world.old_fact_id])).context["history"]
    assert not other  # its own link was not touched


def test_undoing_a_link_change_says_first_what_it_does_to_the_memories(curator_client, world, agent_memory):
    confirm_delete(curator_client, reverse("memory:link_delete", args=[world.link_id]))
    unlink = CurationEntry.objects.get()

    restore_page = curator_client.get(reverse("memory:history_revert", args=[unlink.pk])).content.decode()
    assert "Alice used to eat fish." in restore_page and "will become <strong>invalid</strong>" in restore_page

    curator_client.post(reverse("memory:history_revert", args=[unlink.pk]))
    restore = CurationEntry.objects.get(action="restore")
    delete_again = curator_client.get(reverse("memory:history_revert", args=[restore.pk])).content.decode()
    assert "will become <strong>valid</strong> again" in delete_again


def test_a_link_change_comes_back_to_the_page_it_was_made_from(curator_client, world, agent_memory):
    graph = reverse("memory:graph") + "?user_id=alice"
    fields = {"source_record_id": "fact-new", "target_record_id": world.fact_id, "relation_type": "supports"}
    preview = curator_client.post(f"{CREATE}?next={graph}", {**fields, "next": graph})
    made = curator_client.post(CREATE, {**fields, "next": graph, "confirm": preview.context["preview"]})
    assert made.status_code == 302 and made.url == graph

    [link] = agent_memory.list_relations(record_id="fact-new")
    page = reverse("memory:memory_detail", args=[world.fact_id])
    assert f"{reverse('memory:link_delete', args=[link.id])}?next={page}" in (curator_client.get(page).content.decode())
    deleted = confirm_delete(curator_client, reverse("memory:link_delete", args=[link.id]), {"next": page})
    assert deleted.url == page

    elsewhere = confirm_delete(
        curator_client, reverse("memory:link_delete", args=[world.link_id]), {"next": "https://evil.example/"}
    )
    assert elsewhere.url == reverse("memory:memory_detail", args=[world.fact_id])  # not off the site


# --- ids in history summaries and messages: the one rule of memory.text.short_id ---------------

SOURCE_UUID = "0f8fad5b-d9cb-469f-a165-70867728950e"
TARGET_UUID = "7c9e6679-7425-40de-944b-e07fc1f90ae7"


def test_a_link_summary_names_uuid_ends_by_their_first_8_characters(world, agent_memory, curator):
    for memory_id in (SOURCE_UUID, TARGET_UUID):
        agent_memory.add_memory(
            "A memory with a UUID.", memory_type="fact", memory_id=memory_id, user_id="alice", autonomous_linking=False
        )

    entry = Curation(agent_memory, Actor(curator)).create_link(
        source_record_id=SOURCE_UUID, target_record_id=TARGET_UUID, relation_type="supports"
    )

    assert entry.summary == "Linked 0f8fad5b… supports 7c9e6679…"
    assert CurationEntry.objects.get(pk=entry.pk).summary == entry.summary


def test_a_link_summary_names_made_up_ids_whole(world, agent_memory, curator):
    entry = Curation(agent_memory, Actor(curator)).create_link(
        source_record_id="fact-new", target_record_id=world.fact_id, relation_type="refines"
    )

    assert entry.summary == "Linked fact-new refines fact-vegetarian"


def test_a_memory_that_is_gone_is_named_by_its_short_id(world, agent_memory):
    assert memory_words(TARGET_UUID) == "7c9e6679… (no memory now)"
    assert memory_words("fact-gone") == "fact-gone (no memory now)"
    assert memory_words(world.fact_id) == f"“{agent_memory.get_memory(world.fact_id).content}”"
