"""/api/v1/history/: the curation history with the dashboard's filters, one entry, and undoing a
change; changes made through the API show with the token's name."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User

from memory.curation import Actor, Curation
from memory.models import CurationEntry

LIST = "/api/v1/history/"
MEMORIES = "/api/v1/memories/"


def one(entry_id: int) -> str:
    return f"{LIST}{entry_id}/"


def revert(entry_id: int) -> str:
    return f"{LIST}{entry_id}/revert/"


def listed(client, status: int = 200, **params) -> dict:
    response = client.get(LIST, params)
    assert response.status_code == status, response.content
    return response.json()


@pytest.fixture
def dashboard(agent_memory, curator: User) -> Curation:
    """Carl's changes in the dashboard."""
    return Curation(agent_memory, Actor(curator))


@pytest.fixture
def made(curator_api, agent_memory) -> dict[str, int]:
    """A memory made, edited and another made and deleted through the API with Carl's token."""
    responses = [
        curator_api.post(MEMORIES, {"content": "Tea at five.", "id": "tea", "user_id": "alice"}, format="json"),
        curator_api.patch(f"{MEMORIES}tea/", {"content": "Tea at six."}, format="json"),
        curator_api.post(MEMORIES, {"content": "Gone soon.", "id": "gone"}, format="json"),
        curator_api.delete(f"{MEMORIES}gone/"),
    ]
    assert [response.status_code for response in responses] == [201, 200, 201, 204]
    entries = CurationEntry.objects.order_by("id")
    return {f"{e.object_id}-{e.action}": e.id for e in entries}


# --- who may do what ------------------------------------------------------------------------


def test_without_credentials_it_is_a_401(anonymous, made):
    assert anonymous.get(LIST).status_code == 401
    assert anonymous.get(one(made["tea-create"])).status_code == 401
    assert anonymous.post(revert(made["tea-update"])).status_code == 401


@pytest.mark.parametrize(
    ("persona", "message"),
    [("revoked_api", "This API token was revoked."), ("expired_api", "This API token has expired.")],
)
def test_a_revoked_or_expired_token_is_a_401(request, made, persona, message):
    client = request.getfixturevalue(persona)

    for response in (client.get(LIST), client.post(revert(made["tea-update"]))):
        assert response.status_code == 401
        assert response.json() == {"detail": message}
    assert CurationEntry.objects.count() == 4


def test_viewers_read_the_history_and_cannot_undo(viewer_api, curator_reading_api, agent_memory, made):
    for client in (viewer_api, curator_reading_api):
        assert len(listed(client)["results"]) == 4
        assert client.get(one(made["tea-update"])).status_code == 200
        refused = client.post(revert(made["tea-update"]))
        assert refused.status_code == 403 and "Only curators" in refused.json()["detail"]
    assert agent_memory.get_memory("tea").content == "Tea at six."
    assert CurationEntry.objects.count() == 4


def test_a_session_reads_and_undoes_with_its_csrf_token(session_api, agent_memory, made):
    assert session_api.get(LIST).status_code == 200
    refused = session_api.post(revert(made["tea-update"]))
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    assert CurationEntry.objects.count() == 4

    session_api.get("/")
    token = session_api.cookies["csrftoken"].value
    response = session_api.post(revert(made["tea-update"]), HTTP_X_CSRFTOKEN=token)

    assert response.status_code == 201
    assert response.json()["via"] == "api" and response.json()["token_name"] is None
    assert agent_memory.get_memory("tea").content == "Tea at five."


# --- the listing ----------------------------------------------------------------------------


def test_changes_made_through_the_api_are_listed_with_the_tokens_name(viewer_api, made):
    page = listed(viewer_api)

    assert page["next"] is None
    assert [(e["object_id"], e["action"]) for e in page["results"]] == [
        ("gone", "delete"),
        ("gone", "create"),
        ("tea", "update"),
        ("tea", "create"),
    ]
    update = page["results"][2]
    assert update == {
        **update,
        "id": made["tea-update"],
        "actor": "carl",
        "via": "api",
        "token_name": "carl-script",
        "object_kind": "memory",
        "thread_id": None,
        "reverts": None,
        "bulk": None,
    }
    assert update["summary"]
    assert (update["before"]["content"], update["after"]["content"]) == ("Tea at five.", "Tea at six.")
    assert datetime.fromisoformat(update["at"]).tzinfo is not None
    deleted = page["results"][0]
    assert deleted["after"] is None and deleted["before"]  # the snapshot a restore brings back


def test_entries_of_a_bulk_change_are_each_listed_with_its_id(viewer_api, dashboard, made):
    with dashboard.bulk("Two at once") as change:
        dashboard.delete_memory("tea")

    [entry] = listed(viewer_api, object_id="tea", action="delete")["results"]
    assert entry["bulk"] == change.pk
    assert [e["bulk"] for e in listed(viewer_api)["results"]] == [change.pk, None, None, None, None]


def test_the_list_pages_by_cursor_with_a_next_link(viewer_api, made):
    first = listed(viewer_api, limit=3)
    assert [e["id"] for e in first["results"]] == [made["gone-delete"], made["gone-create"], made["tea-update"]]
    assert f"cursor={made['tea-update']}" in first["next"] and "limit=3" in first["next"]

    second = viewer_api.get(first["next"]).json()
    assert [e["id"] for e in second["results"]] == [made["tea-create"]]
    assert second["next"] is None


def test_the_dashboards_filters_select_entries(viewer_api, dashboard, agent_memory, made):
    thread = agent_memory.create_thread(thread_id="trip", user_id="alice")
    [message_id] = thread.add_messages([{"role": "user", "content": "Hello."}])
    dashboard.update_message("trip", message_id, version=1, content="Hello there.")

    def found(**params) -> list[int]:
        return [e["id"] for e in listed(viewer_api, **params)["results"]]

    by_dashboard = CurationEntry.objects.get(object_kind="message").id
    assert found(object_kind="message") == [by_dashboard]
    assert found(object_id="tea") == [made["tea-update"], made["tea-create"]]
    assert found(thread_id="trip") == [by_dashboard]
    assert found(action="delete") == [made["gone-delete"]]
    assert found(actor="carl", object_kind="memory", action="create") == [made["gone-create"], made["tea-create"]]
    assert found(actor="vera") == []

    CurationEntry.objects.filter(id=made["tea-create"]).update(at=datetime(2024, 1, 1, tzinfo=UTC))
    CurationEntry.objects.filter(id=made["tea-update"]).update(at=datetime(2024, 6, 1, tzinfo=UTC))
    assert found(until="2024-03-01T00:00:00Z") == [made["tea-create"]]
    assert found(since="2024-03-01T00:00:00Z", until="2025-01-01T00:00:00Z") == [made["tea-update"]]


def test_record_id_covers_a_memorys_links(viewer_api, dashboard, agent_memory, made):
    agent_memory.add_memory("Tea is served hot.", memory_type="fact", memory_id="hot", autonomous_linking=False)
    linked = dashboard.create_link(source_record_id="hot", target_record_id="tea", relation_type="supports")
    dashboard.delete_link(linked.object_id)

    record = [(e["object_kind"], e["action"]) for e in listed(viewer_api, record_id="tea")["results"]]
    other_end = [(e["object_kind"], e["action"]) for e in listed(viewer_api, record_id="hot")["results"]]
    by_object = [(e["object_kind"], e["action"]) for e in listed(viewer_api, object_id="tea")["results"]]

    assert record == [("link", "unlink"), ("link", "link"), ("memory", "update"), ("memory", "create")]
    assert other_end == [("link", "unlink"), ("link", "link")]
    assert by_object == [("memory", "update"), ("memory", "create")]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"object_kind": "planet"}, "object_kind"),
        ({"action": "explode"}, "action"),
        ({"since": "yesterday"}, "since"),
        ({"until": "2024-13-45"}, "until"),
        ({"cursor": "abc"}, "cursor"),
        ({"cursor": "0"}, "cursor"),
        ({"limit": "0"}, "limit"),
        ({"limit": "100000"}, "limit"),
        ({"object_id": "x" * 600}, "object_id"),
        ({"record_id": "a\x00b"}, "record_id"),
        ({"actor": "x" * 151}, "actor"),
    ],
)
def test_bad_filters_are_a_400_with_the_parameter(viewer_api, made, params, field):
    response = viewer_api.get(LIST, params)

    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()


def test_unicode_ids_with_slashes_filter_without_error(viewer_api, made):
    assert listed(viewer_api, object_id="ü/../🙂", record_id="a/b")["results"] == []


# --- one entry ------------------------------------------------------------------------------


def test_an_entry_reads_as_in_the_list(viewer_api, made):
    response = viewer_api.get(one(made["tea-update"]))

    assert response.status_code == 200
    listed_entry = next(e for e in listed(viewer_api)["results"] if e["id"] == made["tea-update"])
    assert response.json() == listed_entry


def test_a_missing_entry_is_a_404(viewer_api, made):
    response = viewer_api.get(one(999_999))

    assert response.status_code == 404
    assert response.json() == {"detail": "No history entry 999999."}
    assert viewer_api.get(f"{LIST}not-a-number/").status_code == 404


# --- undoing --------------------------------------------------------------------------------


def test_undoing_an_update_writes_the_old_values_back_as_a_new_entry(curator_api, agent_memory, made):
    response = curator_api.post(revert(made["tea-update"]))

    assert response.status_code == 201, response.content
    done = response.json()
    assert response["Location"] == one(done["id"])
    assert (done["action"], done["reverts"], done["token_name"], done["via"]) == (
        "update",
        made["tea-update"],
        "carl-script",
        "api",
    )
    assert done["summary"].startswith("Reverted: ")
    assert agent_memory.get_memory("tea").content == "Tea at five."
    assert curator_api.get(one(done["id"])).json() == done


def test_undoing_a_delete_restores_and_undoing_a_create_deletes(curator_api, agent_memory, made):
    restored = curator_api.post(revert(made["gone-delete"]))
    assert restored.status_code == 201
    assert restored.json()["action"] == "restore"
    assert agent_memory.get_memory("gone").content == "Gone soon."

    deleted = curator_api.post(revert(made["tea-create"]))
    assert deleted.status_code == 201
    assert deleted.json()["action"] == "delete"
    with pytest.raises(KeyError):
        agent_memory.get_memory("tea")


def test_an_undo_the_store_no_longer_allows_is_a_409_and_changes_nothing(curator_api, agent_memory, made):
    assert curator_api.post(revert(made["gone-delete"])).status_code == 201
    assert curator_api.delete(f"{MEMORIES}tea/").status_code == 204
    count, restored = CurationEntry.objects.count(), agent_memory.get_memory("gone")

    again = curator_api.post(revert(made["gone-delete"]))  # "gone" is back already
    stale = curator_api.post(revert(made["tea-update"]))  # the memory is deleted since
    gone = curator_api.post(revert(made["tea-create"]))  # so its creation cannot be undone

    assert again.status_code == 409, again.content
    assert "already exists" in again.json()["detail"]
    assert stale.status_code == 409
    assert "no longer exists" in stale.json()["detail"]
    assert gone.status_code == 409
    assert gone.json()["detail"] == "The memory is gone, so there is nothing to undo."
    assert CurationEntry.objects.count() == count
    assert agent_memory.get_memory("gone") == restored
    with pytest.raises(KeyError):
        agent_memory.get_memory("tea")


def test_undoing_a_missing_entry_is_a_404(curator_api, made):
    response = curator_api.post(revert(999_999))

    assert response.status_code == 404
    assert CurationEntry.objects.count() == 4
