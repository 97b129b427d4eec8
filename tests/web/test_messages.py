"""Messages: their page, editing (as a page and inline with htmx), deleting and restoring, and
adding an image to a thread."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.urls import reverse

from memory.models import CurationEntry

from .world import World, build_world, confirm_delete, png_bytes


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def urls(world: World, index: int = 0) -> dict[str, str]:
    args = [world.thread_id, world.message_ids[index]]
    return {name: reverse(f"memory:message_{name}", args=args) for name in ("detail", "edit", "delete")}


def edit(client, agent_memory, world, index=0, **changes):
    message = agent_memory.get_message_record(world.thread_id, world.message_ids[index])
    data = {
        "content": message.content,
        "role": message.role,
        "metadata": "",
        "timestamp": message.timestamp,
        "version": message.version,
        **changes,
    }
    return client.post(urls(world, index)["edit"], data)


def test_the_message_page_shows_it_with_its_details(viewer_client, world):
    html = viewer_client.get(urls(world)["detail"]).content.decode()

    assert "Find me a quiet hotel in Lisbon." in html
    assert "channel" in html and "web" in html


def test_an_edit_changes_content_role_metadata_and_timestamp(curator_client, world, agent_memory):
    response = edit(
        curator_client,
        agent_memory,
        world,
        content="I eat fish again.",
        role="system",
        metadata='{"channel": "mobile"}',
        timestamp="2026-01-02T03:04:05",
    )

    assert response.status_code == 302
    message = agent_memory.get_message_record(world.thread_id, world.message_ids[0])
    assert (message.content, message.role, message.metadata) == ("I eat fish again.", "system", {"channel": "mobile"})
    assert message.timestamp.startswith("2026-01-02T03:04:05")
    entry = CurationEntry.objects.get()
    assert entry.before["content"] == "I'm vegetarian. Find me a quiet hotel in Lisbon."
    assert entry.after["role"] == "system"


# --- roles: a closed set in the dashboard, the engine's any role still shown and kept ------------


def odd_role_message(agent_memory, world) -> str:
    """A message stored with a role that is none of the dashboard's (as an import or an agent may
    store one: the engine takes any role)."""
    [message_id] = agent_memory.get_thread(world.thread_id).add_messages([{"role": "assitant", "content": "Typo."}])
    return message_id


def edit_form(client, world, message_id):
    return client.get(reverse("memory:message_edit", args=[world.thread_id, message_id]))


def test_the_role_is_a_labelled_select_of_the_roles(curator_client, world):
    response = edit_form(curator_client, world, world.message_ids[0])

    field = response.context["form"]["role"]
    assert [value for value, _ in field.field.choices] == ["user", "assistant", "system", "tool"]
    html = response.content.decode()
    assert f'<label class="form-label fw-semibold small mb-1" for="{field.id_for_label}">Role</label>' in html
    assert f'<select name="role" class="form-select" id="{field.id_for_label}"' in html
    assert '<option value="assistant">assistant: the agent</option>' in html


@pytest.mark.parametrize("role", ["assitant", "User", "narrator"])
def test_a_role_that_is_not_one_of_the_roles_is_a_form_error(curator_client, world, agent_memory, role):
    before = agent_memory.get_message_record(world.thread_id, world.message_ids[0])

    response = edit(curator_client, agent_memory, world, role=role, content="Changed.")

    assert response.status_code == 400
    assert response.context["form"].errors["role"] == [
        f"\u201c{role}\u201d is not a message role: use user, assistant, system or tool."
    ]
    assert agent_memory.get_message_record(world.thread_id, world.message_ids[0]) == before
    assert CurationEntry.objects.count() == 0


def test_a_stored_role_that_is_none_of_them_shows_and_is_kept_by_an_edit(curator_client, world, agent_memory):
    message_id = odd_role_message(agent_memory, world)
    thread_page = curator_client.get(reverse("memory:thread_detail", args=[world.thread_id]))
    assert thread_page.status_code == 200 and "assitant" in thread_page.content.decode()

    form = edit_form(curator_client, world, message_id)
    assert form.status_code == 200
    assert '<option value="assitant" selected>assitant (as stored; not one of the roles)</option>' in (
        form.content.decode()
    )
    assert "is not one of the roles: choose one to correct it" in form.content.decode()

    world = replace(world, message_ids=(*world.message_ids, message_id))
    assert edit(curator_client, agent_memory, world, index=-1, content="Typo, fixed.").status_code == 302
    message = agent_memory.get_message_record(world.thread_id, message_id)
    assert (message.content, message.role) == ("Typo, fixed.", "assitant")

    refused = edit(curator_client, agent_memory, world, index=-1, role="asistant")
    assert refused.status_code == 400 and "role" in refused.context["form"].errors
    assert edit(curator_client, agent_memory, world, index=-1, role="assistant").status_code == 302
    assert agent_memory.get_message_record(world.thread_id, message_id).role == "assistant"
    assert '<option value="assitant"' not in edit_form(curator_client, world, message_id).content.decode()


def test_search_finds_the_new_text_and_no_longer_the_old(curator_client, world, agent_memory):
    def found(query: str) -> bool:
        """Whether some message matches the query's words (the vector half always ranks something)."""
        hits = agent_memory.search(query, user_id="alice", record_types=["message"])
        return any(hit.scores.get("keyword_rank") is not None for hit in hits)

    assert found("quiet hotel Lisbon")

    edit(curator_client, agent_memory, world, content="Recommend a jazz bar in Copenhagen.")

    assert found("jazz bar Copenhagen")
    assert not found("quiet hotel Lisbon")


def test_editing_the_text_of_a_message_with_an_image_keeps_the_image(curator_client, world, agent_memory):
    edit(curator_client, agent_memory, world, index=1, content="The street, again.")

    message = agent_memory.get_message_record(world.thread_id, world.message_ids[1])
    assert message.content == "The street, again."
    assert [part["type"] for part in message.parts] == ["text", "image"]
    assert agent_memory.get_image(world.photo_id, include_bytes=True).bytes == png_bytes("blue")


def test_the_inline_editor_swaps_in_a_form_and_then_the_updated_message(curator_client, world, agent_memory):
    form = curator_client.get(urls(world)["edit"], HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in form
    assert 'hx-post="' + urls(world)["edit"] in form

    message = agent_memory.get_message_record(world.thread_id, world.message_ids[0])
    response = curator_client.post(
        urls(world)["edit"],
        {"content": "Inline edit.", "role": "user", "metadata": "", "timestamp": "", "version": message.version},
        HTTP_HX_REQUEST="true",
    )

    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html
    assert "Inline edit." in html
    assert 'class="oam-message card' in html


def test_an_inline_edit_with_bad_metadata_returns_the_form_with_the_error(curator_client, world, agent_memory):
    message = agent_memory.get_message_record(world.thread_id, world.message_ids[0])

    response = curator_client.post(
        urls(world)["edit"],
        {"content": "x", "role": "user", "metadata": "{bad", "timestamp": "", "version": message.version},
        HTTP_HX_REQUEST="true",
    )

    assert response.status_code == 400
    assert "Not valid JSON" in response.content.decode()
    assert agent_memory.get_message_record(world.thread_id, world.message_ids[0]).content == message.content


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"role": ""}, "role", "This field is required"),
        ({"timestamp": "yesterday"}, "timestamp", "ISO-8601"),
        ({"timestamp": "10000-01-01T00:00:00"}, "timestamp", "ISO-8601"),
        ({"metadata": "[1]"}, "metadata", "JSON object"),
        ({"content": "x" * 1_000_001}, "content", "the limit is 1,000,000"),
    ],
)
def test_bad_input_is_a_form_error_and_nothing_is_stored(curator_client, world, agent_memory, changes, field, message):
    before = agent_memory.get_message_record(world.thread_id, world.message_ids[0])

    response = edit(curator_client, agent_memory, world, **changes)

    assert response.status_code == 400
    assert response.context["form"].errors[field]
    assert message in response.content.decode()
    assert agent_memory.get_message_record(world.thread_id, world.message_ids[0]) == before


def test_a_message_changed_meanwhile_is_not_overwritten(curator_client, world, agent_memory):
    opened = agent_memory.get_message_record(world.thread_id, world.message_ids[0]).version
    agent_memory.get_thread(world.thread_id).update_message(world.message_ids[0], content="Someone else's words.")

    response = edit(curator_client, agent_memory, world, content="Mine.", version=opened)

    assert response.status_code == 409
    assert "Someone else&#x27;s words." in response.content.decode()
    assert agent_memory.get_message_record(world.thread_id, world.message_ids[0]).content == "Someone else's words."


def test_a_message_of_another_thread_is_not_found_here(viewer_client, world, agent_memory):
    agent_memory.create_thread(thread_id="other", user_id="alice", agent_id="atlas")

    response = viewer_client.get(reverse("memory:message_detail", args=["other", world.message_ids[0]]))

    assert response.status_code == 404


def test_deleting_a_message_confirms_then_deletes_and_restores_in_place(curator_client, world, agent_memory):
    confirmation = curator_client.get(urls(world, 1)["delete"]).content.decode()
    assert "1 image" in confirmation
    assert "Memories extracted from it stay" in confirmation
    seq_no = agent_memory.get_message_record(world.thread_id, world.message_ids[1]).seq_no

    assert confirm_delete(curator_client, urls(world, 1)["delete"]).status_code == 302
    assert curator_client.get(urls(world, 1)["detail"]).status_code == 404
    with pytest.raises(KeyError):
        agent_memory.get_image(world.photo_id)

    entry = CurationEntry.objects.get(action="delete")
    curator_client.post(reverse("memory:history_revert", args=[entry.pk]))

    restored = agent_memory.get_message_record(world.thread_id, world.message_ids[1])
    assert restored.seq_no == seq_no
    timeline = agent_memory.list_thread_messages(world.thread_id)
    assert [m.id for m in timeline] == list(world.message_ids)
    assert agent_memory.get_image(world.photo_id, include_bytes=True).bytes == png_bytes("blue")


# --- adding an image ---------------------------------------------------------------------------


def upload(client, world, **fields):
    from django.core.files.uploadedfile import SimpleUploadedFile

    data = {"add_as": "message", "role": "user", "description": "", "text": "", **fields}
    data.setdefault("image", SimpleUploadedFile("photo.png", png_bytes("yellow"), content_type="image/png"))
    return client.post(reverse("memory:image_add", args=[world.thread_id]), data)


def test_an_image_message_with_a_role_that_is_not_one_of_the_roles_is_a_form_error(curator_client, world, agent_memory):
    count = agent_memory.store.count_thread_messages(world.thread_id)

    response = upload(curator_client, world, role="assitant", text="Look at this")

    assert response.status_code == 400
    assert response.context["form"].errors["role"] == [
        "\u201cassitant\u201d is not a message role: use user, assistant, system or tool."
    ]
    assert '<select name="role" class="form-select is-invalid"' in response.content.decode()
    assert agent_memory.store.count_thread_messages(world.thread_id) == count
    assert CurationEntry.objects.count() == 0


def test_an_image_is_added_as_a_new_message(curator_client, world, agent_memory):
    response = upload(curator_client, world, text="Look at this", description="A yellow square")

    assert response.status_code == 302
    [last] = agent_memory.list_thread_messages(world.thread_id, start=3)
    assert last.content == "Look at this"
    image_id = last.parts[1]["id"]
    assert agent_memory.get_image(image_id).content == "A yellow square"
    assert CurationEntry.objects.get().object_kind == "message"


def test_an_image_is_added_as_a_standalone_record(curator_client, world, agent_memory):
    upload(curator_client, world, add_as="image", description="Another map")

    images = agent_memory.list_images(thread_id=world.thread_id)
    assert "Another map" in [image.content for image in images]
    assert agent_memory.get_thread_record(world.thread_id).message_count == 3


def test_a_file_that_is_not_an_image_is_refused_with_the_engines_reason(curator_client, world, agent_memory):
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = upload(
        curator_client, world, image=SimpleUploadedFile("x.png", b"not an image", content_type="image/png")
    )

    assert response.status_code == 400
    assert response.context["form"].errors["image"]
    assert agent_memory.get_thread_record(world.thread_id).message_count == 3


def test_an_inline_edit_of_a_message_changed_meanwhile_returns_the_form_fragment(curator_client, world, agent_memory):
    opened = agent_memory.get_message_record(world.thread_id, world.message_ids[0]).version
    agent_memory.get_thread(world.thread_id).update_message(world.message_ids[0], content="Changed elsewhere.")

    response = curator_client.post(
        urls(world)["edit"],
        {"content": "Mine.", "role": "user", "metadata": "", "timestamp": "", "version": opened},
        HTTP_HX_REQUEST="true",
    )

    html = response.content.decode()
    assert response.status_code == 409
    assert "<html" not in html
    assert "changed since you opened it" in html


def test_an_inline_edit_of_a_message_deleted_meanwhile_replaces_the_page_content(curator_client, world, agent_memory):
    opened = agent_memory.get_message_record(world.thread_id, world.message_ids[0]).version
    agent_memory.get_thread(world.thread_id).delete_message(world.message_ids[0])

    response = curator_client.post(
        urls(world)["edit"],
        {"content": "Mine.", "role": "user", "metadata": "", "timestamp": "", "version": opened},
        HTTP_HX_REQUEST="true",
    )

    assert response.status_code == 404
    assert (response["HX-Retarget"], response["HX-Reswap"], response["HX-Reselect"]) == ("#main", "outerHTML", "#main")


def test_deleting_a_message_inline_confirms_in_place_then_leaves_a_way_back(curator_client, world, agent_memory):
    confirmation = curator_client.get(urls(world)["delete"], HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in confirmation
    assert "Delete the message" in confirmation

    notice = confirm_delete(curator_client, urls(world)["delete"], HTTP_HX_REQUEST="true").content.decode()

    entry = CurationEntry.objects.get(action="delete")
    assert "Deleted message #1" in notice
    assert reverse("memory:history_entry", args=[entry.pk]) in notice
    with pytest.raises(KeyError):
        agent_memory.get_message_record(world.thread_id, world.message_ids[0])
