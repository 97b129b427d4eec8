"""Settings read from the environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from oam_site import settings as site_settings


@pytest.mark.parametrize(
    ("value", "expected"), [("1", True), ("TRUE", True), (" on ", True), ("0", False), ("no", False)]
)
def test_env_bool_reads_the_usual_spellings(monkeypatch, value, expected):
    monkeypatch.setenv("OAM_TEST_FLAG", value)

    assert site_settings.env_bool("OAM_TEST_FLAG", default=not expected) is expected


def test_env_bool_rejects_anything_else(monkeypatch):
    monkeypatch.setenv("OAM_TEST_FLAG", "maybe")

    with pytest.raises(ImproperlyConfigured, match="OAM_TEST_FLAG"):
        site_settings.env_bool("OAM_TEST_FLAG", default=True)


def test_env_list_splits_on_commas(monkeypatch):
    monkeypatch.setenv("OAM_TEST_HOSTS", " example.org, ,localhost ")

    assert site_settings.env_list("OAM_TEST_HOSTS", []) == ["example.org", "localhost"]


@pytest.mark.skipif("OAM_STORE_URL" in os.environ, reason="OAM_STORE_URL is set in this environment")
def test_the_default_store_is_the_sqlite_file_in_var():
    # connect() reads "sqlite://" followed by an absolute path.
    url = site_settings.OAM_STORE_URL
    assert url == f"sqlite://{site_settings.VAR_DIR / 'memory.sqlite3'}"


REPO = Path(__file__).resolve().parents[2]


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("command", ["oam_check", "oam_export", "migrate"])
def test_a_bad_embedder_setting_stops_every_command_with_one_clean_line(command):
    result = manage(command, "--help" if command == "migrate" else "--no-progress", OAM_EMBEDDER="sentence-t5")

    assert result.returncode == 1
    assert result.stderr.startswith("Error: the settings are wrong: Invalid OAM_EMBEDDER value 'sentence-t5'")
    assert 'accepted forms: "" or "hashing"' in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_a_bad_embedder_setting_stops_the_site_at_startup():
    result = subprocess.run(
        [sys.executable, "-c", "import oam_site.wsgi"],
        cwd=REPO,
        env={**os.environ, "OAM_EMBEDDER": "hashing:4"},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode != 0
    assert "ImproperlyConfigured: Invalid OAM_EMBEDDER value 'hashing:4': HashingEmbedder dim must be" in result.stderr


def test_the_embedders_name_is_accepted_as_the_setting():
    result = manage(
        "shell", "-c", "from django.conf import settings; print(settings.OAM_EMBEDDER)", OAM_EMBEDDER="hashing-256"
    )

    assert (result.returncode, result.stdout.splitlines()[-1], result.stderr) == (0, "hashing-256", "")
