"""The overview's consistency panel: the latest check (from manage.py oam_check or the panel's
buttons) is kept as a CheckRun and shown, OK or with its problems; curators run it or repair."""

from __future__ import annotations

import sqlite3
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from memory.models import CheckRun

from .world import build_world

OVERVIEW = reverse("memory:overview")
RUN = reverse("memory:check_run")
pytestmark = pytest.mark.django_db


def drop_a_vector(url: str, record_id: str) -> None:
    raw = sqlite3.connect(url.removeprefix("sqlite://"))
    raw.execute("UPDATE OAM_RECORDS SET embedding = NULL WHERE id = ?", (record_id,))
    raw.commit()
    raw.close()


def test_before_any_check_the_panel_says_how_to_run_one(viewer_client, curator_client, viewer):
    page = curator_client.get(OVERVIEW).content.decode()
    assert "Not checked yet." in page and "Run the check now" in page

    curator_client.force_login(viewer)
    page = curator_client.get(OVERVIEW).content.decode()
    assert "Not checked yet." in page and "manage.py oam_check" in page
    assert "Run the check now" not in page


def test_a_curator_runs_the_check_and_the_overview_shows_it_ok(curator_client, curator, agent_memory):
    build_world(agent_memory)

    response = curator_client.post(RUN, follow=True)

    run = CheckRun.objects.get()
    assert (run.ok, run.repaired, run.actor, run.via) == (True, False, curator, "dashboard")
    assert {finding["name"] for finding in run.findings} >= {
        "missing_vectors",
        "orphan_links",
        "deleted_still_searchable",
    }
    html = response.content.decode()
    assert "The memory store is consistent" in html
    assert "No problem found" in html and "checked" in html and "by carl" in html
    assert "Repair what is safe" not in html


def test_problems_are_shown_with_counts_examples_and_how_to_repair(curator_client, agent_memory, memory_store_url):
    world = build_world(agent_memory)
    drop_a_vector(memory_store_url, world.fact_id)

    html = curator_client.post(RUN, follow=True).content.decode()

    assert "The check found 1 problem" in html
    panel = html[html.index('id="check-heading"') :]
    assert "problems</span>" in panel
    assert '<code class="small">missing_vectors</code>' in panel
    assert world.fact_id in panel
    assert "safe to repair" in panel and "manage.py oam_check --repair" in panel

    html = curator_client.post(RUN, {"repair": "1"}, follow=True).content.decode()

    latest = CheckRun.objects.first()
    assert latest.repaired and latest.ok
    assert "consistent after repairing 1" in html
    assert "repaired and checked" in html


def test_viewers_cannot_run_or_repair(viewer_client):
    assert viewer_client.post(RUN).status_code == 403
    assert viewer_client.post(RUN, {"repair": "1"}).status_code == 403
    assert viewer_client.get(RUN).status_code == 403
    assert not CheckRun.objects.exists()


def test_the_command_keeps_its_result_for_the_panel(viewer_client, agent_memory, memory_store_url):
    world = build_world(agent_memory)
    drop_a_vector(memory_store_url, world.fact_id)

    with pytest.raises(CommandError):
        call_command("oam_check", stdout=StringIO())

    run = CheckRun.objects.get()
    assert (run.ok, run.via, run.actor, run.actor_name) == (False, "command", None, "manage.py oam_check")
    [problem] = run.problems
    assert (problem["name"], problem["found"], problem["examples"]) == ("missing_vectors", 1, [world.fact_id])
    html = viewer_client.get(OVERVIEW).content.decode()
    assert "by manage.py oam_check" in html and "manage.py oam_check --repair" in html
