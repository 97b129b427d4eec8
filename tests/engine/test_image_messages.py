"""Messages with image parts: add_messages, get_message(s), update_message, delete_message.

API_SPEC §1.4 (message-attached images share the message's expiry), §4.3.1, §4.3.5, §4.3.9-§4.3.11,
§9.1-§9.4; DECISIONS D3, D12. Runs on the conftest `thread` ("t1", user "u1", agent "a1").
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory.engine import AgentMemory, ImageContent, ImageMimeType, Message, TextContent, TimeToLiveAnchor
from memory.engine.types import ImageInputLimitConfig

from .helpers import parse_utc
from .test_images import JPEG, PNG, WEBP, animated_bytes, gif_bytes, noise_bytes, png_bytes

PAST = "2000-01-01T00:00:00Z"


def image_part(data: bytes = PNG, mime_type: str | None = "image/png", description: str | None = "a cat", **extra):
    part = {"type": "image", "bytes": data, "description": description, **extra}
    if mime_type is not None:
        part["mime_type"] = mime_type
    return part


def add_look_message(thread, data: bytes = PNG, description: str = "a cat") -> tuple[str, str]:
    """A message "look" + one image; returns (message id, image id)."""
    [message_id] = thread.add_messages(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    image_part(data, mime_type=None, description=description),
                ],
            }
        ]
    )
    [image] = image_parts(thread.get_message(message_id))
    return message_id, image.id


def image_parts(message: Message) -> list[ImageContent]:
    return [p for p in message.content if isinstance(p, ImageContent)]


def stored_images(store) -> list:
    return list(store.list("image", limit=None))


# --- adding messages with image parts (§4.3.1, §9.1, §9.4) ----------------------------------------


def test_add_messages_with_dict_parts_stores_text_and_image(thread):
    [message_id] = thread.add_messages(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image", "bytes": PNG, "mime_type": "image/png", "description": "a cat"},
                ],
            }
        ]
    )
    message = thread.get_message(message_id)
    assert message.role == "user"
    assert isinstance(message.content, tuple) and len(message.content) == 2
    text, image = message.content
    assert isinstance(text, TextContent) and text.text == "look"
    assert isinstance(image, ImageContent)
    assert image.id
    assert image.mime_type is ImageMimeType.PNG
    assert image.description == "a cat"
    assert image.bytes is None
    assert message.text == "look"


def test_add_messages_with_message_objects_and_content_classes(thread):
    [message_id] = thread.add_messages(
        [
            Message(
                "user",
                (
                    TextContent(text="see this"),
                    ImageContent(bytes=JPEG, mime_type=ImageMimeType.JPEG, description="a dog"),
                ),
            )
        ]
    )
    text, image = thread.get_message(message_id).content
    assert text.text == "see this"
    assert (image.mime_type, image.description, image.bytes) == (ImageMimeType.JPEG, "a dog", None)


def test_the_order_of_parts_is_kept(thread):
    [message_id] = thread.add_messages(
        [
            {
                "role": "user",
                "content": [
                    image_part(PNG, description="first picture"),
                    {"type": "text", "text": "between"},
                    image_part(WEBP, "image/webp", description="second picture"),
                    {"type": "text", "text": "after"},
                ],
            }
        ]
    )
    content = thread.get_message(message_id).content
    assert [type(p).__name__ for p in content] == ["ImageContent", "TextContent", "ImageContent", "TextContent"]
    assert [p.description if isinstance(p, ImageContent) else p.text for p in content] == [
        "first picture",
        "between",
        "second picture",
        "after",
    ]
    assert [p.mime_type for p in image_parts(thread.get_message(message_id))] == [
        ImageMimeType.PNG,
        ImageMimeType.WEBP,
    ]


def test_an_image_only_message_is_accepted(thread):
    [message_id] = thread.add_messages([{"role": "user", "content": [image_part(description="just a picture")]}])
    [image] = thread.get_message(message_id).content
    assert isinstance(image, ImageContent) and image.description == "just a picture"


def test_a_part_without_mime_type_has_its_type_detected(thread):
    [message_id] = thread.add_messages([{"role": "user", "content": [image_part(WEBP, mime_type=None)]}])
    [image] = image_parts(thread.get_message(message_id))
    assert image.mime_type is ImageMimeType.WEBP


def test_an_image_content_id_given_by_the_caller_is_the_image_id(thread):
    part = ImageContent(id="img-fixed", bytes=PNG, mime_type=ImageMimeType.PNG, description="fixed id")
    [message_id] = thread.add_messages([Message("user", (part,))])
    [image] = image_parts(thread.get_message(message_id))
    assert image.id == "img-fixed"
    [record] = thread.list_images()
    assert (record.id, record.message_id) == ("img-fixed", message_id)


def test_the_attached_image_is_listed_with_its_message_id(thread, store):
    message_id, image_id = add_look_message(thread)
    [record] = thread.list_images()
    assert record.id == image_id
    assert record.message_id == message_id
    assert record.record_type == "image"
    assert record.content == "a cat"
    assert record.mime_type is ImageMimeType.PNG
    assert (record.thread_id, record.user_id, record.agent_id) == ("t1", "u1", "a1")
    assert store.get("image", image_id, include_bytes=True).bytes == PNG


def test_an_attached_image_is_searchable_by_its_description(thread):
    _, image_id = add_look_message(thread, description="a tabby cat sleeping on a radiator")
    results = thread.search("tabby cat radiator", record_types=["image"])
    assert results and results[0].id == image_id


@pytest.mark.parametrize(
    "bad_part",
    [
        pytest.param(image_part(gif_bytes(), mime_type=None), id="gif"),
        pytest.param(image_part(animated_bytes("PNG")), id="animated-png"),
        pytest.param(image_part(animated_bytes("WEBP"), "image/webp"), id="animated-webp"),
        pytest.param(image_part(b"garbage bytes", mime_type=None), id="garbage"),
        pytest.param(image_part(noise_bytes("PNG")[:-200]), id="truncated-png"),
        pytest.param(image_part(PNG, "image/jpeg"), id="declared-type-mismatch"),
        pytest.param(image_part(PNG, "image/gif"), id="unknown-declared-type"),
        pytest.param({"type": "image", "mime_type": "image/png", "description": "no bytes"}, id="no-bytes"),
        pytest.param(image_part(None), id="bytes-none"),
    ],
)
def test_an_invalid_image_in_any_message_stores_no_message_and_no_image(thread, store, bad_part):
    with pytest.raises(ValueError):
        thread.add_messages(
            [
                {"role": "user", "content": [{"type": "text", "text": "fine"}, image_part(PNG, description="fine")]},
                {"role": "user", "content": [{"type": "text", "text": "broken"}, bad_part]},
            ]
        )
    assert thread.get_messages() == []
    assert thread.list_images() == []
    assert stored_images(store) == []


def test_an_image_content_without_bytes_cannot_be_added(thread, store):
    with pytest.raises(ValueError):
        thread.add_messages([Message("user", (TextContent(text="x"), ImageContent(mime_type=ImageMimeType.PNG)))])
    assert thread.get_messages() == []
    assert stored_images(store) == []


def test_message_images_respect_the_configured_limits(store):
    limited = AgentMemory(store, image_input_limit_config=ImageInputLimitConfig(max_raw_image_bytes=4096))
    thread = limited.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    with pytest.raises(ValueError):
        thread.add_messages([{"role": "user", "content": [image_part(noise_bytes("PNG"), description="too big")]}])
    assert thread.get_messages() == []
    assert stored_images(store) == []


def test_message_images_respect_the_pixel_limit(store):
    limited = AgentMemory(store, image_input_limit_config=ImageInputLimitConfig(max_image_pixels=1000))
    thread = limited.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    with pytest.raises(ValueError):
        thread.add_messages([{"role": "user", "content": [image_part(png_bytes(size=(50, 50)))]}])
    assert thread.get_messages() == []
    assert stored_images(store) == []


# --- reading image bytes (§4.3.9, §4.3.10) --------------------------------------------------------


def add_two_image_message(thread) -> tuple[str, str, str]:
    [message_id] = thread.add_messages(
        [
            {
                "role": "user",
                "content": [
                    image_part(PNG, description="one"),
                    {"type": "text", "text": "and"},
                    image_part(JPEG, "image/jpeg", description="two"),
                ],
            }
        ]
    )
    first, second = image_parts(thread.get_message(message_id))
    return message_id, first.id, second.id


def test_get_message_loads_only_the_included_image_ids(thread):
    message_id, first, second = add_two_image_message(thread)
    hydrated = image_parts(thread.get_message(message_id, included_image_ids=[second]))
    assert [(p.id, p.bytes) for p in hydrated] == [(first, None), (second, JPEG)]
    both = image_parts(thread.get_message(message_id, included_image_ids=[first, second]))
    assert [p.bytes for p in both] == [PNG, JPEG]


def test_get_message_ignores_included_ids_that_are_not_in_the_message(thread):
    message_id, first, _ = add_two_image_message(thread)
    standalone = thread.add_image(WEBP, description="standalone")
    _, other_message_image = add_look_message(thread)
    parts = image_parts(
        thread.get_message(message_id, included_image_ids=[standalone, other_message_image, "no-such-id", first])
    )
    assert [p.bytes for p in parts] == [PNG, None]
    assert parts[0].id == first


@pytest.mark.parametrize(
    "included", [pytest.param({}, id="omitted"), pytest.param({"included_image_ids": None}, id="none")]
)
def test_get_message_without_included_ids_loads_no_bytes(thread, included):
    message_id, _, _ = add_two_image_message(thread)
    assert [p.bytes for p in image_parts(thread.get_message(message_id, **included))] == [None, None]


def test_get_messages_loads_image_bytes_only_on_request(thread):
    add_two_image_message(thread)
    thread.add_messages([{"role": "assistant", "content": "nice pictures"}])
    add_look_message(thread, WEBP)
    plain = thread.get_messages()
    assert [p.bytes for m in plain for p in image_parts(m)] == [None, None, None]
    loaded = thread.get_messages(include_image_bytes=True)
    assert [p.bytes for m in loaded for p in image_parts(m)] == [PNG, JPEG, WEBP]
    assert [m.text for m in loaded] == ["and", "nice pictures", "look"]


def test_get_message_of_another_thread_still_raises_key_error(thread, other_thread):
    message_id, image_id = add_look_message(other_thread)
    with pytest.raises(KeyError):
        thread.get_message(message_id, included_image_ids=[image_id])


# --- deleting (§4.3.5, §4.3.8) --------------------------------------------------------------------


def test_delete_image_of_a_message_attached_image_raises_and_keeps_it(thread, store):
    message_id, image_id = add_look_message(thread)
    with pytest.raises(ValueError):
        thread.delete_image(image_id)
    assert [r.id for r in thread.list_images()] == [image_id]
    assert [p.id for p in image_parts(thread.get_message(message_id))] == [image_id]


def test_delete_message_deletes_its_images(thread, store):
    message_id, image_id = add_look_message(thread)
    standalone = thread.add_image(JPEG, description="standalone")
    _, other_image = add_look_message(thread, WEBP, "another message's")
    assert thread.delete_message(message_id) == 1
    assert store.get("image", image_id) is None
    assert [r.id for r in thread.list_images()] == [standalone, other_image]


def test_delete_thread_deletes_message_images(memory, thread, store):
    _, image_id = add_look_message(thread)
    memory.delete_thread("t1")
    assert store.get("image", image_id) is None
    assert stored_images(store) == []


# --- update_image on attached images (§4.3.4, §9.4) ------------------------------------------------


@pytest.mark.parametrize(
    "ttl",
    [
        pytest.param({"ttl_days": 3}, id="ttl_days"),
        pytest.param({"ttl_days": None}, id="ttl_days-none"),
        pytest.param({"ttl_anchor": TimeToLiveAnchor.CREATED_AT}, id="ttl_anchor"),
    ],
)
def test_update_image_ttl_of_an_attached_image_raises_value_error(thread, ttl):
    _, image_id = add_look_message(thread)
    with pytest.raises(ValueError):
        thread.update_image(image_id, description="should not stick", **ttl)
    [record] = thread.list_images()
    assert record.expires_at is None
    assert record.content == "a cat"


def test_update_image_description_of_an_attached_image_shows_in_the_message(thread):
    message_id, image_id = add_look_message(thread)
    thread.update_image(image_id, description="a ginger cat")
    assert thread.list_images(image_id=image_id)[0].content == "a ginger cat"
    assert image_parts(thread.get_message(message_id))[0].description == "a ginger cat"


# --- update_message (§4.3.11) -------------------------------------------------------------------


def test_update_message_with_new_parts_replaces_the_images(thread, store):
    message_id, old_image = add_look_message(thread)
    thread.update_message(
        message_id,
        content=[{"type": "text", "text": "now this"}, image_part(JPEG, "image/jpeg", description="a dog")],
    )
    text, image = thread.get_message(message_id).content
    assert text.text == "now this"
    assert (image.mime_type, image.description) == (ImageMimeType.JPEG, "a dog")
    assert image.id != old_image
    assert store.get("image", old_image) is None
    [record] = thread.list_images()
    assert (record.id, record.message_id, record.content) == (image.id, message_id, "a dog")
    assert store.get("image", image.id, include_bytes=True).bytes == JPEG


def test_update_message_with_content_class_parts(thread, store):
    message_id, old_image = add_look_message(thread)
    thread.update_message(
        message_id,
        content=[TextContent(text="new"), ImageContent(bytes=WEBP, mime_type=ImageMimeType.WEBP, description="w")],
    )
    [image] = image_parts(thread.get_message(message_id))
    assert (image.mime_type, image.description) == (ImageMimeType.WEBP, "w")
    assert store.get("image", old_image) is None


def test_update_message_to_plain_text_removes_its_images(thread, store):
    message_id, image_id = add_look_message(thread)
    thread.update_message(message_id, content="just words now")
    assert thread.get_message(message_id).content == "just words now"
    assert store.get("image", image_id) is None
    assert thread.list_images() == []


def test_update_message_keeps_images_still_referenced_by_the_new_content(thread, store):
    """Parts read back (ids, no bytes) can be passed back: the images they name stay."""
    message_id, image_id = add_look_message(thread)
    content = list(thread.get_message(message_id).content)
    thread.update_message(message_id, content=[*content, TextContent(text="and one more thing")])
    parts = thread.get_message(message_id).content
    assert [type(p).__name__ for p in parts] == ["TextContent", "ImageContent", "TextContent"]
    assert parts[1].id == image_id
    assert store.get("image", image_id, include_bytes=True).bytes == PNG
    assert [r.id for r in thread.list_images()] == [image_id]


def test_update_message_without_content_keeps_the_images(thread, store):
    message_id, image_id = add_look_message(thread)
    thread.update_message(message_id, metadata={"edited": True})
    assert [p.id for p in image_parts(thread.get_message(message_id))] == [image_id]
    assert store.get("image", image_id, include_bytes=True).bytes == PNG


@pytest.mark.parametrize(
    "bad_part",
    [
        pytest.param(image_part(gif_bytes(), mime_type=None), id="gif"),
        pytest.param(image_part(animated_bytes("PNG")), id="animated-png"),
        pytest.param(image_part(PNG, "image/webp"), id="declared-type-mismatch"),
        pytest.param({"type": "image", "mime_type": "image/png", "description": "no bytes"}, id="no-bytes-new-image"),
    ],
)
def test_update_message_with_an_invalid_image_changes_nothing(thread, store, bad_part):
    message_id, image_id = add_look_message(thread)
    with pytest.raises(ValueError):
        thread.update_message(message_id, content=[{"type": "text", "text": "replaced?"}, bad_part])
    text, image = thread.get_message(message_id).content
    assert (text.text, image.id) == ("look", image_id)
    assert [r.id for r in stored_images(store)] == [image_id]


# --- TTL of attached images (§1.4) ------------------------------------------------------------


def test_attached_images_share_the_expiry_set_by_add_messages(thread, store):
    message_id, image_id = add_look_message_with_ttl(thread, ttl_days=3)
    message_expiry = parse_utc(store.get("message", message_id).expires_at)
    image_expiry = parse_utc(thread.list_images(image_id=image_id)[0].expires_at)
    assert abs(image_expiry - message_expiry) < timedelta(seconds=5)


def add_look_message_with_ttl(thread, **ttl) -> tuple[str, str]:
    [message_id] = thread.add_messages(
        [{"role": "user", "content": [{"type": "text", "text": "look"}, image_part()], "timestamp": PAST}], **ttl
    )
    [image] = image_parts(thread.get_message(message_id))
    return message_id, image.id


def test_update_message_ttl_applies_to_attached_images(thread, store):
    message_id, image_id = add_look_message(thread)
    thread.update_message(message_id, ttl_days=2)
    message = store.get("message", message_id)
    [record] = thread.list_images()
    assert record.id == image_id and record.expires_at is not None
    assert abs(parse_utc(record.expires_at) - parse_utc(message.expires_at)) < timedelta(seconds=5)
    lifetime = parse_utc(record.expires_at) - parse_utc(record.created_at)
    assert abs(lifetime - timedelta(days=2)) < timedelta(seconds=5)
    thread.update_message(message_id, ttl_days=None)
    assert thread.list_images()[0].expires_at is None


def test_images_of_an_expired_message_are_invisible(thread, store):
    message_id, _ = add_look_message(thread)
    [expired_id] = thread.add_messages(
        [{"role": "user", "content": [image_part(WEBP, "image/webp", description="old")], "timestamp": PAST}],
        ttl_days=1,
        ttl_anchor=TimeToLiveAnchor.TIMESTAMP,
    )
    with pytest.raises(KeyError):
        thread.get_message(expired_id)
    assert [r.message_id for r in thread.list_images()] == [message_id]
    assert [r.message_id for r in stored_images(store)] == [message_id]


# --- image ids of parts, and atomicity of failed writes -------------------------------------------


def test_a_part_id_already_taken_by_a_standalone_image_stores_nothing(thread, store):
    thread.add_image(PNG, description="standalone", image_id="taken")
    part = ImageContent(id="taken", bytes=JPEG, mime_type=ImageMimeType.JPEG, description="part")
    with pytest.raises(ValueError):
        thread.add_messages([Message("user", (TextContent(text="hi"), part))])
    assert thread.get_messages() == []
    [record] = stored_images(store)
    assert (record.id, record.content, record.message_id) == ("taken", "standalone", None)


def test_the_same_part_id_twice_stores_nothing(thread, store):
    parts = (ImageContent(id="twice", bytes=PNG), ImageContent(id="twice", bytes=JPEG))
    with pytest.raises(ValueError):
        thread.add_messages([Message("user", parts)])
    assert thread.get_messages() == []
    assert stored_images(store) == []


def test_update_message_failing_on_a_taken_image_id_changes_nothing(thread, store):
    """A new part whose id belongs to a standalone image: the edit is refused as a whole."""
    message_id, image_id = add_look_message(thread)
    thread.add_image(WEBP, description="standalone", image_id="taken")
    with pytest.raises(ValueError):
        thread.update_message(
            message_id,
            content=[
                {"type": "text", "text": "changed"},
                image_part(JPEG, "image/jpeg", description="a dog", id="taken"),
            ],
        )
    text, image = thread.get_message(message_id).content
    assert (text.text, image.id, image.description) == ("look", image_id, "a cat")
    assert store.get("image", image_id, include_bytes=True).bytes == PNG
    standalone = store.get("image", "taken", include_bytes=True)
    assert (standalone.bytes, standalone.message_id) == (WEBP, None)


def test_update_message_accepts_parts_read_back_with_their_bytes(thread, store):
    """get_message(included_image_ids=...) then update_message with the same parts plus text."""
    message_id, image_id = add_look_message(thread)
    hydrated = thread.get_message(message_id, included_image_ids=[image_id])
    assert image_parts(hydrated)[0].bytes == PNG
    thread.update_message(message_id, content=[*hydrated.content, TextContent(text="and one more thing")])
    parts = thread.get_message(message_id).content
    assert [p.text if isinstance(p, TextContent) else p.id for p in parts] == ["look", image_id, "and one more thing"]
    assert [(r.id, r.message_id) for r in stored_images(store)] == [(image_id, message_id)]
    assert store.get("image", image_id, include_bytes=True).bytes == PNG
