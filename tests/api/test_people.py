"""/api/v1/users/ and /api/v1/agents/: each persona, the lists with what each owns, a user or agent
with their profile and counts, profiles written with If-Match on their version, and deletes that
take everything they own (and can be undone from the history)."""

from __future__ import annotations

import pytest

from memory.models import CurationEntry
from tests.web.world import World, build_world

USERS, AGENTS = "/api/v1/users/", "/api/v1/agents/"


@pytest.fixture
def world(agent_memory) -> World:
    """alice (with a profile) owns the thread trip-42 with atlas (with a profile)."""
    world = build_world(agent_memory)
    agent_memory.add_memory("Bob is tall.", memory_type="fact", memory_id="bob-tall", user_id="bob")
    return world


# --- who may do what ------------------------------------------------------------------------


def test_without_credentials_or_with_a_dead_token_it_is_a_401(anonymous, revoked_api, expired_api, world):
    for client in (anonymous, revoked_api, expired_api):
        for url in (USERS, AGENTS, f"{USERS}alice/", f"{AGENTS}atlas/"):
            assert client.get(url).status_code == 401
        assert client.delete(f"{USERS}alice/").status_code == 401


def test_viewers_read_people_and_cannot_change_them(viewer_api, curator_reading_api, agent_memory, world):
    for client in (viewer_api, curator_reading_api):
        assert client.get(USERS).status_code == 200
        assert client.get(f"{AGENTS}atlas/").status_code == 200
        assert client.put(f"{USERS}alice/", {"information": "x"}, format="json").status_code == 403
        assert client.patch(f"{AGENTS}atlas/", {"information": "x"}, format="json").status_code == 403
        assert client.delete(f"{USERS}alice/").status_code == 403
    assert agent_memory.get_user("alice").content == "Alice, a vegetarian who travels by train."
    assert agent_memory.get_thread_record(world.thread_id)
    assert CurationEntry.objects.count() == 0


def test_a_session_writes_a_profile_with_its_csrf_token(session_api, agent_memory, world):
    session_api.get("/")
    response = session_api.patch(
        f"{USERS}bob/",
        {"information": "Bob, tall."},
        format="json",
        HTTP_X_CSRFTOKEN=session_api.cookies["csrftoken"].value,
    )
    assert response.status_code == 200, response.content
    assert agent_memory.get_user("bob").content == "Bob, tall."


# --- reading --------------------------------------------------------------------------------


def test_the_lists_show_each_owner_with_their_profile_and_counts(viewer_api, world):
    users = viewer_api.get(USERS).json()

    assert users["next"] is None
    assert users["results"] == [
        {
            "id": "alice",
            "profile": {"information": "Alice, a vegetarian who travels by train.", "version": 1},
            "counts": {"threads": 1, "messages": 3, "memories": 2},
        },
        {"id": "bob", "profile": None, "counts": {"threads": 0, "messages": 0, "memories": 1}},
    ]
    [atlas] = viewer_api.get(AGENTS).json()["results"]
    assert (atlas["id"], atlas["profile"]["information"], atlas["counts"]["threads"]) == (
        "atlas",
        "Atlas, a travel assistant.",
        1,
    )


def test_the_list_pages_by_cursor(viewer_api, agent_memory, world):
    for name in ("carol", "dave", "erin"):
        agent_memory.add_user(name, f"{name.title()}.")

    first = viewer_api.get(USERS, {"limit": 2}).json()
    assert [user["id"] for user in first["results"]] == ["alice", "bob"]
    second = viewer_api.get(first["next"]).json()
    assert [user["id"] for user in second["results"]] == ["carol", "dave"]
    last = viewer_api.get(second["next"]).json()
    assert [user["id"] for user in last["results"]] == ["erin"] and last["next"] is None


@pytest.mark.parametrize("params", [{"cursor": "forged"}, {"limit": "0"}, {"limit": "many"}])
def test_bad_paging_is_a_400_with_the_parameter(viewer_api, world, params):
    for url in (USERS, AGENTS):
        response = viewer_api.get(url, params)
        assert response.status_code == 400, response.content
        assert set(response.json()["errors"]) == set(params)


def test_a_user_comes_with_profile_counts_and_the_profile_version_as_etag(viewer_api, world):
    response = viewer_api.get(f"{USERS}alice/")

    assert response.status_code == 200
    assert response["ETag"] == '"1"'
    body = response.json()
    assert body["id"] == "alice"
    assert body["profile"] == {"information": "Alice, a vegetarian who travels by train.", "version": 1}
    assert body["counts"] == {
        "threads": 1,
        "messages": 3,
        "memories": 2,
        "images": 2,
        "links": 1,
        "expired": 0,
        "memory_types": {"memory": 0, "fact": 2, "guideline": 0, "preference": 0},
    }


def test_a_user_without_a_profile_has_etag_zero(viewer_api, world):
    response = viewer_api.get(f"{USERS}bob/")

    assert response.status_code == 200
    assert response["ETag"] == '"0"'
    assert response.json()["profile"] is None and response.json()["counts"]["memories"] == 1


def test_an_agent_is_read_the_same_way(viewer_api, world):
    response = viewer_api.get(f"{AGENTS}atlas/")

    assert response.status_code == 200
    assert response.json()["profile"]["information"] == "Atlas, a travel assistant."
    assert response.json()["counts"]["threads"] == 1


def test_someone_who_owns_nothing_is_a_404(viewer_api, world):
    for url in (f"{USERS}nobody/", f"{AGENTS}alice/", f"{USERS}atlas/"):
        response = viewer_api.get(url)
        assert response.status_code == 404, url
        assert "no profile, thread or record" in response.json()["detail"]


# --- writing profiles -----------------------------------------------------------------------


def test_a_profile_is_rewritten_against_its_etag(curator_api, agent_memory, world):
    response = curator_api.put(
        f"{USERS}alice/", {"information": "Alice, vegan now."}, format="json", HTTP_IF_MATCH='"1"'
    )

    assert response.status_code == 200, response.content
    assert response["ETag"] == '"2"'
    assert response.json()["profile"] == {"information": "Alice, vegan now.", "version": 2}
    assert agent_memory.get_user("alice").content == "Alice, vegan now."
    entry = CurationEntry.objects.get()
    assert (entry.object_kind, entry.object_id, entry.action, entry.token_name) == (
        "user",
        "alice",
        "update",
        "carl-script",
    )


def test_a_first_profile_for_an_owner_is_written_against_etag_zero(curator_api, agent_memory, world):
    response = curator_api.patch(f"{USERS}bob/", {"information": "Bob, tall."}, format="json", HTTP_IF_MATCH='"0"')

    assert response.status_code == 200, response.content
    assert response["ETag"] == '"1"'
    assert CurationEntry.objects.get().action == "create"


def test_a_profile_for_a_new_id_makes_the_user(curator_api, agent_memory, world):
    response = curator_api.put(f"{AGENTS}scout/", {"information": "Scout, a new agent."}, format="json")

    assert response.status_code == 201, response.content
    assert response["Location"] == f"{AGENTS}scout/"
    assert response.json()["profile"]["information"] == "Scout, a new agent."
    assert agent_memory.get_agent("scout").content == "Scout, a new agent."


def test_a_profile_written_meanwhile_is_a_412_and_is_kept(curator_api, agent_memory, world):
    agent_memory.add_user("alice", "Changed meanwhile.")

    response = curator_api.put(f"{USERS}alice/", {"information": "Lost."}, format="json", HTTP_IF_MATCH='"1"')
    assert response.status_code == 412
    created_meanwhile = curator_api.put(f"{USERS}bob/", {"information": "x"}, format="json", HTTP_IF_MATCH='"1"')
    assert created_meanwhile.status_code == 412

    assert agent_memory.get_user("alice").content == "Changed meanwhile."
    with pytest.raises(KeyError):
        agent_memory.get_user("bob")
    assert CurationEntry.objects.count() == 0


@pytest.mark.parametrize(
    ("method", "body", "field"),
    [
        ("put", {}, "information"),
        ("patch", {}, "information"),
        ("put", {"information": ["a", "list"]}, "information"),
        ("put", {"information": None}, "information"),
        ("put", {"information": "x" * 1_000_001}, "information"),
    ],
)
def test_bad_profiles_are_a_400_and_write_nothing(curator_api, agent_memory, world, method, body, field):
    response = getattr(curator_api, method)(f"{USERS}alice/", body, format="json")

    assert response.status_code == 400, response.content
    assert field in response.json()["errors"]
    assert agent_memory.get_user("alice").version == 1
    assert CurationEntry.objects.count() == 0


# --- deleting -------------------------------------------------------------------------------


def test_deleting_a_user_takes_all_they_own_and_can_be_undone(curator_api, agent_memory, world):
    response = curator_api.delete(f"{USERS}alice/", HTTP_IF_MATCH='"1"')

    assert response.status_code == 204
    assert curator_api.get(f"{USERS}alice/").status_code == 404
    with pytest.raises(KeyError):
        agent_memory.get_thread_record(world.thread_id)
    with pytest.raises(KeyError):
        agent_memory.get_memory(world.fact_id)
    assert agent_memory.get_memory("bob-tall")
    entry = CurationEntry.objects.get()
    assert (entry.object_kind, entry.action, entry.token_name) == ("user", "delete", "carl-script")
    assert len(entry.before["threads"]) == 1


def test_deleting_against_an_old_etag_or_nobody_changes_nothing(curator_api, agent_memory, world):
    agent_memory.add_user("alice", "Changed meanwhile.")

    assert curator_api.delete(f"{USERS}alice/", HTTP_IF_MATCH='"1"').status_code == 412
    assert curator_api.delete(f"{USERS}nobody/").status_code == 404
    assert curator_api.delete(f"{AGENTS}nobody/").status_code == 404
    assert agent_memory.get_thread_record(world.thread_id)
    assert CurationEntry.objects.count() == 0
