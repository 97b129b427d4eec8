"""A thread's context card preview: every parameter, as of a message, and the LLM actions."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from memory import services
from memory.models import CurationEntry
from memory.templatetags.oam import record_url

from .world import World, build_world


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def card_url(world: World) -> str:
    return reverse("memory:card_preview", args=[world.thread_id])


def test_the_card_shows_each_section_its_tokens_and_the_records_it_chose(viewer_client, world):
    response = viewer_client.get(card_url(world), {"max_recent_messages": "2"})

    html = response.content.decode()
    card = response.context["card"]
    assert response.status_code == 200
    assert card.results
    rows = re.findall(
        r"<tr>\s*<td>(\d+)</td>\s*<td><span class=\"badge oam-type\">[^<]*</span> <a href=\"([^\"]+)\"", html
    )
    assert rows == [(str(rank), record_url(result.record)) for rank, result in enumerate(card.results, 1)]
    assert len(card.recent_messages) == 2
    assert "Relevant information, in card order" in html and "The card as the agent gets it" in html
    assert response.context["tokens"] > 0
    assert "&lt;relevant_information&gt;" in html  # the card's text, escaped, as the agent gets it


def test_every_parameter_reaches_the_engine(viewer_client, world, agent_memory, monkeypatch):
    from memory.engine import Thread

    calls = []
    real = Thread.get_context_card
    monkeypatch.setattr(Thread, "get_context_card", lambda self, **k: calls.append(k) or real(self, **k))

    viewer_client.get(
        card_url(world),
        {
            "fallback_message_count": "3",
            "max_relevant_results": "4",
            "token_budget": "900",
            "soft_token_budget": "800",
            "max_recent_messages": "2",
            "except_last_messages": "1",
            "min_relevant_results_by_type": '{"fact": 1}',
            "metadata_filter": '{"source": "chat"}',
            "include_invalid_results": "false",
            "as_of_message_id": world.message_ids[1],
        },
    )

    assert calls == [
        {
            "fallback_message_count": 3,
            "max_relevant_results": 4,
            "token_budget": 900,
            "soft_token_budget": 800,
            "max_recent_messages": 2,
            "except_last_messages": 1,
            "min_relevant_results_by_type": {"fact": 1},
            "metadata_filter": {"source": "chat"},
            "include_invalid_results": False,
            "as_of_message_id": world.message_ids[1],
            "refresh_summary_if_due": False,  # a preview writes nothing
        }
    ]


def test_a_card_as_of_a_message_leaves_out_what_came_after_and_says_so(viewer_client, world, agent_memory):
    response = viewer_client.get(
        card_url(world), {"as_of_message_id": world.message_ids[0], "max_recent_messages": "5"}
    )

    html = response.content.decode()
    assert [message.text for message in response.context["card"].recent_messages] == [
        "I'm vegetarian. Find me a quiet hotel in Lisbon."
    ]
    assert "As of message #1" in html and "content as it is now" in html


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ({"as_of_message_id": "nope"}, "as_of_message_id", "No such message"),
        ({"min_relevant_results_by_type": '{"thread": 1}'}, None, "min_relevant_results_by_type"),
        ({"metadata_filter": "[1]"}, "metadata_filter", "JSON object"),
        ({"token_budget": "0"}, "token_budget", "greater than or equal to 1"),
    ],
)
def test_bad_parameters_are_form_errors(viewer_client, world, query, field, message):
    response = viewer_client.get(card_url(world), query)

    assert response.status_code == 400
    assert message in response.content.decode()
    if field:
        assert field in response.context["form"].errors


def test_without_an_llm_the_actions_are_absent_and_the_page_says_why(curator_client, world):
    html = curator_client.get(card_url(world)).content.decode()

    assert "No LLM is configured" in html
    assert reverse("memory:summary_refresh", args=[world.thread_id]) not in html


def test_the_thread_page_embeds_the_card_and_each_message_links_to_the_card_then(viewer_client, world):
    html = viewer_client.get(reverse("memory:thread_detail", args=[world.thread_id])).content.decode()

    assert f'hx-get="{card_url(world)}' in html
    assert f"{card_url(world)}?as_of_message_id={world.message_ids[0]}" in html


def test_htmx_returns_the_card_alone(viewer_client, world):
    html = viewer_client.get(card_url(world), HTTP_HX_REQUEST="true").content.decode()

    assert "<html" not in html and 'id="card"' in html


def test_viewers_cannot_ask_the_llm(viewer_client, world):
    assert viewer_client.post(reverse("memory:summary_refresh", args=[world.thread_id])).status_code == 403
    assert viewer_client.post(reverse("memory:memories_extract", args=[world.thread_id])).status_code == 403


def refresh_url(world: World) -> str:
    return reverse("memory:summary_refresh", args=[world.thread_id])


def test_a_refresh_with_no_message_since_the_last_summary_records_nothing_and_says_so(
    fake_llm, agent_memory, curator_client
):
    world = build_world(agent_memory)  # with the LLM: its messages are summarised as they come
    asked = fake_llm.count("thread_summary")

    response = curator_client.post(refresh_url(world), follow=True)

    assert "No messages since the last summary: nothing to summarise." in response.content.decode()
    assert "Refreshed the summary." not in response.content.decode()
    assert fake_llm.count("thread_summary") == asked
    assert not CurationEntry.objects.exists()


def test_a_refresh_is_recorded_and_undoing_it_puts_back_the_summary_and_topics(world, request, curator_client):
    services.get_agent_memory().get_thread(world.thread_id).set_summary("Alice wants a hotel.", ["hotels"])
    fake_llm = request.getfixturevalue("fake_llm")  # the messages came before the LLM: none is summarised
    fake_llm.answers["thread_summary"] = lambda _: {"summary": "Alice, vegetarian, in Lisbon.", "topics": ["food"]}

    response = curator_client.post(refresh_url(world), follow=True)

    assert "Refreshed the summary." in response.content.decode()
    thread = services.get_agent_memory().get_thread_record(world.thread_id)
    assert (thread.summary, thread.topics) == ("Alice, vegetarian, in Lisbon.", ["food"])
    entry = CurationEntry.objects.get()
    assert (entry.object_kind, entry.action) == ("thread", "update")
    assert entry.summary == "Refreshed the summary with the LLM"
    preview = curator_client.get(reverse("memory:history_revert", args=[entry.pk])).content.decode()
    assert "<del>Alice, vegetarian, in Lisbon.</del>" in preview and "<ins>Alice wants a hotel.</ins>" in preview

    curator_client.post(reverse("memory:history_revert", args=[entry.pk]))

    thread = services.get_agent_memory().get_thread_record(world.thread_id)
    assert (thread.summary, thread.topics) == ("Alice wants a hotel.", ["hotels"])
    assert CurationEntry.objects.get(reverts=entry).summary == "Reverted: Refreshed the summary with the LLM"
    curator_client.post(refresh_url(world))  # the messages it had folded in are new again
    assert fake_llm.count("thread_summary") == 2


DUE_NOTICE = "A summary refresh is due: the agent's next card will first fold in 3 new messages."


def test_looking_at_a_card_with_a_due_summary_asks_the_llm_nothing_writes_nothing_and_says_so(
    world, request, viewer_client
):
    services.get_agent_memory().get_thread(world.thread_id).set_summary("Alice wants a hotel.", ["hotels"])
    fake_llm = request.getfixturevalue("fake_llm")  # the messages came before the LLM: a refresh is due
    thread_url = reverse("memory:thread_detail", args=[world.thread_id])
    before = services.get_agent_memory().get_thread_record(world.thread_id)

    page = viewer_client.get(card_url(world))
    embedded = viewer_client.get(card_url(world), {"max_recent_messages": "0"}, HTTP_HX_REQUEST="true")
    thread_page = viewer_client.get(thread_url)

    assert fake_llm.requests == []
    assert services.get_agent_memory().get_thread_record(world.thread_id) == before
    assert page.context["card"].summary == "Alice wants a hotel."
    assert "Alice wants a hotel." in embedded.content.decode()
    assert DUE_NOTICE in page.content.decode() and DUE_NOTICE in thread_page.content.decode()
    assert reverse("memory:summary_refresh", args=[world.thread_id]) not in thread_page.content.decode()  # a viewer

    card = services.get_agent_memory().get_thread(world.thread_id).get_context_card()  # the agent's own card

    assert fake_llm.count("thread_summary") == 1
    assert card.summary == "summary #1"
    assert DUE_NOTICE not in viewer_client.get(thread_url).content.decode()


def test_a_curator_refreshes_a_due_summary_from_the_thread_page_and_lands_back_on_it(world, request, curator_client):
    request.getfixturevalue("fake_llm")
    thread_url = reverse("memory:thread_detail", args=[world.thread_id])
    html = curator_client.get(thread_url).content.decode()
    assert DUE_NOTICE in html
    assert f'action="{refresh_url(world)}"' in html and f'name="next" value="{thread_url}"' in html

    response = curator_client.post(refresh_url(world), {"next": thread_url})

    assert response.status_code == 302 and response["Location"] == thread_url
    assert services.get_agent_memory().get_thread_record(world.thread_id).summary == "summary #1"


def test_only_the_cards_own_form_swaps_its_errors_out_of_band(viewer_client, world):
    """The thread page embeds the card (htmx, no target of the card page's): it has no error box
    for an out-of-band swap to land in, so none is sent."""
    embedded = viewer_client.get(card_url(world), HTTP_HX_REQUEST="true").content.decode()
    own_form = viewer_client.get(card_url(world), HTTP_HX_REQUEST="true", HTTP_HX_TARGET="card").content.decode()

    assert "hx-swap-oob" not in embedded
    assert 'id="filter-errors" role="alert" hx-swap-oob="true"' in own_form
