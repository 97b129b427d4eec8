"""Curation at scale: export and import of a 100k-record store (oam-export, memory.engine.transfer)
against raw ingest (store.add in batches of 500) in the same run.

The source store gets `--records` memories over 1,000 users through `store.add` (batches of 500,
texts embedded by the store's 384-dimensional hashing embedder, a TTL on every tenth, an
explicit status on every twentieth) and one link per hundred memories; that ingest is the
baseline. Then `write_export` writes the whole store to a file and `import_export` reads it into
a fresh store (batches of 500, one transaction each, the texts embedded again as ingest does),
and a second export of the imported store must give the same bytes. Prints records/s of each and
the ratios to ingest; targets: import >= 0.5x ingest, export >= 1x ingest.

Then duplicate groups for one user's 10k memories (`--duplicates-records`): find_duplicates on the
in-memory index and on the SQL path, against one raw NumPy pass of the same similarities; target
under 2 s.

And a bulk status change (`--bulk-only` runs it alone): `--bulk-records` memories of one user,
then, in the same run, the raw engine baseline (AgentMemory.update_memory(status=invalid) on
each), and the curation service's bulk change of the same records back to valid as the dashboard
makes it (memory.curation.bulk_plan.plan, the preview, then Curation.bulk_update_memories: batches of 500, one
history entry each, in a Django database of its own), and the one-step undo
(Curation.revert_bulk). Prints records/s of each and the bulk change's ratio to the raw updates.

    python bench/curation.py [--records 100000] [--dim 384] [--duplicates-records 10000]
                             [--bulk-only] [--bulk-records 10000]
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory.engine import (
    AgentMemory,
    HashingEmbedder,
    RecordStatus,
    SchemaPolicy,
    SQLiteMemoryStore,
    import_export,
    write_export,
)

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
    agent_memory = AgentMemory(store)
    for i in range(0, count - 1, 100):
        agent_memory.link_records(f"m{i}", "fact", f"m{i + 1}", "fact", "mentions", relation_id=f"rel{i}")
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

    from memory.curation import Actor, Curation
    from memory.curation.bulk_plan import plan
    from memory.services import get_agent_memory

    agent_memory = get_agent_memory()
    ingest(agent_memory.store, records, users=1)
    ids = [f"m{i}" for i in range(records)]
    started = time.perf_counter()
    for memory_id in ids:
        agent_memory.update_memory(memory_id, status=RecordStatus.INVALID)
    raw = records / (time.perf_counter() - started)

    curation = Curation(agent_memory, Actor(User.objects.create_user("bench-curator")))
    started = time.perf_counter()
    preview = plan(agent_memory, "set_status", {"status": "valid"}, ids)
    planned = time.perf_counter() - started
    assert preview.count == records, preview.count
    started = time.perf_counter()
    outcome = curation.bulk_update_memories(preview.changes, preview.describe())
    changed = time.perf_counter() - started
    assert outcome.done == records and not outcome.skipped
    started = time.perf_counter()
    undo = curation.revert_bulk(outcome.change)
    undone = time.perf_counter() - started
    assert not undo.failed and agent_memory.get_memory("m0").status == "invalid"
    bulk = records / changed
    print(
        f"curation bulk status change: {bulk:,.0f} records/s ({bulk / raw:.2f}x raw engine updates, "
        f"{records / (planned + changed):,.0f} records/s with the preview); preview {planned:.2f} s; "
        f"one-step undo {records / undone:,.0f} records/s; raw AgentMemory.update_memory {raw:,.0f} records/s "
        f"({records:,} memories of one user, batches of {BATCH}, one history entry each)"
    )


def bench_duplicates(count: int, dim: int, folder: Path, runs: int = 5) -> None:
    """Duplicate groups for one user's `count` memories (AgentMemory.find_duplicates, default
    distance), with as many memories of other users beside them; one memory in ten rewords an
    earlier one (one word of ten changed). Median of `runs` calls after a first (which loads the
    in-memory index), on the index and on the SQL path (vectors read in one query), against one
    raw NumPy pass of the same count x count cosine similarities (target: under 2 s)."""
    import numpy as np

    for index in (True, False):
        store = SQLiteMemoryStore(
            str(folder / f"duplicates-{index}.sqlite3"),
            embedder=HashingEmbedder(dim),
            schema_policy=SchemaPolicy.CREATE_IF_NECESSARY,
            search_index=index,
        )
        rng = random.Random(7)
        vocabulary = [f"{rng.choice(WORDS)}{n}" for n in range(3000)]
        for user in ("user-one", "others"):
            written: list[list[str]] = []
            for start in range(0, count, BATCH):
                ids = range(start, min(start + BATCH, count))
                for i in ids:
                    words = rng.sample(vocabulary, 10)
                    if i % 10 == 9:  # a rewording of an earlier memory: one word of ten changed
                        words = [*rng.choice(written)]
                        words[rng.randrange(10)] = rng.choice(vocabulary)
                    written.append(words)
                store.add(
                    [" ".join(words) for words in written[start:]],
                    "fact",
                    record_ids=[f"{user}-{i}" for i in ids],
                    user_ids=user if user == "user-one" else [f"user-{i % 9}" for i in ids],
                )
        agent_memory = AgentMemory(store)
        agent_memory.find_duplicates("user-one", limit=1000)  # loads the index (or warms the file cache)
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            found = agent_memory.find_duplicates("user-one", limit=1000)
            times.append(time.perf_counter() - started)
        took = sorted(times)[len(times) // 2]
        if index:
            units = store.index.records.matrix[: store.index.records.size]
            units = np.ascontiguousarray(units[:count])
            started = time.perf_counter()
            units @ units.T  # the raw pass: every similarity, nothing kept
            raw = time.perf_counter() - started
        path = "in-memory index" if index else "SQL (vectors read in one query)"
        print(
            f"curation duplicate groups: {took:.3f} s for one user's {found.compared:,} memories on the {path} "
            f"(target < 2 s; {took / raw:.2f}x one raw NumPy {count:,} x {count:,} similarity pass, {raw:.3f} s); "
            f"{found.total_groups:,} groups, {sum(len(g.memories) for g in found.groups):,} memories in the first "
            f"{len(found.groups):,} ({dim} dims)"
        )
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--duplicates-records", type=int, default=10_000, help="one user's memories to group")
    parser.add_argument("--bulk-only", action="store_true", help="only the bulk status change")
    parser.add_argument("--bulk-records", type=int, default=10_000)
    args = parser.parse_args()
    if not args.bulk_only:
        with tempfile.TemporaryDirectory() as folder:
            bench_duplicates(args.duplicates_records, args.dim, Path(folder))
        with tempfile.TemporaryDirectory() as folder:
            bench_transfer(args.records, args.dim, Path(folder))
    with tempfile.TemporaryDirectory() as folder:  # last: it sets Django up
        bench_bulk_status(args.bulk_records, Path(folder))


if __name__ == "__main__":
    main()
