"""The search workbench's server time against the bare engine call, in the same run.

Seeds 100k memories over 1k users and 10k threads (as bench/pages.py does), then, query by query
and interleaved so both sides share the machine's noise, times `AgentMemory.search(q,
user_id=...)` alone and `/search/?q=...&user_id=...` through Django's test client (middleware,
session, the form, the same engine call, formatting each result as an agent receives it, the
template). Target: the page's p50 and p95 within 1.5x the engine call's + 5 ms. In the same store,
a user's link graph of 2,000 memories and 5,000 links is then served as /graph/data/ (with the
layout cache emptied before each request, as bench/graph_page.py does): target p95 <= 300 ms.

Prints one summary line on stdout and the figures on stderr.

    python bench/search_page.py [--memories 100000] [--users 1000] [--threads 10000] [--queries 50]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from graph_page import TARGET_MS as GRAPH_TARGET_MS
from graph_page import measure as measure_graph
from pages import configure, seed

RATIO, MARGIN_MS = 1.5, 5.0
WORDS = ("item", "place", "likes", "memory", "user")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=1_000)
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        configure(Path(directory) / "memory.sqlite3")
        from django.contrib.auth.models import User
        from django.test import Client

        from memory.services import get_agent_memory
        from memory.web.access import grant_role

        seed(args.memories, args.users, args.threads)
        agent_memory = get_agent_memory()
        reader = User.objects.create_user("bench-reader", password="x")
        grant_role(reader, "viewer")
        client = Client()
        client.force_login(reader)
        rng = np.random.default_rng(3)
        queries = [
            (
                f"{WORDS[i % len(WORDS)]} {rng.integers(0, 97)} place {rng.integers(0, 13)}",
                f"user-{rng.integers(0, args.users)}",
            )
            for i in range(args.queries)
        ]
        for query, user in queries[:5]:  # warm-up: caches, the index's first catch-up
            agent_memory.search(query, user_id=user)
            client.get("/search/", {"q": query, "user_id": user})
        engine_ms, page_ms = [], []
        for query, user in queries:
            started = time.perf_counter()
            agent_memory.search(query, user_id=user)
            engine_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            response = client.get("/search/", {"q": query, "user_id": user})
            page_ms.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, response.content[:500]
        from tests.web.world import build_link_graph

        build_link_graph(agent_memory, 2_000, 5_000, user_id="graph-user")
        graph = measure_graph(client, "graph-user", 20)
    verdicts = []
    for label in ("p50", "p95"):
        quantile = 50 if label == "p50" else 95
        engine, page = np.percentile(engine_ms, quantile), np.percentile(page_ms, quantile)
        bound = RATIO * engine + MARGIN_MS
        verdicts.append((label, engine, page, bound))
        print(f"{label}: engine {engine:.1f} ms, page {page:.1f} ms (target <= {bound:.1f} ms)", file=sys.stderr)
    graph_p50, graph_p95 = graph["cold"]
    print(
        f"graph JSON: p50 {graph_p50:.0f} ms, p95 {graph_p95:.0f} ms (target p95 <= {GRAPH_TARGET_MS:.0f})",
        file=sys.stderr,
    )
    passed = all(page <= bound for _, _, page, bound in verdicts) and graph_p95 <= GRAPH_TARGET_MS
    summary = "; ".join(f"{label} page {page:.1f} ms vs engine {engine:.1f} ms" for label, engine, page, _ in verdicts)
    print(
        f"{'PASS' if passed else 'FAIL'} search page: {summary} (target <= {RATIO}x engine + {MARGIN_MS:.0f} ms), "
        f"{args.memories:,} memories; graph JSON of {graph['nodes'][0]:,} nodes / {graph['nodes'][1]:,} links "
        f"p95 {graph_p95:.0f} ms (target <= {GRAPH_TARGET_MS:.0f} ms)"
    )


if __name__ == "__main__":
    main()
