"""The hostile corpus through the REST API: every write endpoint's fields (as JSON, lone
surrogates included, which only JSON can carry), every list's query parameters, malformed uploads
and oversized bodies. Never a 500; a refusal is a 400 (the field's message under `errors`), 404,
409, 413 or 415 in the API's error body, and leaves the store and the history as they were."""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from rest_framework.test import APIClient

from memory.engine import AgentMemory, ImageInputLimitConfig
from tests.hostile import corpus
from tests.hostile.corpus import Payload
from tests.hostile.support import REFUSALS, Failures, new_memory, state
from tests.web.world import World, png_bytes

API = "/api/v1"


@dataclass(frozen=True)
class Endpoint:
    method: str
    url: Callable[[World], str]
    body: Callable[[AgentMemory, World], dict[str, Any]]


ENDPOINTS = {
    "thread-create": Endpoint("post", lambda w: f"{API}/threads/", lambda m, w: {"user_id": "alice"}),
    "thread-update": Endpoint("patch", lambda w: f"{API}/threads/{w.thread_id}/", lambda m, w: {"metadata": {}}),
    "messages-add": Endpoint(
        "post",
        lambda w: f"{API}/threads/{w.thread_id}/messages/",
        lambda m, w: {"messages": [{"role": "user", "content": "Hello."}]},
    ),
    "message-update": Endpoint(
        "patch", lambda w: f"{API}/threads/{w.thread_id}/messages/{w.message_ids[0]}/", lambda m, w: {"content": "Hi."}
    ),
    "memory-create": Endpoint(
        "post", lambda w: f"{API}/memories/", lambda m, w: {"content": "A fact.", "memory_type": "fact"}
    ),
    "memory-update": Endpoint("patch", lambda w: f"{API}/memories/{w.fact_id}/", lambda m, w: {"content": "Changed."}),
    "image-update": Endpoint("patch", lambda w: f"{API}/images/{w.image_id}/", lambda m, w: {"description": "A map"}),
    "link-create": Endpoint(
        "post",
        lambda w: f"{API}/links/",
        lambda m, w: {"source_record_id": new_memory(m), "target_record_id": w.fact_id, "relation_type": "supports"},
    ),
    "link-update": Endpoint("patch", lambda w: f"{API}/links/{w.link_id}/", lambda m, w: {"metadata": {}}),
    "user-profile": Endpoint("put", lambda w: f"{API}/users/{w.user_id}/", lambda m, w: {"information": "Alice."}),
    "search": Endpoint("post", lambda w: f"{API}/search/", lambda m, w: {"query": "hotel", "user_id": "alice"}),
}

LONE_SURROGATE = Payload("lone-surrogate", "x\ud800y", refused=True)
TEXT = [*corpus.taken(corpus.TEXTS), corpus.NUL, LONE_SURROGATE]
BIG_TEXT = [*TEXT, *corpus.taken([corpus.AT_LIMIT]), corpus.OVER_LIMIT]
IDS = [*corpus.IDS, *corpus.CONTROL_IDS, replace(corpus.SPACED_ID, refused=True), LONE_SURROGATE]  # never trimmed
ROLES = [replace(payload, refused=True) for payload in IDS]  # a role is one of user, assistant, system, tool
METADATA = [
    *corpus.taken(corpus.METADATA),
    Payload("a-list", [1, 2], refused=True),
    Payload("a-string", "<script>", refused=True),
    Payload("surrogate-key", {"\udfff": 1}, refused=True),
]
WRONG_TYPES = [
    Payload("number", 5, refused=True),
    Payload("bool", True, refused=True),
    Payload("object", {"$gt": ""}, refused=True),
    Payload("list", ["a"], refused=True),
]


CASES: list[tuple[str, str, list[Payload]]] = [
    ("thread-create", "id", [*IDS, *WRONG_TYPES]),
    ("thread-create", "user_id", IDS),
    ("thread-create", "metadata", METADATA),
    ("thread-update", "metadata", METADATA),
    ("messages-add", "message.content", [*BIG_TEXT, *WRONG_TYPES[:2]]),
    ("messages-add", "message.role", ROLES),
    ("messages-add", "message.id", IDS),
    ("messages-add", "message.metadata", METADATA),
    ("messages-add", "message.timestamp", [*corpus.MARKUP[:3], Payload("year-0", "0000-01-01T00:00:00", True)]),
    ("message-update", "content", BIG_TEXT),
    ("message-update", "metadata", METADATA),
    ("memory-create", "content", [*BIG_TEXT, *WRONG_TYPES]),
    ("memory-create", "id", IDS),
    ("memory-create", "user_id", IDS),
    ("memory-create", "thread_id", IDS),
    ("memory-create", "metadata", METADATA),
    ("memory-create", "ttl_days", [Payload("huge", 10**40, True), Payload("text", "5", True), *WRONG_TYPES[1:]]),
    ("memory-update", "content", BIG_TEXT),
    ("memory-update", "metadata", METADATA),
    ("image-update", "description", BIG_TEXT),
    ("image-update", "metadata", METADATA),
    ("link-create", "target_record_id", IDS),
    ("link-create", "relation_type", IDS),
    ("link-create", "metadata", METADATA),
    ("link-update", "metadata", METADATA),
    ("user-profile", "information", BIG_TEXT),
    ("search", "query", [*corpus.taken(corpus.MARKUP), *corpus.UNICODE, corpus.NUL, LONE_SURROGATE]),
    ("search", "user_id", IDS),
    ("search", "metadata_filter", [*corpus.METADATA, *METADATA[len(corpus.METADATA) :]]),  # filters: 8 levels
    ("search", "max_results", [Payload("huge", 2**70, True), *WRONG_TYPES[1:]]),
]


def with_value(body: dict[str, Any], field: str, value: Any) -> dict[str, Any]:
    """The body with `field` set; `message.<name>` is a field of the batch's one message."""
    if field.startswith("message."):
        return {"messages": [{**body["messages"][0], field.removeprefix("message."): value}]}
    return {**body, field: value}


def send(client: APIClient, method: str, url: str, body: Any):
    """The body as a client would send it: JSON text, lone surrogates as \\ud800 escapes."""
    return getattr(client, method)(url, json.dumps(body), content_type="application/json")


def error_body(response) -> dict[str, Any]:
    try:
        return json.loads(response.content)
    except ValueError:
        return {}


@pytest.mark.parametrize("endpoint_name", list(ENDPOINTS))
def test_every_write_field_takes_the_corpus_cleanly(curator_api, agent_memory, world, endpoint_name):
    """One test per endpoint (a store each costs more than the requests): each failure line names
    the field and the payload."""
    endpoint = ENDPOINTS[endpoint_name]
    valid = send(curator_api, endpoint.method, endpoint.url(world), endpoint.body(agent_memory, world))
    assert valid.status_code in (200, 201), f"the endpoint's own valid body must be taken: {valid.content[:300]}"
    failures = Failures()
    for field, payload in ((f, p) for e, f, payloads in CASES if e == endpoint_name for p in payloads):
        name = f"{field}={payload.name}"
        body = with_value(endpoint.body(agent_memory, world), field, payload.value)
        before = state(agent_memory)
        response = failures.run(name, send, curator_api, endpoint.method, endpoint.url(world), body)
        if response is None:
            continue
        status = response.status_code
        failures.check(name, status < 500, f"answered {status}")
        if status in REFUSALS or payload.refused:
            failures.check(name, status in REFUSALS, f"must be refused, answered {status}")
            failures.check(name, state(agent_memory) == before, f"refused ({status}) but stored something")
            failures.check(name, "detail" in error_body(response), "no error body")
            if status == 400:
                failures.check(name, error_body(response).get("errors"), "a 400 without its field's message")
        else:
            failures.check(name, status in (200, 201), f"answered {status}")
            failures.check(name, response["Content-Type"].startswith("application/json"), "not JSON")
        failures.check(name, not payload.stored or status in (200, 201), f"must be taken, answered {status}")
    failures.assert_none()


def test_text_is_stored_exactly_as_sent(curator_api, agent_memory):
    """Markup, unicode twins, RTL overrides and zero-width characters come back byte for byte:
    nothing is normalised, stripped or escaped in the store (escaping is the page's job)."""
    failures = Failures()
    for payload in corpus.TEXTS:
        response = send(curator_api, "post", f"{API}/memories/", {"content": payload.value, "memory_type": "fact"})
        failures.check(payload.name, response.status_code == 201, f"answered {response.status_code}")
        if response.status_code == 201:
            stored = agent_memory.get_memory(response.json()["id"]).content
            failures.check(payload.name, stored == payload.value, "stored differently")
    failures.assert_none()


# --- query parameters and ids in paths -----------------------------------------------------------

LISTS = {
    "threads": ("threads/", ("user_id", "agent_id", "q", "metadata_filter", "cursor", "limit")),
    "memories": ("memories/", ("q", "user_id", "memory_type", "status", "metadata_filter", "cursor", "limit")),
    "messages": ("threads/trip-42/messages/", ("cursor", "last_n", "range_start_seq_no", "limit")),
    "card": ("threads/trip-42/card/", ("max_recent_messages", "as_of_message_id", "metadata_filter")),
    "images": ("images/", ("thread_id", "user_id", "cursor")),
    "links": ("links/", ("record_id", "user_id", "cursor")),
    "history": ("history/", ("object_id", "actor", "since", "until", "action")),
    "graph": ("graph/", ("user_id", "memory_id", "hops", "max_nodes")),
    "stats": ("stats/", ("user_id", "thread_id")),
    "users": ("users/", ("cursor", "limit")),
}
QUERY_VALUES = [
    *corpus.MARKUP[:4],
    *corpus.UNICODE[:3],
    *corpus.IDS[:2],
    *corpus.IDS[-3:],
    *corpus.METADATA_TEXTS[-3:],
    corpus.NUL,
    Payload("huge-int", "9" * 40),
    Payload("negative", "-1"),
]


@pytest.mark.parametrize("listing", list(LISTS))
def test_every_query_parameter_takes_the_corpus_cleanly(viewer_api, world, listing):
    path, parameters = LISTS[listing]
    failures = Failures()
    for parameter in parameters:
        for payload in QUERY_VALUES:
            name = f"{parameter}={payload.name}"
            response = failures.run(name, viewer_api.get, f"{API}/{path}", {parameter: payload.value})
            if response is None:
                continue
            failures.check(name, response.status_code in (200, 400, 404), f"answered {response.status_code}")
            failures.check(name, response["Content-Type"].startswith("application/json"), "not JSON")
    failures.assert_none()


def test_hostile_ids_in_paths_are_a_404_in_the_api_body(curator_api, agent_memory, world):
    failures = Failures()
    for pattern in ("memories/{}/", "threads/{}/", "threads/{}/messages/", "images/{}/content/", "links/{}/"):
        for payload_name, segment in corpus.segments([*corpus.IDS, *corpus.CONTROL_IDS, corpus.SPACED_ID]):
            url = f"{API}/{pattern.format(segment)}"
            name = f"{pattern.format('…')} {payload_name}"
            before = state(agent_memory)
            for method in ("get", "delete"):
                response = failures.run(f"{method} {name}", getattr(curator_api, method), url)
                if response is None:
                    continue
                status = response.status_code
                failures.check(f"{method} {name}", status in (200, 204, 400, 404, 405), f"answered {status}")
                failures.check(f"{method} {name}", "application/json" in response.get("Content-Type", ""), "not JSON")
            failures.check(name, state(agent_memory) == before, "a DELETE of a hostile id removed something")
    failures.assert_none()


# --- bodies: malformed uploads, JSON no parser should take, sizes ---------------------------------


UPLOAD_CASES = [
    ("description", [*corpus.taken(corpus.TEXTS), corpus.NUL]),
    ("metadata", [*corpus.taken(corpus.metadata_texts()[:4]), *corpus.metadata_texts()[4:]]),
    ("thread_id", IDS[:-1]),  # a form field cannot carry a lone surrogate
    ("id", IDS[:-1]),
    ("user_id", IDS[:-1]),
]


def test_every_upload_field_takes_the_corpus_cleanly(curator_api, agent_memory, world):
    """The image upload's multipart fields (an image each time, into the world's thread)."""
    failures = Failures()
    for field, payloads in UPLOAD_CASES:
        for payload in payloads:
            name = f"{field}={payload.name}"
            image = SimpleUploadedFile("a.png", png_bytes("yellow"), content_type="image/png")
            fields = {"thread_id": world.thread_id} if field not in ("thread_id", "user_id") else {}
            before = state(agent_memory)
            response = failures.run(
                name, curator_api.post, f"{API}/images/", {**fields, "image": image, field: payload.value}
            )
            if response is None:
                continue
            status = response.status_code
            if status in REFUSALS or payload.refused:
                failures.check(name, status in REFUSALS, f"must be refused, answered {status}")
                failures.check(name, state(agent_memory) == before, f"refused ({status}) but stored something")
            else:
                failures.check(name, status == 201, f"answered {status}")
            failures.check(name, not payload.stored or status == 201, f"must be taken, answered {status}")
    failures.assert_none()


def test_malformed_uploads_are_refused_and_store_nothing(curator_api, agent_memory, world):
    failures = Failures()
    for name, content_type, body in corpus.MULTIPART:
        before = state(agent_memory)
        response = failures.run(name, curator_api.generic, "POST", f"{API}/images/", body, content_type=content_type)
        if response is None:
            continue
        failures.check(name, response.status_code in REFUSALS, f"answered {response.status_code}")
        failures.check(name, "detail" in error_body(response), "no error body")
        failures.check(name, state(agent_memory) == before, "stored something")
    failures.assert_none()


@pytest.mark.parametrize(
    "body",
    [
        b"{",
        b'{"content": "a", "memory_type": "fact"',
        b"[" * 100_000 + b"]" * 100_000,
        b'{"content": "\xff\xfe"}',
        b'{"content": "\\ud800", "memory_type": "fact"}',
        b'{"content": 1' + b"0" * 5000 + b"}",
        b'{"content": "a", "content": "b"}',
        b"\x00" * 100,
        b'{"content": NaN}',
    ],
    ids=["open", "truncated", "deep", "not-utf8", "lone-surrogate", "5000-digits", "duplicate-keys", "nul", "nan"],
)
def test_json_no_encoder_writes_is_a_400(curator_api, agent_memory, body):
    before = state(agent_memory)

    response = curator_api.generic("POST", f"{API}/memories/", body, content_type="application/json")

    assert response.status_code in (400, 201), response.content[:300]  # duplicate keys: the last one counts
    assert "detail" in error_body(response) or response.status_code == 201
    if response.status_code == 400:
        assert state(agent_memory) == before


def test_a_json_body_over_the_limit_is_a_413_that_says_it(curator_api, agent_memory, world, settings):
    settings.OAM_API_MAX_JSON_BYTES = 10_000
    before = state(agent_memory)

    response = send(curator_api, "post", f"{API}/memories/", {"content": "x" * 20_000, "memory_type": "fact"})

    assert response.status_code == 413
    assert "the limit is 10,000 bytes (OAM_API_MAX_JSON_BYTES)" in response.json()["detail"]
    assert state(agent_memory) == before
    under = send(curator_api, "post", f"{API}/memories/", {"content": "x" * 9_000, "memory_type": "fact"})
    assert under.status_code == 201


def test_a_json_body_over_the_form_limit_is_read_up_to_the_apis_own(curator_api, agent_memory, world, settings):
    """Django's DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB) bounds the dashboard's forms, not the API's JSON:
    three messages of a million characters each (3 MB) are one batch."""
    batch = {"messages": [{"role": "user", "content": "x" * 1_000_000} for _ in range(3)]}
    assert len(json.dumps(batch)) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE

    response = send(curator_api, "post", f"{API}/threads/{world.thread_id}/messages/", batch)

    assert response.status_code == 201, response.content[:300]
    assert len(response.json()["messages"]) == 3


def test_a_lying_content_length_reads_no_more_than_the_limit(curator_api, agent_memory, settings):
    """A declared length under the limit and a longer body: only the declared bytes are read (the
    WSGI stream stops there), so the body is cut and refused as JSON, never read whole."""
    settings.OAM_API_MAX_JSON_BYTES = 10_000
    body = json.dumps({"content": "x" * 50_000, "memory_type": "fact"}).encode()

    response = curator_api.generic(
        "POST", f"{API}/memories/", body, content_type="application/json", CONTENT_LENGTH="5000"
    )

    assert response.status_code == 400
    assert agent_memory.stats().memories == 0


def test_the_default_json_limit_leaves_room_for_two_full_size_images_in_base64(settings):
    largest = ImageInputLimitConfig().max_raw_image_bytes
    as_base64 = 4 * math.ceil(largest / 3)

    assert 2 * as_base64 + corpus.MB <= settings.OAM_API_MAX_JSON_BYTES


@override_settings(OAM_API_MAX_JSON_BYTES=300_000)
def test_a_message_batch_with_an_image_in_base64_fits_under_the_limit(curator_api, agent_memory, world):
    image = base64.b64encode(png_bytes("red", (200, 200))).decode()
    batch = {"messages": [{"role": "user", "content": [{"type": "image", "bytes": image, "mime_type": "image/png"}]}]}

    assert send(curator_api, "post", f"{API}/threads/{world.thread_id}/messages/", batch).status_code == 201


def test_an_image_upload_over_the_limit_is_a_413_before_it_is_read(curator_api, agent_memory, world):
    before = state(agent_memory)
    body = b"--b\r\nContent-Disposition: form-data; name=image; filename=a.png\r\n\r\n" + b"\0" * 100 + b"\r\n--b--\r\n"

    response = curator_api.generic(
        "POST", f"{API}/images/", body, content_type="multipart/form-data; boundary=b", CONTENT_LENGTH=str(10**9)
    )

    assert response.status_code == 413
    assert state(agent_memory) == before
