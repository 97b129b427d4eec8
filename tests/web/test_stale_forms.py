"""An edit form saved against a record changed since it was opened is refused (409) even when the
change made meanwhile is the very one the form asks for, for every kind of record.

Two people open the same form and make the same change: the first saves it; the second finds
nothing left to change, and must still be told the record changed meanwhile, not "nothing
changed" as if the form had been saved on what it showed (issue 25).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.urls import reverse

from memory.engine import AgentMemory
from memory.models import CurationEntry
from tests.web.world import STILL_THERE, World, build_world

CLAIMED = {"claimed": True}


@dataclass(frozen=True)
class Kind:
    """An edit form, the field a person changes in it, and how another writer makes that change."""

    url: Callable[[World], str]
    field: str
    value: str  # the field's new text in the form
    other_writer: Callable[[AgentMemory, World], Any]  # stores the same value
    version: Callable[[AgentMemory, World], int]


KINDS = {
    "memory": Kind(
        lambda world: reverse("memory:memory_edit", args=[world.fact_id]),
        "metadata",
        json.dumps(CLAIMED),
        lambda memory, world: memory.update_memory(world.fact_id, metadata=CLAIMED),
        lambda memory, world: memory.get_memory(world.fact_id).version,
    ),
    "thread": Kind(
        lambda world: reverse("memory:thread_edit", args=[world.thread_id]),
        "metadata",
        json.dumps(CLAIMED),
        lambda memory, world: memory.update_thread(world.thread_id, metadata=CLAIMED),
        lambda memory, world: memory.get_thread_record(world.thread_id).version,
    ),
    "message": Kind(
        lambda world: reverse("memory:message_edit", args=[world.thread_id, world.message_ids[0]]),
        "metadata",
        json.dumps(CLAIMED),
        lambda memory, world: memory.get_thread(world.thread_id).update_message(world.message_ids[0], metadata=CLAIMED),
        lambda memory, world: memory.get_message_record(world.thread_id, world.message_ids[0]).version,
    ),
    "image": Kind(
        lambda world: reverse("memory:image_edit", args=[world.image_id]),
        "metadata",
        json.dumps(CLAIMED),
        lambda memory, world: memory.update_image(world.image_id, metadata=CLAIMED),
        lambda memory, world: memory.get_image(world.image_id).version,
    ),
    "link": Kind(
        lambda world: reverse("memory:link_edit", args=[world.link_id]),
        "metadata",
        json.dumps(CLAIMED),
        lambda memory, world: memory.update_record_link(world.link_id, metadata=CLAIMED),
        lambda memory, world: memory.get_relation(world.link_id).version,
    ),
    "user": Kind(
        lambda world: reverse("memory:user_edit", args=[world.user_id]),
        "information",
        "Alice, claimed.",
        lambda memory, world: memory.add_user(world.user_id, "Alice, claimed."),
        lambda memory, world: memory.get_user(world.user_id).version,
    ),
    "agent": Kind(
        lambda world: reverse("memory:agent_edit", args=[world.agent_id]),
        "information",
        "Atlas, claimed.",
        lambda memory, world: memory.add_agent(world.agent_id, "Atlas, claimed."),
        lambda memory, world: memory.get_agent(world.agent_id).version,
    ),
}


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def opened(client, url: str) -> dict[str, str]:
    """The form's fields as its page sends them when saved untouched (the version it was opened on included)."""
    form = client.get(url).context["form"]
    values = {name: form[name].value() for name in form.fields}
    return {name: str(value) for name, value in values.items() if value not in (None, False)}


@pytest.mark.parametrize("name", KINDS)
def test_a_form_making_the_change_another_writer_made_meanwhile_is_refused(name, curator_client, agent_memory, world):
    kind = KINDS[name]
    form = opened(curator_client, kind.url(world))
    kind.other_writer(agent_memory, world)

    response = curator_client.post(kind.url(world), {**form, kind.field: kind.value})

    assert response.status_code == 409, response.content.decode()[:2000]
    assert "This changed since you opened it" in response.content.decode()
    assert kind.version(agent_memory, world) == int(form["version"]) + 1  # the other writer's write alone
    assert not CurationEntry.objects.exists()


@pytest.mark.parametrize("name", KINDS)
def test_a_form_saved_unchanged_at_the_current_version_changes_nothing(name, curator_client, agent_memory, world):
    kind = KINDS[name]
    kind.other_writer(agent_memory, world)
    form = opened(curator_client, kind.url(world))

    response = curator_client.post(kind.url(world), {**form, kind.field: kind.value}, follow=True)

    assert response.redirect_chain, response.content.decode()[:2000]
    assert "Nothing changed" in response.content.decode()
    assert kind.version(agent_memory, world) == int(form["version"])
    assert not CurationEntry.objects.exists()


# --- delete confirmations ---------------------------------------------------------------------------
# A delete confirmation carries the version of the record the page showed (its hidden `version`
# field, as in the edit forms): a record changed since is not deleted unseen (409, the page shown
# again as it is now, carrying its new version), and a post without a version deletes nothing (400).


@dataclass(frozen=True)
class Deletion:
    url: Callable[[World], str]
    exists: Callable[[AgentMemory, World], bool]


DELETIONS = {
    "memory": Deletion(
        lambda world: reverse("memory:memory_delete", args=[world.fact_id]),
        STILL_THERE["memory"],
    ),
    "thread": Deletion(
        lambda world: reverse("memory:thread_delete", args=[world.thread_id]),
        STILL_THERE["thread"],
    ),
    "message": Deletion(
        lambda world: reverse("memory:message_delete", args=[world.thread_id, world.message_ids[0]]),
        STILL_THERE["message"],
    ),
    "image": Deletion(
        lambda world: reverse("memory:image_delete", args=[world.image_id]),
        STILL_THERE["image"],
    ),
    "link": Deletion(
        lambda world: reverse("memory:link_delete", args=[world.link_id]),
        STILL_THERE["link"],
    ),
}


def shown_version(response) -> int:
    """The version the confirmation's form posts (its hidden field)."""
    html = response.content.decode()
    found = re.search(r'<input type="hidden" name="version" value="(\d+)">', html)
    assert found, html[:2000]
    return int(found.group(1))


@pytest.mark.parametrize("name", DELETIONS)
def test_a_delete_confirmed_on_a_record_changed_meanwhile_is_refused_and_shows_it_again(
    name, curator_client, agent_memory, world
):
    deletion, kind = DELETIONS[name], KINDS[name]
    version = shown_version(curator_client.get(deletion.url(world)))
    kind.other_writer(agent_memory, world)

    response = curator_client.post(deletion.url(world), {"version": version})

    assert response.status_code == 409, response.content.decode()[:2000]
    assert "This changed since you opened it" in response.content.decode()
    assert deletion.exists(agent_memory, world)
    assert kind.version(agent_memory, world) == version + 1  # the other writer's write, kept
    assert shown_version(response) == version + 1  # confirming again deletes what is shown now
    assert not CurationEntry.objects.exists()

    again = curator_client.post(deletion.url(world), {"version": version + 1})

    assert again.status_code == 302
    assert not deletion.exists(agent_memory, world)
    assert CurationEntry.objects.count() == 1


@pytest.mark.parametrize("name", DELETIONS)
def test_a_delete_posted_without_a_version_deletes_nothing_and_asks_again(name, curator_client, agent_memory, world):
    """A page opened before confirmations carried the version, or a hand-made post: as an edit
    form without its version, nothing is written; the confirmation is shown again as it is now."""
    deletion = DELETIONS[name]

    response = curator_client.post(deletion.url(world))

    assert response.status_code == 400, response.content.decode()[:2000]
    assert "did not say which version" in response.content.decode()
    assert shown_version(response) == KINDS[name].version(agent_memory, world)
    assert deletion.exists(agent_memory, world)
    assert not CurationEntry.objects.exists()


def test_a_message_deleted_inline_at_a_changed_version_is_refused_in_place(curator_client, agent_memory, world):
    """On the thread page (htmx) the refusal takes the confirmation's place, as the confirmation did."""
    url = DELETIONS["message"].url(world)
    version = shown_version(curator_client.get(url, HTTP_HX_REQUEST="true"))
    KINDS["message"].other_writer(agent_memory, world)

    response = curator_client.post(url, {"version": version}, HTTP_HX_REQUEST="true")

    assert response.status_code == 409
    html = response.content.decode()
    assert "This changed since you opened it" in html and "<html" not in html
    assert DELETIONS["message"].exists(agent_memory, world)
