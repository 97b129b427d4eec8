"""/api/v1/stats/ (store counts, whole or scoped) and /api/v1/graph/ (the link graph around a scope,
with the dashboard graph's filters and errors): each persona, real values, 400 and 404."""

from __future__ import annotations

import pytest

from tests.web.world import World, build_graph_world

STATS, GRAPH = "/api/v1/stats/", "/api/v1/graph/"


@pytest.fixture
def world(agent_memory) -> World:
    """The shared world (fact-vegetarian supersedes fact-old, in trip-42 of alice and atlas) plus
    a preference of alice's supporting the vegetarian fact and an agent guideline contradicting it."""
    return build_graph_world(agent_memory)


@pytest.mark.parametrize("persona", ["anonymous", "revoked_api", "expired_api"])
def test_without_a_live_credential_it_is_a_401(request, db, world, persona):
    client = request.getfixturevalue(persona)
    assert client.get(STATS).status_code == 401
    assert client.get(GRAPH, {"user_id": "alice"}).status_code == 401


@pytest.mark.parametrize("persona", ["viewer_api", "curator_reading_api", "curator_api", "session_api"])
def test_every_role_reads_counts_and_graphs(request, db, world, persona):
    client = request.getfixturevalue(persona)
    assert client.get(STATS).status_code == 200
    assert client.get(GRAPH, {"user_id": "alice"}).status_code == 200


def test_neither_is_written_to(curator_api, world):
    assert curator_api.post(STATS, {}, format="json").status_code == 405
    assert curator_api.delete(GRAPH).status_code == 405


# --- store counts ---------------------------------------------------------------------------


def test_the_store_is_counted(viewer_api, world):
    body = viewer_api.get(STATS).json()

    assert (body["threads"], body["users"], body["agents"]) == (1, 1, 1)
    assert (body["messages"], body["memories"], body["images"], body["expired"]) == (3, 4, 2, 0)
    assert body["records"]["fact"] == {"valid": 1, "invalid": 1, "expired": 0}
    assert body["records"]["preference"] == {"valid": 1, "invalid": 0, "expired": 0}
    assert body["links"] == {"supersedes": 1, "supports": 1, "contradicts": 1} and body["link_count"] == 3
    assert {(day["kind"], day["count"]) for day in body["by_day"]} == {("message", 3), ("memory", 4)}
    assert body["backend"] == "sqlite" and body["embedder"] and body["vector_dim"] > 0


@pytest.mark.parametrize(
    ("scope", "threads", "messages", "memories"),
    [
        ({"user_id": "alice"}, 1, 3, 3),
        ({"agent_id": "atlas"}, 1, 3, 3),
        ({"thread_id": "trip-42"}, 1, 3, 2),
        ({"user_id": "nobody"}, 0, 0, 0),
    ],
)
def test_a_scope_counts_what_deleting_it_would_remove(viewer_api, world, scope, threads, messages, memories):
    body = viewer_api.get(STATS, scope).json()

    assert (body["threads"], body["messages"], body["memories"]) == (threads, messages, memories)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"user_id": "alice", "thread_id": "trip-42"}, "non_field_errors"),
        ({"user_id": "x" * 600}, "user_id"),
        ({"agent_id": "bad\x00id"}, "agent_id"),
    ],
)
def test_bad_scopes_are_a_400(viewer_api, world, params, field):
    response = viewer_api.get(STATS, params)

    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()


# --- the graph ------------------------------------------------------------------------------


def test_the_graph_has_laid_out_nodes_and_edges_in_their_stored_direction(viewer_api, world):
    response = viewer_api.get(GRAPH, {"user_id": "alice"})

    assert response.status_code == 200
    body = response.json()
    nodes = {node["id"]: node for node in body["nodes"]}
    assert set(nodes) == {"fact-vegetarian", "fact-old", "pref-quiet", "guide-diet"}
    assert (nodes["fact-vegetarian"]["degree"], nodes["fact-old"]["status"]) == (3, "invalid")
    assert all(isinstance(node["x"], float) for node in nodes.values())
    edges = {(edge["source"], edge["target"], edge["relation_type"]) for edge in body["edges"]}
    assert edges == {
        ("fact-vegetarian", "fact-old", "supersedes"),
        ("pref-quiet", "fact-vegetarian", "supports"),
        ("guide-diet", "fact-vegetarian", "contradicts"),
    }
    assert (body["truncated"], body["total_nodes"], body["total_edges"]) == (False, 4, 3)


def test_the_graph_takes_the_dashboards_filters(viewer_api, world):
    def node_ids(**params) -> set[str]:
        response = viewer_api.get(GRAPH, params)
        assert response.status_code == 200, response.content
        return {node["id"] for node in response.json()["nodes"]}

    assert node_ids(memory_id="fact-old", hops=1) == {"fact-old", "fact-vegetarian"}
    assert node_ids(memory_id="fact-old", hops=0) == {"fact-old"}
    assert node_ids(user_id="alice", relation_type="supports") == {"fact-vegetarian", "pref-quiet"}
    assert node_ids(user_id="alice", memory_type=["fact", "guideline"]) == {
        "fact-vegetarian",
        "fact-old",
        "guide-diet",
    }
    assert node_ids(user_id="alice", status="valid") == {"fact-vegetarian", "pref-quiet", "guide-diet"}
    capped = viewer_api.get(GRAPH, {"user_id": "alice", "max_nodes": 2}).json()
    assert len(capped["nodes"]) == 2 and capped["truncated"] and capped["total_nodes"] == 4


def test_an_unknown_relation_type_is_a_filter_that_matches_nothing(viewer_api, world):
    body = viewer_api.get(GRAPH, {"user_id": "alice", "relation_type": "cites"}).json()

    assert body["edges"] == []


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({}, "non_field_errors", "Choose one scope"),
        ({"user_id": "alice", "agent_id": "atlas"}, "non_field_errors", "not both a user and an agent"),
        ({"user_id": "alice", "hops": "9"}, "hops", ""),
        ({"user_id": "alice", "max_nodes": "0"}, "max_nodes", ""),
        ({"user_id": "alice", "memory_type": "opinion"}, "memory_type", ""),
        ({"user_id": "alice", "status": "expired"}, "status", ""),
        ({"user_id": "alice", "relation_type": "x" * 600}, "relation_type", ""),
        ({"user_id": "bad\x00id"}, "user_id", ""),
    ],
)
def test_bad_graph_queries_are_a_400_with_the_dashboards_messages(viewer_api, world, params, field, message):
    response = viewer_api.get(GRAPH, params)

    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert field in errors, errors
    assert message in " ".join(errors[field])


def test_a_graph_around_a_missing_memory_is_a_404(viewer_api, world):
    response = viewer_api.get(GRAPH, {"memory_id": "no-such-memory"})

    assert response.status_code == 404
    assert response.json() == {"detail": "No such memory: it does not exist, or it has expired."}
