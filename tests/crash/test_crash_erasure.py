"""Erasing a demo user, as an operator would (`manage.py oam_erase` over the demo of `seed_demo`),
then reading every byte the deployment keeps: the store file, its WAL and index folder, Django's
database file (and its WAL), and `sqlite3 .dump` of both. None may hold the text of the person's
records or of their history entries; the receipt lists the counts. And the same after a kill -9
in the middle of the erasure and a re-run of the command, which finishes it."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.crash.conftest import child_env, kill_when_paused, manage, rows

PERSON = "dana"
"""A demo user with records, threads, agent calls and a reviewer's edit in the history."""


@pytest.fixture(scope="session")
def demo_site(tmp_path_factory) -> Path:
    """The demo, seeded once: a store and Django's database that each test copies."""
    folder = tmp_path_factory.mktemp("demo")
    env = child_env(folder)
    for command in (["migrate", "--no-input"], ["seed_demo"]):
        done = manage(env, *command)
        assert done.returncode == 0, done.stderr
    return folder


def copy_site(source: Path, target: Path) -> None:
    for entry in source.iterdir():
        if entry.is_dir():
            shutil.copytree(entry, target / entry.name)
        else:
            shutil.copy(entry, target / entry.name)


def their_texts(site: Path) -> list[str]:
    """The person's record texts and the content their history entries hold, before the erasure."""
    with sqlite3.connect(site / "memory.sqlite3") as store:
        texts = [
            row[0]
            for row in store.execute(
                "SELECT content FROM OAM_RECORDS WHERE (user_id = ? OR thread_id IN "
                "(SELECT id FROM OAM_THREADS WHERE user_id = ?)) AND length(content) > 12",
                (PERSON, PERSON),
            )
        ]
    history = rows(
        site / "django.sqlite3",
        f"SELECT e.before, e.after FROM memory_curationentry e JOIN memory_historyowner o ON o.entry_id = e.id "
        f"WHERE o.owner_id = '{PERSON}'",
    )
    for values in history:
        for value in values:
            content = (json.loads(value) or {}).get("content") if value else None
            if isinstance(content, str):
                texts.append(content)
    assert len(texts) > 20 and history, "the demo person should have records and history"
    return texts


def every_byte(site: Path) -> tuple[bytes, str]:
    store, django = site / "memory.sqlite3", site / "django.sqlite3"
    files = [store, Path(f"{store}-wal"), django, Path(f"{django}-wal"), *Path(f"{store}.oam-index").rglob("*")]
    data = b"".join(path.read_bytes() for path in files if path.is_file())
    dumped = "".join(
        subprocess.run(["sqlite3", str(path), ".dump"], capture_output=True, text=True, check=True).stdout
        for path in (store, django)
    )
    return data, dumped


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="needs the sqlite3 command-line shell")
@pytest.mark.parametrize("crash_at", [None, "store", "scrub"])
def test_nothing_of_an_erased_demo_user_is_left_in_any_file(tmp_path, demo_site, crash_at):
    copy_site(demo_site, tmp_path)
    texts = their_texts(tmp_path)
    data, dumped = every_byte(tmp_path)
    assert all(text.encode() in data for text in texts)  # the search finds them before
    env = child_env(tmp_path, OAM_CRASH_AT=f"{crash_at}:0")
    if crash_at:
        kill_when_paused(["erase", PERSON], env)
        assert rows(tmp_path / "django.sqlite3", "SELECT status FROM memory_erasurereceipt") == [("started",)]
    erased = manage(env, "oam_erase", "--user-id", PERSON, "--no-input")
    assert erased.returncode == 0, erased.stderr

    data, dumped = every_byte(tmp_path)
    left = [text for text in texts if text.encode() in data or text in dumped]
    assert left == []
    [(status, counts)] = rows(tmp_path / "django.sqlite3", "SELECT status, counts FROM memory_erasurereceipt")
    counts = json.loads(counts)
    assert status == "done"
    assert counts["memories"] > 0 and counts["messages"] > 0 and counts["threads"] > 0
    assert counts["history_entries"] >= 1 and counts["activity_events"] > 0
    tombstones = rows(tmp_path / "django.sqlite3", "SELECT before, after FROM memory_curationentry WHERE erased")
    assert tombstones and all(row == (None, None) for row in tombstones)
    again = manage(env, "oam_erase", "--user-id", PERSON, "--no-input")
    assert again.returncode != 0 and "no user" in again.stderr  # nothing left to erase
