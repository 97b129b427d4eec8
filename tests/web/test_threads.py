"""Threads: the list with its filters and cursor, a thread's page, its metadata editor and delete."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from memory.models import CurationEntry

from .world import World, build_world, confirm_delete

THREAD_LIST = reverse("memory:thread_list")


def add_thread(agent_memory, thread_id: str, messages: int = 2, user_id: str = "u-ana", **metadata) -> None:
    thread = agent_memory.create_thread(thread_id=thread_id, user_id=user_id, agent_id="a-guide", metadata=metadata)
    thread.add_messages(
        [
            {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} in {thread_id}"}
            for i in range(messages)
        ]
    )


def next_link(html: str, path: str = THREAD_LIST) -> str | None:
    """The next page's URL; the pager links with a query string alone, relative to the page."""
    match = re.search(r'rel="next" href="([^"]+)"', html)
    return path + match.group(1).replace("&amp;", "&") if match else None


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def test_the_list_shows_threads_with_their_owners_counts_and_metadata(viewer_client, agent_memory):
    add_thread(agent_memory, "trip-to-porto", messages=4, topic="travel", tags=["trip", "urgent"])

    response = viewer_client.get(THREAD_LIST)

    html = response.content.decode()
    assert response.status_code == 200
    assert reverse("memory:thread_detail", args=["trip-to-porto"]) in html  # rows are links
    assert "u-ana" in html and "a-guide" in html
    assert "travel" in html
    assert "[&quot;trip&quot;, &quot;urgent&quot;]" in html  # lists as JSON, not Python reprs
    [thread] = response.context["threads"]
    assert thread.message_count == 4


def test_a_thread_is_named_by_its_title_with_its_id_beneath(viewer_client, agent_memory):
    agent_memory.create_thread(thread_id="t-9f1c", user_id="u-ana", metadata={"title": "Booking a quiet hotel"})

    html = viewer_client.get(THREAD_LIST).content.decode()

    link = reverse("memory:thread_detail", args=["t-9f1c"])
    assert f'<a href="{link}">Booking a quiet hotel</a><div class="small"><code class="text-body-secondary"' in html


def test_the_list_shows_the_seeded_demo_threads(viewer_client, agent_memory):
    from django.core.management import call_command

    call_command("seed_demo", "--seed=1", "--end-date=2026-01-15")

    html = viewer_client.get(THREAD_LIST).content.decode()

    assert html.count('href="/threads/demo-') == 12
    assert "Lisbon long weekend" in html


def test_the_list_puts_the_latest_activity_first(viewer_client, agent_memory):
    add_thread(agent_memory, "older")
    add_thread(agent_memory, "newer")

    assert [t.id for t in viewer_client.get(THREAD_LIST).context["threads"]] == ["newer", "older"]


def test_an_empty_store_says_how_to_fill_it(viewer_client):
    html = viewer_client.get(THREAD_LIST).content.decode()

    assert "No threads yet" in html
    assert "seed_demo" in html


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"user_id": "u-bob"}, ["bob-thread"]),
        ({"agent_id": "a-guide"}, ["bob-thread", "ana-thread"]),
        ({"metadata_filter": '{"topic": "cooking"}'}, ["ana-thread"]),
        ({"q": "BOB"}, ["bob-thread"]),  # text in the id, case-insensitive
        ({"q": "cook"}, ["ana-thread"]),  # text in the metadata
        ({"user_id": "u-ana", "q": "bob"}, []),
    ],
)
def test_the_list_filters_by_owner_metadata_and_text(viewer_client, agent_memory, query, expected):
    add_thread(agent_memory, "ana-thread", topic="cooking")
    add_thread(agent_memory, "bob-thread", user_id="u-bob", topic="travel")

    response = viewer_client.get(THREAD_LIST, query)

    assert response.status_code == 200
    assert [t.id for t in response.context["threads"]] == expected


def test_a_filter_with_no_match_offers_to_clear_it(viewer_client, agent_memory):
    add_thread(agent_memory, "ana-thread")

    html = viewer_client.get(THREAD_LIST, {"user_id": "nobody"}).content.decode()

    assert "No threads match these filters" in html
    assert "Clear the filters" in html


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"metadata_filter": "{not json"}, "Not valid JSON"),
        ({"metadata_filter": "[1, 2]"}, "Must be a JSON object"),
        ({"metadata_filter": '{"a": {"$regex": "x"}}'}, "$regex"),  # the engine's own message
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"limit": "abc"}, "whole number"),
        ({"limit": "0"}, "greater than or equal to 1"),
    ],
)
def test_bad_filters_are_a_400_with_the_message_in_the_filter_bar(viewer_client, agent_memory, query, message):
    add_thread(agent_memory, "ana-thread")

    response = viewer_client.get(THREAD_LIST, query)

    assert response.status_code == 400
    assert message in response.content.decode()


def test_the_cursor_pages_through_every_thread_once_keeping_the_filters(viewer_client, agent_memory):
    for n in range(5):
        add_thread(agent_memory, f"thread-{n}", topic="t")
    add_thread(agent_memory, "other", topic="u")

    seen, url = [], f"{THREAD_LIST}?limit=2&metadata_filter=%7B%22topic%22%3A+%22t%22%7D"
    while url:
        response = viewer_client.get(url)
        assert response.status_code == 200
        seen += [t.id for t in response.context["threads"]]
        url = next_link(response.content.decode())

    assert sorted(seen) == [f"thread-{n}" for n in range(5)]


def test_htmx_filtering_returns_only_the_results(viewer_client, agent_memory):
    add_thread(agent_memory, "ana-thread")

    response = viewer_client.get(THREAD_LIST, {"q": "ana"}, HTTP_HX_REQUEST="true")

    html = response.content.decode()
    assert 'id="results"' in html
    assert "<html" not in html
    assert response["Vary"].count("HX-Request") == 1


# --- a thread's page -------------------------------------------------------------------------


def test_the_thread_page_shows_its_timeline_memories_images_and_details(viewer_client, world):
    html = viewer_client.get(reverse("memory:thread_detail", args=[world.thread_id])).content.decode()

    assert "Find me a quiet hotel in Lisbon" in html
    assert "Príncipe Real is calm at night." in html
    assert "Here is the street I liked." in html
    assert reverse("memory:image_raw", args=[world.photo_id]) in html  # the image part as a thumbnail
    assert 'alt="A tiled street in Alfama"' in html
    assert reverse("memory:image_raw", args=[world.image_id]) in html  # the standalone image
    assert "Alice is vegetarian." in html  # the thread's memories
    assert reverse("memory:user_detail", args=["alice"]) in html
    assert "No summary stored" in html


def test_a_long_thread_is_paged_latest_messages_first(viewer_client, agent_memory):
    add_thread(agent_memory, "long", messages=120)
    url = reverse("memory:thread_detail", args=["long"])

    latest = viewer_client.get(url)
    start, limit = latest.context["earlier"]
    earlier = viewer_client.get(url, {"start": start, "limit": limit})
    start, limit = earlier.context["earlier"]
    first = viewer_client.get(url, {"start": start, "limit": limit})
    last_five = viewer_client.get(url, {"start": -5})

    assert [m.content for m in latest.context["timeline"]][-1] == "message 119 in long"
    assert len(latest.context["timeline"]) == 50
    assert [m.content for m in earlier.context["timeline"]][::49] == ["message 20 in long", "message 69 in long"]
    assert [m.content for m in first.context["timeline"]] == [f"message {i} in long" for i in range(20)]
    assert first.context["earlier"] is None
    assert [m.content for m in last_five.context["timeline"]] == [f"message {i} in long" for i in range(115, 120)]


def test_a_missing_thread_is_a_404_that_links_to_its_history(viewer_client, world):
    response = viewer_client.get(reverse("memory:thread_detail", args=["no-such-thread"]))

    assert response.status_code == 404
    assert "object_id=no-such-thread" in response.content.decode()


def test_ids_with_slashes_dots_and_tildes_have_pages(viewer_client, agent_memory):
    for thread_id in ("a/b", "..", "x~2Fy", "über thread"):
        add_thread(agent_memory, thread_id)
        url = reverse("memory:thread_detail", args=[thread_id])

        response = viewer_client.get(url)

        assert response.status_code == 200, thread_id
        assert response.context["thread"].id == thread_id


# --- editing metadata --------------------------------------------------------------------------


def edit_url(world: World) -> str:
    return reverse("memory:thread_edit", args=[world.thread_id])


def test_a_curator_edits_a_threads_metadata_and_it_is_recorded(curator_client, world, agent_memory):
    version = agent_memory.get_thread_record(world.thread_id).version

    response = curator_client.post(edit_url(world), {"metadata": '{"topic": "food"}', "version": version})

    assert response.status_code == 302
    assert agent_memory.get_thread_record(world.thread_id).metadata == {"topic": "food"}
    entry = CurationEntry.objects.get()
    assert (entry.object_kind, entry.object_id, entry.action, entry.actor_name) == (
        "thread",
        "trip-42",
        "update",
        "carl",
    )
    assert entry.before["metadata"] == {"topic": "travel", "tags": ["lisbon"]}
    assert entry.after["metadata"] == {"topic": "food"}


@pytest.mark.parametrize(
    ("metadata", "message"), [("{oops", "Not valid JSON"), ('"text"', "Must be a JSON object"), ("[]", "JSON object")]
)
def test_bad_metadata_is_a_form_error_and_nothing_changes(curator_client, world, agent_memory, metadata, message):
    version = agent_memory.get_thread_record(world.thread_id).version

    response = curator_client.post(edit_url(world), {"metadata": metadata, "version": version})

    assert response.status_code == 400
    assert message in response.content.decode()
    assert agent_memory.get_thread_record(world.thread_id).metadata == {"topic": "travel", "tags": ["lisbon"]}
    assert not CurationEntry.objects.exists()


def test_metadata_past_the_engines_limits_is_a_form_error(curator_client, world, agent_memory):
    version = agent_memory.get_thread_record(world.thread_id).version
    deep = json.dumps({"a": json.loads("[" * 40 + "]" * 40)})

    response = curator_client.post(edit_url(world), {"metadata": deep, "version": version})

    assert response.status_code == 400
    assert "nested more than" in response.content.decode()


def test_an_edit_of_a_thread_changed_meanwhile_is_refused_with_the_current_values(curator_client, world, agent_memory):
    opened = agent_memory.get_thread_record(world.thread_id).version
    agent_memory.update_thread(world.thread_id, metadata={"topic": "changed by someone else"})

    response = curator_client.post(edit_url(world), {"metadata": '{"topic": "mine"}', "version": opened})

    html = response.content.decode()
    assert response.status_code == 409
    assert "changed since you opened it" in html
    assert "changed by someone else" in html  # the current values
    assert "mine" in html  # what was typed is kept
    assert agent_memory.get_thread_record(world.thread_id).metadata == {"topic": "changed by someone else"}
    current = agent_memory.get_thread_record(world.thread_id).version
    assert f'name="version" value="{current}"' in html  # saving again is a deliberate overwrite


# --- delete ------------------------------------------------------------------------------------


def test_the_delete_confirmation_counts_what_goes_with_the_thread(curator_client, world):
    html = curator_client.get(reverse("memory:thread_delete", args=[world.thread_id])).content.decode()

    assert "3 messages" in html
    assert "2 memories" in html
    assert "2 images" in html
    assert "1 link" in html


def test_deleting_a_thread_takes_everything_and_it_can_be_restored(curator_client, world, agent_memory):
    response = confirm_delete(curator_client, reverse("memory:thread_delete", args=[world.thread_id]))

    assert response.status_code == 302
    with pytest.raises(KeyError):
        agent_memory.get_thread_record(world.thread_id)
    assert not agent_memory.search("vegetarian", user_id="alice", record_types=["fact", "message"])
    entry = CurationEntry.objects.get(action="delete")

    curator_client.post(reverse("memory:history_revert", args=[entry.pk]))

    thread = agent_memory.get_thread_record(world.thread_id)
    assert thread.message_count == 3
    assert thread.metadata == {"topic": "travel", "tags": ["lisbon"]}
    assert agent_memory.get_memory(world.old_fact_id).status == "invalid"  # its link came back too
    assert agent_memory.search("vegetarian", user_id="alice", record_types=["fact", "message"])
