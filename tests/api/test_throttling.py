"""Rate limits per token and per user: REST_FRAMEWORK's `token` and `user` rates, read at each request."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import time_machine
from django.core.cache import cache
from rest_framework.test import APIClient

from memory.web.tokens import create_token
from tests.api.conftest import bearer

API = "/api/v1/memories/"


@pytest.fixture
def rates(settings) -> Iterator[dict[str, str | None]]:
    """Small rates for this test (change the dict's values before the first request to change them)
    and an empty throttle cache before and after it."""
    chosen: dict[str, str | None] = {"token": "2/minute", "user": "3/minute"}
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": chosen}
    cache.clear()
    yield chosen
    cache.clear()


def statuses(client: APIClient, count: int) -> list[int]:
    return [client.get(API).status_code for _ in range(count)]


def assert_throttled(response) -> None:
    assert response.status_code == 429
    wait = int(response["Retry-After"])
    assert 0 < wait <= 60
    assert response.json() == {"detail": f"Request was throttled. Expected available in {wait} seconds."}


def test_each_token_has_its_own_budget(rates, curator, viewer):
    first = bearer(create_token(curator, name="first", role="viewer")[1])
    veras = bearer(create_token(viewer, name="veras", role="viewer")[1])

    assert statuses(first, 2) == [200, 200]
    assert_throttled(first.get(API))
    assert statuses(veras, 2) == [200, 200]  # another user's token: untouched


def test_a_users_tokens_and_session_share_the_users_budget(rates, curator):
    rates["token"] = "10/minute"
    first = bearer(create_token(curator, name="first", role="viewer")[1])
    second = bearer(create_token(curator, name="second", role="viewer")[1])
    session = APIClient()
    session.force_login(curator)

    assert statuses(first, 2) + statuses(second, 1) == [200, 200, 200]
    assert_throttled(second.get(API))
    assert_throttled(session.get(API))


def test_the_token_limit_applies_before_the_users(rates, curator):
    rates["user"] = "100/minute"
    first = bearer(create_token(curator, name="first", role="viewer")[1])
    second = bearer(create_token(curator, name="second", role="viewer")[1])

    assert statuses(first, 3) == [200, 200, 429]
    assert statuses(second, 2) == [200, 200]


def test_a_throttled_write_stores_nothing(rates, curator, agent_memory):
    writer = bearer(create_token(curator, name="writer", role="curator")[1])
    statuses(writer, 2)

    response = writer.post(API, {"content": "One too many."}, format="json")

    assert_throttled(response)
    assert agent_memory.list_memories(limit=10) == []


def test_the_budget_comes_back_when_the_window_has_passed(rates, curator):
    client = bearer(create_token(curator, name="patient", role="viewer")[1])
    with time_machine.travel("2026-11-20 09:00:00Z", tick=False) as clock:
        assert statuses(client, 3) == [200, 200, 429]
        clock.shift(30)
        assert_throttled(response := client.get(API))
        assert int(response["Retry-After"]) == 30
        clock.shift(31)
        assert statuses(client, 1) == [200]


def test_no_rate_means_no_limit(rates, curator):
    rates.update(token=None, user=None)
    client = bearer(create_token(curator, name="unlimited", role="viewer")[1])

    assert statuses(client, 10) == [200] * 10


def test_refused_credentials_are_a_401_not_a_throttle(rates, db):
    assert statuses(bearer("oam_00000000_nope"), 5) == [401] * 5
    assert statuses(APIClient(), 5) == [401] * 5
