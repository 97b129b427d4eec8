"""/api/v1/threads/<id>/card/ and /summary/: every parameter of the context card, its parts and
token counts; reading writes nothing; a refresh asks the LLM and is recorded."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory import services
from memory.engine import Thread, estimate_tokens
from memory.models import CurationEntry
from tests.web.world import World, build_world


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def card_url(thread_id: str = "trip-42") -> str:
    return reverse("api:thread_card", args=[thread_id])


def summary_url(thread_id: str = "trip-42") -> str:
    return reverse("api:thread_summary", args=[thread_id])


# --- who may do what ------------------------------------------------------------------------


def test_without_credentials_or_with_a_dead_token_it_is_a_401(anonymous, revoked_api, expired_api, world):
    for client in (anonymous, revoked_api, expired_api):
        assert client.get(card_url()).status_code == 401
        assert client.get(summary_url()).status_code == 401
        assert client.post(summary_url()).status_code == 401


def test_viewers_read_the_card_and_summary_and_cannot_ask_for_a_refresh(viewer_api, curator_reading_api, world):
    for client in (viewer_api, curator_reading_api):
        assert client.get(card_url()).status_code == 200
        assert client.get(summary_url()).status_code == 200
        refused = client.post(summary_url())
        assert refused.status_code == 403 and "Only curators" in refused.json()["detail"]


def test_a_session_reads_the_card(session_api, world):
    assert session_api.get(card_url()).status_code == 200


def test_a_missing_thread_is_a_404(viewer_api, curator_api, world):
    assert viewer_api.get(card_url("no-such-thread")).status_code == 404
    assert viewer_api.get(summary_url("no-such-thread")).status_code == 404
    assert curator_api.post(summary_url("no-such-thread")).status_code == 404


# --- the card -------------------------------------------------------------------------------


def test_the_card_is_the_agents_text_with_its_parts_scores_and_token_counts(viewer_api, agent_memory, world):
    response = viewer_api.get(card_url(), {"max_recent_messages": 2})

    assert response.status_code == 200, response.content
    card = response.json()
    engine_card = agent_memory.get_thread("trip-42").get_context_card(max_recent_messages=2)
    assert card["content"] == engine_card.content and card["content"]
    assert card["summary"] == engine_card.summary  # no summary is stored: a transcript
    results = card["relevant_results"]
    assert [(r["rank"], r["id"], r["record_type"]) for r in results] == [
        (rank, result.id, result.record.record_type) for rank, result in enumerate(engine_card.results, 1)
    ]
    assert {"fact-vegetarian", "fact-old"} <= {r["id"] for r in results}
    vegetarian = next(r for r in results if r["id"] == "fact-vegetarian")
    assert vegetarian["metadata"] == {"source": "chat", "tags": ["diet"]} and vegetarian["status"] == "valid"
    assert next(r for r in results if r["id"] == "fact-old")["status"] == "invalid"  # superseded
    assert set(vegetarian["scores"]) >= {"score"} and isinstance(vegetarian["distance"], float)
    assert vegetarian["formatted_content"] in card["content"]
    assert vegetarian["tokens"] == estimate_tokens(vegetarian["formatted_content"])
    assert [(m["id"], m["role"], m["content"]) for m in card["recent_messages"]] == [
        (world.message_ids[1], "user", "Here is the street I liked."),
        (world.message_ids[2], "assistant", "Príncipe Real is calm at night."),
    ]
    tokens = card["tokens"]
    assert tokens["card"] == estimate_tokens(card["content"])
    assert tokens["topics"] == 0 and tokens["summary"] > 0 and tokens["recent_messages"] > 0
    assert tokens["relevant_results"] >= sum(r["tokens"] for r in results)
    assert card["as_of_message_id"] is None and card["messages_due_for_summary"] == 0


def test_every_parameter_reaches_the_engine_under_its_name(viewer_api, world, monkeypatch):
    calls = []
    real = Thread.get_context_card
    monkeypatch.setattr(Thread, "get_context_card", lambda self, **k: calls.append(k) or real(self, **k))

    response = viewer_api.get(
        card_url(),
        {
            "fallback_message_count": "3",
            "max_relevant_results": "4",
            "token_budget": "900",
            "soft_token_budget": "800",
            "max_recent_messages": "1",
            "except_last_messages": "1",
            "min_relevant_results_by_type": '{"fact": 1}',
            "metadata_filter": '{"source": "chat"}',
            "include_invalid_results": "false",
            "as_of_message_id": world.message_ids[2],
        },
    )

    assert response.status_code == 200, response.content
    assert calls == [
        {
            "fallback_message_count": 3,
            "max_relevant_results": 4,
            "token_budget": 900,
            "soft_token_budget": 800,
            "max_recent_messages": 1,
            "except_last_messages": 1,
            "min_relevant_results_by_type": {"fact": 1},
            "metadata_filter": {"source": "chat"},
            "include_invalid_results": False,
            "as_of_message_id": world.message_ids[2],
            "refresh_summary_if_due": False,  # a read writes nothing
        }
    ]
    assert response.json()["relevant_results"] == []  # as of a message stored before the facts


def test_the_metadata_filter_chooses_the_relevant_records(viewer_api, world):
    card = viewer_api.get(card_url(), {"metadata_filter": '{"source": "chat"}'}).json()

    assert [r["id"] for r in card["relevant_results"]] == ["fact-vegetarian"]


def test_a_card_as_of_a_message_ends_its_messages_there(viewer_api, world):
    card = viewer_api.get(card_url(), {"as_of_message_id": world.message_ids[0], "max_recent_messages": 5}).json()

    assert [m["content"] for m in card["recent_messages"]] == ["I'm vegetarian. Find me a quiet hotel in Lisbon."]
    assert card["as_of_message_id"] == world.message_ids[0]


def test_a_token_budget_trims_the_relevant_results(viewer_api, world):
    full = viewer_api.get(card_url()).json()
    budget = full["relevant_results"][0]["tokens"]

    trimmed = viewer_api.get(card_url(), {"token_budget": budget}).json()

    assert [r["id"] for r in trimmed["relevant_results"]] == [full["relevant_results"][0]["id"]]
    assert trimmed["tokens"]["relevant_results"] < full["tokens"]["relevant_results"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"as_of_message_id": "nope"}, "as_of_message_id"),
        ({"as_of_message_id": "x" * 513}, "as_of_message_id"),
        ({"min_relevant_results_by_type": '{"thread": 1}'}, "min_relevant_results_by_type"),
        ({"min_relevant_results_by_type": "[1]"}, "min_relevant_results_by_type"),
        ({"metadata_filter": "[1]"}, "metadata_filter"),
        ({"metadata_filter": "{broken"}, "metadata_filter"),
        ({"token_budget": "0"}, "token_budget"),
        ({"max_recent_messages": "-1"}, "max_recent_messages"),
        ({"fallback_message_count": "many"}, "fallback_message_count"),
        ({"include_invalid_results": "maybe"}, "include_invalid_results"),
        ({"except_last_messages": "1", "max_recent_messages": "2"}, "except_last_messages"),
        ({"max_relevant_results": str(2**64)}, "max_relevant_results"),
    ],
)
def test_bad_parameters_are_a_400_under_their_name(viewer_api, world, params, field):
    response = viewer_api.get(card_url(), params)

    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()


def test_a_message_of_another_thread_is_no_message_to_take_the_card_as_of(viewer_api, agent_memory, world):
    [other] = agent_memory.create_thread(thread_id="other").add_messages([{"role": "user", "content": "Elsewhere."}])

    response = viewer_api.get(card_url(), {"as_of_message_id": other})

    assert response.status_code == 400
    assert response.json()["errors"] == {"as_of_message_id": ["No such message in this thread."]}


# --- the summary ----------------------------------------------------------------------------


def test_without_a_stored_summary_the_summary_is_the_cards_transcript(viewer_api, agent_memory, world):
    summary = viewer_api.get(summary_url()).json()

    assert summary["source"] == "transcript"
    assert summary["summary"] == agent_memory.get_thread("trip-42").get_context_card().summary
    assert "Príncipe Real is calm at night." in summary["summary"]
    assert (summary["topics"], summary["summarized_through"], summary["messages_due_for_summary"]) == (None, -1, 0)


def test_a_stored_summary_comes_with_its_topics(viewer_api, agent_memory, world):
    agent_memory.get_thread("trip-42").set_summary("Alice wants a hotel.", ["hotels"], summarized_through=1)

    summary = viewer_api.get(summary_url()).json()

    assert summary == {
        "thread_id": "trip-42",
        "summary": "Alice wants a hotel.",
        "topics": ["hotels"],
        "source": "llm",
        "summarized_through": 1,
        "messages_due_for_summary": 0,
    }


def test_an_empty_thread_has_nothing_to_summarise(viewer_api, agent_memory):
    agent_memory.create_thread(thread_id="empty")

    assert viewer_api.get(summary_url("empty")).json()["source"] == "none"
    assert viewer_api.get(card_url("empty")).json()["content"] == ""


def test_reading_a_card_or_summary_with_a_refresh_due_asks_the_llm_nothing_and_writes_nothing(
    world, request, viewer_api
):
    services.get_agent_memory().get_thread("trip-42").set_summary("Alice wants a hotel.", ["hotels"])
    fake_llm = request.getfixturevalue("fake_llm")  # the messages came before the LLM: a refresh is due
    before = services.get_agent_memory().get_thread_record("trip-42")

    card = viewer_api.get(card_url()).json()
    summary = viewer_api.get(summary_url()).json()

    assert fake_llm.requests == []
    assert services.get_agent_memory().get_thread_record("trip-42") == before
    assert card["summary"] == summary["summary"] == "Alice wants a hotel."
    assert card["topics"] == summary["topics"] == ["hotels"]
    assert card["messages_due_for_summary"] == summary["messages_due_for_summary"] == 3


def test_without_an_llm_a_refresh_is_a_400_that_says_why(curator_api, world):
    response = curator_api.post(summary_url())

    assert response.status_code == 400
    assert "LLM" in response.json()["detail"]
    assert CurationEntry.objects.count() == 0


def test_a_refresh_asks_the_llm_and_is_recorded_with_the_tokens_name(world, request, curator_api):
    fake_llm = request.getfixturevalue("fake_llm")
    fake_llm.answers["thread_summary"] = lambda _: {"summary": "Alice, vegetarian, in Lisbon.", "topics": ["food"]}

    response = curator_api.post(summary_url())

    assert response.status_code == 200, response.content
    assert response.json() == {
        "thread_id": "trip-42",
        "summary": "Alice, vegetarian, in Lisbon.",
        "topics": ["food"],
        "source": "llm",
        "summarized_through": 2,
        "messages_due_for_summary": 0,
        "refreshed": True,
    }
    thread = services.get_agent_memory().get_thread_record("trip-42")
    assert (thread.summary, thread.topics) == ("Alice, vegetarian, in Lisbon.", ["food"])
    entry = CurationEntry.objects.get()
    assert (entry.object_kind, entry.action, entry.summary, entry.token_name) == (
        "thread",
        "update",
        "Refreshed the summary with the LLM",
        "carl-script",
    )

    again = curator_api.post(summary_url())

    assert again.status_code == 200 and again.json()["refreshed"] is False
    assert again.json()["summary"] == "Alice, vegetarian, in Lisbon."
    assert fake_llm.count("thread_summary") == 1
    assert CurationEntry.objects.count() == 1


def test_a_failing_llm_is_a_502_and_changes_nothing(world, request, curator_api):
    fake_llm = request.getfixturevalue("fake_llm")
    fake_llm.fail("thread_summary", "http500")

    response = curator_api.post(summary_url())

    assert response.status_code == 502, response.content
    assert response.json()["detail"].startswith("The LLM failed")
    assert "sk-test-secret" not in response.content.decode()
    assert services.get_agent_memory().get_thread_record("trip-42").summary is None
    assert CurationEntry.objects.count() == 0
