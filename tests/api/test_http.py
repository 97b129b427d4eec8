"""What every write of the API shares, over all its resources: JSON bodies (a form is a 415, JSON it
cannot read a 400), and `If-Match` (memory.api.base.expected_version)."""

from __future__ import annotations

import pytest

from tests.web.world import World, build_world

MESSAGE = "/api/v1/threads/trip-42/messages/{message}/"


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def url(template: str, world: World) -> str:
    return template.format(message=world.message_ids[0], link=world.link_id)


JSON_WRITES = [
    ("post", "/api/v1/memories/"),
    ("patch", "/api/v1/memories/fact-old/"),
    ("post", "/api/v1/threads/"),
    ("patch", "/api/v1/threads/trip-42/"),
    ("post", "/api/v1/threads/trip-42/messages/"),
    ("patch", MESSAGE),
    ("patch", "/api/v1/images/map-1/"),
    ("post", "/api/v1/links/"),
    ("patch", "/api/v1/links/{link}/"),
    ("put", "/api/v1/users/alice/"),
    ("patch", "/api/v1/agents/atlas/"),
    ("post", "/api/v1/search/"),
]


@pytest.mark.parametrize(("method", "template"), JSON_WRITES)
def test_every_json_body_refuses_a_form_and_json_it_cannot_read(curator_api, world, method, template):
    path = url(template, world)
    send = getattr(curator_api, method)

    as_form = send(path, {"content": "x"})  # multipart
    broken = send(path, '{"content": ', content_type="application/json")
    deep = send(path, "[" * 100_000 + "]" * 100_000, content_type="application/json")

    assert as_form.status_code == 415, as_form.content
    assert broken.status_code == 400 and broken.json()["detail"].startswith("JSON parse error")
    assert deep.status_code == 400, deep.content
    assert "nested too deeply" in deep.json()["detail"]
