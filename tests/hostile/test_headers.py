"""Security headers on every kind of answer: dashboard pages, the login page, errors, the API's
JSON (success and error), image bytes and static files."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.urls import reverse
from rest_framework.test import APIClient

from memory.web.tokens import create_token

EXPECTED = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def assert_secure(response) -> None:
    for header, value in EXPECTED.items():
        assert response.get(header) == value, (header, response.get(header))
    if "csp" in settings.INSTALLED_APPS:  # django-csp, when it is in (issue 18 item 1)
        assert response.get("Content-Security-Policy")


@pytest.fixture
def api(curator) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {create_token(curator, name='h', role='curator')[1]}")
    return client


@pytest.mark.parametrize(
    "path",
    ["/", "/threads/", "/memories/", "/memories/new/", "/search/?q=x&user_id=u", "/memories/missing/"],
)
def test_dashboard_pages_send_the_security_headers(curator_client, path):
    assert_secure(curator_client.get(path))


@pytest.mark.parametrize("path", ["/static/js/map.js", "/static/css/map.css", "/static/js/bulk.js"])
def test_static_files_send_them_too(client, db, path):
    """whitenoise answers before the clickjacking and CSP middleware: oam_site.static_headers."""
    response = client.get(path)

    assert response.status_code == 200
    assert_secure(response)
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]


def test_the_login_page_and_its_redirect_send_them(client, db):
    assert_secure(client.get(reverse("login")))
    assert_secure(client.get("/threads/"))  # the redirect to the login page


def test_a_bad_form_answer_sends_them(curator_client):
    response = curator_client.post(reverse("memory:memory_create"), {"content": "", "memory_type": "nope"})

    assert response.status_code == 400
    assert_secure(response)


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("get", "/api/v1/threads/", 200),
        ("get", "/api/v1/memories/missing/", 404),
        ("post", "/api/v1/memories/", 400),
        ("get", "/api/v1/nowhere/", 404),
    ],
)
def test_api_json_answers_send_them(api, method, path, status):
    response = getattr(api, method)(path, {}, format="json") if method == "post" else api.get(path)

    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json")
    assert_secure(response)


def test_an_unauthenticated_api_answer_sends_them(db):
    response = APIClient().get("/api/v1/threads/")

    assert response.status_code == 401
    assert_secure(response)
