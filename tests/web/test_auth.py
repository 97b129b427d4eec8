"""Logging in and out with Django's auth views, and the two role groups."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse


def test_the_login_page_renders(client, db):
    response = client.get(reverse("login"))

    assert response.status_code == 200
    assert b"Log in" in response.content


def test_a_user_logs_in_and_lands_on_the_overview(client, viewer):
    response = client.post(reverse("login"), {"username": "vera", "password": "vera-password"})

    assert response.status_code == 302
    assert response["Location"] == reverse("memory:overview")


def test_a_wrong_password_is_refused(client, viewer):
    response = client.post(reverse("login"), {"username": "vera", "password": "nope"})

    assert response.status_code == 200
    assert response.context["form"].errors
    assert b"didn't match" in response.content


def test_logging_out_ends_the_session(viewer_client):
    response = viewer_client.post(reverse("logout"))

    assert response.status_code == 302
    assert viewer_client.get(reverse("memory:thread_list")).status_code == 302


@pytest.mark.django_db
def test_the_viewers_and_curators_groups_exist():
    assert set(Group.objects.values_list("name", flat=True)) >= {"viewers", "curators"}
