"""The navigation's Review badge (issue 29): the items waiting for a curator, on every page, from
counting queries kept a few seconds per process; never a failed page when the store errors."""

from __future__ import annotations

import logging
import re

import pytest
from django.urls import reverse

from memory.queries import review

from .test_review import queues  # noqa: F401 (the review queues' world, a fixture)
from .test_review_counts import LISTINGS, calls  # noqa: F401 (the engine calls' spy, a fixture)

THREADS = reverse("memory:thread_list")


@pytest.fixture(autouse=True)
def fresh_counts(monkeypatch):
    """Each test counts from scratch (the kept counts are per process and store)."""
    monkeypatch.setattr(review, "_pending", type(review._pending)())


def badge(html: str) -> re.Match | None:
    return re.search(r'<span class="badge[^"]*" title="([^"]*)" data-review-pending="(\d+)">', html)


def test_every_page_shows_how_many_items_wait_in_the_queues(viewer_client, queues):  # noqa: F811
    for url in (THREADS, reverse("memory:overview"), reverse("memory:history"), reverse("memory:review")):
        found = badge(viewer_client.get(url).content.decode())

        assert found, url
        assert found.group(2) == "6"  # 2 LLM retirements, 1 expiring, 2 expired, 1 contradiction
        assert found.group(1) == (
            "6 items waiting for review (Retired by the LLM: 2 · Expiring soon: 1 · "
            "Expired, awaiting purge: 2 · Contradictions: 1)"
        )


def test_the_badge_counts_without_listing_and_keeps_its_counts_a_few_seconds(viewer_client, queues, calls):  # noqa: F811
    viewer_client.get(THREADS)
    first = [(name, kwargs) for name, kwargs in calls if name.startswith("count_")]
    calls.clear()
    viewer_client.get(reverse("memory:memory_list"))

    assert {name for name, _ in first} == {"count_relations", "count_memories", "count_expired", "count_findings"}
    assert not [name for name, kwargs in calls if name.startswith("count_")]  # kept
    assert not [name for name, kwargs in calls if name in LISTINGS and kwargs.get("limit") is None]


def test_a_decision_shows_once_the_kept_counts_are_stale(curator_client, queues, monkeypatch):  # noqa: F811
    assert badge(curator_client.get(THREADS).content.decode()).group(2) == "6"
    curator_client.post(reverse("memory:review_dismiss", args=["rel-contra"]))

    assert badge(curator_client.get(THREADS).content.decode()).group(2) == "6"  # kept a few seconds
    monkeypatch.setattr(review, "PENDING_SECONDS", 0)
    assert badge(curator_client.get(THREADS).content.decode()).group(2) == "5"


def test_a_fragment_that_htmx_swaps_in_counts_nothing(viewer_client, queues, calls):  # noqa: F811
    response = viewer_client.get(THREADS, headers={"HX-Request": "true"})

    assert response.status_code == 200
    assert not [name for name, _ in calls if name.startswith("count_")]


def test_nothing_waiting_no_badge(viewer_client, agent_memory):
    html = viewer_client.get(THREADS).content.decode()

    assert badge(html) is None and "data-review-pending" not in html


def test_a_store_that_cannot_count_leaves_the_badge_out_not_the_page(viewer_client, queues, monkeypatch, caplog):  # noqa: F811
    def broken(agent_memory):
        raise RuntimeError("database disk image is malformed")

    monkeypatch.setattr("memory.views.navigation.pending", broken)

    with caplog.at_level(logging.WARNING, logger="memory.views.navigation"):
        response = viewer_client.get(THREADS)

    assert response.status_code == 200
    assert badge(response.content.decode()) is None
    assert "could not be counted" in caplog.text and "malformed" in caplog.text


def test_anonymous_visitors_count_nothing(client, queues, calls):  # noqa: F811
    client.get(reverse("login"))

    assert not [name for name, _ in calls if name.startswith("count_")]
