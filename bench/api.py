"""The REST API under load: requests per second and p99 latency of `GET /api/v1/memories/` (a page
of 50) and `POST /api/v1/search/`, against a trivial DRF endpoint in the same run.

Seeds a temporary store with --memories memories (over 50 users, through the engine as an agent
writes them) and a temporary Django database (migrated; a curator and their API token, made by
manage.py oam_user and oam_token), then serves the site with gunicorn (--workers sync workers, as
`gunicorn oam_site.wsgi` would) on a free loopback port (bench/_gunicorn.py), with
bench/_api_settings.py: the site's settings and URLs plus the baseline at /bench/trivial/, an
APIView with the API's authentication, permission and throttles that answers a constant (it never
ships). Another process loads each endpoint for
--seconds seconds over --connections connections (httpx, a thread each) after a warm-up, and
reports every request's latency; the endpoints take turns, in --rounds rounds, so that a machine
getting busier or quieter weighs on each alike. Target: the memory list at >= 0.5x the trivial
endpoint's requests per second.

Both the server and the load share this machine's cores: the figures are for comparing endpoints
in one run, not for capacity planning. POST /api/v1/search/ is skipped, with a message, on a
branch that has no such route yet.

    python bench/api.py [--memories 2000] [--seconds 10] [--rounds 2] [--connections 4] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._gunicorn import Site

RATIO_TARGET = 0.5
WARMUP_SECONDS = 1.0
USERS = 50
PAGE = 50
SEARCH_BODY = {"query": "window seats for the flight", "user_id": "user-3"}
TRIVIAL = "trivial DRF endpoint"
LISTING = f"GET memories (page of {PAGE})"
SEARCH = "POST search"

LOAD = r"""
import json, sys, threading, time
import httpx
url, method, token, body, seconds, warmup, connections = sys.argv[1:8]
seconds, warmup, connections = float(seconds), float(warmup), int(connections)
body = json.loads(body) if body else None
headers = {"Authorization": f"Bearer {token}"}
latencies, statuses, lock = [], {}, threading.Lock()

def run(until, record):
    with httpx.Client(headers=headers, timeout=30) as client:
        while True:
            start = time.perf_counter()
            if start >= until:
                return
            response = client.request(method, url, json=body)
            took = time.perf_counter() - start
            if record:
                with lock:
                    latencies.append(took)
                    statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

for phase, length in (("warmup", warmup), ("measure", seconds)):
    started = time.perf_counter()
    threads = [threading.Thread(target=run, args=(started + length, phase == "measure")) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
elapsed = time.perf_counter() - started
print(json.dumps({"latencies": latencies, "statuses": statuses, "elapsed": elapsed}))
"""


def has_route(path: str, method: str) -> bool:
    """Whether this branch routes `method path` (asked of Django in this process, with the site's settings)."""
    import django

    django.setup()
    from django.urls import Resolver404, resolve

    try:
        match = resolve(path)
    except Resolver404:
        return False
    view_class = getattr(match.func, "view_class", None)
    return view_class is None or hasattr(view_class, method.lower())


def load(url: str, method: str, token: str, body: dict | None, seconds: float, connections: int) -> dict:
    """Load `url` from another process: its latencies (s), statuses and elapsed time."""
    arguments = [url, method, token, json.dumps(body) if body else "", seconds, WARMUP_SECONDS, connections]
    output = subprocess.run(
        [sys.executable, "-c", LOAD, *map(str, arguments)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(output)


def summary(runs: list[dict]) -> dict:
    """The rounds of one endpoint together: requests per second, p50 and p99 (ms), non-2xx."""
    latencies = sorted(latency for run in runs for latency in run["latencies"])
    statuses = [(status, count) for run in runs for status, count in run["statuses"].items()]
    return {
        "rps": len(latencies) / sum(run["elapsed"] for run in runs),
        "p50": latencies[len(latencies) // 2] * 1000,
        "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000,
        "requests": len(latencies),
        "errors": sum(count for status, count in statuses if not status.startswith("2")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=2_000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        site = Site(Path(directory))
        os.environ.update(site.env)
        token = site.make_curator("bench-curator")
        started = time.perf_counter()
        site.seed_memories(args.memories, USERS)
        print(f"api: {args.memories:,} memories seeded in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        endpoints = {
            TRIVIAL: ("GET", "/bench/trivial/", None),
            LISTING: ("GET", f"/api/v1/memories/?limit={PAGE}", None),
            SEARCH: ("POST", "/api/v1/search/", SEARCH_BODY),
        }
        if not has_route("/api/v1/search/", "POST"):
            print("api: POST /api/v1/search/ is not routed on this branch: skipped", file=sys.stderr)
            del endpoints[SEARCH]
        runs: dict[str, list[dict]] = {name: [] for name in endpoints}
        try:
            site.serve(workers=args.workers)
            # Rounds, each endpoint in turn: a machine that gets busier or quieter during the run
            # weighs on every endpoint alike.
            for _ in range(args.rounds):
                for name, (method, path, body) in endpoints.items():
                    runs[name].append(
                        load(site.base + path, method, token, body, args.seconds / args.rounds, args.connections)
                    )
        finally:
            site.stop()
    report({name: summary(endpoint_runs) for name, endpoint_runs in runs.items()}, args)


def report(results: dict[str, dict], args: argparse.Namespace) -> None:
    baseline = results[TRIVIAL]
    print(
        f"{'endpoint':<26} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'requests':>9} {'non-2xx':>8} {'vs trivial':>11}"
    )
    for name, row in results.items():
        print(
            f"{name:<26} {row['rps']:>8.0f} {row['p50']:>8.1f} {row['p99']:>8.1f} {row['requests']:>9} "
            f"{row['errors']:>8} {row['rps'] / baseline['rps']:>10.2f}x"
        )
    for name, row in results.items():
        if row["errors"]:
            print(
                f"api: {name} answered {row['errors']} non-2xx responses: its figures are not of the work",
                file=sys.stderr,
            )
    listing = results[LISTING]
    ratio = listing["rps"] / baseline["rps"]
    passed = ratio >= RATIO_TARGET and listing["errors"] == 0
    print(
        f"{'PASS' if passed else 'FAIL'} api: the memory list serves {listing['rps']:.0f} req/s, {ratio:.2f}x the "
        f"trivial endpoint's {baseline['rps']:.0f} (target >= {RATIO_TARGET}x), p99 {listing['p99']:.1f} ms; "
        f"gunicorn {args.workers} sync workers, {args.connections} connections, {args.seconds:.0f} s per endpoint "
        f"in {args.rounds} rounds, {args.memories:,} memories"
    )


if __name__ == "__main__":
    main()
