"""The curation history: the list and its filters, an entry's diff, and undoing changes."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.curation import Actor, Curation
from memory.models import CurationEntry

from .world import World, build_world

HISTORY = reverse("memory:history")


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


@pytest.fixture
def curation(agent_memory, curator) -> Curation:
    return Curation(agent_memory, Actor(curator))


def edit_fact(curation, agent_memory, memory_id, **changes):
    memory = agent_memory.get_memory(memory_id)
    return curation.update_memory(memory_id, version=memory.version, **changes)


def test_every_change_is_listed_newest_first_with_who_and_what(viewer_client, world, curation, agent_memory):
    edit_fact(curation, agent_memory, world.fact_id, content="Alice is vegan.")
    curation.delete_memory(world.old_fact_id)

    response = viewer_client.get(HISTORY)

    entries = response.context["entries"]
    assert [(e.action, e.object_id) for e in entries] == [("delete", world.old_fact_id), ("update", world.fact_id)]
    assert "carl" in response.content.decode()


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"object_kind": "memory", "object_id": "fact-vegetarian"}, ["update"]),
        ({"action": "delete"}, ["delete"]),
        ({"actor": "carl"}, ["delete", "update"]),
        ({"actor": "vera"}, []),
        ({"thread_id": "trip-42"}, ["delete", "update"]),
        ({"since": "2999-01-01T00:00"}, []),
    ],
)
def test_the_history_filters_by_object_action_actor_thread_and_time(
    viewer_client, world, curation, agent_memory, query, expected
):
    edit_fact(curation, agent_memory, world.fact_id, content="Alice is vegan.")
    curation.delete_memory(world.old_fact_id)

    response = viewer_client.get(HISTORY, query)

    assert [e.action for e in response.context["entries"]] == expected


def test_the_history_pages_with_a_cursor(viewer_client, world, curation, agent_memory):
    for n in range(5):
        edit_fact(curation, agent_memory, world.fact_id, content=f"version {n}")

    first = viewer_client.get(HISTORY, {"limit": 2})
    second = viewer_client.get(HISTORY, {"limit": 2, "cursor": first.context["next_cursor"]})

    ids = [e.pk for e in first.context["entries"]] + [e.pk for e in second.context["entries"]]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 4


def test_an_entry_shows_a_readable_diff_of_content_and_metadata(viewer_client, world, curation, agent_memory):
    entry = edit_fact(
        curation, agent_memory, world.fact_id, content="Alice is strictly vegan.", metadata={"source": "chat", "new": 1}
    )

    html = viewer_client.get(reverse("memory:history_entry", args=[entry.pk])).content.decode()

    assert "<del>vegetarian.</del>" in html
    assert "<ins>strictly vegan.</ins>" in html or "<ins>strictly</ins>" in html
    assert "removed" in html and "tags" in html  # a metadata key that went
    assert "added" in html and "new" in html


def test_reverting_an_update_writes_the_old_values_back_as_a_new_change(curator_client, world, curation, agent_memory):
    entry = edit_fact(curation, agent_memory, world.fact_id, content="Alice is vegan.", metadata=None)

    response = curator_client.post(reverse("memory:history_revert", args=[entry.pk]))

    assert response.status_code == 302
    memory = agent_memory.get_memory(world.fact_id)
    assert memory.content == "Alice is vegetarian."
    assert memory.metadata == {"source": "chat", "tags": ["diet"]}
    revert = CurationEntry.objects.order_by("-pk").first()
    assert revert.reverts == entry
    assert revert.summary.startswith("Reverted")


def test_undoing_a_creation_deletes_it_and_that_too_can_be_undone(curator_client, world, curation, agent_memory):
    created = curation.create_memory(content="A new fact.", memory_type="fact", user_id="alice")

    curator_client.post(reverse("memory:history_revert", args=[created.pk]))
    with pytest.raises(KeyError):
        agent_memory.get_memory(created.object_id)

    deletion = CurationEntry.objects.get(action="delete")
    curator_client.post(reverse("memory:history_revert", args=[deletion.pk]))
    assert agent_memory.get_memory(created.object_id).content == "A new fact."


def test_the_revert_page_says_what_will_come_back(curator_client, world, curation):
    entry = curation.delete_memory(world.fact_id)

    html = curator_client.get(reverse("memory:history_revert", args=[entry.pk])).content.decode()

    assert "Restore" in html
    assert "Alice is vegetarian." in html
    assert "supersedes" in html


def test_reverting_an_update_of_a_deleted_record_says_to_restore_it_first(
    curator_client, world, curation, agent_memory
):
    entry = edit_fact(curation, agent_memory, world.fact_id, content="Changed.")
    curation.delete_memory(world.fact_id)

    response = curator_client.post(reverse("memory:history_revert", args=[entry.pk]), follow=True)

    assert "restore it from its deletion" in response.content.decode()


def test_restoring_twice_reports_the_id_is_taken(curator_client, world, curation, agent_memory):
    entry = curation.delete_memory(world.fact_id)
    curator_client.post(reverse("memory:history_revert", args=[entry.pk]))

    response = curator_client.post(reverse("memory:history_revert", args=[entry.pk]), follow=True)

    assert "Could not undo" in response.content.decode()
    assert agent_memory.get_memory(world.fact_id)


def test_undoing_a_first_profile_deletes_the_profile_alone(curator_client, agent_memory):
    agent_memory.create_thread(thread_id="bob-thread", user_id="bob", agent_id="atlas")
    agent_memory.add_memory("Bob likes jazz.", memory_type="fact", user_id="bob", autonomous_linking=False)
    curator_client.post(reverse("memory:user_edit", args=["bob"]), {"information": "Bob, a drummer.", "version": 0})
    written = CurationEntry.objects.get(action="create")

    curator_client.post(reverse("memory:history_revert", args=[written.pk]))

    with pytest.raises(KeyError):
        agent_memory.get_user("bob")
    assert agent_memory.stats(user_id="bob").threads == 1
    assert agent_memory.list_memories(user_id="bob")[0].content == "Bob likes jazz."
    assert CurationEntry.objects.get(reverts=written).summary == "Deleted the user's profile"


def test_a_revert_writes_back_only_what_the_change_changed(curator_client, world, curation, agent_memory):
    first = edit_fact(curation, agent_memory, world.fact_id, content="Alice is vegan.")
    edit_fact(curation, agent_memory, world.fact_id, metadata={"source": "later"})

    preview = curator_client.get(reverse("memory:history_revert", args=[first.pk])).content.decode()
    curator_client.post(reverse("memory:history_revert", args=[first.pk]))

    memory = agent_memory.get_memory(world.fact_id)
    assert memory.content == "Alice is vegetarian."
    assert memory.metadata == {"source": "later"}  # the later change stays
    assert "changed again after this change" in preview


def test_a_revert_never_turns_a_status_from_a_link_into_the_memorys_own(curator_client, world, curation, agent_memory):
    edit = edit_fact(curation, agent_memory, world.old_fact_id, content="Alice ate fish until 2020.")  # invalid by link
    curation.delete_memory(world.fact_id)  # the superseding memory goes: the old fact is valid again
    assert agent_memory.get_memory(world.old_fact_id).status == "valid"

    curator_client.post(reverse("memory:history_revert", args=[edit.pk]))

    memory = agent_memory.get_memory(world.old_fact_id)
    assert (memory.content, memory.status) == ("Alice used to eat fish.", "valid")


def test_a_message_of_a_deleted_thread_is_restored_only_after_its_thread(curator_client, world, curation, agent_memory):
    message_deleted = curation.delete_message(world.thread_id, world.message_ids[0])
    thread_deleted = curation.delete_thread(world.thread_id)

    refused = curator_client.post(reverse("memory:history_revert", args=[message_deleted.pk]), follow=True)
    assert "restore the thread first" in refused.content.decode()
    with pytest.raises(KeyError):
        agent_memory.get_thread_record(world.thread_id)

    curator_client.post(reverse("memory:history_revert", args=[thread_deleted.pk]))
    curator_client.post(reverse("memory:history_revert", args=[message_deleted.pk]))
    assert agent_memory.get_thread_record(world.thread_id).metadata == {"topic": "travel", "tags": ["lisbon"]}
    assert agent_memory.get_message_record(world.thread_id, world.message_ids[0])


def test_an_undone_change_offers_no_second_undo(curator_client, world, curation):
    entry = curation.delete_memory(world.fact_id)
    curator_client.post(reverse("memory:history_revert", args=[entry.pk]))

    html = curator_client.get(reverse("memory:history_entry", args=[entry.pk])).content.decode()

    assert "Undone by" in html
    assert reverse("memory:history_revert", args=[entry.pk]) not in html
