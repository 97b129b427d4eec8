"""Search latency: SQLiteMemoryStore.search (k=10) against a raw NumPy flat scan of the same vectors.

Builds one store of random unit 384-dimensional float32 vectors with texts drawn from a small
vocabulary and user ids cycling over 10 users (so one user holds 10% of the records), then times,
in the same process and interleaved query by query so both sides share the machine's noise:

  vector          store.search(query_vector=q, k=10) on a store opened with SearchStrategy.VECTOR,
                  against `1 - M @ q` plus a partial sort over the same normalised matrix;
  vector, user    the same with user_id=<one user>, exact_user_match=True, against a scan over that
                  user's rows (the row index array is chosen beforehand; gather and matmul are timed);
  hybrid          store.search(text, k=10) on a second store opened on the same file with the default
                  (hybrid) strategy, with and without the user scope, against the same NumPy scans.

Vector searches must return exactly the scan's top k (ids and order); hybrid ones cannot, so only
their time counts. Each case is warmed up first (the first search may build caches). Prints one
summary line (PASS/FAIL and the four p50 ratios) on stdout, and each case's p50/p95 on stderr; the
targets are a p50 ratio <= 2x for vector searches (with the same top k) and <= 3x for hybrid ones.

    python bench/search_latency.py [--records 100000] [--dim 384] [--queries 50] [--users 10] [--profile]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import profile

from memory.engine import HashingEmbedder, SchemaPolicy, SearchStrategy, SQLiteMemoryStore

K = 10
BATCH = 500
WARMUP = 3
VOCABULARY = 200
WORDS_PER_TEXT = 12
WORDS_PER_QUERY = 3
QUERY_NOISE = 0.5  # norm of the noise added to a stored unit vector to make a query
VECTOR_TARGET = 2.0
HYBRID_TARGET = 3.0
SCOPED_USER = "user-3"


@dataclass
class Data:
    texts: list[str]
    matrix: np.ndarray  # (records, dim) float32, unit rows: what the store holds after normalising
    users: np.ndarray  # (records,) user id per row
    query_vectors: np.ndarray  # (queries, dim) float32, unit rows
    query_texts: list[str]
    keyword_share: float  # mean share of records that hold at least one word of a text query


@dataclass
class Case:
    name: str
    target: float
    check_top_k: bool
    store_ms: list[float] = field(default_factory=list)
    scan_ms: list[float] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    compared: int = 0

    @property
    def ratio(self) -> float:
        return float(np.percentile(self.store_ms, 50) / np.percentile(self.scan_ms, 50))

    @property
    def passed(self) -> bool:
        return self.ratio <= self.target and not self.mismatches


def make_vocabulary(count: int, rng: np.random.Generator) -> list[str]:
    """`count` distinct pronounceable words (consonant-vowel syllables), so FTS tokenises them whole."""
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    words: dict[str, None] = {}
    while len(words) < count:
        syllables = rng.integers(2, 4)
        words["".join(rng.choice(list(consonants)) + rng.choice(list(vowels)) for _ in range(syllables))] = None
    return list(words)


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


def make_data(records: int, dim: int, queries: int, users: int, seed: int = 11) -> Data:
    rng = np.random.default_rng(seed)
    vocabulary = np.array(make_vocabulary(VOCABULARY, rng))
    words = rng.integers(0, VOCABULARY, size=(records, WORDS_PER_TEXT))
    texts = [" ".join(vocabulary[row]) for row in words]
    matrix = unit_rows(rng.standard_normal((records, dim), dtype=np.float32))
    user_ids = np.array([f"user-{i % users}" for i in range(records)])
    # Half the queries start from any stored vector, half from the scoped user's, so the scoped case's
    # nearest neighbour is not always far away; noise keeps ranks 2..k non-trivial.
    scoped_rows = np.flatnonzero(user_ids == SCOPED_USER)
    picks = np.where(
        np.arange(queries) % 2 == 0, rng.integers(0, records, size=queries), rng.choice(scoped_rows, size=queries)
    )
    noise = rng.standard_normal((queries, dim), dtype=np.float32)
    noise *= QUERY_NOISE / np.linalg.norm(noise, axis=1, keepdims=True)
    query_vectors = unit_rows(matrix[picks] + noise)
    query_words = [rng.choice(VOCABULARY, size=WORDS_PER_QUERY, replace=False) for _ in range(queries)]
    query_texts = [" ".join(vocabulary[chosen]) for chosen in query_words]
    holds = np.zeros((records, VOCABULARY), dtype=bool)
    holds[np.arange(records)[:, None], words] = True
    keyword_share = float(np.mean([holds[:, chosen].any(axis=1).mean() for chosen in query_words]))
    return Data(texts, matrix, user_ids, query_vectors, query_texts, keyword_share)


def scan(matrix: np.ndarray, query: np.ndarray, k: int) -> np.ndarray:
    """Row indexes of the k rows closest to `query` by cosine distance, closest first, ties by index."""
    distances = 1.0 - matrix @ query
    top = np.argpartition(distances, k)[:k] if k < len(distances) else np.arange(len(distances))
    return top[np.lexsort((top, distances[top]))]


def scan_rows(matrix: np.ndarray, rows: np.ndarray, query: np.ndarray, k: int) -> np.ndarray:
    """`scan` over the given rows only (gathered here, inside the timing), as indexes into `matrix`."""
    return rows[scan(matrix[rows], query, k)]


def describe_mismatch(
    query_no: int, got: list[int], expected: np.ndarray, matrix: np.ndarray, query: np.ndarray
) -> str:
    distances = 1.0 - matrix @ query
    first = next(
        (i for i, (a, b) in enumerate(zip(got, expected, strict=False)) if a != b), min(len(got), len(expected))
    )
    detail = f"query {query_no}: store {got} vs scan {expected.tolist()} (first difference at rank {first}"
    if first < len(got) and first < len(expected):
        gap = abs(float(distances[got[first]]) - float(distances[expected[first]]))
        detail += f", distance gap there {gap:.2e}"
    return detail + ")"


def run_case(
    case: Case,
    store_search: Callable[[int], list],
    numpy_scan: Callable[[int], np.ndarray],
    data: Data,
    row_of: dict[str, int],
    queries: int,
) -> Case:
    for i in range(min(WARMUP, queries)):
        store_search(i)
        numpy_scan(i)
    for i in range(queries):
        # Alternate which side goes first, so neither always runs on caches the other warmed.
        order = ("store", "scan") if i % 2 == 0 else ("scan", "store")
        for side in order:
            started = time.perf_counter()
            if side == "store":
                results = store_search(i)
            else:
                expected = numpy_scan(i)
            elapsed = (time.perf_counter() - started) * 1000
            (case.store_ms if side == "store" else case.scan_ms).append(elapsed)
        if case.check_top_k:
            case.compared += 1
            got = [row_of.get(record.id, -1) for record, _ in results]
            if got != expected.tolist():
                case.mismatches.append(describe_mismatch(i, got, expected, data.matrix, data.query_vectors[i]))
    return case


def summary(case: Case) -> str:
    store_p50, store_p95 = np.percentile(case.store_ms, [50, 95])
    scan_p50, scan_p95 = np.percentile(case.scan_ms, [50, 95])
    line = (
        f"search {case.name}: store p50 {store_p50:.1f} ms p95 {store_p95:.1f} ms, "
        f"numpy scan p50 {scan_p50:.1f} ms p95 {scan_p95:.1f} ms, ratio {case.ratio:.2f}x "
        f"(target <= {case.target:g}x)"
    )
    if case.check_top_k:
        line += f", top-{K} same {case.compared - len(case.mismatches)}/{case.compared}"
    else:
        line += ", top-k not compared (hybrid)"
    return line + (" PASS" if case.passed else " FAIL")


def open_store(path: Path, dim: int, strategy: SearchStrategy) -> SQLiteMemoryStore:
    return SQLiteMemoryStore(
        str(path),
        embedder=HashingEmbedder(dim),
        schema_policy=SchemaPolicy.CREATE_IF_NECESSARY,
        search_strategy=strategy,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=50, help="timed searches per case")
    parser.add_argument("--users", type=int, default=10, help="user ids cycle over this many users")
    parser.add_argument("--profile", action="store_true", help="also cProfile 20 vector and 20 hybrid searches")
    args = parser.parse_args()
    if args.users <= int(SCOPED_USER.split("-")[1]):
        parser.error(f"--users must be more than {SCOPED_USER.split('-')[1]} (the scoped user is {SCOPED_USER})")
    data = make_data(args.records, args.dim, args.queries, args.users)
    scoped_rows = np.flatnonzero(data.users == SCOPED_USER)  # chosen once, outside the timing
    share = len(scoped_rows) / args.records

    def numpy_all(i: int) -> np.ndarray:
        return scan(data.matrix, data.query_vectors[i], K)

    def numpy_user(i: int) -> np.ndarray:
        return scan_rows(data.matrix, scoped_rows, data.query_vectors[i], K)

    cases: list[Case] = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "search.sqlite3"
        store = open_store(path, args.dim, SearchStrategy.VECTOR)
        started = time.perf_counter()
        ids = store.add(data.texts, "memory", embeddings=data.matrix, user_ids=data.users.tolist(), batch_size=BATCH)
        built = time.perf_counter() - started
        row_of = {record_id: row for row, record_id in enumerate(ids)}
        print(
            f"search: {args.records} records x {args.dim} dims, {args.users} users ({SCOPED_USER} holds "
            f"{share:.0%}), k={K}, {args.queries} queries per case after {WARMUP} warm-up; a text query matches "
            f"{data.keyword_share:.0%} of records on average; built in {built:.1f} s",
            file=sys.stderr,
        )
        scope = {"user_id": SCOPED_USER, "exact_user_match": True}
        hybrid = open_store(path, args.dim, SearchStrategy.HYBRID)
        searches = (
            ("vector", VECTOR_TARGET, True, lambda i, kw: store.search(query_vector=data.query_vectors[i], k=K, **kw)),
            ("hybrid", HYBRID_TARGET, False, lambda i, kw: hybrid.search(data.query_texts[i], k=K, **kw)),
        )
        for strategy, target, compare_top_k, search in searches:
            for name, kwargs, baseline in (
                (f"{strategy}, no filter", {}, numpy_all),
                (f"{strategy}, user scope {share:.0%}", scope, numpy_user),
            ):
                case = run_case(
                    Case(name, target, compare_top_k),
                    lambda i, kw=kwargs, search=search: search(i, kw),
                    baseline,
                    data,
                    row_of,
                    args.queries,
                )
                print(summary(case), file=sys.stderr)
                cases.append(case)
            if args.profile:
                profile(f"{strategy}, no filter", lambda i, search=search: search(i, {}), args.queries, WARMUP)
        store.close()
        hybrid.close()

    for case in cases:
        for mismatch in case.mismatches[:5]:
            print(f"top-k mismatch ({case.name}): {mismatch}", file=sys.stderr)
        if len(case.mismatches) > 5:
            print(f"top-k mismatch ({case.name}): ... {len(case.mismatches) - 5} more", file=sys.stderr)
    failed = [case.name for case in cases if not case.passed]
    vector, hybrid_cases = cases[:2], cases[2:]
    same = sum(case.compared - len(case.mismatches) for case in vector)
    compared = sum(case.compared for case in vector)
    print(
        f"search: {'FAIL' if failed else 'PASS'}; p50 against a NumPy flat scan, unfiltered / {share:.0%} user scope: "
        f"vector {vector[0].ratio:.2f}x / {vector[1].ratio:.2f}x (target <= {VECTOR_TARGET:g}x, same top-{K} "
        f"{same}/{compared}), hybrid {hybrid_cases[0].ratio:.2f}x / {hybrid_cases[1].ratio:.2f}x "
        f"(target <= {HYBRID_TARGET:g}x); {args.records} records x {args.dim} dims"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )


if __name__ == "__main__":
    main()
