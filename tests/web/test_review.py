"""The review queues (/review/): each queue's content from constructed data, per persona; accept
and revert an automatic link, purge (and undo the purge), keep one memory of a contradiction or
dismiss it; bad input answers with an error, never a 500."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from memory.curation import Actor, Curation
from memory.engine import ImageContent, RecordStatus, TextContent, TimeToLiveAnchor, llm_link_metadata
from memory.models import Action, BulkChange, CurationEntry, ReviewKind, ReviewMark

from .world import png_bytes

REVIEW = reverse("memory:review")
EXPIRED = {"timestamp": "2000-01-01T00:00:00Z", "ttl_days": 1, "ttl_anchor": TimeToLiveAnchor.TIMESTAMP}


def fact(memory, memory_id: str, content: str, user_id: str = "alice", **options) -> str:
    return memory.add_memory(
        content, memory_type="fact", memory_id=memory_id, user_id=user_id, autonomous_linking=False, **options
    )


def link(memory, source: str, target: str, relation_type: str, relation_id: str, metadata: dict) -> str:
    return memory.link_records(
        source, "fact", target, "fact", relation_type, relation_id=relation_id, metadata=metadata
    )


@pytest.fixture
def queues(agent_memory):
    """Alice: an LLM supersedes link, a person's one, a flagged memory, lifetimes short and long,
    an expired memory, a contradiction. Bob: an LLM duplicates link and an expired memory."""
    memory = agent_memory
    fact(memory, "porto", "Alice lives in Porto.")
    fact(memory, "lisbon", "Alice lives in Lisbon.")
    link(memory, "lisbon", "porto", "supersedes", "rel-llm", llm_link_metadata("openai:test-model"))
    fact(memory, "fish", "Alice eats fish.")
    fact(memory, "veggie", "Alice is vegetarian.")
    link(memory, "veggie", "fish", "supersedes", "rel-human", {"created_by": "demo"})
    fact(memory, "flagged", "Alice owns a boat.", status="invalid")
    fact(memory, "soon", "Alice's train ticket is valid this week.", ttl_days=2)
    fact(memory, "later", "Alice's passport renewal is pending.", ttl_days=30)
    fact(memory, "gone", "Alice's dentist appointment last spring.", **EXPIRED)
    fact(memory, "club-fiction", "The book club prefers fiction.")
    fact(memory, "club-poll", "The book club polled two non-fiction books.")
    link(memory, "club-poll", "club-fiction", "contradicts", "rel-contra", {"created_by": "demo"})
    fact(memory, "bob-old", "Bob runs on Sundays.", user_id="bob")
    fact(memory, "bob-new", "Bob runs every Sunday morning.", user_id="bob")
    link(memory, "bob-new", "bob-old", "duplicates", "rel-bob", llm_link_metadata("openai:test-model"))
    fact(memory, "bob-gone", "Bob's race last year.", user_id="bob", **EXPIRED)
    return memory


def page(client, **params):
    response = client.get(REVIEW, params)
    assert response.status_code == 200, response.content[:500]
    return response


def counts(response) -> dict[str, int]:
    return {name: count for name, _, count in response.context["queues"]}


def shown_links(response) -> list[str]:
    return [row.link.id for row in response.context["rows"]]


def status(memory, memory_id: str) -> str:
    return memory.get_memory(memory_id).status.value


# --- reading: every persona that may read ---------------------------------------------------------


def test_anonymous_visitors_are_sent_to_log_in(client):
    response = client.get(REVIEW)
    assert response.status_code == 302 and "login" in response["Location"]


def test_an_account_without_a_role_reads_nothing(client, django_user_model, queues):
    client.force_login(django_user_model.objects.create_user("nobody", password="x"))
    assert client.get(REVIEW).status_code == 403


def test_every_queue_is_counted_and_the_first_lists_only_unreviewed_llm_retirements(viewer_client, queues):
    response = page(viewer_client)

    assert counts(response) == dict(llm=2, expiring=1, expired=2, invalid=4, contradictions=1, sensitive=0)
    assert shown_links(response) == ["rel-llm", "rel-bob"]  # not the person's supersedes link
    row = response.context["rows"][0]
    assert (row.target.id, row.source.id) == ("porto", "lisbon")
    html = response.content.decode()
    assert "Alice lives in Porto." in html and "Alice lives in Lisbon." in html
    assert "openai:test-model" in html
    assert 'href="/review/duplicates/"' in html
    assert reverse("memory:review_accept", args=["rel-llm"]) not in html


def test_a_curator_sees_the_decisions(curator_client, queues):
    html = page(curator_client).content.decode()
    assert reverse("memory:review_accept", args=["rel-llm"]) in html
    assert reverse("memory:review_revert", args=["rel-llm"]) in html


def test_the_user_filter_narrows_every_queue(viewer_client, queues):
    response = page(viewer_client, user_id="bob")

    assert counts(response) == dict(llm=1, expiring=0, expired=1, invalid=1, contradictions=0, sensitive=0)
    assert shown_links(response) == ["rel-bob"]


def test_the_llm_queue_pages_with_the_engines_cursor(viewer_client, queues):
    first = page(viewer_client, limit=1)
    assert shown_links(first) == ["rel-llm"]
    second = page(viewer_client, limit=1, cursor=first.context["next_cursor"])
    assert shown_links(second) == ["rel-bob"]
    assert (
        second.context["next_cursor"] is None
        or shown_links(page(viewer_client, limit=1, cursor=second.context["next_cursor"])) == []
    )


def test_the_expiring_queue_takes_its_window_in_days(viewer_client, queues):
    week = page(viewer_client, queue="expiring")
    assert [record.id for record in week.context["rows"]] == ["soon"]
    assert "within 7 days" in week.content.decode()
    month = page(viewer_client, queue="expiring", days=45)
    assert [record.id for record in month.context["rows"]] == ["soon", "later"]
    assert counts(month)["expiring"] == 2


def test_the_expired_queue_lists_what_a_purge_deletes(viewer_client, queues):
    response = page(viewer_client, queue="expired")

    assert [record.id for record in response.context["rows"]] == ["gone", "bob-gone"]
    html = response.content.decode()
    assert "Alice&#x27;s dentist appointment last spring." in html
    assert reverse("memory:review_purge") not in html  # the purge is a curator's


def test_the_invalid_queue_says_which_link_retired_each_memory_or_that_its_flag_did(viewer_client, queues):
    response = page(viewer_client, queue="invalid")

    reasons = {row.memory.id: [retiring.link.id for retiring in row.retired_by] for row in response.context["rows"]}
    assert reasons == {"porto": ["rel-llm"], "fish": ["rel-human"], "flagged": [], "bob-old": ["rel-bob"]}
    html = response.content.decode()
    assert "Its own status is set to invalid" in html
    assert "Alice is vegetarian." in html  # the memory that replaced "Alice eats fish."


def test_the_contradictions_queue_shows_both_memories(viewer_client, queues):
    response = page(viewer_client, queue="contradictions")

    [row] = response.context["rows"]
    assert (row.source.id, row.target.id) == ("club-poll", "club-fiction")
    assert "The book club prefers fiction." in response.content.decode()


# --- accept and revert an automatic link ----------------------------------------------------------


def test_accepting_keeps_the_link_and_takes_it_off_the_queue(curator_client, queues, curator):
    url = reverse("memory:review_accept", args=["rel-llm"])
    response = curator_client.post(url, {"next": f"{REVIEW}?queue=llm"})

    assert response.status_code == 302 and response["Location"] == f"{REVIEW}?queue=llm"
    assert status(queues, "porto") == "invalid"
    review_mark = ReviewMark.objects.get()
    assert (review_mark.kind, review_mark.relation_id, review_mark.actor) == (ReviewKind.ACCEPTED, "rel-llm", curator)
    assert (review_mark.source_record_id, review_mark.target_record_id) == ("lisbon", "porto")
    after = page(curator_client)
    assert shown_links(after) == ["rel-bob"] and counts(after)["llm"] == 1
    assert curator_client.post(url).status_code == 302  # twice is once
    assert ReviewMark.objects.count() == 1
    assert CurationEntry.objects.count() == 0  # the store did not change


def test_a_reopened_acceptance_puts_the_link_back_in_the_queue(curator_client, queues):
    curator_client.post(reverse("memory:review_accept", args=["rel-llm"]))
    review_mark = ReviewMark.objects.get()
    assert "Reopen" in page(curator_client).content.decode()

    assert curator_client.post(reverse("memory:review_reopen", args=[review_mark.pk])).status_code == 302
    assert shown_links(page(curator_client)) == ["rel-llm", "rel-bob"]
    assert curator_client.post(reverse("memory:review_reopen", args=[review_mark.pk])).status_code == 400


def test_reverting_deletes_the_link_through_curation_and_the_memory_is_valid_again(curator_client, queues):
    response = curator_client.post(reverse("memory:review_revert", args=["rel-llm"]), follow=True)

    assert status(queues, "porto") == "valid"
    with pytest.raises(KeyError):
        queues.get_relation("rel-llm")
    entry = CurationEntry.objects.get()
    assert (entry.object_kind, entry.object_id, entry.action) == ("link", "rel-llm", Action.UNLINK)
    assert "is valid again" in response.content.decode()
    assert shown_links(response) == ["rel-bob"]
    Curation(queues, Actor(None)).revert(entry)  # recorded, so undoable: the link is back
    assert status(queues, "porto") == "invalid"


def test_a_reverted_link_is_undone_from_the_queue_as_a_resolved_contradiction_is(curator_client, queues):
    queue = f"{REVIEW}?queue=llm"
    response = curator_client.post(reverse("memory:review_revert", args=["rel-llm"]), {"next": queue})
    entry = CurationEntry.objects.get()
    assert response["Location"] == f"{queue}&reverted={entry.pk}"
    page = curator_client.get(response["Location"]).content.decode()
    undo = reverse("memory:history_revert", args=[entry.pk])
    assert '<span class="fw-semibold">Done:</span>' in page and f'action="{undo}"' in page

    undone = curator_client.post(undo, {"next": queue})

    assert undone["Location"] == queue
    assert status(queues, "porto") == "invalid" and queues.get_relation("rel-llm")
    again = curator_client.get(f"{queue}&reverted={entry.pk}").content.decode()
    assert "Undone since:" in again and f'action="{undo}"' not in again


@pytest.mark.parametrize(
    "name, args",
    [
        ("review_accept", ["rel-llm"]),
        ("review_revert", ["rel-llm"]),
        ("review_keep", ["rel-contra"]),
        ("review_dismiss", ["rel-contra"]),
    ],
)
def test_viewers_cannot_decide(viewer_client, queues, name, args):
    assert viewer_client.post(reverse(f"memory:{name}", args=args), {"keep": "club-poll"}).status_code == 403
    assert viewer_client.post(reverse("memory:review_purge")).status_code == 403
    assert viewer_client.get(reverse("memory:review_purge")).status_code == 403
    assert status(queues, "porto") == "invalid" and status(queues, "club-fiction") == "valid"
    assert not ReviewMark.objects.exists() and not CurationEntry.objects.exists()
    assert len(queues.list_expired()) == 2


def test_decisions_are_posts(curator_client, queues):
    for name, args in (("review_accept", ["rel-llm"]), ("review_revert", ["rel-llm"])):
        assert curator_client.get(reverse(f"memory:{name}", args=args)).status_code == 405
    assert status(queues, "porto") == "invalid"


# --- purge ----------------------------------------------------------------------------------------


def test_the_purge_is_confirmed_then_recorded_as_one_bulk_change_that_undo_puts_back(curator_client, queues):
    confirmation = curator_client.get(reverse("memory:review_purge"))
    assert confirmation.status_code == 200
    html = confirmation.content.decode()
    assert "Purge 2 expired records" in html and "whoever it belongs to" in html
    assert "Undoing it puts the records back" in html
    fact(queues, "was-live", "Alice's gym pass.")  # expires after being linked: the link goes with it
    link(queues, "was-live", "lisbon", "supports", "rel-gone", {})
    queues.update_memory("was-live", expires_at="2001-01-01T00:00:00Z")

    response = curator_client.post(reverse("memory:review_purge"), {"next": f"{REVIEW}?queue=expired"}, follow=True)

    assert "Purged 3 expired records" in response.content.decode()
    assert response.context["rows"] == [] and counts(response)["expired"] == 0
    change = BulkChange.objects.get()
    entries = {entry.object_id: entry for entry in change.entries.all()}
    assert set(entries) == {"gone", "bob-gone", "was-live"}
    assert all(entry.action == Action.DELETE for entry in entries.values())
    assert [relation["id"] for relation in entries["was-live"].before["relations"]] == ["rel-gone"]

    undo = Curation(queues, Actor(None)).revert_bulk(change)

    assert undo.failed == []
    assert {record.id for record in queues.list_expired()} == {"gone", "bob-gone", "was-live"}  # back, still expired
    assert "rel-gone" in {relation.id for relation in queues.store.list_relations(limit=None)}


def test_a_purge_with_nothing_expired_records_nothing(curator_client, agent_memory):
    fact(agent_memory, "live", "Alice likes trams.")
    assert "Nothing has expired" in curator_client.get(reverse("memory:review_purge")).content.decode()
    response = curator_client.post(reverse("memory:review_purge"), follow=True)
    assert "nothing was purged" in response.content.decode()
    assert not BulkChange.objects.exists() and not CurationEntry.objects.exists()


def test_a_purged_message_comes_back_with_its_image(agent_memory, curator):
    thread = agent_memory.create_thread(thread_id="t1", user_id="alice")
    thread.add_messages(
        [
            {
                "role": "user",
                "id": "old-message",
                "timestamp": EXPIRED["timestamp"],
                "content": [TextContent(text="the old street"), ImageContent(id="old-photo", bytes=png_bytes())],
            }
        ],
        ttl_days=1,
        ttl_anchor=TimeToLiveAnchor.TIMESTAMP,
    )
    curation = Curation(agent_memory, Actor(curator))

    purge = curation.purge_expired()

    assert purge.purged == 2 and purge.unsaved == 0
    [entry] = purge.change.entries.all()  # the image goes with its message
    assert (entry.object_kind, entry.object_id, entry.thread_id) == ("message", "old-message", "t1")
    curation.revert_bulk(purge.change)
    assert {record.id for record in agent_memory.list_expired()} == {"old-message", "old-photo"}


# --- contradictions -------------------------------------------------------------------------------


@pytest.mark.parametrize("keep, retired", [("club-fiction", "club-poll"), ("club-poll", "club-fiction")])
def test_keeping_one_supersedes_the_other_in_one_undoable_change(curator_client, queues, keep, retired):
    response = curator_client.post(
        reverse("memory:review_keep", args=["rel-contra"]), {"keep": keep, "next": f"{REVIEW}?queue=contradictions"}
    )

    assert response.status_code == 302
    assert status(queues, keep) == "valid" and status(queues, retired) == "invalid"
    [supersedes] = queues.list_relations(record_id=keep, limit=None)
    assert (supersedes.source_record_id, supersedes.relation_type, supersedes.target_record_id) == (
        keep,
        "supersedes",
        retired,
    )
    with pytest.raises(KeyError):
        queues.get_relation("rel-contra")
    change = BulkChange.objects.get()
    assert sorted(entry.action for entry in change.entries.all()) == [Action.LINK, Action.UNLINK]
    assert counts(page(curator_client))["contradictions"] == 0

    Curation(queues, Actor(None)).revert_bulk(change)

    assert queues.get_relation("rel-contra").relation_type == "contradicts"
    assert status(queues, retired) == "valid"
    assert counts(page(curator_client))["contradictions"] == 1


def test_dismissing_leaves_both_memories_and_takes_the_pair_off_the_queue(curator_client, queues, curator):
    response = curator_client.post(reverse("memory:review_dismiss", args=["rel-contra"]), follow=True)

    assert response.status_code == 200
    assert "Dismissed the contradiction" in response.content.decode()
    review_mark = ReviewMark.objects.get()
    assert (review_mark.kind, review_mark.relation_id, review_mark.actor_name) == (
        ReviewKind.DISMISSED,
        "rel-contra",
        "carl",
    )
    assert review_mark.at is not None
    assert queues.get_relation("rel-contra").relation_type == "contradicts"
    assert status(queues, "club-fiction") == status(queues, "club-poll") == RecordStatus.VALID.value
    assert page(curator_client, queue="contradictions").context["rows"] == []


# --- bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, field",
    [
        ({"queue": "everything"}, "queue"),
        ({"days": "0"}, "days"),
        ({"days": "soon"}, "days"),
        ({"limit": "100000"}, "limit"),
        ({"cursor": "not-a-cursor", "queue": "invalid"}, None),
        ({"cursor": "not-a-cursor", "queue": "llm"}, None),
        ({"user_id": "x" * 600}, "user_id"),
    ],
)
def test_a_bad_query_is_a_400_with_the_message(viewer_client, queues, params, field):
    response = viewer_client.get(REVIEW, params)

    assert response.status_code == 400
    errors = response.context["form"].errors
    assert errors.get(field or "__all__"), errors
    assert re.search(r'class="alert alert-danger', response.content.decode())


@pytest.mark.parametrize(
    "name, relation_id, data, expected",
    [
        ("review_keep", "rel-contra", {"keep": "lisbon"}, "keep must be one of the two memories"),
        ("review_keep", "rel-contra", {}, "Say which memory to keep"),
        ("review_keep", "rel-llm", {"keep": "lisbon"}, "not a contradiction"),
        ("review_dismiss", "rel-llm", {}, "not a contradiction"),
        ("review_accept", "rel-contra", {}, "retires no memory"),
        ("review_revert", "rel-contra", {}, "retires no memory"),
    ],
)
def test_a_decision_that_does_not_fit_the_link_is_refused(curator_client, queues, name, relation_id, data, expected):
    response = curator_client.post(reverse(f"memory:{name}", args=[relation_id]), data)

    assert response.status_code == 400
    assert expected in response.content.decode()
    assert not CurationEntry.objects.exists() and not ReviewMark.objects.exists() and not BulkChange.objects.exists()


@pytest.mark.parametrize("name", ["review_accept", "review_revert", "review_keep", "review_dismiss"])
def test_a_decision_about_a_link_gone_meanwhile_is_a_404(curator_client, queues, name):
    response = curator_client.post(reverse(f"memory:{name}", args=["rel-nothing"]), {"keep": "club-poll"})
    assert response.status_code == 404


def test_next_never_leaves_the_site(curator_client, queues):
    response = curator_client.post(reverse("memory:review_accept", args=["rel-llm"]), {"next": "https://evil.example/"})
    assert response["Location"] == f"{REVIEW}?queue=llm"


def test_memory_content_is_escaped(viewer_client, agent_memory):
    fact(agent_memory, "evil-old", "<script>alert(1)</script>")
    fact(agent_memory, "evil-new", "<b>bold</b>")
    link(agent_memory, "evil-new", "evil-old", "supersedes", "rel-evil", llm_link_metadata("<i>llm</i>"))
    html = page(viewer_client).content.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
    assert "<i>llm</i>" not in html


def test_the_demo_store_fills_the_queues(viewer_client, agent_memory):
    """A new user sees every queue working: the demo has two automatic retirements, an unresolved
    contradiction, a memory expiring this week, expired memories and invalid ones."""
    from django.core.management import call_command

    call_command("seed_demo")

    tallies = counts(page(viewer_client))
    assert tallies["llm"] == 2 and tallies["contradictions"] == 1
    assert tallies["expired"] >= 5 and tallies["invalid"] == 11
    assert tallies["expiring"] >= 1


def test_the_top_bar_links_the_review_page_and_marks_it_current(viewer_client, queues):
    html = page(viewer_client).content.decode()
    assert f'aria-current="page" href="{REVIEW}">Review <span class="badge' in html  # with its badge


def test_an_htmx_pager_request_gets_only_the_queue(viewer_client, queues):
    response = viewer_client.get(REVIEW, {"limit": 1}, headers={"HX-Request": "true"})

    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="queue"') and "<html" not in html
    assert 'rel="next"' in html and 'hx-target="#queue"' in html


@pytest.mark.parametrize(
    ("url", "section"),
    [
        ("/review/duplicates/", "Review"),
        ("/memories/bulk/?ids=mem-1", "Memories"),
        ("/users/alice/map/", "Users"),
    ],
)
def test_pages_reached_from_a_section_mark_it_current(viewer_client, queues, url, section):
    html = viewer_client.get(url).content.decode()
    assert re.search(rf'aria-current="page" href="[^"]+">{section}( <span class="badge.*?</span></span>)?</a>', html)


# --- what the messages say: the memories' text, not their ids; the undo on the page --------------


def test_accepting_and_reverting_say_the_memories_text(curator_client, queues):
    accepted = curator_client.post(reverse("memory:review_accept", args=["rel-llm"]), follow=True)
    text = accepted.content.decode()
    assert "Accepted: “Alice lives in Porto.” stays invalid, superseded by “Alice lives in Lisbon.”." in text
    reverted = curator_client.post(reverse("memory:review_revert", args=["rel-bob"]), follow=True)
    assert "Reverted the automatic link: “" in reverted.content.decode()


def test_keeping_one_side_names_the_memories_and_offers_an_undo_on_the_page(curator_client, queues):
    here = f"{REVIEW}?queue=contradictions"
    response = curator_client.post(
        reverse("memory:review_keep", args=["rel-contra"]), {"keep": "club-fiction", "next": here}
    )
    change = BulkChange.objects.get()
    assert response["Location"] == f"{here}&resolved={change.pk}"
    assert change.summary.startswith("Resolved a contradiction: “")
    assert "supersedes “" in change.summary and "club-" not in change.summary
    text = curator_client.get(response["Location"]).content.decode()
    assert change.summary in text.replace("&quot;", '"')
    assert reverse("memory:history_bulk", args=[change.pk]) in text  # "Open it in the history"
    assert "Undo this" in text and f'name="next" value="{here.replace("&", "&amp;")}"' in text

    undone = curator_client.post(reverse("memory:history_bulk_revert", args=[change.pk]), {"next": here})
    assert undone.status_code == 302 and undone["Location"] == here
    assert status(queues, "club-poll") == "valid" and counts(page(curator_client))["contradictions"] == 1
    assert "Undone since:" in curator_client.get(response["Location"]).content.decode()


def test_the_bulk_page_says_a_link_by_its_ends_text(viewer_client, queues, curator):
    change = Curation(queues, Actor(curator)).resolve_contradiction("rel-contra", "club-fiction")
    text = viewer_client.get(reverse("memory:history_bulk", args=[change.pk])).content.decode()
    # the link it deleted: only its row says it
    assert "“The book club polled two non-fiction books.” contradicts “The book club prefers fiction.”" in text
