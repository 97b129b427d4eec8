"""Crash tests: real child processes (tests/crash/child.py) killed with SIGKILL at a precise point
of their work, then the store (and Django's database) reopened and checked. Bounded: every wait
has a generous timeout, and every child is killed and reaped, even when a test fails."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("child.py")
TIMEOUT = 180


def child_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OAM_", "DJANGO_"))}
    env.update(
        PYTHONPATH=str(ROOT),
        DJANGO_SETTINGS_MODULE="tests.crash.settings",
        OAM_CRASH_DJANGO_DB=str(tmp_path / "django.sqlite3"),
        OAM_STORE_URL=f"sqlite://{tmp_path / 'memory.sqlite3'}",
        OAM_EMBEDDER="hashing",
        OAM_IMPORT_DIR=str(tmp_path / "imports"),
        OAM_CRASH_MARKER=str(tmp_path / "paused"),
    )
    env.update(extra)
    return env


def kill_when_paused(arguments: list[str], env: dict[str, str]) -> None:
    """Run child.py until it says it reached its crash point, then SIGKILL it."""
    marker = Path(env["OAM_CRASH_MARKER"])
    marker.unlink(missing_ok=True)
    log = Path(env["OAM_CRASH_MARKER"] + ".log")
    with log.open("w") as output:
        child = subprocess.Popen([sys.executable, str(CHILD), *arguments], env=env, stdout=output, stderr=output)
    try:
        deadline = time.monotonic() + TIMEOUT
        while not marker.exists():
            assert child.poll() is None, f"the child ended before its crash point:\n{log.read_text()}"
            assert time.monotonic() < deadline, "the child never reached its crash point"
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=TIMEOUT) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=TIMEOUT)


def manage(env: dict[str, str], *arguments: str) -> subprocess.CompletedProcess:
    """A manage.py command in its own process (a restarted server's, an operator's)."""
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *arguments],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


@pytest.fixture(scope="session")
def django_template(tmp_path_factory) -> Path:
    """Django's database, migrated once, with Carl the curator; each test copies it."""
    folder = tmp_path_factory.mktemp("django")
    env = child_env(folder)
    migrated = manage(env, "migrate", "--no-input")
    assert migrated.returncode == 0, migrated.stderr
    made = manage(env, "oam_user", "add", "carl", "--role", "curator", "--password", "carl-password-1")
    assert made.returncode == 0, made.stderr
    return folder / "django.sqlite3"


@pytest.fixture
def django_db_file(tmp_path, django_template) -> Path:
    path = tmp_path / "django.sqlite3"
    shutil.copy(django_template, path)
    return path


def rows(path: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(path) as connection:
        return connection.execute(sql).fetchall()
