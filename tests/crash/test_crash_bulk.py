"""kill -9 during a bulk action (Curation.bulk_update_memories, through Django) at each point of a
batch's two-phase recording; after a restart's `oam_check`, the store and the curation history
agree: every memory changed has exactly one confirmed entry, every entry's change is in the store,
no batch is partial, nothing is left pending."""

from __future__ import annotations

import json

import pytest

from memory.engine import AgentMemory, SQLiteMemoryStore
from tests.crash.child import BATCH
from tests.crash.conftest import child_env, kill_when_paused, manage, rows

MEMORIES = 35


@pytest.mark.parametrize(
    ("point", "batch"),
    [("changed", 0), ("changed", 2), ("pending", 1), ("committed", 0), ("committed", 2), ("confirmed", 1)],
)
def test_bulk_action_killed_leaves_history_and_store_in_step(tmp_path, django_db_file, point, batch):
    path = str(tmp_path / "memory.sqlite3")
    seeded = AgentMemory(SQLiteMemoryStore(path, schema_policy="create_if_necessary"))
    for n in range(MEMORIES):
        seeded.add_memory(f"fact number {n}", user_id="u", memory_id=f"mem-{n:02d}")
    seeded.close()
    env = child_env(tmp_path, OAM_CRASH_AT=f"{point}:{batch}")

    kill_when_paused(["bulk"], env)
    checked = manage(env, "oam_check", "--pending-after", "0")  # the restart: settles what was pending

    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "history_pending" in checked.stdout
    assert rows(django_db_file, "SELECT count(*) FROM memory_curationentry WHERE pending <> ''") == [(0,)]
    recorded = [
        (object_id, json.loads(after)["metadata"])
        for object_id, after in rows(
            django_db_file, "SELECT object_id, after FROM memory_curationentry WHERE action = 'update'"
        )
    ]
    memory = AgentMemory(SQLiteMemoryStore(path))
    try:
        changed = {record.id for record in memory.list_memories(limit=None) if (record.metadata or {}).get("reviewed")}
    finally:
        memory.close()
    committed = batch + (point in ("committed", "confirmed"))
    assert len(changed) == committed * BATCH  # whole batches only
    assert sorted(object_id for object_id, _ in recorded) == sorted(changed)  # one entry each, no more
    assert all(metadata == {"reviewed": True} for _, metadata in recorded)
    # The bulk change stays, empty when no batch committed (age cannot tell a dead change from a
    # long one that has recorded nothing yet); the history lists entries, so nothing shows it.
    assert rows(django_db_file, "SELECT count(*) FROM memory_bulkchange") == [(1,)]
