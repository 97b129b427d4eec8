"""Graph search latency: a 2-hop SQLiteMemoryStore.search against the same search with num_hops=0.

Builds one store of random unit 384-dimensional float32 vectors as memories (the four memory-like
types in turn, one type per batch of 500; user ids cycle over 10 users), then links random distinct
unordered pairs of them with store.add_relations, 5,000 links per call: no self-links, no pair twice
in either direction, each link pointing either way with equal odds. Relation types are drawn
uniformly from the five built-ins (supports, contradicts, supersedes, refines, duplicates), so about
three links in five are lifecycle links and most memories end up invalid; the searches keep the
default include_invalid_results=True, under which status changes neither the direct results nor
which linked memories are admitted, so the mix only exercises the lifecycle bookkeeping.

Then times, in the same process and interleaved query by query (alternating which side goes first),
on a store opened with SearchStrategy.VECTOR:

  2-hop    store.search(query_vector=q, k=10, num_hops=2, max_linked_results=100)
  0-hop    the same call with num_hops=0

after a warm-up (the first search loads the search cache). Both must return the same direct results
(ids and order). Prints each side's p50/p95, the ratio of the p50s and the size of the linked-result
trees (linked memories per direct result, per hop) on stderr, and one summary line (PASS/FAIL) on
stdout; the target is a p50 ratio <= 3x.

    python bench/graph_hops.py [--memories 100000] [--relations 300000] [--queries 50] [--profile]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import profile

from memory.engine import MEMORY_TYPES, HashingEmbedder, SchemaPolicy, SearchStrategy, SQLiteMemoryStore

K = 10
DIM = 384
HOPS = 2
MAX_LINKED = 100
BATCH = 500  # memories per store.add call (and per record type)
RELATION_BATCH = 5_000  # links per store.add_relations call
USERS = 10
WARMUP = 3
QUERY_NOISE = 0.5  # norm of the noise added to a stored unit vector to make a query
RELATION_TYPES = ("supports", "contradicts", "supersedes", "refines", "duplicates")
TARGET = 3.0
WORDS = ["pizza", "travel", "budget", "gym", "recipe", "python", "deploy", "novel", "invoice", "garden"]


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


def random_pairs(count: int, nodes: int, rng: np.random.Generator) -> np.ndarray:
    """`count` distinct unordered pairs of distinct node indexes, in random order and direction."""
    if nodes < 2 or count > nodes * (nodes - 1) // 2:
        raise ValueError(f"cannot draw {count} distinct pairs from {nodes} memories")
    codes = np.empty(0, dtype=np.int64)
    while len(codes) < count:
        a = rng.integers(0, nodes, size=2 * (count - len(codes)) + 16, dtype=np.int64)
        b = rng.integers(0, nodes, size=len(a), dtype=np.int64)
        keep = a != b
        low, high = np.minimum(a, b)[keep], np.maximum(a, b)[keep]
        codes = np.concatenate([codes, low * nodes + high])
        # First occurrence of each pair wins, so the drawing order (and the seed) decides.
        _, first = np.unique(codes, return_index=True)
        codes = codes[np.sort(first)]
    codes = codes[:count]
    pairs = np.stack([codes // nodes, codes % nodes], axis=1)
    flip = rng.random(count) < 0.5
    pairs[flip] = pairs[flip][:, ::-1]
    return pairs


def build(store: SQLiteMemoryStore, memories: int, relations: int, rng: np.random.Generator) -> tuple:
    """Fill the store; returns (the memories' unit vectors, seconds adding memories, seconds linking them)."""
    vocabulary = np.array(WORDS)
    texts = [
        " ".join(row) + f" note {i}" for i, row in enumerate(vocabulary[rng.integers(0, len(WORDS), (memories, 8))])
    ]
    matrix = unit_rows(rng.standard_normal((memories, DIM), dtype=np.float32))
    users = [f"user-{i % USERS}" for i in range(memories)]
    ids: list[str] = []
    types: list[str] = []
    started = time.perf_counter()
    for batch_no, start in enumerate(range(0, memories, BATCH)):
        end = min(start + BATCH, memories)
        record_type = MEMORY_TYPES[batch_no % len(MEMORY_TYPES)]
        ids += store.add(
            texts[start:end], record_type, embeddings=matrix[start:end], user_ids=users[start:end], batch_size=BATCH
        )
        types += [record_type] * (end - start)
    memory_seconds = time.perf_counter() - started
    pairs = random_pairs(relations, memories, rng)
    labels = rng.integers(0, len(RELATION_TYPES), size=relations)
    started = time.perf_counter()
    for start in range(0, relations, RELATION_BATCH):
        store.add_relations(
            [
                {
                    "source_record_id": ids[source],
                    "source_record_type": types[source],
                    "target_record_id": ids[target],
                    "target_record_type": types[target],
                    "relation_type": RELATION_TYPES[label],
                }
                for (source, target), label in zip(
                    pairs[start : start + RELATION_BATCH].tolist(),
                    labels[start : start + RELATION_BATCH].tolist(),
                    strict=True,
                )
            ]
        )
    relation_seconds = time.perf_counter() - started
    return matrix, memory_seconds, relation_seconds


def make_queries(matrix: np.ndarray, queries: int, rng: np.random.Generator) -> np.ndarray:
    picks = rng.integers(0, len(matrix), size=queries)
    noise = rng.standard_normal((queries, matrix.shape[1]), dtype=np.float32)
    noise *= QUERY_NOISE / np.linalg.norm(noise, axis=1, keepdims=True)
    return unit_rows(matrix[picks] + noise)


def tree_sizes(results: list) -> list[list[int]]:
    """Per direct result, the number of linked memories at each depth (1..HOPS)."""
    sizes = []
    for record, _ in results:
        per_depth = [0] * HOPS
        level = record.linked_results
        for depth in range(HOPS):
            per_depth[depth] = len(level)
            level = [child for _, hit in level for child in hit[0].linked_results]
        sizes.append(per_depth)
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--relations", type=int, default=300_000)
    parser.add_argument("--queries", type=int, default=50, help="timed searches per side")
    parser.add_argument("--profile", action="store_true", help=f"also cProfile 20 {HOPS}-hop searches")
    args = parser.parse_args()
    if args.memories < K:
        parser.error(f"--memories must be at least k={K}")
    if args.queries < 1:
        parser.error("--queries must be at least 1")
    if not 0 <= args.relations <= args.memories * (args.memories - 1) // 2:
        parser.error(f"--relations must be between 0 and {args.memories * (args.memories - 1) // 2} (distinct pairs)")
    rng = np.random.default_rng(13)
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteMemoryStore(
            str(Path(folder) / "graph.sqlite3"),
            embedder=HashingEmbedder(DIM),
            schema_policy=SchemaPolicy.CREATE_IF_NECESSARY,
            search_strategy=SearchStrategy.VECTOR,
        )
        matrix, memory_seconds, relation_seconds = build(store, args.memories, args.relations, rng)
        queries = make_queries(matrix, args.queries, rng)
        print(
            f"graph: {args.memories} memories x {DIM} dims ({', '.join(MEMORY_TYPES)} in turn) added in "
            f"{memory_seconds:.1f} s; {args.relations} random relations (mean degree "
            f"{2 * args.relations / args.memories:.1f}, types uniform over {', '.join(RELATION_TYPES)}) added in "
            f"{relation_seconds:.1f} s ({args.relations / max(relation_seconds, 1e-9):,.0f}/s, "
            f"{RELATION_BATCH} per call); "
            f"k={K}, {args.queries} queries per side after {WARMUP} warm-up",
            file=sys.stderr,
        )

        def search(i: int, hops: int) -> list:
            return store.search(query_vector=queries[i], k=K, num_hops=hops, max_linked_results=MAX_LINKED)

        for i in range(min(WARMUP, args.queries)):
            search(i, HOPS)
            search(i, 0)
        timings: dict[int, list[float]] = {HOPS: [], 0: []}
        sizes: list[list[int]] = []
        mismatches: list[str] = []
        for i in range(args.queries):
            order = (HOPS, 0) if i % 2 == 0 else (0, HOPS)
            results = {}
            for hops in order:
                started = time.perf_counter()
                results[hops] = search(i, hops)
                timings[hops].append((time.perf_counter() - started) * 1000)
            direct = [record.id for record, _ in results[HOPS]]
            if direct != [record.id for record, _ in results[0]]:
                mismatches.append(f"query {i}: {HOPS}-hop {direct} vs 0-hop {[r.id for r, _ in results[0]]}")
            if any(record.linked_results for record, _ in results[0]):
                mismatches.append(f"query {i}: the 0-hop search returned linked results")
            sizes += tree_sizes(results[HOPS])
        if args.profile:
            profile(f"{HOPS}-hop", lambda i: search(i, HOPS), args.queries, WARMUP)
        store.close()

    hop_p50, hop_p95 = np.percentile(timings[HOPS], [50, 95])
    flat_p50, flat_p95 = np.percentile(timings[0], [50, 95])
    ratio = hop_p50 / flat_p50
    per_depth = np.array(sizes, dtype=float)
    totals = per_depth.sum(axis=1)
    print(
        f"graph: {HOPS}-hop search p50 {hop_p50:.1f} ms p95 {hop_p95:.1f} ms, 0-hop p50 {flat_p50:.1f} ms "
        f"p95 {flat_p95:.1f} ms, ratio {ratio:.2f}x (target <= {TARGET:g}x)",
        file=sys.stderr,
    )
    print(
        f"graph: linked results per direct result: mean {totals.mean():.1f} (min {totals.min():.0f}, max "
        f"{totals.max():.0f}; "
        + ", ".join(f"hop {d + 1} mean {per_depth[:, d].mean():.1f}" for d in range(HOPS))
        + f"), {int((totals >= MAX_LINKED).sum())}/{len(totals)} trees hit max_linked_results={MAX_LINKED}; "
        f"{totals.sum() / args.queries:.0f} linked results per search",
        file=sys.stderr,
    )
    for mismatch in mismatches[:5]:
        print(f"mismatch: {mismatch}", file=sys.stderr)
    if len(mismatches) > 5:
        print(f"mismatch: ... {len(mismatches) - 5} more", file=sys.stderr)
    passed = ratio <= TARGET and not mismatches
    print(
        f"graph: {HOPS}-hop search p50 {hop_p50:.1f} ms vs 0-hop {flat_p50:.1f} ms, ratio {ratio:.2f}x "
        f"(target <= {TARGET:g}x); {args.memories} memories, {args.relations} relations, k={K}, "
        f"max_linked_results={MAX_LINKED}, mean {totals.mean():.1f} linked per direct result"
        + (f", {len(mismatches)} direct-result mismatches" if mismatches else "")
        + (" PASS" if passed else " FAIL")
    )


if __name__ == "__main__":
    main()
