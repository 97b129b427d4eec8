"""Saved views: a person names the filters of the memory or thread list and opens them again in
one click; each person's own, viewers included (a view is not a change to the store)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from memory.models import SavedView

MEMORIES = reverse("memory:memory_list")
THREADS = reverse("memory:thread_list")
SAVE = reverse("memory:saved_view_create")


def save(client, name, query, listing="memories"):
    return client.post(SAVE, {"name": name, "listing": listing, "query": query, "next": MEMORIES})


def test_a_viewer_saves_the_filters_and_opens_them_again(viewer_client, viewer, agent_memory):
    agent_memory.add_memory("Alice likes tea.", memory_type="preference", user_id="alice", memory_id="tea")
    agent_memory.add_memory("Bob likes tea.", memory_type="preference", user_id="bob", memory_id="bob-tea")

    page = viewer_client.get(MEMORIES + "?user_id=alice&memory_type=preference").content.decode()
    assert "Save these filters as" in page

    response = save(viewer_client, "  Alice's   preferences ", "user_id=alice&memory_type=preference&cursor=x&facets=1")

    view = SavedView.objects.get()
    assert (view.user, view.listing, view.name) == (viewer, "memories", "Alice's preferences")
    assert view.query == "user_id=alice&memory_type=preference"  # paging and facets left out
    assert response.status_code == 302 and response["Location"] == f"{MEMORIES}?{view.query}"
    listing = viewer_client.get(MEMORIES).content.decode()
    assert f'<a href="{MEMORIES}?user_id=alice&amp;memory_type=preference">Alice&#x27;s preferences</a>' in listing
    opened = viewer_client.get(f"{MEMORIES}?{view.query}")
    assert [memory.id for memory in opened.context["memories"]] == ["tea"]


def test_the_same_name_replaces_the_view_and_each_list_has_its_own(viewer_client, agent_memory):
    save(viewer_client, "mine", "user_id=alice")
    save(viewer_client, "mine", "user_id=bob")
    save(viewer_client, "mine", "user_id=bob", listing="threads")

    assert sorted(SavedView.objects.values_list("listing", "query")) == [
        ("memories", "user_id=bob"),
        ("threads", "user_id=bob"),
    ]
    assert "mine" in viewer_client.get(THREADS).content.decode()


@pytest.mark.parametrize(
    ("name", "query", "listing", "message"),
    [
        ("  ", "user_id=alice", "memories", "Give the view a name."),
        ("all", "cursor=abc", "memories", "Choose some filters first"),
        ("x", "user_id=alice", "graphs", "Select a valid choice"),
        ("y" * 81, "user_id=alice", "memories", "at most 80 characters"),
    ],
)
def test_a_view_that_cannot_be_saved_says_why_and_saves_nothing(viewer_client, name, query, listing, message):
    response = viewer_client.post(SAVE, {"name": name, "listing": listing, "query": query}, follow=True)

    assert response.status_code == 200
    assert message in response.content.decode()
    assert not SavedView.objects.exists()


def test_views_are_each_persons_own(viewer, curator):
    viewer_client, curator_client = Client(), Client()
    viewer_client.force_login(viewer)
    curator_client.force_login(curator)
    other = SavedView.objects.create(user=curator, listing="memories", name="curator's", query="user_id=bob")

    assert "curator&#x27;s" not in viewer_client.get(MEMORIES).content.decode()
    assert viewer_client.post(reverse("memory:saved_view_delete", args=[other.pk])).status_code == 404
    assert SavedView.objects.filter(pk=other.pk).exists()

    response = curator_client.post(reverse("memory:saved_view_delete", args=[other.pk]), {"next": MEMORIES})
    assert response.status_code == 302 and not SavedView.objects.exists()
