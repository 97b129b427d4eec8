"""manage.py oam_token: create (the token on the last line), list and revoke."""

from __future__ import annotations

import io
import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.utils import timezone

from memory.management.commands.oam_token import Command
from memory.models import ApiToken
from memory.web.tokens import create_token, digest, revoke
from tests.api.conftest import bearer

API = "/api/v1/memories/"


def run(*args: str) -> list[str]:
    out = io.StringIO()
    call_command("oam_token", *args, stdout=out, no_color=True)
    return out.getvalue().splitlines()


# --- create ---------------------------------------------------------------------------------


def test_create_prints_the_token_on_its_last_line_and_stores_only_its_hash(curator):
    lines = run("create", "carl", "--name", "nightly", "--role", "curator")

    token = lines[-1]
    stored = ApiToken.objects.get()
    assert stored.key_hash == digest(token)
    assert (stored.user, stored.name, stored.role, stored.expires_at) == (curator, "nightly", "curator", None)
    assert token.startswith(f"oam_{stored.prefix}_") and " " not in token
    assert lines[:-1] == [
        f'Created the curator token "nightly" (oam_{stored.prefix}_…) for carl; it never expires.',
        "It is shown once, on the next line: only its hash is kept.",
    ]
    assert bearer(token).post(API, {"content": "Written by the nightly job."}, format="json").status_code == 201


def test_create_with_an_expiry(viewer):
    before = timezone.now()
    lines = run("create", "vera", "--name", "month", "--role", "viewer", "--expires-days", "30")

    stored = ApiToken.objects.get()
    assert before + timedelta(days=30) <= stored.expires_at <= timezone.now() + timedelta(days=30)
    assert f"expires {stored.expires_at:%Y-%m-%d %H:%M} UTC" in lines[0]
    assert bearer(lines[-1]).get(API).status_code == 200


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["create", "nobody", "--name", "x", "--role", "viewer"], 'No login named "nobody"'),
        (["create", "vera", "--name", "x", "--role", "curator"], "no higher than its owner's: vera has viewer"),
        (["create", "vera", "--name", "x", "--role", "admin"], "invalid choice: 'admin'"),
        (["create", "vera", "--name", "  ", "--role", "viewer"], "Give the token a name"),
        (["create", "vera", "--name", "x" * 101, "--role", "viewer"], "at most 100 characters"),
        (["create", "vera", "--name", "nightly\nbatch", "--role", "viewer"], "one line of text"),
        (["create", "vera", "--name", "x", "--role", "viewer", "--expires-days", "0"], "1 to 3650 days"),
        (["create", "vera", "--name", "x", "--role", "viewer", "--expires-days", "soon"], "invalid int value"),
        (["create", "vera", "--role", "viewer"], "the following arguments are required: --name"),
    ],
)
def test_create_refuses_with_a_clear_message_and_makes_nothing(viewer, args, message):
    with pytest.raises(CommandError, match=re.escape(message)):
        run(*args)
    assert not ApiToken.objects.exists()


def test_create_refuses_a_name_in_use(curator):
    run("create", "carl", "--name", "laptop", "--role", "viewer")

    with pytest.raises(CommandError, match="carl already has a token named 'laptop'"):
        run("create", "carl", "--name", "laptop", "--role", "curator")
    assert ApiToken.objects.count() == 1


def test_an_account_without_a_role_gets_no_token(db):
    User.objects.create_user("nobody", password="nobody-password")

    with pytest.raises(CommandError, match="nobody has no role"):
        run("create", "nobody", "--name", "x", "--role", "viewer")


# --- list -----------------------------------------------------------------------------------


def test_list_shows_every_token_with_its_state_and_never_the_secret(viewer, curator):
    used, used_secret = create_token(curator, name="used", role="curator", expires_days=5)
    used.last_used_at = timezone.now()
    used.save()
    gone, gone_secret = create_token(viewer, name="gone", role="viewer")
    revoke(gone)
    stale, _ = create_token(viewer, name="stale", role="viewer", expires_days=1)
    stale.expires_at = timezone.now() - timedelta(hours=1)
    stale.save()

    lines = run("list")

    assert lines[0].split() == ["USER", "NAME", "PREFIX", "ROLE", "CREATED", "LAST", "USED", "EXPIRES", "STATE"]
    rows = {line.split()[1]: line for line in lines[1:]}
    assert set(rows) == {"used", "gone", "stale"}
    assert rows["used"].split()[:4] == ["carl", "used", f"oam_{used.prefix}", "curator"]
    assert rows["used"].endswith("active") and "never" not in rows["used"]
    assert rows["gone"].endswith("revoked")
    assert rows["stale"].endswith("expired")
    assert all(secret not in "\n".join(lines) for secret in (used_secret, gone_secret))


def test_list_of_one_user(viewer, curator):
    create_token(viewer, name="vera-notebook", role="viewer")
    create_token(curator, name="carl-script", role="curator")

    assert [line.split()[1] for line in run("list", "vera")[1:]] == ["vera-notebook"]
    assert run("list", "carl")[1].split()[1] == "carl-script"


def test_list_says_when_there_is_nothing(viewer):
    assert run("list") == ["No tokens."]
    assert run("list", "vera") == ["vera has no tokens."]
    with pytest.raises(CommandError, match='No login named "nobody"'):
        run("list", "nobody")


# --- revoke ---------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["oam_{prefix}", "{prefix}", "oam_{prefix}_", "{token}"])
def test_revoke_by_prefix_as_listed_or_by_the_token_itself(curator, form):
    token, secret = create_token(curator, name="laptop", role="curator")
    _, other_secret = create_token(curator, name="desktop", role="curator")

    lines = run("revoke", form.format(prefix=token.prefix, token=secret))

    assert lines == [f'Revoked the token "laptop" (oam_{token.prefix}_…) of carl.']
    assert bearer(secret).get(API).status_code == 401
    assert bearer(other_secret).get(API).status_code == 200


def test_revoke_by_user_and_name(viewer, curator):
    _, secret = create_token(curator, name="laptop", role="viewer")
    _, vera_secret = create_token(viewer, name="laptop", role="viewer")

    run("revoke", "carl", "--name", "laptop")

    assert bearer(secret).get(API).status_code == 401
    assert bearer(vera_secret).get(API).status_code == 200


def test_revoke_by_name_takes_the_active_token_over_a_revoked_namesake(curator):
    old, _ = create_token(curator, name="laptop", role="viewer")
    revoke(old)
    new, secret = create_token(curator, name="laptop", role="viewer")

    run("revoke", "carl", "--name", "laptop")

    new.refresh_from_db()
    assert new.revoked_at is not None
    assert bearer(secret).get(API).status_code == 401


def test_revoking_a_revoked_token_says_so_and_changes_nothing(curator):
    token, _ = create_token(curator, name="laptop", role="viewer")
    revoke(token)
    first = ApiToken.objects.get().revoked_at

    [line] = run("revoke", token.prefix)

    assert line.startswith('The token "laptop" of carl was already revoked')
    assert ApiToken.objects.get().revoked_at == first


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["revoke", "deadbeef"], "No token has the prefix oam_deadbeef"),
        (["revoke", "oam_"], "No prefix in 'oam_'"),
        (["revoke", "carl", "--name", "nope"], 'carl has no token named "nope"'),
        (["revoke", "nobody", "--name", "laptop"], 'No login named "nobody"'),
        (["revoke"], "the following arguments are required: PREFIX|USER"),
    ],
)
def test_revoke_refuses_with_a_clear_message_and_revokes_nothing(curator, args, message):
    create_token(curator, name="laptop", role="viewer")

    with pytest.raises(CommandError, match=re.escape(message)):
        run(*args)
    assert ApiToken.objects.get().revoked_at is None


def test_a_prefix_two_tokens_share_is_refused(viewer, curator):
    first, _ = create_token(viewer, name="vera-notebook", role="viewer")
    second, _ = create_token(curator, name="carl-script", role="viewer")
    ApiToken.objects.filter(pk=second.pk).update(prefix=first.prefix)

    with pytest.raises(CommandError, match=r"Several tokens have the prefix .* revoke by USER --name NAME instead"):
        run("revoke", first.prefix)
    assert not ApiToken.objects.filter(revoked_at__isnull=False).exists()


# --- help -----------------------------------------------------------------------------------


def test_the_help_documents_every_action():
    help_text = Command().create_parser("manage.py", "oam_token").format_help()

    for usage in (
        "oam_token create USER --name NAME --role viewer|curator [--expires-days N]",
        "LAST line",
        "oam_token list [USER]",
        "oam_token revoke PREFIX",
        "oam_token revoke USER --name NAME",
    ):
        assert usage in help_text
