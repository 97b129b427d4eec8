"""The embedding map of one user's memories: their vectors projected to 2-D by PCA, placed in an
SVG drawing that the server renders (so the page needs no JavaScript to show it).

PCA rather than t-SNE or UMAP: it is a few lines of NumPy (the top singular vectors of the centred
matrix), it is
deterministic and fast at the map's few thousand points, and its axes mean something ("the
directions along which these memories differ most"), so two runs over the same memories draw the
same map and identical vectors land on the same point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memory.engine import MemoryRecord

WIDTH, HEIGHT, MARGIN = 1000, 620, 16
"""The drawing's viewBox, in its own units; points are kept MARGIN inside it."""


@dataclass(frozen=True)
class Projection:
    """Rows' coordinates on the first two principal axes, and the share of the total variance
    each axis captures (0 where there is none)."""

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


@dataclass(frozen=True)
class MapPoint:
    record: MemoryRecord
    x: float
    y: float


def map_points(records: list[MemoryRecord], matrix: np.ndarray) -> tuple[list[MapPoint], Projection]:
    """Each memory at its place in the drawing, and the projection it came from. Invalid ones are
    drawn first, so that a valid memory at the same place stays on top (and clickable)."""
    projection = pca_2d(matrix)
    placed = fit_to_box(projection.coordinates)
    points = [
        MapPoint(record, round(float(x), 1), round(float(y), 1)) for record, (x, y) in zip(records, placed, strict=True)
    ]
    points.sort(key=lambda point: point.record.status == "valid")
    return points, projection
