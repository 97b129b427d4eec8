"""Curation at scale: export and import of a 100k-record store (oam-export, memory.engine.transfer)
against raw ingest (store.add in batches of 500) in the same run.

The source store gets `--records` memories over 1,000 users through `store.add` (batches of 500,
texts embedded by the store's 384-dimensional hashing embedder, a TTL on every tenth, an
explicit status on every twentieth) and one link per hundred memories; that ingest is the
baseline. Then `write_export` writes the whole store to a file and `import_export` reads it into
a fresh store (batches of 500, one transaction each, the texts embedded again as ingest does),
and a second export of the imported store must give the same bytes. Prints records/s of each and
the ratios to ingest; targets: import >= 0.5x ingest, export >= 1x ingest.

    python bench/curation.py [--records 100000] [--dim 384] [--bulk-only] [--bulk-records 10000]

Bulk status change (`--bulk-only` runs it alone): `--bulk-records` memories of one user, then,
in the same run, the raw engine baseline (AgentMemory.update_memory(status=invalid) on each),
and the curation service's bulk change of the same records back to valid as the dashboard makes
it (memory.bulk.plan, the preview, then Curation.bulk_update_memories: batches of 500, one history
entry each, in a Django database of its own), and the one-step undo (Curation.revert_bulk).
Prints records/s of each and the bulk change's ratio to the raw updates.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory.engine import AgentMemory, HashingEmbedder, RecordStatus, SchemaPolicy, SQLiteMemoryStore
from memory.engine.transfer import import_export, write_export

BATCH = 500
WORDS = ["pizza", "travel", "budget", "gym", "recipe", "python", "deploy", "novel", "invoice", "garden", "flight"]


def open_store(path: Path, dim: int) -> SQLiteMemoryStore:
    return SQLiteMemoryStore(str(path), embedder=HashingEmbedder(dim), schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)


def ingest(store: SQLiteMemoryStore, count: int, users: int = 1000) -> float:
    """Seconds to add `count` memories over `users` users (and, untimed, a link per hundred)."""
    started = time.perf_counter()
    for start in range(0, count, BATCH):
        ids = range(start, min(start + BATCH, count))
        store.add(
            [" ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(10)) + f" note {i}" for i in ids],
            "fact",
            record_ids=[f"m{i}" for i in ids],
            user_ids=[f"user-{i % users}" for i in ids],
            metadata=[{"n": i} for i in ids],
            statuses=[RecordStatus.INVALID if i % 20 == 19 else RecordStatus.VALID for i in ids],
        )
    elapsed = time.perf_counter() - started
    memory = AgentMemory(store)
    for i in range(0, count - 1, 100):
        memory.link_records(f"m{i}", "fact", f"m{i + 1}", "fact", "mentions", relation_id=f"rel{i}")
    return elapsed


def export_to(store: SQLiteMemoryStore, path: Path) -> tuple[float, int]:
    started = time.perf_counter()
    with path.open("w", encoding="utf-8", newline="\n") as out:
        counts = write_export(store, out)
    return time.perf_counter() - started, sum(counts.values())


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def bench_transfer(records: int, dim: int, folder: Path) -> None:
    source = open_store(folder / "source.sqlite3", dim)
    ingest_time = ingest(source, records)
    export_time, lines = export_to(source, folder / "export.jsonl")
    source.close()
    target = open_store(folder / "target.sqlite3", dim)
    started = time.perf_counter()
    with (folder / "export.jsonl").open("rb") as lines_in:
        report = import_export(target, lines_in, batch_size=BATCH)
    import_time = time.perf_counter() - started
    assert not report.skipped, report.skipped[:5]
    export_to(target, folder / "again.jsonl")
    target.close()
    same = digest(folder / "export.jsonl") == digest(folder / "again.jsonl")
    ingest_rate, export_rate, import_rate = records / ingest_time, lines / export_time, lines / import_time
    size = (folder / "export.jsonl").stat().st_size / 1e6
    print(
        f"curation export/import: export {export_rate:,.0f} records/s ({export_rate / ingest_rate:.2f}x ingest, "
        f"target >= 1x), import {import_rate:,.0f} records/s ({import_rate / ingest_rate:.2f}x ingest, "
        f"target >= 0.5x), raw ingest store.add {ingest_rate:,.0f} records/s; {lines:,} lines, {size:.0f} MB; "
        f"re-export {'identical' if same else 'DIFFERENT'} ({records} memories x {dim} dims, batches of {BATCH})"
    )
    if not same:
        raise SystemExit("the re-export differs from the export")


def django_over(folder: Path) -> None:
    """Set Django up with the site's settings over a fresh database in `folder` (migrated, as the
    test runner makes one), and the memory service over a store there."""
    import os

    os.environ.update(
        DJANGO_SETTINGS_MODULE="oam_site.settings",
        OAM_STORE_URL=f"sqlite://{folder / 'memory.sqlite3'}",
        OAM_EMBEDDER="hashing",
        OAM_LLM_BASE_URL="",
        OAM_SECRET_KEY="bench-only",
    )
    import django

    django.setup()
    from django.db import connection

    connection.settings_dict["TEST"]["NAME"] = str(folder / "django.sqlite3")
    connection.creation.create_test_db(verbosity=0, autoclobber=True)


def bench_bulk_status(records: int, folder: Path) -> None:
    """A bulk status change of `records` memories of one user through the curation service,
    against raw engine updates of the same records in the same run."""
    django_over(folder)
    from django.contrib.auth.models import User

    from memory.bulk import plan
    from memory.curation import Actor, Curation
    from memory.services import get_agent_memory

    memory = get_agent_memory()
    ingest(memory.store, records, users=1)
    ids = [f"m{i}" for i in range(records)]
    started = time.perf_counter()
    for memory_id in ids:
        memory.update_memory(memory_id, status=RecordStatus.INVALID)
    raw = records / (time.perf_counter() - started)

    curation = Curation(memory, Actor(User.objects.create_user("bench-curator")))
    started = time.perf_counter()
    preview = plan(memory, "set_status", {"status": "valid"}, ids)
    planned = time.perf_counter() - started
    assert preview.count == records, preview.count
    started = time.perf_counter()
    outcome = curation.bulk_update_memories(preview.changes, preview.describe())
    changed = time.perf_counter() - started
    assert outcome.done == records and not outcome.skipped
    started = time.perf_counter()
    undo = curation.revert_bulk(outcome.change)
    undone = time.perf_counter() - started
    assert not undo.failed and memory.get_memory("m0").status == "invalid"
    bulk = records / changed
    print(
        f"curation bulk status change: {bulk:,.0f} records/s ({bulk / raw:.2f}x raw engine updates, "
        f"{records / (planned + changed):,.0f} records/s with the preview); preview {planned:.2f} s; "
        f"one-step undo {records / undone:,.0f} records/s; raw AgentMemory.update_memory {raw:,.0f} records/s "
        f"({records:,} memories of one user, batches of {BATCH}, one history entry each)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--bulk-only", action="store_true", help="only the bulk status change")
    parser.add_argument("--bulk-records", type=int, default=10_000)
    args = parser.parse_args()
    if not args.bulk_only:
        with tempfile.TemporaryDirectory() as folder:
            bench_transfer(args.records, args.dim, Path(folder))
    with tempfile.TemporaryDirectory() as folder:
        bench_bulk_status(args.bulk_records, Path(folder))


if __name__ == "__main__":
    main()
