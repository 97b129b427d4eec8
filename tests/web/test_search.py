"""The search workbench: every parameter of the engine's search as a GET, why each result ranked,
the linked tree, what an agent receives, strategies compared, and the engine's errors as form errors."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from .world import World, build_world

SEARCH = reverse("memory:search")


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def search(client, status: int = 200, **query):
    response = client.get(SEARCH, query)
    assert response.status_code == status, response.content.decode()[-3000:]
    return response


def ids(response) -> list[str]:
    return [item.result.id for item in response.context["results"]]


def test_a_first_visit_explains_what_a_search_needs(viewer_client, world):
    html = search(viewer_client).content.decode()

    assert "needs the user it searches for" in html


def test_a_client_search_ranks_and_explains_each_result(viewer_client, world):
    response = search(viewer_client, q="vegetarian", user_id="alice", record_types=["fact"])

    html = response.content.decode()
    assert ids(response)[0] == world.fact_id
    assert "<mark>vegetarian</mark>" in html
    assert "<mark>is</mark>" not in html  # a function word is not what matched
    assert "vector #1" in html and "keyword #1" in html and "fused" in html
    assert "AgentMemory.search" in html and "engine call" in html
    assert reverse("memory:memory_detail", args=[world.fact_id]) in html


@pytest.mark.parametrize(
    ("strategy", "meaning"),
    [
        ("", "hybrid search: 1 \u2212 fused score ÷ the best possible"),
        ("vector", "vector search: the vector distance itself"),
    ],
)
def test_the_two_distances_of_a_result_are_named_apart_and_explained(viewer_client, world, strategy, meaning):
    html = search(viewer_client, q="vegetarian", user_id="alice", strategy=strategy).content.decode()

    # The distance results are ordered by, and the raw cosine one, each labelled with what it is.
    assert '<abbr title="What the results are ordered by, 0 best (' + meaning in html
    assert ">ranking distance</abbr> 0." in html
    assert '<abbr title="The cosine distance between the query&#x27;s vector and the record&#x27;s' in html
    assert ">vector distance</abbr> 0." in html
    legend = html.split('id="score-legend">', 1)[1].split("</p>", 1)[0]
    assert "<strong>Ranking distance</strong>: what the results are ordered by, 0 best (" + meaning in legend
    assert "<strong>Vector distance</strong>: the raw cosine distance" in legend


def test_every_parameter_reaches_the_engine(viewer_client, world, agent_memory, monkeypatch):
    calls = []
    real = agent_memory.search
    monkeypatch.setattr(agent_memory, "search", lambda *a, **k: calls.append((a, k)) or real(*a, **k))

    search(
        viewer_client,
        q="hotel",
        user_id="alice",
        agent_id="atlas",
        thread_id=world.thread_id,
        exact_user_match="true",
        exact_agent_match="true",
        exact_thread_match="false",
        record_types=["message", "fact"],
        metadata_filter='{"channel": "web"}',
        max_results="5",
        token_budget="900",
        soft_token_budget="800",
        num_hops="2",
        max_linked_results="7",
        include_invalid_results="false",
        strategy="keyword",
    )

    [(args, kwargs)] = calls
    assert args == ("hotel",)
    assert kwargs == every_argument(world.thread_id)


def every_argument(thread_id: str) -> dict:
    """A value for every keyword argument of AgentMemory.search, as the engine receives it (the API
    takes them as they are, under the same names)."""
    return {
        "user_id": "alice",
        "agent_id": "atlas",
        "thread_id": thread_id,
        "exact_user_match": True,
        "exact_agent_match": True,
        "exact_thread_match": False,
        "record_types": ["message", "fact"],
        "metadata_filter": {"channel": "web"},
        "max_results": 5,
        "token_budget": 900,
        "soft_token_budget": 800,
        "num_hops": 2,
        "max_linked_results": 7,
        "include_invalid_results": False,
        "strategy": "keyword",
    }


def test_a_thread_search_defaults_to_the_threads_owners(viewer_client, world):
    response = search(
        viewer_client, q="hotel Lisbon", layer="thread", thread_id=world.thread_id, record_types="message"
    )

    assert ids(response)[0] == world.message_ids[0]
    assert f"Thread.search of {world.thread_id}" in response.content.decode()


def test_the_linked_tree_is_labelled_from_each_parent_and_marks_invalid_memories(viewer_client, world):
    response = search(
        viewer_client, q="vegetarian", user_id="alice", record_types="fact", num_hops="1", max_results="1"
    )

    html = response.content.decode()
    assert "Linked memories" in html
    assert "supersedes" in html  # as seen from the vegetarian fact, its parent
    assert "Alice used to eat fish." in html
    assert "text-bg-warning" in html  # the invalid fact's badge


def test_a_thread_search_takes_owners_but_not_a_thread_id(viewer_client, world, monkeypatch):
    from memory.engine import Thread

    calls = []
    real = Thread.search
    monkeypatch.setattr(
        Thread, "search", lambda self, *a, **k: calls.append((self.thread_id, k)) or real(self, *a, **k)
    )

    search(viewer_client, q="hotel", layer="thread", thread_id=world.thread_id, user_id="bob", agent_id="other")

    assert calls == [(world.thread_id, {"user_id": "bob", "agent_id": "other"})]


def test_the_formatted_content_follows_the_toggles(viewer_client, world):
    query = {"q": "vegetarian", "user_id": "alice", "record_types": "fact", "max_results": "1"}
    default = search(viewer_client, **query).context["results"][0]
    with_ids = search(viewer_client, **query, formatted="on", show_user_id="on", show_distance="on").context["results"]
    bare = search(viewer_client, **query, formatted="on").context["results"][0]

    assert "<timestamp>" in default.text and "<user_id>" not in default.text
    assert "<user_id>alice</user_id>" in with_ids[0].text and "<distance>" in with_ids[0].text
    assert "<timestamp>" not in bare.text and "<status>" not in bare.text
    assert default.tokens > bare.tokens > 0


def test_the_toggles_first_shown_are_the_engines_defaults(viewer_client, world):
    """Resubmitting the toggles as a first visit shows them gives the text of the engine's defaults."""
    query = {"q": "vegetarian", "user_id": "alice", "record_types": "fact", "max_results": "1"}
    first = search(viewer_client, **query)
    ticked = re.findall(r'<input type="checkbox" name="(show_\w+)"[^>]* checked', first.content.decode())
    again = search(viewer_client, **query, formatted="on", **dict.fromkeys(ticked, "on"))

    assert ticked  # some are on by default
    assert again.context["results"][0].text == first.context["results"][0].text


def test_compare_strategies_shows_each_strategys_ranks(viewer_client, world):
    response = search(viewer_client, q="vegetarian", user_id="alice", compare="1")

    rows = response.context["comparison"]
    assert set(response.context["compared_in"]) == {"vector", "keyword", "hybrid"}
    assert [row.ranks["hybrid"] for row in rows[:3]] == [1, 2, 3]  # in the searched strategy's order
    for row in rows:
        for name, rank in row.ranks.items():
            expected = None if rank is None or row.ranks["hybrid"] is None else row.ranks["hybrid"] - rank
            assert row.moves[name] == expected
    assert "Ranks by strategy" in response.content.decode()


def test_compare_orders_by_the_strategy_searched(viewer_client, world):
    response = search(viewer_client, q="vegetarian", user_id="alice", compare="1", strategy="keyword")

    keyword_first = [row.ranks["keyword"] for row in response.context["comparison"] if row.ranks["keyword"]]
    assert keyword_first == sorted(keyword_first) and keyword_first[0] == 1
    assert response.context["strategy"] == "keyword"


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ({"q": "tea", "user_id": "alice", "metadata_filter": '{"a": {"$bogus": 1}}'}, "metadata_filter", "$bogus"),
        ({"q": "tea", "user_id": "alice", "num_hops": "9"}, "num_hops", "less than or equal to 5"),
        ({"q": "tea", "user_id": "alice", "strategy": "fuzzy"}, "strategy", "Select a valid choice"),
        ({"q": "tea", "layer": "thread"}, "thread_id", "needs the thread"),
        ({"q": "tea", "layer": "thread", "thread_id": "nope"}, "thread_id", "names no thread"),
        ({"q": "tea", "user_id": "alice", "exact_user_match": "false"}, "exact_user_match", "exact_user_match=True"),
        ({"q": "tea", "user_id": "alice", "record_types": "thread"}, "record_types", "Select a valid choice"),
        ({"q": "tea", "user_id": "alice", "unscoped": "user_id"}, "user_id", "not both"),
        ({"q": "tea", "layer": "thread", "thread_id": "x", "unscoped": "thread_id"}, "unscoped", "within its thread"),
        ({"q": "tea", "user_id": "a", "unscoped": "agent_id", "exact_agent_match": "false"}, "unscoped", "exact"),
    ],
)
def test_the_engines_errors_are_form_errors(viewer_client, world, query, field, message):
    response = search(viewer_client, status=400, **query)

    assert message in response.content.decode()  # shown on the page, not only kept in the form
    if field:
        assert field in response.context["form"].errors


def test_a_query_without_a_user_asks_whom_to_search_as(viewer_client, world):
    """The top bar's search sends only q: the page offers the users, the records without one,
    and the text of every memory, rather than an error."""
    html = search(viewer_client, q="vegetarian").content.decode()

    assert 'href="?q=vegetarian&amp;user_id=alice"' in html
    assert 'href="?q=vegetarian&amp;unscoped=user_id"' in html
    assert reverse("memory:memory_list") + "?q=vegetarian" in html


def test_records_without_a_user_are_searched_with_the_engines_none(viewer_client, world, agent_memory, monkeypatch):
    agent_memory.add_memory("Tea is served at five.", memory_type="fact", autonomous_linking=False)
    calls = []
    real = agent_memory.search
    monkeypatch.setattr(agent_memory, "search", lambda *a, **k: calls.append(k) or real(*a, **k))

    response = search(viewer_client, q="tea", unscoped=["user_id", "agent_id"])

    assert calls == [{"user_id": None, "exact_user_match": True, "agent_id": None, "exact_agent_match": True}]
    assert [item.result.record.content for item in response.context["results"]] == ["Tea is served at five."]


def test_a_profile_result_opens_its_owners_page(viewer_client, world, agent_memory):
    agent_memory.add_user("alice", "Alice likes quiet hotels.")

    html = search(viewer_client, q="quiet hotels", user_id="alice", record_types="user_profile").content.decode()

    assert f'href="{reverse("memory:user_detail", args=["alice"])}">Open</a>' in html


def test_htmx_searches_return_the_results_alone(viewer_client, world):
    response = viewer_client.get(SEARCH, {"q": "vegetarian", "user_id": "alice"}, HTTP_HX_REQUEST="true")

    assert "<html" not in response.content.decode()
    assert 'id="results"' in response.content.decode()


def test_hostile_queries_and_content_are_escaped(viewer_client, agent_memory):
    agent_memory.add_memory("<script>alert(1)</script> tea", memory_type="fact", user_id="u", autonomous_linking=False)

    html = search(viewer_client, q="<script>tea", user_id="u").content.decode()

    assert "<script>alert(1)" not in html
    assert "&lt;<mark>script</mark>&gt;alert(1)&lt;/<mark>script</mark>&gt;" in html


def test_a_token_budget_that_drops_every_result_is_said_to_be_why(viewer_client, world):
    html = search(viewer_client, q="vegetarian", user_id="alice", token_budget="1").content.decode()

    assert re.search(r"none fits the token budget of 1 tokens: the first alone is \d+", html)
    assert "Loosen the scope" not in html


LEXICAL = "Search matches <strong>words, not meanings</strong>"


def test_with_the_hashing_embedder_the_search_and_the_card_say_they_match_words(viewer_client, world):
    search = viewer_client.get(reverse("memory:search")).content.decode()
    card = viewer_client.get(reverse("memory:card_preview", args=[world.thread_id])).content.decode()

    assert LEXICAL in search and "manage.py oam_reembed" in search
    assert "The card chooses its relevant memories by <strong>words, not meanings</strong>" in card


def test_with_an_embedder_of_meanings_they_say_nothing_of_it(viewer_client, world, monkeypatch):
    monkeypatch.setattr("memory.templatetags.oam.HashingEmbedder", type("NoSuchEmbedder", (), {}))

    assert "words, not meanings" not in viewer_client.get(reverse("memory:search")).content.decode()
