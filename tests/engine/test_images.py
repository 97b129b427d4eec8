"""Standalone images: add_image, update_image, delete_image, list_images and image search.

API_SPEC §1.4 (TTL), §4.3.3-§4.3.6, §9.4-§9.5; DECISIONS D3, D4, D9, D12. Every image is a real one made
with Pillow in the test. Runs on the conftest `thread` ("t1", user "u1", agent "a1") and `other_thread` ("t2",
same user and agent). Message-attached images are covered in test_image_messages.py.
"""

from __future__ import annotations

import asyncio
import io
import random
from datetime import UTC, datetime, timedelta

import pytest
from PIL import Image

from memory.engine import AgentMemory, ImageMimeType, ImageRecord, TimeToLiveAnchor
from memory.engine.types import ImageInputLimitConfig

from .helpers import parse_utc

PAST = "2000-01-01T00:00:00Z"
TIMESTAMP = TimeToLiveAnchor.TIMESTAMP


# --- real images -----------------------------------------------------------------------------


def encode(image_format: str, size: tuple[int, int] = (8, 8), color=(200, 30, 30), **options) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, image_format, **options)
    return buffer.getvalue()


def png_bytes(size: tuple[int, int] = (8, 8), color=(200, 30, 30)) -> bytes:
    return encode("PNG", size, color)


def jpeg_bytes(size: tuple[int, int] = (8, 8), color=(30, 200, 30)) -> bytes:
    return encode("JPEG", size, color)


def webp_bytes(size: tuple[int, int] = (8, 8), color=(30, 30, 200)) -> bytes:
    return encode("WEBP", size, color)


def gif_bytes() -> bytes:
    return encode("GIF")


def animated_bytes(image_format: str) -> bytes:
    """A two-frame animation (frames differ, so Pillow cannot merge them into one)."""
    first, second = Image.new("RGB", (8, 8), (255, 0, 0)), Image.new("RGB", (8, 8), (0, 0, 255))
    buffer = io.BytesIO()
    first.save(buffer, image_format, save_all=True, append_images=[second], duration=100, loop=0)
    data = buffer.getvalue()
    with Image.open(io.BytesIO(data)) as check:
        assert check.format == image_format and check.n_frames == 2, "the fixture itself must be animated"
    return data


def noise_bytes(image_format: str, size: tuple[int, int] = (64, 64), seed: int = 7) -> bytes:
    """Random pixels: they do not compress, so the file is large for its size (and truncations hurt)."""
    rng = random.Random(seed)
    pixels = bytes(rng.getrandbits(8) for _ in range(size[0] * size[1] * 3))
    buffer = io.BytesIO()
    Image.frombytes("RGB", size, pixels).save(buffer, image_format)
    return buffer.getvalue()


PNG = png_bytes()
JPEG = jpeg_bytes()
WEBP = webp_bytes()

VALID_IMAGES = [
    pytest.param(PNG, ImageMimeType.PNG, id="png"),
    pytest.param(JPEG, ImageMimeType.JPEG, id="jpeg"),
    pytest.param(WEBP, ImageMimeType.WEBP, id="webp"),
]

INVALID_IMAGES = [
    pytest.param(animated_bytes("PNG"), id="animated-png"),
    pytest.param(animated_bytes("WEBP"), id="animated-webp"),
    pytest.param(gif_bytes(), id="gif-unsupported"),
    pytest.param(b"this is not an image at all", id="garbage"),
    pytest.param(b"", id="empty"),
    pytest.param(PNG[:40], id="png-header-only"),
    pytest.param(noise_bytes("PNG")[:-200], id="truncated-png"),
    pytest.param(noise_bytes("JPEG")[:-200], id="truncated-jpeg"),
    pytest.param(noise_bytes("WEBP")[:-200], id="truncated-webp"),
]


def stored_images(store) -> list:
    """Every image record of the store, whatever its thread."""
    return list(store.list("image", limit=None))


def ids(records) -> list[str]:
    return [r.id for r in records]


# --- ImageMimeType and ImageInputLimitConfig (§9.5, D9) -----------------------------------------


def test_image_mime_type_values_are_the_vendor_spelling_and_lookup_ignores_case():
    assert [m.value for m in ImageMimeType] == ["image/JPEG", "image/PNG", "image/WEBP"]
    assert ImageMimeType("image/png") is ImageMimeType.PNG
    assert ImageMimeType("IMAGE/JPEG") is ImageMimeType.JPEG
    assert ImageMimeType("image/webp") is ImageMimeType.WEBP
    with pytest.raises(ValueError):
        ImageMimeType("image/gif")


def test_image_input_limit_config_defaults():
    config = ImageInputLimitConfig()
    assert config.max_raw_image_bytes == 10 * 1024 * 1024
    assert config.max_images_per_llm_request == 100
    assert config.max_total_raw_image_bytes_per_llm_request == 100 * 1024 * 1024


@pytest.mark.parametrize(
    "options",
    [
        {"max_raw_image_bytes": 0},
        {"max_raw_image_bytes": True},
        {"max_raw_image_bytes": 257 * 1024 * 1024},
        {"max_total_raw_image_bytes_per_llm_request": 257 * 1024 * 1024},
        {"max_image_pixels": -1},
    ],
)
def test_image_input_limit_config_rejects_bad_limits(options):
    with pytest.raises(ValueError):
        ImageInputLimitConfig(**options)


def test_image_input_limit_config_is_a_public_name():
    import memory.engine

    assert memory.engine.ImageInputLimitConfig is ImageInputLimitConfig


def test_agent_memory_rejects_an_image_input_limit_config_of_the_wrong_type(store):
    with pytest.raises(ValueError):
        AgentMemory(store, image_input_limit_config={"max_raw_image_bytes": 10})


# --- add_image (§4.3.3) ----------------------------------------------------------------------


def test_add_image_returns_a_generated_id_and_lists_the_image(thread):
    image_id = thread.add_image(PNG, description="a red square")
    assert isinstance(image_id, str) and image_id
    [record] = thread.list_images()
    assert isinstance(record, ImageRecord)
    assert record.id == image_id
    assert record.record_type == "image"
    assert record.content == "a red square"
    assert record.mime_type is ImageMimeType.PNG
    assert record.message_id is None
    assert record.bytes is None
    assert (record.thread_id, record.user_id, record.agent_id) == ("t1", "u1", "a1")


def test_add_image_generates_distinct_ids(thread):
    first = thread.add_image(PNG, description="one")
    second = thread.add_image(PNG, description="two")
    assert first != second
    assert ids(thread.list_images()) == [first, second]


def test_add_image_keeps_a_caller_supplied_id(thread):
    assert thread.add_image(PNG, description="mine", image_id="img-1") == "img-1"
    assert ids(thread.list_images()) == ["img-1"]


@pytest.mark.parametrize(("data", "expected"), VALID_IMAGES)
def test_add_image_detects_the_type_when_mime_type_is_omitted(thread, data, expected):
    image_id = thread.add_image(data, description="detected")
    [record] = thread.list_images(image_id=image_id)
    assert record.mime_type is expected


@pytest.mark.parametrize(("data", "expected"), VALID_IMAGES)
def test_add_image_accepts_a_matching_declared_type_as_member_or_any_case_string(thread, data, expected):
    first = thread.add_image(data, description="as member", mime_type=expected)
    second = thread.add_image(data, description="as lower case", mime_type=expected.value.lower())
    third = thread.add_image(data, description="as printed", mime_type=expected.value)
    for image_id in (first, second, third):
        assert thread.list_images(image_id=image_id)[0].mime_type is expected


@pytest.mark.parametrize(("data", "expected"), VALID_IMAGES)
def test_stored_bytes_round_trip_exactly(thread, store, data, expected):
    image_id = thread.add_image(data, description="round trip")
    assert store.get("image", image_id, include_bytes=True).bytes == data
    assert store.get("image", image_id).bytes is None
    assert thread.list_images(image_id=image_id, include_bytes=True)[0].bytes == data


@pytest.mark.parametrize(
    ("data", "declared"),
    [
        pytest.param(PNG, ImageMimeType.JPEG, id="png-declared-jpeg"),
        pytest.param(JPEG, "image/webp", id="jpeg-declared-webp"),
        pytest.param(WEBP, "image/png", id="webp-declared-png"),
        pytest.param(PNG, "image/gif", id="unknown-declared-type"),
        pytest.param(PNG, "png", id="not-a-mime-type"),
    ],
)
def test_add_image_with_a_wrong_declared_type_raises_and_stores_nothing(thread, store, data, declared):
    with pytest.raises(ValueError):
        thread.add_image(data, description="liar", mime_type=declared, image_id="bad")
    assert thread.list_images() == []
    assert store.get("image", "bad") is None
    assert stored_images(store) == []


@pytest.mark.parametrize("data", INVALID_IMAGES)
def test_add_image_rejects_invalid_images_and_stores_nothing(thread, store, data):
    with pytest.raises(ValueError):
        thread.add_image(data, description="invalid", image_id="bad")
    assert thread.list_images() == []
    assert store.get("image", "bad") is None
    assert stored_images(store) == []
    assert thread.search("invalid", record_types=["image"]) == []


@pytest.mark.parametrize("data", [pytest.param("a string", id="str"), pytest.param(None, id="none")])
def test_add_image_rejects_non_bytes(thread, store, data):
    with pytest.raises(ValueError):
        thread.add_image(data, description="not bytes")
    assert stored_images(store) == []


def test_add_image_over_the_byte_limit_raises_and_stores_nothing(store):
    big = noise_bytes("PNG")
    limit = 4096
    assert len(big) > limit > len(PNG)
    limited = AgentMemory(store, image_input_limit_config=ImageInputLimitConfig(max_raw_image_bytes=limit))
    thread = limited.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    with pytest.raises(ValueError):
        thread.add_image(big, description="too heavy", image_id="big")
    assert store.get("image", "big") is None
    assert stored_images(store) == []
    small_id = thread.add_image(PNG, description="light enough")
    assert ids(thread.list_images()) == [small_id]


def test_add_image_exactly_at_the_byte_limit_is_accepted(store):
    limited = AgentMemory(store, image_input_limit_config=ImageInputLimitConfig(max_raw_image_bytes=len(PNG)))
    thread = limited.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    image_id = thread.add_image(PNG, description="just fits")
    assert ids(thread.list_images()) == [image_id]


def test_add_image_over_the_pixel_limit_raises_and_stores_nothing(store):
    limited = AgentMemory(store, image_input_limit_config=ImageInputLimitConfig(max_image_pixels=1000))
    thread = limited.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    wide = png_bytes(size=(50, 50))
    with pytest.raises(ValueError):
        thread.add_image(wide, description="too many pixels", image_id="wide")
    assert stored_images(store) == []
    small_id = thread.add_image(png_bytes(size=(20, 20)), description="400 pixels")
    assert ids(thread.list_images()) == [small_id]


def test_the_default_limits_accept_an_ordinary_photo_sized_image(thread):
    image_id = thread.add_image(noise_bytes("JPEG", size=(640, 480)), description="a photo")
    assert thread.list_images()[0].id == image_id


@pytest.mark.parametrize(
    "scope",
    [
        {"user_id": "u1"},
        {"agent_id": "a1"},
        {"thread_id": "t1"},
        {"user_id": "u1", "agent_id": "a1", "thread_id": "t1"},
    ],
)
def test_add_image_accepts_scope_assertions_that_match_the_thread(thread, scope):
    image_id = thread.add_image(PNG, description="in scope", **scope)
    [record] = thread.list_images()
    assert record.id == image_id
    assert (record.thread_id, record.user_id, record.agent_id) == ("t1", "u1", "a1")


@pytest.mark.parametrize(
    "scope",
    [
        {"user_id": "u2"},
        {"agent_id": "a2"},
        {"thread_id": "t2"},
        {"user_id": None},
        {"agent_id": None},
    ],
)
def test_add_image_scope_assertion_that_contradicts_the_thread_raises_and_stores_nothing(
    thread, other_thread, store, scope
):
    with pytest.raises(ValueError):
        thread.add_image(PNG, description="out of scope", **scope)
    assert stored_images(store) == []
    assert other_thread.list_images() == []


@pytest.mark.parametrize(
    "description", [pytest.param({}, id="omitted"), pytest.param({"description": None}, id="none")]
)
def test_add_image_without_a_description_and_without_an_llm_stores_no_description(thread, description):
    image_id = thread.add_image(PNG, **description)
    [record] = thread.list_images()
    assert record.id == image_id
    assert record.content == ""


def test_add_image_stores_metadata(thread):
    image_id = thread.add_image(PNG, description="tagged", metadata={"kind": "photo", "n": 2})
    assert thread.list_images(image_id=image_id)[0].metadata == {"kind": "photo", "n": 2}


def test_add_image_timestamp_is_normalised_to_utc(thread):
    image_id = thread.add_image(PNG, description="timed", timestamp="2024-05-01T14:00:00+02:00")
    record = thread.list_images(image_id=image_id)[0]
    assert parse_utc(record.timestamp) == datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def test_add_image_without_a_timestamp_reads_back_the_creation_time(thread):
    before = datetime.now(UTC) - timedelta(seconds=5)
    image_id = thread.add_image(PNG, description="now")
    record = thread.list_images(image_id=image_id)[0]
    assert record.timestamp is not None
    assert before <= parse_utc(record.timestamp) <= datetime.now(UTC) + timedelta(seconds=5)


def test_add_image_ttl_days_sets_an_expiry_counted_from_creation(thread):
    image_id = thread.add_image(PNG, description="three days", ttl_days=3)
    record = thread.list_images(image_id=image_id)[0]
    assert record.expires_at is not None
    lifetime = parse_utc(record.expires_at) - parse_utc(record.created_at)
    assert abs(lifetime - timedelta(days=3)) < timedelta(seconds=5)


def test_add_image_without_ttl_and_without_retention_never_expires(thread):
    image_id = thread.add_image(PNG, description="forever")
    assert thread.list_images(image_id=image_id)[0].expires_at is None


def test_add_image_timestamp_anchor_counts_from_the_event_time(thread):
    image_id = thread.add_image(
        PNG, description="anchored", timestamp="2030-01-01T00:00:00Z", ttl_days=10, ttl_anchor=TIMESTAMP
    )
    record = thread.list_images(image_id=image_id)[0]
    assert parse_utc(record.expires_at) == datetime(2030, 1, 11, tzinfo=UTC)


def test_add_image_timestamp_anchor_without_a_timestamp_raises_and_stores_nothing(thread, store):
    with pytest.raises(ValueError):
        thread.add_image(PNG, description="undated", ttl_days=2, ttl_anchor=TIMESTAMP)
    assert stored_images(store) == []


def add_expired_image(thread, description: str = "long gone") -> str:
    return thread.add_image(PNG, description=description, timestamp=PAST, ttl_days=1, ttl_anchor=TIMESTAMP)


def test_an_expired_image_is_invisible(thread, store):
    image_id = add_expired_image(thread, "an expired yellow kite")
    assert thread.list_images() == []
    assert thread.list_images(image_id=image_id) == []
    assert store.get("image", image_id) is None
    assert image_id not in [r.id for r in thread.search("yellow kite", record_types=["image"])]


def test_add_image_async_twin(thread):
    image_id = asyncio.run(thread.add_image_async(PNG, description="async"))
    assert ids(asyncio.run(thread.list_images_async())) == [image_id]


# --- list_images (§4.3.6) --------------------------------------------------------------------


def test_list_images_returns_this_threads_images_in_insertion_order(thread, other_thread):
    first = thread.add_image(PNG, description="first")
    other = other_thread.add_image(JPEG, description="elsewhere")
    second = thread.add_image(WEBP, description="second")
    third = thread.add_image(JPEG, description="third")
    assert ids(thread.list_images()) == [first, second, third]
    assert ids(other_thread.list_images()) == [other]


def test_list_images_by_id(thread, other_thread):
    wanted = thread.add_image(PNG, description="wanted")
    thread.add_image(JPEG, description="not wanted")
    foreign = other_thread.add_image(PNG, description="another thread's")
    assert ids(thread.list_images(image_id=wanted)) == [wanted]
    assert thread.list_images(image_id="no-such-image") == []
    assert thread.list_images(image_id=foreign) == []


def test_list_images_never_loads_bytes_by_default(thread):
    thread.add_image(PNG, description="a")
    image_id = thread.add_image(JPEG, description="b")
    assert [r.bytes for r in thread.list_images()] == [None, None]
    assert thread.list_images(image_id=image_id)[0].bytes is None


def test_list_images_include_bytes_requires_an_image_id(thread):
    thread.add_image(PNG, description="a")
    with pytest.raises(ValueError):
        thread.list_images(include_bytes=True)


def test_list_images_include_bytes_with_an_id_loads_that_image(thread):
    thread.add_image(PNG, description="a")
    image_id = thread.add_image(JPEG, description="b")
    [record] = thread.list_images(image_id=image_id, include_bytes=True)
    assert record.bytes == JPEG


def test_list_images_metadata_filter(thread):
    photo = thread.add_image(PNG, description="photo", metadata={"kind": "photo", "tags": ["cat", "garden"]})
    sketch = thread.add_image(PNG, description="sketch", metadata={"kind": "sketch", "tags": ["dog"]})
    untagged = thread.add_image(PNG, description="untagged")
    assert ids(thread.list_images(metadata_filter={"kind": "photo"})) == [photo]
    assert ids(thread.list_images(metadata_filter={"tags": {"$array_contains": "garden"}})) == [photo]
    assert ids(thread.list_images(metadata_filter={"tags": {"$array_contains_any": ["cat", "dog"]}})) == [
        photo,
        sketch,
    ]
    assert ids(thread.list_images(metadata_filter={"kind": {"$not": "photo"}})) == [sketch, untagged]
    assert thread.list_images(metadata_filter={"kind": "video"}) == []
    assert ids(thread.list_images(metadata_filter=None)) == [photo, sketch, untagged]


def test_list_images_limit(thread):
    made = [thread.add_image(PNG, description=f"image {i}") for i in range(5)]
    assert ids(thread.list_images(limit=2)) == made[:2]
    assert ids(thread.list_images(limit=None)) == made


def test_the_clients_list_images_pages_with_a_cursor(memory, thread, other_thread):
    made = [thread.add_image(PNG, description=f"image {i}") for i in range(3)]
    other_thread.add_image(PNG, description="elsewhere")
    first = memory.list_images(thread_id=thread.thread_id, limit=2)
    assert ids(first) == made[:2] and first.next_cursor is not None
    rest = memory.list_images(thread_id=thread.thread_id, limit=2, cursor=first.next_cursor)
    assert ids(rest) == made[2:] and rest.next_cursor is None
    with pytest.raises(ValueError, match="invalid cursor"):
        memory.list_images(cursor="forged")


# --- update_image (§4.3.4) -------------------------------------------------------------------


def test_update_image_description_replaces_the_searchable_text(thread):
    image_id = thread.add_image(PNG, description="a green tractor")
    assert thread.update_image(image_id, description="a purple submarine") == image_id
    assert thread.list_images(image_id=image_id)[0].content == "a purple submarine"
    found = thread.search("purple submarine", record_types=["image"])
    assert found and found[0].id == image_id and found[0].content == "a purple submarine"
    assert all(r.content != "a green tractor" for r in thread.search("green tractor", record_types=["image"]))


def test_update_image_metadata_replaces_it(thread):
    image_id = thread.add_image(PNG, description="m", metadata={"a": 1, "b": 2})
    thread.update_image(image_id, metadata={"c": 3})
    assert thread.list_images(image_id=image_id)[0].metadata == {"c": 3}
    thread.update_image(image_id, metadata=None)
    assert thread.list_images(image_id=image_id)[0].metadata in (None, {})


def test_update_image_omitted_fields_are_kept(thread, store):
    image_id = thread.add_image(
        PNG, description="keep me", metadata={"k": "v"}, timestamp="2024-01-02T03:04:05Z", ttl_days=9
    )
    before = thread.list_images(image_id=image_id)[0]
    thread.update_image(image_id, metadata={"k": "w"})
    after = thread.list_images(image_id=image_id)[0]
    assert (after.content, after.mime_type, after.timestamp, after.expires_at) == (
        before.content,
        before.mime_type,
        before.timestamp,
        before.expires_at,
    )
    assert store.get("image", image_id, include_bytes=True).bytes == PNG


def test_update_image_replaces_the_bytes_and_type(thread, store):
    image_id = thread.add_image(PNG, description="was a png")
    thread.update_image(image_id, image=JPEG, mime_type=ImageMimeType.JPEG)
    record = store.get("image", image_id, include_bytes=True)
    assert record.bytes == JPEG
    assert record.mime_type is ImageMimeType.JPEG
    assert record.content == "was a png"


def test_update_image_bytes_without_mime_type_raises_and_changes_nothing(thread, store):
    image_id = thread.add_image(PNG, description="unchanged")
    with pytest.raises(ValueError):
        thread.update_image(image_id, image=JPEG)
    record = store.get("image", image_id, include_bytes=True)
    assert (record.bytes, record.mime_type) == (PNG, ImageMimeType.PNG)


@pytest.mark.parametrize(
    ("data", "declared"),
    [
        pytest.param(JPEG, ImageMimeType.PNG, id="mismatch"),
        pytest.param(animated_bytes("PNG"), ImageMimeType.PNG, id="animated-png"),
        pytest.param(animated_bytes("WEBP"), ImageMimeType.WEBP, id="animated-webp"),
        pytest.param(gif_bytes(), ImageMimeType.PNG, id="gif"),
        pytest.param(b"garbage", ImageMimeType.PNG, id="garbage"),
    ],
)
def test_update_image_with_an_invalid_image_raises_and_changes_nothing(thread, store, data, declared):
    image_id = thread.add_image(PNG, description="unchanged")
    with pytest.raises(ValueError):
        thread.update_image(image_id, image=data, mime_type=declared, description="should not stick")
    record = store.get("image", image_id, include_bytes=True)
    assert (record.bytes, record.mime_type, record.content) == (PNG, ImageMimeType.PNG, "unchanged")


def test_update_image_respects_the_byte_limit(store):
    limited = AgentMemory(store, image_input_limit_config=ImageInputLimitConfig(max_raw_image_bytes=4096))
    thread = limited.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    image_id = thread.add_image(PNG, description="small")
    with pytest.raises(ValueError):
        thread.update_image(image_id, image=noise_bytes("PNG"), mime_type=ImageMimeType.PNG)
    assert store.get("image", image_id, include_bytes=True).bytes == PNG


def test_update_image_timestamp(thread):
    image_id = thread.add_image(PNG, description="t", timestamp="2024-01-01T00:00:00Z")
    thread.update_image(image_id, timestamp="2025-06-01T10:00:00+02:00")
    assert parse_utc(thread.list_images(image_id=image_id)[0].timestamp) == datetime(2025, 6, 1, 8, tzinfo=UTC)


def test_update_image_ttl_days_sets_and_none_clears_the_expiry(thread):
    image_id = thread.add_image(PNG, description="ttl")
    thread.update_image(image_id, ttl_days=4)
    record = thread.list_images(image_id=image_id)[0]
    lifetime = parse_utc(record.expires_at) - parse_utc(record.created_at)
    assert abs(lifetime - timedelta(days=4)) < timedelta(seconds=5)
    thread.update_image(image_id, ttl_days=None)
    assert thread.list_images(image_id=image_id)[0].expires_at is None


def test_update_image_ttl_with_timestamp_anchor_uses_the_new_timestamp(thread):
    image_id = thread.add_image(PNG, description="ttl")
    thread.update_image(image_id, timestamp="2030-01-01T00:00:00Z", ttl_days=10, ttl_anchor=TIMESTAMP)
    assert parse_utc(thread.list_images(image_id=image_id)[0].expires_at) == datetime(2030, 1, 11, tzinfo=UTC)


def test_update_image_of_an_unknown_image_raises_key_error(thread):
    with pytest.raises(KeyError):
        thread.update_image("no-such-image", description="x")


def test_update_image_of_another_threads_image_raises_key_error_and_changes_nothing(thread, other_thread):
    image_id = other_thread.add_image(PNG, description="theirs")
    with pytest.raises(KeyError):
        thread.update_image(image_id, description="mine now")
    assert other_thread.list_images(image_id=image_id)[0].content == "theirs"


def test_an_expired_image_cannot_be_updated_or_refreshed(thread):
    image_id = add_expired_image(thread)
    with pytest.raises(KeyError):
        thread.update_image(image_id, description="revived?")
    with pytest.raises(KeyError):
        thread.update_image(image_id, ttl_days=None)
    assert thread.list_images() == []


def test_update_image_rejects_unknown_keyword_arguments(thread):
    image_id = thread.add_image(PNG, description="x")
    with pytest.raises(TypeError):
        thread.update_image(image_id, colour="red")


# --- delete_image (§4.3.5) -------------------------------------------------------------------


def test_delete_image_returns_1_and_removes_it_everywhere(thread, store):
    image_id = thread.add_image(PNG, description="a doomed orange balloon")
    kept = thread.add_image(PNG, description="a surviving image")
    assert thread.delete_image(image_id) == 1
    assert ids(thread.list_images()) == [kept]
    assert store.get("image", image_id) is None
    assert image_id not in [r.id for r in thread.search("orange balloon", record_types=["image"])]
    assert thread.delete_image(image_id) == 0


def test_delete_image_of_an_unknown_image_returns_0(thread):
    assert thread.delete_image("no-such-image") == 0


def test_delete_image_of_another_threads_image_returns_0_and_keeps_it(thread, other_thread):
    image_id = other_thread.add_image(PNG, description="theirs")
    assert thread.delete_image(image_id) == 0
    assert ids(other_thread.list_images()) == [image_id]


def test_delete_image_of_an_expired_image_returns_0(thread):
    assert thread.delete_image(add_expired_image(thread)) == 0


# --- search (§4.3.13 record_types, D4) ---------------------------------------------------------


def test_search_finds_an_image_by_its_description(thread):
    thread.add_image(PNG, description="a blue teapot on a shelf")
    image_id = thread.add_image(JPEG, description="a red bicycle", metadata={"kind": "photo"})
    results = thread.search("red bicycle", record_types=["image"])
    assert results and results[0].id == image_id
    hit = results[0]
    assert hit.record.record_type == "image"
    assert isinstance(hit.record, ImageRecord)
    assert hit.record.content == "a red bicycle"
    assert hit.record.mime_type is ImageMimeType.JPEG
    assert hit.record.bytes is None
    assert hit.metadata == {"kind": "photo"}


def test_search_without_record_types_includes_images(thread):
    thread.add_messages(
        [
            {"role": "user", "content": "the weather was sunny all week"},
            {"role": "assistant", "content": "we reviewed the quarterly budget"},
        ]
    )
    thread.add_memory("the user prefers tea over coffee")
    image_id = thread.add_image(PNG, description="a red bicycle leaning on a wall")
    results = thread.search("red bicycle")
    assert results and results[0].id == image_id


def test_search_for_other_record_types_excludes_images(thread):
    thread.add_image(PNG, description="a red bicycle")
    message_ids = thread.add_messages([{"role": "user", "content": "my red bicycle has a flat tyre"}])
    results = thread.search("red bicycle", record_types=["message"])
    assert [r.id for r in results] == message_ids


def test_search_applies_metadata_filters_to_images(thread):
    thread.add_image(PNG, description="a bicycle photo", metadata={"kind": "photo"})
    sketch = thread.add_image(PNG, description="a bicycle sketch", metadata={"kind": "sketch"})
    results = thread.search("bicycle", record_types=["image"], metadata_filter={"kind": "sketch"})
    assert [r.id for r in results] == [sketch]


def test_image_search_is_limited_to_the_users_scope(memory, thread):
    stranger = memory.create_thread(thread_id="t9", user_id="u9", agent_id="a1")
    stranger.add_image(PNG, description="a red bicycle of a stranger")
    mine = thread.add_image(PNG, description="my red bicycle")
    assert [r.id for r in thread.search("red bicycle", record_types=["image"])] == [mine]


# --- thread deletion (D4) --------------------------------------------------------------------


def test_delete_thread_deletes_its_images_and_keeps_other_threads_images(memory, thread, other_thread, store):
    mine = [thread.add_image(PNG, description="mine"), thread.add_image(JPEG, description="mine too")]
    theirs = other_thread.add_image(WEBP, description="theirs")
    assert memory.delete_thread("t1") == 1
    for image_id in mine:
        assert store.get("image", image_id) is None
    assert ids(stored_images(store)) == [theirs]
    assert store.get("image", theirs, include_bytes=True).bytes == WEBP


def test_images_survive_reopening_the_store(store_factory):
    first = store_factory("shared")
    image_id = (
        AgentMemory(first)
        .create_thread(thread_id="t1", user_id="u1", agent_id="a1")
        .add_image(WEBP, description="persisted")
    )
    second = store_factory("shared")
    record = second.get("image", image_id, include_bytes=True)
    assert (record.bytes, record.content, record.mime_type) == (WEBP, "persisted", ImageMimeType.WEBP)


# --- client-level image API (D4): explicit scope, no thread ownership ----------------------------


def test_client_add_image_with_a_threads_scope_is_seen_by_the_thread(memory, thread):
    image_id = memory.add_image(PNG, description="from the client", user_id="u1", agent_id="a1", thread_id="t1")
    [record] = thread.list_images()
    assert (record.id, record.content) == (image_id, "from the client")
    assert (record.thread_id, record.user_id, record.agent_id) == ("t1", "u1", "a1")


def test_client_add_image_without_scope_is_unscoped(memory, store):
    image_id = memory.add_image(JPEG, description="loose")
    record = store.get("image", image_id, include_bytes=True)
    assert (record.thread_id, record.user_id, record.agent_id) == (None, None, None)
    assert (record.bytes, record.mime_type) == (JPEG, ImageMimeType.JPEG)


@pytest.mark.parametrize("data", INVALID_IMAGES[:5])
def test_client_add_image_validates_like_the_thread(memory, store, data):
    with pytest.raises(ValueError):
        memory.add_image(data, description="invalid", user_id="u1")
    assert stored_images(store) == []


def test_client_add_image_applies_the_clients_limits(store):
    limited = AgentMemory(store, image_input_limit_config=ImageInputLimitConfig(max_raw_image_bytes=4096))
    with pytest.raises(ValueError):
        limited.add_image(noise_bytes("PNG"), description="too heavy", user_id="u1")
    assert stored_images(store) == []


def test_client_list_images_filters_by_scope_and_id(memory, thread, other_thread):
    first = thread.add_image(PNG, description="t1 image")
    second = other_thread.add_image(JPEG, description="t2 image")
    loose = memory.add_image(WEBP, description="u9 image", user_id="u9")
    assert ids(memory.list_images(user_id="u1")) == [first, second]
    assert ids(memory.list_images(thread_id="t2")) == [second]
    assert ids(memory.list_images(user_id="u9")) == [loose]
    assert ids(memory.list_images(image_id=first)) == [first]
    assert [r.bytes for r in memory.list_images()] == [None, None, None]
    assert memory.list_images(image_id=second, include_bytes=True)[0].bytes == JPEG
    with pytest.raises(ValueError):
        memory.list_images(user_id="u1", include_bytes=True)


def test_client_update_image_reaches_any_thread(memory, thread, other_thread):
    image_id = other_thread.add_image(PNG, description="before")
    assert memory.update_image(image_id, description="after", metadata={"by": "client"}) == image_id
    record = other_thread.list_images(image_id=image_id)[0]
    assert (record.content, record.metadata) == ("after", {"by": "client"})
    with pytest.raises(ValueError):
        memory.update_image(image_id, image=JPEG)
    with pytest.raises(KeyError):
        memory.update_image("no-such-image", description="x")
    with pytest.raises(KeyError):
        memory.update_image(add_expired_image(thread), description="x")


def test_client_delete_image(memory, thread):
    image_id = thread.add_image(PNG, description="doomed")
    assert memory.delete_image(image_id) == 1
    assert memory.delete_image(image_id) == 0
    assert memory.delete_image("no-such-image") == 0
    assert thread.list_images() == []


def test_client_cannot_delete_or_retime_a_message_attached_image(memory, thread):
    [message_id] = thread.add_messages(
        [{"role": "user", "content": [{"type": "image", "bytes": PNG, "description": "attached"}]}]
    )
    [record] = thread.list_images()
    assert record.message_id == message_id
    with pytest.raises(ValueError):
        memory.delete_image(record.id)
    with pytest.raises(ValueError):
        memory.update_image(record.id, ttl_days=5)
    assert ids(thread.list_images()) == [record.id]


def test_client_search_finds_images(memory, thread):
    image_id = thread.add_image(PNG, description="a red bicycle")
    results = memory.search("red bicycle", user_id="u1", record_types=["image"])
    assert [r.id for r in results] == [image_id]


def test_client_image_methods_have_async_twins(memory):
    image_id = asyncio.run(memory.add_image_async(PNG, description="async", user_id="u1"))
    assert ids(asyncio.run(memory.list_images_async(user_id="u1"))) == [image_id]
    assert asyncio.run(memory.update_image_async(image_id, description="async 2")) == image_id
    assert asyncio.run(memory.delete_image_async(image_id)) == 1
