"""The process-wide AgentMemory of memory.services."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from memory import services


def test_every_caller_shares_one_agent_memory():
    with ThreadPoolExecutor(max_workers=8) as pool:
        built = list(pool.map(lambda _: services.get_agent_memory(), range(32)))

    assert all(agent_memory is built[0] for agent_memory in built)


def test_reset_rebuilds_it_from_the_current_settings(settings, tmp_path):
    services.get_agent_memory().create_thread(thread_id="in-the-first-store", user_id="u1")

    settings.OAM_STORE_URL = f"sqlite://{tmp_path / 'other.sqlite3'}"
    services.reset_agent_memory()

    assert list(services.get_agent_memory().list_threads()) == []
