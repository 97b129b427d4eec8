"""The embedding map (/users/<id>/map/): who may see it, the projection it draws, what it says."""

from __future__ import annotations

import re
from html import unescape

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from memory.engine import MemoryRecord
from memory.queries import map as map_module
from memory.queries.map import (
    EXACT_BELOW,
    FEWEST_FOR_TSNE,
    HEIGHT,
    MARGIN,
    WIDTH,
    fit_to_box,
    map_points,
    nearest_neighbours,
    pca_2d,
    project,
)

from .world import World, build_world

SCRIPT = "<script>alert(1)</script>"


def map_url(user_id: str = "alice") -> str:
    return reverse("memory:user_map", args=[user_id])


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def circles(html: str) -> dict[str, tuple[float, float, str]]:
    """The drawn points: memory id -> (x, y, circle classes)."""
    found = re.findall(
        r'<a href="[^"]*" class="oam-map-point" data-id="([^"]+)"><title>.*?</title>'
        r'<circle cx="([\d.]+)" cy="([\d.]+)" r="[\d.]+" class="([^"]+)"',
        html,
        re.S,
    )
    return {unescape(i): (float(x), float(y), c) for i, x, y, c in found}


# --- who may see it -------------------------------------------------------------------------


def test_anonymous_visitors_are_sent_to_log_in(client, world):
    response = client.get(map_url())
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_an_account_without_a_role_is_refused(client, db, world):
    client.force_login(User.objects.create_user("nobody", password="nobody-password"))
    assert client.get(map_url()).status_code == 403


@pytest.mark.parametrize("persona", ["viewer_client", "curator_client"])
def test_viewers_and_curators_see_the_users_memories_on_the_map(request, db, persona, world):
    response = request.getfixturevalue(persona).get(map_url())

    assert response.status_code == 200
    html = response.content.decode()
    points = circles(html)
    assert set(points) == {"fact-old", "fact-vegetarian"}
    assert "oam-map-invalid" in points["fact-old"][2] and "oam-map-fact" in points["fact-old"][2]
    assert "oam-map-invalid" not in points["fact-vegetarian"][2]
    # Each point opens its memory, and is in the list's form to the bulk actions.
    assert f'href="{reverse("memory:memory_detail", args=["fact-old"])}" class="oam-map-point"' in html
    # Curators post the selection (thousands of ids fit in no URL); viewers, who may not post, get a link.
    method = "post" if persona == "curator_client" else "get"
    assert f'<form id="map-selection" method="{method}" action="/memories/bulk/">' in html
    assert html.count('name="ids" value="fact-') == 2


def test_the_user_page_links_to_the_map_and_the_agent_page_does_not(viewer_client, world):
    assert f'href="{map_url()}"' in viewer_client.get(reverse("memory:user_detail", args=["alice"])).content.decode()
    agent_page = viewer_client.get(reverse("memory:agent_detail", args=["atlas"])).content.decode()
    assert "Embedding map" not in agent_page


# --- what it draws --------------------------------------------------------------------------


def test_content_is_escaped_in_the_tooltip_and_the_list(viewer_client, agent_memory, world):
    agent_memory.add_memory(f"Alice wrote {SCRIPT} & left", user_id="alice", memory_id="hostile")

    html = viewer_client.get(map_url()).content.decode()

    assert SCRIPT not in html
    assert "<title>memory, valid: Alice wrote &lt;script&gt;alert(1)&lt;/script&gt; &amp; left</title>" in html


def test_identical_memories_land_on_the_same_point(viewer_client, agent_memory, world):
    for memory_id in ("twin-1", "twin-2"):
        agent_memory.add_memory("Alice keeps a cat named Miso.", user_id="alice", memory_id=memory_id)

    points = circles(viewer_client.get(map_url()).content.decode())

    assert points["twin-1"][:2] == points["twin-2"][:2]
    assert points["twin-1"][:2] != points["fact-old"][:2]


def test_filters_narrow_the_map_and_a_limit_says_it_cut_it(viewer_client, agent_memory, world):
    agent_memory.add_memory("Alice likes trains.", user_id="alice", memory_type="preference", memory_id="trains")

    assert set(circles(viewer_client.get(map_url(), {"memory_type": "preference"}).content.decode())) == {"trains"}
    assert set(circles(viewer_client.get(map_url(), {"status": "invalid"}).content.decode())) == {"fact-old"}
    capped = viewer_client.get(map_url(), {"limit": 2}).content.decode()
    assert set(circles(capped)) == {"trains", "fact-vegetarian"}  # the newest two
    assert "Showing the newest 2 memories only; the user has more." in capped
    assert "the user has more" not in viewer_client.get(map_url()).content.decode()


@pytest.mark.parametrize(
    "params", [{"limit": 0}, {"limit": 10_001}, {"limit": "many"}, {"status": "expired"}, {"memory_type": "mood"}]
)
def test_bad_filters_are_form_errors_not_500s(viewer_client, world, params):
    response = viewer_client.get(map_url(), params)
    assert response.status_code == 400
    assert "Fix the filters to see the map." in response.content.decode()


def test_a_user_with_no_memories_gets_an_empty_state_and_an_unknown_user_a_404(viewer_client, agent_memory, world):
    agent_memory.add_user("bob", "Bob, who has said nothing yet.")

    empty = viewer_client.get(map_url("bob"))
    assert empty.status_code == 200 and "No memories of user bob to map" in empty.content.decode()
    assert not circles(empty.content.decode())
    assert viewer_client.get(map_url("nobody-at-all")).status_code == 404


def test_the_caption_says_what_the_layout_shows(viewer_client, agent_memory, world):
    small = viewer_client.get(map_url()).content.decode()
    assert "too few distinct ones to group (t-SNE needs 16)" in small and "(PCA)" in small
    for i in range(FEWEST_FOR_TSNE):
        agent_memory.add_memory(f"Alice note {i} about {'trains' if i % 2 else 'hotels'}.", user_id="alice")

    caption = re.search(r'<p[^>]*id="map-caption">(.*?)</p>', viewer_client.get(map_url()).content.decode(), re.S)

    assert caption and "laid out by t-SNE" in caption.group(1)
    assert "nearby points are similar memories, so a group is memories about one thing" in caption.group(1)
    assert "how far apart distant groups lie, and the axes, mean little" in caption.group(1)
    assert "variance" not in caption.group(1)


def test_a_failing_t_sne_draws_the_map_by_pca_rather_than_failing_the_page(
    viewer_client, agent_memory, world, monkeypatch
):
    for i in range(FEWEST_FOR_TSNE):
        agent_memory.add_memory(f"Alice note number {i}.", user_id="alice")

    def broken(rows):
        raise FloatingPointError("no")

    monkeypatch.setattr(map_module, "tsne_2d", broken)
    response = viewer_client.get(map_url())

    assert response.status_code == 200
    assert "(PCA)" in response.content.decode() and len(circles(response.content.decode())) == FEWEST_FOR_TSNE + 2


# --- the layout -----------------------------------------------------------------------------


def clustered(clusters: int = 5, per_cluster: int = 60, dim: int = 64, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors around `clusters` topic directions that share a common one (as text embeddings
    do), and their cluster labels."""
    rng = np.random.default_rng(seed)
    common = rng.normal(size=dim)
    centres = rng.normal(size=(clusters, dim)) + 0.8 * common / np.linalg.norm(common) * np.sqrt(dim)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    labels = np.repeat(np.arange(clusters), per_cluster)
    vectors = centres[labels] + rng.normal(size=(len(labels), dim)) * (1.2 / np.sqrt(dim))
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True), labels


def separation(placed: np.ndarray, labels: np.ndarray) -> float:
    """The smallest, over pairs of clusters, of the distance between their centres over the sum of
    their radii (the distance within which 90% of each cluster's points lie): above 1, the discs
    holding nine tenths of each cluster do not touch."""
    centres = np.array([placed[labels == label].mean(axis=0) for label in np.unique(labels)])
    radii = np.array(
        [
            np.percentile(np.linalg.norm(placed[labels == label] - centres[label], axis=1), 90)
            for label in np.unique(labels)
        ]
    )
    return min(
        np.linalg.norm(centres[a] - centres[b]) / (radii[a] + radii[b])
        for a in range(len(centres))
        for b in range(a + 1, len(centres))
    )


def bulk_span(placed: np.ndarray) -> np.ndarray:
    """How much of the drawing's width and height the middle 96% of the points spans."""
    low, high = np.percentile(placed, 2, axis=0), np.percentile(placed, 98, axis=0)
    return (high - low) / np.array([WIDTH - 2 * MARGIN, HEIGHT - 2 * MARGIN])


def test_clusters_stay_apart_and_a_far_outlier_does_not_squash_the_rest_into_a_corner():
    vectors, labels = clustered()
    outlier = -50.0 * vectors.mean(axis=0)  # far away, and pointing away from all of them
    matrix = np.vstack([vectors, outlier]).astype(np.float32)

    layout = project(matrix)
    placed = fit_to_box(layout.coordinates)

    assert layout.method == "t-SNE"
    bulk = placed[:-1]
    assert separation(bulk, labels) > 1.0
    nearest = nearest_neighbours(bulk, 1)[0][:, 0]
    assert np.mean(labels[nearest] == labels) > 0.98  # each point's nearest neighbour on the map is of its cluster
    # The bulk fills most of the drawing, outlier or not: nearly all of its longer side (t-SNE's
    # layouts come out about round, the drawing is wide), and half of the other.
    assert bulk_span(bulk).max() > 0.8 and bulk_span(bulk).min() > 0.45


def test_pca_did_squash_the_clusters_beside_that_outlier():
    """Why the map left PCA: the outlier takes the first axis, and the rest share a sliver."""
    vectors, _ = clustered()
    matrix = np.vstack([vectors, -50.0 * vectors.mean(axis=0)])
    placed = fit_to_box(pca_2d(matrix).coordinates)
    assert bulk_span(placed[:-1]).max() < 0.1


def test_the_layout_is_deterministic_and_does_not_depend_on_the_row_order():
    vectors, _ = clustered(clusters=3, per_cluster=30)
    once = project(vectors).coordinates
    order = np.random.default_rng(3).permutation(len(vectors))

    assert np.array_equal(project(vectors).coordinates, once)
    assert np.allclose(project(vectors[order]).coordinates, once[order])


def test_identical_vectors_land_on_one_point():
    vectors, _ = clustered(clusters=3, per_cluster=10)
    matrix = np.vstack([vectors, vectors[:1], vectors[:1]])
    coordinates = project(matrix).coordinates
    assert np.array_equal(coordinates[0], coordinates[-1]) and np.array_equal(coordinates[0], coordinates[-2])
    assert not np.array_equal(coordinates[0], coordinates[1])


@pytest.mark.parametrize("count", [0, 1, 2, 3, FEWEST_FOR_TSNE - 1])
def test_maps_too_small_for_t_sne_are_laid_out_by_pca(count):
    vectors, _ = clustered(clusters=3, per_cluster=10)
    layout = project(vectors[:count])

    assert layout.method == "PCA" and layout.coordinates.shape == (count, 2)
    assert np.isfinite(fit_to_box(layout.coordinates)).all()


def test_many_copies_of_few_memories_are_too_few_for_t_sne_too():
    vectors, _ = clustered(clusters=3, per_cluster=10)
    layout = project(np.repeat(vectors[:4], 10, axis=0))
    assert layout.method == "PCA" and len(np.unique(layout.coordinates, axis=0)) == 4


def test_vectors_with_no_length_or_no_finite_values_still_get_places():
    vectors, _ = clustered(clusters=3, per_cluster=10)
    matrix = np.vstack([vectors, np.zeros((2, vectors.shape[1]))]).astype(np.float32)
    matrix[0, 0], matrix[1, :] = np.nan, np.inf
    layout = project(matrix)

    assert layout.method == "t-SNE" and np.isfinite(layout.coordinates).all()
    assert np.array_equal(layout.coordinates[-1], layout.coordinates[-2])  # the two empty ones together


def test_the_nearest_neighbours_are_the_exact_ones():
    rows = np.random.default_rng(2).normal(size=(700, 12)).astype(np.float32)
    indices, distances = nearest_neighbours(rows, 5, block=128)

    exact = np.linalg.norm(rows[:, None, :] - rows[None, :, :], axis=2)
    np.fill_diagonal(exact, np.inf)
    assert np.array_equal(indices, np.argsort(exact, axis=1)[:, :5])
    assert np.allclose(distances, np.sort(exact, axis=1)[:, :5], atol=1e-4)


class DictCache(dict):
    def get(self, key, default=None):
        return super().get(key, default)

    def set(self, key, value, timeout=None):
        self[key] = value


def test_a_layout_is_computed_once_and_then_read_from_the_cache(monkeypatch):
    vectors, _ = clustered(clusters=3, per_cluster=10)
    cache = DictCache()
    first = project(vectors, cache).coordinates
    assert len(cache) == 1
    monkeypatch.setattr(map_module, "tsne_2d", lambda rows: pytest.fail("computed again"))

    assert np.array_equal(project(vectors[::-1], cache).coordinates, first[::-1])  # the same set of vectors


def test_a_broken_or_wrong_cache_only_costs_the_time():
    vectors, _ = clustered(clusters=3, per_cluster=10)
    expected = project(vectors).coordinates

    class Broken:
        def get(self, key, default=None):
            raise OSError("disk full")

        def set(self, key, value, timeout=None):
            raise OSError("disk full")

    assert np.array_equal(project(vectors, Broken()).coordinates, expected)
    stale = DictCache()
    project(vectors, stale)
    stale[next(iter(stale))] = np.zeros((3, 2))  # not this map's shape
    assert np.array_equal(project(vectors, stale).coordinates, expected)


# --- PCA: the layout's start, and small maps' layout ------------------------------------------


def test_the_first_axis_follows_the_largest_variance_and_the_second_the_next():
    rng = np.random.default_rng(7)
    # Spread 10 along one direction, 3 along another, 0.1 along the rest, in a rotated basis.
    basis, _ = np.linalg.qr(rng.normal(size=(16, 16)))
    latent = rng.normal(size=(400, 16)) * np.array([10.0, 3.0] + [0.1] * 14)
    projection = pca_2d(latent @ basis.T)

    first, second = projection.coordinates[:, 0], projection.coordinates[:, 1]
    assert abs(np.corrcoef(first, latent[:, 0])[0, 1]) > 0.99
    assert abs(np.corrcoef(second, latent[:, 1])[0, 1]) > 0.99
    assert np.std(first) > 3 * np.std(second)
    assert projection.explained[0] > 0.85 and projection.explained[1] > 0.05
    assert sum(projection.explained) <= 1.0 + 1e-9


def test_large_matrices_take_the_randomized_path_and_find_the_same_axes_as_an_exact_svd():
    rng = np.random.default_rng(11)
    basis, _ = np.linalg.qr(rng.normal(size=(128, 128)))
    latent = rng.normal(size=(600, 128)) * np.concatenate([[8.0, 4.0], np.linspace(1.0, 0.1, 126)])
    matrix = latent @ basis.T
    assert min(matrix.shape) >= EXACT_BELOW
    centred = matrix - matrix.mean(axis=0)
    _, singular, axes = np.linalg.svd(centred, full_matrices=False)

    projection = pca_2d(matrix)

    exact = centred @ axes[:2].T
    for axis in range(2):
        assert abs(np.corrcoef(projection.coordinates[:, axis], exact[:, axis])[0, 1]) > 0.999
    assert projection.explained == pytest.approx(tuple(singular[:2] ** 2 / (singular**2).sum()), rel=1e-3)


def test_the_projection_is_deterministic_and_not_mirrored_by_the_row_order():
    rng = np.random.default_rng(3)
    matrix = rng.normal(size=(50, 8)) * np.arange(8, 0, -1)
    once = pca_2d(matrix).coordinates
    shuffled = rng.permutation(50)
    again = pca_2d(matrix[shuffled]).coordinates

    assert np.allclose(once[shuffled], again)


def test_degenerate_inputs_have_places_too():
    assert pca_2d(np.zeros((0, 4))).coordinates.shape == (0, 2)
    assert np.allclose(pca_2d(np.ones((1, 4))).coordinates, 0)
    same = fit_to_box(pca_2d(np.ones((3, 4))).coordinates)
    assert np.allclose(same, [[WIDTH / 2, HEIGHT / 2]] * 3)  # all on one spot, in the middle
    line = pca_2d(np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]))  # one axis of variance only
    assert line.explained == (pytest.approx(1.0), 0.0)


def test_points_fill_the_drawing_with_one_scale_for_both_axes():
    coordinates = np.array([[-2.0, -1.0], [2.0, 1.0], [0.0, 0.0]])
    placed = fit_to_box(coordinates)

    assert placed[:, 0].min() == pytest.approx(MARGIN) and placed[:, 0].max() == pytest.approx(WIDTH - MARGIN)
    # Same scale: a span half as wide is half as tall; y points up (SVG's grows down).
    assert placed[1, 1] - placed[0, 1] == pytest.approx(-(placed[1, 0] - placed[0, 0]) / 2)
    assert placed[2].tolist() == pytest.approx([WIDTH / 2, HEIGHT / 2])


def test_valid_memories_are_drawn_last_so_they_stay_on_top():
    records = [
        MemoryRecord(id=f"m{i}", record_type="fact", status=status) for i, status in enumerate(["valid", "invalid"])
    ]
    points, _ = map_points(records, np.eye(2, 4, dtype=np.float32))
    assert [point.record.id for point in points] == ["m1", "m0"]
