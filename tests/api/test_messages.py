"""/api/v1/threads/<id>/messages/: each persona, paging and the engine's windows, a batch added as
an agent adds it (text and image parts in base64), edits and deletes through the curation service."""

from __future__ import annotations

import base64
import io

import pytest
from django.urls import reverse
from PIL import Image

from memory.curation import Actor, Curation
from memory.engine import ImageInputLimitConfig, encode_cursor
from memory.models import CurationEntry
from tests.web.world import World, build_world, png_bytes


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def messages_url(thread_id: str = "trip-42") -> str:
    return reverse("api:thread_messages", args=[thread_id])


def one(message_id: str, thread_id: str = "trip-42") -> str:
    return reverse("api:thread_message", args=[thread_id, message_id])


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def contents(page: dict) -> list[str]:
    return [message["content"] for message in page["results"]]


@pytest.fixture
def long_thread(agent_memory) -> list[str]:
    """A thread of ten messages, "m0" to "m9", with seq_nos 0 to 9."""
    thread = agent_memory.create_thread(thread_id="long", user_id="bob", agent_id="atlas")
    return thread.add_messages([{"role": "user", "content": f"m{index}", "id": f"m{index}"} for index in range(10)])


def texts(client, **params) -> list[str]:
    response = client.get(messages_url("long"), params)
    assert response.status_code == 200, response.content
    return contents(response.json())


# --- who may do what ------------------------------------------------------------------------


def test_without_credentials_or_with_a_dead_token_it_is_a_401(anonymous, revoked_api, expired_api, world):
    for client in (anonymous, revoked_api, expired_api):
        assert client.get(messages_url()).status_code == 401
        assert client.get(one(world.message_ids[0])).status_code == 401
        assert (
            client.post(messages_url(), {"messages": [{"role": "user", "content": "x"}]}, format="json").status_code
            == 401
        )


def test_viewers_read_and_cannot_write(viewer_api, curator_reading_api, agent_memory, world):
    batch = {"messages": [{"role": "user", "content": "Sneaky."}]}
    for client in (viewer_api, curator_reading_api):
        assert client.get(messages_url()).status_code == 200
        assert client.get(one(world.message_ids[0])).status_code == 200
        assert client.post(messages_url(), batch, format="json").status_code == 403
        assert client.patch(one(world.message_ids[0]), {"content": "y"}, format="json").status_code == 403
        assert client.delete(one(world.message_ids[0])).status_code == 403
    assert agent_memory.get_thread_record(world.thread_id).message_count == 3
    assert CurationEntry.objects.count() == 0


def test_a_session_adds_messages_with_its_csrf_token(session_api, agent_memory, world):
    batch = {"messages": [{"role": "user", "content": "From the browser."}]}
    assert session_api.post(messages_url(), batch, format="json").status_code == 403

    session_api.get("/")
    made = session_api.post(
        messages_url(), batch, format="json", HTTP_X_CSRFTOKEN=session_api.cookies["csrftoken"].value
    )

    assert made.status_code == 201
    assert agent_memory.get_thread_record(world.thread_id).message_count == 4


# --- reading: pages and windows -------------------------------------------------------------


def test_the_list_gives_each_message_with_its_parts_in_order(viewer_api, world):
    response = viewer_api.get(messages_url())

    assert response.status_code == 200
    body = response.json()
    assert body["next"] is None
    first, second, third = body["results"]
    assert (first["id"], first["role"], first["seq_no"], first["metadata"]) == (
        world.message_ids[0],
        "user",
        0,
        {"channel": "web"},
    )
    assert first["parts"] is None and first["version"] == 1
    assert (first["thread_id"], first["user_id"], first["agent_id"]) == ("trip-42", "alice", "atlas")
    assert second["content"] == "Here is the street I liked."
    text, image = second["parts"]
    assert (text["type"], text["text"]) == ("text", "Here is the street I liked.")
    assert {key: image[key] for key in ("type", "id", "mime_type", "description", "text")} == {
        "type": "image",
        "id": "photo-1",
        "mime_type": "image/PNG",
        "description": "A tiled street in Alfama",
        "text": None,
    }
    assert "bytes" not in image
    assert third["content"] == "Príncipe Real is calm at night."


def test_image_bytes_come_in_base64_when_asked(viewer_api, world):
    listed = viewer_api.get(messages_url(), {"include_image_bytes": "true"}).json()["results"]
    single = viewer_api.get(one(world.message_ids[1]), {"include_image_bytes": "true"}).json()

    assert base64.b64decode(listed[1]["parts"][1]["bytes"]) == png_bytes("blue")
    assert base64.b64decode(single["parts"][1]["bytes"]) == png_bytes("blue")
    assert "bytes" not in viewer_api.get(one(world.message_ids[1])).json()["parts"][1]


def test_pages_follow_the_next_link_in_seq_no_order(viewer_api, long_thread):
    first = viewer_api.get(messages_url("long"), {"limit": 4}).json()
    second = viewer_api.get(first["next"]).json()
    third = viewer_api.get(second["next"]).json()

    assert (contents(first), contents(second), contents(third)) == (
        ["m0", "m1", "m2", "m3"],
        ["m4", "m5", "m6", "m7"],
        ["m8", "m9"],
    )
    assert third["next"] is None


def test_a_page_stays_right_when_earlier_messages_are_deleted_and_new_ones_come(viewer_api, agent_memory, long_thread):
    first = viewer_api.get(messages_url("long"), {"limit": 4}).json()
    thread = agent_memory.get_thread("long")
    for message_id in ("m1", "m2", "m5"):
        thread.delete_message(message_id)
    thread.add_messages([{"role": "user", "content": "m10"}])

    second = viewer_api.get(first["next"]).json()

    assert contents(second) == ["m4", "m6", "m7", "m8"]
    assert contents(viewer_api.get(second["next"]).json()) == ["m9", "m10"]


def test_the_engines_windows_last_n_and_seq_no_ranges(viewer_api, long_thread):
    assert texts(viewer_api, last_n=3) == ["m7", "m8", "m9"]
    assert texts(viewer_api, range_start_seq_no=2, range_end_seq_no=5) == ["m2", "m3", "m4"]
    assert texts(viewer_api, range_start_seq_no=8) == ["m8", "m9"]
    assert texts(viewer_api, range_end_seq_no=2) == ["m0", "m1"]
    assert texts(viewer_api, last_n=2, range_end_seq_no=5) == ["m3", "m4"]
    assert texts(viewer_api, last_n=50) == [f"m{index}" for index in range(10)]
    assert texts(viewer_api, range_start_seq_no=20) == []


def test_a_range_is_paged_within_its_bounds(viewer_api, long_thread):
    first = viewer_api.get(messages_url("long"), {"range_start_seq_no": 3, "range_end_seq_no": 8, "limit": 3}).json()
    second = viewer_api.get(first["next"]).json()

    assert contents(first) == ["m3", "m4", "m5"]
    assert contents(second) == ["m6", "m7"] and second["next"] is None
    assert viewer_api.get(messages_url("long"), {"last_n": 3}).json()["next"] is None


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"last_n": "0"}, "last_n"),
        ({"last_n": "-2"}, "last_n"),
        ({"last_n": "201"}, "last_n"),
        ({"last_n": "three"}, "last_n"),
        ({"last_n": "3", "limit": "2"}, "limit"),
        ({"last_n": "3", "cursor": encode_cursor(2)}, "cursor"),
        ({"range_start_seq_no": "-1"}, "range_start_seq_no"),
        ({"range_start_seq_no": "5", "range_end_seq_no": "5"}, "range_end_seq_no"),
        ({"range_start_seq_no": "6", "range_end_seq_no": "2"}, "range_end_seq_no"),
        ({"range_end_seq_no": str(2**64)}, "range_end_seq_no"),
        ({"limit": "0"}, "limit"),
        ({"cursor": "forged"}, "cursor"),
        ({"cursor": encode_cursor("m3")}, "cursor"),
        ({"include_image_bytes": "maybe"}, "include_image_bytes"),
    ],
)
def test_bad_windows_are_a_400_under_their_parameter(viewer_api, long_thread, params, field):
    response = viewer_api.get(messages_url("long"), params)

    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()


def test_the_messages_of_a_missing_thread_are_a_404(viewer_api, curator_api, world):
    assert viewer_api.get(messages_url("no-such-thread")).status_code == 404
    response = curator_api.post(
        messages_url("no-such-thread"), {"messages": [{"role": "user", "content": "x"}]}, format="json"
    )
    assert response.status_code == 404
    assert CurationEntry.objects.count() == 0


def test_a_message_comes_with_its_version_as_etag_and_only_under_its_thread(viewer_api, agent_memory, world):
    agent_memory.create_thread(thread_id="other", user_id="alice")

    response = viewer_api.get(one(world.message_ids[0]))

    assert response.status_code == 200 and response["ETag"] == '"1"'
    assert response.json()["content"] == "I'm vegetarian. Find me a quiet hotel in Lisbon."
    assert viewer_api.get(one(world.message_ids[0], thread_id="other")).status_code == 404
    assert viewer_api.get(one("no-such-message")).status_code == 404


# --- adding a batch -------------------------------------------------------------------------


def test_a_batch_of_text_and_image_parts_is_stored_as_the_agent_would_and_recorded(
    curator_api, curator, agent_memory, world
):
    batch = {
        "messages": [
            {"role": "user", "content": "Is breakfast included?", "id": "q-1", "metadata": {"channel": "app"}},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "And this one?"},
                    {"type": "image", "bytes": b64(png_bytes("red")), "mime_type": "image/png", "id": "photo-2"},
                    {"type": "image", "bytes": b64(png_bytes("green")), "description": "A garden", "id": "photo-3"},
                ],
                "timestamp": "2026-05-01T10:00:00+02:00",
            },
        ]
    }

    response = curator_api.post(messages_url(), batch, format="json")

    assert response.status_code == 201, response.content
    stored = response.json()["messages"]
    assert [message["seq_no"] for message in stored] == [3, 4]
    assert response["Location"] == f"{messages_url()}?range_start_seq_no=3&range_end_seq_no=5"
    assert contents({"results": curator_api.get(response["Location"]).json()["results"]}) == [
        "Is breakfast included?",
        "And this one?",
    ]
    assert (stored[0]["id"], stored[0]["metadata"], stored[0]["user_id"]) == ("q-1", {"channel": "app"}, "alice")
    assert stored[1]["timestamp"].startswith("2026-05-01T08:00:00")
    assert [(part["type"], part["id"], part["description"]) for part in stored[1]["parts"][1:]] == [
        ("image", "photo-2", ""),
        ("image", "photo-3", "A garden"),
    ]
    assert agent_memory.get_image("photo-2", include_bytes=True).bytes == png_bytes("red")
    assert agent_memory.get_image("photo-3").message_id == stored[1]["id"]
    entries = list(CurationEntry.objects.order_by("id"))
    assert [(e.object_kind, e.action, e.object_id, e.thread_id, e.token_name) for e in entries] == [
        ("message", "create", "q-1", "trip-42", "carl-script"),
        ("message", "create", stored[1]["id"], "trip-42", "carl-script"),
    ]
    assert [entry.summary for entry in entries] == ["Added a message", "Added a message with 2 images"]
    assert entries[0].after["content"] == "Is breakfast included?"

    Curation(agent_memory, Actor(curator)).revert(entries[1])  # undoing one message deletes it and its images

    assert agent_memory.get_thread_record("trip-42").message_count == 4
    with pytest.raises(KeyError):
        agent_memory.get_image("photo-2")


def test_a_content_part_without_a_type_is_text(curator_api, agent_memory, world):
    response = curator_api.post(
        messages_url(), {"messages": [{"role": "user", "content": [{"text": "Plain part."}]}]}, format="json"
    )

    assert response.status_code == 201, response.content
    assert response.json()["messages"][0]["parts"][0]["type"] == "text"


def refused(client, agent_memory, body, status=400) -> dict:
    response = client.post(messages_url(), body, format="json")
    assert response.status_code == status, response.content
    assert agent_memory.get_thread_record("trip-42").message_count == 3
    assert len(agent_memory.list_images(thread_id="trip-42")) == 2
    assert CurationEntry.objects.count() == 0
    return response.json()


def noisy_png() -> bytes:
    """A PNG whose pixel data is long enough to cut in the middle."""
    buffer = io.BytesIO()
    Image.effect_noise((64, 64), 64).convert("RGB").save(buffer, format="PNG")
    return buffer.getvalue()


def image_part(data: bytes, **extra) -> dict:
    return {"type": "image", "bytes": b64(data), **extra}


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"content": "no role"}, "messages[0].role"),
        ({"role": "", "content": "x"}, "messages[0].role"),
        ({"role": "user\x00", "content": "x"}, "messages[0].role"),
        ({"role": "é" * 300, "content": "x"}, "messages[0].role"),
        ({"role": "user"}, "messages[0].content"),
        ({"role": "user", "content": "nul\x00inside"}, "messages[0].content"),
        ({"role": "user", "content": "x" * 1_000_001}, "messages[0].content"),
        ({"role": 7, "content": "x"}, "messages[0].role"),
        ({"role": "user", "content": 42}, "messages[0].content"),
        ({"role": "user", "content": {"text": "x"}}, "messages[0].content"),
        ({"role": "user", "content": []}, "messages[0].content"),
        ({"role": "user", "content": [{"type": "text", "text": "x"}] * 101}, "messages[0].content"),
        ({"role": "user", "content": "x", "timestamp": "yesterday"}, "messages[0].timestamp"),
        ({"role": "user", "content": "x", "metadata": [1]}, "messages[0].metadata"),
        ({"role": "user", "content": "x", "id": ""}, "messages[0].id"),
        ({"role": "user", "content": "x", "contents": "typo"}, "messages[0].contents"),
        ({"role": "user", "content": [{"type": "audio", "bytes": "AAAA"}]}, "messages[0].content[0].type"),
        ({"role": "user", "content": [{"bytes": "AAAA"}]}, "messages[0].content[0].type"),
        ({"role": "user", "content": [{"type": "text"}]}, "messages[0].content[0].text"),
        ({"role": "user", "content": [{"type": "text", "text": "x", "bytes": "AAAA"}]}, "messages[0].content[0].bytes"),
        ({"role": "user", "content": [{"type": "image", "description": "no bytes"}]}, "messages[0].content[0].bytes"),
        ({"role": "user", "content": [{"type": "image", "bytes": "not base64!"}]}, "messages[0].content[0].bytes"),
        ({"role": "user", "content": [{"type": "image", "bytes": "QUJ"}]}, "messages[0].content[0].bytes"),
        ({"role": "user", "content": [{"type": "image", "bytes": 12}]}, "messages[0].content[0].bytes"),
        (
            {"role": "user", "content": [{"type": "image", "bytes": "AAAA", "mime_type": "image/gif"}]},
            "messages[0].content[0].mime_type",
        ),
        (
            {"role": "user", "content": [{"type": "image", "bytes": "AAAA", "url": "http://x"}]},
            "messages[0].content[0].url",
        ),
        ({"role": "user", "content": ["just a string"]}, "messages[0].content[0].non_field_errors"),
    ],
)
def test_a_malformed_message_is_a_400_under_its_place_in_the_batch(curator_api, agent_memory, world, message, field):
    body = refused(curator_api, agent_memory, {"messages": [message]})

    assert field in body["errors"], body


ROLE_REFUSED = "\u201c{}\u201d is not a message role: use user, assistant, system or tool."


@pytest.mark.parametrize("role", ["assitant", "User", "narrator"])
def test_a_role_that_is_not_one_of_the_roles_is_a_400_and_stores_nothing(curator_api, agent_memory, world, role):
    body = refused(
        curator_api, agent_memory, {"messages": [{"role": "user", "content": "ok"}, {"role": role, "content": "x"}]}
    )

    assert body["errors"] == {"messages[1].role": [ROLE_REFUSED.format(role)]}


def test_every_role_is_taken(curator_api, agent_memory, world):
    batch = [{"role": role, "content": role} for role in ("user", "assistant", "system", "tool")]

    response = curator_api.post(messages_url(), {"messages": batch}, format="json")

    assert response.status_code == 201, response.content
    assert [message["role"] for message in response.json()["messages"]] == ["user", "assistant", "system", "tool"]


@pytest.mark.parametrize(
    ("part", "message"),
    [
        (image_part(b"garbage, not an image"), "not a readable image"),
        (image_part(noisy_png()[:6000]), "damaged image: image file is truncated"),
        (image_part(png_bytes(), mime_type="image/jpeg"), "the bytes are image/PNG"),
    ],
)
def test_bytes_the_engine_cannot_read_as_an_image_are_a_400_and_store_nothing(
    curator_api, agent_memory, world, part, message
):
    body = refused(
        curator_api,
        agent_memory,
        {"messages": [{"role": "user", "content": "fine"}, {"role": "user", "content": [part]}]},
    )

    assert message in body["errors"]["messages"][0], body


def test_an_image_over_the_engines_pixel_limit_is_a_413(curator_api, agent_memory, world):
    buffer = io.BytesIO()
    Image.new("1", (8000, 6000)).save(buffer, format="PNG")  # 48 million pixels in a few kilobytes

    body = refused(
        curator_api, agent_memory, {"messages": [{"role": "user", "content": [image_part(buffer.getvalue())]}]}, 413
    )

    assert "pixels; the limit is 40000000 pixels" in body["detail"]


def test_an_image_over_the_engines_byte_limit_is_a_413(curator_api, agent_memory, world, monkeypatch):
    monkeypatch.setattr(
        agent_memory, "image_input_limit_config", ImageInputLimitConfig(max_raw_image_bytes=len(png_bytes()) - 1)
    )

    body = refused(
        curator_api, agent_memory, {"messages": [{"role": "user", "content": [image_part(png_bytes())]}]}, 413
    )

    assert body["detail"] == f"image is {len(png_bytes())} bytes; the limit is {len(png_bytes()) - 1}"


def test_a_taken_message_or_image_id_is_a_409_and_stores_nothing(curator_api, agent_memory, world):
    refused(
        curator_api, agent_memory, {"messages": [{"role": "user", "content": "x", "id": world.message_ids[0]}]}, 409
    )
    refused(
        curator_api,
        agent_memory,
        {"messages": [{"role": "user", "content": [image_part(png_bytes(), id=world.photo_id)]}]},
        409,
    )


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"messages": []},
        {"messages": "hello"},
        {"messages": [{"role": "user", "content": "x"}] * 501},
        [{"role": "user", "content": "x"}],
    ],
)
def test_a_batch_that_is_not_a_list_of_1_to_500_messages_is_a_400(curator_api, agent_memory, world, body):
    refused(curator_api, agent_memory, body)


def test_a_batch_is_json_only(curator_api, agent_memory, world):
    response = curator_api.post(messages_url(), {"messages": "x"}, format="multipart")

    assert response.status_code == 415
    assert agent_memory.get_thread_record("trip-42").message_count == 3


def test_two_messages_with_one_id_in_a_batch_store_nothing(curator_api, agent_memory, world):
    body = refused(
        curator_api,
        agent_memory,
        {"messages": [{"role": "user", "content": "a", "id": "same"}, {"role": "user", "content": "b", "id": "same"}]},
    )

    assert "same id twice" in body["errors"]["messages"][0]


# --- editing and deleting -------------------------------------------------------------------


def test_an_edit_keeps_the_images_and_moves_the_etag(curator_api, agent_memory, world):
    response = curator_api.patch(
        one(world.message_ids[1]),
        {"content": "The street, at night.", "role": "assistant", "metadata": {"edited": True}},
        format="json",
        HTTP_IF_MATCH='"1"',
    )

    assert response.status_code == 200, response.content
    assert response["ETag"] == '"2"'
    body = response.json()
    assert (body["content"], body["role"], body["metadata"]) == ("The street, at night.", "assistant", {"edited": True})
    assert [part["type"] for part in body["parts"]] == ["text", "image"] and body["parts"][1]["id"] == "photo-1"
    entry = CurationEntry.objects.get()
    assert (entry.object_kind, entry.action, entry.token_name) == ("message", "update", "carl-script")
    assert entry.before["content"] == "Here is the street I liked."


def test_an_edit_of_the_timestamp_is_stored_in_utc(curator_api, agent_memory, world):
    response = curator_api.patch(one(world.message_ids[0]), {"timestamp": "2026-01-02T03:04:05+01:00"}, format="json")

    assert response.status_code == 200, response.content
    assert agent_memory.get_message_record("trip-42", world.message_ids[0]).timestamp.startswith("2026-01-02T02:04:05")


def test_an_edit_to_a_role_that_is_not_one_of_the_roles_is_a_400(curator_api, agent_memory, world):
    response = curator_api.patch(one(world.message_ids[0]), {"role": "assitant", "content": "x"}, format="json")

    assert response.status_code == 400, response.content
    assert response.json()["errors"] == {"role": [ROLE_REFUSED.format("assitant")]}
    assert agent_memory.get_message_record("trip-42", world.message_ids[0]).version == 1
    assert CurationEntry.objects.count() == 0


def test_a_stored_role_that_is_none_of_them_reads_back_and_may_be_sent_unchanged(curator_api, agent_memory, world):
    [message_id] = agent_memory.get_thread("trip-42").add_messages([{"role": "assitant", "content": "Typo."}])

    read = curator_api.get(one(message_id))
    assert read.status_code == 200 and read.json()["role"] == "assitant"

    kept = curator_api.patch(one(message_id), {"role": "assitant", "content": "Typo, fixed."}, format="json")
    assert kept.status_code == 200, kept.content
    assert (kept.json()["role"], kept.json()["content"]) == ("assitant", "Typo, fixed.")

    other = curator_api.patch(one(message_id), {"role": "asistant"}, format="json")
    assert other.status_code == 400 and other.json()["errors"] == {"role": [ROLE_REFUSED.format("asistant")]}

    fixed = curator_api.patch(one(message_id), {"role": "assistant"}, format="json")
    assert fixed.status_code == 200 and fixed.json()["role"] == "assistant"


def test_an_edit_that_changes_nothing_records_nothing(curator_api, world):
    response = curator_api.patch(one(world.message_ids[0]), {"role": "user"}, format="json")

    assert response.status_code == 200 and response["ETag"] == '"1"'
    assert CurationEntry.objects.count() == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "non_field_errors"),
        ({"timestamp": "yesterday"}, "timestamp"),
        ({"timestamp": None}, "timestamp"),
        ({"role": ""}, "role"),
        ({"metadata": "x"}, "metadata"),
        ({"content": ["parts are for new messages"]}, "content"),
    ],
)
def test_a_bad_edit_is_a_400_and_writes_nothing(curator_api, agent_memory, world, body, field):
    response = curator_api.patch(one(world.message_ids[0]), body, format="json")

    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()
    assert agent_memory.get_message_record("trip-42", world.message_ids[0]).version == 1


def test_an_edit_against_an_old_etag_is_a_412_and_writes_nothing(curator_api, agent_memory, world):
    agent_memory.get_thread("trip-42").update_message(world.message_ids[0], content="Changed meanwhile.")

    response = curator_api.patch(one(world.message_ids[0]), {"content": "Lost."}, format="json", HTTP_IF_MATCH='"1"')

    assert response.status_code == 412
    assert agent_memory.get_message_record("trip-42", world.message_ids[0]).content == "Changed meanwhile."
    assert curator_api.delete(one(world.message_ids[0]), HTTP_IF_MATCH='"1"').status_code == 412
    assert CurationEntry.objects.count() == 0


def test_a_delete_is_a_204_takes_the_images_and_can_be_undone(curator_api, curator, agent_memory, world):
    response = curator_api.delete(one(world.message_ids[1]), HTTP_IF_MATCH='"1"')

    assert response.status_code == 204
    assert curator_api.get(one(world.message_ids[1])).status_code == 404
    with pytest.raises(KeyError):
        agent_memory.get_image(world.photo_id)
    entry = CurationEntry.objects.get()
    assert (entry.action, entry.summary, entry.token_name) == (
        "delete",
        "Deleted the message and its 1 image",
        "carl-script",
    )

    Curation(agent_memory, Actor(curator)).revert(entry)

    assert agent_memory.get_image(world.photo_id).message_id == world.message_ids[1]


def test_writes_to_a_missing_message_are_404s(curator_api, world):
    assert curator_api.patch(one("gone"), {"content": "x"}, format="json").status_code == 404
    assert curator_api.delete(one("gone")).status_code == 404
    assert curator_api.delete(one(world.message_ids[0], thread_id="gone")).status_code == 404
