"""A user's and an agent's page list the changes to everything they own (their profile, threads,
messages, memories, images and the links that join their memories), and the history page filters
by owner (issue 29)."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.urls import reverse

from memory.curation import Actor, Curation
from memory.models import CurationEntry, HistoryOwner

from .world import World, build_world


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


@pytest.fixture
def curation(agent_memory, curator) -> Curation:
    return Curation(agent_memory, Actor(curator))


def page_history(client, kind: str, owner_id: str) -> list[CurationEntry]:
    response = client.get(reverse(f"memory:{kind}_detail", args=[owner_id]))
    assert response.status_code == 200
    return list(response.context["history"])


def changes_to_everything_alice_owns(curation: Curation, agent_memory, world: World) -> dict[str, CurationEntry]:
    """One change of each kind of thing alice owns, and a memory of bob's linked to one of hers."""
    fact = agent_memory.get_memory(world.fact_id)
    image = agent_memory.get_image(world.image_id)
    thread = agent_memory.get_thread_record(world.thread_id)
    message = agent_memory.get_message_record(world.thread_id, world.message_ids[0])
    agent_memory.add_memory("Bob likes fish.", memory_type="fact", memory_id="bob-fish", user_id="bob")
    return {
        "memory": curation.update_memory(world.fact_id, version=fact.version, content="Alice is vegan."),
        "image": curation.update_image(world.image_id, version=image.version, description="A map of Porto"),
        "thread": curation.update_thread(world.thread_id, version=thread.version, metadata={"topic": "trains"}),
        "message": curation.update_message(
            world.thread_id, message.id, version=message.version, content="Find me a quiet hotel."
        ),
        "link": curation.create_link(
            source_record_id="bob-fish", target_record_id=world.old_fact_id, relation_type="contradicts"
        ),
        "unlink": curation.delete_link(world.link_id),
        "profile": curation.save_profile("user", "alice", information="Alice, vegan now.", version=1),
    }


def test_a_users_page_lists_the_changes_to_everything_they_own(viewer_client, world, curation, agent_memory):
    made = changes_to_everything_alice_owns(curation, agent_memory, world)

    listed = page_history(viewer_client, "user", "alice")

    assert {entry.pk for entry in listed} == {entry.pk for entry in made.values()}
    assert [entry.pk for entry in listed] == sorted((entry.pk for entry in listed), reverse=True)
    html = viewer_client.get(reverse("memory:user_detail", args=["alice"])).content.decode()
    assert "No changes made by hand yet" not in html
    assert f"{reverse('memory:history')}?user_id=alice" in html


def test_a_link_between_two_users_memories_is_on_both_pages_and_nothing_else_of_alices(
    viewer_client, world, curation, agent_memory
):
    made = changes_to_everything_alice_owns(curation, agent_memory, world)

    assert [entry.pk for entry in page_history(viewer_client, "user", "bob")] == [made["link"].pk]


def test_an_agents_page_lists_the_changes_to_what_it_owns(viewer_client, world, curation, agent_memory):
    made = changes_to_everything_alice_owns(curation, agent_memory, world)

    listed = {entry.pk for entry in page_history(viewer_client, "agent", "atlas")}

    # Everything of alice's is atlas's too (the world's thread and records are both), but not
    # alice's profile, nor bob's memory's link... which joins a memory of atlas: so it is listed.
    assert listed == {entry.pk for name, entry in made.items() if name != "profile"}


def test_a_deleted_owner_keeps_their_changes_on_their_page_once_restored(viewer_client, world, curation):
    deletion = curation.delete_owner("user", "alice")
    restore = curation.revert(deletion)

    assert {entry.pk for entry in page_history(viewer_client, "user", "alice")} == {deletion.pk, restore.pk}
    assert {entry.pk for entry in page_history(viewer_client, "agent", "atlas")} == {deletion.pk, restore.pk}


def test_the_history_page_filters_by_user_and_by_agent(viewer_client, world, curation, agent_memory):
    made = changes_to_everything_alice_owns(curation, agent_memory, world)
    history = reverse("memory:history")

    by_bob = viewer_client.get(history, {"user_id": "bob"})
    by_alice = viewer_client.get(history, {"user_id": "alice"})
    by_nobody = viewer_client.get(history, {"agent_id": "nobody"})

    assert [entry.pk for entry in by_bob.context["entries"]] == [made["link"].pk]
    assert {entry.pk for entry in by_alice.context["entries"]} == {entry.pk for entry in made.values()}
    assert list(by_nobody.context["entries"]) == []
    assert "User" in by_bob.content.decode() and "bob" in by_bob.content.decode()


def test_the_api_history_filters_by_owner_too(curator_client, world, curation, agent_memory):
    made = changes_to_everything_alice_owns(curation, agent_memory, world)

    body = curator_client.get("/api/v1/history/", {"user_id": "bob"}).json()

    assert [entry["id"] for entry in body["results"]] == [made["link"].pk]


def test_a_bulk_change_is_one_row_on_the_owners_page(viewer_client, world, curation, agent_memory):
    chosen = [
        (memory_id, agent_memory.get_memory(memory_id).version) for memory_id in (world.fact_id, world.old_fact_id)
    ]
    outcome = curation.bulk_delete_memories(chosen, "Deleted 2 memories")

    listed = page_history(viewer_client, "user", "alice")

    assert [entry.bulk_id for entry in listed] == [outcome.change.pk]


def test_the_owners_history_is_one_query_however_many_changes(
    viewer_client, world, curation, agent_memory, django_assert_max_num_queries
):
    for n in range(30):
        fact = agent_memory.get_memory(world.fact_id)
        curation.update_memory(world.fact_id, version=fact.version, content=f"Alice is vegetarian ({n}).")
    url = reverse("memory:user_detail", args=["alice"])
    viewer_client.get(url)

    with django_assert_max_num_queries(5):  # the session, the user, its scope, the history (and its bulk changes)
        assert len(viewer_client.get(url).context["history"]) == 20


def test_entries_written_before_owners_were_kept_get_them_from_their_json(world, curation, agent_memory):
    made = changes_to_everything_alice_owns(curation, agent_memory, world)
    HistoryOwner.objects.all().delete()
    migration = importlib.import_module("memory.migrations.0009_history_owners")

    migration.give_entries_owners(apps, None)

    owners = {(row.entry_id, row.kind, row.owner_id) for row in HistoryOwner.objects.all()}
    assert (made["memory"].pk, "user", "alice") in owners
    assert (made["profile"].pk, "user", "alice") in owners
    assert (made["link"].pk, "user", "bob") not in owners  # bob's memory is in no entry: unknown here
    assert (made["unlink"].pk, "user", "alice") in owners  # its memories' owners are in other entries
