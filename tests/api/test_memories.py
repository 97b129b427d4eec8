"""/api/v1/memories/: each persona, the error contract, ETags and the curation history."""

from __future__ import annotations

import pytest

from memory.models import CurationEntry
from tests.api.conftest import bearer

LIST = "/api/v1/memories/"


def one(memory_id: str) -> str:
    return f"{LIST}{memory_id}/"


@pytest.fixture
def stored(agent_memory) -> str:
    return agent_memory.add_memory(
        "Alice prefers window seats.", memory_type="preference", user_id="alice", memory_id="pref-1"
    )


# --- who may do what ------------------------------------------------------------------------


def test_without_credentials_it_is_a_401_that_says_how_to_authenticate(anonymous, stored):
    response = anonymous.get(LIST)

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'
    assert response.json() == {"detail": "Authentication credentials were not provided."}


@pytest.mark.parametrize(
    ("persona", "message"),
    [
        ("revoked_api", "This API token was revoked."),
        ("expired_api", "This API token has expired."),
    ],
)
def test_a_revoked_or_expired_token_is_a_401_that_says_which(request, db, stored, persona, message):
    # `db` named here: pytest-django orders tests by the fixtures they name, and one that gets its
    # database only through getfixturevalue would run after the live-server tests flushed it.
    client = request.getfixturevalue(persona)

    response = client.get(LIST)

    assert response.status_code == 401
    assert response.json() == {"detail": message}


def test_an_unknown_token_is_a_401(db, stored):
    assert bearer("oam_00000000_nope").get(LIST).status_code == 401
    assert bearer("not-even-ours").get(LIST).status_code == 401


def test_viewers_read_and_cannot_write(viewer_api, curator_reading_api, stored):
    for client in (viewer_api, curator_reading_api):
        assert client.get(LIST).status_code == 200
        assert client.get(one(stored)).status_code == 200
        refused = client.post(LIST, {"content": "x"}, format="json")
        assert refused.status_code == 403
        assert "Only curators" in refused.json()["detail"]
        assert client.patch(one(stored), {"content": "y"}, format="json").status_code == 403
        assert client.delete(one(stored)).status_code == 403
    assert CurationEntry.objects.count() == 0


def test_a_session_reads_and_writes_with_its_csrf_token(session_api, stored):
    assert session_api.get(LIST).status_code == 200
    refused = session_api.post(LIST, {"content": "No CSRF token."}, format="json")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]

    session_api.get("/")  # the dashboard sets the CSRF cookie
    token = session_api.cookies["csrftoken"].value
    made = session_api.post(LIST, {"content": "With its token."}, format="json", HTTP_X_CSRFTOKEN=token)
    assert made.status_code == 201
    assert CurationEntry.objects.get().token_name == ""


# --- reading --------------------------------------------------------------------------------


def test_the_list_filters_as_the_dashboard_does_and_pages_by_cursor(viewer_api, agent_memory, stored):
    for index in range(5):
        agent_memory.add_memory(f"Fact {index} of bob.", memory_type="fact", user_id="bob")

    first = viewer_api.get(LIST, {"user_id": "bob", "limit": 2, "order": "oldest"}).json()
    assert [item["content"] for item in first["results"]] == ["Fact 0 of bob.", "Fact 1 of bob."]
    second = viewer_api.get(first["next"]).json()
    assert [item["content"] for item in second["results"]] == ["Fact 2 of bob.", "Fact 3 of bob."]
    last = viewer_api.get(second["next"]).json()
    assert [item["content"] for item in last["results"]] == ["Fact 4 of bob."] and last["next"] is None

    prefs = viewer_api.get(LIST, {"memory_type": "preference"}).json()["results"]
    assert [(item["id"], item["memory_type"], item["user_id"]) for item in prefs] == [(stored, "preference", "alice")]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"memory_type": "opinion"}, "memory_type"),
        ({"limit": "0"}, "limit"),
        ({"metadata_filter": "{not json"}, "metadata_filter"),
        ({"user_id": "alice", "unscoped": "user_id"}, "user_id"),
        ({"cursor": "forged"}, "cursor"),
    ],
)
def test_bad_filters_are_a_400_with_the_parameter_and_its_message(viewer_api, stored, params, field):
    response = viewer_api.get(LIST, params)

    assert response.status_code == 400, response.content
    body = response.json()
    assert field in body["errors"], body
    assert body["detail"].startswith("Invalid input: ")


def test_a_record_comes_with_its_version_as_etag(viewer_api, stored):
    response = viewer_api.get(one(stored))

    assert response.status_code == 200
    assert response["ETag"] == '"1"'
    body = response.json()
    assert body["id"] == stored and body["memory_type"] == "preference" and body["version"] == 1


def test_a_missing_memory_is_a_404(viewer_api, stored):
    response = viewer_api.get(one("no-such-memory"))

    assert response.status_code == 404
    assert "no-such-memory" in response.json()["detail"]


# --- writing --------------------------------------------------------------------------------


def test_a_curator_token_creates_a_memory_recorded_with_the_tokens_name(curator_api, agent_memory):
    response = curator_api.post(
        LIST,
        {"content": "Bob is allergic to nuts.", "memory_type": "fact", "user_id": "bob", "id": "fact-nuts"},
        format="json",
    )

    assert response.status_code == 201
    assert response["Location"] == one("fact-nuts")
    assert response.json()["content"] == "Bob is allergic to nuts."
    assert agent_memory.get_memory("fact-nuts").user_id == "bob"
    entry = CurationEntry.objects.get()
    assert (entry.actor_name, entry.via, entry.token_name, entry.object_id) == (
        "carl",
        "api",
        "carl-script",
        "fact-nuts",
    )


def test_a_duplicate_id_is_a_409_and_changes_nothing(curator_api, agent_memory, stored):
    response = curator_api.post(LIST, {"content": "Another.", "id": stored}, format="json")

    assert response.status_code == 409
    assert agent_memory.get_memory(stored).content == "Alice prefers window seats."
    assert CurationEntry.objects.count() == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "content"),
        ({"content": "x", "memory_type": "opinion"}, "memory_type"),
        ({"content": "x", "metadata": [1, 2]}, "metadata"),
        ({"content": "x", "thread_id": "no-such-thread"}, "thread_id"),
        ({"content": "x", "timestamp": "yesterday"}, "timestamp"),
        ({"content": "x", "ttl_days": 0}, "ttl_days"),
    ],
)
def test_bad_bodies_are_a_400_under_their_field_and_store_nothing(curator_api, agent_memory, body, field):
    response = curator_api.post(LIST, body, format="json")

    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()
    assert agent_memory.list_memories() == []


def test_a_lifetime_past_the_dashboards_cap_is_a_400_under_ttl_days(curator_api, agent_memory, stored):
    """The API and the memory forms take lifetimes up to the same cap (memory.web.fields.MAX_TTL_DAYS)."""
    created = curator_api.post(LIST, {"content": "x", "ttl_days": 36_501}, format="json")
    edited = curator_api.patch(one(stored), {"ttl_days": 36_501}, format="json")

    for response in (created, edited):
        assert response.status_code == 400
        assert response.json()["errors"] == {"ttl_days": ["Ensure this value is less than or equal to 36500."]}
    assert [record.id for record in agent_memory.list_memories(limit=None)] == [stored]
    assert curator_api.post(LIST, {"content": "x", "ttl_days": 36_500}, format="json").status_code == 201


def test_an_update_writes_what_is_given_and_moves_the_etag(curator_api, agent_memory, stored):
    response = curator_api.patch(
        one(stored), {"content": "Alice prefers aisle seats."}, format="json", HTTP_IF_MATCH='"1"'
    )

    assert response.status_code == 200, response.content
    assert response["ETag"] == '"2"'
    record = agent_memory.get_memory(stored)
    assert (record.content, record.user_id) == ("Alice prefers aisle seats.", "alice")
    assert CurationEntry.objects.get().action == "update"


def test_an_update_against_an_old_etag_is_a_412_and_writes_nothing(curator_api, agent_memory, stored):
    agent_memory.update_memory(stored, content="Changed meanwhile.")

    response = curator_api.patch(one(stored), {"content": "Lost update."}, format="json", HTTP_IF_MATCH='"1"')

    assert response.status_code == 412
    assert agent_memory.get_memory(stored).content == "Changed meanwhile."
    assert curator_api.delete(one(stored), HTTP_IF_MATCH='"1"').status_code == 412


def test_a_delete_is_a_204_and_can_be_undone_from_the_history(curator_api, agent_memory, stored):
    response = curator_api.delete(one(stored))

    assert response.status_code == 204
    with pytest.raises(KeyError):
        agent_memory.get_memory(stored)
    entry = CurationEntry.objects.get()
    assert entry.action == "delete" and entry.before is not None


# --- found by schemathesis (tests/api/test_schemathesis.py) ----------------------------------


def test_an_invalid_update_is_a_400_even_against_an_old_etag(curator_api, agent_memory, stored):
    response = curator_api.patch(one(stored), {"memory_type": "opinion"}, format="json", HTTP_IF_MATCH='"7"')

    assert response.status_code == 400
    assert "memory_type" in response.json()["errors"]
    assert agent_memory.get_memory(stored).version == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"content": 0}, "content"),
        ({"content": "x", "agent_id": 0}, "agent_id"),
        ({"content": "x", "user_id": True}, "user_id"),
        ({"content": "x", "timestamp": 1700000000}, "timestamp"),
        ({"content": "x", "ttl_days": "7"}, "ttl_days"),
        ({"content": "x", "ttl_days": True}, "ttl_days"),
        ({"content": "x", "ttl_days": 7.5}, "ttl_days"),
    ],
)
def test_a_json_value_of_the_wrong_type_is_a_400_not_converted(curator_api, agent_memory, body, field):
    response = curator_api.post(LIST, body, format="json")

    assert response.status_code == 400, response.content
    assert field in response.json()["errors"]
    assert agent_memory.list_memories() == []


def test_bodies_are_json_a_form_is_a_415(curator_api, agent_memory, stored):
    made = curator_api.post(LIST, {"content": "From a form."})  # multipart, the test client's default
    changed = curator_api.patch(one(stored), "content=From+a+form.", content_type="application/x-www-form-urlencoded")

    assert made.status_code == changed.status_code == 415
    assert agent_memory.get_memory(stored).content == "Alice prefers window seats."
    assert len(agent_memory.list_memories()) == 1


def test_a_session_browses_the_api_as_html_with_the_way_back_to_the_dashboard(session_api, stored):
    response = session_api.get(LIST, HTTP_ACCEPT="text/html")

    html = response.content.decode()
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    assert '<a class="navbar-brand" href="/">OAM Dashboard</a>' in html
    assert 'href="/api/docs/">API docs</a>' in html
    assert "Alice prefers window seats." in html


def test_a_superseded_memory_is_not_set_valid_while_its_link_stands(curator_api, agent_memory):
    agent_memory.add_memory("Alice drinks tea.", memory_type="fact", memory_id="tea", autonomous_linking=False)
    agent_memory.add_memory("Alice drinks coffee.", memory_type="fact", memory_id="coffee", autonomous_linking=False)
    agent_memory.link_records("coffee", "fact", "tea", "fact", "supersedes")
    version = agent_memory.get_memory("tea").version

    response = curator_api.patch("/api/v1/memories/tea/", {"status": "valid"}, format="json")

    assert response.status_code == 400
    assert response.json()["errors"]["status"] == [
        "status stays invalid while a link retires this memory: “Alice drinks coffee.” supersedes it. Delete that "
        "link, or change its type to one that does not retire (supports, contradicts), and the memory is valid again."
    ]
    assert agent_memory.get_memory("tea").version == version
