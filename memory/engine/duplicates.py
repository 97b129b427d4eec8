"""Near-duplicate groups of memories, by vector math (MemoryStore.find_duplicates).

Two memories are near-duplicates when the cosine distance of their vectors is at most
`max_distance`; a group is a connected component of that relation (single linkage: each member
is that close to at least one other member, not necessarily to all). Everything here works on
whole arrays, never on pairs one at a time: the pairs come from blocks of a normalised matrix
product (or from the database, on Oracle), the components from label propagation with pointer
jumping, and each group's centre and distances from the group's own small distance matrix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

PAIR_BLOCK_CELLS = 8_000_000
"""Similarities computed at once (rows times columns of a block): about 32 MB of float32, so that
10k memories take a few blocks and 100k never hold a 100k by 100k matrix."""
MAX_PAIRS = 2_000_000
"""More near pairs than this (32 MB of indexes) is no set of duplicates but one topic: refused,
so that a loose threshold over a large, uniform store cannot exhaust memory."""
DISTANCE_TOLERANCE = 1e-6
"""Distances within this of `max_distance` count as within it: float32 vectors make 1 - x·y
miss an exact threshold by a few ulps (two identical texts give 1e-7, not 0)."""


@dataclass(frozen=True)
class RowGroup:
    """One group as rows of the compared set: the centre first, then by distance to it."""

    rows: np.ndarray
    distances: np.ndarray

    @property
    def spread(self) -> float:
        """The largest distance of a member to the centre: how loose the group is."""
        return float(self.distances.max())


def similar_pairs(units: np.ndarray, max_distance: float) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of rows (i < j) of unit vectors within `max_distance` of each other, as two
    index arrays, from the upper triangle of units @ units.T computed in row blocks."""
    n = len(units)
    if n < 2:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    floor = np.float32(1.0 - max_distance - DISTANCE_TOLERANCE)
    block = max(1, PAIR_BLOCK_CELLS // n)
    firsts, seconds, found = [], [], 0
    for start in range(0, n - 1, block):
        stop = min(start + block, n)
        # Only columns from `start` on: the pairs of earlier columns were found by earlier blocks.
        similarity = units[start:stop] @ units[start:].T
        close = similarity >= floor
        # Within the block's own square, keep j > i only (drops i == j and each pair's mirror).
        close[:, : stop - start] &= np.triu(np.ones((stop - start, stop - start), dtype=bool), k=1)
        rows, columns = np.nonzero(close)
        found += len(rows)
        check_pair_count(found, max_distance)
        firsts.append(rows + start)
        seconds.append(columns + start)
    return np.concatenate(firsts).astype(np.int64), np.concatenate(seconds).astype(np.int64)


def check_pair_count(pairs: int, max_distance: float) -> None:
    """Refuse more than MAX_PAIRS near pairs (ValueError naming max_distance)."""
    if pairs > MAX_PAIRS:
        raise ValueError(
            f"max_distance {max_distance} makes more than {MAX_PAIRS:,} pairs of these memories near-duplicates: "
            "lower it"
        )


def components(n: int, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """A component label per row (its smallest row number) for the graph of these edges.

    Each round hooks every edge's larger root onto the smaller one and then flattens the trees
    by pointer jumping, until every edge joins two rows of the same label: a few rounds, each a
    handful of array operations over all edges at once.
    """
    labels = np.arange(n, dtype=np.int64)
    if len(first) == 0:
        return labels
    while True:
        low = np.minimum(labels[first], labels[second])
        np.minimum.at(labels, labels[first], low)
        np.minimum.at(labels, labels[second], low)
        while True:
            jumped = labels[labels]
            if np.array_equal(jumped, labels):
                break
            labels = jumped
        if np.array_equal(labels[first], labels[second]):
            return labels


def count_groups(first: np.ndarray, second: np.ndarray) -> int:
    """How many groups (components of two rows or more) these pairs of rows make: group_rows'
    number, without their centres."""
    if len(first) == 0:
        return 0
    rows, local = np.unique(np.concatenate([first, second]), return_inverse=True)
    labels = components(len(rows), local[: len(first)], local[len(first) :])
    return len(np.unique(labels))


def group_rows(units: np.ndarray, first: np.ndarray, second: np.ndarray) -> list[RowGroup]:
    """The groups (components of two rows or more) of these pairs, each with its centre: the
    member with the least total distance to the others (ties to the lower row: the older
    memory), and each member's distance to it. Ordered tightest first (smallest spread), then
    larger first, then by the centre's row."""
    if len(first) == 0:
        return []
    labels = components(len(units), first, second)
    members = np.unique(np.concatenate([first, second]))
    order = np.argsort(labels[members], kind="stable")
    members = members[order]
    starts = np.flatnonzero(np.r_[True, np.diff(labels[members]) != 0])
    groups = []
    for rows in np.split(members, starts[1:]):
        vectors = units[rows]
        # Total distance to the others without the group's square matrix: sum_j (1 - x.y_j) = n - x.sum_j y_j.
        totals = len(rows) - vectors @ vectors.sum(axis=0)
        centre = int(np.argmin(np.round(totals, 5)))  # argmin takes the first (older) of equals
        to_centre = np.clip(1.0 - vectors @ vectors[centre], 0.0, 2.0)
        to_centre[centre] = 0.0  # not float32's 6e-8
        ranked = np.lexsort((rows, np.round(to_centre, 6)))  # float32 noise is no order: the older first
        ranked = np.r_[centre, ranked[ranked != centre]]
        groups.append(RowGroup(rows[ranked], to_centre[ranked]))
    groups.sort(key=lambda group: (round(group.spread, 6), -len(group.rows), int(group.rows[0])))
    return groups


def unit_rows(blobs: Sequence[bytes], dim: int) -> np.ndarray:
    """A matrix of unit vectors from stored float32 vectors (SQLite's blobs, Oracle's arrays)."""
    if not blobs:
        return np.empty((0, dim), dtype=np.float32)
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dim)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
