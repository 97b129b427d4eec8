"""The embedding map of one user's memories: their vectors projected to 2-D by PCA, placed in an
SVG drawing that the server renders (so the page needs no JavaScript to show it).

PCA rather than t-SNE or UMAP: it is a few lines of NumPy (the SVD of the centred matrix), it is
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


def pca_2d(matrix: np.ndarray) -> Projection:
    """Project the rows of `matrix` onto its two principal axes (the top right-singular vectors of
    the centred matrix). Each axis's sign is fixed so that its largest loading is positive: the
    same vectors always give the same picture, not its mirror image."""
    rows = np.asarray(matrix, dtype=np.float64)
    coordinates = np.zeros((rows.shape[0], 2))
    if rows.shape[0] < 2:
        return Projection(coordinates, (0.0, 0.0))
    centred = rows - rows.mean(axis=0)
    _, singular, axes = np.linalg.svd(centred, full_matrices=False)
    kept = min(2, axes.shape[0])
    axes = axes[:kept]
    signs = np.sign(axes[np.arange(kept), np.argmax(np.abs(axes), axis=1)])
    axes = axes * np.where(signs == 0, 1.0, signs)[:, None]
    coordinates[:, :kept] = centred @ axes.T
    variance = singular**2
    total = variance.sum()
    shares = [float(variance[i] / total) if total > 0 and i < kept else 0.0 for i in range(2)]
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
