"""Scoped logins (issue 30): a login limited to user bob and agent atlas, and its API token, find
nothing outside on any page or endpoint, and as a curator change nothing outside.

`test_every_url_of_both_front_doors_*` walks every URL pattern of the dashboard (`memory:`) and of
the API (`api:`), enumerated from the URL resolver (a new URL is walked without a change here),
with the ids of records OUTSIDE the scope in its path: 404 (never 403 or 500) where the path names
a record, no outside text or id in any 200 answer; then, as a scoped curator, every method that
writes, after which the store and the history outside are as they were.
"""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.test import APIClient

from memory.curation import Actor, Curation
from memory.engine import Visibility
from memory.models import AccessScope, BulkChange, CurationEntry, ReviewKind, ReviewMark
from memory.web.scopes import describe, scope_of, set_scope
from memory.web.tokens import create_token

from .world import build_world

OUTSIDE_TEXT = ("vegetarian", "Lisbon", "Alfama", "fish", "ZEBRA", "zeus-only")
"""Words only outside records hold (alice's world, bob's talk with agent zeus, a note of no user)."""
INSIDE_TEXT = "Bob drinks green tea"


@pytest.fixture
def world(agent_memory):
    """alice's world (outside: another user), bob's memory with agent atlas (inside), bob's with
    agent zeus and a note of no user (outside: another agent, no user)."""
    outside = build_world(agent_memory)
    agent_memory.add_user("bob", "Bob, who drinks tea.")
    thread = agent_memory.create_thread(thread_id="bob-chat", user_id="bob", agent_id="atlas")
    thread.add_messages([{"role": "user", "content": "I like tea."}])
    bob = agent_memory.add_memory(INSIDE_TEXT, memory_type="fact", memory_id="bob-tea", user_id="bob", agent_id="atlas")
    agent_memory.add_memory("ZEBRA zeus-only", memory_type="fact", memory_id="bob-zeus", user_id="bob", agent_id="zeus")
    agent_memory.add_memory("ZEBRA of no one", memory_type="fact", memory_id="nobody-note", agent_id="atlas")
    agent_memory.link_records("bob-tea", "fact", "bob-zeus", "fact", "relates_to")
    agent_memory.add_memory(  # a finding of the sensitive-data review, outside
        "Alice's card is 4111 1111 1111 1111, ZEBRA", memory_type="fact", memory_id="alice-card", user_id="alice"
    )
    assert agent_memory.list_findings(user_id="alice", limit=1)
    agent_memory.search("vegetarian", user_id="alice")  # an activity event of alice's
    agent_memory.activity.flush()
    return {"outside": outside, "bob": bob}


def scoped(username: str, group: str) -> User:
    user = User.objects.create_user(username=username, password=f"{username}-password")
    user.groups.add(Group.objects.get(name=group))
    set_scope(user, ["bob"], ["atlas"])
    return user


def outside_ids(world) -> dict[str, str]:
    """Path parameter values naming records outside the scope, by parameter name."""
    outside = world["outside"]
    return {
        "thread_id": outside.thread_id,
        "memory_id": outside.fact_id,
        "message_id": outside.message_ids[0],
        "image_id": outside.image_id,
        "relation_id": outside.link_id,
        "owner_id": outside.user_id,
    }


def record_state(agent_memory) -> str:
    """Everything of the store outside the scope, and the history of it, as one comparable text."""
    snapshot = agent_memory.snapshot()
    outside = [
        json.dumps(record, sort_keys=True, default=str)
        for record in snapshot.to_json()["records"]
        if not (record.get("user_id") == "bob" and record.get("agent_id") == "atlas")
    ]
    links = [json.dumps(relation, sort_keys=True, default=str) for relation in snapshot.to_json()["relations"]]
    threads = [json.dumps(thread, sort_keys=True, default=str) for thread in snapshot.to_json()["threads"]]
    return "\n".join(sorted(outside) + sorted(links) + sorted(threads))


def patterns(resolver: URLResolver | None = None, prefix: str = "", namespace: str = "") -> list[tuple[str, str]]:
    """(namespace:name, route) of every named URL pattern, from the resolver itself."""
    found = []
    for entry in (resolver or get_resolver()).url_patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}:{entry.namespace}" if namespace and entry.namespace else entry.namespace or namespace
            found += patterns(entry, prefix + str(entry.pattern), inner)
        elif isinstance(entry, URLPattern) and entry.name:
            found.append((f"{namespace}:{entry.name}" if namespace else entry.name, prefix + str(entry.pattern)))
    return found


def front_door_urls(world, agent_memory) -> list[tuple[str, str, str | None]]:
    """(name, path with outside ids, the same path with ids that name nothing or None when it
    names no record) for every dashboard and API pattern."""
    ids = outside_ids(world)
    event = agent_memory.list_activity(user_id="alice", limit=1)[0].id
    entry = CurationEntry.objects.filter(object_id=world["outside"].fact_id).order_by("id").first()
    urls = []
    for name, route in patterns():
        if not name.startswith(("memory:", "api:")):
            continue
        kwargs: dict[str, object] = {}
        missing: dict[str, object] = {}
        for part in route.split("<")[1:]:
            _, _, param = part.split(">")[0].rpartition(":")
            if param == "owner_id" and "agent" in name:
                kwargs[param], missing[param] = "zeus", "no-such-agent"
            elif param in ids:
                kwargs[param], missing[param] = ids[param], "no-such-id"
            elif param == "event_id":
                kwargs[param], missing[param] = event, "no-such-event"
            elif param == "entry_id":
                kwargs[param], missing[param] = (entry.pk if entry else 1), 999999
            elif param == "finding_id" and agent_memory.list_findings(user_id="alice", limit=1):
                kwargs[param], missing[param] = int(agent_memory.list_findings(user_id="alice", limit=1)[0].id), 999999
            elif param == "mark_id" and ReviewMark.objects.exists():
                kwargs[param], missing[param] = ReviewMark.objects.first().pk, 999999
            elif param == "change_id" and entry and entry.bulk_id:
                kwargs[param], missing[param] = entry.bulk_id, 999999
            else:
                kwargs[param] = missing[param] = 1
        names_record = kwargs != missing
        urls.append(
            (name, reverse(name, kwargs=kwargs or None), reverse(name, kwargs=missing) if names_record else None)
        )
    return urls


PROBE = "?user_id=alice&agent_id=zeus&thread_id=trip-42&memory_id=fact-vegetarian&q=vegetarian&query=vegetarian"
"""Query parameters that ask for what is outside: the answers must still hold nothing of it."""


def assert_nothing_outside(name: str, url: str, response, world) -> None:
    assert response.status_code < 500, f"{name} {url}: {response.status_code}"
    if response.status_code != 200 or (getattr(response, "streaming", False) and not name.endswith("export")):
        return
    body = b"".join(response.streaming_content) if getattr(response, "streaming", False) else response.content
    text = body.decode("utf-8", "replace")
    for word in (*OUTSIDE_TEXT, world["outside"].fact_id, world["outside"].old_fact_id, "bob-zeus", "nobody-note"):
        if word in url:
            continue  # a page may say what it was asked for (a filter, a form's next)
        assert word not in text, f"{name} {url} shows {word!r}"


@pytest.fixture
def entries(agent_memory, world):
    """History entries about alice's and bob's records (made by an unscoped admin)."""
    admin = User.objects.create_superuser("root", password="root-password")
    curation = Curation(agent_memory, Actor(admin))
    for memory_id, text in ((world["outside"].fact_id, "Alice is vegetarian, strictly."), ("bob-tea", INSIDE_TEXT)):
        with curation.bulk(f"Edited {memory_id} in bulk"):
            curation.update_memory(memory_id, version=agent_memory.get_memory(memory_id).version, content=text + " ")
    assert CurationEntry.objects.count() == 2 and BulkChange.objects.count() == 2
    outside = world["outside"]
    ReviewMark.objects.create(
        actor=admin,
        actor_name="root",
        kind=ReviewKind.ACCEPTED,
        relation_id=outside.link_id,
        relation_type="supersedes",
        source_record_id=outside.fact_id,
        target_record_id=outside.old_fact_id,
    )
    return CurationEntry.objects.count()


@pytest.mark.django_db
def test_every_url_of_both_front_doors_finds_nothing_outside_as_a_scoped_viewer_and_its_token(
    agent_memory, world, entries
):
    viewer = scoped("sam", "viewers")
    session = Client()
    session.force_login(viewer)
    _, token = create_token(viewer, name="script", role="viewer")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    walked = 0
    for name, url, missing in front_door_urls(world, agent_memory):
        clients = [("session", session)] + ([("token", api)] if name.startswith("api:") else [])
        for who, client in clients:
            for probe in ("", PROBE):
                response = client.get(url + probe)
                walked += 1
                assert_nothing_outside(f"{who} {name}", url + probe, response, world)
                if missing is not None:  # an outside record answers as one that does not exist
                    expected = client.get(missing + probe).status_code
                    assert response.status_code == expected, f"{who} {name} {url}: {response.status_code}"
                    assert response.status_code != 403 or expected == 403
    assert walked > 100


@pytest.mark.django_db
def test_every_write_of_both_front_doors_as_a_scoped_curator_changes_nothing_outside(agent_memory, world, entries):
    curator = scoped("cora", "curators")
    session = Client()
    answered: list[int] = []
    session.force_login(curator)
    _, token = create_token(curator, name="script", role="curator")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    before, history = record_state(agent_memory), CurationEntry.objects.exclude(object_id="bob-tea").count()
    body = {
        "content": "overwritten ZEBRA",
        "user_id": "alice",
        "agent_id": "zeus",
        "thread_id": "trip-42",
        "memory_type": "fact",
        "source_record_id": "bob-tea",
        "source_record_type": "fact",
        "target_record_id": world["outside"].fact_id,
        "target_record_type": "fact",
        "relation_type": "relates_to",
        "information": "taken over",
        "confirm": world["outside"].user_id,
    }
    for name, url, missing in front_door_urls(world, agent_memory):
        for target in (url, missing) if missing else (url,):
            if name.startswith("api:"):
                calls = [api.post(target, body, format="json"), api.put(target, body, format="json")]
                calls += [api.patch(target, body, format="json"), api.delete(target)]
            else:
                calls = [session.post(target, body), session.post(target, {**body, "ids": world["outside"].fact_id})]
            statuses = [response.status_code for response in calls]
            assert max(statuses) < 500, f"{name} {target}: {statuses}"
            if target == url:
                answered = statuses
            elif answered != statuses:  # an outside record answers as one that does not exist
                raise AssertionError(f"{name}: {answered} for {url}, {statuses} for {target}")
    assert record_state(agent_memory) == before
    assert CurationEntry.objects.exclude(object_id="bob-tea").count() == history
    assert ReviewMark.objects.count() == 1  # the decision about alice's link was not taken back


@pytest.mark.django_db
def test_counts_lists_and_search_hold_only_the_scope(agent_memory, world):
    viewer = scoped("sam", "viewers")
    _, token = create_token(viewer, name="script", role="viewer")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    memories = api.get(reverse("api:memories")).json()["results"]
    assert [memory["id"] for memory in memories] == ["bob-tea"]
    stats = api.get(reverse("api:stats")).json()
    assert stats["threads"] == 1 and stats["users"] == 1 and stats["agents"] == 1
    found = api.get(reverse("api:search"), {"query": "ZEBRA vegetarian tea", "user_id": "bob"}).json()
    assert "ZEBRA" not in json.dumps(found)
    session = Client()
    session.force_login(viewer)
    overview = session.get(reverse("memory:overview"))
    assert overview.status_code == 200 and b"You see bob (agent atlas)" in overview.content
    listing = session.get(reverse("memory:memory_list"))
    assert INSIDE_TEXT.encode() in listing.content and b"vegetarian" not in listing.content


@pytest.mark.django_db
def test_a_scoped_curator_adds_a_memory_only_inside(agent_memory, world):
    curator = scoped("cora", "curators")
    _, token = create_token(curator, name="script", role="curator")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    refused = api.post(
        reverse("api:memories"), {"content": "x", "user_id": "alice", "agent_id": "atlas"}, format="json"
    )
    assert refused.status_code == 400 and "user_id" in refused.json()["errors"]
    no_user = api.post(reverse("api:memories"), {"content": "x", "agent_id": "atlas"}, format="json")
    assert no_user.status_code == 400 and "user_id must be one of bob" in json.dumps(no_user.json())
    made = api.post(reverse("api:memories"), {"content": "y", "user_id": "bob", "agent_id": "atlas"}, format="json")
    assert made.status_code == 201, made.json()


@pytest.mark.django_db
def test_oam_user_adds_shows_sets_and_clears_a_scope(capsys):
    call_command(
        "oam_user", "add", "sam", "--role", "viewer", "--password", "a-long-pass-phrase", "--users", "alice,bob"
    )
    assert "it sees alice, bob." in capsys.readouterr().out
    sam = User.objects.get(username="sam")
    assert scope_of(sam) == Visibility(users=["alice", "bob"])
    call_command("oam_user", "scope", "sam", "--agents", "atlas")
    assert "now sees alice, bob (agent atlas)" in capsys.readouterr().out
    call_command("oam_user", "scope", "sam")
    assert "sees alice, bob (agent atlas)" in capsys.readouterr().out
    call_command("oam_user", "scope", "sam", "--clear")
    assert "now sees everything" in capsys.readouterr().out
    assert not AccessScope.objects.exists()
    with pytest.raises(CommandError, match="no login"):
        call_command("oam_user", "scope", "nobody", "--users", "bob")
    with pytest.raises(CommandError):
        call_command("oam_user", "scope", "sam", "--users", "bad\x00id")


@pytest.mark.django_db
def test_staff_set_and_clear_a_scope_on_the_logins_page(client):
    admin = User.objects.create_superuser("root", password="root-password")
    sam = User.objects.create_user("sam", password="sam-password")
    sam.groups.add(Group.objects.get(name="viewers"))
    client.force_login(admin)
    page = client.get(reverse("memory:logins"))
    assert page.status_code == 200 and b"Sees everything" in page.content
    saved = client.post(
        reverse("memory:login_scope", args=[sam.pk]),
        {f"login{sam.pk}-users": "bob, alice", f"login{sam.pk}-agents": ""},
    )
    assert saved.status_code == 302
    assert describe(AccessScope.objects.get(login=sam).visibility()) == "alice, bob"
    refused = client.post(reverse("memory:login_scope", args=[admin.pk]), {f"login{admin.pk}-users": "bob"})
    assert refused.status_code == 400 and b"an admin sees everything" in refused.content
    client.post(reverse("memory:login_scope", args=[sam.pk]), {"clear": "1"})
    assert not AccessScope.objects.exists()
    sam_client = Client()
    sam_client.force_login(sam)
    assert sam_client.get(reverse("memory:logins")).status_code == 403


@pytest.mark.django_db
def test_django_rows_a_scoped_login_sees(agent_memory, world):
    """Import jobs: those of logins with the same scope; check runs (the whole store): none."""
    from memory.engine import visible_as
    from memory.models import CheckRun, ImportJob

    sam, other = scoped("sam", "curators"), scoped("sol", "curators")
    admin = User.objects.create_superuser("root", password="root-password")
    for actor in (sam, other, admin):
        ImportJob.objects.create(actor=actor, actor_name=actor.username, file_name="f.jsonl", size=1, total=1)
    CheckRun.objects.create(actor=admin, actor_name="root", ok=True)
    with visible_as(scope_of(sam)):
        assert sorted(job.actor_name for job in ImportJob.objects.all()) == ["sam", "sol"]
        assert not CheckRun.objects.exists()
    assert ImportJob.objects.count() == 3 and CheckRun.objects.count() == 1


@pytest.mark.django_db
def test_the_history_of_a_scoped_login_holds_only_changes_inside(agent_memory, world, entries):
    viewer = scoped("sam", "viewers")
    session = Client()
    session.force_login(viewer)
    history = session.get(reverse("memory:history"))
    assert history.status_code == 200
    assert b"bob-tea" in history.content and b"fact-vegetarian" not in history.content
    assert b"Edited bob-tea in bulk" in history.content and b"Edited fact-vegetarian" not in history.content
    outside = CurationEntry.objects.filter(object_id=world["outside"].fact_id).first()
    assert session.get(reverse("memory:history_entry", args=[outside.pk])).status_code == 404
    assert session.post(reverse("memory:history_revert", args=[outside.pk])).status_code == 403  # a viewer


@pytest.mark.django_db
def test_a_scoped_curator_cannot_move_a_memory_out_of_its_scope(agent_memory, world):
    """An edit that gives bob's memory to alice (or to agent zeus) would write into alice's data,
    which her agents then retrieve: a 400 naming the field, and the memory stays bob's."""
    curator = scoped("cora", "curators")
    _, token = create_token(curator, name="script", role="curator")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    url = reverse("api:memory", args=["bob-tea"])
    for moved in ({"user_id": "alice"}, {"agent_id": "zeus"}):
        refused = api.patch(url, moved, format="json")
        assert refused.status_code == 400, refused.content
        assert next(iter(moved)) in json.dumps(refused.json())
    record = agent_memory.get_memory("bob-tea")
    assert (record.user_id, record.agent_id) == ("bob", "atlas")
