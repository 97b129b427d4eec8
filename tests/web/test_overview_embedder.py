"""The overview's embedder: the store's (as it records it) beside OAM_EMBEDDER's, a warning when
another process re-embedded the store, and a note while a re-embedding is unfinished."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.engine import HashingEmbedder, connect

from .world import build_world

OVERVIEW = reverse("memory:overview")


class FailingEmbedder(HashingEmbedder):
    def __init__(self, dim: int, batches: int) -> None:
        super().__init__(dim)
        self.batches = batches

    def embed(self, texts):
        self.batches -= 1
        if self.batches < 0:
            raise RuntimeError("embedding server unreachable")
        return super().embed(texts)


def test_the_overview_names_the_stores_embedder_and_the_setting(viewer_client, agent_memory):
    build_world(agent_memory)

    html = viewer_client.get(OVERVIEW).text

    # The form to set in OAM_EMBEDDER, not the store's name for it (hashing-384).
    assert '(the store names it hashing-384)">hashing:384</code> · 384 dimensions' in html
    assert "OAM_EMBEDDER <code>hashing</code>" in html
    assert "alert" not in html


def test_a_store_re_embedded_by_another_process_is_a_warning_that_says_what_to_do(
    viewer_client, agent_memory, memory_store_url
):
    build_world(agent_memory)
    viewer_client.get(OVERVIEW)  # the site has the store open
    other = connect(memory_store_url, embedder=HashingEmbedder(384))
    other.reembed(HashingEmbedder(128))
    other.close()

    html = viewer_client.get(OVERVIEW).text

    assert '(the store names it hashing-128)">hashing:128</code> · 128 dimensions' in html
    assert "The store was re-embedded." in html
    assert "still embeds with <code>hashing-384</code> (384 dimensions, <code>OAM_EMBEDDER=hashing</code>)" in html
    assert "Set <code>OAM_EMBEDDER=hashing:128</code> (the <code>--embedder</code> given to" in html


def test_an_interrupted_re_embedding_shows_how_far_it_got(viewer_client, agent_memory):
    build_world(agent_memory)
    with pytest.raises(RuntimeError):
        agent_memory.reembed(FailingEmbedder(128, batches=1), batch_size=3)

    html = viewer_client.get(OVERVIEW).text

    assert "A re-embedding is under way or was interrupted:</strong> 3 of" in html
    assert "embedded by <code>hashing:128</code> (128 dimensions)" in html
    assert "run <code>manage.py oam_reembed --embedder hashing:128</code> again to resume" in html
    assert "The store was re-embedded." not in html


def test_the_embedder_panel_needs_a_login(client, agent_memory):
    assert client.get(OVERVIEW).status_code == 302
