"""What recording agent activity costs: searches with the activity log on against off, in one run.

(a) In process: one store of --records memories (texts from a small vocabulary, over 10 users,
the hashing embedder), searched through two AgentMemory clients over the same file, one
recording (ActivityConfig() whatever OAM_ACTIVITY says) and one not (record_activity=False).
The same hybrid searches (k=10, one user) run on both in --rounds rounds of --queries each,
interleaved round by round with the side going first alternating, so that both share the
machine's noise. The recording side's writer thread writes during its rounds as in real use;
what it still holds when a round ends is written before the next round starts, outside the
timing, so that it does not land on the other side's round. Prints each side's p50 and mean
and the p50 ratio; target <= 1.05x.

(b) Under load: the site in gunicorn (bench/_gunicorn.py, 2 sync workers) twice over one
seeded store and Django database, one server with OAM_ACTIVITY=on and one with off, each loaded
in turn with POST /api/v1/search/ over --connections connections (bench/api.py's load, from
another process) for --seconds per side, in --api-rounds rounds. Prints each side's requests per
second and p50, and the median of the rounds' on/off ratios; target >= 0.95x. Each server's
CPU time per request (its workers' user and system time) is printed beside: a steadier figure
than requests per second on a machine that other work shares. The searches the "on" server recorded are
counted from the store afterwards, to show that it recorded them.

The load and the servers share this machine's cores: the figures compare the two sides of one
run, they are not a capacity plan.

    python bench/activity.py [--records 10000] [--rounds 10] [--queries 200] [--profile]
                             [--memories 2000] [--seconds 32] [--api-rounds 8] [--connections 4] [--skip-api]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._gunicorn import Site
from bench.api import SEARCH_BODY, WARMUP_SECONDS, load, summary
from memory.engine import (
    ActivityConfig,
    AgentMemory,
    HashingEmbedder,
    SchemaPolicy,
    SQLiteMemoryStore,
    connect,
)

P50_TARGET = 1.05
THROUGHPUT_TARGET = 0.95
DIM = 384
USERS = 10
VOCABULARY = 300
WORDS_PER_TEXT = 12
WORDS_PER_QUERY = 3
WARMUP = 20
PROFILED = 200
BATCH = 500
SEARCH = "/api/v1/search/"


def make_texts(records: int, queries: int, seed: int = 7) -> tuple[list[str], list[str]]:
    """`records` memory texts and `queries` query texts from one vocabulary of made-up words."""
    rng = random.Random(seed)
    words = [f"{rng.choice('bdfgklmnprstvz')}{rng.choice('aeiou')}{rng.choice('lmnrst')}{n}" for n in range(VOCABULARY)]
    texts = [" ".join(rng.choices(words, k=WORDS_PER_TEXT)) for _ in range(records)]
    return texts, [" ".join(rng.sample(words, WORDS_PER_QUERY)) for _ in range(queries)]


def open_store(path: Path) -> SQLiteMemoryStore:
    return SQLiteMemoryStore(str(path), embedder=HashingEmbedder(DIM), schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)


def in_process(args: argparse.Namespace) -> float:
    """Part (a): the p50 ratio of a search recorded to one not."""
    texts, queries = make_texts(args.records, args.queries)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "activity.sqlite3"
        started = time.perf_counter()
        store = open_store(path)
        store.add(texts, "memory", user_ids=[f"user-{n % USERS}" for n in range(len(texts))], batch_size=BATCH)
        store.close()
        built = time.perf_counter() - started
        recording = AgentMemory(open_store(path), caller="bench-activity", activity_config=ActivityConfig())
        silent = AgentMemory(open_store(path), record_activity=False)

        def searcher(memory: AgentMemory) -> Callable[[int], object]:
            return lambda i: memory.search(queries[i % len(queries)], user_id=f"user-{i % USERS}", max_results=10)

        sides = {"on": searcher(recording), "off": searcher(silent)}
        timings: dict[str, list[float]] = {"on": [], "off": []}
        for search in sides.values():
            for i in range(WARMUP):
                search(i)
        recording.activity.flush()
        for round_no in range(args.rounds):
            order = ("on", "off") if round_no % 2 == 0 else ("off", "on")
            for side in order:
                search = sides[side]
                for i in range(args.queries):
                    began = time.perf_counter()
                    search(i)
                    timings[side].append((time.perf_counter() - began) * 1000)
                if side == "on":
                    recording.activity.flush()  # its tail, outside the timing (see the docstring)
        if args.profile:
            profile_recorded(sides["on"], recording)
        stats = recording.activity.stats()
        recording.close()
        silent.close()
    p50 = {side: statistics.median(values) for side, values in timings.items()}
    mean = {side: statistics.fmean(values) for side, values in timings.items()}
    ratio = p50["on"] / p50["off"]
    print(
        f"activity (a): {args.records:,} memories x {DIM} dims over {USERS} users, built in {built:.1f} s; hybrid "
        f"search k=10, {args.rounds} interleaved rounds of {args.queries} per side; recorded {stats['recorded']}, "
        f"dropped {stats['dropped']}, failed {stats['failed']}",
        file=sys.stderr,
    )
    print(
        f"{'PASS' if ratio <= P50_TARGET else 'FAIL'} activity (a): search p50 recording on {p50['on']:.3f} ms, "
        f"off {p50['off']:.3f} ms, ratio {ratio:.3f}x (target <= {P50_TARGET}x); mean on {mean['on']:.3f} ms, "
        f"off {mean['off']:.3f} ms ({mean['on'] / mean['off']:.3f}x)"
    )
    return ratio


def profile_recorded(search: Callable[[int], object], recording: AgentMemory) -> None:
    """cProfile PROFILED recorded searches and the writing of their events (the writer thread's
    calls are profiled too), the top 20 by own time to stderr: what the recording costs, and where."""
    profiler = cProfile.Profile()
    profiler.enable()
    for i in range(PROFILED):
        search(i)
    recording.activity.flush()
    profiler.disable()
    print(f"-- profile: {PROFILED} recorded searches and their events written, top 20 by own time", file=sys.stderr)
    pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(20)


def server_cpu_seconds(site: Site) -> float:
    """The CPU time (user and system) the server's workers have used so far."""
    ticks = 0
    for pid in site.workers():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of stat(5)
    return ticks / os.sysconf("SC_CLK_TCK")


def under_load(args: argparse.Namespace) -> float:
    """Part (b): the API's search throughput with the activity log on, against off."""
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        servers = {"on": Site(folder), "off": Site(folder)}
        for side, site in servers.items():
            site.env["OAM_ACTIVITY"] = side
            site.env.pop("OAM_OTLP_ENDPOINT", None)
        token = servers["on"].make_curator("bench-activity")
        started = time.perf_counter()
        servers["on"].seed_memories(args.memories, 50)
        print(
            f"activity (b): {args.memories:,} memories seeded in {time.perf_counter() - started:.1f} s", file=sys.stderr
        )
        runs: dict[str, list[dict]] = {"on": [], "off": []}
        try:
            for site in servers.values():
                site.serve(workers=args.workers)
            for round_no in range(args.api_rounds):
                for side in ("on", "off") if round_no % 2 == 0 else ("off", "on"):
                    site = servers[side]
                    seconds = args.seconds / args.api_rounds
                    cpu_before = server_cpu_seconds(site)
                    run = load(site.base + SEARCH, "POST", token, SEARCH_BODY, seconds, args.connections)
                    run["cpu"] = server_cpu_seconds(site) - cpu_before
                    runs[side].append(run)
        finally:
            for site in servers.values():
                site.stop()
        reader = connect(servers["on"].env["OAM_STORE_URL"], record_activity=False)
        try:
            recorded = reader.activity_counts(kind="search").total
        finally:
            reader.close()
    figures = {side: summary(side_runs) for side, side_runs in runs.items()}
    for side, side_runs in runs.items():
        # The CPU was measured over each run's warm-up too: its requests are counted at the run's rate.
        served = sum(len(run["latencies"]) * (1 + WARMUP_SECONDS / run["elapsed"]) for run in side_runs)
        figures[side]["cpu_ms"] = 1000 * sum(run["cpu"] for run in side_runs) / served
    # Each round's two runs are back to back: the median of their ratios is steadier than the
    # totals' when the machine's load changes during the run.
    paired = [rate(on) / rate(off) for on, off in zip(runs["on"], runs["off"], strict=True)]
    ratio = statistics.median(paired)
    errors = figures["on"]["errors"] + figures["off"]["errors"]
    load_average = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(
        f"activity (b): the 'on' server recorded {recorded:,} searches for {figures['on']['requests']:,} measured "
        f"requests (and the warm-ups); non-2xx answers: {errors}; on/off per round: "
        f"{', '.join(f'{value:.2f}' for value in paired)}; load average after the run: {load_average} on "
        f"{os.cpu_count()} cores",
        file=sys.stderr,
    )
    passed = ratio >= THROUGHPUT_TARGET and not errors
    print(
        f"{'PASS' if passed else 'FAIL'} activity (b): POST {SEARCH} recording on {figures['on']['rps']:.1f} req/s "
        f"(p50 {figures['on']['p50']:.1f} ms), off {figures['off']['rps']:.1f} req/s (p50 {figures['off']['p50']:.1f} "
        f"ms), ratio {ratio:.3f}x, the median of {len(paired)} rounds' (target >= {THROUGHPUT_TARGET}x); server CPU "
        f"per request on {figures['on']['cpu_ms']:.2f} ms, off {figures['off']['cpu_ms']:.2f} ms; gunicorn "
        f"{args.workers} sync workers, {args.connections} connections, {args.seconds:.0f} s per side, "
        f"{args.memories:,} memories"
    )
    return ratio


def rate(run: dict) -> float:
    """Requests per second of one load run."""
    return len(run["latencies"]) / run["elapsed"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000, help="memories of the in-process store")
    parser.add_argument("--rounds", type=int, default=10, help="interleaved rounds per side, in process")
    parser.add_argument("--queries", type=int, default=200, help="searches per side per round, in process")
    parser.add_argument("--profile", action="store_true", help=f"also cProfile {PROFILED} recorded searches")
    parser.add_argument("--memories", type=int, default=2_000, help="memories of the served store")
    parser.add_argument("--seconds", type=float, default=32.0, help="load per side, over all rounds")
    parser.add_argument("--api-rounds", type=int, default=8, help="interleaved rounds per side, under load")
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip-api", action="store_true", help="run part (a) only")
    args = parser.parse_args()
    in_process(args)
    if not args.skip_api:
        under_load(args)


if __name__ == "__main__":
    main()
