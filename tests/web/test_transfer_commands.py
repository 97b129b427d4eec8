"""manage.py oam_export and oam_import: the demo store round-trips byte for byte into a fresh
store; scopes; standard output; a file of another version, a damaged line, an interrupted import."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from memory import services
from memory.engine import transfer
from tests.engine.helpers import export_line, padded_export, write_long_line_export

SEED_ARGS = ("--seed=1", "--end-date=2026-11-20")


def export(*args: str) -> str:
    out, err = StringIO(), StringIO()
    call_command("oam_export", *args, "--no-progress", stdout=out, stderr=err)
    assert err.getvalue().startswith("Exported ")
    return out.getvalue()


def import_file(path: Path, *args: str) -> str:
    out = StringIO()
    call_command("oam_import", str(path), *args, "--no-progress", stdout=out, stderr=StringIO())
    return out.getvalue()


def use_store(settings, path: Path) -> None:
    settings.OAM_STORE_URL = f"sqlite://{path}"
    services.reset_agent_memory()


@pytest.fixture
def demo_export(tmp_path, db) -> Path:  # seed_demo writes the reviewers' changes in Django's history
    call_command("seed_demo", *SEED_ARGS, stdout=StringIO())
    path = tmp_path / "demo.jsonl"
    call_command("oam_export", "--output", str(path), "--no-progress", stdout=StringIO(), stderr=StringIO())
    return path


def test_the_demo_store_round_trips(demo_export, tmp_path, settings):
    exported = demo_export.read_text(encoding="utf-8")
    header = json.loads(exported.split("\n", 1)[0])
    assert header["format"] == "oam-export" and header["version"] == transfer.FORMAT_VERSION
    assert header["counts"]["records"] > 100 and header["counts"]["relations"] > 0
    assert export() == exported  # standard output gives the same file

    use_store(settings, tmp_path / "fresh.sqlite3")
    summary = import_file(demo_export)
    counts = header["counts"]
    assert (
        f"Imported {counts['threads']} threads, {counts['records']} records and {counts['relations']} links" in summary
    )
    assert "Nothing was skipped." in summary
    assert " lines in 1 batch." in summary  # one batch: not "1 batches"
    assert export() == exported


def test_a_scope_round_trips(demo_export, tmp_path, settings):
    threads = [json.loads(line)["thread"] for line in demo_export.read_text().splitlines()[1:3]]
    user_id = threads[0]["user_id"]
    scoped = export("--user-id", user_id)
    assert json.loads(scoped.split("\n", 1)[0])["scope"] == {"user_id": user_id}
    path = tmp_path / "user.jsonl"
    path.write_text(scoped, encoding="utf-8")
    use_store(settings, tmp_path / "fresh.sqlite3")
    import_file(path)
    assert export("--user-id", user_id) == scoped
    assert export() == scoped.replace(f'"scope":{{"user_id":"{user_id}"}}', '"scope":{}', 1)


def test_an_interrupted_import_resumes(demo_export, tmp_path, settings, monkeypatch):
    exported = demo_export.read_text(encoding="utf-8")
    use_store(settings, tmp_path / "fresh.sqlite3")
    restore = type(services.get_agent_memory().store).restore
    calls = []

    def interrupted(self, snapshot, **options):
        calls.append(1)
        if len(calls) == 3:
            raise ValueError("the connection was lost")
        return restore(self, snapshot, **options)

    monkeypatch.setattr(type(services.get_agent_memory().store), "restore", interrupted)
    with pytest.raises(CommandError, match=r"lines 202-301: the connection was lost\n.*run the command again"):
        import_file(demo_export, "--batch-size", "100")
    monkeypatch.undo()
    summary = import_file(demo_export, "--batch-size", "100")
    assert "Imported 0 threads, " in summary
    assert "Skipped 12 threads: already in the store (imported before, or an earlier run of this import)." in summary
    assert "Skipped 188 records: already in the store" in summary  # the two batches before the failed one
    assert export() == exported


def test_another_version_is_refused(demo_export, tmp_path, settings):
    header, rest = demo_export.read_text(encoding="utf-8").split("\n", 1)
    path = tmp_path / "v2.jsonl"
    path.write_text(header.replace('"version":1', '"version":2') + "\n" + rest, encoding="utf-8")
    use_store(settings, tmp_path / "fresh.sqlite3")
    with pytest.raises(CommandError, match=r"v2.jsonl: line 1: the file is oam-export version 2; .*reads version 1"):
        import_file(path)
    assert services.get_agent_memory().stats().threads == 0


def test_a_damaged_line_is_named_and_nothing_is_written(demo_export, tmp_path, settings):
    lines = demo_export.read_text(encoding="utf-8").split("\n")
    lines[-5] = lines[-5][:30]
    path = tmp_path / "damaged.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    use_store(settings, tmp_path / "fresh.sqlite3")
    with pytest.raises(CommandError, match=rf"damaged.jsonl: line {len(lines) - 4}: not a JSON object"):
        import_file(path)
    assert services.get_agent_memory().stats().threads == 0


def test_a_bad_line_past_the_first_batch_is_named_and_nothing_is_written(tmp_path, settings):
    """Issue 25, item 3: line 1,052 of 1,100 holds a 600-byte id; a batch is 1,000 lines. The
    command names the line and writes nothing, however often it is run."""
    use_store(settings, tmp_path / "source.sqlite3")
    agent_memory = services.get_agent_memory()
    agent_memory.create_thread(thread_id="t", user_id="u")
    agent_memory.add_memory("a fact", memory_type="fact", thread_id="t", user_id="u", memory_id="f")
    lines = padded_export(export(), 1100)
    lines[1051] = export_line({"record": dict(json.loads(lines[1051])["record"], id="x" * 600)})
    path = tmp_path / "long-id.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    use_store(settings, tmp_path / "fresh.sqlite3")

    for _ in range(2):
        with pytest.raises(CommandError, match=r"/long-id.jsonl: line 1052: record\.id is 600 bytes in UTF-8; the"):
            import_file(path, "--batch-size", "1000")
        assert services.get_agent_memory().stats().threads == 0


def test_a_line_over_the_limit_is_named_and_nothing_is_written(tmp_path, settings):
    """Issue 25, item 5: a line longer than any record, refused without being read whole."""
    path = tmp_path / "long.jsonl"
    write_long_line_export(path, transfer.MAX_LINE_BYTES + 1)
    use_store(settings, tmp_path / "fresh.sqlite3")

    with pytest.raises(CommandError, match=r"/long.jsonl: line 2: the line is longer than 31,029,592 bytes"):
        import_file(path)
    assert not services.get_agent_memory().store.snapshot().records


def test_only_one_scope(demo_export):
    with pytest.raises(CommandError, match="not allowed with argument"):
        export("--user-id", "u", "--agent-id", "a")


def bars(stderr: str) -> list[str]:
    """The distinct progress bars tqdm drew: one per description, each line's last redraw."""
    return [line.rsplit("\r", 1)[-1] for line in stderr.split("\n") if line.strip()]


def test_the_progress_bars_start_with_their_total_and_draw_no_stray_line(demo_export, tmp_path, settings, capsys):
    capsys.readouterr()
    call_command("oam_export", "--output", str(tmp_path / "again.jsonl"), stdout=StringIO(), stderr=StringIO())
    use_store(settings, tmp_path / "fresh.sqlite3")
    out = StringIO()
    call_command("oam_import", str(demo_export), stdout=out, stderr=StringIO())
    call_command("oam_reembed", "--embedder", "hashing:64", stdout=StringIO())
    stderr = capsys.readouterr().err

    # A bar drawn before its total was known would print "import: 0 lines [00:00, ? lines/s]".
    assert " lines [" not in stderr and " records [" not in stderr
    drawn = bars(stderr)
    assert [line.split(":", 1)[0] for line in drawn] == ["export", "import", "re-embed"], drawn
    assert all("100%" in line for line in drawn), drawn
    lines = len(demo_export.read_text(encoding="utf-8").splitlines()) - 1
    assert f"from {lines} lines in 1 batch." in out.getvalue()  # one batch, not "1 batches"
