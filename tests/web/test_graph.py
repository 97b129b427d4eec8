"""The link graph: /graph/ (the page), /graph/data/ (its JSON) and /graph/node/<id>/ (the side panel)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.queries import graph_layout

from .world import World, build_graph_world

SCRIPT = "<script>alert(1)</script>"
PAGE = reverse("memory:graph")
DATA = reverse("memory:graph_data")


def panel(memory_id: str) -> str:
    return reverse("memory:graph_node", args=[memory_id])


@pytest.fixture
def world(agent_memory) -> World:
    """The shared world (fact-vegetarian supersedes fact-old, in trip-42 of alice and atlas) plus
    a preference of alice's that supports the vegetarian fact, and an agent guideline contradicting it."""
    return build_graph_world(agent_memory)


def data(client, **params):
    response = client.get(DATA, params)
    return response, response.json()


# --- who may read ---------------------------------------------------------------------------


def test_anonymous_visitors_are_sent_to_log_in(client, world):
    for url in (PAGE, f"{DATA}?user_id=alice", panel("fact-old")):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


def test_viewers_read_the_page_the_data_and_the_panel(viewer_client, world):
    assert viewer_client.get(PAGE, {"user_id": "alice"}).status_code == 200
    assert viewer_client.get(DATA, {"user_id": "alice"}).status_code == 200
    assert viewer_client.get(panel("fact-old")).status_code == 200


# --- the JSON -------------------------------------------------------------------------------


def test_the_json_has_nodes_edges_in_the_stored_direction_and_counts(viewer_client, world):
    response, body = data(viewer_client, user_id="alice")

    assert response["Content-Type"] == "application/json"
    assert set(body) >= {"nodes", "edges", "truncated", "total_nodes", "total_edges"}
    nodes = {node["id"]: node for node in body["nodes"]}
    assert set(nodes) == {"fact-vegetarian", "fact-old", "pref-quiet", "guide-diet"}
    vegetarian = nodes["fact-vegetarian"]
    assert {
        key: vegetarian[key] for key in ("memory_type", "status", "content", "user_id", "agent_id", "thread_id")
    } == {
        "memory_type": "fact",
        "status": "valid",
        "content": "Alice is vegetarian.",
        "user_id": "alice",
        "agent_id": "atlas",
        "thread_id": "trip-42",
    }
    assert vegetarian["degree"] == 3 and nodes["fact-old"]["degree"] == 1
    assert nodes["fact-old"]["status"] == "invalid"  # superseded
    assert all(isinstance(node["x"], float) and isinstance(node["y"], float) for node in nodes.values())
    edges = {(edge["source"], edge["target"]): edge for edge in body["edges"]}
    assert set(edges) == {
        ("fact-vegetarian", "fact-old"),
        ("pref-quiet", "fact-vegetarian"),
        ("guide-diet", "fact-vegetarian"),
    }
    supersedes = edges[("fact-vegetarian", "fact-old")]
    assert supersedes["id"] == world.link_id
    assert (supersedes["relation_type"], supersedes["opposite_relation_type"]) == ("supersedes", "is_superseded_by")
    assert (body["truncated"], body["total_nodes"], body["total_edges"]) == (False, 4, 3)


def test_every_scope_and_the_neighbourhood_of_a_memory(viewer_client, world):
    def ids(**params):
        return {node["id"] for node in data(viewer_client, **params)[1]["nodes"]}

    assert ids(agent_id="atlas") == {"fact-vegetarian", "fact-old", "pref-quiet", "guide-diet"}
    assert ids(thread_id="trip-42") == {"fact-vegetarian", "fact-old", "pref-quiet", "guide-diet"}
    assert ids(memory_id="fact-old", hops=0) == {"fact-old"}
    assert ids(memory_id="fact-old", hops=1) == {"fact-old", "fact-vegetarian"}
    assert ids(memory_id="fact-old", hops=2) == {"fact-old", "fact-vegetarian", "pref-quiet", "guide-diet"}
    assert ids(user_id="nobody") == set()


def test_filters_by_relation_type_memory_type_and_status(viewer_client, world):
    def shape(**params):
        body = data(viewer_client, **params)[1]
        return {node["id"] for node in body["nodes"]}, {edge["relation_type"] for edge in body["edges"]}

    assert shape(user_id="alice", relation_type="supports") == ({"pref-quiet", "fact-vegetarian"}, {"supports"})
    repeated = viewer_client.get(f"{DATA}?memory_id=fact-vegetarian&relation_type=supports&relation_type=contradicts")
    assert {edge["relation_type"] for edge in repeated.json()["edges"]} == {"supports", "contradicts"}
    assert shape(memory_id="fact-vegetarian", memory_type="fact") == ({"fact-vegetarian", "fact-old"}, {"supersedes"})
    both = viewer_client.get(f"{DATA}?memory_id=fact-vegetarian&memory_type=fact&memory_type=guideline").json()
    assert {node["id"] for node in both["nodes"]} == {"fact-vegetarian", "fact-old", "guide-diet"}
    assert shape(memory_id="fact-vegetarian", status="valid")[0] == {"fact-vegetarian", "pref-quiet", "guide-diet"}
    assert shape(memory_id="fact-old", status="invalid")[0] == {"fact-old"}
    assert shape(user_id="alice", relation_type="inspired") == (set(), set())  # a custom type nobody used


def test_past_the_cap_the_most_linked_are_kept_and_the_totals_say_how_many_there_are(viewer_client, world):
    response, body = data(viewer_client, user_id="alice", max_nodes=2)

    assert response.status_code == 200
    assert body["truncated"] is True
    assert (len(body["nodes"]), body["total_nodes"], body["total_edges"]) == (2, 4, 3)
    assert "fact-vegetarian" in {node["id"] for node in body["nodes"]}
    assert body["max_nodes"] == 2


@pytest.mark.parametrize(
    ("params", "field", "words"),
    [
        ({}, "__all__", "Choose one scope: a user, an agent, a thread or a memory."),
        ({"user_id": "alice", "thread_id": "trip-42"}, "__all__", "not both a user and a thread"),
        ({"user_id": "a", "agent_id": "b", "memory_id": "c"}, "__all__", "not a user, an agent and a memory at once"),
        ({"user_id": "alice", "hops": "9"}, "hops", "less than or equal to 5"),
        ({"user_id": "alice", "hops": "x"}, "hops", "whole number"),
        ({"user_id": "alice", "max_nodes": "0"}, "max_nodes", "greater than or equal to 1"),
        ({"user_id": "alice", "max_nodes": "10001"}, "max_nodes", "less than or equal to 10000"),
        ({"user_id": "alice", "memory_type": "opinion"}, "memory_type", "not one of the available choices"),
        ({"user_id": "alice", "status": "expired"}, "status", "not one of the available choices"),
        ({"user_id": "alice", "relation_type": " "}, "relation_type", "non-empty"),
        ({"user_id": "x" * 600}, "user_id", "at most 512"),
    ],
)
def test_bad_parameters_are_a_400_with_the_field_and_its_message(viewer_client, world, params, field, words):
    response, body = data(viewer_client, **params)

    assert response.status_code == 400
    assert field in body["errors"], body
    assert words in " ".join(body["errors"][field])
    if not params:
        return  # the page without parameters asks for a scope (below)
    page = viewer_client.get(PAGE, params)
    assert page.status_code == 400
    assert words in page.content.decode().replace("&#x27;", "'")


def test_a_missing_memory_is_a_404_that_says_so(viewer_client, world):
    response, body = data(viewer_client, memory_id="no-such-memory")

    assert response.status_code == 404
    assert "No such memory" in body["errors"]["memory_id"][0]
    assert viewer_client.get(PAGE, {"memory_id": "no-such-memory"}).status_code == 404


def test_positions_are_the_same_on_every_load(viewer_client, world):
    graph_layout._cache.clear()
    first = data(viewer_client, user_id="alice")[1]
    graph_layout._cache.clear()
    second = data(viewer_client, user_id="alice")[1]

    assert [(node["x"], node["y"]) for node in first["nodes"]] == [(node["x"], node["y"]) for node in second["nodes"]]
    assert len({(node["x"], node["y"]) for node in first["nodes"]}) == 4  # no two nodes on one spot


def test_long_content_is_cut_in_the_json(viewer_client, agent_memory):
    agent_memory.add_memory("long " * 200, memory_id="long", user_id="u")
    agent_memory.add_memory("short", memory_id="short", user_id="u", memory_id_to_link="long", link_type="supports")

    nodes = {node["id"]: node for node in data(viewer_client, user_id="u")[1]["nodes"]}

    assert len(nodes["long"]["content"]) == 200 and nodes["long"]["content"].endswith("…")


# --- the page -------------------------------------------------------------------------------


def test_the_page_without_a_scope_opens_on_the_most_linked_user_and_offers_the_others(
    viewer_client, world, agent_memory
):
    agent_memory.add_memory("Bob likes trains.", memory_id="bob-trains", user_id="bob")
    agent_memory.add_memory("Bob takes the night train.", memory_id="bob-night", user_id="bob")
    agent_memory.link_records("bob-night", "memory", "bob-trains", "memory", "refines")

    response = viewer_client.get(PAGE)

    html = response.content.decode()
    assert response.status_code == 200
    # alice's graph at once, the scope stated and in every URL the page makes: never an empty canvas.
    assert 'id="graph"' in html and 'data-url="/graph/data/?user_id=alice"' in html
    assert "Link graph of user" in html and 'href="/users/alice/"' in html
    assert 'value="alice"' in html  # the form says whose graph it is
    start = html[html.index('id="graph-start"') :]
    start = start[: start.index("</p>")]
    assert "Showing" in start and 'href="/graph/?user_id=alice"' in start
    assert "the user with the most links (3 links, 3 memories)" in start
    # The others, one click away: users first, then agents, each with its links and memories.
    assert start.index('href="/graph/?user_id=bob"') < start.index('href="/graph/?agent_id=atlas"')
    assert "(1 link, 2 memories)" in start and "(agent, 3 links, 3 memories)" in start
    assert 'href="/graph/"' in html and ">Graph</a>" in html  # in the navigation


def test_without_a_scope_the_filters_are_kept_and_the_table_view_lists_the_most_linked(viewer_client, world):
    html = viewer_client.get(PAGE, {"hops": "2", "user_id": "", "status": "valid"}).content.decode()
    assert 'data-url="/graph/data/?hops=2&amp;status=valid&amp;user_id=alice"' in html
    assert 'href="/graph/?hops=2&amp;status=valid&amp;agent_id=atlas"' in html

    response = viewer_client.get(PAGE, {"view": "table"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "4 memories and 3 links" in html and "<code>supersedes</code>" in html
    assert 'id="graph-start"' in html and 'href="/graph/?user_id=alice"' in html


def test_the_opening_graph_is_chosen_without_reading_the_memories(viewer_client, world, agent_memory, monkeypatch):
    """Two grouped counts (linked_owners), memoised by the store; the graph itself is the browser's
    to fetch from /graph/data/."""
    calls = []
    for name in ("memory_graph", "list_memories", "list_relations"):  # (the navigation's badge counts links)
        monkeypatch.setattr(
            agent_memory, name, lambda *args, name=name, **kwargs: calls.append(name) or pytest.fail(name)
        )
    linked_owners = agent_memory.linked_owners
    monkeypatch.setattr(
        agent_memory,
        "linked_owners",
        lambda *args, **kwargs: calls.append("linked_owners") or linked_owners(*args, **kwargs),
    )

    assert viewer_client.get(PAGE).status_code == 200
    assert calls == ["linked_owners", "linked_owners"]


def test_the_page_of_a_store_without_links_says_how_to_make_one(client, curator, viewer, agent_memory):
    agent_memory.add_memory("Alice is vegetarian.", memory_id="lonely", user_id="alice")
    client.force_login(curator)

    response = client.get(PAGE)

    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="graph"' not in html and "js/graph.js" not in html  # no canvas to leave empty
    assert "No two memories are linked yet, so there is no graph to draw." in html
    assert 'href="/links/new/?next=/graph/"' in html and "Link two memories" in html
    assert "Add a link" in html

    client.force_login(viewer)
    html = client.get(PAGE, {"view": "table"}).content.decode()
    assert "No two memories are linked yet" in html and "A curator can link two memories" in html
    assert "Link two memories" not in html


def test_a_scope_with_nothing_linked_is_said_in_words_not_an_empty_canvas(viewer_client, world):
    html = viewer_client.get(PAGE, {"user_id": "nobody"}).content.decode()

    assert 'id="graph-empty" hidden' in html  # graph.js shows it when the data has no memory
    assert "No memory of this user is linked to another, so there is nothing to draw." in html
    assert "Start from the most linked" in html


def test_the_page_holds_the_canvas_its_data_url_legend_controls_and_a_way_back(viewer_client, world):
    response = viewer_client.get(PAGE, {"thread_id": "trip-42", "hops": "2", "relation_type": "supports"})

    html = response.content.decode()
    assert response.status_code == 200
    assert 'data-url="/graph/data/?thread_id=trip-42&amp;hops=2&amp;relation_type=supports"' in html
    assert 'href="/threads/trip-42/"' in html  # back to the thread
    for control in ('data-graph-action="fit"', 'data-graph-action="zoom-in"', 'data-graph-action="export"'):
        assert control in html
    assert 'id="graph-find-text"' in html and 'id="graph-panel"' in html
    assert "oam-graph-type-preference" in html  # the legend
    assert "js/graph.js" in html and "vendor/cytoscape/cytoscape.min.js" in html
    assert "<noscript>" in html and "view=table" in html
    assert " style=" not in html  # no inline styles (CSP)


def test_graph_js_is_loaded_on_the_graph_page_only(viewer_client, world):
    assert "js/graph.js" not in viewer_client.get(reverse("memory:overview")).content.decode()
    assert "js/graph.js" in viewer_client.get(PAGE).content.decode()
    assert "js/graph.js" not in viewer_client.get(PAGE, {"user_id": "alice", "view": "table"}).content.decode()


def test_the_truncation_notice_links_to_narrower_scopes(viewer_client, world):
    html = viewer_client.get(PAGE, {"user_id": "alice", "hops": "2"}).content.decode()

    assert 'id="graph-truncated"' in html
    assert 'href="/graph/?user_id=alice&amp;hops=1"' in html
    assert 'href="/graph/?user_id=alice&amp;hops=2&amp;status=valid"' in html
    assert 'href="/graph/?user_id=alice&amp;hops=2&amp;memory_type=fact"' in html
    assert 'Or <a href="/graph/?user_id=alice&amp;hops=2&amp;max_nodes=10000">show up to 10,000 memories</a>' in html


def test_at_the_largest_cap_the_truncation_notice_offers_only_narrower_scopes(viewer_client, world):
    html = viewer_client.get(PAGE, {"user_id": "alice", "max_nodes": "10000"}).content.decode()

    assert "Narrow it:" in html and "show up to" not in html


def test_the_table_view_lists_nodes_and_links_for_readers_without_javascript(viewer_client, world):
    response = viewer_client.get(PAGE, {"user_id": "alice", "view": "table"})

    html = response.content.decode()
    assert response.status_code == 200
    assert 'href="/memories/fact-vegetarian/"' in html and "Alice prefers quiet hotels." in html
    assert "<code>supersedes</code>" in html
    assert "4 memories and 3 links" in html
    assert 'href="/graph/?user_id=alice"' in html  # back to the drawing
    assert "js/graph.js" not in html


def test_the_table_view_names_both_memories_of_each_link_by_their_content(viewer_client, world):
    html = viewer_client.get(PAGE, {"user_id": "alice", "view": "table"}).content.decode()

    links = html[html.index('id="graph-edges-heading"') :]
    assert "Alice prefers quiet hotels." in links and "<code>supports</code>" in links
    assert 'href="/memories/pref-quiet/"' in links and 'href="/memories/fact-vegetarian/"' in links


def test_custom_relation_types_are_offered_from_the_links_and_can_be_typed(viewer_client, world, agent_memory):
    agent_memory.link_records("pref-quiet", "preference", "fact-old", "fact", "inspired_by")

    table = viewer_client.get(PAGE, {"user_id": "alice", "view": "table"}).content.decode()
    assert 'value="inspired_by"' in table  # a box to tick, from the links listed

    typed = viewer_client.get(PAGE, {"user_id": "alice", "view": "table", "relation_type": ["", "inspired_by"]})
    html = typed.content.decode()
    assert typed.status_code == 200
    assert "2 memories and 1 link" in html
    _, body = data(viewer_client, user_id="alice", relation_type=["inspired_by", ""])
    assert {edge["relation_type"] for edge in body["edges"]} == {"inspired_by"}


def test_the_table_view_says_what_the_cap_left_out(viewer_client, world):
    html = viewer_client.get(PAGE, {"user_id": "alice", "view": "table", "max_nodes": "2"}).content.decode()

    assert "Showing 2 of 4 memories" in html


def test_pages_link_to_the_graph(viewer_client, world):
    links = {
        reverse("memory:thread_detail", args=["trip-42"]): 'href="/graph/?thread_id=trip-42"',
        reverse("memory:memory_detail", args=["fact-old"]): 'href="/graph/?memory_id=fact-old&amp;hops=2"',
        reverse("memory:user_detail", args=["alice"]): 'href="/graph/?user_id=alice"',
        reverse("memory:agent_detail", args=["atlas"]): 'href="/graph/?agent_id=atlas"',
    }
    for url, link in links.items():
        assert link in viewer_client.get(url).content.decode(), url


# --- the side panel -------------------------------------------------------------------------


def test_the_panel_shows_the_record_its_links_from_its_side_and_where_to_go(viewer_client, world):
    response = viewer_client.get(panel("fact-vegetarian"), HTTP_HX_REQUEST="true")

    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html  # a fragment
    assert "Alice is vegetarian." in html
    assert "valid" in html and "oam-chip" in html  # status badge and metadata chips
    assert "<code>supersedes</code>" in html  # this memory supersedes fact-old…
    assert "<code>is_supported_by</code>" in html  # …and is supported by pref-quiet
    assert 'href="/memories/fact-old/"' in html
    assert 'href="/memories/fact-vegetarian/"' in html  # its page
    assert 'href="/graph/?memory_id=fact-vegetarian&amp;hops=2"' in html  # centre the graph here


def test_the_panel_is_a_page_of_its_own_without_htmx(viewer_client, world):
    html = viewer_client.get(panel("fact-old")).content.decode()

    assert "<html" in html and "Alice used to eat fish." in html


def test_the_panel_of_a_memory_gone_says_so(viewer_client, world):
    response = viewer_client.get(panel("gone-memory"), HTTP_HX_REQUEST="true")

    assert response.status_code == 404
    assert "no longer exists" in response.content.decode()
    assert viewer_client.get(panel("gone-memory")).status_code == 404


def test_hostile_content_is_escaped_in_the_panel_the_json_and_the_tables(viewer_client, agent_memory):
    hostile_id = f"m{SCRIPT}"
    agent_memory.add_memory(f"memory {SCRIPT}", memory_id=hostile_id, user_id="u", metadata={SCRIPT: SCRIPT})
    agent_memory.add_memory("other", memory_id="other", user_id="u", memory_id_to_link=hostile_id, link_type=SCRIPT)

    for html in (
        viewer_client.get(panel(hostile_id), HTTP_HX_REQUEST="true").content.decode(),
        viewer_client.get(panel("other"), HTTP_HX_REQUEST="true").content.decode(),
        viewer_client.get(PAGE, {"user_id": "u", "view": "table"}).content.decode(),
        viewer_client.get(PAGE, {"memory_id": hostile_id}).content.decode(),
    ):
        assert SCRIPT not in html
        assert "&lt;script&gt;" in html
    body = viewer_client.get(DATA, {"user_id": "u"}).json()  # text as data: graph.js draws it on a canvas
    assert {node["content"] for node in body["nodes"]} == {f"memory {SCRIPT}", "other"}
