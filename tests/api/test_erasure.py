"""POST /api/v1/users/{id}/erase/: staff only (a staff account's session, or its curator token),
a dry run that changes nothing, 400 for a bad body, 404 for an id with nothing to erase."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from memory.models import ErasureReceipt
from memory.web.tokens import create_token

from .conftest import bearer

URL = "/api/v1/users/alice/erase/"


@pytest.fixture
def admin(db) -> User:
    return User.objects.create_user("ada", password="ada-password", is_staff=True)


@pytest.fixture
def admin_api(admin):
    return bearer(create_token(admin, name="ada-script", role="curator")[1])


@pytest.fixture
def alice(agent_memory) -> str:
    agent_memory.add_user("alice", "Alice, who keeps a secret periwinkleosprey")
    return agent_memory.add_memory("Alice's cat is periwinkleosprey.", user_id="alice")


def test_a_dry_run_says_what_would_go_and_changes_nothing(admin_api, alice, agent_memory):
    response = admin_api.post(URL, {"dry_run": True}, format="json")
    assert response.status_code == 200
    assert response.json()["dry_run"] is True
    assert response.json()["counts"]["memories"] == 1 and response.json()["counts"]["profile"] == 1
    assert agent_memory.get_memory(alice).content.startswith("Alice's cat")


def test_a_staff_token_erases_and_gets_the_receipt(admin_api, alice, agent_memory):
    response = admin_api.post(URL, {}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "done" and body["erased_by"] == "ada" and body["via"] == "api"
    assert body["token_name"] == "ada-script" and body["counts"]["memories"] == 1 and len(body["digest_sha256"]) == 64
    assert "periwinkleosprey" not in response.content.decode()
    with pytest.raises(KeyError):
        agent_memory.get_memory(alice)
    assert admin_api.post(URL, {}, format="json").status_code == 404  # nothing left to erase


def test_others_are_refused(curator_api, viewer_api, admin, alice, agent_memory):
    reader = bearer(create_token(admin, name="ada-reader", role="viewer")[1])
    for client in (curator_api, viewer_api, reader):
        assert client.post(URL, {"dry_run": True}, format="json").status_code == 403
    assert agent_memory.get_memory(alice)
    assert not ErasureReceipt.objects.exists()


def test_bad_bodies_are_a_400(admin_api, alice):
    for body in ({"dry_run": "perhaps"}, {"dry_run": True, "force": True}, [1]):
        response = admin_api.post(URL, body, format="json")
        assert response.status_code == 400, body


def test_an_unknown_user_is_a_404(admin_api, db):
    assert admin_api.post("/api/v1/users/nobody/erase/", {"dry_run": True}, format="json").status_code == 404


def test_a_tombstone_cannot_be_reverted_through_the_api(admin_api, curator, curator_api, alice, agent_memory):
    from memory.curation import Actor, Curation
    from memory.models import CurationEntry

    entry = Curation(agent_memory, Actor(curator)).update_memory(alice, version=1, content="Alice's cat is Tom.")
    assert admin_api.post(URL, {}, format="json").status_code == 201
    assert CurationEntry.objects.get(pk=entry.pk).erased
    response = curator_api.post(f"/api/v1/history/{entry.pk}/revert/", {}, format="json")
    assert response.status_code == 409  # as every revert the history refuses
    assert "erased with the person" in response.content.decode()
