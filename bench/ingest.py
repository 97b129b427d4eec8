"""Ingest throughput: SQLiteMemoryStore.add against raw sqlite3.executemany of the same rows.

Both sides write the same 384-dimensional float32 vectors and texts, in batches of 500, to a
file on the same disk, in the same process; the store also validates, normalises, indexes the
text for keyword search and maintains its indexes. The two sides run interleaved, several times,
and the best run of each counts, which keeps a noisy machine from deciding the ratio. Prints one
summary line; the target ratio is >= 0.5.

    python bench/ingest.py [--records 20000] [--dim 384]
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory.engine import HashingEmbedder, SchemaPolicy, SQLiteMemoryStore

BATCH = 500
WORDS = [
    "pizza",
    "travel",
    "budget",
    "gym",
    "recipe",
    "python",
    "deploy",
    "novel",
    "invoice",
    "garden",
    "meeting",
    "flight",
]


def make_rows(count: int, dim: int, seed: int = 7) -> tuple[list[str], np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    texts = [" ".join(rng.choice(WORDS, size=12)) + f" note {i}" for i in range(count)]
    vectors = rng.standard_normal((count, dim)).astype(np.float32)
    users = [f"user-{i % 10}" for i in range(count)]
    return texts, vectors, users


def time_store(path: Path, texts: list[str], vectors: np.ndarray, users: list[str]) -> float:
    store = SQLiteMemoryStore(
        str(path), embedder=HashingEmbedder(vectors.shape[1]), schema_policy=SchemaPolicy.CREATE_IF_NECESSARY
    )
    started = time.perf_counter()
    for start in range(0, len(texts), BATCH):
        end = start + BATCH
        store.add(
            texts[start:end],
            "memory",
            embeddings=vectors[start:end],
            user_ids=users[start:end],
            metadata={"source": "bench"},
        )
    elapsed = time.perf_counter() - started
    store.close()
    return elapsed


def time_raw(path: Path, texts: list[str], vectors: np.ndarray, users: list[str]) -> float:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(
        "CREATE TABLE records (pk INTEGER PRIMARY KEY, id TEXT, record_type TEXT, content TEXT, "
        "user_id TEXT, created_at TEXT, metadata TEXT, embedding BLOB)"
    )
    started = time.perf_counter()
    for start in range(0, len(texts), BATCH):
        rows = [
            (f"id-{i}", "memory", texts[i], users[i], "2026-01-01T00:00:00", '{"source":"bench"}', vectors[i].tobytes())
            for i in range(start, min(start + BATCH, len(texts)))
        ]
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO records (id, record_type, content, user_id, created_at, metadata, embedding) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs of each side; the best counts")
    args = parser.parse_args()
    texts, vectors, users = make_rows(args.records, args.dim)
    raw_times, store_times = [], []
    with tempfile.TemporaryDirectory() as folder:
        for run in range(args.repeat):
            raw_times.append(time_raw(Path(folder) / f"raw{run}.sqlite3", texts, vectors, users))
            store_times.append(time_store(Path(folder) / f"store{run}.sqlite3", texts, vectors, users))
    raw, store = min(raw_times), min(store_times)
    raw_rate, store_rate = args.records / raw, args.records / store
    print(
        f"ingest: store.add {store_rate:,.0f} records/s, raw executemany {raw_rate:,.0f} records/s, "
        f"ratio {store_rate / raw_rate:.2f}x (target >= 0.5x; "
        f"{args.records} records x {args.dim} dims, batches of {BATCH})"
    )


if __name__ == "__main__":
    main()
