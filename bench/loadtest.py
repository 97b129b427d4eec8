"""`make loadtest`: the site under a bounded load on loopback, with the figures a deployment asks for.

Seeds a temporary store with --memories memories (over 50 users, through the engine) and a
temporary Django database (manage.py migrate, oam_user, oam_token: a curator and their API token),
serves them with gunicorn (--workers sync workers, --threads 1; bench/_gunicorn.py, the site's
settings over the temporary database), then runs locust headless for --seconds with --users
simulated curators (bench/_locustfile.py: API search, API memory lists, API edits, API create and
delete, and the dashboard's memory browser and search pages with a session), each sending its
next request as soon as the last is answered.

It prints, per endpoint, the requests, the errors (any unexpected status), the median (p50) and
p99 latency and the requests per second; then each server process's peak resident memory
(VmHWM from /proc, read just before the server stops). It exits with status 1 if any request
failed or the server logged an error (a traceback, "database is locked"): the target is zero.

The load and the server share this machine's cores, so the latencies are of this machine under
this load, not a capacity plan.

    python bench/loadtest.py [--seconds 60] [--memories 2000] [--users 4] [--workers 2] [--api-rate 3000/minute]
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._gunicorn import ROOT, Site, password_of

USERS_SEEDED = 50
LOGIN = "loadtest"


def run_locust(site: Site, token: str, args: argparse.Namespace, prefix: Path) -> subprocess.CompletedProcess:
    session = site.session(LOGIN, password_of(LOGIN))
    session_id = session.cookies["sessionid"]
    session.close()
    env = {
        **site.env,
        "OAM_LOADTEST_TOKEN": token,
        "OAM_LOADTEST_SESSION": session_id,
        "OAM_LOADTEST_USERS": str(USERS_SEEDED),
        "OAM_LOADTEST_MEMORIES": str(args.memories),
    }
    seconds, users = args.seconds, args.users
    command = [sys.executable, "-m", "locust", "-f", str(ROOT / "bench" / "_locustfile.py"), "--headless"]
    command += ["--users", str(users), "--spawn-rate", str(users), "--run-time", f"{max(1, round(seconds))}s"]
    command += ["--host", site.base, "--csv", str(prefix), "--only-summary", "--stop-timeout", "30"]
    command += ["--loglevel", "WARNING", "--exit-code-on-error", "0"]
    return subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=seconds + 300)


def read_stats(prefix: Path) -> list[dict[str, str]]:
    with open(f"{prefix}_stats.csv", newline="") as file:
        return list(csv.DictReader(file))


def report(rows: list[dict[str, str]], peaks: dict[int, int], master: int, args: argparse.Namespace) -> int:
    """Print the figures; the number of failed requests."""
    print(f"{'endpoint':<24} {'requests':>9} {'errors':>7} {'p50 ms':>7} {'p99 ms':>7} {'req/s':>7}")
    failed = 0
    for row in rows:
        name = "all requests" if row["Name"] == "Aggregated" else row["Name"]
        if row["Name"] == "Aggregated":
            failed = int(row["Failure Count"])
        print(
            f"{name:<24} {int(row['Request Count']):>9} {int(row['Failure Count']):>7} {row['50%']:>7} "
            f"{row['99%']:>7} {float(row['Requests/s']):>7.1f}"
        )
    mib = 1024 * 1024
    parts = ", ".join(
        f"{'master' if pid == master else 'worker'} {peak / mib:.0f} MiB" for pid, peak in sorted(peaks.items())
    )
    print(f"server peak memory (VmHWM): {parts}; together {sum(peaks.values()) / mib:.0f} MiB")
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(
        f"gunicorn {args.workers} sync workers, {args.users} locust users without think time, {args.seconds:.0f} s, "
        f"{args.memories:,} memories over {USERS_SEEDED} users; this machine's load average after the run: {load} "
        f"on {os.cpu_count()} cores"
    )
    return failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--memories", type=int, default=2_000)
    parser.add_argument("--users", type=int, default=4, help="simulated curators, each one request at a time")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--api-rate", default="1000000/second", help="the API's rate limits (OAM_API_TOKEN_RATE and _USER_RATE)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        site = Site(Path(directory), throttle_rate=args.api_rate)
        token = site.make_curator(LOGIN)
        started = time.perf_counter()
        site.seed_memories(args.memories, USERS_SEEDED)
        print(f"loadtest: {args.memories:,} memories seeded in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        try:
            site.serve(workers=args.workers)
            locust = run_locust(site, token, args, Path(directory) / "locust")
            peaks, master = site.peak_rss(), site.server.pid
        finally:
            site.stop()
        if locust.returncode:
            print(f"loadtest: locust exited with {locust.returncode}:\n{locust.stderr[-3000:]}", file=sys.stderr)
            sys.exit(1)
        failed = report(read_stats(Path(directory) / "locust"), peaks, master, args)
        failures = Path(f"{Path(directory) / 'locust'}_failures.csv")
        if failed and failures.exists():
            print(f"loadtest: failures:\n{failures.read_text()[-3000:]}", file=sys.stderr)
        log = site.log()
        server_errors = re.findall(r"Traceback|database is locked|\bERROR\b", log)
        if server_errors:
            print(f"loadtest: the server logged errors:\n{log[-3000:]}", file=sys.stderr)
    passed = not failed and not server_errors
    print(
        f"{'PASS' if passed else 'FAIL'} loadtest: {failed} failed requests, {len(server_errors)} server errors logged"
    )
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
