"""/api/v1/threads/: each persona, the dashboard's filters, creation through the curation service,
ETags and the history."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.curation import Actor, Curation
from memory.models import CurationEntry

LIST = "/api/v1/threads/"


def one(thread_id: str) -> str:
    return reverse("api:thread", args=[thread_id])


@pytest.fixture
def stored(agent_memory) -> str:
    thread = agent_memory.create_thread(
        thread_id="trip-42", user_id="alice", agent_id="atlas", metadata={"topic": "trip"}
    )
    thread.add_messages([{"role": "user", "content": "Find me a quiet hotel in Lisbon."}])
    return thread.thread_id


# --- who may do what ------------------------------------------------------------------------


def test_without_credentials_or_with_a_dead_token_it_is_a_401(anonymous, revoked_api, expired_api, stored):
    assert anonymous.get(LIST).status_code == 401
    assert anonymous.get(one(stored)).status_code == 401
    assert anonymous.post(LIST, {"id": "new"}, format="json").status_code == 401
    assert revoked_api.get(one(stored)).json() == {"detail": "This API token was revoked."}
    assert expired_api.delete(one(stored)).json() == {"detail": "This API token has expired."}


def test_viewers_read_and_cannot_write(viewer_api, curator_reading_api, agent_memory, stored):
    for client in (viewer_api, curator_reading_api):
        assert client.get(LIST).status_code == 200
        assert client.get(one(stored)).status_code == 200
        assert client.post(LIST, {"id": "new"}, format="json").status_code == 403
        assert client.patch(one(stored), {"metadata": {"x": 1}}, format="json").status_code == 403
        assert client.delete(one(stored)).status_code == 403
    assert [thread.id for thread in agent_memory.list_threads()] == [stored]
    assert agent_memory.get_thread_record(stored).metadata == {"topic": "trip"}
    assert CurationEntry.objects.count() == 0


def test_a_session_creates_with_its_csrf_token(session_api, agent_memory):
    assert session_api.post(LIST, {"id": "no-csrf"}, format="json").status_code == 403

    session_api.get("/")
    token = session_api.cookies["csrftoken"].value
    made = session_api.post(LIST, {"id": "with-csrf"}, format="json", HTTP_X_CSRFTOKEN=token)

    assert made.status_code == 201
    assert [thread.id for thread in agent_memory.list_threads()] == ["with-csrf"]
    entry = CurationEntry.objects.get()
    assert (entry.actor_name, entry.via, entry.token_name) == ("carl", "api", "")


# --- reading --------------------------------------------------------------------------------


def test_the_list_filters_as_the_dashboard_does_and_pages_by_cursor(viewer_api, agent_memory, stored):
    for index in range(3):
        agent_memory.create_thread(thread_id=f"bob-{index}", user_id="bob", agent_id="atlas", metadata={"n": index})

    first = viewer_api.get(LIST, {"user_id": "bob", "limit": 2}).json()
    second = viewer_api.get(first["next"]).json()

    assert [thread["id"] for thread in first["results"]] == ["bob-2", "bob-1"]  # latest activity first
    assert [thread["id"] for thread in second["results"]] == ["bob-0"] and second["next"] is None
    assert [t["id"] for t in viewer_api.get(LIST, {"metadata_filter": '{"n": 1}'}).json()["results"]] == ["bob-1"]
    assert [t["id"] for t in viewer_api.get(LIST, {"q": "TRIP"}).json()["results"]] == [stored]
    alice = viewer_api.get(LIST, {"user_id": "alice", "agent_id": "atlas"}).json()["results"]
    assert len(alice) == 1
    assert {key: alice[0][key] for key in ("id", "user_id", "agent_id", "metadata", "message_count", "version")} == {
        "id": stored,
        "user_id": "alice",
        "agent_id": "atlas",
        "metadata": {"topic": "trip"},
        "message_count": 1,
        "version": 1,
    }


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": "0"}, "limit"),
        ({"limit": "201"}, "limit"),
        ({"metadata_filter": "{not json"}, "metadata_filter"),
        ({"metadata_filter": '{"$bogus": 1}'}, "metadata_filter"),
        ({"cursor": "forged"}, "cursor"),
        ({"user_id": "x" * 600}, "user_id"),
        ({"q": "x" * 501}, "q"),
    ],
)
def test_bad_filters_are_a_400_with_the_parameter(viewer_api, stored, params, field):
    response = viewer_api.get(LIST, params)

    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()


def test_a_thread_comes_with_its_version_as_etag_and_a_missing_one_is_a_404(viewer_api, stored):
    response = viewer_api.get(one(stored))

    assert response.status_code == 200
    assert response["ETag"] == '"1"'
    assert response.json()["summary"] is None and response.json()["topics"] is None
    missing = viewer_api.get(one("no-such-thread"))
    assert missing.status_code == 404 and "no-such-thread" in missing.json()["detail"]


def deep(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels):
        value = {"k": value}
    return value


# --- creating -------------------------------------------------------------------------------


def test_a_curator_creates_a_thread_recorded_with_the_tokens_name_and_undoable(curator_api, curator, agent_memory):
    response = curator_api.post(
        LIST, {"id": "trip/43", "user_id": "alice", "agent_id": "atlas", "metadata": {"topic": "trip"}}, format="json"
    )

    assert response.status_code == 201, response.content
    assert response["Location"] == one("trip/43") == "/api/v1/threads/trip~2F43/"
    assert response["ETag"] == '"1"'
    assert curator_api.get(response["Location"]).json()["id"] == "trip/43"
    thread = agent_memory.get_thread_record("trip/43")
    assert (thread.user_id, thread.agent_id, thread.metadata) == ("alice", "atlas", {"topic": "trip"})
    entry = CurationEntry.objects.get()
    assert (entry.object_kind, entry.object_id, entry.action, entry.thread_id) == (
        "thread",
        "trip/43",
        "create",
        "trip/43",
    )
    assert (entry.actor_name, entry.via, entry.token_name, entry.summary) == (
        "carl",
        "api",
        "carl-script",
        "Created the thread",
    )
    assert entry.after["metadata"] == {"topic": "trip"}

    Curation(agent_memory, Actor(curator)).revert(entry)

    with pytest.raises(KeyError):
        agent_memory.get_thread_record("trip/43")


def test_the_history_page_shows_a_thread_created_through_the_api(curator_api, curator_client):
    curator_api.post(LIST, {"id": "trip-43"}, format="json")
    entry = CurationEntry.objects.get()

    page = curator_client.get(reverse("memory:history_entry", args=[entry.pk]))

    assert page.status_code == 200
    assert "Created the thread" in page.content.decode() and "via api" in page.content.decode()


def test_omitted_ids_are_made_by_the_engine_and_null_leaves_a_thread_unscoped(curator_api, agent_memory):
    made = curator_api.post(LIST, {}, format="json").json()
    unscoped = curator_api.post(LIST, {"user_id": None, "agent_id": None}, format="json").json()

    assert len(made["id"]) == 36 and len(made["user_id"]) == 36 and len(made["agent_id"]) == 36
    assert (unscoped["user_id"], unscoped["agent_id"]) == (None, None)
    assert agent_memory.get_thread_record(unscoped["id"]).user_id is None
    assert CurationEntry.objects.count() == 2


def test_a_duplicate_id_is_a_409_and_changes_nothing(curator_api, agent_memory, stored):
    response = curator_api.post(LIST, {"id": stored, "user_id": "mallory", "metadata": {"x": 1}}, format="json")

    assert response.status_code == 409
    assert "already exists" in response.json()["detail"]
    thread = agent_memory.get_thread_record(stored)
    assert (thread.user_id, thread.metadata) == ("alice", {"topic": "trip"})
    assert CurationEntry.objects.count() == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"id": ""}, "id"),
        ({"id": "a\x00b"}, "id"),
        ({"id": "x" * 513}, "id"),
        ({"id": "é" * 300}, "id"),  # 600 bytes in UTF-8: over the engine's 512
        ({"id": 42}, "id"),
        ({"user_id": ""}, "user_id"),
        ({"agent_id": True}, "agent_id"),
        ({"metadata": [1, 2]}, "metadata"),
        ({"metadata": "{}"}, "metadata"),
        ({"metadata": deep(40)}, "metadata"),
    ],
)
def test_bad_bodies_are_a_400_and_store_nothing(curator_api, agent_memory, body, field):
    response = curator_api.post(LIST, body, format="json")

    assert response.status_code == 400, response.content
    if field:
        assert field in response.json()["errors"], response.json()
    assert agent_memory.list_threads() == []
    assert CurationEntry.objects.count() == 0


def test_a_body_that_is_not_an_object_is_a_400(curator_api, agent_memory):
    for body in ([1, 2], "thread", 42):
        response = curator_api.post(LIST, body, format="json")
        assert response.status_code == 400, (body, response.content)
    assert curator_api.post(LIST, "{broken", content_type="application/json").status_code == 400
    assert curator_api.post(LIST, "id=x", content_type="text/plain").status_code == 415
    assert (
        curator_api.post(LIST, "id=x&metadata=y", content_type="application/x-www-form-urlencoded").status_code == 415
    )
    assert curator_api.post(LIST, {"id": "x", "metadata": "[1]"}, format="multipart").status_code == 415
    assert agent_memory.list_threads() == []


# --- updating and deleting ------------------------------------------------------------------


def test_an_update_replaces_the_metadata_and_moves_the_etag(curator_api, agent_memory, stored):
    response = curator_api.patch(one(stored), {"metadata": {"topic": "hotels"}}, format="json", HTTP_IF_MATCH='"1"')

    assert response.status_code == 200, response.content
    assert response["ETag"] == '"2"' and response.json()["metadata"] == {"topic": "hotels"}
    assert agent_memory.get_thread_record(stored).metadata == {"topic": "hotels"}
    entry = CurationEntry.objects.get()
    assert (entry.action, entry.token_name, entry.before["metadata"]) == ("update", "carl-script", {"topic": "trip"})


def test_the_same_metadata_again_changes_and_records_nothing(curator_api, stored):
    response = curator_api.patch(one(stored), {"metadata": {"topic": "trip"}}, format="json")

    assert response.status_code == 200 and response["ETag"] == '"1"'
    assert CurationEntry.objects.count() == 0


def test_null_metadata_clears_it(curator_api, agent_memory, stored):
    assert curator_api.patch(one(stored), {"metadata": None}, format="json").status_code == 200
    assert agent_memory.get_thread_record(stored).metadata is None


def test_an_update_against_an_old_etag_is_a_412_and_writes_nothing(curator_api, agent_memory, stored):
    agent_memory.update_thread(stored, metadata={"topic": "changed meanwhile"})

    response = curator_api.patch(one(stored), {"metadata": {"lost": True}}, format="json", HTTP_IF_MATCH='"1"')

    assert response.status_code == 412
    assert agent_memory.get_thread_record(stored).metadata == {"topic": "changed meanwhile"}
    assert curator_api.delete(one(stored), HTTP_IF_MATCH='"1"').status_code == 412
    assert agent_memory.get_thread_record(stored).id == stored
    assert CurationEntry.objects.count() == 0


@pytest.mark.parametrize("body", [{}, {"metadata": [1]}, {"metadata": "x"}])
def test_an_update_without_metadata_as_an_object_is_a_400(curator_api, agent_memory, stored, body):
    response = curator_api.patch(one(stored), body, format="json")

    assert response.status_code == 400
    assert "metadata" in response.json()["errors"]
    assert agent_memory.get_thread_record(stored).metadata == {"topic": "trip"}


def test_writes_to_a_missing_thread_are_404s(curator_api, stored):
    assert curator_api.patch(one("gone"), {"metadata": {}}, format="json").status_code == 404
    assert curator_api.delete(one("gone")).status_code == 404


def test_a_delete_is_a_204_recorded_with_everything_that_went_and_can_be_undone(
    curator_api, curator, agent_memory, stored
):
    response = curator_api.delete(one(stored), HTTP_IF_MATCH='"1"')

    assert response.status_code == 204
    assert curator_api.get(one(stored)).status_code == 404
    entry = CurationEntry.objects.get()
    assert (entry.action, entry.token_name) == ("delete", "carl-script")
    assert entry.summary.startswith("Deleted the thread with 1 message")

    Curation(agent_memory, Actor(curator)).revert(entry)

    assert agent_memory.get_thread_record(stored).message_count == 1
