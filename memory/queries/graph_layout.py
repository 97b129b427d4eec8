"""Positions for the link graph, computed once on the server so that the browser only draws.

A force-directed layout (Fruchterman and Reingold's forces, links pulling more gently: a link
pulls as d²/(8k), every pair of nodes pushes apart as k²/d, a pull to the centre keeps separate
components together),
vectorised with NumPy: the pairwise push is computed on a grid, as in particle-mesh N-body codes
(node weights spread bilinearly on a G-by-G grid, convolved with the k²/d field by FFT, read back
bilinearly at each node), so an iteration costs O(n + edges + G² log G) rather than O(n²).

Deterministic: a node starts where a hash of its id puts it, and the same nodes and links always
give the same positions (and are cached, keyed by them). Units: `IDEAL_LENGTH` is the length a
link settles near, the same for every graph, so that the neighbourhood fetched when a node is
expanded has the scale of the graph it is merged into.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from threading import Lock

import numpy as np

IDEAL_LENGTH = 40.0
ITERATIONS = 100
GRAVITY = 4.0
"""The pull to the centre, GRAVITY·offset: with the k²/d push, n nodes alone would fill a disc of
radius k·√(n/GRAVITY) evenly (2-D electrostatics in a harmonic well), and a node linked to nothing
settles at its rim rather than drifting off."""
LINK_PULL = 1 / 8
"""How hard a link pulls, LINK_PULL·d²/k. Fruchterman and Reingold's 1 drew links much shorter than
the space between memories (a small graph's links settled near 0.75k among their neighbours):
too short for a relation's label between its memories' labels, which static/js/graph.js draws at
one size on screen. An eighth settles them near k (a link alone at 2k, ∛8), and with GRAVITY
doubled the disc is a third smaller: a small graph's links come out about 60% longer on screen."""
CACHE_SIZE = 32

_cache: OrderedDict[str, np.ndarray] = OrderedDict()
_cache_lock = Lock()


def layout(node_ids: Sequence[str], edges: Sequence[tuple[str, str]]) -> np.ndarray:
    """(n, 2) positions for `node_ids`, in their order, given `edges` as (source id, target id)
    pairs (links to ids not among the nodes are ignored). Cached by nodes and links."""
    key = _key(node_ids, edges)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key].copy()
    positions = compute(node_ids, edges)
    with _cache_lock:
        _cache[key] = positions
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return positions.copy()


def _key(node_ids: Sequence[str], edges: Sequence[tuple[str, str]]) -> str:
    digest = hashlib.blake2b(digest_size=16)
    digest.update("\x00".join(node_ids).encode())
    digest.update(b"\x01")
    digest.update("\x00".join(f"{source}\x02{target}" for source, target in edges).encode())
    return digest.hexdigest()


def seed_positions(node_ids: Sequence[str], spread: float) -> np.ndarray:
    """Where each node starts: two numbers from a hash of its id, in a square of side `spread`."""
    raw = b"".join(hashlib.blake2b(node_id.encode(), digest_size=8).digest() for node_id in node_ids)
    values = np.frombuffer(raw, dtype="<u4").reshape(-1, 2).astype(np.float64)
    return (values / 2**32 - 0.5) * spread


def compute(node_ids: Sequence[str], edges: Sequence[tuple[str, str]], iterations: int = ITERATIONS) -> np.ndarray:
    n = len(node_ids)
    if n == 0:
        return np.zeros((0, 2))
    if n == 1:
        return np.zeros((1, 2))
    index = {node_id: i for i, node_id in enumerate(node_ids)}
    pairs = [(index[s], index[t]) for s, t in edges if s in index and t in index and s != t]
    sources = np.fromiter((s for s, _ in pairs), dtype=np.intp, count=len(pairs))
    targets = np.fromiter((t for _, t in pairs), dtype=np.intp, count=len(pairs))
    k = IDEAL_LENGTH
    positions = seed_positions(node_ids, k * np.sqrt(n))
    grid = int(np.clip(2 ** np.ceil(np.log2(np.sqrt(n))), 16, 128))  # about a node per cell
    kernel_x, kernel_y = _kernels(grid)
    temperature = k * np.sqrt(n) / 10
    cooling = temperature / iterations
    for _ in range(iterations):
        force = _repulsion(positions, grid, kernel_x, kernel_y) * k * k
        if len(sources):
            delta = positions[targets] - positions[sources]
            distance = np.sqrt((delta * delta).sum(axis=1)) + 1e-9
            pull = delta * (LINK_PULL * distance / k)[:, None]
            force[:, 0] += np.bincount(sources, pull[:, 0], n) - np.bincount(targets, pull[:, 0], n)
            force[:, 1] += np.bincount(sources, pull[:, 1], n) - np.bincount(targets, pull[:, 1], n)
        force -= GRAVITY * (positions - positions.mean(axis=0))
        length = np.sqrt((force * force).sum(axis=1)) + 1e-9
        positions += force * (np.minimum(length, temperature) / length)[:, None]
        temperature = max(temperature - cooling, k / 20)
    return positions - positions.mean(axis=0)


@lru_cache(maxsize=8)
def _kernels(grid: int) -> tuple[np.ndarray, np.ndarray]:
    """The FFTs of the push field dx/d², dy/d² (in cell units) on a (2·grid)² padded grid."""
    size = 2 * grid
    offsets = np.fft.fftfreq(size, 1 / size)  # 0, 1, …, grid-1, -grid, …, -1
    dx, dy = np.meshgrid(offsets, offsets, indexing="ij")
    square = dx * dx + dy * dy
    square[0, 0] = 1.0
    field_x, field_y = dx / square, dy / square  # the push at offset (dx, dy) from a unit weight
    field_x[0, 0] = field_y[0, 0] = 0.0
    return np.fft.rfft2(field_x), np.fft.rfft2(field_y)


def _repulsion(positions: np.ndarray, grid: int, kernel_x: np.ndarray, kernel_y: np.ndarray) -> np.ndarray:
    """The k²/d push on every node from all the others (per unit k²), via the grid."""
    # The grid spans all but the farthest few nodes (which would coarsen it for everyone else);
    # those feel the others as one weight at their centre.
    first, last = len(positions) // 200, len(positions) - 1 - len(positions) // 200  # 0.5th and 99.5th percentiles
    ordered = np.partition(positions, (first, last), axis=0)
    low, high = ordered[first], ordered[last]
    margin = (high - low) * 0.05 + 1e-6
    low, high = low - margin, high + margin
    extent = float((high - low).max())
    cell = extent / (grid - 1.001)
    scaled = (positions - low) / cell
    outside = ((scaled < 0) | (scaled > grid - 1.001)).any(axis=1)
    scaled = np.clip(scaled, 0, grid - 1.001)
    base = np.floor(scaled).astype(np.intp)
    fraction = scaled - base
    weights = (
        (1 - fraction[:, 0]) * (1 - fraction[:, 1]),
        fraction[:, 0] * (1 - fraction[:, 1]),
        (1 - fraction[:, 0]) * fraction[:, 1],
        fraction[:, 0] * fraction[:, 1],
    )
    size = 2 * grid
    corners = [(0, 0), (1, 0), (0, 1), (1, 1)]
    flat = [(base[:, 0] + cx) * size + (base[:, 1] + cy) for cx, cy in corners]
    density = np.bincount(np.concatenate(flat), np.concatenate(weights), size * size).reshape(size, size)
    transformed = np.fft.rfft2(density)
    field_x = np.fft.irfft2(transformed * kernel_x, s=(size, size)).ravel()
    field_y = np.fft.irfft2(transformed * kernel_y, s=(size, size)).ravel()
    force = np.zeros_like(positions)
    for corner, weight in zip(flat, weights, strict=True):
        force[:, 0] += field_x[corner] * weight
        force[:, 1] += field_y[corner] * weight
    force /= cell
    if outside.any():
        offset = positions[outside] - positions.mean(axis=0)
        square = np.maximum((offset * offset).sum(axis=1), cell * cell)
        force[outside] = offset * (len(positions) / square)[:, None]
    return force
