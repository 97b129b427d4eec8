"""A stored image whose bytes are not an image (written below the engine's checks, as an import did
before it checked images: issue 25, item 4) is shown as one that cannot be shown: no page and no
API answer fails on it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.engine import AgentMemory, ImageRecord
from tests.api.conftest import curator_api  # noqa: F401  (the API's curator client)
from tests.web.world import png_bytes

pytestmark = pytest.mark.django_db

JUNK = b"<html>not an image</html>"


@pytest.fixture
def undecodable(agent_memory: AgentMemory) -> tuple[str, str, str]:
    """A thread with a message holding an image and a standalone image, both images' bytes then
    ("img-junk") replaced by JUNK through the store's restore, which writes what it is given: the
    thread's id, the message's and its image's."""
    thread = agent_memory.create_thread(thread_id="t-junk", user_id="alice", agent_id="atlas")
    [message_id] = thread.add_messages(
        [{"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image", "bytes": png_bytes()}]}]
    )
    agent_memory.add_image(png_bytes(), description="a scan", image_id="img-junk", thread_id="t-junk")
    snapshot = agent_memory.snapshot(thread_id="t-junk")
    for record in snapshot.records:
        if isinstance(record, ImageRecord):
            record.bytes = JUNK
    agent_memory.delete_thread("t-junk")
    agent_memory.restore(snapshot)
    in_message = next(r.id for r in snapshot.records if isinstance(r, ImageRecord) and r.message_id)
    return "t-junk", message_id, in_message


def test_the_image_page_says_it_cannot_be_shown(viewer_client, undecodable):
    response = viewer_client.get(reverse("memory:image_detail", args=["img-junk"]))

    assert response.status_code == 200
    page = response.content.decode()
    assert "This image cannot be shown" in page and "not readable as an image" in page
    assert f'src="{reverse("memory:image_raw", args=["img-junk"])}"' not in page  # no picture of nothing
    assert "a scan" in page  # the rest of the record is there


def test_every_page_showing_the_images_answers(curator_client, undecodable):
    thread_id, message_id, in_message = undecodable
    for url in (
        reverse("memory:image_detail", args=[in_message]),
        reverse("memory:thread_detail", args=[thread_id]),
        reverse("memory:message_detail", args=[thread_id, message_id]),
        reverse("memory:image_edit", args=["img-junk"]),
        reverse("memory:image_delete", args=["img-junk"]),
    ):
        assert curator_client.get(url).status_code == 200, url


def test_the_stored_bytes_are_served_as_stored(viewer_client, curator_api, undecodable):  # noqa: F811
    """The bytes stay the owner's to download (nosniff and a sandbox keep a browser from running them)."""
    raw = viewer_client.get(reverse("memory:image_raw", args=["img-junk"]))
    assert raw.status_code == 200 and raw.content == JUNK
    assert raw["X-Content-Type-Options"] == "nosniff"

    assert curator_api.get(reverse("api:image", args=["img-junk"])).status_code == 200
    content = curator_api.get(reverse("api:image_content", args=["img-junk"]))
    assert content.status_code == 200 and content.content == JUNK
    assert curator_api.get(reverse("api:images"), {"thread_id": "t-junk"}).status_code == 200
