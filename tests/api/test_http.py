"""What every write of the API shares, over all its resources: JSON bodies (a form is a 415, JSON it
cannot read a 400), and `If-Match` (memory.api.base.expected_version)."""

from __future__ import annotations

import re

import pytest

from memory.api.base import PRECONDITION
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


# --- If-Match -------------------------------------------------------------------------------

WRITES = [  # (method, path, a valid body, an invalid body)
    ("patch", "/api/v1/memories/fact-old/", {"content": "Alice ate fish."}, {"metadata": "an object?"}),
    ("delete", "/api/v1/memories/fact-old/", None, None),
    ("patch", "/api/v1/threads/trip-42/", {"metadata": {"topic": "trains"}}, {"metadata": "an object?"}),
    ("delete", "/api/v1/threads/trip-42/", None, None),
    ("patch", MESSAGE, {"content": "I'm vegan."}, {"metadata": "an object?"}),
    ("delete", MESSAGE, None, None),
    ("patch", "/api/v1/images/map-1/", {"description": "A map."}, {"metadata": "an object?"}),
    ("delete", "/api/v1/images/map-1/", None, None),
    ("patch", "/api/v1/links/{link}/", {"metadata": {"checked": True}}, {"metadata": "an object?"}),
    ("delete", "/api/v1/links/{link}/", None, None),
    ("put", "/api/v1/users/alice/", {"information": "Alice, vegan."}, {"information": None}),
    ("patch", "/api/v1/agents/atlas/", {"information": "Atlas."}, {"information": None}),
    ("delete", "/api/v1/users/alice/", None, None),
]
WITH_BODIES = [write for write in WRITES if write[2] is not None]


def send(client, method: str, path: str, body: dict | None, if_match: str):
    return getattr(client, method)(path, body, format="json", HTTP_IF_MATCH=if_match)


def read(client, path: str) -> tuple[int, str | None]:
    response = client.get(path)
    return response.status_code, response.get("ETag")


@pytest.mark.parametrize(("method", "template", "body", "invalid"), WRITES)
def test_the_records_etag_as_if_match_writes(curator_api, world, method, template, body, invalid):
    path = url(template, world)
    _, tag = read(curator_api, path)

    response = send(curator_api, method, path, body, tag)

    assert response.status_code in (200, 204), response.content


@pytest.mark.parametrize(
    "header",
    ['"{v}"', '"7", "{v}"', ' , "7",, "{v}" , ', "*", " * "],
    ids=["the-etag", "a-list", "a-list-with-empty-elements", "star", "star-and-spaces"],
)
def test_if_match_is_any_of_a_list_of_etags_or_a_star(curator_api, world, header):
    path = "/api/v1/memories/fact-old/"
    version = int(read(curator_api, path)[1].strip('"'))

    response = send(curator_api, "patch", path, {"content": "Alice ate fish."}, header.format(v=version))

    assert response.status_code == 200, response.content
    assert response["ETag"] == f'"{version + 1}"'


@pytest.mark.parametrize(("method", "template", "body", "invalid"), WRITES)
def test_another_etag_or_a_weak_one_is_a_412_and_writes_nothing(curator_api, world, method, template, body, invalid):
    """Strong comparison (RFC 9110 §13.1.1): a weak tag never matches, even of the current version."""
    path = url(template, world)
    before = read(curator_api, path)
    weak = f"W/{before[1]}"

    for stale in ('"99"', weak, f'"99", {weak}'):
        response = send(curator_api, method, path, body, stale)

        assert response.status_code == 412, (stale, response.content)
        assert "read it again" in response.json()["detail"]
        assert read(curator_api, path) == before


MALFORMED = ["", " ", "1", '"1', "W/1", 'w/"1"', "abc", '"1" "2"', '*, "1"', ","]
WELL_FORMED = ['"1"', '"7", "1"', ' , "7",, "1" , ', "*", " * ", 'W/"1"', '""', '"a,b"']


def test_the_schema_documents_the_if_match_the_api_takes():
    """The header's pattern (what schemathesis and generated clients go by) is the one the API checks."""
    pattern = PRECONDITION.type["pattern"]

    assert [header for header in WELL_FORMED if not re.search(pattern, header)] == []
    assert [header for header in MALFORMED if re.search(pattern, header)] == []


@pytest.mark.parametrize("header", MALFORMED)
def test_an_if_match_that_names_no_etag_is_a_400_not_a_412(curator_api, world, header):
    """Empty, or neither * nor a list of quoted tags: the client's mistake (an ETag variable never
    set, say), which reading the record again would not cure."""
    path = "/api/v1/memories/fact-old/"
    before = read(curator_api, path)

    response = send(curator_api, "patch", path, {"content": "Alice ate fish."}, header)

    assert response.status_code == 400, response.content
    assert list(response.json()["errors"]) == ["If-Match"]
    assert read(curator_api, path) == before


@pytest.mark.parametrize(("method", "template", "body", "invalid"), WRITES)
def test_every_write_refuses_an_empty_if_match(curator_api, world, method, template, body, invalid):
    path = url(template, world)
    before = read(curator_api, path)

    response = send(curator_api, method, path, body, "")

    assert response.status_code == 400, response.content
    assert "If-Match" in response.json()["errors"]
    assert read(curator_api, path) == before


@pytest.mark.parametrize(("method", "template", "body", "invalid"), WITH_BODIES)
def test_an_invalid_body_is_a_400_whatever_if_match_says(curator_api, world, method, template, body, invalid):
    """The precondition is evaluated last, just before the write (memory.api.base.expected_version)."""
    path = url(template, world)
    before = read(curator_api, path)

    for header in ('"99"', ""):
        response = send(curator_api, method, path, invalid, header)
        broken = curator_api.generic(method.upper(), path, "{", content_type="application/json", HTTP_IF_MATCH=header)

        assert response.status_code == broken.status_code == 400, (header, response.content, broken.content)
        assert "If-Match" not in response.json()["errors"]
        assert read(curator_api, path) == before


# --- paths no view takes --------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/history/abc/",  # entry ids are numbers
        "/api/v1/history/null,null/revert/",
        f"/api/v1/memories/{'é' * 300}/",  # 600 bytes in UTF-8: no record can have it
        "/api/v1/nothing-here/",
        "/api/v2/memories/",
    ],
)
def test_a_path_under_api_that_no_view_takes_is_a_json_404(curator_api, path):
    response = curator_api.get(path)

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert set(response.json()) == {"detail"}


def test_elsewhere_a_404_is_the_dashboards_page(client, curator):
    client.force_login(curator)

    response = client.get("/no-such-page/")

    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


# --- content negotiation --------------------------------------------------------------------


@pytest.mark.parametrize(("accept", "query"), [("application/xml", ""), ("image/png", ""), ("*/*", "?format=xml")])
def test_an_answer_the_api_cannot_make_as_asked_is_json_not_a_406(viewer_api, world, accept, query):
    response = viewer_api.get(f"/api/v1/memories/{query}", HTTP_ACCEPT=accept)

    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    assert {item["id"] for item in response.json()["results"]} == {"fact-old", "fact-vegetarian"}


def test_the_browsable_api_is_still_there_for_a_browser(client, curator, world):
    client.force_login(curator)

    response = client.get("/api/v1/memories/", HTTP_ACCEPT="text/html")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")


# --- JSON types -----------------------------------------------------------------------------

SEARCH = {"query": "diet", "user_id": "alice"}


@pytest.mark.parametrize(
    ("method", "template", "body", "field"),
    [
        ("post", "/api/v1/search/", {**SEARCH, "formatted": 0}, "formatted"),
        ("post", "/api/v1/search/", {**SEARCH, "exact_agent_match": "true"}, "exact_agent_match"),
        ("post", "/api/v1/search/", {**SEARCH, "max_results": "5"}, "max_results"),
        ("post", "/api/v1/search/", {**SEARCH, "num_hops": True}, "num_hops"),
        ("post", "/api/v1/search/", {**SEARCH, "query": 42}, "query"),
        (
            "post",
            "/api/v1/search/",
            {**SEARCH, "formatted": True, "format_config": {"show_role": 1}},
            "format_config.show_role",
        ),
        ("put", "/api/v1/users/alice/", {"information": 42}, "information"),
        ("patch", "/api/v1/images/map-1/", {"description": False}, "description"),
        ("patch", "/api/v1/links/{link}/", {"relation_type": 7}, "relation_type"),
        ("post", "/api/v1/threads/trip-42/messages/", {"messages": [{"role": 1, "content": "Hi"}]}, "messages[0].role"),
        ("patch", MESSAGE, {"timestamp": 1714556400}, "timestamp"),
    ],
)
def test_a_value_of_another_json_type_than_documented_is_a_400(curator_api, world, method, template, body, field):
    """What the schema says, not what DRF would convert: 0 is not false, "5" not 5, 42 not "42"."""
    response = getattr(curator_api, method)(url(template, world), body, format="json")

    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()
