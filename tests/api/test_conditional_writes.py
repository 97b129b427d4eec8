"""If-Match against a record another writer changed to the very values sent: a 412, for every kind.

Writers that read the same ETag and send the same change race: the first stores it; a later one
finds nothing left to change. That later one must still be refused (412), or two writers are both
told their conditional write was made (issue 25: eight clients claiming one memory, two or more
got a 200). The race is played here without threads: the other writer stores the same values
between the view's check of If-Match and the curation service's read of the record, the window
in which concurrent requests overlap (tests/web/test_many_processes.py runs it for real).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.urls import reverse

from memory.curation import Curation
from memory.engine import AgentMemory
from memory.models import CurationEntry
from tests.web.world import STILL_THERE, World, build_world

CLAIMED = {"claimed": True}


@dataclass(frozen=True)
class Kind:
    """How to reach one kind of record in the API, and how another writer changes it."""

    method: str  # the HTTP method that writes it
    url: Callable[[World], str]
    body: dict[str, Any]
    service: str  # the Curation method the write goes through
    other_writer: Callable[[AgentMemory, World], Any]  # stores `body`'s values, as another client would
    version: Callable[[AgentMemory, World], int]


KINDS = {
    "memory": Kind(
        "patch",
        lambda world: reverse("api:memory", args=[world.fact_id]),
        {"metadata": CLAIMED},
        "update_memory",
        lambda memory, world: memory.update_memory(world.fact_id, metadata=CLAIMED),
        lambda memory, world: memory.get_memory(world.fact_id).version,
    ),
    "thread": Kind(
        "patch",
        lambda world: reverse("api:thread", args=[world.thread_id]),
        {"metadata": CLAIMED},
        "update_thread",
        lambda memory, world: memory.update_thread(world.thread_id, metadata=CLAIMED),
        lambda memory, world: memory.get_thread_record(world.thread_id).version,
    ),
    "message": Kind(
        "patch",
        lambda world: reverse("api:thread_message", args=[world.thread_id, world.message_ids[0]]),
        {"metadata": CLAIMED},
        "update_message",
        lambda memory, world: memory.get_thread(world.thread_id).update_message(world.message_ids[0], metadata=CLAIMED),
        lambda memory, world: memory.get_message_record(world.thread_id, world.message_ids[0]).version,
    ),
    "image": Kind(
        "patch",
        lambda world: reverse("api:image", args=[world.image_id]),
        {"metadata": CLAIMED},
        "update_image",
        lambda memory, world: memory.update_image(world.image_id, metadata=CLAIMED),
        lambda memory, world: memory.get_image(world.image_id).version,
    ),
    "link": Kind(
        "patch",
        lambda world: reverse("api:link", args=[world.link_id]),
        {"metadata": CLAIMED},
        "update_link",
        lambda memory, world: memory.update_record_link(world.link_id, metadata=CLAIMED),
        lambda memory, world: memory.get_relation(world.link_id).version,
    ),
    "user": Kind(
        "put",
        lambda world: reverse("api:user", args=[world.user_id]),
        {"information": "Alice, claimed."},
        "save_profile",
        lambda memory, world: memory.add_user(world.user_id, "Alice, claimed."),
        lambda memory, world: memory.get_user(world.user_id).version,
    ),
    "agent": Kind(
        "patch",
        lambda world: reverse("api:agent", args=[world.agent_id]),
        {"information": "Atlas, claimed."},
        "save_profile",
        lambda memory, world: memory.add_agent(world.agent_id, "Atlas, claimed."),
        lambda memory, world: memory.get_agent(world.agent_id).version,
    ),
}


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def write(client, kind: Kind, world: World, etag: str):
    return getattr(client, kind.method)(kind.url(world), kind.body, format="json", HTTP_IF_MATCH=etag)


@pytest.mark.parametrize("name", KINDS)
def test_the_same_values_stored_meanwhile_by_another_writer_are_a_412(
    name, curator_api, agent_memory, world, monkeypatch
):
    kind = KINDS[name]
    etag = curator_api.get(kind.url(world))["ETag"]
    service = getattr(Curation, kind.service)

    def after_another_writer(self, *args, **kwargs):
        kind.other_writer(agent_memory, world)  # between the view's If-Match check and the service's read
        return service(self, *args, **kwargs)

    monkeypatch.setattr(Curation, kind.service, after_another_writer)

    response = write(curator_api, kind, world, etag)

    assert response.status_code == 412, response.content
    assert "changed since" in response.json()["detail"]
    assert kind.version(agent_memory, world) == int(etag.strip('"')) + 1  # the other writer's write alone
    assert not CurationEntry.objects.exists()


@pytest.mark.parametrize("name", KINDS)
def test_the_same_values_at_the_current_etag_are_a_200_that_writes_nothing(name, curator_api, agent_memory, world):
    kind = KINDS[name]
    kind.other_writer(agent_memory, world)
    etag = curator_api.get(kind.url(world))["ETag"]

    response = write(curator_api, kind, world, etag)

    assert response.status_code == 200, response.content
    assert response["ETag"] == etag
    assert kind.version(agent_memory, world) == int(etag.strip('"'))
    assert not CurationEntry.objects.exists()


# --- deletes ---------------------------------------------------------------------------------------
# A DELETE with If-Match is conditional to the end: the curation service passes the version to
# the engine, which compares it inside the delete's transaction. A change made between the view's
# check of If-Match and the delete is not deleted unseen (a 412), and a record another client
# deleted meanwhile is a 404, not a second acknowledged delete.


@dataclass(frozen=True)
class Deletion:
    """How to delete one kind of record in the API, and whether it is still there."""

    url: Callable[[World], str]
    service: str  # the Curation method the delete goes through
    exists: Callable[[AgentMemory, World], bool]
    deleted: int = 204  # the status of a delete made (a link's answers with the status changes)


DELETIONS = {
    "memory": Deletion(
        lambda world: reverse("api:memory", args=[world.fact_id]),
        "delete_memory",
        STILL_THERE["memory"],
    ),
    "thread": Deletion(
        lambda world: reverse("api:thread", args=[world.thread_id]),
        "delete_thread",
        STILL_THERE["thread"],
    ),
    "message": Deletion(
        lambda world: reverse("api:thread_message", args=[world.thread_id, world.message_ids[0]]),
        "delete_message",
        STILL_THERE["message"],
    ),
    "image": Deletion(
        lambda world: reverse("api:image", args=[world.image_id]),
        "delete_image",
        STILL_THERE["image"],
    ),
    "link": Deletion(
        lambda world: reverse("api:link", args=[world.link_id]),
        "delete_link",
        STILL_THERE["link"],
        deleted=200,
    ),
}


@pytest.mark.parametrize("name", DELETIONS)
def test_a_delete_at_an_etag_changed_after_the_view_s_check_is_a_412_that_deletes_nothing(
    name, curator_api, agent_memory, world, monkeypatch
):
    """Another writer changes the record between the view's If-Match check and the delete: the
    engine refuses the delete, and that writer's acknowledged change stays."""
    deletion, change = DELETIONS[name], KINDS[name]
    etag = curator_api.get(deletion.url(world))["ETag"]
    service = getattr(Curation, deletion.service)

    def after_another_writer(self, *args, **kwargs):
        change.other_writer(agent_memory, world)  # acknowledged to its client
        return service(self, *args, **kwargs)

    monkeypatch.setattr(Curation, deletion.service, after_another_writer)

    response = curator_api.delete(deletion.url(world), HTTP_IF_MATCH=etag)

    assert response.status_code == 412, response.content
    assert "changed since" in response.json()["detail"]
    assert deletion.exists(agent_memory, world)
    assert change.version(agent_memory, world) == int(etag.strip('"')) + 1
    assert not CurationEntry.objects.exists()


@pytest.mark.parametrize("name", DELETIONS)
def test_a_delete_of_a_record_deleted_after_the_view_s_check_is_a_404_recorded_once(
    name, curator_api, agent_memory, world, monkeypatch
):
    """Two clients delete at the same ETag: the second, whose check passed before the first
    delete, is told the record is gone, not that it deleted it too."""
    deletion = DELETIONS[name]
    etag = curator_api.get(deletion.url(world))["ETag"]
    service = getattr(Curation, deletion.service)
    first = []

    def after_another_deleter(self, *args, **kwargs):
        if not first:
            first.append(service(self, *args, **kwargs))  # the other client's delete, recorded
        return service(self, *args, **kwargs)

    monkeypatch.setattr(Curation, deletion.service, after_another_deleter)

    response = curator_api.delete(deletion.url(world), HTTP_IF_MATCH=etag)

    assert response.status_code == 404, response.content
    assert not deletion.exists(agent_memory, world)
    assert CurationEntry.objects.count() == 1


@pytest.mark.parametrize("name", DELETIONS)
def test_a_delete_at_a_stale_etag_is_a_412_and_at_the_current_one_deletes(name, curator_api, agent_memory, world):
    deletion, change = DELETIONS[name], KINDS[name]
    etag = curator_api.get(deletion.url(world))["ETag"]
    change.other_writer(agent_memory, world)

    stale = curator_api.delete(deletion.url(world), HTTP_IF_MATCH=etag)

    assert stale.status_code == 412, stale.content
    assert deletion.exists(agent_memory, world) and not CurationEntry.objects.exists()
    current = curator_api.get(deletion.url(world))["ETag"]
    assert curator_api.delete(deletion.url(world), HTTP_IF_MATCH=current).status_code == deletion.deleted
    assert not deletion.exists(agent_memory, world)
    assert CurationEntry.objects.count() == 1
