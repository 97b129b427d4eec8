"""Settings read from the environment."""

from __future__ import annotations

import os

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
