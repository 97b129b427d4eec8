"""The embedding map of one user's memories: their vectors laid out in 2-D by t-SNE (openTSNE), placed
in an SVG drawing that the server renders (so the page needs no JavaScript to show it).

t-SNE keeps each memory next to the memories whose vectors are most like its own, so memories about
one thing form a visible group; it answers to neighbours, not to raw distances, so one far outlier
joins the edge of the map instead of squashing the rest into a corner, as it did with the PCA this
page drew before (whose two axes also explained only a tenth of the variance of real embeddings).
What t-SNE does not keep: the distances between groups far apart, and any meaning of the axes.

Chosen over UMAP (umap-learn), PaCMAP and scikit-learn's TSNE after measuring them (the figures are
in docs/dashboard.md; bench/map.py times this layout against PCA): openTSNE is compiled ahead of
time (no numba: UMAP's JIT costs each new process 10-15 s, and numba's on-disk cache barely shortens
it), its neighbours here are exact, and it keeps local neighbourhoods best. It needs SciPy and
scikit-learn, which it imports only when a map is drawn.

How: rows are scaled to unit length (the engine ranks by cosine), identical vectors are projected
once (so they land on one point; at least a few distinct vectors are needed, below which PCA places
them), the exact nearest neighbours come from a blocked matrix product, the start is the PCA layout
(deterministic, each axis's sign fixed), and the optimisation uses a fixed seed and one thread. The
same vectors therefore always give the same picture, in whatever order they come. A layout takes
seconds (on a 2-core machine about 1.5 s for 2,000 memories, 5.5 s for 10,000, 7 s for 10,000 of
1,536 dimensions), so it is cached, keyed by a digest of the distinct vectors (`ProjectionCache`, Django's
cache in the view).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Protocol

import numpy as np

from memory.engine import MemoryRecord

logger = logging.getLogger(__name__)

WIDTH, HEIGHT, MARGIN = 1000, 620, 16
"""The drawing's viewBox, in its own units; points are kept MARGIN inside it."""


@dataclass(frozen=True)
class Projection:
    """Rows' coordinates on the first two principal axes, and the share of the total variance
    each axis captures (0 where there is none): the start of the t-SNE layout, and the layout of
    maps too small for t-SNE."""

    coordinates: np.ndarray  # (n, 2), float64
    explained: tuple[float, float]


EXACT_BELOW = 64
"""A matrix with fewer rows or columns than this gets an exact SVD; a larger one the randomized
subspace iteration, whose cost grows with rows x columns rather than with their cube."""
POWER_ITERATIONS = 6
OVERSAMPLING = 10


def top_axes(centred: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The `count` largest singular values of `centred` and their right-singular vectors (rows).

    A full SVD of 10,000 x 1,536 takes most of a minute; a few rounds of subspace iteration on a
    random start (Halko, Martinsson and Tropp 2011), with a fixed seed so the same matrix always
    gives the same axes, take well under a second and find the leading directions to within
    plotting precision. Only X^T X enters the iteration, so the row order does not matter."""
    rows, columns = centred.shape
    if min(rows, columns) < EXACT_BELOW:
        _, singular, axes = np.linalg.svd(centred, full_matrices=False)
        return singular[:count], axes[:count]
    basis = np.random.default_rng(0).standard_normal((columns, count + OVERSAMPLING))
    for _ in range(POWER_ITERATIONS):
        basis, _ = np.linalg.qr(centred.T @ (centred @ basis))
    _, singular, small_axes = np.linalg.svd(centred @ basis, full_matrices=False)
    return singular[:count], small_axes[:count] @ basis.T


def pca_2d(matrix: np.ndarray) -> Projection:
    """Project the rows of `matrix` onto its two principal axes (the top right-singular vectors of
    the centred matrix). Each axis's sign is fixed so that its largest loading is positive: the
    same vectors always give the same picture, not its mirror image."""
    rows = np.asarray(matrix, dtype=np.float64)
    coordinates = np.zeros((rows.shape[0], 2))
    if rows.shape[0] < 2:
        return Projection(coordinates, (0.0, 0.0))
    centred = rows - rows.mean(axis=0)
    singular, axes = top_axes(centred, 2)
    kept = axes.shape[0]
    signs = np.sign(axes[np.arange(kept), np.argmax(np.abs(axes), axis=1)])
    axes = axes * np.where(signs == 0, 1.0, signs)[:, None]
    coordinates[:, :kept] = centred @ axes.T
    total = float(np.einsum("ij,ij->", centred, centred))  # the variance of every direction, summed
    shares = [float(singular[i] ** 2 / total) if total > 0 and i < kept else 0.0 for i in range(2)]
    return Projection(coordinates, (shares[0], shares[1]))


def fit_to_box(coordinates: np.ndarray) -> np.ndarray:
    """Coordinates scaled into the drawing, one scale for both axes (distances keep their
    proportions) and centred; y grows downwards in SVG, so the second axis is flipped to point up.
    All points at one place (or one point) sit in the middle."""
    if coordinates.shape[0] == 0:
        return coordinates.copy()
    low, high = coordinates.min(axis=0), coordinates.max(axis=0)
    span = high - low
    usable = np.array([WIDTH - 2 * MARGIN, HEIGHT - 2 * MARGIN], dtype=np.float64)
    largest = (span / usable).max()
    scale = 1.0 / largest if largest > 1e-12 else 0.0
    middle = (low + high) / 2
    placed = (coordinates - middle) * scale
    placed[:, 1] *= -1
    return placed + np.array([WIDTH / 2, HEIGHT / 2])


PERPLEXITY = 30
"""t-SNE's effective number of neighbours a memory is drawn near (the usual 30; less for small maps)."""
FEWEST_FOR_TSNE = 16
"""Fewer distinct vectors than this are placed by PCA: t-SNE's perplexity needs a few neighbours
per point, and a handful of points is as clear on PCA's axes."""
EARLY_ITERATIONS, ITERATIONS = 100, 200
"""Two fifths of openTSNE's defaults (250 exaggerated, then 500), from the PCA start: as many of each
memory's neighbours kept (to within 0.01, on bench/map.py's clustered vectors and on hashed texts)
and the groups as far apart, in two fifths of the time."""
FFT_FROM = 3_000
"""From this many points the repulsion is interpolated on a grid (FFT), O(n); below it Barnes-Hut,
faster for small maps."""
THETA = 0.8
"""Barnes-Hut's accuracy: a cell of points far enough away (its size over its distance below THETA)
pushes as one. 0.8 rather than openTSNE's 0.5: a third faster, the same picture to the eye and to
the share of neighbours kept."""
GRID_STEP = 2
"""With FFT, one grid interval per this many units of the layout's extent (openTSNE's
ints_in_interval; its default 1): a layout without tight groups spreads wide and its grid with it,
and 10,000 near-identical notes took 13 s instead of 6, keeping the same neighbours."""
SEED = 0
CACHE_SECONDS = 7 * 24 * 3600
LAYOUT_VERSION = (
    f"tsne-2/{PERPLEXITY}/{FEWEST_FOR_TSNE}/{EARLY_ITERATIONS}/{ITERATIONS}/{FFT_FROM}/{THETA}/{GRID_STEP}/{SEED}"
)
"""Part of each cache key, with openTSNE's version: a change of method, parameters or library
draws maps anew."""


@lru_cache(maxsize=1)
def layout_version() -> str:
    try:
        library = version("openTSNE")
    except PackageNotFoundError:
        library = "none"
    return f"{LAYOUT_VERSION}/openTSNE-{library}"


@dataclass(frozen=True)
class Layout:
    """Where each row goes, in the method's own units, and the method's name ("t-SNE", or "PCA"
    for a map of fewer than FEWEST_FOR_TSNE distinct vectors)."""

    coordinates: np.ndarray  # (n, 2), float64
    method: str


class ProjectionCache(Protocol):
    """Where layouts are kept between requests: Django's cache has this shape."""

    def get(self, key: str, default: Any = None) -> Any: ...

    def set(self, key: str, value: Any, timeout: Any = ...) -> None: ...


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (float32), as cosine similarity sees them; an all-zero row (a text
    without words) stays zero, and values that are not finite count as 0."""
    rows = np.asarray(matrix, dtype=np.float32)
    if not np.isfinite(rows).all():
        rows = np.nan_to_num(rows, nan=0.0, posinf=0.0, neginf=0.0)
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.float64))
    unit = np.divide(rows, norms[:, None], out=np.zeros(rows.shape), where=norms[:, None] > 0).astype(np.float32)
    unit += np.float32(0.0)  # -0.0 becomes 0.0, so equal vectors have equal bytes
    return unit


def project(matrix: np.ndarray, cache: ProjectionCache | None = None) -> Layout:
    """Lay out the rows of `matrix` (n vectors) in 2-D: t-SNE of their distinct directions, or PCA
    when there are fewer than FEWEST_FOR_TSNE of them. Identical directions share a point; the
    result depends on the set of vectors only, not their order. A t-SNE layout is kept in `cache`
    (if given) under a digest of the distinct vectors; the cache failing only costs the time."""
    rows = np.asarray(matrix)
    if rows.ndim != 2 or rows.shape[0] == 0:
        return Layout(np.zeros((rows.shape[0] if rows.ndim else 0, 2)), "PCA")
    distinct, inverse, key = distinct_rows(unit_rows(rows))
    if distinct.shape[0] < FEWEST_FOR_TSNE:
        return Layout(pca_2d(distinct).coordinates[inverse], "PCA")
    placed = _cached(cache, key, distinct.shape[0])
    if placed is None:
        try:
            placed = tsne_2d(distinct)
        except Exception:  # a map drawn by PCA beats a failed page
            logger.exception("t-SNE failed on %d vectors; the map falls back to PCA", distinct.shape[0])
            return Layout(pca_2d(distinct).coordinates[inverse], "PCA")
        _store(cache, key, placed)
    return Layout(placed[inverse], "t-SNE")


def distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, str]:
    """The distinct rows of `rows` in an order of their own (by a digest of each row's bytes, so
    whatever order they came in), for each row the index of its distinct row, and the cache key of
    the layout of those distinct rows. A digest a row: sorting 10,000 rows of 1,536 numbers
    (np.unique) takes a second, hashing them a twentieth of that."""
    rows = np.ascontiguousarray(rows)
    digests = [hashlib.blake2b(row.tobytes(), digest_size=16).digest() for row in rows]
    first: dict[bytes, int] = {}
    for index, digest in enumerate(digests):
        first.setdefault(digest, index)
    ordered = sorted(first)
    position = {digest: index for index, digest in enumerate(ordered)}
    inverse = np.fromiter((position[digest] for digest in digests), dtype=np.intp, count=len(digests))
    key = hashlib.blake2b(f"{layout_version()}/{rows.shape[1]}/{rows.dtype.str}".encode(), digest_size=20)
    key.update(b"".join(ordered))
    return rows[[first[digest] for digest in ordered]], inverse, f"oam:map:{key.hexdigest()}"


def _cached(cache: ProjectionCache | None, key: str, count: int) -> np.ndarray | None:
    if cache is None:
        return None
    try:
        found = cache.get(key)
    except Exception:
        logger.warning("The map's cache could not be read; drawing the map anew", exc_info=True)
        return None
    if isinstance(found, np.ndarray) and found.shape == (count, 2) and np.isfinite(found).all():
        return found
    return None


def _store(cache: ProjectionCache | None, key: str, placed: np.ndarray) -> None:
    if cache is None:
        return
    try:
        cache.set(key, placed, CACHE_SECONDS)
    except Exception:
        logger.warning("The map's cache could not be written; the next view draws the map anew", exc_info=True)


def nearest_neighbours(rows: np.ndarray, count: int, block: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """Each row's `count` nearest other rows (indices, nearest first) and their Euclidean distances:
    exact, a block of rows at a time against all (a matrix product; memory block x n), so no index
    to build and nothing random. 10,000 rows of 1,536 dimensions take a few seconds."""
    total = rows.shape[0]
    squared = np.einsum("ij,ij->i", rows, rows)
    indices = np.empty((total, count), dtype=np.int64)
    distances = np.empty((total, count), dtype=np.float64)
    for start in range(0, total, block):
        stop = min(start + block, total)
        near = squared[start:stop, None] + squared[None, :] - 2 * (rows[start:stop] @ rows.T)
        near[np.arange(stop - start), np.arange(start, stop)] = np.inf  # not its own neighbour
        chosen = np.argpartition(near, count - 1, axis=1)[:, :count]
        chosen_near = np.take_along_axis(near, chosen, axis=1)
        order = np.argsort(chosen_near, axis=1, kind="stable")
        indices[start:stop] = np.take_along_axis(chosen, order, axis=1)
        distances[start:stop] = np.sqrt(np.maximum(np.take_along_axis(chosen_near, order, axis=1), 0.0))
    return indices, distances


def tsne_2d(rows: np.ndarray) -> np.ndarray:
    """openTSNE on distinct `rows` (at least FEWEST_FOR_TSNE), from the PCA layout, one thread,
    a fixed seed: (n, 2) coordinates."""
    from openTSNE import TSNEEmbedding
    from openTSNE.affinity import PerplexityBasedNN
    from openTSNE.nearest_neighbors import PrecomputedNeighbors

    quiet = logging.getLogger("openTSNE")
    if quiet.level == logging.NOTSET:  # not its INFO line at every map drawn, unless configured
        quiet.setLevel(logging.WARNING)
    count = rows.shape[0]
    perplexity = min(PERPLEXITY, (count - 1) / 3)
    indices, distances = nearest_neighbours(rows, min(count - 1, int(3 * perplexity)))
    affinities = PerplexityBasedNN(perplexity=perplexity, knn_index=PrecomputedNeighbors(indices, distances))
    start = pca_2d(rows).coordinates
    start *= 1e-4 / max(float(start[:, 0].std()), 1e-12)  # openTSNE's advice: a start this small
    embedding = TSNEEmbedding(
        start,
        affinities,
        n_jobs=1,
        random_state=SEED,
        negative_gradient_method="bh" if count < FFT_FROM else "fft",
        theta=THETA,
        ints_in_interval=GRID_STEP,
    )
    embedding = embedding.optimize(n_iter=EARLY_ITERATIONS, exaggeration=12, momentum=0.5)
    embedding = embedding.optimize(n_iter=ITERATIONS, momentum=0.8)
    # t-SNE's orientation means nothing: turn the layout so that its longer extent lies along the
    # drawing's (wider than tall), which fills more of it.
    return pca_2d(np.array(embedding, dtype=np.float64)).coordinates


@dataclass(frozen=True)
class MapPoint:
    record: MemoryRecord
    x: float
    y: float


def map_points(
    records: list[MemoryRecord], matrix: np.ndarray, cache: ProjectionCache | None = None
) -> tuple[list[MapPoint], Layout]:
    """Each memory at its place in the drawing, and the layout it came from. Invalid ones are
    drawn first, so that a valid memory at the same place stays on top (and clickable)."""
    layout = project(matrix, cache)
    placed = fit_to_box(layout.coordinates)
    points = [
        MapPoint(record, round(float(x), 1), round(float(y), 1)) for record, (x, y) in zip(records, placed, strict=True)
    ]
    points.sort(key=lambda point: point.record.status == "valid")
    return points, layout
