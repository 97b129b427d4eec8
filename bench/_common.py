"""What the benchmark scripts share (the leading underscore keeps `make bench` from running it)."""

from __future__ import annotations

import cProfile
import pstats
import sys
from collections.abc import Callable


def profile(label: str, search: Callable[[int], object], queries: int, warmup: int) -> None:
    """cProfile 20 calls of `search(i)` after a warm-up; the top 10 by cumulative time go to stderr."""
    for i in range(min(warmup, queries)):
        search(i)
    profiler = cProfile.Profile()
    profiler.enable()
    for i in range(20):
        search(i % queries)
    profiler.disable()
    print(f"-- profile: 20 searches, {label}, top 10 by cumulative time", file=sys.stderr)
    pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(10)
