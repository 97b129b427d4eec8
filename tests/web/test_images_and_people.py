"""Images (page, bytes, edit, delete) and users and agents (lists, pages, profiles, cascades)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.models import CurationEntry

from .world import World, build_world, confirm_delete, png_bytes


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def test_the_image_bytes_come_with_their_stored_type_and_are_never_sniffed(viewer_client, world):
    response = viewer_client.get(reverse("memory:image_raw", args=[world.image_id]))

    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in response["Content-Security-Policy"]
    assert response.content == png_bytes("red")


def test_the_image_page_shows_its_description_scope_and_owner(viewer_client, world):
    html = viewer_client.get(reverse("memory:image_detail", args=[world.photo_id])).content.decode()

    assert "A tiled street in Alfama" in html
    assert reverse("memory:message_detail", args=[world.thread_id, world.message_ids[1]]) in html
    assert "goes with it" in html


def test_without_an_llm_there_is_no_describe_again_button(curator_client, world):
    html = curator_client.get(reverse("memory:image_detail", args=[world.image_id])).content.decode()

    assert "Describe again" not in html
    response = curator_client.post(reverse("memory:image_describe", args=[world.image_id]), follow=True)
    assert "needs an LLM" in response.content.decode()


def test_a_curator_edits_an_images_description_and_metadata(curator_client, world, agent_memory):
    image = agent_memory.get_image(world.image_id)

    response = curator_client.post(
        reverse("memory:image_edit", args=[world.image_id]),
        {"description": "A map of Porto", "metadata": '{"source": "scan"}', "version": image.version},
    )

    assert response.status_code == 302
    image = agent_memory.get_image(world.image_id)
    assert (image.content, image.metadata) == ("A map of Porto", {"source": "scan"})
    assert agent_memory.search("Porto map", user_id="alice", record_types=["image"])[0].record.id == world.image_id


def test_a_standalone_image_is_deleted_and_restored_with_its_bytes(curator_client, world, agent_memory):
    confirm_delete(curator_client, reverse("memory:image_delete", args=[world.image_id]))
    assert curator_client.get(reverse("memory:image_raw", args=[world.image_id])).status_code == 404

    curator_client.post(reverse("memory:history_revert", args=[CurationEntry.objects.get(action="delete").pk]))

    assert agent_memory.get_image(world.image_id, include_bytes=True).bytes == png_bytes("red")


def test_an_image_of_a_message_goes_only_with_its_message(curator_client, world, agent_memory):
    response = confirm_delete(curator_client, reverse("memory:image_delete", args=[world.photo_id]), follow=True)

    assert "edit or delete the message instead" in response.content.decode()
    assert agent_memory.get_image(world.photo_id)


# --- users and agents --------------------------------------------------------------------------


def test_the_user_list_shows_profiles_and_what_each_owns(viewer_client, world, agent_memory):
    agent_memory.add_memory("Bob is tall.", memory_type="fact", user_id="bob", autonomous_linking=False)

    response = viewer_client.get(reverse("memory:user_list"))

    rows = {profile.id: counts for profile, counts in response.context["rows"]}
    assert rows["alice"] == {"threads": 1, "messages": 3, "memories": 2}
    assert rows["bob"]["memories"] == 1
    assert "a vegetarian who travels by train" in response.content.decode()


def test_the_agent_page_counts_and_lists_its_threads_and_memories(viewer_client, world):
    response = viewer_client.get(reverse("memory:agent_detail", args=["atlas"]))

    html = response.content.decode()
    assert "Atlas, a travel assistant." in html
    assert reverse("memory:thread_detail", args=[world.thread_id]) in html
    assert "Alice is vegetarian." in html
    assert response.context["stats"].threads == 1


def test_an_unknown_user_is_a_404(viewer_client, world):
    assert viewer_client.get(reverse("memory:user_detail", args=["nobody"])).status_code == 404


def test_a_curator_edits_a_profile_and_a_stale_edit_is_refused(curator_client, world, agent_memory):
    url = reverse("memory:user_edit", args=["alice"])
    version = agent_memory.get_user("alice").version

    assert curator_client.post(url, {"information": "Alice, vegan now.", "version": version}).status_code == 302
    assert agent_memory.get_user("alice").content == "Alice, vegan now."

    response = curator_client.post(url, {"information": "Stale.", "version": version})
    assert response.status_code == 409
    assert agent_memory.get_user("alice").content == "Alice, vegan now."


def test_a_profile_is_written_for_an_owner_without_one(curator_client, agent_memory):
    agent_memory.add_memory("Dan likes jazz.", memory_type="fact", user_id="dan", autonomous_linking=False)

    curator_client.post(reverse("memory:user_edit", args=["dan"]), {"information": "Dan, a musician.", "version": 0})

    assert agent_memory.get_user("dan").content == "Dan, a musician."
    assert CurationEntry.objects.get().action == "create"


def test_deleting_a_user_counts_the_cascade_then_takes_and_restores_it_all(curator_client, world, agent_memory):
    html = curator_client.get(reverse("memory:user_delete", args=["alice"])).content.decode()
    assert "1 thread" in html and "3 messages" in html and "2 memories" in html and "2 images" in html

    curator_client.post(reverse("memory:user_delete", args=["alice"]))

    assert agent_memory.stats(user_id="alice").threads == 0
    with pytest.raises(KeyError):
        agent_memory.get_user("alice")

    curator_client.post(reverse("memory:history_revert", args=[CurationEntry.objects.get(action="delete").pk]))

    assert agent_memory.get_user("alice").content.startswith("Alice")
    assert agent_memory.get_thread_record(world.thread_id).message_count == 3
    assert agent_memory.get_memory(world.old_fact_id).status == "invalid"


def test_a_profile_edit_of_a_user_deleted_meanwhile_is_a_404(curator_client, world, agent_memory):
    version = agent_memory.get_user("alice").version
    agent_memory.delete_user("alice")

    response = curator_client.post(
        reverse("memory:user_edit", args=["alice"]), {"information": "x", "version": version}
    )

    assert response.status_code == 404
    assert "Its history" in response.content.decode()


def test_deleting_an_unknown_user_is_a_404_and_records_nothing(curator_client, world):
    assert curator_client.get(reverse("memory:user_delete", args=["nobody"])).status_code == 404
    assert curator_client.post(reverse("memory:user_delete", args=["nobody"])).status_code == 404
    assert not CurationEntry.objects.exists()


def test_two_people_writing_a_first_profile_cannot_both_succeed(curator_client, world, agent_memory):
    agent_memory.add_memory("Eve likes chess.", memory_type="fact", user_id="eve", autonomous_linking=False)
    url = reverse("memory:user_edit", args=["eve"])

    assert curator_client.post(url, {"information": "Eve, first.", "version": 0}).status_code == 302
    response = curator_client.post(url, {"information": "Eve, second.", "version": 0})

    assert response.status_code == 409
    assert agent_memory.get_user("eve").content == "Eve, first."


def test_a_profile_post_without_a_version_is_refused(curator_client, world, agent_memory):
    response = curator_client.post(reverse("memory:user_edit", args=["alice"]), {"information": "No version."})

    assert response.status_code == 400
    assert agent_memory.get_user("alice").content.startswith("Alice, a vegetarian")


def test_an_upload_error_lands_on_the_field_it_names(curator_client, world, agent_memory):
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = curator_client.post(
        reverse("memory:image_add", args=[world.thread_id]),
        {
            "image": SimpleUploadedFile("p.png", png_bytes(), content_type="image/png"),
            "add_as": "message",
            "role": "x" * 600,
            "description": "",
            "text": "",
        },
    )

    assert response.status_code == 400
    assert "role" in response.context["form"].errors
