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
from tests.web.world import World, build_world

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
