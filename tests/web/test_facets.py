"""The memory list's total and facets: counts beside each value of type, status, user, agent and
tag that add up to the total, each a link narrowing the list to it (or widening it again)."""

from __future__ import annotations

import html
import json
import re
from urllib.parse import parse_qs

import pytest
from django.urls import reverse

LIST = reverse("memory:memory_list")
EXPIRED = {"timestamp": "2000-01-01T00:00:00Z", "ttl_days": 1, "ttl_anchor": "timestamp"}


@pytest.fixture
def stocked(agent_memory):
    def add(memory_id, content, memory_type="fact", **options):
        options.setdefault("autonomous_linking", False)
        agent_memory.add_memory(content, memory_type=memory_type, memory_id=memory_id, **options)

    add("a1", "Alice likes tea.", "preference", user_id="alice", agent_id="atlas", metadata={"tags": ["diet", "tea"]})
    add("a2", "Alice lives in Lyon.", user_id="alice", agent_id="atlas", metadata={"tags": ["home"]})
    add("a3", "Alice lived in Paris.", user_id="alice", metadata={"tags": ["home"]})
    add("b1", "Bob runs.", user_id="bob", metadata={"tags": ["diet"]})
    add("g1", "Be brief.", "guideline", agent_id="atlas")
    add("old", "An old note.", user_id="alice", **EXPIRED)
    agent_memory.link_records("a2", "fact", "a3", "fact", "supersedes")
    return agent_memory


def facets(response) -> dict[str, dict[str, tuple[int, str]]]:
    """{facet label: {value label: (count, its link's query)}} as the page shows them."""
    page = response.content.decode()
    section = page.split('class="oam-facets', 1)[1].split("</section>", 1)[0]
    shown = {}
    for label, values in re.findall(r"<dt>(.*?)</dt>\s*<dd>(.*?)</dd>", section, re.S):
        shown[label] = {
            html.unescape(value): (int(count), html.unescape(query))
            for query, value, count in re.findall(
                r'href="[^"?]*\?([^"]*)"[^>]*>(.*?) <span class="oam-facet-count">(\d+)</span>', values
            )
        }
    return shown


def test_the_list_counts_every_facet_and_its_counts_add_up(viewer_client, stocked):
    response = viewer_client.get(LIST + "?facets=1")
    shown = facets(response)
    page = response.content.decode()

    assert '<span class="fw-semibold">5 memories</span>' in page
    assert "and 1 expired, awaiting purge, not listed" in page
    assert {value: count for value, (count, _) in shown["Type"].items()} == {"fact": 3, "preference": 1, "guideline": 1}
    assert {value: count for value, (count, _) in shown["Status"].items()} == {"valid": 4, "invalid": 1, "expired": 1}
    assert {value: count for value, (count, _) in shown["User"].items()} == {"alice": 3, "bob": 1, "no user": 1}
    assert {value: count for value, (count, _) in shown["Agent"].items()} == {"atlas": 3, "no agent": 2}
    assert {value: count for value, (count, _) in shown["Tag"].items()} == {"diet": 2, "home": 2, "tea": 1}


def test_a_facet_value_narrows_the_list_and_a_chosen_one_widens_it_again(viewer_client, stocked):
    cursor = viewer_client.get(LIST + "?user_id=alice&limit=1").context["next_cursor"]
    shown = facets(viewer_client.get(LIST + f"?user_id=alice&cursor={cursor}&facets=1"))
    diet_query = shown["Tag"]["diet"][1]
    assert parse_qs(diet_query) == {
        "user_id": ["alice"],
        "metadata_filter": [json.dumps({"tags": {"$array_contains": "diet"}})],
    }  # the cursor of the page it came from is dropped

    narrowed = viewer_client.get(LIST + "?" + diet_query + "&facets=1")
    assert [memory.id for memory in narrowed.context["memories"]] == ["a1"]
    assert parse_qs(facets(narrowed)["Tag"]["diet"][1]) == {"user_id": ["alice"]}  # chosen: drops it

    no_agent = facets(viewer_client.get(LIST + "?facets=1"))["Agent"]["no agent"][1]
    assert parse_qs(no_agent) == {"unscoped": ["agent_id"]}
    assert {m.id for m in viewer_client.get(LIST + "?" + no_agent).context["memories"]} == {"a3", "b1"}


def test_a_filter_of_expired_memories_counts_them_as_expired(viewer_client, stocked):
    shown = facets(viewer_client.get(LIST + "?status=expired&facets=1"))

    assert shown["Status"] == {"expired": (1, "")}
    assert shown["User"]["alice"][0] == 1


def test_the_page_comes_first_and_fetches_its_facets_after(viewer_client, stocked):
    """Counting takes a grouping query a facet (half a second at 100k memories): the list is not
    kept waiting for it. htmx fetches the facets once the page is shown; without JavaScript a
    link asks for them."""
    page = viewer_client.get(LIST + "?user_id=alice").content.decode()

    assert "oam-facets" not in page
    assert 'hx-get="/memories/?user_id=alice&amp;facets=1" hx-trigger="load" hx-select="#facets"' in page
    assert '<a href="?user_id=alice&amp;facets=1">Count them by type, status, user, agent and tag</a>' in page


def test_the_thread_list_counts_its_threads_by_user_agent_and_tag(viewer_client, agent_memory):
    agent_memory.create_thread(thread_id="t1", user_id="alice", agent_id="atlas", metadata={"tags": ["lisbon"]})
    agent_memory.create_thread(thread_id="t2", user_id="alice", agent_id="iris", metadata={"tags": ["lisbon", "food"]})
    agent_memory.create_thread(thread_id="t3", user_id="bob", agent_id="atlas")

    response = viewer_client.get(reverse("memory:thread_list") + "?facets=1")
    shown = facets(response)

    assert '<span class="fw-semibold">3 threads</span>' in response.content.decode()
    assert {value: count for value, (count, _) in shown["User"].items()} == {"alice": 2, "bob": 1}
    assert {value: count for value, (count, _) in shown["Tag"].items()} == {"lisbon": 2, "food": 1}
    assert parse_qs(shown["User"]["alice"][1]) == {"user_id": ["alice"]}
    assert {value: count for value, (count, _) in shown["Agent"].items()} == {"atlas": 2, "iris": 1}
    narrowed = viewer_client.get(reverse("memory:thread_list") + "?" + shown["Tag"]["food"][1])
    assert [thread.id for thread in narrowed.context["threads"]] == ["t2"]
