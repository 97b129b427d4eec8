"""/settings/tokens/: a person's API tokens, made (and shown once), listed and revoked."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from memory.models import ApiToken
from memory.web.access import grant_role
from memory.web.tokens import create_token, digest, revoke

TOKENS = reverse("memory:tokens")
API = "/api/v1/memories/"
TOKEN_IN_PAGE = re.compile(r'<code id="new-token">(oam_[0-9a-f]{8}_[A-Za-z0-9_-]+)</code>')


def revoke_url(token: ApiToken) -> str:
    return reverse("memory:token_revoke", args=[token.pk])


def api_status(token: str) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client.get(API).status_code


def made(response) -> str:
    """The token a creation's answer shows."""
    match = TOKEN_IN_PAGE.search(response.content.decode())
    assert match, response.content.decode()[:3000]
    return match.group(1)


@pytest.fixture
def admin(db) -> User:
    return User.objects.create_user("ada", password="ada-password", is_staff=True)


# --- who may use the page -------------------------------------------------------------------


def test_anonymous_visitors_are_sent_to_log_in(client, db):
    for response in (client.get(TOKENS), client.post(TOKENS, {"name": "x", "role": "viewer"})):
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))
    assert not ApiToken.objects.exists()


def test_an_account_without_a_role_has_no_tokens_page(client, db):
    client.force_login(User.objects.create_user("nobody", password="nobody-password"))

    assert client.get(TOKENS).status_code == 403
    assert client.post(TOKENS, {"name": "x", "role": "viewer"}).status_code == 403
    assert not ApiToken.objects.exists()


def test_the_user_menu_links_to_the_page_for_every_role(viewer_client, curator_client):
    for client in (viewer_client, curator_client):
        html = client.get(reverse("memory:overview")).content.decode()
        assert f'href="{TOKENS}"' in html
        assert "API tokens" in html


def test_a_viewer_is_offered_viewer_tokens_only(viewer_client):
    response = viewer_client.get(TOKENS)

    assert response.status_code == 200
    assert [value for value, _ in response.context["form"].fields["role"].choices] == ["viewer"]
    html = response.content.decode()
    assert '<option value="curator"' not in html
    assert "you make viewer tokens" in html


def test_a_curator_is_offered_both_roles_viewer_first(curator_client):
    form = curator_client.get(TOKENS).context["form"]

    assert [value for value, _ in form.fields["role"].choices] == ["viewer", "curator"]
    assert form["role"].value() == "viewer"


def test_a_viewer_asking_for_a_curator_token_gets_a_form_error_and_no_token(viewer_client):
    response = viewer_client.post(TOKENS, {"name": "sneaky", "role": "curator"})

    assert response.status_code == 400
    assert response.context["form"].errors["role"] == [
        "A token's role is no higher than yours: as a viewer, you make viewer tokens only."
    ]
    assert 'id="new-token"' not in response.content.decode()
    assert not ApiToken.objects.exists()


# --- making a token -------------------------------------------------------------------------


def test_a_new_token_is_shown_once_and_only_its_hash_is_stored(curator_client, curator):
    response = curator_client.post(TOKENS, {"name": "nightly export", "role": "curator", "expires_days": ""})

    assert response.status_code == 200
    token = made(response)
    stored = ApiToken.objects.get()
    assert (stored.user, stored.name, stored.role, stored.expires_at) == (curator, "nightly export", "curator", None)
    assert stored.key_hash == digest(token)
    assert token.startswith(f"oam_{stored.prefix}_")
    row = ApiToken.objects.filter(pk=stored.pk).values().get()
    assert not any(token in str(value) for value in row.values())
    html = response.content.decode()
    assert "it will not be shown again" in html
    assert f'data-copy="{token}"' in html
    # In the POST's answer only: not cached, not in a URL, not in the session for a later page.
    assert "no-store" in response["Cache-Control"]
    assert not response.has_header("Location")
    assert token not in str(dict(curator_client.session))
    again = curator_client.get(TOKENS).content.decode()
    assert token not in again
    assert f"oam_{stored.prefix}_…" in again
    assert api_status(token) == 200


def test_the_form_is_empty_again_after_a_token_is_made(curator_client):
    response = curator_client.post(TOKENS, {"name": "first", "role": "viewer"})

    form = response.context["form"]
    assert not form.is_bound
    assert form["name"].value() is None


def test_a_viewer_makes_a_viewer_token_that_reads(viewer_client, viewer):
    token = made(viewer_client.post(TOKENS, {"name": "reader", "role": "viewer"}))

    assert ApiToken.objects.get().role == "viewer"
    assert api_status(token) == 200


def test_an_expiry_in_days_is_stored_as_a_time(curator_client):
    before = timezone.now()
    made(curator_client.post(TOKENS, {"name": "for a month", "role": "viewer", "expires_days": "30"}))

    expires_at = ApiToken.objects.get().expires_at
    assert before + timedelta(days=30) <= expires_at <= timezone.now() + timedelta(days=30)


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"name": "", "role": "viewer"}, "name", "This field is required."),
        ({"name": "   ", "role": "viewer"}, "name", "This field is required."),
        ({"name": "x" * 101, "role": "viewer"}, "name", "Ensure this value has at most 100 characters (it has 101)."),
        ({"name": "nul\x00byte", "role": "viewer"}, "name", "Null characters are not allowed."),
        ({"name": "x", "role": "admin"}, "role", "Pick viewer or curator."),
        ({"name": "x"}, "role", "This field is required."),
        ({"name": "x", "role": "viewer", "expires_days": "0"}, "expires_days", "expires in 1 to 3650 days"),
        ({"name": "x", "role": "viewer", "expires_days": "3651"}, "expires_days", "expires in 1 to 3650 days"),
        ({"name": "x", "role": "viewer", "expires_days": "soon"}, "expires_days", "Enter a whole number."),
    ],
)
def test_bad_input_is_a_form_error_on_its_field_and_makes_no_token(curator_client, data, field, message):
    response = curator_client.post(TOKENS, data)

    assert response.status_code == 400
    assert message in " ".join(response.context["form"].errors[field])
    assert 'id="new-token"' not in response.content.decode()
    assert not ApiToken.objects.exists()


def test_a_name_in_use_is_a_form_error_and_a_revoked_tokens_name_is_free_again(curator_client, curator):
    old, _ = create_token(curator, name="laptop", role="viewer")

    taken = curator_client.post(TOKENS, {"name": "laptop", "role": "viewer"})
    assert taken.status_code == 400
    assert taken.context["form"].errors["name"] == [
        "carl already has a token named 'laptop': revoke it or pick another name."
    ]
    assert taken.context["form"]["name"].value() == "laptop"  # what was typed stays
    assert ApiToken.objects.count() == 1

    revoke(old)
    assert curator_client.post(TOKENS, {"name": "laptop", "role": "viewer"}).status_code == 200
    assert ApiToken.objects.filter(name="laptop").count() == 2


def test_csrf_is_required_to_make_a_token(curator):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(curator)

    assert strict.post(TOKENS, {"name": "x", "role": "viewer"}).status_code == 403
    assert not ApiToken.objects.exists()


def test_the_name_is_escaped(curator_client):
    made(curator_client.post(TOKENS, {"name": "<script>alert(1)</script>", "role": "viewer"}))

    html = curator_client.get(TOKENS).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


# --- the list -------------------------------------------------------------------------------


def test_the_list_shows_each_tokens_role_times_and_state_usable_first(curator_client, curator, viewer):
    used, _ = create_token(curator, name="used", role="curator", expires_days=10)
    used.last_used_at = timezone.now() - timedelta(hours=3)
    used.save()
    gone, _ = create_token(curator, name="gone", role="viewer")
    revoke(gone)
    stale, _ = create_token(curator, name="stale", role="viewer", expires_days=1)
    stale.expires_at = timezone.now() - timedelta(days=1)
    stale.save()
    create_token(curator, name="fresh", role="viewer")
    create_token(viewer, name="someone else's", role="viewer")

    response = curator_client.get(TOKENS)

    assert [token.name for token in response.context["tokens"]] == ["fresh", "used", "stale", "gone"]
    html = response.content.decode()
    assert "someone else" not in html
    rows = dict(re.findall(r"<tr>\s*<td[^>]*>([a-z]+)</td>(.*?)</tr>", html, flags=re.DOTALL))
    assert "3 h ago" in rows["used"] and "in 10 days" in rows["used"] and ">active<" in rows["used"]
    assert ">never<" in rows["fresh"]
    assert ">expired<" in rows["stale"] and revoke_url(stale) in rows["stale"]
    assert ">revoked<" in rows["gone"] and revoke_url(gone) not in rows["gone"]
    assert f"oam_{used.prefix}_…" in rows["used"]


def test_a_token_of_a_demoted_owner_says_it_acts_with_the_lower_role(curator_client, curator):
    create_token(curator, name="writer", role="curator")
    grant_role(curator, "viewer")

    html = curator_client.get(TOKENS).content.decode()

    assert "acts as viewer" in html


def test_without_tokens_the_page_says_how_to_begin(viewer_client):
    assert "No tokens yet." in viewer_client.get(TOKENS).content.decode()


def test_an_admin_also_sees_everyone_elses_usable_tokens(client, admin, viewer, curator):
    create_token(viewer, name="vera-notebook", role="viewer")
    old, _ = create_token(curator, name="carl-old", role="curator")
    revoke(old)
    client.force_login(admin)

    response = client.get(TOKENS)

    assert [(token.user.username, token.name) for token in response.context["others"]] == [("vera", "vera-notebook")]
    assert "carl-old" not in response.content.decode()


def test_the_page_makes_a_query_count_independent_of_the_number_of_tokens(
    client, admin, viewer, curator, django_assert_max_num_queries
):
    for owner in (viewer, curator, admin):
        for n in range(5):
            create_token(owner, name=f"t{n}", role="viewer")
    client.force_login(admin)

    with django_assert_max_num_queries(8):
        assert client.get(TOKENS).status_code == 200


def test_others_do_not_see_an_admins_view(viewer_client, curator):
    create_token(curator, name="carl-thing", role="viewer")

    response = viewer_client.get(TOKENS)

    assert response.context["others"] is None
    assert "carl-thing" not in response.content.decode()


# --- revoking -------------------------------------------------------------------------------


def test_revoking_asks_first_then_the_token_gets_a_401(curator_client, curator):
    token, secret = create_token(curator, name="laptop", role="curator")

    page = curator_client.get(revoke_url(token))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Revoke the token “laptop”?" in html
    assert f"oam_{token.prefix}_…" in html
    assert "401" in html
    token.refresh_from_db()
    assert token.revoked_at is None and api_status(secret) == 200

    done = curator_client.post(revoke_url(token), follow=True)

    assert done.redirect_chain == [(TOKENS, 302)]
    assert "Revoked the token “laptop”" in done.content.decode()
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert api_status(secret) == 401


def test_a_viewer_revokes_their_own_token(viewer_client, viewer):
    token, secret = create_token(viewer, name="reader", role="viewer")

    assert viewer_client.post(revoke_url(token)).status_code == 302
    assert api_status(secret) == 401


def test_revoking_twice_says_so_and_keeps_the_first_time(curator_client, curator):
    token, _ = create_token(curator, name="laptop", role="viewer")
    revoke(token)
    first = ApiToken.objects.get().revoked_at

    page = curator_client.get(revoke_url(token)).content.decode()
    assert "is revoked" in page and 'type="submit" class="btn btn-danger"' not in page
    done = curator_client.post(revoke_url(token), follow=True)

    assert "was already revoked" in done.content.decode()
    assert ApiToken.objects.get().revoked_at == first


def test_someone_elses_token_is_a_404_and_stays_usable(viewer_client, curator):
    token, secret = create_token(curator, name="carl-script", role="curator")

    assert viewer_client.get(revoke_url(token)).status_code == 404
    assert viewer_client.post(revoke_url(token)).status_code == 404
    assert api_status(secret) == 200


def test_an_admin_revokes_anyones_token(client, admin, viewer):
    token, secret = create_token(viewer, name="vera-notebook", role="viewer")
    client.force_login(admin)

    page = client.get(revoke_url(token)).content.decode()
    assert "vera's scripts" in page and "<dt>Owner</dt><dd>vera</dd>" in page
    client.post(revoke_url(token))

    assert api_status(secret) == 401


def test_revoking_needs_a_post_with_the_csrf_token(curator_client, curator):
    token, secret = create_token(curator, name="laptop", role="viewer")
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(curator)

    assert strict.post(revoke_url(token)).status_code == 403
    assert curator_client.delete(revoke_url(token)).status_code == 405
    assert api_status(secret) == 200


def test_an_unknown_token_id_is_a_404(curator_client):
    assert curator_client.get(reverse("memory:token_revoke", args=[999])).status_code == 404
