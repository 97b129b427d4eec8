"""The overview: counts from one engine call, the store's facts, the chart, the latest changes."""

from __future__ import annotations

from datetime import date

import pytest
from django.core.management import call_command
from django.urls import reverse

from memory.curation import Actor, Curation
from memory.views.overview import activity_chart

from .world import build_world

OVERVIEW = reverse("memory:overview")


def test_the_overview_counts_everything_in_the_store(viewer_client, agent_memory):
    build_world(agent_memory)

    response = viewer_client.get(OVERVIEW)

    stats = response.context["stats"]
    assert (stats.threads, stats.messages, stats.memories, stats.images) == (1, 3, 2, 2)
    assert (stats.users, stats.agents) == (1, 1)
    html = response.content.decode()
    assert "<code>supersedes</code>" in html
    assert "sqlite store" in html
    assert "hashing-384" in html
    assert "schema v" in html
    rows = dict(response.context["memory_rows"])
    assert rows["fact"] == {"valid": 1, "invalid": 1, "expired": 0}


def test_the_overview_of_the_demo_store_has_a_chart_and_links_to_filtered_lists(viewer_client, agent_memory):
    call_command("seed_demo", "--seed=1")

    html = viewer_client.get(OVERVIEW).content.decode()

    assert "<svg" in html and "oam-chart-messages" in html
    assert "?memory_type=fact&amp;status=invalid" in html


def test_an_empty_store_has_no_chart_but_says_how_to_fill_it(viewer_client):
    html = viewer_client.get(OVERVIEW).content.decode()

    assert "<svg" not in html
    assert "seed_demo" in html


def test_the_latest_curation_changes_are_listed(viewer_client, agent_memory, curator):
    build_world(agent_memory)
    Curation(agent_memory, Actor(curator)).delete_memory("fact-old")

    html = viewer_client.get(OVERVIEW).content.decode()

    assert "Deleted the fact" in html


@pytest.mark.parametrize("days", [7, 60])
def test_the_chart_has_one_bar_a_day_scaled_to_the_peak(days):
    chart = activity_chart(
        [("2026-01-10", "message", 10), ("2026-01-10", "memory", 5), ("2026-01-12", "memory", 3)],
        today=date(2026, 1, 12),
        days=days,
    )

    assert len(chart.bars) == days
    assert chart.peak == 15
    peak_bar = next(bar for bar in chart.bars if bar.day == date(2026, 1, 10))
    assert peak_bar.messages_height + peak_bar.memories_height == pytest.approx(chart.height)
    assert chart.last == date(2026, 1, 12)


def test_an_old_store_charts_its_last_active_days():
    chart = activity_chart([("2020-05-01", "message", 2)], today=date(2026, 1, 1))

    assert chart.last == date(2020, 5, 1)
