"""Engine ids of any shape round-trip through the dashboard's URLs."""

from __future__ import annotations

from urllib.parse import unquote

import pytest
from django.urls import resolve, reverse

IDS = ["plain", "a/b", "a//b/", ".", "..", "...", "~", "x~2Fy", "~7E", "über thread", "q?x#y", "50%", "é/..", "a.b"]


@pytest.mark.parametrize("memory_id", IDS)
def test_an_id_survives_reverse_and_resolve(memory_id):
    url = reverse("memory:memory_detail", args=[memory_id])
    segment = url.removeprefix("/memories/").removesuffix("/")

    match = resolve(unquote(url))  # as a WSGI server decodes the path before Django routes it

    assert match.kwargs["memory_id"] == memory_id
    assert "/" not in unquote(segment)
    assert unquote(segment) not in (".", "..")
