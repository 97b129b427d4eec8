"""kill -9 during an import, by `manage.py oam_import` and by the dashboard's background job: the
store holds whole batches only, and running the import again ends with the same export as an
uninterrupted import; the job's history agrees with the store."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from memory.engine import AgentMemory, SQLiteMemoryStore, write_export
from tests.crash.child import BATCH
from tests.crash.conftest import CHILD, TIMEOUT, child_env, kill_when_paused, manage, rows


def source_export(tmp_path) -> str:
    """An export of 2 threads with messages, memories and links (47 lines after the header)."""
    memory = AgentMemory(SQLiteMemoryStore(str(tmp_path / "source.sqlite3"), schema_policy="create_if_necessary"))
    for t in range(2):
        thread = memory.create_thread(thread_id=f"t{t}", user_id="u", agent_id="a")
        thread.add_messages([{"role": "user", "content": f"message {t}-{i}"} for i in range(12)])
    ids = [memory.add_memory(f"fact {n}", user_id="u", memory_id=f"f{n:02d}") for n in range(15)]
    for n in range(0, 14, 2):
        memory.link_records(ids[n], "memory", ids[n + 1], "memory", "related_to")
    out = io.StringIO()
    write_export(memory, out)
    memory.close()
    return out.getvalue()


def ids(lines: list[str]) -> set[str]:
    """The ids of an export's objects (one per line after the header)."""
    return {next(iter(json.loads(line).values()))["id"] for line in lines}


def export_of(path: str) -> str:
    memory = AgentMemory(SQLiteMemoryStore(path))
    try:
        assert not [finding for finding in memory.check().findings if finding.found]
        out = io.StringIO()
        write_export(memory, out)
        return out.getvalue()
    finally:
        memory.close()


@pytest.mark.parametrize(("point", "batch"), [("inside", 0), ("inside", 2), ("after", 1)])
def test_oam_import_killed_resumes_to_the_same_export(tmp_path, django_db_file, point, batch):
    expected = source_export(tmp_path)
    file = tmp_path / "export.jsonl"
    file.write_text(expected)
    store = str(tmp_path / "memory.sqlite3")
    AgentMemory(SQLiteMemoryStore(store, schema_policy="create_if_necessary")).close()
    env = child_env(tmp_path, OAM_CRASH_AT=f"{point}:{batch}")

    kill_when_paused(["import-command", str(file)], env)

    partial = export_of(store).splitlines()[1:]
    assert len(partial) == (batch + (point == "after")) * BATCH  # whole batches
    assert ids(partial) <= ids(expected.splitlines()[1:])  # a partial thread's activity time differs, not its id
    resumed = manage(env, "oam_import", str(file), "--no-progress", "--batch-size", str(BATCH))
    assert resumed.returncode == 0, resumed.stderr
    assert export_of(store) == expected


@pytest.mark.parametrize(("point", "batch"), [("changed", 2), ("pending", 0), ("committed", 3)])
def test_dashboard_import_killed_resumes_with_history_in_step(tmp_path, django_db_file, point, batch):
    expected = source_export(tmp_path)
    file = tmp_path / "export.jsonl"
    file.write_text(expected)
    store = str(tmp_path / "memory.sqlite3")
    AgentMemory(SQLiteMemoryStore(store, schema_policy="create_if_necessary")).close()
    env = child_env(
        tmp_path, OAM_CRASH_AT=f"{point}:{batch}", OAM_IMPORT_BATCH_SIZE=str(BATCH), OAM_IMPORT_INLINE="true"
    )

    kill_when_paused(["import-job", str(file)], env)
    checked = manage(env, "oam_check", "--pending-after", "0")  # the restart
    assert checked.returncode == 0, checked.stdout + checked.stderr
    recorded = {object_id for (object_id,) in rows(django_db_file, "SELECT object_id FROM memory_curationentry")}
    partial = export_of(store).splitlines()[1:]
    committed = batch + (point == "committed")
    assert len(partial) == committed * BATCH
    objects = [json.loads(line) for line in partial]
    present = {next(iter(line.values()))["id"] for line in objects}
    required = {line["thread"]["id"] for line in objects if "thread" in line}
    required |= {line["record"]["id"] for line in objects if "record" in line and not line["record"].get("thread_id")}
    assert recorded <= present  # no entry for a change the store lacks
    assert required <= recorded  # no change in the store without its entry

    resumed = subprocess.run(
        [sys.executable, str(CHILD), "resume-job"],
        env=dict(env, OAM_IMPORT_INLINE="true"),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert export_of(store) == expected
    assert rows(django_db_file, "SELECT status FROM memory_importjob") == [("done",)]
