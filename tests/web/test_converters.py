"""Engine ids of any shape round-trip through the dashboard's URLs."""

from __future__ import annotations

from urllib.parse import unquote

import pytest
from django.urls import resolve, reverse

from memory.web.converters import path_to

IDS = ["plain", "a/b", "a//b/", ".", "..", "...", "~", "x~2Fy", "~7E", "über thread", "q?x#y", "50%", "é/..", "a.b"]


@pytest.mark.parametrize("memory_id", IDS)
def test_an_id_survives_reverse_and_resolve(memory_id):
    url = reverse("memory:memory_detail", args=[memory_id])
    segment = url.removeprefix("/memories/").removesuffix("/")

    match = resolve(unquote(url))  # as a WSGI server decodes the path before Django routes it

    assert match.kwargs["memory_id"] == memory_id
    assert "/" not in unquote(segment)
    assert unquote(segment) not in (".", "..")


@pytest.mark.parametrize(
    "route", ["memory:memory_detail", "memory:thread_detail", "memory:user_edit", "memory:image_raw"]
)
@pytest.mark.parametrize("record_id", IDS)
def test_the_memoised_path_is_the_reversed_url(route, record_id):
    assert path_to(route, record_id) == reverse(route, args=[record_id])


@pytest.mark.parametrize("ids", [("t", "m"), ("a/b", "ü ~"), ("..", "50%")])
def test_the_memoised_path_takes_several_ids(ids):
    assert path_to("memory:message_edit", *ids) == reverse("memory:message_edit", args=ids)


def test_the_history_pages_are_under_the_history(db):
    assert reverse("memory:history_entry", args=[42]) == reverse("memory:history") + "42/"


@pytest.mark.parametrize(
    "path", ["/threads/%00/", "/users/%00/edit/", "/agents/" + "x" * 600 + "/", "/memories/a%00b/"]
)
def test_an_id_no_record_can_have_is_a_404(viewer_client, path):
    assert viewer_client.get(path).status_code == 404
