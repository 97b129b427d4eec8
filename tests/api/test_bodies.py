"""What a request body may say, and what is refused with a 400 naming it (issue 25): ids that are
not one clean line (control characters, line breaks, spaces at either end: refused, never
trimmed), keys no field has (never dropped silently), and keys given twice in one JSON object
(never read one way). The schema says the same: no property but the fields."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from memory.engine import AgentMemory
from tests.web.world import png_bytes

API = "/api/v1"


def send(client, method: str, url: str, text: str):
    """A JSON body as text (a dict cannot hold a key twice)."""
    return getattr(client, method)(url, text, content_type="application/json")


def errors_of(response) -> dict[str, list[str]]:
    assert response.status_code == 400, response.content
    body = json.loads(response.content)
    assert body["detail"].startswith("Invalid input: ")
    return body["errors"]


@pytest.fixture
def two_memories(agent_memory: AgentMemory) -> tuple[str, str]:
    return (
        agent_memory.add_memory("Alice likes tea.", memory_id="tea", user_id="alice"),
        agent_memory.add_memory("Alice likes trains.", memory_id="trains", user_id="alice"),
    )


# --- ids ------------------------------------------------------------------------------------------

BAD_IDS = {
    "a\nb": "control characters or line breaks",
    "a\rb": "control characters or line breaks",
    "a\tb": "control characters or line breaks",
    "a\x85b": "control characters or line breaks",
    " padded": "begin or end with whitespace",
    "padded ": "begin or end with whitespace",
}


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("memories/", {"content": "x", "user_id": "alice"}, "id"),
        ("memories/", {"content": "x"}, "user_id"),
        ("threads/", {}, "id"),
        ("threads/", {}, "agent_id"),
        ("links/", {"source_record_id": "tea", "target_record_id": "trains"}, "relation_type"),
        ("links/", {"source_record_id": "tea", "relation_type": "supports"}, "target_record_id"),
        ("search/", {"query": "tea"}, "user_id"),
    ],
)
@pytest.mark.parametrize("bad", list(BAD_IDS), ids=repr)
def test_an_id_that_is_not_one_clean_line_is_a_400_under_its_field(
    curator_api, agent_memory, two_memories, path, body, field, bad
):
    before = agent_memory.stats()

    response = curator_api.post(f"{API}/{path}", {**body, field: bad}, format="json")

    errors = errors_of(response)
    assert list(errors) == [field]
    assert BAD_IDS[bad] in errors[field][0]
    assert agent_memory.stats() == before


def test_a_newline_in_a_message_id_or_role_is_a_400_under_its_path(curator_api, agent_memory):
    agent_memory.create_thread(thread_id="t1", user_id="alice")
    url = f"{API}/threads/t1/messages/"

    response = curator_api.post(url, {"messages": [{"role": "user\n", "content": "x", "id": "m\n1"}]}, format="json")

    assert set(errors_of(response)) == {"messages[0].role", "messages[0].id"}
    assert agent_memory.get_thread("t1").get_messages() == []


def test_spaces_around_an_id_are_not_trimmed_into_another_id(curator_api, agent_memory, two_memories):
    """DRF trims text fields by default: " tea" would have linked tea, not the memory named."""
    response = curator_api.post(
        f"{API}/links/",
        {"source_record_id": " tea", "target_record_id": "trains", "relation_type": "supports"},
        format="json",
    )

    assert "begin or end with whitespace" in errors_of(response)["source_record_id"][0]
    assert agent_memory.list_relations(limit=None) == []


# --- unknown fields -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "text", "field"),
    [
        ("post", "memories/", '{"content": "x", "user_id": "alice", "memory_typ": "fact"}', "memory_typ"),
        ("patch", "memories/tea/", '{"contents": "changed"}', "contents"),
        ("post", "threads/", '{"user_id": "alice", "title": "Trip"}', "title"),
        ("post", "search/", '{"query": "tea", "user_id": "alice", "limit": 3}', "limit"),
        (
            "post",
            "search/",
            '{"query": "tea", "user_id": "alice", "formatted": true, "format_config": {"show_score": true}}',
            "format_config.show_score",
        ),
        ("put", "users/alice/", '{"information": "Alice.", "name": "Alice"}', "name"),
    ],
)
def test_an_unknown_field_is_a_400_naming_it_and_changes_nothing(
    curator_api, agent_memory, two_memories, method, path, text, field
):
    before = agent_memory.stats()

    errors = errors_of(send(curator_api, method, f"{API}/{path}", text))

    assert list(errors) == [field]
    assert errors[field][0].startswith("Unknown field; the fields are ")
    assert agent_memory.stats() == before
    assert agent_memory.get_memory("tea").content == "Alice likes tea."


def test_an_unknown_field_of_an_upload_is_a_400_naming_it(curator_api, agent_memory):
    before = agent_memory.stats()
    image = SimpleUploadedFile("a.png", png_bytes("yellow"), content_type="image/png")
    response = curator_api.post(f"{API}/images/", {"image": image, "user_id": "alice", "caption": "A map."})

    assert list(errors_of(response)) == ["caption"]
    assert agent_memory.stats() == before


# --- keys given twice -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "text", "where"),
    [
        ("post", "memories/", '{"content": "x", "user_id": "alice", "user_id": "bob"}', "user_id"),
        ("patch", "memories/tea/", '{"content": "a", "content": "b"}', "content"),
        ("patch", "memories/tea/", '{"metadata": {"source": "chat", "source": "import"}}', "metadata.source"),
        (
            "post",
            "search/",
            '{"query": "tea", "user_id": "alice", "metadata_filter": {"n": 1}, "query": "trains"}',
            "query",
        ),
    ],
)
def test_a_key_given_twice_is_a_400_under_its_path(curator_api, agent_memory, two_memories, method, path, text, where):
    """Python's json keeps the last of two keys, other parsers the first: the API reads neither."""
    before = agent_memory.stats()

    errors = errors_of(send(curator_api, method, f"{API}/{path}", text))

    assert errors == {where: ["Given more than once in the same object: send each key once."]}
    assert agent_memory.stats() == before
    assert agent_memory.get_memory("tea").content == "Alice likes tea."


def test_keys_given_twice_inside_a_batch_are_each_named(curator_api, agent_memory):
    agent_memory.create_thread(thread_id="t1", user_id="alice")
    text = (
        '{"messages": [{"role": "user", "content": "a"},'
        ' {"role": "user", "role": "assistant", "content": "b", "metadata": {"k": 1, "k": 2}}]}'
    )

    errors = errors_of(send(curator_api, "post", f"{API}/threads/t1/messages/", text))

    assert set(errors) == {"messages[1].role", "messages[1].metadata.k"}
    assert agent_memory.get_thread("t1").get_messages() == []


def test_the_same_key_in_different_objects_is_fine(curator_api, agent_memory):
    text = '{"content": "x", "user_id": "alice", "metadata": {"user_id": "alice", "nested": {"user_id": 1}}}'
    response = send(curator_api, "post", f"{API}/memories/", text)
    assert response.status_code == 201


# --- the schema says it ---------------------------------------------------------------------------


def request_bodies(schema: dict[str, Any]) -> list[str]:
    """The component names of every operation's request body."""
    return sorted(
        {
            media["schema"]["$ref"].rsplit("/", 1)[1]
            for item in schema["paths"].values()
            for operation in item.values()
            if isinstance(operation, dict)
            for media in operation.get("requestBody", {}).get("content", {}).values()
            if "$ref" in media.get("schema", {})
        }
    )


def test_every_request_body_of_the_schema_takes_no_property_but_its_fields(viewer_api):
    schema = json.loads(viewer_api.get("/api/schema/", {"format": "json"}).content)
    components = schema["components"]["schemas"]

    bodies = request_bodies(schema)

    assert "MemoryCreateRequest" in bodies and "SearchRequest" in bodies
    assert [name for name in bodies if components[name].get("additionalProperties") is not False] == []
    assert components["SearchFormatConfigRequest"]["additionalProperties"] is False  # nested too
    assert components["MemoryCreateRequest"]["properties"]["metadata"]["additionalProperties"] == {}  # any keys
