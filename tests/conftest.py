"""Django-side fixtures shared by the web and API tests.

Every test gets its own empty memory store in tmp_path (autouse), so no test can read or write the
developer's store in var/. Personas follow one cast: Vera the viewer, Carl the curator.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from memory import services
from memory.engine import AgentMemory
from tests.engine.helpers import FakeMemoryLlm, fake_memory_llm


@pytest.fixture(autouse=True)
def memory_store_url(tmp_path, settings) -> Iterator[str]:
    """Point the service at a fresh SQLite store for this test, and drop it afterwards."""
    url = f"sqlite://{tmp_path / 'memory.sqlite3'}"
    settings.OAM_STORE_URL = url
    settings.OAM_EMBEDDER = "hashing"
    settings.OAM_LLM_BASE_URL = ""  # tests that want an LLM point it at a local fake
    services.reset_agent_memory()
    yield url
    services.reset_agent_memory()


@pytest.fixture
def agent_memory(memory_store_url) -> AgentMemory:
    """The AgentMemory the views use, over this test's empty store."""
    return services.get_agent_memory()


@pytest.fixture
def fake_llm(settings) -> Iterator[FakeMemoryLlm]:
    """The app's LLM played by a local fake server (tests.engine.helpers.FakeMemoryLlm). It rebuilds
    the app's AgentMemory: list it before `agent_memory` in a test's arguments, so that one has the LLM."""
    with fake_memory_llm() as fake:
        settings.OAM_LLM_BASE_URL = fake.url
        settings.OAM_LLM_MODEL = "test-model"
        settings.OAM_LLM_API_KEY = "sk-test-secret"
        services.reset_agent_memory()
        yield fake
        services.reset_agent_memory()


def make_user(username: str, group: str) -> User:
    user = User.objects.create_user(username=username, password=f"{username}-password")
    user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def viewer(db) -> User:
    return make_user("vera", "viewers")


@pytest.fixture
def curator(db) -> User:
    return make_user("carl", "curators")


@pytest.fixture
def viewer_client(client: Client, viewer: User) -> Client:
    client.force_login(viewer)
    return client


@pytest.fixture
def curator_client(client: Client, curator: User) -> Client:
    client.force_login(curator)
    return client


# What `make test-quick` leaves out (beside the browser tests): suites that start processes
# (gunicorn, killed children, a second Python) or run long corpora. `make test` runs them all.
SLOW = (
    "crash/",
    "hostile/",
    "api/test_schemathesis.py",
    "engine/test_contract_two_process.py",
    "web/test_many_processes.py",
    "web/test_loadtest.py",
    "web/test_deploy.py",
)
TESTS = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        where = item.path.relative_to(TESTS).as_posix()
        if where.startswith(SLOW):
            item.add_marker(pytest.mark.slow)


def pytest_terminal_summary(terminalreporter) -> None:
    """Skipped tests, one line per reason (the Oracle run alone skips a test per backend case)."""
    reasons = Counter(
        report.longrepr[2].removeprefix("Skipped: ")
        for report in terminalreporter.stats.get("skipped", [])
        if isinstance(report.longrepr, tuple)
    )
    if reasons:
        terminalreporter.section("skipped tests, by reason")
        for reason, count in reasons.most_common():
            terminalreporter.write_line(f"{count} skipped: {reason}")
