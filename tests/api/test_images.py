"""/api/v1/images/: each persona, the listing, multipart uploads and their limits (413) and types
(415), the bytes, edits with ETags, deletes, and the curation history."""

from __future__ import annotations

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from memory.engine import ImageInputLimitConfig
from memory.models import CurationEntry
from tests.web.world import World, build_world, png_bytes

LIST = "/api/v1/images/"


def one(image_id: str) -> str:
    return f"{LIST}{image_id}/"


def content(image_id: str) -> str:
    return f"{LIST}{image_id}/content/"


def upload(data: bytes, name: str = "photo.png", content_type: str = "image/png") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type=content_type)


def encoded(image_format: str, size: tuple[int, int] = (8, 8)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, "orange").save(buffer, format=image_format)
    return buffer.getvalue()


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def image_ids(agent_memory) -> set[str]:
    return {image.id for image in agent_memory.list_images(limit=None)}


# --- who may do what ------------------------------------------------------------------------


def test_without_credentials_or_with_a_dead_token_nothing_is_shown(anonymous, revoked_api, expired_api, world):
    for client in (anonymous, revoked_api, expired_api):
        for url in (LIST, one(world.image_id), content(world.image_id)):
            assert client.get(url).status_code == 401


def test_viewers_read_images_and_their_bytes_but_cannot_change_them(
    viewer_api, curator_reading_api, world, agent_memory
):
    before = image_ids(agent_memory)
    for client in (viewer_api, curator_reading_api):
        assert client.get(LIST).status_code == 200
        assert client.get(one(world.image_id)).status_code == 200
        assert client.get(content(world.image_id)).content == png_bytes("red")
        refused = client.post(LIST, {"image": upload(png_bytes()), "thread_id": world.thread_id}, format="multipart")
        assert refused.status_code == 403
        assert client.patch(one(world.image_id), {"description": "x"}, format="json").status_code == 403
        assert client.delete(one(world.image_id)).status_code == 403
    assert image_ids(agent_memory) == before
    assert agent_memory.get_image(world.image_id).content == "A hand-drawn map of Lisbon"
    assert CurationEntry.objects.count() == 0


def test_a_session_uploads_with_its_csrf_token(session_api, world, agent_memory):
    refused = session_api.post(LIST, {"image": upload(png_bytes()), "thread_id": world.thread_id}, format="multipart")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]

    session_api.get("/")
    token = session_api.cookies["csrftoken"].value
    made = session_api.post(
        LIST,
        {"image": upload(png_bytes()), "thread_id": world.thread_id},
        format="multipart",
        HTTP_X_CSRFTOKEN=token,
    )
    assert made.status_code == 201, made.content
    entry = CurationEntry.objects.get()
    assert (entry.actor_name, entry.via, entry.token_name) == ("carl", "api", "")


# --- reading --------------------------------------------------------------------------------


def test_an_image_record_says_what_it_is_and_where_its_bytes_are(viewer_api, world):
    response = viewer_api.get(one(world.photo_id))

    assert response.status_code == 200
    assert response["ETag"] == '"1"'
    body = response.json()
    assert body["id"] == world.photo_id
    assert body["description"] == "A tiled street in Alfama"
    assert body["mime_type"] == "image/png"
    assert body["message_id"] == world.message_ids[1]
    assert (body["thread_id"], body["user_id"], body["agent_id"]) == (world.thread_id, "alice", "atlas")
    assert body["content_url"] == f"http://testserver{content(world.photo_id)}"
    assert "content" not in body


def test_the_bytes_come_with_their_stored_type_whatever_the_client_accepts(viewer_api, world):
    for accept in ("image/png", "image/*", "application/json", "*/*"):
        response = viewer_api.get(content(world.image_id), HTTP_ACCEPT=accept)
        assert response.status_code == 200, accept
        assert response["Content-Type"] == "image/png"
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["ETag"] == '"1"'
        assert response.content == png_bytes("red")


def test_a_missing_image_is_a_404_in_json(viewer_api, world):
    for url, accept in ((one("no-such-image"), "application/json"), (content("no-such-image"), "image/png")):
        response = viewer_api.get(url, HTTP_ACCEPT=accept)
        assert response.status_code == 404
        assert response["Content-Type"] == "application/json"
        assert "no-such-image" in response.json()["detail"]


def test_the_list_filters_by_scope_and_metadata_and_pages_by_cursor(viewer_api, agent_memory, world):
    agent_memory.add_image(png_bytes("white"), image_id="logo", user_id="bob", description="Bob's logo")
    thread = agent_memory.get_thread(world.thread_id)
    for index in range(3):
        thread.add_image(png_bytes("black"), image_id=f"scan-{index}", description="scan", metadata={"odd": index % 2})

    first = viewer_api.get(LIST, {"thread_id": world.thread_id, "limit": 2}).json()
    assert [image["id"] for image in first["results"]] == [world.photo_id, world.image_id]
    rest = viewer_api.get(first["next"]).json()
    assert [image["id"] for image in rest["results"]] == ["scan-0", "scan-1"]
    assert [image["id"] for image in viewer_api.get(rest["next"]).json()["results"]] == ["scan-2"]

    by_user = viewer_api.get(LIST, {"user_id": "bob"}).json()
    assert [image["id"] for image in by_user["results"]] == ["logo"] and by_user["next"] is None
    unthreaded = viewer_api.get(LIST, {"unscoped": "thread_id"}).json()["results"]
    assert [image["id"] for image in unthreaded] == ["logo"]
    by_metadata = viewer_api.get(LIST, {"metadata_filter": '{"odd": 0}'}).json()["results"]
    assert [image["id"] for image in by_metadata] == ["scan-0", "scan-2"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"cursor": "forged"}, "cursor"),
        ({"limit": "0"}, "limit"),
        ({"metadata_filter": "[1]"}, "metadata_filter"),
        ({"metadata_filter": '{"n": {"$nope": 1}}'}, "metadata_filter"),
        ({"user_id": "alice", "unscoped": "user_id"}, "user_id"),
        ({"user_id": "x" * 600}, "user_id"),
    ],
)
def test_bad_filters_are_a_400_with_the_parameter(viewer_api, world, params, field):
    response = viewer_api.get(LIST, params)

    assert response.status_code == 400, response.content
    assert field in response.json()["errors"]


# --- uploading ------------------------------------------------------------------------------


def test_a_curator_uploads_an_image_into_a_thread(curator_api, agent_memory, world):
    data = encoded("JPEG", (32, 20))
    response = curator_api.post(
        LIST,
        {
            "image": upload(data, "street.jpg", "image/jpeg"),
            "thread_id": world.thread_id,
            "description": "A yellow tram",
            "metadata": '{"source": "phone"}',
            "id": "tram-1",
        },
        format="multipart",
    )

    assert response.status_code == 201, response.content
    assert response["Location"] == one("tram-1")
    assert response["ETag"] == '"1"'
    body = response.json()
    assert (body["id"], body["description"], body["mime_type"]) == ("tram-1", "A yellow tram", "image/jpeg")
    assert (body["thread_id"], body["user_id"], body["agent_id"], body["message_id"]) == (
        world.thread_id,
        "alice",
        "atlas",
        None,
    )
    stored = agent_memory.get_image("tram-1", include_bytes=True)
    assert stored.bytes == data and stored.metadata == {"source": "phone"}
    entry = CurationEntry.objects.get()
    assert (entry.object_kind, entry.object_id, entry.action, entry.token_name, entry.via) == (
        "image",
        "tram-1",
        "create",
        "carl-script",
        "api",
    )


def test_an_upload_as_a_message_adds_a_message_holding_the_image(curator_api, agent_memory, world):
    response = curator_api.post(
        LIST,
        {
            "image": upload(encoded("WEBP")),
            "thread_id": world.thread_id,
            "add_as": "message",
            "text": "And this square?",
            "description": "An orange square",
        },
        format="multipart",
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["mime_type"] == "image/webp" and body["description"] == "An orange square"
    message = agent_memory.get_message_record(world.thread_id, body["message_id"])
    assert (message.role, message.content) == ("user", "And this square?")
    assert [part["id"] for part in message.parts if part["type"] == "image"] == [body["id"]]
    assert CurationEntry.objects.get().object_kind == "message"


def test_an_upload_without_a_thread_belongs_to_its_user(curator_api, agent_memory, world):
    response = curator_api.post(LIST, {"image": upload(png_bytes()), "user_id": "bob"}, format="multipart")

    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["user_id"], body["agent_id"], body["thread_id"]) == ("bob", None, None)
    assert [image.id for image in agent_memory.list_images(user_id="bob")] == [body["id"]]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"image": None, "thread_id": "trip-42"}, "image"),
        ({"image": "not a file", "thread_id": "trip-42"}, "image"),
        ({"image": upload(b""), "thread_id": "trip-42"}, "image"),
        ({"thread_id": "no-such-thread"}, "thread_id"),
        ({"add_as": "message"}, "thread_id"),
        ({"add_as": "sticker", "thread_id": "trip-42"}, "add_as"),
        ({"thread_id": "trip-42", "user_id": "bob"}, "user_id"),
        ({"thread_id": "trip-42", "metadata": "{not json"}, "metadata"),
        ({"thread_id": "trip-42", "metadata": "[1, 2]"}, "metadata"),
        ({"thread_id": "trip-42", "add_as": "message", "metadata": '{"a": 1}'}, "metadata"),
        ({"thread_id": "trip-42", "add_as": "message", "role": "r" * 600}, "role"),
        ({"thread_id": "trip-42", "add_as": "message", "role": "assitant"}, "role"),
        ({"user_id": "bob\x00"}, "user_id"),
        ({"thread_id": "trip-42", "id": "é" * 300}, "id"),
        ({"thread_id": "trip-42", "description": "x" * 1_000_001}, "description"),
        # Empty where the schema says not empty: not "not given" (an unset variable in a script).
        ({"thread_id": "", "user_id": "bob"}, "thread_id"),
        ({"thread_id": "trip-42", "add_as": ""}, "add_as"),
        ({"thread_id": "trip-42", "add_as": "message", "role": ""}, "role"),
        ({"user_id": "", "agent_id": "atlas"}, "user_id"),
        ({"thread_id": "trip-42", "id": ""}, "id"),
    ],
)
def test_bad_uploads_are_a_400_under_their_field_and_store_nothing(curator_api, agent_memory, world, fields, field):
    before = image_ids(agent_memory)
    body = {name: value for name, value in {"image": upload(png_bytes()), **fields}.items() if value is not None}

    response = curator_api.post(LIST, body, format="multipart")

    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()
    assert image_ids(agent_memory) == before
    assert CurationEntry.objects.count() == 0


def test_fields_that_may_be_empty_may_be_sent_empty(curator_api, agent_memory, world):
    body = {"image": upload(png_bytes()), "thread_id": world.thread_id, "description": "", "metadata": "", "text": ""}

    response = curator_api.post(LIST, body, format="multipart")

    assert response.status_code == 201, response.content
    assert (response.json()["description"], response.json()["metadata"]) == ("", None)


def test_a_taken_id_is_a_409_and_stores_nothing(curator_api, agent_memory, world):
    response = curator_api.post(
        LIST, {"image": upload(png_bytes("white")), "thread_id": world.thread_id, "id": world.image_id}
    )

    assert response.status_code == 409, response.content
    assert agent_memory.get_image(world.image_id, include_bytes=True).bytes == png_bytes("red")
    assert CurationEntry.objects.count() == 0


# --- limits (413) and types (415) -----------------------------------------------------------


def test_an_image_over_the_stores_byte_limit_is_a_413(curator_api, agent_memory, world, monkeypatch):
    monkeypatch.setattr(agent_memory, "image_input_limit_config", ImageInputLimitConfig(max_raw_image_bytes=500))
    big = encoded("PNG", (300, 300))
    assert len(big) > 500

    response = curator_api.post(LIST, {"image": upload(big), "thread_id": world.thread_id}, format="multipart")

    assert response.status_code == 413, response.content
    assert "the limit is 500" in response.json()["detail"]
    assert image_ids(agent_memory) == {world.image_id, world.photo_id}


def test_an_upload_far_over_the_limit_is_refused_before_it_is_read(curator_api, agent_memory, world, monkeypatch):
    monkeypatch.setattr(agent_memory, "image_input_limit_config", ImageInputLimitConfig(max_raw_image_bytes=500))
    huge = b"\x89PNG\r\n\x1a\n" + bytes(4 * 1024 * 1024)

    response = curator_api.post(LIST, {"image": upload(huge), "thread_id": world.thread_id}, format="multipart")

    assert response.status_code == 413
    assert "an image may have 500" in response.json()["detail"]


def test_an_image_over_the_pixel_limit_is_a_413(curator_api, agent_memory, world, monkeypatch):
    monkeypatch.setattr(agent_memory, "image_input_limit_config", ImageInputLimitConfig(max_image_pixels=100))

    for add_as in ("image", "message"):
        response = curator_api.post(
            LIST, {"image": upload(png_bytes()), "thread_id": world.thread_id, "add_as": add_as}, format="multipart"
        )
        assert response.status_code == 413, response.content
        assert "24x16 pixels" in response.json()["detail"]
    assert image_ids(agent_memory) == {world.image_id, world.photo_id}
    assert len(agent_memory.list_thread_messages(world.thread_id)) == 3


def test_fields_over_djangos_upload_limit_are_a_413(curator_api, agent_memory, world, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000

    response = curator_api.post(
        LIST, {"image": upload(png_bytes()), "thread_id": world.thread_id, "description": "x" * 5000}
    )

    assert response.status_code == 413, response.content
    assert response.json()["detail"].startswith("The request body is over the size limits")
    assert CurationEntry.objects.count() == 0


@pytest.mark.parametrize(
    ("data", "content_type"),
    [
        (b"GIF89a not really", "application/octet-stream"),
        (b"just some text", ""),
        (encoded("GIF"), "image/gif"),
        (encoded("GIF"), "application/octet-stream"),
        (encoded("BMP"), "application/octet-stream"),
        (png_bytes()[:40], "image/png"),
        (png_bytes(), "text/plain"),
        (png_bytes(), "image/svg+xml"),
    ],
    ids=["garbage", "text", "declared-gif", "gif", "bmp", "truncated", "declared-text", "declared-svg"],
)
def test_anything_but_a_png_jpeg_or_webp_image_is_a_415(curator_api, agent_memory, world, data, content_type):
    response = curator_api.post(
        LIST, {"image": upload(data, "upload.bin", content_type), "thread_id": world.thread_id}, format="multipart"
    )

    assert response.status_code == 415, response.content
    assert "detail" in response.json()
    assert image_ids(agent_memory) == {world.image_id, world.photo_id}
    assert CurationEntry.objects.count() == 0


def test_an_upload_that_is_not_multipart_is_a_415(curator_api, agent_memory, world):
    response = curator_api.post(LIST, {"image": "iVBORw0KGgo=", "thread_id": world.thread_id}, format="json")

    assert response.status_code == 415
    assert "application/json" in response.json()["detail"]
    assert image_ids(agent_memory) == {world.image_id, world.photo_id}


# --- editing and deleting -------------------------------------------------------------------


def test_an_edit_writes_description_and_metadata_and_moves_the_etag(curator_api, agent_memory, world):
    response = curator_api.patch(
        one(world.image_id),
        {"description": "A map of Porto", "metadata": {"source": "scan"}},
        format="json",
        HTTP_IF_MATCH='"1"',
    )

    assert response.status_code == 200, response.content
    assert response["ETag"] == '"2"'
    assert (response.json()["description"], response.json()["metadata"]) == ("A map of Porto", {"source": "scan"})
    image = agent_memory.get_image(world.image_id)
    assert (image.content, image.metadata) == ("A map of Porto", {"source": "scan"})
    entry = CurationEntry.objects.get()
    assert (entry.action, entry.token_name) == ("update", "carl-script")


def test_an_edit_against_an_old_etag_is_a_412_and_writes_nothing(curator_api, agent_memory, world):
    agent_memory.update_image(world.image_id, description="Changed meanwhile")

    response = curator_api.patch(one(world.image_id), {"description": "Lost"}, format="json", HTTP_IF_MATCH='"1"')

    assert response.status_code == 412
    assert agent_memory.get_image(world.image_id).content == "Changed meanwhile"
    assert curator_api.delete(one(world.image_id), HTTP_IF_MATCH='"1"').status_code == 412
    assert agent_memory.get_image(world.image_id)
    assert CurationEntry.objects.count() == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "non_field_errors"),
        ({"metadata": [1, 2]}, "metadata"),
        ({"description": None}, "description"),
        ({"description": "x" * 1_000_001}, "description"),
    ],
)
def test_bad_edits_are_a_400_and_write_nothing(curator_api, agent_memory, world, body, field):
    response = curator_api.patch(one(world.image_id), body, format="json")

    assert response.status_code == 400, response.content
    assert field in response.json()["errors"]
    assert agent_memory.get_image(world.image_id).version == 1


def test_editing_or_deleting_a_missing_image_is_a_404(curator_api, world):
    assert curator_api.patch(one("nope"), {"description": "x"}, format="json").status_code == 404
    assert curator_api.delete(one("nope")).status_code == 404


def test_a_standalone_image_is_deleted_with_its_bytes_and_can_be_restored(curator_api, agent_memory, world):
    response = curator_api.delete(one(world.image_id), HTTP_IF_MATCH='"1"')

    assert response.status_code == 204
    assert curator_api.get(content(world.image_id)).status_code == 404
    entry = CurationEntry.objects.get()
    assert (entry.action, entry.object_id, entry.token_name) == ("delete", world.image_id, "carl-script")
    assert entry.before is not None


def test_an_image_of_a_message_goes_only_with_its_message(curator_api, agent_memory, world):
    response = curator_api.delete(one(world.photo_id))

    assert response.status_code == 409
    assert world.message_ids[1] in response.json()["detail"]
    assert agent_memory.get_image(world.photo_id)
    assert CurationEntry.objects.count() == 0
