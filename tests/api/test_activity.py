"""GET /api/v1/activity/ and /api/v1/activity/{id}/: the recorded calls, who made them (a token is
recorded under its name for its owner, a person under their name), filters, paging and bad input."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from memory import services
from memory.engine import acting_as, unrecorded
from memory.models import CurationEntry
from tests.engine.test_activity_otlp import Collector, attributes_of
from tests.web.test_memories import edit

ACTIVITY = "/api/v1/activity/"
SEARCH = "/api/v1/search/"


@pytest.fixture
def memories(agent_memory) -> dict[str, str]:
    with unrecorded():
        return {
            "tea": agent_memory.add_memory("Alice likes green tea", user_id="alice", agent_id="helper"),
            "nuts": agent_memory.add_memory("Alice is allergic to peanuts", user_id="alice", agent_id="helper"),
        }


def listing(client, status: int = 200, **params) -> dict:
    response = client.get(ACTIVITY, params)
    assert response.status_code == status, response.content.decode()[-2000:]
    return response.json()


def test_an_agents_search_is_listed_with_its_ranked_results_scores_and_text(agent_memory, memories, viewer_api):
    with acting_as("support-bot"):
        found = agent_memory.search("green tea", user_id="alice")
    agent_memory.activity.flush()
    [event] = listing(viewer_api)["results"]
    assert (event["kind"], event["call"], event["caller"], event["caller_kind"]) == (
        "search",
        "AgentMemory.search",
        "support-bot",
        "agent",
    )
    assert event["scope"] == {"user_id": "alice", "agent_id": None, "thread_id": None}
    assert event["request"]["query"] == "green tea"
    assert [result["record_id"] for result in event["results"]] == [result.id for result in found]
    assert [result["rank"] for result in event["results"]] == list(range(1, len(found) + 1))
    assert event["results"][0]["scores"]["distance"] == pytest.approx(found[0].distance)
    assert event["content"] == "\n".join(result.formatted_content for result in found)
    assert event["tokens"] > 0 and event["duration_ms"] > 0
    detail = viewer_api.get(f"{ACTIVITY}{event['id']}/")
    assert detail.status_code == 200 and detail.json() == event


def test_a_tokens_calls_are_recorded_under_its_name_for_its_owner(agent_memory, memories, curator_api):
    response = curator_api.post(SEARCH, {"query": "peanuts", "user_id": "alice"}, format="json")
    assert response.status_code == 200
    agent_memory.activity.flush()
    [event] = listing(curator_api, caller="carl-script")["results"]
    assert (event["caller"], event["caller_kind"], event["on_behalf_of"]) == ("carl-script", "agent", "carl")


def test_a_persons_calls_are_theirs_shown_only_when_asked_and_point_to_the_history(
    agent_memory, memories, session_api, curator_client
):
    response = curator_client.post(SEARCH, {"query": "tea", "user_id": "alice"}, content_type="application/json")
    assert response.status_code == 200
    assert edit(curator_client, agent_memory, memories["tea"], content="Alice loves green tea").status_code == 302
    agent_memory.activity.flush()
    assert listing(session_api)["results"] == []  # who=agents by default
    events = listing(session_api, who="people")["results"]
    assert {(event["caller"], event["caller_kind"]) for event in events} == {("carl", "person")}
    [write] = [event for event in events if event["kind"] == "write"]
    [entry] = CurationEntry.objects.filter(object_id=memories["tea"])
    assert write["history_ref"] == entry.change_token != ""
    assert [result["record_id"] for result in write["results"]] == [memories["tea"]]


def test_filters_and_paging(agent_memory, memories, viewer_api):
    with acting_as("bot-a"):
        agent_memory.search("green tea", user_id="alice")
    with acting_as("bot-b"):
        agent_memory.search("peanuts", user_id="alice")
        agent_memory.search("peanuts again", user_id="alice")
    agent_memory.activity.flush()
    assert [event["caller"] for event in listing(viewer_api, caller="bot-a")["results"]] == ["bot-a"]
    assert [event["request"]["query"] for event in listing(viewer_api, q="AGAIN")["results"]] == ["peanuts again"]
    assert listing(viewer_api, kind="write")["results"] == []
    first = listing(viewer_api, limit=2)
    assert len(first["results"]) == 2 and first["next"]
    second = viewer_api.get(first["next"]).json()
    assert [event["request"]["query"] for event in second["results"]] == ["green tea"] and second["next"] is None


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"kind": "searches"}, "kind"),
        ({"who": "robots"}, "who"),
        ({"q": "x" * 501}, "q"),
        ({"since": "yesterday"}, "since"),
        ({"cursor": "forged"}, "cursor"),
        ({"caller": "x" * 600}, "caller"),
        ({"limit": "0"}, "limit"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(viewer_api, agent_memory, params, field):
    body = listing(viewer_api, 400, **params)
    assert field in body["errors"], body


def test_an_unknown_event_is_a_404_and_an_anonymous_request_gets_nothing(anonymous, viewer_api, agent_memory):
    assert viewer_api.get(f"{ACTIVITY}no-such-event/").status_code == 404
    assert viewer_api.get(f"{ACTIVITY}{'x' * 300}/").status_code == 404
    assert anonymous.get(ACTIVITY).status_code == 401
    assert anonymous.get(f"{ACTIVITY}no-such-event/").status_code == 401


def test_the_schema_documents_both_operations(viewer_api):
    schema = viewer_api.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    assert "/api/v1/activity/" in paths and "/api/v1/activity/{event_id}/" in paths
    parameters = {parameter["name"] for parameter in paths["/api/v1/activity/"]["get"]["parameters"]}
    assert {"caller", "user_id", "agent_id", "thread_id", "kind", "q", "since", "until", "who", "cursor"} <= parameters


@pytest.mark.parametrize("traceparent", [None, "00-not-a-trace-01"])
def test_a_search_without_a_valid_traceparent_starts_a_trace_of_its_own(monkeypatch, curator_api, traceparent):
    with exporting_api_searches(monkeypatch) as collector:
        headers = {"HTTP_TRACEPARENT": traceparent} if traceparent else {}
        response = curator_api.post(SEARCH, {"query": "tea", "user_id": "alice"}, format="json", **headers)
        assert response.status_code == 200
    [(_, span)] = collector.spans
    assert span.parent_span_id == b"" and span.trace_id != b"\0" * 16


def test_a_callers_traceparent_is_continued_by_the_span_of_its_search(monkeypatch, curator_api):
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    with exporting_api_searches(monkeypatch) as collector:
        response = curator_api.post(
            SEARCH,
            {"query": "green tea", "user_id": "alice"},
            format="json",
            HTTP_TRACEPARENT=f"00-{trace_id}-{parent_id}-01",
            HTTP_TRACESTATE="vendor=agent",
        )
        assert response.status_code == 200
        curator_api.post(SEARCH, {"query": "tea", "user_id": "alice"}, format="json")  # no header: its own trace
    spans = {attributes_of(span)["input.value"]: span for _, span in collector.spans}
    continued, alone = spans["green tea"], spans["tea"]
    assert continued.trace_id.hex() == trace_id and continued.parent_span_id.hex() == parent_id
    assert continued.trace_state == "vendor=agent"
    assert attributes_of(continued)["oam.caller"] == "carl-script"
    assert alone.trace_id.hex() != trace_id and alone.parent_span_id == b""


@contextmanager
def exporting_api_searches(monkeypatch) -> Iterator[Collector]:
    """The API's AgentMemory exporting its retrievals to a local OTLP collector; the spans are
    all sent when the block ends."""
    collector = Collector()
    monkeypatch.setenv("OAM_OTLP_ENDPOINT", collector.url)
    services.reset_agent_memory()
    try:
        services.get_agent_memory().add_memory("Alice likes green tea", user_id="alice")
        yield collector
    finally:
        services.reset_agent_memory()  # closes the recorder, which sends its spans
        collector.close()
