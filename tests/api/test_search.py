"""POST /api/v1/search/: each persona, every parameter of the engine's search under its own name
and the effect it has, scores, linked trees, the formatted content, and the engine's errors as 400s."""

from __future__ import annotations

import pytest

from memory.models import CurationEntry
from tests.web.test_search import every_argument
from tests.web.world import World, build_world

SEARCH = "/api/v1/search/"


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def search(client, status: int = 200, **body) -> dict:
    response = client.post(SEARCH, body, format="json")
    assert response.status_code == status, response.content.decode()[-3000:]
    return response.json()


def nested(depth: int) -> dict:
    condition: dict = {"source": "chat"}
    for _ in range(depth):
        condition = {"$and": [condition]}
    return condition


def ids(found: dict) -> list[str]:
    return [result["id"] for result in found["results"]]


# --- who may search -------------------------------------------------------------------------


def test_without_credentials_it_is_a_401(anonymous, world):
    response = anonymous.post(SEARCH, {"query": "vegetarian", "user_id": "alice"}, format="json")

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


@pytest.mark.parametrize(
    ("persona", "message"),
    [("revoked_api", "This API token was revoked."), ("expired_api", "This API token has expired.")],
)
def test_a_revoked_or_expired_token_is_a_401(request, db, world, persona, message):
    response = request.getfixturevalue(persona).post(SEARCH, {"query": "x", "user_id": "alice"}, format="json")

    assert response.status_code == 401
    assert response.json() == {"detail": message}


@pytest.mark.parametrize("persona", ["viewer_api", "curator_reading_api", "curator_api"])
def test_every_role_searches_though_it_is_a_post_and_nothing_is_recorded(request, db, world, persona):
    found = search(request.getfixturevalue(persona), query="vegetarian", user_id="alice", record_types=["fact"])

    assert ids(found)[0] == world.fact_id
    assert CurationEntry.objects.count() == 0


def test_a_session_searches_with_its_csrf_token(session_api, world):
    refused = session_api.post(SEARCH, {"query": "vegetarian", "user_id": "alice"}, format="json")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]

    session_api.get("/")  # the dashboard sets the CSRF cookie
    token = session_api.cookies["csrftoken"].value
    response = session_api.post(
        SEARCH, {"query": "vegetarian", "user_id": "alice"}, format="json", HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 200
    assert world.fact_id in ids(response.json())


def test_a_user_without_a_role_may_not_search(db, world):
    from django.contrib.auth.models import User
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(User.objects.create_user("nobody"))
    response = client.post(SEARCH, {"query": "x", "user_id": "alice"}, format="json")

    assert response.status_code == 403
    assert "no role" in response.json()["detail"]


# --- results --------------------------------------------------------------------------------


def test_a_client_search_answers_scores_and_typed_records(viewer_api, world):
    found = search(viewer_api, query="vegetarian", user_id="alice", record_types=["fact"])

    assert found["call"] == "AgentMemory.search" and found["strategy"] == "hybrid"
    assert found["total_tokens"] is None
    top = found["results"][0]
    assert top["id"] == world.fact_id
    assert top["scores"]["vector_rank"] == 1 and top["scores"]["keyword_rank"] == 1
    assert top["scores"]["keyword_score"] > 0 and top["scores"]["score"] > 0
    assert top["distance"] == pytest.approx(0.0)  # first under both rankings: the best fused score
    assert top["record"] == {
        **top["record"],
        "id": world.fact_id,
        "record_type": "fact",
        "content": "Alice is vegetarian.",
        "metadata": {"source": "chat", "tags": ["diet"]},
        "user_id": "alice",
        "agent_id": "atlas",
        "thread_id": "trip-42",
        "role": None,
        "mime_type": None,
    }
    assert top["formatted_content"] is None and top["tokens"] is None
    assert top["linked_results"] == []  # num_hops defaults to 0


def test_messages_images_and_profiles_come_with_their_own_fields(viewer_api, world):
    def first(query: str, record_type: str) -> dict:
        return search(viewer_api, query=query, user_id="alice", record_types=[record_type])["results"][0]["record"]

    message = first("quiet hotel in Lisbon", "message")
    image = first("hand-drawn map", "image")
    profile = first("vegetarian who travels by train", "user_profile")

    assert (message["id"], message["role"], message["seq_no"]) == (world.message_ids[0], "user", 0)
    assert message["mime_type"] is None
    assert (image["id"], image["content"], image["mime_type"].lower()) == (
        world.image_id,
        "A hand-drawn map of Lisbon",
        "image/png",
    )
    assert image["role"] is None
    assert (profile["record_type"], profile["user_id"]) == ("user_profile", None)  # a profile has no scope


def test_every_parameter_reaches_the_engine_under_its_name(viewer_api, world, agent_memory, monkeypatch):
    calls = []
    real = agent_memory.search
    monkeypatch.setattr(agent_memory, "search", lambda *a, **k: calls.append((a, k)) or real(*a, **k))
    arguments = every_argument(world.thread_id)

    search(viewer_api, query="hotel", **arguments)

    assert calls == [(("hotel",), arguments)]


def test_a_null_is_the_engines_none_and_an_omitted_parameter_is_not_passed(
    viewer_api, world, agent_memory, monkeypatch
):
    calls = []
    real = agent_memory.search
    monkeypatch.setattr(agent_memory, "search", lambda *a, **k: calls.append(k) or real(*a, **k))

    search(viewer_api, query="tea", user_id=None, token_budget=None, record_types=None, metadata_filter=None)

    assert calls == [{"user_id": None, "token_budget": None, "record_types": None, "metadata_filter": None}]


@pytest.mark.parametrize(("strategy", "present", "absent"), [
    ("vector", {"vector_rank", "vector_distance"}, {"keyword_rank", "keyword_score", "score"}),
    ("keyword", {"keyword_rank", "keyword_score"}, {"vector_rank", "vector_distance", "score"}),
    ("hybrid", {"vector_rank", "keyword_rank", "score"}, set()),
])  # fmt: skip
def test_the_strategy_decides_the_ranking_and_its_scores(viewer_api, world, strategy, present, absent):
    found = search(viewer_api, query="vegetarian", user_id="alice", record_types=["fact"], strategy=strategy)

    scores = found["results"][0]["scores"]
    assert found["strategy"] == strategy
    assert all(scores[name] is not None for name in present), scores
    assert all(scores[name] is None for name in absent), scores


def test_types_max_results_and_the_metadata_filter_narrow_the_results(viewer_api, world):
    everything = search(viewer_api, query="Alice Lisbon vegetarian", user_id="alice", max_results=50)
    facts = search(viewer_api, query="Alice Lisbon vegetarian", user_id="alice", record_types=["fact"])
    two = search(viewer_api, query="Alice Lisbon vegetarian", user_id="alice", max_results=2)
    chat = search(viewer_api, query="Alice", user_id="alice", metadata_filter={"source": "chat"})

    assert {r["record"]["record_type"] for r in everything["results"]} >= {"fact", "message", "image"}
    assert {r["record"]["record_type"] for r in facts["results"]} == {"fact"}
    assert ids(two) == ids(everything)[:2]
    assert ids(chat) == [world.fact_id]


def test_num_hops_brings_the_linked_tree_labelled_from_the_parent(viewer_api, world):
    found = search(viewer_api, query="vegetarian", user_id="alice", record_types=["fact"], max_results=1, num_hops=1)

    [linked] = found["results"][0]["linked_results"]
    assert linked["label"] == "supersedes"
    assert linked["relation"]["id"] == world.link_id
    assert (linked["relation"]["source_record_id"], linked["relation"]["target_record_id"]) == (
        world.fact_id,
        world.old_fact_id,
    )
    assert linked["relation"]["opposite_relation_type"] == "is_superseded_by"
    assert linked["result"]["id"] == world.old_fact_id
    assert linked["result"]["record"]["status"] == "invalid"
    assert linked["result"]["linked_results"] == []  # one hop only
    assert linked["result"]["formatted_content"] is None

    from_the_old = search(viewer_api, query="fish", user_id="alice", record_types=["fact"], max_results=1, num_hops=1)[
        "results"
    ][0]
    assert from_the_old["id"] == world.old_fact_id
    assert from_the_old["linked_results"][0]["label"] == "is_superseded_by"  # read from the other end

    capped = search(
        viewer_api, query="vegetarian", user_id="alice", record_types=["fact"], num_hops=1, max_linked_results=0
    )
    assert all(result["linked_results"] == [] for result in capped["results"])


def test_include_invalid_results_false_leaves_out_the_retired_fact(viewer_api, world):
    kept = search(viewer_api, query="fish", user_id="alice", record_types=["fact"])
    left = search(viewer_api, query="fish", user_id="alice", record_types=["fact"], include_invalid_results=False)

    assert world.old_fact_id in ids(kept)
    assert world.old_fact_id not in ids(left) and ids(left) == [world.fact_id]


def test_token_budgets_keep_whole_results(viewer_api, world):
    query = {"query": "vegetarian", "user_id": "alice", "record_types": ["fact"]}

    assert search(viewer_api, **query)["results"][1:]  # more than one without a budget
    assert search(viewer_api, **query, token_budget=1)["results"] == []  # none fits
    assert len(search(viewer_api, **query, soft_token_budget=1)["results"]) == 1  # the first reaches it


def test_scope_agent_thread_and_records_without_a_user(viewer_api, world, agent_memory):
    agent_memory.add_memory("Alice likes jazz.", memory_type="fact", user_id="alice", agent_id="other")
    agent_memory.add_memory("Jazz nights are on Fridays.", memory_type="fact")

    anyone = search(viewer_api, query="jazz", user_id="alice", record_types=["fact"])
    atlas_only = search(
        viewer_api, query="jazz", user_id="alice", agent_id="atlas", exact_agent_match=True, record_types=["fact"]
    )
    in_thread = search(
        viewer_api, query="jazz", user_id="alice", thread_id="trip-42", exact_thread_match=True, record_types=["fact"]
    )
    shared = search(viewer_api, query="jazz", user_id=None, record_types=["fact"])
    also_shared = search(viewer_api, query="jazz", unscoped=["user_id"], record_types=["fact"])

    contents = lambda found: [r["record"]["content"] for r in found["results"]]  # noqa: E731
    assert "Alice likes jazz." in contents(anyone)
    assert "Jazz nights are on Fridays." not in contents(anyone)  # the user is matched exactly
    assert "Alice likes jazz." not in contents(atlas_only) and contents(atlas_only)
    assert all(r["record"]["thread_id"] == "trip-42" for r in in_thread["results"]) and in_thread["results"]
    assert contents(shared) == contents(also_shared) == ["Jazz nights are on Fridays."]


def test_a_thread_search_defaults_to_the_threads_owners(viewer_api, world, agent_memory):
    agent_memory.add_memory("Bob wants a hotel in Lisbon.", memory_type="fact", user_id="bob")

    found = search(viewer_api, query="hotel Lisbon", layer="thread", thread_id=world.thread_id)

    assert found["call"] == f"Thread.search of {world.thread_id}"
    assert found["results"][0]["id"] == world.message_ids[0]
    assert all(result["record"]["user_id"] in ("alice", None) for result in found["results"])
    as_bob = {"layer": "thread", "thread_id": world.thread_id, "user_id": "bob"}
    assert search(viewer_api, query="hotel Lisbon", **as_bob)["results"] == []  # and the thread's agent, exactly
    for_bob = search(viewer_api, query="hotel Lisbon", **as_bob, agent_id=None)
    assert [r["record"]["content"] for r in for_bob["results"]] == ["Bob wants a hotel in Lisbon."]


def test_formatted_content_with_the_engines_defaults_and_a_format_config(viewer_api, world):
    query = {"query": "vegetarian", "user_id": "alice", "record_types": ["fact"], "max_results": 1, "num_hops": 1}

    default = search(viewer_api, **query, formatted=True)
    shown = search(viewer_api, **query, formatted=True, format_config={"show_user_id": True, "show_timestamp": False})
    bare = search(
        viewer_api, **query, formatted=True, format_config={"show_status": False, "include_invalid_results": False}
    )

    text = default["results"][0]["formatted_content"]
    assert text.startswith('<record type="fact">') and "<timestamp>" in text and "<user_id>" not in text
    assert '<linked_memory relation="supersedes">' in text and "Alice used to eat fish." in text
    assert default["results"][0]["tokens"] == default["total_tokens"] > 0
    assert "<user_id>alice</user_id>" in shown["results"][0]["formatted_content"]
    assert "<timestamp>" not in shown["results"][0]["formatted_content"]
    assert "Alice used to eat fish." not in bare["results"][0]["formatted_content"]  # the invalid fact is hidden
    assert bare["results"][0]["tokens"] < default["results"][0]["tokens"]


def test_hostile_but_valid_text_searches_and_finds_nothing(viewer_api, world):
    found = search(viewer_api, query="<record>\u202e'; DROP TABLE--", user_id="al/ice ü", agent_id="🙂/..")

    assert found["results"] == []


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"query": "tea"}, "user_id", "requires user_id"),
        ({"query": "tea", "user_id": "alice", "exact_user_match": False}, "exact_user_match", "exact_user_match=True"),
        ({"user_id": "alice"}, "query", "required"),
        ({"query": "", "user_id": "alice"}, "query", "blank"),
        ({"query": ["tea"], "user_id": "alice"}, "query", "Not a valid string"),
        ({"query": "t" * 10_001, "user_id": "alice"}, "query", "10000"),
        ({"query": "tea", "user_id": ""}, "user_id", "blank"),
        ({"query": "tea", "user_id": "a\x00b"}, "user_id", "Null characters"),
        ({"query": "tea", "user_id": "a" * 513}, "user_id", "512"),
        ({"query": "tea", "user_id": True}, "user_id", "Not a valid string"),
        ({"query": "tea", "user_id": "alice", "metadata_filter": {"a": {"$bogus": 1}}}, "metadata_filter", "$bogus"),
        ({"query": "tea", "user_id": "alice", "metadata_filter": '{"a": 1}'}, "metadata_filter", "dictionary"),
        ({"query": "tea", "user_id": "alice", "metadata_filter": nested(20)}, "metadata_filter", "nested more than"),
        ({"query": "tea", "user_id": "alice", "num_hops": 9}, "num_hops", "less than or equal to 5"),
        ({"query": "tea", "user_id": "alice", "max_results": 0}, "max_results", "greater than or equal to 1"),
        ({"query": "tea", "user_id": "alice", "max_results": "many"}, "max_results", "valid integer"),
        ({"query": "tea", "user_id": "alice", "token_budget": 2**70}, "token_budget", "64 bits"),
        ({"query": "tea", "user_id": "alice", "max_linked_results": 2**70}, "max_linked_results", "64 bits"),
        ({"query": "tea", "user_id": "alice", "strategy": "fuzzy"}, "strategy", "not a valid choice"),
        ({"query": "tea", "user_id": "alice", "record_types": ["thread"]}, "record_types[0]", "not a valid choice"),
        ({"query": "tea", "user_id": "alice", "record_types": []}, "record_types", "may not be empty"),
        ({"query": "tea", "user_id": "alice", "record_types": "fact"}, "record_types", "list"),
        ({"query": "tea", "user_id": "alice", "exact_agent_match": "perhaps"}, "exact_agent_match", "valid boolean"),
        ({"query": "tea", "layer": "thread"}, "thread_id", "needs the thread"),
        ({"query": "tea", "layer": "thread", "thread_id": "nope"}, "thread_id", "names no thread"),
        ({"query": "tea", "layer": "galaxy", "user_id": "alice"}, "layer", "not a valid choice"),
        ({"query": "tea", "user_id": "alice", "unscoped": ["user_id"]}, "user_id", "not both"),
        ({"query": "tea", "layer": "thread", "thread_id": "trip-42", "unscoped": ["thread_id"]}, "unscoped", "within"),
        ({"query": "t", "user_id": "a", "unscoped": ["agent_id"], "exact_agent_match": False}, "unscoped", "exact"),
        ({"query": "tea", "user_id": "alice", "format_config": {"show_role": True}}, "format_config", "formatted"),
        (
            {"query": "tea", "user_id": "alice", "formatted": True, "format_config": {"show_role": "loud"}},
            "format_config.show_role",
            "valid boolean",
        ),
    ],
)
def test_bad_parameters_are_a_400_under_the_parameter(viewer_api, world, body, field, message):
    response = viewer_api.post(SEARCH, body, format="json")

    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert field in errors, errors
    assert message in " ".join(errors[field]), errors


def test_a_body_that_is_not_a_json_object_is_a_400_or_415(viewer_api, world):
    as_list = viewer_api.post(SEARCH, ["vegetarian"], format="json")
    as_form = viewer_api.post(SEARCH, {"query": "vegetarian", "user_id": "alice"})  # multipart
    broken = viewer_api.generic("POST", SEARCH, '{"query": ', content_type="application/json")
    deep = viewer_api.generic("POST", SEARCH, "[" * 100_000 + "]" * 100_000, content_type="application/json")

    assert as_list.status_code == 400 and "non_field_errors" in as_list.json()["errors"]
    assert as_form.status_code == 415
    assert broken.status_code == 400
    assert deep.status_code == 400 and "nested too deeply" in deep.json()["detail"]
