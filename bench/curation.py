"""Curation at scale: export and import of a 100k-record store (oam-export, memory.engine.transfer)
against raw ingest (store.add in batches of 500) in the same run.

The source store gets `--records` memories over 1,000 users through `store.add` (batches of 500,
texts embedded by the store's 384-dimensional hashing embedder, a TTL on every tenth, an
explicit status on every twentieth) and one link per hundred memories; that ingest is the
baseline. Then `write_export` writes the whole store to a file and `import_export` reads it into
a fresh store (batches of 500, one transaction each, the texts embedded again as ingest does),
and a second export of the imported store must give the same bytes. Prints records/s of each and
the ratios to ingest; targets: import >= 0.5x ingest, export >= 1x ingest.

    python bench/curation.py [--records 100000] [--dim 384]
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


def ingest(store: SQLiteMemoryStore, count: int) -> float:
    """Seconds to add `count` memories (and, untimed, a link per hundred)."""
    started = time.perf_counter()
    for start in range(0, count, BATCH):
        ids = range(start, min(start + BATCH, count))
        store.add(
            [" ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(10)) + f" note {i}" for i in ids],
            "fact",
            record_ids=[f"m{i}" for i in ids],
            user_ids=[f"user-{i % 1000}" for i in ids],
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        bench_transfer(args.records, args.dim, Path(folder))


if __name__ == "__main__":
    main()
