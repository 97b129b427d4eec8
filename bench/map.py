"""The embedding map's layout (memory.queries.map.project: t-SNE by openTSNE) against the PCA the
map drew before (memory.queries.map.pca_2d of the raw vectors), in the same process.

For each size (2,000 and 10,000 memories: the map's default and its maximum), clustered unit
vectors (`--clusters` topic directions sharing a common one, as text embeddings do, uneven cluster
sizes) plus one far outlier, `--dim` dimensions. Prints, for PCA and for the t-SNE layout: the
seconds to lay them out (the t-SNE's first, uncached, and then from a warm cache), and how good the
picture is: the share of each memory's 10 nearest neighbours (cosine) that are among its 10 nearest
on the map, the share whose nearest point on the map is of its own cluster, and how much of the
drawing's width and height the middle 96% of the points spans (PCA's outlier squashes the rest).
The t-SNE's time is given as a ratio to PCA's; target: 2,000 memories within a few seconds.

    python bench/map.py [--sizes 2000 10000] [--dim 384] [--clusters 15]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory.queries.map import HEIGHT, MARGIN, WIDTH, fit_to_box, nearest_neighbours, pca_2d, project

SAMPLE = 2_000
"""Neighbours are compared on this many memories (every one would be n x n)."""


def clustered(count: int, dim: int, clusters: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """`count` float32 vectors: unit vectors around `clusters` directions, and a far outlier last
    (label -1)."""
    rng = np.random.default_rng(seed)
    common = rng.normal(size=dim)
    centres = rng.normal(size=(clusters, dim)) + 0.8 * np.sqrt(dim) * common / np.linalg.norm(common)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    labels = rng.choice(clusters, size=count - 1, p=rng.dirichlet(np.full(clusters, 2.0)))
    vectors = centres[labels] + rng.normal(size=(count - 1, dim)) * (1.2 / np.sqrt(dim))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    outlier = -50.0 * vectors.mean(axis=0)
    return np.vstack([vectors, outlier]).astype(np.float32), np.append(labels, -1)


def quality(vectors: np.ndarray, labels: np.ndarray, coordinates: np.ndarray) -> str:
    rows = slice(0, min(SAMPLE, len(vectors) - 1))  # the outlier is last: not in the sample
    unit = vectors[rows] / np.linalg.norm(vectors[rows], axis=1, keepdims=True)
    high, _ = nearest_neighbours(unit, 10)
    low, _ = nearest_neighbours(coordinates[rows].astype(np.float32), 10)
    kept = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(high, low, strict=True)])
    same = np.mean(labels[rows][low[:, 0]] == labels[rows])
    placed = fit_to_box(coordinates)[:-1]
    span = (np.percentile(placed, 98, axis=0) - np.percentile(placed, 2, axis=0)) / np.array(
        [WIDTH - 2 * MARGIN, HEIGHT - 2 * MARGIN]
    )
    return f"neighbours kept {kept:.2f}, nearest of its cluster {same:.3f}, span {span[0]:.0%} x {span[1]:.0%}"


class DictCache(dict):
    def get(self, key, default=None):
        return super().get(key, default)

    def set(self, key, value, timeout=None):
        self[key] = value


def timed(function, *arguments):
    """Wall seconds, CPU seconds of this process, and the result (on a shared machine the CPU time
    is the steadier figure)."""
    started, cpu = time.perf_counter(), time.process_time()
    result = function(*arguments)
    return time.perf_counter() - started, time.process_time() - cpu, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2_000, 10_000])
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--clusters", type=int, default=15)
    options = parser.parse_args()
    import openTSNE  # imported once a process, on the first map: not part of a map's time

    print(f"openTSNE {openTSNE.__version__}, {options.dim} dimensions, {options.clusters} clusters and one outlier")
    for count in options.sizes:
        vectors, labels = clustered(count, options.dim, options.clusters)
        pca_seconds, pca_cpu, pca = timed(pca_2d, vectors)
        cache = DictCache()
        tsne_seconds, tsne_cpu, layout = timed(project, vectors, cache)
        cached_seconds, _, _ = timed(project, vectors, cache)
        print(f"{count:,} memories (wall / CPU seconds)")
        print(f"  PCA    {pca_seconds:6.2f} / {pca_cpu:5.2f} s  {quality(vectors, labels, pca.coordinates)}")
        print(f"  t-SNE  {tsne_seconds:6.2f} / {tsne_cpu:5.2f} s  {quality(vectors, labels, layout.coordinates)}")
        print(f"  t-SNE from the cache {cached_seconds:.2f} s")
        print(f"  t-SNE / PCA: {tsne_seconds / pca_seconds:.1f}x the wall time, {tsne_cpu / pca_cpu:.1f}x the CPU time")


if __name__ == "__main__":
    main()
