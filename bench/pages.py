"""Dashboard pages at scale: every list and detail page, timed server-side, against a trivial view.

Seeds a temporary store with 100k memories over 1k users and 10k threads (two messages each,
links between some memories, a few hundred curation-history entries), then requests each page
with Django's test client (the whole stack: middleware, session, engine calls, templates) and
times p50 and p95 over --requests requests, after a warm-up. The baseline is a trivial view behind
the same middleware and login, in the same run. Targets: every page p95 <= 100 ms and <= 10x the
trivial view's p95.

The verdict is on every list and detail page as it opens; listings with filters are timed too and
those over target named (a metadata or text filter that few rows match reads the table through).
Prints one summary line on stdout and a table of every page on stderr (* marks one over target).
`--profile PAGE` (a name of the table, such as overview) also tells where that page's time goes,
before the table: the store's statements of one request, slowest first, and cProfile's busiest
functions over --requests requests.

    python bench/pages.py [--memories 100000] [--users 1000] [--threads 10000] [--requests 50]
                          [--profile PAGE]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

P95_TARGET_MS = 100.0
RATIO_TARGET = 10.0
WARMUP = 5
BATCH = 2000
DIM = 384
TYPES = ("fact", "preference", "guideline", "memory")


def configure(store_path: Path) -> None:
    """Django over a temporary memory store and an in-memory test database (never var/)."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "oam_site.settings"
    os.environ["OAM_STORE_URL"] = f"sqlite://{store_path}"
    import django
    from django.conf import settings

    django.setup()
    settings.ROOT_URLCONF = __name__  # the site's URLs plus the trivial baseline view below
    settings.ALLOWED_HOSTS = ["testserver"]
    from django.db import connection
    from django.urls import include, path

    urlpatterns[:] = [path("bench/trivial/", trivial), path("", include("oam_site.urls"))]
    # A test database, but not the test runner's instrumented template rendering (which copies
    # every template's context for assertions): pages are timed as they render in production.
    connection.creation.create_test_db(verbosity=0)


def trivial(request):
    """The baseline: a page behind the same middleware and role check that renders nothing."""
    from django.http import HttpResponse

    from memory.web.access import viewer_required

    return viewer_required(lambda request: HttpResponse("ok"))(request)


urlpatterns: list = []
"""This module is the ROOT_URLCONF of the run: filled by configure(), once Django is set up."""


def seed(memories: int, users: int, threads: int) -> dict[str, str]:
    """Write the store through the engine's store API, with random vectors (embedding 100k texts
    is not what this measures). Returns ids of records the detail pages show."""
    from memory.services import get_agent_memory

    agent_memory = get_agent_memory()
    store = agent_memory.store
    rng = np.random.default_rng(7)
    started = time.perf_counter()
    thread_ids = [f"thread-{n}" for n in range(threads)]
    owner = {thread_id: f"user-{n % users}" for n, thread_id in enumerate(thread_ids)}
    for first in range(0, threads, BATCH // 2):
        chunk = thread_ids[first : first + BATCH // 2]
        rows = [(t, role) for t in chunk for role in ("user", "assistant")]
        store.add(
            [f"{role} says hello in {t}" for t, role in rows],
            "message",
            embeddings=unit_rows(rng, len(rows)),
            thread_ids=[t for t, _ in rows],
            user_ids=[owner[t] for t, _ in rows],
            agent_ids=[f"agent-{int(t.split('-')[1]) % 20}" for t, _ in rows],
            roles=[role for _, role in rows],
        )
    ids = [f"memory-{n}" for n in range(memories)]
    for first in range(0, memories, BATCH):
        chunk = range(first, min(first + BATCH, memories))
        store_type = TYPES[(first // BATCH) % len(TYPES)]  # one type per batch, as `add` wants
        store.add(
            [f"memory {n} of user {n % users}: likes item {n % 97} and place {n % 13}" for n in chunk],
            store_type,
            embeddings=unit_rows(rng, len(chunk)),
            record_ids=[ids[n] for n in chunk],
            user_ids=[f"user-{n % users}" for n in chunk],
            thread_ids=[thread_ids[n % threads] for n in chunk],
            agent_ids=[f"agent-{n % 20}" for n in chunk],
            metadata=[{"source": "bench", "n": n, "tags": [f"t{n % 5}"]} for n in chunk],
            statuses=["invalid" if n % 50 == 0 else "valid" for n in chunk],
        )
    for user in range(min(users, 200)):
        agent_memory.add_user(f"user-{user}", f"Profile of user {user}.")
    links = [
        {
            "source_record_id": ids[n + 1],
            "source_record_type": TYPES[((n + 1) // BATCH) % len(TYPES)],
            "target_record_id": ids[n],
            "target_record_type": TYPES[(n // BATCH) % len(TYPES)],
            "relation_type": "supersedes" if n % 4 else "supports",
        }
        for n in range(0, min(memories - 1, 10_000), 2)
    ]
    store.add_relations(links)
    history_entries(agent_memory, ids[:300])
    print(f"seeded in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return {"memory": ids[10], "thread": thread_ids[3], "user": "user-3", "agent": "agent-3"}


def history_entries(agent_memory, memory_ids: list[str]) -> None:
    from django.contrib.auth.models import User

    from memory.curation import Actor, Curation
    from memory.web.access import grant_role

    curator = User.objects.create_user("bench-curator", password="x")
    grant_role(curator, "curator")
    curation = Curation(agent_memory, Actor(curator))
    for memory_id in memory_ids:
        record = agent_memory.get_memory(memory_id)
        curation.update_memory(memory_id, version=record.version, metadata={**(record.metadata or {}), "seen": True})


def unit_rows(rng: np.random.Generator, count: int) -> np.ndarray:
    matrix = rng.standard_normal((count, DIM)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def pages(ids: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Every list and detail page as it opens, and listings with filters (the same pages with
    query parameters, whose engine calls differ: some read the table through)."""
    from django.urls import reverse

    from memory.models import CurationEntry
    from memory.services import get_agent_memory
    from memory.web.filters import DEFAULT_PAGE_SIZE

    agent_memory = get_agent_memory()
    later = agent_memory.list_memories(limit=DEFAULT_PAGE_SIZE, newest_first=True).next_cursor
    [message] = agent_memory.list_thread_messages(ids["thread"], limit=1)
    threads, memories = reverse("memory:thread_list"), reverse("memory:memory_list")
    plain = {
        "overview": reverse("memory:overview"),
        "threads": threads,
        "thread": reverse("memory:thread_detail", args=[ids["thread"]]),
        "message": reverse("memory:message_detail", args=[ids["thread"], message.id]),
        "memories": memories,
        "memory": reverse("memory:memory_detail", args=[ids["memory"]]),
        "memory edit form": reverse("memory:memory_edit", args=[ids["memory"]]),
        "users": reverse("memory:user_list"),
        "user": reverse("memory:user_detail", args=[ids["user"]]),
        "agents": reverse("memory:agent_list"),
        "agent": reverse("memory:agent_detail", args=[ids["agent"]]),
        "history": reverse("memory:history"),
        "history entry": reverse("memory:history_entry", args=[CurationEntry.objects.first().pk]),
    }
    filtered = {
        "threads of a user": f"{threads}?user_id={ids['user']}",
        "threads, text": f"{threads}?q=thread-42",
        "memories, next page": f"{memories}?cursor={later}",
        "memories of a user": f"{memories}?user_id={ids['user']}",
        "memories, type + invalid": f"{memories}?memory_type=fact&status=invalid",
        "memories, oldest first": f"{memories}?order=oldest",
        "memories, text": f"{memories}?q=item+42+and",
        "memories, metadata filter": f"{memories}?metadata_filter=%7B%22n%22%3A+77%7D",
    }
    return plain, filtered


def timed(client, url: str, requests: int) -> tuple[float, float]:
    for _ in range(WARMUP):
        assert client.get(url).status_code == 200, url
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, url
    return float(np.percentile(times, 50)), float(np.percentile(times, 95))


def profile(client, url: str, requests: int) -> None:
    """Where a page's time goes: its store statements in one request (slowest first), then
    cProfile over `requests` requests (its own overhead included: compare, do not add up)."""
    from memory.services import get_agent_memory

    store = get_agent_memory().store
    statements: list[tuple[float, str]] = []
    fetch = store._fetch

    def timed_fetch(sql, params=None, cursor=None):
        started = time.perf_counter()
        try:
            return fetch(sql, params, cursor)
        finally:
            statements.append(((time.perf_counter() - started) * 1000, " ".join(sql.split())))

    store._fetch = timed_fetch
    try:
        started = time.perf_counter()
        client.get(url)
        total = (time.perf_counter() - started) * 1000
    finally:
        del store._fetch
    print(
        f"\n{url}: one request {total:.1f} ms, {len(statements)} store statements "
        f"{sum(ms for ms, _ in statements):.1f} ms:",
        file=sys.stderr,
    )
    for ms, sql in sorted(statements, reverse=True)[:12]:
        print(f"{ms:8.2f} ms  {sql[:150]}", file=sys.stderr)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(requests):
        client.get(url)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(30)
    print(out.getvalue(), file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=1_000)
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--profile", metavar="PAGE", help="tell where this page's time goes (a name in the table)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        configure(Path(directory) / "memory.sqlite3")
        from django.contrib.auth.models import User
        from django.test import Client

        from memory.web.access import grant_role

        ids = seed(args.memories, args.users, args.threads)
        reader = User.objects.create_user("bench-reader", password="x")
        grant_role(reader, "curator")  # who sees every page, the edit forms included
        client = Client()
        client.force_login(reader)
        baseline = timed(client, "/bench/trivial/", args.requests)
        plain, filtered = pages(ids)
        if args.profile and args.profile not in {**plain, **filtered}:
            parser.error(f"--profile: no page named {args.profile!r} (one of {', '.join({**plain, **filtered})})")
        results = {name: timed(client, url, args.requests) for name, url in plain.items()}
        variants = {name: timed(client, url, args.requests) for name, url in filtered.items()}
        if args.profile:
            profile(client, {**plain, **filtered}[args.profile], args.requests)
    print(f"{'page':<28} {'p50 ms':>8} {'p95 ms':>8} {'p95 / trivial':>14}", file=sys.stderr)
    print(f"{'trivial view (baseline)':<28} {baseline[0]:>8.1f} {baseline[1]:>8.1f}", file=sys.stderr)
    for name, (p50, p95) in {**results, **variants}.items():
        mark = " " if passes(p95, baseline[1]) else "*"
        print(f"{name:<28} {p50:>8.1f} {p95:>8.1f} {p95 / baseline[1]:>13.1f}x{mark}", file=sys.stderr)
    slowest, (_, worst) = max(results.items(), key=lambda item: item[1][1])
    missed = [name for name, (_, p95) in variants.items() if not passes(p95, baseline[1])]
    verdict = "PASS" if all(passes(p95, baseline[1]) for _, p95 in results.values()) else "FAIL"
    print(
        f"{verdict} pages: slowest p95 {worst:.1f} ms ({slowest}), {worst / baseline[1]:.1f}x the trivial view's "
        f"{baseline[1]:.1f} ms (targets <= {P95_TARGET_MS:.0f} ms and <= {RATIO_TARGET:.0f}x); filtered listings "
        f"over target: {', '.join(missed) or 'none'}; {args.memories:,} memories, {args.users:,} users, "
        f"{args.threads:,} threads"
    )


def passes(p95: float, baseline_p95: float) -> bool:
    return p95 <= P95_TARGET_MS and p95 <= RATIO_TARGET * baseline_p95


if __name__ == "__main__":
    main()
