"""Erasing one person at scale: AgentMemory.erase_user of a user with `--memories` memories (10,000),
against two baselines timed in the same run on the same store.

The store holds the person (`--memories` memories, a thread of `--messages` messages, a link per
hundred memories to another user's, and `--searches` recorded searches of theirs and of others that
served their memories) among `--others` other users' memories. Baselines: the ingest of the person's
memories (store.add in batches of 500, the texts embedded: what writing them cost), and deleting
as many memories of a twin user one by one (AgentMemory.delete_memory each, as tools without an
erasure must). Then the erasure: the store's one transaction (records, links, activity), then
scrub_files (FTS5, WAL checkpoint, VACUUM, the search index written again from the rows). Prints
the seconds of each part, the ratios, and whether a byte search of the store's files finds any of
the person's words afterwards (it must not).

    python bench/erase.py [--memories 10000] [--others 20000] [--messages 1000] [--searches 200]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory.engine import AgentMemory, HashingEmbedder, SchemaPolicy, SQLiteMemoryStore

BATCH = 500
WORDS = ["pizza", "travel", "budget", "gym", "recipe", "python", "deploy", "novel", "invoice", "garden", "flight"]


def texts(user_id: str, n: int, marker: str, rng: random.Random) -> list[str]:
    return [f"{user_id} {marker}{i:05d} {' '.join(rng.choices(WORDS, k=8))}" for i in range(n)]


def ingest(store: SQLiteMemoryStore, contents: list[str], users: list[str]) -> tuple[list[str], float]:
    """store.add in batches of 500 (the texts embedded); the ids and the seconds it took."""
    started, ids = time.perf_counter(), []
    for start in range(0, len(contents), BATCH):
        batch = contents[start : start + BATCH]
        ids += store.add(batch, "fact", user_ids=users[start : start + BATCH], agent_ids=["atlas"] * len(batch))
    return ids, time.perf_counter() - started


def dump(path: Path) -> bytes:
    files = [path, Path(f"{path}-wal"), *Path(f"{path}.oam-index").rglob("*")]
    return b"".join(file.read_bytes() for file in files if file.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--others", type=int, default=20_000)
    parser.add_argument("--messages", type=int, default=1_000)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--dim", type=int, default=384)
    args = parser.parse_args()
    rng = random.Random(30)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "store.sqlite3"
        store = SQLiteMemoryStore(
            str(path), embedder=HashingEmbedder(args.dim), schema_policy=SchemaPolicy.CREATE_IF_NECESSARY
        )
        memory = AgentMemory(store)
        others, _ = ingest(store, texts("u", args.others, "other", rng), [f"u{i % 100}" for i in range(args.others)])
        twin, _ = ingest(store, texts("twin", args.memories, "twinword", rng), ["twin"] * args.memories)
        mine, ingest_seconds = ingest(
            store, texts("alice", args.memories, "zanzibarquokka", rng), ["alice"] * args.memories
        )
        thread = memory.create_thread(thread_id="alice-chat", user_id="alice", agent_id="atlas")
        for start in range(0, args.messages, BATCH):
            count = min(BATCH, args.messages - start)
            thread.add_messages([{"role": "user", "content": f"zanzibarquokka said {start + i}"} for i in range(count)])
        for n in range(0, len(mine), 100):
            memory.link_records(others[n % len(others)], "fact", mine[n], "fact", "related_to")
        for n in range(args.searches):
            # Theirs, and other users' whose links lead to their memories (one hop): both are cut.
            if n % 2:
                memory.search(f"zanzibarquokka{n:05d} pizza", user_id="alice", max_results=10)
            else:
                memory.search(f"other{n:05d} pizza", user_id=f"u{n % 100}", max_results=10, num_hops=1)
        memory.activity.flush()
        assert b"zanzibarquokka" in dump(path)

        started = time.perf_counter()
        for memory_id in twin:
            memory.delete_memory(memory_id)
        one_by_one = time.perf_counter() - started

        preview_started = time.perf_counter()
        preview = memory.erase_user("alice", dry_run=True)
        preview_seconds = time.perf_counter() - preview_started
        started = time.perf_counter()
        report = memory.erase_user("alice", scrub=False)
        erase_seconds = time.perf_counter() - started
        started = time.perf_counter()
        scrub = memory.scrub_files()
        scrub_seconds = time.perf_counter() - started
        total = erase_seconds + scrub_seconds
        left = b"zanzibarquokka" in dump(path)
        memory.close()
    counts = ", ".join(f"{kind} {count}" for kind, count in report.counts.items())
    print(
        f"erase {args.memories} memories of one user among {args.others + args.memories} (dim {args.dim}): "
        f"{total:.2f} s ({erase_seconds:.2f} s the store's transaction, {scrub_seconds:.2f} s scrub_files: "
        f"vacuumed {scrub.vacuumed}, index rewritten {scrub.index_rewritten}); preview {preview_seconds:.2f} s; "
        f"ingest of the same memories {ingest_seconds:.2f} s (erase/ingest {total / ingest_seconds:.2f}x); "
        f"deleting {args.memories} one by one {one_by_one:.2f} s ({one_by_one / total:.1f}x slower than the erasure); "
        f"their words left in the files: {'YES' if left else 'none'}; counts: {counts}; "
        f"preview counted the same: {preview.counts == report.counts}"
    )


if __name__ == "__main__":
    main()
