"""Screenshots of the dashboard's pages: `make screenshots` (or `.venv/bin/python docs/screenshots.py
[NAME ...]`, only the pages named).

Builds a throwaway world in a temporary folder: a memory store seeded by `seed_demo --seed=1
--end-date=2026-11-20`, a Django database migrated from scratch, and a curator login. Serves the
app on a free port of 127.0.0.1, logs in through the login form with Debian's Chromium, and saves,
for every page of PAGES, docs/screenshots/<name>-light.png and <name>-dark.png (1400x900, the dark
one with `prefers-color-scheme: dark` emulated), and <name>-narrow.png (390x844, light) for pages
marked narrow. The store, database and secret key in var/ are left alone.

The app's clock starts at FROZEN_AT (time-machine), since the store stamps threads' latest activity
and judges expiry with the current time: the same pages come out on any day.

To photograph another page, add it to PAGES (with `act`, what to do on it first: the tokens page
is taken as it answers the creation of a token).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "screenshots"
SEED_ARGS = ["--seed=1", "--end-date=2026-11-20"]
FROZEN_AT = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)  # the morning after the demo conversations
USERNAME = "carl"
ADMIN = "ada"
"""An admin (staff) login with the same password, for the pages only admins open."""
NARROW_VIEWPORT = {"width": 390, "height": 844}


class Shot(NamedTuple):
    name: str  # file names start with it
    path: str  # the URL path to open; {memory}, {image} and {entry} are ids of the seeded world
    narrow: bool = False  # also a 390-wide light shot
    anonymous: bool = False  # taken without logging in
    ready: str = ""  # a selector to wait for before the shot (a page that draws after loading)
    act: Callable[[Page], None] | None = None  # what to do on the page before the shot (send a form)
    admin: bool = False  # taken as ADMIN (a staff page) rather than the curator


NEW_TOKEN = "nightly-export"


def create_a_token(page: Page) -> None:
    """The tokens page as it answers the creation of one: the new token shown once."""
    from unittest import mock

    from memory.models import ApiToken

    # The previous variant's token, so that the name is free. Playwright's event loop runs in this
    # thread, where Django refuses ORM calls unless told that this one is safe (nothing awaits here).
    with mock.patch.dict(os.environ, DJANGO_ALLOW_ASYNC_UNSAFE="true"):
        ApiToken.objects.filter(name=NEW_TOKEN).delete()
    page.get_by_label("Name", exact=True).fill(NEW_TOKEN)
    page.get_by_label("Role").select_option("curator")
    page.get_by_label("Expires after (days)").fill("90")
    with page.expect_navigation(wait_until="networkidle"):
        page.get_by_role("button", name="Create the token").click()


def show_the_shortcuts(page: Page) -> None:
    page.keyboard.press("?")


def move_down_the_list(page: Page) -> None:
    """Three rows down with j: the current row is highlighted (the focus on its link)."""
    for _ in range(3):
        page.keyboard.press("j")


def show_check_problems(page: Page) -> None:
    """The overview's consistency panel as a check that found problems shows it (the demo store is
    consistent, so the latest check's findings are given counts), scrolled into view."""
    from unittest import mock

    from memory.models import CheckRun

    with mock.patch.dict(os.environ, DJANGO_ALLOW_ASYNC_UNSAFE="true"):
        run = CheckRun.objects.filter(ok=True).first()
        found = {"missing_vectors": (3, ["mem-7f3a", "mem-80b1", "mem-9c04"]), "orphan_links": (1, ["rel-2210"])}
        findings = [
            {**finding, "found": found[finding["name"]][0], "remaining": found[finding["name"]][0],
             "examples": found[finding["name"]][1]} if finding["name"] in found else finding
            for finding in run.findings
        ]  # fmt: skip
        CheckRun.objects.create(
            actor=run.actor, actor_name="manage.py oam_check", via="command", ok=False, findings=findings, seconds=0.41
        )
    page.reload(wait_until="networkidle")
    page.locator("#check-heading").scroll_into_view_if_needed()


def interrupt_a_reembedding(page: Page) -> None:
    """The overview while a re-embedding (manage.py oam_reembed) is unfinished: one batch of a move
    to 768 dimensions staged, then the embedder fails."""
    from memory.engine import HashingEmbedder
    from memory.services import get_agent_memory

    class OneBatch(HashingEmbedder):
        def embed(self, texts):
            if getattr(self, "done", False):
                raise RuntimeError("the embedding server went away")
            self.done = True
            return super().embed(texts)

    agent_memory = get_agent_memory()
    if agent_memory.vector_state().pending_embedder is None:  # the first variant interrupts, the next ones show it
        with contextlib.suppress(RuntimeError):
            agent_memory.reembed(OneBatch(768), batch_size=200)
    page.reload(wait_until="networkidle")


def select_an_area(page: Page) -> None:
    """The embedding map with a rectangle dragged across part of it: its memories selected."""
    box = page.locator("#map").bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.35, box["y"] + box["height"] * 0.3)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + box["height"] * 0.65, steps=5)
    page.mouse.up()


def fail_to_log_in(page: Page) -> None:
    """Guess a password until the login throttling locks the username out (its 429 page)."""
    from django.conf import settings

    for attempt in range(settings.AXES_FAILURE_LIMIT):
        page.fill('input[name="username"]', "mallory")
        page.fill('input[name="password"]', f"guess-{attempt}")
        with page.expect_navigation():
            page.click('button[type="submit"]')


def send_a_too_large_form(page: Page) -> None:
    """Paste three million characters into a memory's content and save: the 413 page."""
    page.evaluate("document.querySelector('textarea[name=content]').value = 'x'.repeat(3000000)")
    with page.expect_navigation():
        page.click('button:has-text("Create the memory")')


def save_a_view(page: Page) -> None:
    """The memory list with its filters just saved as a view (the view named in its bar)."""
    from unittest import mock

    from memory.models import SavedView

    with mock.patch.dict(os.environ, DJANGO_ALLOW_ASYNC_UNSAFE="true"):
        SavedView.objects.filter(name="Alice's preferences").delete()  # the previous variant's
    page.get_by_label("Save these filters as").fill("Alice's preferences")
    with page.expect_navigation(wait_until="networkidle"):
        page.get_by_role("button", name="Save the view").click()
    page.wait_for_selector(".oam-facets")


def open_the_menu(page: Page) -> None:
    """On a phone, the top bar's Menu opened (on a wide screen there is no Menu: the bar as it is)."""
    button = page.locator("label.oam-menu-button")
    if button.is_visible():
        button.click()


RESOLVED: dict[str, str] = {}
"""The review page a contradiction was resolved on (the first variant resolves it, the others show it)."""


def send_too_many_fields(page: Page) -> None:
    """Send the memory list's bulk form with 1,200 ticked ids (more fields than Django reads, as a
    list without JavaScript can): the page that says so and what to do instead."""
    with page.expect_navigation(wait_until="networkidle"):
        page.evaluate("""() => {
          const form = document.getElementById('bulk-form');
          for (let i = 0; i < 1200; i++) {
            const box = Object.assign(document.createElement('input'), {type: 'hidden', name: 'ids', value: `m${i}`});
            form.appendChild(box);
          }
          setTimeout(() => form.submit());  // after evaluate returns: the navigation ends its context
        }""")


def act_on_three_rows(page: Page) -> None:
    """Tick three rows of the list and post them to the bulk actions (the selection travels in the body)."""
    tick_rows(page, 3)
    with page.expect_navigation(wait_until="networkidle"):
        page.get_by_role("button", name="Act on the selected…").click()


def resolve_a_contradiction(page: Page) -> None:
    """The contradictions queue just after keeping one side: the change, its inline undo."""
    if "url" not in RESOLVED:
        page.get_by_role("button", name="and supersede the other").first.click()
        page.wait_for_load_state("networkidle")
        RESOLVED["url"] = page.url
    page.goto(RESOLVED["url"], wait_until="networkidle")


def beside_the_rebuild(page: Page) -> None:
    """The card page with the latest card served in the thread set beside today's rebuild of it."""
    with page.expect_navigation(wait_until="networkidle"):
        page.get_by_role("link", name="Beside today's rebuild").first.click()


def ask_before_deleting(page: Page) -> None:
    """The near-duplicate finder asking before it deletes a group's others (nothing is deleted)."""
    page.get_by_role("button", name="Keep the chosen one, delete the others").first.click()
    page.get_by_role("button", name="Delete 1 memory").wait_for()


PAGES = [
    Shot("login", "/accounts/login/", anonymous=True),
    Shot("login-locked", "/accounts/login/", anonymous=True, act=fail_to_log_in),
    Shot("form-too-large", "/memories/new/", act=send_a_too_large_form),
    Shot("form-too-many-fields", "/memories/", act=send_too_many_fields),
    Shot("overview", "/", narrow=True),
    Shot("threads", "/threads/", narrow=True, ready=".oam-facets"),
    Shot("thread", "/threads/demo-balcony-vegetable-garden/?start=0", narrow=True),
    Shot("memories", "/memories/", narrow=True, ready=".oam-facets"),
    Shot("memories-saved-view", "/memories/?user_id=alice&memory_type=preference", narrow=True, act=save_a_view),
    Shot("menu", "/memories/", narrow=True, act=open_the_menu),
    Shot("memory-superseded-edit", "/memories/{superseded}/edit/"),
    Shot("history-rewritten", "/history/{rewritten}/"),
    Shot("memory", "/memories/{memory}/"),
    Shot("memory-edit", "/memories/{memory}/edit/"),
    Shot("image", "/images/{image}/"),
    Shot("image-undecodable", "/images/{undecodable_image}/", narrow=True),
    Shot("users", "/users/"),
    Shot("user", "/users/dana/", narrow=True),
    Shot(
        "search",
        "/search/?q=where+to+stay+in+Lisbon&user_id=alice&num_hops=1"
        "&formatted=on&show_timestamp=on&show_status=on&show_distance=on",
    ),
    Shot("search-compare", "/search/?q=quiet+hotel&user_id=alice&compare=1"),
    Shot("card", "/threads/demo-lisbon-long-weekend/card/?max_recent_messages=3"),
    Shot("link-new", "/links/new/?source_record_id={memory}"),
    Shot("history", "/history/"),
    Shot("history-entry", "/history/{entry}/"),
    Shot("graph", "/graph/?user_id=alice", ready="#graph[data-drawn]"),
    Shot("duplicates", "/review/duplicates/?user_id=alice", narrow=True),
    Shot("tokens", "/settings/tokens/", narrow=True, act=create_a_token),
    Shot("memories-selected", "/memories/?user_id=alice", act=lambda page: tick_rows(page, 3)),
    Shot("bulk-selected", "/memories/?user_id=alice", narrow=True, act=act_on_three_rows),
    Shot("bulk-preview", "/memories/bulk/?all=1&user_id=alice&memory_type=preference&action=set_status&status=invalid"),
    Shot("history-bulk", "/history/bulk/{bulk}/"),
    Shot("shortcuts", "/memories/", act=show_the_shortcuts),
    Shot("memories-current-row", "/memories/", act=move_down_the_list),
    Shot("review", "/review/", narrow=True),
    Shot("review-contradictions", "/review/?queue=contradictions"),
    Shot("review-resolved", "/review/?queue=contradictions", act=resolve_a_contradiction),
    Shot("duplicates-delete", "/review/duplicates/?user_id=alice", act=ask_before_deleting),
    Shot("transfer", "/settings/transfer/"),
    Shot("import-running", "/settings/transfer/imports/{import_running}/"),
    Shot("import-done", "/settings/transfer/imports/{import_done}/"),
    Shot("overview-check", "/", act=show_check_problems),
    Shot("map", "/users/alice/map/", ready="#map[data-ready]", act=select_an_area),
    Shot("message", "/threads/demo-lisbon-long-weekend/messages/{source_message}/"),
    Shot("activity", "/activity/?kind=search", narrow=True),
    Shot("activity-event", "/activity/{search_event}/", narrow=True),
    Shot("activity-replay", "/activity/{search_event}/replay/#replay", narrow=True),
    Shot("activity-write", "/activity/{write_event}/"),
    Shot("activity-views", "/activity/?kind=view&user_id=alice", narrow=True),
    Shot("review-sensitive", "/review/sensitive/", narrow=True),
    Shot("logins", "/settings/logins/", narrow=True, admin=True),
    Shot("erase", "/users/chen/erase/", narrow=True, admin=True),
    Shot("erasure-receipt", "/erasures/{erasure}/", admin=True),
    Shot("thread-calls", "/threads/demo-lisbon-long-weekend/", narrow=True),
    Shot("card-served", "/threads/demo-lisbon-long-weekend/card/", narrow=True, act=beside_the_rebuild),
    Shot("overview-reembedding", "/", act=interrupt_a_reembedding),  # last: it leaves a re-embedding pending
]


def tick_rows(page: Page, count: int) -> None:
    """Select rows for a bulk action, as a person does."""
    for n in range(count):
        page.locator("tbody input[name=ids]").nth(n).check()


def build_world(folder: Path) -> tuple[str, str, dict[str, str]]:
    """Set Django up over a fresh store and database in `folder`; returns the curator's login and
    the ids that PAGES' paths name. One memory is edited through the curation service, so that the
    history has something to show."""
    os.environ.update(
        DJANGO_SETTINGS_MODULE="oam_site.settings",
        OAM_STORE_URL=f"sqlite://{folder / 'memory.sqlite3'}",
        OAM_EMBEDDER="hashing",
        OAM_LLM_BASE_URL="",  # seed_demo never calls an LLM, and neither do the pages here
        OAM_ALLOWED_HOSTS="127.0.0.1",
        OAM_SECRET_KEY=secrets.token_urlsafe(50),  # so that var/secret_key is neither read nor made
    )
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import setup_test_environment

    # Django's database is fixed to var/django.sqlite3 in the settings: use a test database instead,
    # as the test runner does (create_test_db runs the migrations, which make the groups).
    setup_test_environment(debug=False)
    connection.settings_dict["TEST"]["NAME"] = str(folder / "django.sqlite3")
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    call_command("seed_demo", *SEED_ARGS)
    password = secrets.token_urlsafe(16)
    curator = User.objects.create_user(USERNAME, password=password)
    curator.groups.add(Group.objects.get(name="curators"))
    from memory.curation import Actor, Curation
    from memory.services import get_agent_memory

    agent_memory = get_agent_memory()
    [fact] = agent_memory.list_memories(thread_id="demo-lisbon-long-weekend", memory_types=["preference"], limit=1)
    entry = Curation(agent_memory, Actor(curator)).update_memory(
        fact.id,
        version=fact.version,
        content=fact.content.replace(".", ", and quiet streets at night."),
        metadata={**fact.metadata, "review": {"status": "approved", "by": USERNAME}},
    )
    [image] = agent_memory.list_images(thread_id="demo-lisbon-long-weekend", limit=1)
    add_tokens(curator)
    ids = {"memory": fact.id, "image": image.id, "entry": str(entry.pk)}
    ids["undecodable_image"] = add_an_undecodable_image(agent_memory)
    ids["source_message"] = fact.metadata["source_message_ids"][0]  # a message with a memory extracted
    ids["bulk"] = str(
        review_a_thread(agent_memory, Curation(agent_memory, Actor(curator)), "demo-lisbon-long-weekend").pk
    )
    ids |= add_transfer_examples(curator, agent_memory)
    ids |= add_review_examples(agent_memory, Curation(agent_memory, Actor(curator)))
    ids |= add_governance_examples(agent_memory, password)
    return USERNAME, password, ids | add_activity(agent_memory, Curation(agent_memory, Actor(curator)))


def add_governance_examples(agent_memory, password: str) -> dict[str, str]:
    """An admin, a viewer scoped to alice and bruno (the Logins page), and a receipt: erin, a user
    of one short thread made for it, erased as an admin erases (the demo's own users stay whole)."""
    from django.contrib.auth.models import User

    from memory.curation import Actor
    from memory.curation.erasure import erase
    from memory.web.access import grant_role
    from memory.web.scopes import set_scope

    admin = User.objects.create_user(ADMIN, password=password)
    grant_role(admin, "admin")
    viewer = User.objects.create_user("sam", password=secrets.token_urlsafe(16))
    grant_role(viewer, "viewer")
    set_scope(viewer, ["alice", "bruno"], None)
    thread = agent_memory.create_thread(user_id="erin", agent_id="atlas", thread_id="erin-first-week")
    thread.add_messages(
        [
            {"role": "user", "content": "I start at the Leeds office on Monday; my badge number is 4471."},
            {"role": "assistant", "content": "Welcome! I will remember your start date and office."},
        ]
    )
    agent_memory.add_memory("Erin works at the Leeds office.", user_id="erin", agent_id="atlas", memory_type="fact")
    agent_memory.add_user("erin", "Erin Walsh, new analyst in Leeds.")
    return {"erasure": str(erase(agent_memory, Actor(admin), "erin").pk)}


def add_review_examples(agent_memory, curation) -> dict[str, str]:
    """A memory a link retires (its edit form says where its status comes from), and a memory
    rewritten through the curation service (its history entry reads side by side)."""
    invalid = agent_memory.list_memories(status="invalid", limit=None)
    states = agent_memory.lifecycle([memory.id for memory in invalid])
    superseded = next(memory for memory in invalid if states[memory.id].retired_by)
    [memory] = agent_memory.list_memories(user_id="chen", memory_types=["preference"], limit=1)
    entry = curation.update_memory(
        memory.id, version=memory.version, content="Chen would rather read short essays on trains than long novels."
    )
    return {"superseded": superseded.id, "rewritten": str(entry.pk)}


ACTIVITY_SEARCHES = (
    ("support-bot", "alice", "vegetarian restaurants near the hotel"),
    ("support-bot", "dana", "tomato seedlings"),
    ("travel-planner", "alice", "flights from Lyon"),
    ("support-bot", "bruno", "celery worker memory"),
    ("nightly-digest", "chen", "books to read next"),
    ("travel-planner", "chen", "Kyoto in autumn"),
)
"""Calls of the week before FROZEN_AT, for the activity timeline and its chart: (caller, user, query)."""


def add_activity(agent_memory, curation) -> dict[str, str]:
    """Agents' calls for the activity pages: a week of searches by three callers (a person's own
    search too, which the timeline hides by default), then, this morning, support-bot's search
    that the event and Replay pages show, a context card, an LLM extraction's write, and a
    curator's edit and delete since, so that Replay has something that entered, left and moved."""
    from datetime import timedelta

    import time_machine

    from memory.engine import MEMORY_TYPES, acting_as, caused_by

    for days in range(7, 0, -1):
        for n, (caller, user_id, query) in enumerate(ACTIVITY_SEARCHES[: 2 + days % 4]):
            with time_machine.travel(FROZEN_AT - timedelta(days=days) + timedelta(hours=n * 2)), acting_as(caller):
                agent_memory.search(query, user_id=user_id)
    with time_machine.travel(FROZEN_AT - timedelta(hours=12)), acting_as(USERNAME, caller_kind="person"):
        agent_memory.search("what did alice say about hotels", user_id="alice")
    thread = agent_memory.get_thread("demo-lisbon-long-weekend")
    with acting_as("support-bot", on_behalf_of="alice"):
        found = agent_memory.search("where to stay in Lisbon", user_id="alice", max_results=5, num_hops=1)
    with acting_as("travel-planner"):
        thread.get_context_card(max_recent_messages=2)
    [message, *_] = agent_memory.list_thread_messages(thread.thread_id, limit=1)
    with acting_as("travel-planner"), caused_by({"what": "extraction", "message_ids": [message.id]}):
        agent_memory.add_memory(
            "Alice booked a quiet guesthouse to stay in Príncipe Real, Lisbon.",
            memory_type="fact",
            user_id="alice",
            thread_id=thread.thread_id,
        )
    memories = [result.record for result in found if result.record.record_type in MEMORY_TYPES]
    edited, deleted = memories[0], memories[-1]
    with acting_as(USERNAME, caller_kind="person"):  # as the dashboard records a person's changes
        curation.update_memory(edited.id, version=edited.version, content=edited.content + " (Confirmed with Sam.)")
        curation.delete_memory(deleted.id)
    add_reads(agent_memory)
    agent_memory.activity.flush()
    [search] = agent_memory.list_activity(caller="support-bot", limit=1)
    [write] = agent_memory.list_activity(caller="travel-planner", kind="write", limit=1)
    return {"search_event": search.id, "write_event": write.id}


def add_reads(agent_memory) -> None:
    """People's and a token's reads of alice's records this morning, for "who saw alice's data"
    (/activity/?kind=view&user_id=alice): the views the record pages and the API record."""
    from datetime import timedelta

    import time_machine

    from memory.engine import acting_as

    memories = agent_memory.list_memories(user_id="alice", limit=2)
    thread = agent_memory.get_thread_record("demo-lisbon-long-weekend")
    reads = [
        ("vera", "person", None, "GET /memories/{memory_id}/", [memories[0]]),
        ("vera", "person", None, "GET /threads/{thread_id}/", [thread]),
        ("travel-report", "agent", "dana", "GET /api/v1/memories/{memory_id}/", [memories[1]]),
        (USERNAME, "person", None, "GET /users/{owner_id}/", []),
    ]
    for minutes, (caller, caller_kind, owner, call, records) in enumerate(reads):
        at = FROZEN_AT - timedelta(hours=3) + timedelta(minutes=minutes * 20)
        with time_machine.travel(at), acting_as(caller, caller_kind=caller_kind, on_behalf_of=owner):
            agent_memory.record_view(call, records, user_id="alice" if not records else None)


def add_an_undecodable_image(agent_memory) -> str:
    """A copy of a demo image as a standalone one whose stored bytes are not an image (written below
    the checks through restore, as an import did before it checked images); its id."""
    from memory.engine import Snapshot

    [image] = agent_memory.list_images(thread_id="demo-balcony-vegetable-garden", limit=1)
    [copy] = [record for record in agent_memory.snapshot(thread_id=image.thread_id).records if record.id == image.id]
    copy.id, copy.bytes, copy.message_id = "scan-of-the-seed-packet", b"%PDF-1.7 not an image", None
    agent_memory.restore(Snapshot(records=[copy]))
    return copy.id


def review_a_thread(agent_memory, curation, thread_id: str):
    """A bulk change for the history: every memory of a thread marked reviewed, in one step."""
    from memory.curation.bulk_plan import plan
    from memory.views.bulk import apply

    ids = [record.id for record in agent_memory.list_memories(thread_id=thread_id, limit=None)]
    review = {"status": "approved", "by": USERNAME}
    return apply(curation, plan(agent_memory, "set_metadata", {"key": "review", "value": review}, ids)).change


def add_tokens(curator) -> None:
    """The curator's API tokens, one in each state, for the tokens page."""
    from datetime import timedelta

    from django.utils import timezone

    from memory.web.tokens import create_token, revoke

    now = timezone.now()
    agent, _ = create_token(curator, name="travel-agent", role="viewer")
    agent.created_at, agent.last_used_at = now - timedelta(days=12), now - timedelta(minutes=4)
    agent.save()
    laptop, _ = create_token(curator, name="old laptop", role="curator")
    laptop.created_at = now - timedelta(days=80)
    laptop.save()
    revoke(laptop)
    trial, _ = create_token(curator, name="trial import", role="curator", expires_days=7)
    trial.created_at, trial.expires_at = now - timedelta(days=30), now - timedelta(days=23)
    trial.save()


def add_transfer_examples(curator, agent_memory) -> dict[str, str]:
    """Imports in three states for the transfer pages (one running: this process's server holds
    it as its own), and a consistency check of the demo store for the overview."""
    import json
    import os
    from datetime import timedelta

    from django.utils import timezone

    from memory.curation import import_jobs
    from memory.curation.consistency import check_and_record
    from memory.engine import export_lines
    from memory.models import ImportJob, ImportStatus

    counts = json.loads(next(export_lines(agent_memory)))["counts"]
    total, now = sum(counts.values()), timezone.now()
    common = {"actor": curator, "actor_name": USERNAME, "path": ""}
    done = ImportJob.objects.create(
        **common, file_name="oam-export-store-2026-11-19.jsonl", size=1_284_511, status=ImportStatus.DONE,
        done=total, total=total, restored=counts, started_at=now - timedelta(minutes=52),
        finished_at=now - timedelta(minutes=51),
        skipped=[{"kind": "relation", "reason": "no memory 'mem-0192' to link", "count": 2}],
    )  # fmt: skip
    ImportJob.objects.create(
        **common, file_name="alice-backup.jsonl", size=48_020, status=ImportStatus.FAILED, total=61,
        error="alice-backup.jsonl: line 38: not a JSON object (Expecting ',' delimiter at column 77). "
        "Nothing was imported.", started_at=now - timedelta(minutes=30), finished_at=now - timedelta(minutes=30),
    )  # fmt: skip
    running = ImportJob.objects.create(
        **common, file_name="oam-export-user-dana-2026-11-20.jsonl", size=3_911_870, status=ImportStatus.RUNNING,
        done=1_500, total=4_212, pid=os.getpid(), started_at=now - timedelta(seconds=40),
    )  # fmt: skip
    import_jobs._running.add(running.pk)
    for job, minutes in ((done, 53), (running, 1)):
        ImportJob.objects.filter(pk=job.pk).update(at=now - timedelta(minutes=minutes))
    check_and_record(agent_memory, user=curator)
    return {"import_running": str(running.pk), "import_done": str(done.pk)}


def start_server():
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.test.testcases import LiveServerThread

    server = LiveServerThread("127.0.0.1", StaticFilesHandler)
    server.daemon = True
    server.start()
    server.is_ready.wait()
    if server.error:
        raise server.error
    return server


def photograph(base_url: str, username: str, password: str, ids: dict[str, str], only: list[str]) -> list[Path]:
    from playwright.sync_api import sync_playwright

    from tests.browser.support import VIEWPORT, launch_chromium, log_in

    written = []
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        context = browser.new_context(base_url=base_url, viewport=VIEWPORT)
        log_in(context.new_page(), username, password)
        logged_in = context.storage_state()
        context.close()
        context = browser.new_context(base_url=base_url, viewport=VIEWPORT)
        log_in(context.new_page(), ADMIN, password)
        admin_logged_in = context.storage_state()
        context.close()
        for shot in [shot for shot in PAGES if not only or shot.name in only]:
            variants = [("light", "light", VIEWPORT), ("dark", "dark", VIEWPORT)]
            if shot.narrow:
                variants.append(("narrow", "light", NARROW_VIEWPORT))
            for suffix, color_scheme, viewport in variants:
                context = browser.new_context(
                    base_url=base_url,
                    viewport=viewport,
                    color_scheme=color_scheme,
                    storage_state=None if shot.anonymous else admin_logged_in if shot.admin else logged_in,
                )
                page = context.new_page()
                path = shot.path.format(**ids)
                response = page.goto(path, wait_until="networkidle")
                if response is None or not response.ok:
                    raise RuntimeError(f"{path} answered {response and response.status}")
                if shot.act:
                    shot.act(page)
                if shot.ready:
                    page.wait_for_selector(shot.ready, state="attached")
                page.evaluate("document.fonts.ready")
                path = OUT / f"{shot.name}-{suffix}.png"
                page.screenshot(path=path, animations="disabled")
                written.append(path)
                context.close()
        browser.close()
    return written


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from tests.browser.support import CHROMIUM, MISSING_CHROMIUM

    if not CHROMIUM.exists():
        print(MISSING_CHROMIUM, file=sys.stderr)
        return 1
    import time_machine

    OUT.mkdir(parents=True, exist_ok=True)
    with time_machine.travel(FROZEN_AT), tempfile.TemporaryDirectory(prefix="oam-screenshots-") as folder:
        username, password, ids = build_world(Path(folder))
        server = start_server()
        try:
            written = photograph(f"http://127.0.0.1:{server.port}", username, password, ids, sys.argv[1:])
        finally:
            server.terminate()
            from memory import services

            services.reset_agent_memory()
    for path in written:
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
