"""The curation history: the list and its filters, an entry's diff, and undoing changes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.urls import reverse

from memory import services
from memory.curation import Actor, Curation
from memory.engine import AgentMemory, thread_to_json
from memory.models import Action, CurationEntry, ObjectKind

from .test_diffs import texts
from .world import World, build_world, png_bytes

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


def test_each_row_names_its_record_by_what_it_says(viewer_client, world, curation, agent_memory):
    edit_fact(curation, agent_memory, world.fact_id, content="Alice is vegan.")
    curation.delete_memory(world.old_fact_id)
    thread = agent_memory.get_thread_record(world.thread_id)
    curation.update_thread(world.thread_id, version=thread.version, metadata={"title": "Lisbon"})

    listing = viewer_client.get(HISTORY).content.decode()

    assert "Alice is vegan." in listing  # after the edit
    assert "Alice used to eat fish." in listing  # before the deletion, from its snapshot
    assert "Lisbon" in listing  # a thread, by its title


def test_a_change_made_with_an_api_token_names_the_token(viewer_client, world, curator, agent_memory):
    entry = Curation(agent_memory, Actor(curator, via="api", token_name="nightly-audit")).delete_memory(
        world.old_fact_id
    )

    listing = viewer_client.get(HISTORY).content.decode()
    page = viewer_client.get(reverse("memory:history_entry", args=[entry.pk])).content.decode()

    assert 'via api, token <span class="font-monospace">nightly-audit</span>' in listing
    assert 'via api, with the API token <span class="font-monospace">nightly-audit</span>' in page


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


def test_an_entry_shows_changed_times_as_the_pages_do(viewer_client, world, curation, agent_memory):
    before = agent_memory.get_memory(world.fact_id).timestamp
    entry = edit_fact(curation, agent_memory, world.fact_id, timestamp="2026-03-01T09:30:15.123456+00:00", ttl_days=3)

    html = viewer_client.get(reverse("memory:history_entry", args=[entry.pk])).content.decode()

    shown_before = datetime.fromisoformat(before).astimezone(UTC)
    assert f"<del>{shown_before:%Y-%m-%d %H:%M:%S} UTC</del>" in html
    assert "<ins>2026-03-01 09:30:15 UTC</ins>" in html
    assert "2026-03-01T09:30" not in html  # not the ISO form with its microseconds


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


def test_a_retyped_link_shows_its_old_and_new_type_and_its_undo_which_comes_back(
    curator_client, world, curation, agent_memory
):
    entry = retype_link(curation, world, agent_memory)

    page = curator_client.get(reverse("memory:history_entry", args=[entry.pk])).content.decode()
    preview = curator_client.get(reverse("memory:history_revert", args=[entry.pk]))

    assert "<del>supersedes</del>" in page and "<ins>refines</ins>" in page
    assert preview.status_code == 200
    html = preview.content.decode()
    assert "<del>refines</del>" in html and "<ins>supersedes</ins>" in html
    assert "<del>is_refined_by</del>" in html and "<ins>is_superseded_by</ins>" in html


def test_an_update_that_changed_nothing_revertible_is_refused_on_its_undo_page(
    curator_client, curator, world, agent_memory
):
    """As a summary refresh that folded in nothing was once recorded."""
    thread = thread_to_json(agent_memory.get_thread_record(world.thread_id))
    entry = CurationEntry.objects.create(
        actor=curator,
        actor_name="carl",
        object_kind=ObjectKind.THREAD,
        object_id=world.thread_id,
        thread_id=world.thread_id,
        action=Action.UPDATE,
        summary="Refreshed the summary with the LLM",
        before=thread,
        after=thread,
    )

    response = curator_client.get(reverse("memory:history_revert", args=[entry.pk]))

    assert response.status_code == 200
    html = response.content.decode()
    assert "This change changed nothing that can be written back." in html
    content = html.split("<main", 1)[1].split("</main>", 1)[0]  # the keyboard shortcuts dialog's Close follows it
    assert 'type="submit"' not in content


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


def retype_link(c: Curation, w: World, m: AgentMemory) -> CurationEntry:
    return c.update_link(w.link_id, version=m.get_relation(w.link_id).version, relation_type="refines")


def link_a_new_memory(c: Curation, w: World, m: AgentMemory) -> CurationEntry:
    new = m.add_memory("Alice eats no fish.", memory_type="fact", user_id=w.user_id, autonomous_linking=False)
    return c.create_link(source_record_id=new, target_record_id=w.fact_id, relation_type="supports")


def undone(make):
    """A case that makes a change through `make`, then undoes it: the entry of the undo."""
    return lambda c, w, m: c.revert(make(c, w, m))


def write_profile(kind: str, owner_id: str, *, version: int):
    return lambda c, w, m: c.save_profile(kind, owner_id, information=f"{owner_id}, rewritten.", version=version)


def delete_thread(c, w, m):
    return c.delete_thread(w.thread_id)


def delete_message(c, w, m):
    return c.delete_message(w.thread_id, w.message_ids[0])


def delete_memory(c, w, m):
    return c.delete_memory(w.old_fact_id)


def delete_image(c, w, m):
    return c.delete_image(w.image_id)


def delete_user(c, w, m):
    return c.delete_owner(ObjectKind.USER, w.user_id)


def delete_agent_profile(c, w, m):
    return c.delete_profile(ObjectKind.AGENT, w.agent_id)


def unlink(c, w, m):
    return c.delete_link(w.link_id)


CHANGES = {
    "thread metadata edited": (
        ObjectKind.THREAD,
        Action.UPDATE,
        lambda c, w, m: c.update_thread(w.thread_id, metadata={"topic": "food"}, version=1),
    ),
    "thread summary refreshed (LLM)": (
        ObjectKind.THREAD,
        Action.UPDATE,
        lambda c, w, m: c.refresh_summary(w.thread_id),
    ),
    "thread deleted": (ObjectKind.THREAD, Action.DELETE, delete_thread),
    "thread restored": (ObjectKind.THREAD, Action.RESTORE, undone(delete_thread)),
    "message added with an image": (
        ObjectKind.MESSAGE,
        Action.CREATE,
        lambda c, w, m: c.add_image(
            w.thread_id, png_bytes(), description="A bike", add_as="message", role="user", text="This one?"
        ),
    ),
    "message edited": (
        ObjectKind.MESSAGE,
        Action.UPDATE,
        lambda c, w, m: c.update_message(w.thread_id, w.message_ids[0], version=1, content="I eat fish again."),
    ),
    "message deleted": (ObjectKind.MESSAGE, Action.DELETE, delete_message),
    "message restored": (ObjectKind.MESSAGE, Action.RESTORE, undone(delete_message)),
    "memory created": (
        ObjectKind.MEMORY,
        Action.CREATE,
        lambda c, w, m: c.create_memory(content="Alice cycles.", memory_type="fact", user_id=w.user_id),
    ),
    "memory edited": (
        ObjectKind.MEMORY,
        Action.UPDATE,
        lambda c, w, m: edit_fact(c, m, w.fact_id, content="Alice is vegan."),
    ),
    "memory deleted": (ObjectKind.MEMORY, Action.DELETE, delete_memory),
    "memory restored": (ObjectKind.MEMORY, Action.RESTORE, undone(delete_memory)),
    "image added": (
        ObjectKind.IMAGE,
        Action.CREATE,
        lambda c, w, m: c.add_image(w.thread_id, png_bytes(), description="A bike", add_as="image", role="", text=""),
    ),
    "image edited": (
        ObjectKind.IMAGE,
        Action.UPDATE,
        lambda c, w, m: c.update_image(w.image_id, version=1, description="A map of Porto"),
    ),
    "image deleted": (ObjectKind.IMAGE, Action.DELETE, delete_image),
    "image restored": (ObjectKind.IMAGE, Action.RESTORE, undone(delete_image)),
    "user profile written": (ObjectKind.USER, Action.CREATE, write_profile(ObjectKind.USER, "bob", version=0)),
    "user profile edited": (ObjectKind.USER, Action.UPDATE, write_profile(ObjectKind.USER, "alice", version=1)),
    "user deleted with all they own": (ObjectKind.USER, Action.DELETE, delete_user),
    "user restored": (ObjectKind.USER, Action.RESTORE, undone(delete_user)),
    "agent profile edited": (ObjectKind.AGENT, Action.UPDATE, write_profile(ObjectKind.AGENT, "atlas", version=1)),
    "agent profile deleted": (ObjectKind.AGENT, Action.DELETE, delete_agent_profile),
    "agent profile restored": (ObjectKind.AGENT, Action.RESTORE, undone(delete_agent_profile)),
    "link created": (ObjectKind.LINK, Action.LINK, link_a_new_memory),
    "link retyped": (ObjectKind.LINK, Action.UPDATE, retype_link),
    "link deleted": (ObjectKind.LINK, Action.UNLINK, unlink),
    "link restored": (ObjectKind.LINK, Action.RESTORE, undone(unlink)),
}
"""One change of each kind the curation service records: (object kind, action, how to make it)."""


def test_the_changes_below_cover_every_object_kind_and_every_action():
    """A new kind of object or action must add its change to CHANGES, so its pages are tested."""
    assert {kind for kind, _, _ in CHANGES.values()} == set(ObjectKind)
    assert {action for _, action, _ in CHANGES.values()} == set(Action)


@pytest.mark.parametrize("change", CHANGES)
def test_every_kind_of_change_has_an_entry_page_and_an_undo_that_works(change, request, curator, curator_client):
    kind, action, make = CHANGES[change]
    world = build_world(services.get_agent_memory())
    if "(LLM)" in change:  # from now on: the world's messages came before the LLM, none is summarised
        request.getfixturevalue("fake_llm")
    agent_memory = services.get_agent_memory()
    entry = make(Curation(agent_memory, Actor(curator)), world, agent_memory)
    assert (entry.object_kind, entry.action) == (kind, action)

    page = curator_client.get(reverse("memory:history_entry", args=[entry.pk]))
    preview = curator_client.get(reverse("memory:history_revert", args=[entry.pk]))
    undo = curator_client.post(reverse("memory:history_revert", args=[entry.pk]), follow=True)

    assert page.status_code == 200
    assert preview.status_code == 200
    assert "Could not undo" not in undo.content.decode()
    assert CurationEntry.objects.filter(reverts=entry).exists()


def test_a_megabyte_memory_edited_throughout_has_its_history_entry_shown_with_every_edit(
    viewer_client, world, curation, agent_memory
):
    """A word diff is near-linear in the text's length (difflib's was quadratic: a 95 KB memory
    with one word changed tied a worker up for two minutes)."""
    old, new = texts(150_000, every=50)
    agent_memory.update_memory(world.fact_id, content=old)
    entry = edit_fact(curation, agent_memory, world.fact_id, content=new)
    assert len(entry.after["content"]) > 900_000

    page = viewer_client.get(reverse("memory:history_entry", args=[entry.pk])).content.decode()

    assert page.count("<ins>EDIT") == len(range(0, 150_000, 50))


def test_a_rewritten_text_is_shown_side_by_side_and_a_small_edit_inline(viewer_client, world, curation, agent_memory):
    rewritten = edit_fact(curation, agent_memory, world.fact_id, content="Since May she eats fish again, mostly cod.")
    url = reverse("memory:history_entry", args=[rewritten.pk])

    split = viewer_client.get(url).content.decode()
    before, after = split.split(">Before<", 1)[1].split(">After<", 1)
    assert "<del>" in before and "<ins>" not in before
    assert "<ins>" in after and "<del>" not in after.split("</div></div>", 1)[0]
    assert 'href="?diff=inline"' in split

    inline = viewer_client.get(url + "?diff=inline").content.decode()
    assert ">Before<" not in inline and 'href="?diff=split"' in inline

    small = edit_fact(curation, agent_memory, world.fact_id, content="Since May she eats fish again, mostly hake.")
    page = viewer_client.get(reverse("memory:history_entry", args=[small.pk])).content.decode()
    assert ">Before<" not in page and "<del>cod.</del>" in page
