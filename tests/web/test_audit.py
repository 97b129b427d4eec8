"""Who read what (issue 30, part 4): people's and tokens' reads of record pages, GETs by id and
exports are activity events of kind "view" and "export", with ids, scope and counts but no text;
"who saw alice's data" is /activity/ (and /api/v1/activity/) filtered by kind and user; retention
purges them as the rest of the log."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from memory.engine import AgentMemory, unrecorded
from memory.web.tokens import create_token
from tests.api.conftest import bearer

from .world import World, build_world

pytestmark = pytest.mark.django_db
ACTIVITY = reverse("memory:activity")
TEXTS = ("Alice is vegetarian", "quiet hotel in Lisbon", "hand-drawn map", "Alice, a vegetarian", "travel assistant")
"""Words of the world's records: none may reach an audit event."""


@pytest.fixture
def world(agent_memory: AgentMemory) -> World:
    with unrecorded():
        built = build_world(agent_memory)
        agent_memory.add_memory("Bob drinks green tea.", memory_type="fact", memory_id="fact-bob", user_id="bob")
    return built


@pytest.fixture
def viewer_api(viewer):
    return bearer(create_token(viewer, name="vera-script", role="viewer")[1])


@pytest.fixture
def curator_api(curator):
    return bearer(create_token(curator, name="carl-script", role="curator")[1])


def audit_events(agent_memory: AgentMemory, kind=("view", "export"), **filters):
    assert agent_memory.activity.flush()
    return list(agent_memory.list_activity(kind=list(kind) if isinstance(kind, tuple) else kind, limit=None, **filters))


def only_event(agent_memory: AgentMemory, **filters):
    [event] = audit_events(agent_memory, **filters)
    return event


def log_text(path: str) -> str:
    """Every activity row of the store's file, as text (what a dump of the log would hold)."""
    with sqlite3.connect(path) as raw:
        tables = [name for (name,) in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        rows = [
            repr(row)
            for table in tables
            if "ACTIVITY" in table.upper()
            for row in raw.execute(f'SELECT * FROM "{table}"')  # the file's own table names
        ]
    return "\n".join(rows)


# --- the dashboard's record pages -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("page", "args", "record_type", "record_id", "scope"),
    [
        ("memory_detail", ["fact-vegetarian"], "fact", "fact-vegetarian", ("alice", "atlas", "trip-42")),
        ("thread_detail", ["trip-42"], "thread", "trip-42", ("alice", "atlas", "trip-42")),
        ("image_detail", ["map-1"], "image", "map-1", ("alice", "atlas", "trip-42")),
        ("user_detail", ["alice"], "user_profile", "alice", ("alice", None, None)),
        ("agent_detail", ["atlas"], "agent_profile", "atlas", (None, "atlas", None)),
    ],
)
def test_opening_a_record_page_is_a_view_by_the_person_with_its_ids_and_whose_it_is(
    viewer_client, viewer, agent_memory, world, page, args, record_type, record_id, scope
):
    response = viewer_client.get(reverse(f"memory:{page}", args=args))
    assert response.status_code == 200
    event = only_event(agent_memory)
    assert (event.kind, event.caller, event.caller_kind) == ("view", viewer.username, "person")
    assert event.call.startswith("GET /") and "{" in event.call  # the route, its ids named, not given
    assert [(result.record_type, result.record_id) for result in event.results] == [(record_type, record_id)]
    assert (event.scope["user_id"], event.scope["agent_id"], event.scope["thread_id"]) == scope
    assert event.content == "" and event.content_chars == 0 and event.tokens == 0


def test_a_message_page_is_a_view_of_the_message_in_its_thread(viewer_client, agent_memory, world):
    message_id = world.message_ids[0]
    response = viewer_client.get(reverse("memory:message_detail", args=[world.thread_id, message_id]))
    assert response.status_code == 200
    event = only_event(agent_memory)
    assert event.call == "GET /threads/{thread_id}/messages/{message_id}/"
    assert [(result.record_type, result.record_id) for result in event.results] == [("message", message_id)]
    assert event.scope == {"user_id": "alice", "agent_id": "atlas", "thread_id": "trip-42"}


def test_an_htmx_swap_inside_a_page_already_shown_is_not_another_view(viewer_client, agent_memory, world):
    viewer_client.get(reverse("memory:thread_detail", args=[world.thread_id]), {"start": 1}, HTTP_HX_REQUEST="true")
    assert audit_events(agent_memory) == []


def test_a_missing_record_and_a_list_are_not_views(viewer_client, agent_memory, world):
    assert viewer_client.get(reverse("memory:memory_detail", args=["no-such-memory"])).status_code == 404
    assert viewer_client.get(reverse("memory:memory_list")).status_code == 200
    assert audit_events(agent_memory) == []


# --- the API's GETs by id -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "record_type", "record_id"),
    [
        ("/api/v1/memories/fact-vegetarian/", "fact", "fact-vegetarian"),
        ("/api/v1/threads/trip-42/", "thread", "trip-42"),
        ("/api/v1/images/map-1/", "image", "map-1"),
        ("/api/v1/images/map-1/content/", "image", "map-1"),
    ],
)
def test_a_token_getting_a_record_by_id_is_a_view_by_the_token_for_its_owner(
    viewer, agent_memory, world, path, record_type, record_id
):
    client = bearer(create_token(viewer, name="vera-script", role="viewer")[1])
    assert client.get(path).status_code == 200
    event = only_event(agent_memory)
    assert (event.caller, event.caller_kind, event.on_behalf_of) == ("vera-script", "agent", viewer.username)
    assert event.call == "GET " + path.replace(
        record_id, "{" + ("memory_id" if record_type == "fact" else f"{record_type}_id") + "}"
    )
    assert [(result.record_type, result.record_id) for result in event.results] == [(record_type, record_id)]
    assert event.scope["user_id"] == "alice"


def test_a_message_and_a_user_by_id_through_the_api_with_a_session_are_the_persons_views(curator, agent_memory, world):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_login(curator)
    message_id = world.message_ids[1]
    assert client.get(f"/api/v1/threads/trip-42/messages/{message_id}/").status_code == 200
    assert client.get("/api/v1/users/alice/").status_code == 200
    message, user = sorted(audit_events(agent_memory), key=lambda event: event.call)
    assert (message.caller, message.caller_kind) == (curator.username, "person")
    assert [result.record_id for result in message.results] == [message_id]
    assert user.call == "GET /api/v1/users/{owner_id}/" and user.scope["user_id"] == "alice" and not user.results


def test_writes_through_the_api_are_not_views(curator_api, agent_memory, world):
    response = curator_api.patch("/api/v1/memories/fact-vegetarian/", {"metadata": {"k": 1}}, format="json")
    assert response.status_code == 200
    assert audit_events(agent_memory) == []


# --- exports --------------------------------------------------------------------------------------


def test_a_dashboard_export_of_the_store_is_an_export_event_per_user_it_held(
    curator_client, curator, agent_memory, world
):
    response = curator_client.get(reverse("memory:transfer_export"))
    assert response.status_code == 200
    b"".join(response.streaming_content)
    events = {event.scope["user_id"]: event for event in audit_events(agent_memory, kind="export")}
    assert set(events) == {"alice", "bob", None}  # the agent's profile belongs to no user
    alice = events["alice"]
    assert (alice.caller, alice.caller_kind, alice.call) == (curator.username, "person", "export_lines")
    assert alice.request["filters"] == {} and alice.request["users"] == 3
    assert alice.request["counts"] == {"threads": 1, "records": 1 + 3 + 2 + 2}  # profile, messages, images, memories
    assert events["bob"].request["counts"] == {"threads": 0, "records": 1} and events["bob"].result_count == 1
    assert len({event.request["export_id"] for event in events.values()}) == 1
    assert all(event.content == "" and not event.results for event in events.values())


def test_an_export_of_one_user_names_the_filter_and_only_that_user(curator_client, agent_memory, world):
    response = curator_client.get(reverse("memory:transfer_export"), {"user_id": "bob"})
    b"".join(response.streaming_content)
    event = only_event(agent_memory, kind="export")
    assert event.scope["user_id"] == "bob" and event.request["filters"] == {"user_id": "bob"}


def test_oam_export_is_an_export_by_the_command_on_behalf_of_the_account(agent_memory, world, tmp_path):
    call_command(
        "oam_export",
        "--user-id",
        "alice",
        "--output",
        str(tmp_path / "alice.jsonl"),
        "--no-progress",
        stderr=StringIO(),
    )
    event = only_event(agent_memory, kind="export")
    assert event.caller == agent_memory.activity.caller and event.on_behalf_of  # the OS account's name
    assert event.scope["user_id"] == "alice" and event.request["filters"] == {"user_id": "alice"}


# --- no text, retention ---------------------------------------------------------------------------


def test_no_text_of_what_was_read_reaches_the_log(curator_client, agent_memory, world, memory_store_url):
    for page, args in (
        ("memory_detail", ["fact-vegetarian"]),
        ("thread_detail", ["trip-42"]),
        ("image_detail", ["map-1"]),
    ):
        curator_client.get(reverse(f"memory:{page}", args=args))
    b"".join(curator_client.get(reverse("memory:transfer_export")).streaming_content)
    assert len(audit_events(agent_memory)) == 3 + 3
    text = log_text(memory_store_url.removeprefix("sqlite://"))
    assert "fact-vegetarian" in text  # the ids are there
    for words in TEXTS:
        assert words not in text


def test_retention_purges_views_and_exports_as_the_rest_of_the_log(viewer_client, agent_memory, world):
    viewer_client.get(reverse("memory:memory_detail", args=["fact-vegetarian"]))
    assert len(audit_events(agent_memory)) == 1
    assert agent_memory.purge_activity(before=(datetime.now(UTC) + timedelta(seconds=1)).isoformat()) >= 1
    assert audit_events(agent_memory) == []


# --- the filter: who saw alice's data -------------------------------------------------------------


@pytest.fixture
def reads(viewer_client, curator, agent_memory, world) -> None:
    """Vera reads a memory of alice's and one of bob's; Carl exports bob's data."""
    viewer_client.get(reverse("memory:memory_detail", args=["fact-vegetarian"]))  # alice's
    viewer_client.get(reverse("memory:memory_detail", args=["fact-bob"]))  # bob's
    exporter = Client()
    exporter.force_login(curator)
    response = exporter.get(reverse("memory:transfer_export"), {"user_id": "bob"})
    b"".join(response.streaming_content)
    assert len(audit_events(agent_memory)) == 3


def test_the_timeline_filtered_to_views_of_a_user_shows_who_saw_their_data(viewer_client, viewer, reads):
    response = viewer_client.get(ACTIVITY, {"kind": "view", "user_id": "alice"})
    assert response.status_code == 200
    [event] = response.context["timeline"].events
    assert event.caller == viewer.username and event.request["record_id"] == "fact-vegetarian"
    assert response.context["whose"] == "all"  # people's reads: everyone's without asking
    page = response.content.decode()
    assert reverse("memory:memory_detail", args=["fact-vegetarian"]) in page
    assert 'value="all" selected' in page


def test_the_timeline_filtered_to_exports_and_an_export_event_page(viewer_client, curator, reads, agent_memory):
    response = viewer_client.get(ACTIVITY, {"kind": "export"})
    [event] = response.context["timeline"].events
    assert event.caller == curator.username and "exported" in response.content.decode()
    page = viewer_client.get(reverse("memory:activity_event", args=[event.id]))
    assert page.status_code == 200
    assert "Exported" in page.content.decode() and "1 record" in page.content.decode()


def test_a_view_events_page_links_the_record_it_read(viewer_client, reads, agent_memory):
    [event] = audit_events(agent_memory, kind="view", user_id="alice")
    page = viewer_client.get(reverse("memory:activity_event", args=[event.id]))
    assert page.status_code == 200
    content = page.content.decode()
    assert "Read whole" in content and reverse("memory:memory_detail", args=["fact-vegetarian"]) in content
    assert viewer_client.get(reverse("memory:activity_replay", args=[event.id])).status_code in (200, 404)


def test_the_agents_default_leaves_peoples_reads_out_unless_the_kind_asks(viewer_client, reads):
    response = viewer_client.get(ACTIVITY, {"user_id": "alice"})
    assert all(event.kind not in ("view", "export") for event in response.context["timeline"].events)
    response = viewer_client.get(ACTIVITY, {"kind": "view", "who": "agents"})
    assert response.context["timeline"].events == []


def test_the_api_lists_views_of_a_user(viewer_api, viewer, reads):
    response = viewer_api.get("/api/v1/activity/", {"kind": "view", "user_id": "bob"})
    assert response.status_code == 200, response.content
    [event] = response.json()["results"]
    assert (event["kind"], event["caller"], event["scope"]["user_id"]) == ("view", viewer.username, "bob")
    assert event["results"][0]["record_id"] == "fact-bob" and event["content"] == ""
    assert viewer_api.get("/api/v1/activity/", {"kind": "glance"}).status_code == 400


def test_the_event_as_the_api_shows_it_holds_no_text(viewer_api, reads, agent_memory):
    [event] = audit_events(agent_memory, kind="view", user_id="alice")
    body = viewer_api.get(f"/api/v1/activity/{event.id}/").json()
    assert body["kind"] == "view" and "Alice is vegetarian" not in json.dumps(body)


def test_an_event_an_erasure_stripped_still_says_who_read_and_when(viewer_client, agent_memory, world):
    """An erasure keeps a person's view and export events without their request and results (the
    ids of what was read): the pages say so instead of naming a page or a scope they did not read."""
    from memory.engine import ActivityEvent

    now = datetime.now(UTC).isoformat()
    scope = {"user_id": "alice", "agent_id": None, "thread_id": None}
    stripped = [
        ActivityEvent(
            id="view-erased",
            kind="view",
            call="GET /memories/{memory_id}/",
            time=now,
            caller="vera",
            caller_kind="person",
            scope=scope,
            result_count=1,
        ),
        ActivityEvent(
            id="export-erased",
            kind="export",
            call="export_lines",
            time=now,
            caller="carl",
            caller_kind="person",
            scope=scope,
            result_count=3,
        ),
    ]
    agent_memory.store.append_activity(stripped)
    page = viewer_client.get(ACTIVITY, {"user_id": "alice", "who": "all"}).content.decode()
    assert "1 record, since erased" in page and "what (erased)" in page and "the whole store" not in page
    view = viewer_client.get(reverse("memory:activity_event", args=["view-erased"])).content.decode()
    assert "An erasure removed which records" in view
    export = viewer_client.get(reverse("memory:activity_event", args=["export-erased"])).content.decode()
    assert "An erasure removed what this export held" in export


def test_after_erasing_a_user_who_read_their_data_is_still_answered_without_it(
    viewer_client, viewer, agent_memory, world
):
    viewer_client.get(reverse("memory:memory_detail", args=["fact-vegetarian"]))
    assert len(audit_events(agent_memory)) == 1
    agent_memory.erase_user("alice", scrub=False)
    [event] = audit_events(agent_memory, user_id="alice")
    assert (event.kind, event.caller, event.request) == ("view", viewer.username, {})
    page = viewer_client.get(ACTIVITY, {"kind": "view", "user_id": "alice"}).content.decode()
    assert "1 record, since erased" in page and viewer.username in page
    assert viewer_client.get(reverse("memory:activity_event", args=[event.id])).status_code == 200
