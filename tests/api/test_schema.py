"""The OpenAPI schema (/api/schema/, YAML, or JSON with ?format=json) and its docs pages (Swagger UI
at /api/docs/, Redoc at /api/redoc/): for users of the API only, valid OpenAPI 3, good enough to
generate a client from, and served offline. The checks run over every operation the schema has, so
each endpoint added is held to them."""

from __future__ import annotations

import inspect
import json
import re
from collections import Counter
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml
from django.core.management import call_command
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.validation import validate_schema

from memory.api.base import EngineView

SCHEMA = "/api/schema/"
DOCS = ("/api/docs/", "/api/redoc/")
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


@pytest.fixture
def schema(viewer_api) -> dict[str, Any]:
    response = viewer_api.get(SCHEMA, {"format": "json"})
    assert response.status_code == 200
    return json.loads(response.content)


def operations(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(METHOD path, operation) for every operation of the schema."""
    return [
        (f"{method.upper()} {path}", operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    ]


# --- who may read it ------------------------------------------------------------------------


@pytest.mark.parametrize("query", [{}, {"format": "json"}])
def test_without_credentials_the_schema_is_a_401(anonymous, query):
    response = anonymous.get(SCHEMA, query)

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


def test_a_token_gets_it_as_yaml_and_as_json_alike(viewer_api):
    as_yaml = viewer_api.get(SCHEMA)
    as_json = viewer_api.get(SCHEMA, {"format": "json"})

    assert as_yaml.status_code == as_json.status_code == 200
    assert as_yaml["Content-Type"].startswith("application/vnd.oai.openapi")
    assert as_json["Content-Type"].startswith("application/vnd.oai.openapi+json")
    assert yaml.safe_load(as_yaml.content) == json.loads(as_json.content)


def test_a_logged_in_user_gets_it_too(client, viewer):
    client.force_login(viewer)

    response = client.get(SCHEMA, {"format": "json"})

    assert response.status_code == 200
    assert json.loads(response.content)["openapi"].startswith("3.")


# --- valid, and good enough to generate a client from ---------------------------------------


def test_the_served_schema_validates_as_openapi_3(schema):
    assert schema["openapi"].startswith("3.0")
    validate_schema(schema)  # jsonschema against the OpenAPI 3.0 specification's schema; raises if not


def test_drf_spectacular_generates_it_without_a_warning_or_an_error(tmp_path):
    GENERATOR_STATS.reset()  # what earlier tests' generation noted is not this run's

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yml"))

    assert not GENERATOR_STATS, "drf-spectacular warned or erred (see stderr)"
    assert yaml.safe_load((tmp_path / "schema.yml").read_text())["paths"]


def test_the_schema_has_operations_under_api_v1_only(schema):
    assert schema["paths"]
    assert all(path.startswith("/api/v1/") for path in schema["paths"])
    assert "/api/v1/memories/" in schema["paths"]


def test_every_operation_has_a_unique_operation_id_and_a_summary(schema):
    ids = Counter(operation.get("operationId") for _, operation in operations(schema))

    assert None not in ids
    assert [name for name, count in ids.items() if count > 1] == []
    for name in ids:
        assert re.fullmatch(r"[a-z]+(_[a-z]+)+", name), f"{name}: <resource>_<action>"
    assert [label for label, operation in operations(schema) if not operation.get("summary", "").strip()] == []


def test_no_operation_is_described_by_engine_views_notes_for_developers(schema):
    notes = inspect.getdoc(EngineView)

    assert [label for label, operation in operations(schema) if operation.get("description") == notes] == []


def typed(code: str, response: dict[str, Any]) -> bool:
    """A 204 without a body, or a body with a schema: JSON, or bytes (a binary string)."""
    if code == "204":
        return "content" not in response
    contents = response.get("content") or {}
    return bool(contents) and all(
        media.get("schema") and ("json" in kind or media["schema"].get("format") == "binary")
        for kind, media in contents.items()
    )


def test_every_operation_answers_typed_2xx_responses(schema):
    untyped = []
    for label, operation in operations(schema):
        successes = {code: response for code, response in operation["responses"].items() if code.startswith("2")}
        if not successes:
            untyped.append(f"{label}: no 2xx response")
        untyped += [f"{label} {code}" for code, response in successes.items() if not typed(code, response)]

    assert untyped == []


def test_every_operation_documents_401_and_403_with_the_error_body(schema):
    error = {"$ref": "#/components/schemas/Error"}
    missing = [
        f"{label} {code}"
        for label, operation in operations(schema)
        for code in ("401", "403")
        if operation["responses"].get(code, {}).get("content", {}).get("application/json", {}).get("schema") != error
    ]

    assert missing == []


def test_every_operation_documents_the_errors_its_input_can_cause(schema):
    """A body can be unreadable (400) or of another type (415); an If-Match malformed (400) or stale
    (412); an id in the path missing, or one no record can have (404)."""
    missing = []
    for label, operation in operations(schema):
        needed = set()
        if "requestBody" in operation:
            needed |= {"400", "415"}
        places = {(parameter["in"], parameter["name"]) for parameter in operation.get("parameters", ())}
        if ("header", "If-Match") in places:
            needed |= {"400", "412"}
        if any(place == "path" for place, _ in places):
            needed.add("404")
        missing += [f"{label} {code}" for code in sorted(needed - set(operation["responses"]))]

    assert missing == []


def has_example(media: dict[str, Any], components: dict[str, Any]) -> bool:
    if media.get("examples") or "example" in media:
        return True
    schema = media.get("schema", {})
    if "$ref" in schema:
        schema = components["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return "example" in schema


def test_every_operation_that_takes_a_body_shows_an_example_of_it(schema):
    bodies = [
        (label, operation["requestBody"]) for label, operation in operations(schema) if "requestBody" in operation
    ]
    without = [
        label
        for label, body in bodies
        if not any(has_example(media, schema["components"]) for media in body["content"].values())
    ]

    assert bodies, "no operation takes a body?"
    assert without == []


def test_every_parameter_is_described(schema):
    bare = [
        f"{label} {parameter['name']}"
        for label, operation in operations(schema)
        for parameter in operation.get("parameters", ())
        if len(parameter.get("description", "").split()) < 3  # more than a filter bar's label ("Agent")
    ]

    assert bare == []


def test_the_memory_lists_parameters_carry_their_limits(schema):
    parameters = {
        parameter["name"]: parameter for parameter in schema["paths"]["/api/v1/memories/"]["get"]["parameters"]
    }

    assert parameters["limit"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 200}
    assert parameters["limit"]["allowEmptyValue"] is True
    assert parameters["user_id"]["schema"] == {"type": "string", "maxLength": 512}
    assert parameters["memory_type"]["schema"]["items"]["enum"] == ["memory", "fact", "guideline", "preference"]
    assert "allowEmptyValue" not in parameters["memory_type"]  # `memory_type=` names no type: a 400
    assert parameters["order"]["description"].startswith("The order of the records")


def test_a_messages_role_is_an_enum_of_the_roles(schema):
    components = schema["components"]["schemas"]

    assert components["MessageRoleEnum"]["enum"] == ["user", "assistant", "system", "tool"]
    for body in ("MessageInputRequest", "PatchedMessageUpdateRequest", "ImageUploadRequest"):
        role = components[body]["properties"]["role"]
        assert role["allOf"] == [{"$ref": "#/components/schemas/MessageRoleEnum"}], body


def test_bodies_are_json_only(schema):
    kinds = {
        kind for _, operation in operations(schema) for kind in operation.get("requestBody", {}).get("content", {})
    }

    assert "application/json" in kinds
    assert kinds <= {"application/json", "multipart/form-data"}  # uploads take multipart


# --- the docs pages -------------------------------------------------------------------------


class AssetUrls(HTMLParser):
    """The URLs a page loads from (src and href attributes), and apart from them the links it
    offers (an <a>'s href), which load nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = [value for name, value in attrs if name in ("src", "href") and value]
        if tag == "a":
            self.links += found
        else:
            self.urls += found


@pytest.mark.parametrize("path", DOCS)
def test_the_docs_pages_load_their_assets_from_our_static_files(client, viewer, path):
    client.force_login(viewer)

    response = client.get(path)

    assert response.status_code == 200
    html = response.content.decode()
    parser = AssetUrls()
    parser.feed(html)
    assert parser.urls, "no script or stylesheet?"
    assert all(url.startswith("/static/") for url in parser.urls), parser.urls
    assert any(url.startswith("/static/drf_spectacular_sidecar/") and url.endswith(".js") for url in parser.urls)
    assert "/" in parser.links and all(link.startswith("/") for link in parser.links)  # back to the dashboard
    # Nor anywhere else in the page (inline scripts, settings): no URL to another host.
    hosts = {urlparse(url).netloc for url in re.findall(r"https?://[^\s\"'<>)]+", html)}
    assert hosts <= {"testserver"}, hosts
    assert "/api/schema/" in html
    assert "default-src 'self'" in response["Content-Security-Policy"]


def test_swagger_ui_has_no_online_validator(client, viewer):
    client.force_login(viewer)

    html = client.get("/api/docs/").content.decode()

    assert re.search(r'"validatorUrl":\s*null', html)


@pytest.mark.parametrize("path", DOCS)
def test_anonymous_visitors_of_the_docs_are_sent_to_the_login_page(client, path):
    response = client.get(path)

    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={path}"
