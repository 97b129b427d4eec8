"""An import in a real browser: upload an export, watch its progress bar move (htmx polling, the
import in a background thread of the live server), and see it done with its counts."""

from __future__ import annotations

import threading
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect

from memory import services
from memory.curation import imports
from memory.models import ImportJob, ImportStatus
from tests.browser.support import open_from_the_account_menu

BATCH = 25


@pytest.fixture
def demo_export(tmp_path, settings) -> Path:
    """The demo store's export; the live server then serves a fresh, empty store."""
    call_command("seed_demo", "--seed=1", "--end-date=2026-11-20", stdout=StringIO())
    path = tmp_path / "demo.jsonl"
    call_command("oam_export", "--output", str(path), "--no-progress", stdout=StringIO(), stderr=StringIO())
    settings.OAM_STORE_URL = f"sqlite://{tmp_path / 'fresh.sqlite3'}"
    settings.OAM_IMPORT_DIR = tmp_path / "imports"
    settings.OAM_IMPORT_BATCH_SIZE = BATCH
    services.reset_agent_memory()
    return path


@pytest.fixture
def held_after_the_first_batch(monkeypatch) -> threading.Event:
    """The import stops after its first batch until the test sets the event: the page is seen
    mid-way without relying on timing."""
    go_on = threading.Event()
    restore = imports._ImportRecorder.restore
    calls = []

    def held(self, snapshot, **options):
        if calls:
            go_on.wait(timeout=60)
        calls.append(1)
        return restore(self, snapshot, **options)

    monkeypatch.setattr(imports._ImportRecorder, "restore", held)
    return go_on


def test_an_upload_shows_its_progress_and_ends_done(logged_in_page: Page, demo_export, held_after_the_first_batch):
    page = logged_in_page
    lines = len(demo_export.read_text(encoding="utf-8").splitlines()) - 1
    open_from_the_account_menu(page, "Export and import")
    page.get_by_label("Export file").set_input_files(str(demo_export))
    page.get_by_role("button", name="Upload and import").click()

    expect(page.get_by_role("heading", name="Import of demo.jsonl")).to_be_visible()
    bar = page.locator("#import-bar")
    expect(bar).to_be_visible()
    expect(page.locator("#import-count")).to_have_text(f"{BATCH} of {lines} lines read so far.")
    expect(bar).to_have_attribute("value", str(BATCH))
    expect(bar).to_have_attribute("max", str(lines))
    page.evaluate("window.notReloaded = true")  # the updates come in place, by htmx

    held_after_the_first_batch.set()

    expect(page.locator("#import-progress")).to_have_attribute("data-status", "done", timeout=30_000)
    expect(bar).to_have_attribute("value", str(lines))
    expect(page.locator("#import-percent")).to_have_text("100%")
    expect(page.get_by_text("Done: imported 12 threads,")).to_be_visible()
    assert page.evaluate("window.notReloaded") is True
    job = ImportJob.objects.get()
    assert (job.status, job.done, job.total) == (ImportStatus.DONE, lines, lines)
    assert services.get_agent_memory().stats().threads == 12
