"""kill -9 during a bulk ingest (Thread.add_messages in batches): every batch committed before the
kill is there, whole; none of the batch in flight; the in-memory index, loaded from its saved
snapshot and caught up from the change log on reopen, equals the database."""

from __future__ import annotations

import pytest

from memory.engine import AgentMemory, SQLiteMemoryStore
from tests.crash.child import BATCH, BATCHES
from tests.crash.conftest import child_env, kill_when_paused


@pytest.mark.parametrize(("point", "batch"), [("inside", 0), ("inside", 3), ("after", 1), ("after", 3)])
def test_ingest_killed_keeps_whole_committed_batches(tmp_path, point, batch):
    path = str(tmp_path / "memory.sqlite3")
    seeded = AgentMemory(SQLiteMemoryStore(path, schema_policy="create_if_necessary"))
    seeded.create_thread(thread_id="t-crash", user_id="u", agent_id="a")
    seeded.search("crash", user_id="u")  # the index is built, and saved on close: the child starts from it
    seeded.close()

    kill_when_paused(["ingest", path], child_env(tmp_path, OAM_CRASH_AT=f"{point}:{batch}"))

    committed = batch + (point == "after")
    memory = AgentMemory(SQLiteMemoryStore(path))
    try:
        stored = memory.list_thread_messages("t-crash", limit=None)
        ids = [message.id for message in stored]
        assert len(ids) == len(set(ids))
        assert ids == [f"m-{b}-{i}" for b in range(committed) for i in range(BATCH)]
        assert committed < BATCHES
        report = memory.check()
        assert not [finding for finding in report.findings if finding.found], report
        for message in stored:  # the index finds each stored record, and nothing of the lost batch
            hits = memory.store.search(message.content, k=3, record_types=["message"])
            assert hits[0][0].id == message.id
        lost = memory.store.search(f"token{committed}q0", k=BATCH * BATCHES, record_types=["message"])
        assert {hit.id for hit, _ in lost} <= set(ids)
    finally:
        memory.close()
