"""One ranking from a vector ranking and a keyword ranking, the same for every backend.

A backend reads the top CANDIDATE_DEPTH of each ranking with its filters applied (in memory for
SQLite, in SQL for Oracle) and hands them here as (key, distance or score) lists.
"""

from __future__ import annotations

from ..types import SearchStrategy

RRF_K = 10
KEYWORD_WEIGHT = 2.0
"""Reciprocal rank fusion: score = 1/(K + vector rank) + KEYWORD_WEIGHT/(K + keyword rank).

Measured on the LoCoMo dev conversations with the default hashing embedder: K=60 with equal
weights (the textbook setting) let the embedder's noise drown the keyword ranking (recall@10
0.42); K=10 with the keyword ranking counted twice reached 0.75 together with the keyword
context of index/search_cache.py. Neighbouring settings score within 0.01.
"""
CANDIDATE_DEPTH = 100
"""How deep each ranking is read before fusion; results up to this k do not depend on k."""


def fuse_rankings(
    strategy: SearchStrategy, by_vector: list[tuple[int, float]], by_keyword: list[tuple[int, float]]
) -> list[tuple[int, float, dict[str, float | int]]]:
    """One ranking of (pk, distance, parts) from the vector and keyword rankings.

    Hybrid: reciprocal rank fusion, distance = 1 - score / best possible score. Keyword alone:
    the distance grows with the rank, as BM25 scores have no fixed scale.
    """
    parts: dict[int, dict[str, float | int]] = {}
    for rank, (pk, distance) in enumerate(by_vector, start=1):
        parts.setdefault(pk, {}).update(vector_rank=rank, vector_distance=distance)
    for rank, (pk, score) in enumerate(by_keyword, start=1):
        parts.setdefault(pk, {}).update(keyword_rank=rank, keyword_score=score)
    if strategy is SearchStrategy.VECTOR:
        return [(pk, distance, parts[pk]) for pk, distance in by_vector]
    if strategy is SearchStrategy.KEYWORD:
        return [(pk, rank / (rank + RRF_K), parts[pk]) for rank, (pk, _) in enumerate(by_keyword)]
    for found in parts.values():
        found["score"] = sum(
            weight / (RRF_K + found[key])
            for key, weight in (("vector_rank", 1.0), ("keyword_rank", KEYWORD_WEIGHT))
            if key in found
        )
    best = (1.0 + KEYWORD_WEIGHT) / (RRF_K + 1)
    ordered = sorted(parts.items(), key=lambda item: (-item[1]["score"], item[0]))
    return [(pk, 1.0 - found["score"] / best, found) for pk, found in ordered]
