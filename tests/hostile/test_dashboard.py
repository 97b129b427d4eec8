"""The hostile corpus through the dashboard: every field of every write form, the bulk actions,
the review decisions, the import upload, and the filters of every listing. Whatever is sent, the
answer is never a 500; a refusal (400 with the form's message, or 413) leaves the store and the
history exactly as they were; what is taken is shown inert on the page it lands on."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlencode

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from memory.engine import AgentMemory
from tests.hostile import corpus
from tests.hostile.corpus import Payload
from tests.hostile.support import REFUSALS, Failures, inert_problems, new_memory, state
from tests.web.world import World, png_bytes

FORM_ENCODED = "application/x-www-form-urlencoded"


@dataclass(frozen=True)
class Form:
    """A write form: its URL and a valid submission (read fresh before each payload, so that
    versions are current), and how a preview is confirmed when the form has one."""

    url: Callable[[World], str]
    data: Callable[[AgentMemory, World], dict[str, Any]]
    previewed: bool = False


def memory_fields(memory: AgentMemory, world: World) -> dict[str, Any]:
    record = memory.get_memory(world.fact_id)
    return {
        "content": record.content,
        "memory_type": record.record_type,
        "user_id": record.user_id or "",
        "agent_id": record.agent_id or "",
        "metadata": json.dumps(record.metadata),
        "status": record.status,
        "timestamp": record.timestamp,
        "version": record.version,
    }


def message_fields(memory: AgentMemory, world: World) -> dict[str, Any]:
    record = memory.get_message_record(world.thread_id, world.message_ids[0])
    return {"content": record.content, "role": record.role, "metadata": "", "timestamp": "", "version": record.version}


def profile_version(memory: AgentMemory, agent_id: str) -> int:
    """The agent profile's version, 0 while it does not exist (the form then creates it)."""
    try:
        return memory.get_agent(agent_id).version
    except KeyError:
        return 0


FORMS = {
    "memory-create": Form(
        lambda w: reverse("memory:memory_create"),
        lambda m, w: {"content": "A new fact.", "memory_type": "fact", "user_id": "alice", "status": "valid"},
    ),
    "memory-edit": Form(lambda w: reverse("memory:memory_edit", args=[w.fact_id]), memory_fields),
    "message-edit": Form(
        lambda w: reverse("memory:message_edit", args=[w.thread_id, w.message_ids[0]]), message_fields
    ),
    "thread-metadata": Form(
        lambda w: reverse("memory:thread_edit", args=[w.thread_id]),
        lambda m, w: {"metadata": "{}", "version": m.get_thread_record(w.thread_id).version},
    ),
    "image-edit": Form(
        lambda w: reverse("memory:image_edit", args=[w.image_id]),
        lambda m, w: {"description": "A map", "metadata": "", "version": m.get_image(w.image_id).version},
    ),
    "image-upload": Form(
        lambda w: reverse("memory:image_add", args=[w.thread_id]),
        lambda m, w: {
            "add_as": "message",
            "role": "user",
            "description": "",
            "text": "",
            "image": SimpleUploadedFile("photo.png", png_bytes("yellow"), content_type="image/png"),
        },
    ),
    "link-create": Form(
        lambda w: reverse("memory:link_create"),
        lambda m, w: {"source_record_id": new_memory(m), "target_record_id": w.fact_id, "relation_type": "supports"},
        previewed=True,
    ),
    "link-edit": Form(
        lambda w: reverse("memory:link_edit", args=[w.link_id]),
        lambda m, w: {
            "relation_type": "supersedes",
            "metadata": "",
            "version": next(r for r in m.list_relations(record_id=w.fact_id) if r.id == w.link_id).version,
        },
        previewed=True,
    ),
    "user-profile": Form(
        lambda w: reverse("memory:user_edit", args=[w.user_id]),
        lambda m, w: {"information": "Alice.", "version": m.get_user(w.user_id).version},
    ),
    "agent-profile": Form(
        lambda w: reverse("memory:agent_edit", args=["new-agent"]),
        lambda m, w: {"information": "A new agent.", "version": profile_version(m, "new-agent")},
    ),
    "bulk-set-metadata": Form(
        lambda w: reverse("memory:memory_bulk"),
        lambda m, w: {
            "action": "set_metadata",
            "key": "review",
            "value": '"done"',
            "selection": f"{w.fact_id} {m.get_memory(w.fact_id).version}",
        },
    ),
    "token-create": Form(
        lambda w: reverse("memory:tokens"), lambda m, w: {"name": "script", "role": "viewer", "expires_days": ""}
    ),
    "duplicates-merge": Form(
        lambda w: reverse("memory:review_duplicates"),
        lambda m, w: {"keep": w.fact_id, "members": [w.fact_id, w.old_fact_id], "how": "link"},
    ),
}

NUL = Payload("nul", corpus.NUL.value, refused=True)  # Django's forms refuse NUL characters in any field
TEXT = [*corpus.taken(corpus.TEXTS), NUL]
BIG_TEXT = [*TEXT, *corpus.taken([corpus.AT_LIMIT]), corpus.OVER_LIMIT]
METADATA = corpus.taken(corpus.metadata_texts())
IDS = [*corpus.IDS, *corpus.CONTROL_IDS, corpus.SPACED_ID]
ROLES = [Payload(payload.name, payload.value, refused=True) for payload in IDS]  # one of the four roles
ID_LIKE_TEXT = [*corpus.IDS, corpus.SPACED_ID]  # typed in fields that are no ids: line breaks are theirs
BULK_VALUES = [  # any JSON value is a metadata value: a list or a text too
    Payload(p.name, p.value, refused=p.refused and p.name not in ("not-an-object", "a-string")) for p in METADATA
]

CASES = [
    ("memory-create", "content", BIG_TEXT),
    ("memory-create", "metadata", METADATA),
    ("memory-create", "user_id", IDS),
    ("memory-create", "agent_id", IDS),
    ("memory-create", "thread_id", IDS),
    ("memory-create", "timestamp", corpus.TEXTS),
    ("memory-create", "ttl_days", [*corpus.TEXTS, Payload("huge", "9" * 40, refused=True)]),
    ("memory-edit", "content", BIG_TEXT),
    ("memory-edit", "metadata", METADATA),
    ("memory-edit", "user_id", IDS),
    ("memory-edit", "memory_type", [Payload(p.name, p.value, refused=True) for p in corpus.MARKUP]),
    ("memory-edit", "version", [Payload(p.name, p.value, refused=True) for p in (*corpus.MARKUP, corpus.NUL)]),
    ("message-edit", "content", BIG_TEXT),
    ("message-edit", "role", ROLES),
    ("message-edit", "metadata", METADATA),
    ("thread-metadata", "metadata", METADATA),
    ("image-edit", "description", BIG_TEXT),
    ("image-edit", "metadata", METADATA),
    ("image-upload", "description", TEXT),
    ("image-upload", "text", TEXT),
    ("image-upload", "role", ROLES),
    ("link-create", "target_record_id", IDS),
    ("link-create", "relation_type", IDS),
    ("link-create", "metadata", METADATA),
    ("link-edit", "opposite_relation_type", [*corpus.TEXTS, NUL]),
    ("link-edit", "metadata", METADATA),
    ("user-profile", "information", BIG_TEXT),
    ("agent-profile", "information", TEXT),
    ("bulk-set-metadata", "key", [*corpus.TEXTS, NUL, *ID_LIKE_TEXT]),
    ("bulk-set-metadata", "value", BULK_VALUES),
    ("bulk-set-metadata", "selection", IDS),
    ("token-create", "name", [*corpus.TEXTS, NUL, *ID_LIKE_TEXT]),
    ("token-create", "expires_days", [*corpus.MARKUP[:3], Payload("huge", "9" * 40, refused=True)]),
    ("duplicates-merge", "keep", IDS),
    ("duplicates-merge", "members", IDS),
    ("duplicates-merge", "how", [Payload(p.name, p.value, refused=True) for p in corpus.MARKUP[:3]]),
]


def submit(client: Client, form: Form, data: dict[str, Any], world: World):
    response = client.post(form.url(world), data)
    preview = form.previewed and response.status_code == 200 and response.context and response.context.get("preview")
    return client.post(form.url(world), {**data, "confirm": preview}) if preview else response


@pytest.mark.parametrize("form_name", list(FORMS))
def test_every_form_field_takes_the_corpus_cleanly(curator_client, agent_memory, world, form_name):
    """One test per form (a store each costs more than the requests): each failure line names the
    field and the payload."""
    form = FORMS[form_name]
    valid = submit(curator_client, form, form.data(agent_memory, world), world)
    assert valid.status_code in (200, 302), "the form's own valid submission must be taken"
    failures = Failures()
    for field, payload in ((f, p) for n, f, payloads in CASES if n == form_name for p in payloads):
        name = f"{field}={payload.name}"
        data = {**form.data(agent_memory, world), field: payload.value}
        before = state(agent_memory)
        response = failures.run(name, submit, curator_client, form, data, world)
        if response is None:
            continue
        status = response.status_code
        page = response
        if status in REFUSALS or payload.refused:
            failures.check(name, status in REFUSALS, f"must be refused, answered {status}")
            failures.check(name, state(agent_memory) == before, f"refused ({status}) but stored something")
        else:
            failures.check(name, status in (200, 302), f"answered {status}")
            if status == 302:  # the page the change lands on shows what was stored
                page = failures.run(name, curator_client.get, response["Location"])
        failures.check(name, not payload.stored or status in (200, 302), f"must be taken, answered {status}")
        if page is not None:
            failures.check(name, page.status_code < 500, f"its page answered {page.status_code}")
            text = payload.value if isinstance(payload.value, str) else json.dumps(payload.value)
            for problem in inert_problems(page.content.decode(errors="replace"), text):
                failures.lines.append(f"{name}: {problem}")
    failures.assert_none()


# --- the filters of every listing, and ids in URLs ----------------------------------------------

LISTINGS = {
    "threads": ("memory:thread_list", ("q", "user_id", "agent_id", "metadata_filter", "cursor")),
    "memories": (
        "memory:memory_list",
        ("q", "user_id", "thread_id", "memory_type", "status", "metadata_filter", "cursor", "limit", "order"),
    ),
    "search": ("memory:search", ("q", "user_id", "agent_id", "metadata_filter", "max_results", "strategy")),
    "history": ("memory:history", ("object_id", "actor", "action", "since", "until", "object_kind")),
    "users": ("memory:user_list", ("q", "cursor")),
    "review": ("memory:review", ("queue", "user_id", "days", "cursor")),
    "graph": ("memory:graph", ("user_id", "memory_id", "hops", "relation_type", "max_nodes")),
    "duplicates": ("memory:review_duplicates", ("user_id", "max_distance", "memory_type")),
    "bulk-preview": ("memory:memory_bulk", ("action", "ids", "key", "value", "keep")),
    "export": ("memory:transfer_export", ("user_id", "thread_id")),
    "picks": ("memory:memory_picks", ("source_record_id",)),
}
QUERY_VALUES = [
    *corpus.MARKUP[:5],
    *corpus.UNICODE[:4],
    *corpus.IDS[:2],
    *corpus.IDS[-3:],
    *corpus.METADATA_TEXTS[-3:],
    corpus.NUL,
]
"""A sample of the corpus for each parameter (every parameter of eleven pages: the whole corpus
would take minutes); the forms above get all of it."""


@pytest.mark.parametrize("listing", list(LISTINGS))
def test_every_listing_filter_takes_the_corpus_cleanly(curator_client, world, listing):
    url_name, parameters = LISTINGS[listing]
    failures = Failures()
    for parameter in parameters:
        for payload in QUERY_VALUES:
            if len(payload.value) > 5000:
                continue  # a query string, not a body: the server's request line limit comes first
            name = f"{parameter}={payload.name}"
            response = failures.run(name, curator_client.get, reverse(url_name), {parameter: payload.value})
            if response is None:
                continue
            failures.check(name, response.status_code in (200, 400, 404), f"answered {response.status_code}")
            if response.get("Content-Type", "").startswith("text/html"):
                for problem in inert_problems(response.content.decode(errors="replace"), payload.value):
                    failures.lines.append(f"{name}: {problem}")
    failures.assert_none()


ID_PAGES = [
    "/memories/{}/",
    "/memories/{}/edit/",
    "/threads/{}/",
    "/threads/{}/card/",
    "/users/{}/",
    "/agents/{}/",
    "/images/{}/",
    "/images/{}/raw/",
    "/graph/node/{}/",
    "/users/{}/map/",
    "/links/{}/edit/",
]


def test_hostile_ids_in_urls_are_a_404_or_the_page(curator_client, world):
    failures = Failures()
    for pattern in ID_PAGES:
        for payload_name, segment in corpus.segments([*IDS, *corpus.MARKUP[:3]]):
            name = f"{pattern.format('…')} {payload_name}"
            response = failures.run(name, curator_client.get, pattern.format(segment))
            if response is None:
                continue
            failures.check(name, response.status_code in (200, 400, 404), f"answered {response.status_code}")
            for problem in inert_problems(response.content.decode(errors="replace"), unquote(segment)):
                failures.lines.append(f"{name}: {problem}")
    failures.assert_none()


POST_PATTERNS = [
    "/memories/{}/delete/",
    "/threads/{}/delete/",
    "/users/{}/delete/",
    "/images/{}/delete/",
    "/links/{}/delete/",
    "/review/contradictions/{}/keep/",
    "/review/contradictions/{}/dismiss/",
    "/review/links/{}/accept/",
    "/review/links/{}/revert/",
]


def test_hostile_ids_in_post_urls_store_nothing(curator_client, agent_memory, world):
    failures = Failures()
    for payload_name, segment in corpus.segments([*corpus.IDS, *corpus.CONTROL_IDS]):
        for pattern in POST_PATTERNS:
            name = f"{pattern.format('…')} {payload_name}"
            before = state(agent_memory)
            response = failures.run(name, curator_client.post, pattern.format(segment), {"keep": unquote(segment)})
            if response is None:
                continue
            failures.check(name, response.status_code in REFUSALS | {302}, f"answered {response.status_code}")
            failures.check(name, state(agent_memory) == before, "stored something")
    failures.assert_none()


# --- malformed uploads ------------------------------------------------------------------------


@pytest.mark.parametrize("url_name", ["memory:image_add", "memory:transfer"])
def test_malformed_multipart_is_refused_and_stores_nothing(curator_client, agent_memory, world, url_name):
    url = reverse(url_name, args=[world.thread_id]) if url_name == "memory:image_add" else reverse(url_name)
    failures = Failures()
    for name, content_type, body in corpus.MULTIPART:
        before = state(agent_memory)
        response = failures.run(name, curator_client.generic, "POST", url, body, content_type=content_type)
        if response is None:
            continue
        failures.check(name, response.status_code in REFUSALS, f"answered {response.status_code}")
        failures.check(name, state(agent_memory) == before, "stored something")
    failures.assert_none()


def test_an_import_of_hostile_bytes_is_a_form_error(curator_client, agent_memory, settings, tmp_path):
    settings.OAM_IMPORT_DIR = tmp_path / "imports"
    settings.OAM_IMPORT_INLINE = True
    failures = Failures()
    for name, body in {
        "not-json": b"<script>alert(1)</script>\n",
        "binary": bytes(range(256)),
        "lone-surrogate": b'{"format": "oam-export", "version": 1, "scope": {}, "counts": {}}\n{"thread": "\\ud800"}\n',
        "deep": b"[" * 100_000 + b"]" * 100_000 + b"\n",
    }.items():
        before = state(agent_memory)
        upload = SimpleUploadedFile(f"{name}.jsonl", body, content_type="application/json")
        response = failures.run(name, curator_client.post, reverse("memory:transfer"), {"file": upload})
        if response is None:
            continue
        failures.check(name, response.status_code in (*REFUSALS, 200, 302), f"answered {response.status_code}")
        failures.check(name, state(agent_memory)[0] == before[0], "stored records")
    failures.assert_none()


def test_an_oversized_form_body_is_refused_with_a_clear_answer(curator_client, agent_memory, world, settings):
    """Django's DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB) bounds a form's body: a bigger one is refused
    before any field is read."""
    before = state(agent_memory)
    big = "é" * 1_000_000  # 1 M characters fit the engine, but 6 MB URL-encoded exceed the body limit

    body = urlencode({"content": big, "memory_type": "fact", "status": "valid"})  # as a browser sends it

    response = curator_client.post(reverse("memory:memory_create"), body, content_type=FORM_ENCODED)

    assert response.status_code == 413
    assert "over 2,621,440 bytes" in response.content.decode()
    assert "Nothing was stored" in response.content.decode()
    assert state(agent_memory) == before


def test_an_oversized_form_body_is_a_413_with_csrf_checks_on(agent_memory, curator):
    """CSRF's check reads the form first: the limit answers there too, not as a bare 400 or 403."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(curator)
    client.get(reverse("memory:memory_create"))  # the CSRF cookie, as a browser has it
    body = urlencode({"content": "x" * 3_000_000, "csrfmiddlewaretoken": client.cookies["csrftoken"].value})

    response = client.post(reverse("memory:memory_create"), body, content_type=FORM_ENCODED)

    assert response.status_code == 413
