"""Login throttling (memory.web.login_throttle, django-axes): a username guessed at from one address is
locked out after OAM_LOGIN_FAILURES failures for OAM_LOGIN_COOLOFF_MINUTES, with the login page
saying so (429); other users, other addresses and API tokens are unaffected."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import authenticate
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from memory.web.tokens import create_token

LIMIT = 3


@pytest.fixture(autouse=True)
def throttle(settings):
    settings.AXES_FAILURE_LIMIT = LIMIT
    settings.AXES_COOLOFF_TIME = timedelta(minutes=7)


def log_in(client: Client, username: str, password: str, address: str = "192.0.2.1"):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address)


def fail(client: Client, username: str = "vera", times: int = LIMIT, address: str = "192.0.2.1") -> None:
    for _ in range(times):
        log_in(client, username, "wrong", address)


def test_failures_below_the_limit_are_form_errors_and_the_right_password_still_works(client, viewer):
    fail(client, times=LIMIT - 1)

    assert log_in(client, "vera", "vera-password").status_code == 302


def test_the_limit_locks_the_username_out_with_a_clear_429_even_for_the_right_password(client, viewer):
    fail(client)

    response = log_in(client, "vera", "vera-password")

    assert response.status_code == 429
    html = response.content.decode()
    assert "Too many failed logins (3)" in html
    assert "locked for 7 minutes" in html
    assert 'name="password"' in html  # the login page, not a bare error
    assert "_auth_user_id" not in client.session


def test_the_lockout_is_per_username_and_address(client, viewer, curator):
    fail(client)

    assert log_in(client, "carl", "carl-password").status_code == 302
    assert log_in(Client(), "vera", "vera-password", address="198.51.100.7").status_code == 302


def test_the_lockout_ends_after_the_cool_off(client, viewer, time_machine):
    time_machine.move_to("2026-01-01 12:00:00+00:00", tick=False)
    fail(client)
    assert log_in(client, "vera", "vera-password").status_code == 429

    time_machine.move_to("2026-01-01 12:08:00+00:00", tick=False)

    assert log_in(client, "vera", "vera-password").status_code == 302


def test_a_success_resets_the_count(client, viewer):
    fail(client, times=LIMIT - 1)
    assert log_in(client, "vera", "vera-password").status_code == 302
    client.logout()

    fail(client, times=LIMIT - 1)

    assert log_in(client, "vera", "vera-password").status_code == 302


def test_api_tokens_work_while_their_owner_is_locked_out(client, viewer):
    _, token = create_token(viewer, name="script", role="viewer")
    fail(client)
    assert log_in(client, "vera", "vera-password").status_code == 429

    api = APIClient(REMOTE_ADDR="192.0.2.1")
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")

    assert api.get("/api/v1/threads/").status_code == 200


def test_bad_tokens_do_not_lock_the_dashboard_login(client, viewer):
    api = APIClient(REMOTE_ADDR="192.0.2.1")
    api.credentials(HTTP_AUTHORIZATION="Bearer oam_not-a-real-token")
    for _ in range(LIMIT + 2):
        assert api.get("/api/v1/threads/").status_code == 401

    assert log_in(client, "vera", "vera-password").status_code == 302


def test_authenticate_without_a_request_is_not_throttled(viewer):
    """Management commands and shells call authenticate() without a request: no address to lock."""
    assert authenticate(username="vera", password="vera-password") == viewer
