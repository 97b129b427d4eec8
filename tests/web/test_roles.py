"""Every page requires a login; viewers read and are refused every write; curators do both.

The URL lists below classify every route of the dashboard; a test fails when a new route is not
classified, so no page can be added without deciding who may use it.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.urls import reverse

from memory import urls as dashboard_urls
from memory.curation import Actor, Curation
from memory.models import ApiToken, BulkChange, CurationEntry, SavedView
from memory.web.access import role_of
from memory.web.context_processors import THEME_COOKIE
from memory.web.tokens import create_token

from .world import World, build_world


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def read_urls(world: World) -> dict[str, str]:
    message = world.message_ids[0]
    return {
        "overview": reverse("memory:overview"),
        "thread_list": reverse("memory:thread_list"),
        "thread_detail": reverse("memory:thread_detail", args=[world.thread_id]),
        "message_detail": reverse("memory:message_detail", args=[world.thread_id, message]),
        "memory_list": reverse("memory:memory_list"),
        "memory_detail": reverse("memory:memory_detail", args=[world.fact_id]),
        "image_detail": reverse("memory:image_detail", args=[world.image_id]),
        "image_raw": reverse("memory:image_raw", args=[world.image_id]),
        "user_list": reverse("memory:user_list"),
        "user_detail": reverse("memory:user_detail", args=[world.user_id]),
        "agent_list": reverse("memory:agent_list"),
        "agent_detail": reverse("memory:agent_detail", args=[world.agent_id]),
        "history": reverse("memory:history"),
        "search": reverse("memory:search") + "?q=vegetarian&user_id=alice",
        "card_preview": reverse("memory:card_preview", args=[world.thread_id]),
        "memory_picks": reverse("memory:memory_picks") + "?q=alice",
        "graph": reverse("memory:graph") + f"?user_id={world.user_id}",
        "graph_data": reverse("memory:graph_data") + f"?user_id={world.user_id}",
        "graph_node": reverse("memory:graph_node", args=[world.fact_id]),
        "tokens": reverse("memory:tokens"),
        # a preview: viewers may look, its POST is for curators (tests/web/test_bulk.py)
        "memory_bulk": reverse("memory:memory_bulk") + f"?ids={world.fact_id}&action=delete",
        "review": reverse("memory:review"),
        "review_sensitive": reverse("memory:review_sensitive"),
        "user_map": reverse("memory:user_map", args=[world.user_id]),
        "review_duplicates": reverse("memory:review_duplicates") + f"?user_id={world.user_id}",  # POST: curators
    }


def write_urls(world: World) -> dict[str, str]:
    message = world.message_ids[0]
    return {
        "thread_edit": reverse("memory:thread_edit", args=[world.thread_id]),
        "thread_delete": reverse("memory:thread_delete", args=[world.thread_id]),
        "image_add": reverse("memory:image_add", args=[world.thread_id]),
        "message_edit": reverse("memory:message_edit", args=[world.thread_id, message]),
        "message_delete": reverse("memory:message_delete", args=[world.thread_id, message]),
        "memory_create": reverse("memory:memory_create"),
        "memory_edit": reverse("memory:memory_edit", args=[world.fact_id]),
        "memory_delete": reverse("memory:memory_delete", args=[world.fact_id]),
        "image_edit": reverse("memory:image_edit", args=[world.image_id]),
        "image_describe": reverse("memory:image_describe", args=[world.image_id]),
        "image_delete": reverse("memory:image_delete", args=[world.image_id]),
        "user_edit": reverse("memory:user_edit", args=[world.user_id]),
        "user_delete": reverse("memory:user_delete", args=[world.user_id]),
        "agent_edit": reverse("memory:agent_edit", args=[world.agent_id]),
        "agent_delete": reverse("memory:agent_delete", args=[world.agent_id]),
        "summary_refresh": reverse("memory:summary_refresh", args=[world.thread_id]),
        "memories_extract": reverse("memory:memories_extract", args=[world.thread_id]),
        "link_create": reverse("memory:link_create"),
        "link_edit": reverse("memory:link_edit", args=[world.link_id]),
        "link_delete": reverse("memory:link_delete", args=[world.link_id]),
        "message_bulk_delete": reverse("memory:message_bulk_delete", args=[world.thread_id]) + f"?ids={message}",
        "review_purge": reverse("memory:review_purge"),
        **{
            name: reverse(f"memory:{name}", args=[world.link_id])
            for name in ("review_accept", "review_revert", "review_keep", "review_dismiss")
        },
        "review_reopen": reverse("memory:review_reopen", args=[1]),
        "review_redact": reverse("memory:review_redact", args=[1]),
        "review_not_sensitive": reverse("memory:review_not_sensitive", args=[1]),
        "transfer": reverse("memory:transfer"),
        "transfer_export": reverse("memory:transfer_export"),
        "check_run": reverse("memory:check_run"),
    }


# Routes that need a history entry to exist, and routes of one's own settings, which any
# logged-in account (set_theme) or any role (API tokens: tests/web/test_tokens.py) may post to.
ACTIVITY_ROUTES = {"activity", "activity_event", "activity_replay"}
"""Read pages over the activity log, an event's id in two of them (tests/web/test_activity_pages.py)."""
HISTORY_ROUTES = {"history_entry", "history_revert", "history_bulk", "history_bulk_revert"}
PERSONAL_ROUTES = {"set_theme", "token_revoke", "saved_view_create", "saved_view_delete"}
POST_ONLY = {"image_describe", "summary_refresh", "memories_extract", "check_run"}
STAFF_ROUTES = {"user_erase", "erasure_list", "erasure_receipt", "erasure_receipt_json"}
"""Erasing a person and its receipts: staff only (tests/web/test_erasure.py)."""
LOGIN_ROUTES = {"logins", "login_scope"}
"""Logins and their scopes: staff only (tests/web/test_scoped_logins.py)."""
# Routes of one import job (curators only: tests/web/test_transfer.py).
IMPORT_ROUTES = {"import_job", "import_resume"}
POST_ONLY |= {"review_accept", "review_revert", "review_keep", "review_dismiss", "review_reopen"}
POST_ONLY |= {"review_redact", "review_not_sensitive"}


def test_every_route_is_classified(world):
    routes = {pattern.name for pattern in dashboard_urls.urlpatterns}
    classified = (
        set(read_urls(world))
        | set(write_urls(world))
        | HISTORY_ROUTES
        | PERSONAL_ROUTES
        | IMPORT_ROUTES
        | ACTIVITY_ROUTES
        | STAFF_ROUTES
        | LOGIN_ROUTES
    )
    assert routes == classified


def test_anonymous_visitors_are_sent_to_log_in_everywhere(client, world):
    for url in [*read_urls(world).values(), *write_urls(world).values()]:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login")), url


def test_anonymous_posts_change_nothing(client, world, agent_memory):
    before = agent_memory.stats()
    for url in write_urls(world).values():
        assert client.post(url, {"content": "x"}).status_code == 302
    assert agent_memory.stats() == before


def test_viewers_read_every_page(viewer_client, world):
    for name, url in read_urls(world).items():
        assert viewer_client.get(url).status_code == 200, name


def test_viewers_see_no_edit_controls(viewer_client, world):
    for name in ("thread_detail", "memory_detail", "image_detail", "user_detail", "memory_list", "message_detail"):
        html = viewer_client.get(read_urls(world)[name]).content.decode()
        for write_url in write_urls(world).values():
            assert f'href="{write_url}"' not in html, (name, write_url)
            assert f'action="{write_url}"' not in html, (name, write_url)


def test_viewers_get_403_for_every_write_even_a_hand_made_post(viewer_client, world, agent_memory):
    before = agent_memory.stats()
    for name, url in write_urls(world).items():
        if name not in POST_ONLY:
            assert viewer_client.get(url).status_code == 403, name
        assert viewer_client.post(url, {"content": "changed", "version": 1}).status_code == 403, name
    assert agent_memory.stats() == before


def test_a_viewers_post_to_any_dashboard_page_is_a_403_and_changes_nothing(
    viewer_client, viewer, curator, world, agent_memory
):
    """docs/security.md: "any write, even a hand-made POST, is a 403", read pages included: they take no
    POST, and answered one with the page (a 200, as if it had been taken). Every route of the
    dashboard is walked, but those of the viewer's own settings (the next test)."""
    service = Curation(agent_memory, Actor(curator))
    with service.bulk("Edited in bulk") as change:
        entry = service.update_memory(world.fact_id, version=1, content="Alice is vegan.")
    job_args = [1]  # curators' pages: refused before any import job is looked up
    agent_memory.activity.flush()
    event_id = agent_memory.list_activity(limit=1)[0].id  # the edit's write
    urls = {
        **read_urls(world),
        **write_urls(world),
        "history_entry": reverse("memory:history_entry", args=[entry.pk]),
        "history_revert": reverse("memory:history_revert", args=[entry.pk]),
        "history_bulk": reverse("memory:history_bulk", args=[change.pk]),
        "history_bulk_revert": reverse("memory:history_bulk_revert", args=[change.pk]),
        "import_job": reverse("memory:import_job", args=job_args),
        "import_resume": reverse("memory:import_resume", args=job_args),
        "activity": reverse("memory:activity"),
        "activity_event": reverse("memory:activity_event", args=[event_id]),
        "activity_replay": reverse("memory:activity_replay", args=[event_id]),
        "user_erase": reverse("memory:user_erase", args=[world.user_id]),
        "erasure_list": reverse("memory:erasure_list"),
        "erasure_receipt": reverse("memory:erasure_receipt", args=[1]),
        "erasure_receipt_json": reverse("memory:erasure_receipt_json", args=[1]),
        "logins": reverse("memory:logins"),
        "login_scope": reverse("memory:login_scope", args=[viewer.pk]),
    }
    own_settings = {"tokens", "token_revoke", "set_theme", "saved_view_create", "saved_view_delete"}
    assert {pattern.name for pattern in dashboard_urls.urlpatterns} == set(urls) | own_settings
    store = agent_memory.snapshot().to_json()
    history = (list(CurationEntry.objects.values()), list(BulkChange.objects.values()))
    for name, url in urls.items():
        if name in own_settings:
            continue
        form = {"content": "changed", "metadata": '{"x": 1}', "version": 2, "confirm": "yes", "keep": world.fact_id}
        response = viewer_client.post(url, form)
        assert response.status_code == 403, (name, response.status_code)
        assert b"Only curators can change the memory store" in response.content, name
    assert agent_memory.snapshot().to_json() == store
    assert (list(CurationEntry.objects.values()), list(BulkChange.objects.values())) == history
    assert not ApiToken.objects.filter(user=viewer).exists()


def test_a_viewer_still_posts_to_their_own_settings(viewer_client, viewer):
    """The pages where a viewer changes what is theirs, not the store: the theme, their API
    tokens (made and revoked), their saved views (saved and deleted), and logging out."""
    theme = viewer_client.post(reverse("memory:set_theme"), {"theme": "dark", "next": "/memories/"})
    assert theme.status_code == 302
    assert (theme["Location"], theme.cookies[THEME_COOKIE].value) == ("/memories/", "dark")
    assert viewer_client.post(reverse("memory:tokens"), {"name": "reader", "role": "viewer"}).status_code == 200
    token, _ = create_token(viewer, name="old", role="viewer")
    assert viewer_client.post(reverse("memory:token_revoke", args=[token.pk])).status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert ApiToken.objects.filter(user=viewer, name="reader").exists()
    saved = viewer_client.post(
        reverse("memory:saved_view_create"), {"name": "mine", "listing": "memories", "query": "user_id=alice"}
    )
    assert saved.status_code == 302
    view = SavedView.objects.get(user=viewer)
    assert viewer_client.post(reverse("memory:saved_view_delete", args=[view.pk])).status_code == 302
    assert viewer_client.post(reverse("logout")).status_code == 302
    assert viewer_client.get(reverse("memory:overview")).status_code == 302  # logged out: to the login page


def test_curators_reach_every_page_and_form(curator_client, world):
    for name, url in [*read_urls(world).items(), *write_urls(world).items()]:
        if name not in POST_ONLY:
            assert curator_client.get(url).status_code == 200, name


def test_an_account_without_a_role_reads_nothing(client, db, world):
    client.force_login(User.objects.create_user("nobody", password="nobody-password"))

    response = client.get(reverse("memory:overview"))

    assert response.status_code == 403
    assert b"no role" in response.content


def test_staff_are_admins(client, db, world):
    admin = User.objects.create_user("ada", password="ada-password", is_staff=True)
    client.force_login(admin)

    assert role_of(admin) == "admin"
    assert client.get(write_urls(world)["memory_edit"]).status_code == 200


def test_csrf_stays_on_for_forms_and_htmx(world, curator):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(curator)
    url = write_urls(world)["thread_edit"]

    assert strict.post(url, {"metadata": "{}", "version": 1}).status_code == 403
    assert strict.post(url, {"metadata": "{}", "version": 1}, HTTP_HX_REQUEST="true").status_code == 403


def test_the_page_carries_the_csrf_token_for_htmx_requests(curator_client, world):
    html = curator_client.get(reverse("memory:overview")).content.decode()

    assert 'hx-headers=\'{"X-CSRFToken": "' in html


# --- manage.py oam_user -------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["viewer", "curator", "admin"])
def test_oam_user_adds_a_login_with_a_role(role):
    call_command("oam_user", "add", "rita", "--role", role, "--password", "a long enough passphrase")

    user = User.objects.get(username="rita")
    assert user.check_password("a long enough passphrase")
    assert role_of(user) == role


@pytest.mark.django_db
def test_oam_user_refuses_a_taken_name_and_a_weak_password():
    call_command("oam_user", "add", "rita", "--role", "viewer", "--password", "a long enough passphrase")

    with pytest.raises(CommandError, match="already exists"):
        call_command("oam_user", "add", "rita", "--role", "viewer", "--password", "another long passphrase")
    with pytest.raises(CommandError, match="too short"):
        call_command("oam_user", "add", "sam", "--role", "viewer", "--password", "abc")
    assert not User.objects.filter(username="sam").exists()


@pytest.mark.django_db
def test_oam_user_asks_for_the_password_on_a_terminal(monkeypatch):
    answers = iter(["a long enough passphrase", "a long enough passphrase"])
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("getpass.getpass", lambda prompt: next(answers))

    call_command("oam_user", "add", "tom", "--role", "curator")

    assert User.objects.get(username="tom").check_password("a long enough passphrase")


@pytest.mark.django_db
def test_oam_user_without_a_terminal_needs_the_password_option(monkeypatch):
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)

    with pytest.raises(CommandError, match="--password"):
        call_command("oam_user", "add", "tom", "--role", "curator")
