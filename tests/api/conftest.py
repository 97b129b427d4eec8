"""API fixtures: clients for each persona. Tokens are made by memory.web.tokens, as the dashboard
and `manage.py oam_token` make them; each client sends its token as `Authorization: Bearer`."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.test import APIClient

from memory.web.tokens import create_token, revoke


def bearer(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


@pytest.fixture
def anonymous() -> APIClient:
    return APIClient()


@pytest.fixture
def viewer_api(viewer: User) -> APIClient:
    """Vera's viewer token."""
    return bearer(create_token(viewer, name="vera-script", role="viewer")[1])


@pytest.fixture
def curator_api(curator: User) -> APIClient:
    """Carl's curator token, named "carl-script"."""
    return bearer(create_token(curator, name="carl-script", role="curator")[1])


@pytest.fixture
def curator_reading_api(curator: User) -> APIClient:
    """Carl's viewer token: a curator's token that may only read."""
    return bearer(create_token(curator, name="carl-reader", role="viewer")[1])


@pytest.fixture
def revoked_api(curator: User) -> APIClient:
    record, token = create_token(curator, name="carl-old", role="curator")
    revoke(record)
    return bearer(token)


@pytest.fixture
def expired_api(curator: User) -> APIClient:
    record, token = create_token(curator, name="carl-expired", role="curator", expires_days=1)
    record.expires_at = timezone.now() - timedelta(seconds=1)
    record.save(update_fields=["expires_at"])
    return bearer(token)


@pytest.fixture
def session_api(curator: User) -> APIClient:
    """Carl logged in with the dashboard's session: CSRF is enforced, as for a browser."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(curator)
    return client
