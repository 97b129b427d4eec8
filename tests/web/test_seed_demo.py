"""seed_demo and ensure_demo_user, run against each test's temporary store.

seed_demo also writes the reviewers' changes in the curation history, in Django's database.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from memory.engine import RecordStatus
from memory.management.demo_data import THREADS
from memory.models import BulkChange, CurationEntry

pytestmark = pytest.mark.django_db

MEMORY_TYPES = ("memory", "fact", "preference", "guideline")
END = datetime.combine(datetime.now(UTC).date(), datetime.min.time(), UTC)
"""Where the demo's timeline ends: today, so that memories with a lifetime are as the demo means them."""
# As on the command line, so that argparse converts them.
SEED_ARGS = ("--seed=7", f"--end-date={END.date().isoformat()}")


def everything(list_page, **kwargs) -> list:
    """All records of a cursor-paginated listing."""
    records, cursor = [], None
    while True:
        page = list_page(limit=50, cursor=cursor, **kwargs)
        records += page
        if page.next_cursor is None:
            return records
        cursor = page.next_cursor


def snapshot(agent_memory) -> dict:
    return {
        "threads": [
            (t.id, t.user_id, t.agent_id, t.message_count, t.metadata, t.created_at, t.updated_at)
            for t in everything(agent_memory.list_threads)
        ],
        "messages": [
            (m.id, m.role, m.content, m.timestamp, m.metadata, m.created_at)
            for m in everything(agent_memory.list_messages)
        ],
        "memories": [
            (m.id, m.record_type, m.content, m.timestamp, m.metadata, m.status, m.created_at, m.expires_at)
            for m in everything(agent_memory.list_memories)
        ],
        "links": [
            (r.id, r.source_record_id, r.target_record_id, r.relation_type, r.opposite_relation_type, r.timestamp)
            for r in everything(agent_memory.list_relations)
        ],
        "calls": [
            (e.id, e.time, e.kind, e.caller, e.query, [r.record_id for r in e.results])
            for e in agent_memory.list_activity(limit=None)
        ],
    }


def test_it_writes_the_required_demo_world(agent_memory):
    call_command("seed_demo", *SEED_ARGS)

    assert len(everything(agent_memory.list_users)) >= 3
    assert len(everything(agent_memory.list_agents)) >= 2
    assert len(everything(agent_memory.list_threads)) >= 12
    assert len(everything(agent_memory.list_messages)) >= 300
    stored = agent_memory.store.list(list(MEMORY_TYPES), limit=None, include_expired=True)
    assert len(stored) >= 80
    assert set(Counter(m.record_type for m in stored)) == set(MEMORY_TYPES)


def test_some_demo_memories_are_already_expired(agent_memory):
    call_command("seed_demo", *SEED_ARGS)

    stored = agent_memory.store.list(list(MEMORY_TYPES), limit=None, include_expired=True)
    live = everything(agent_memory.list_memories)
    assert 0 < len(stored) - len(live) < 10
    assert any(m.expires_at for m in live), "some live memories should still have a lifetime"


def test_some_demo_memories_are_invalid(agent_memory):
    call_command("seed_demo", *SEED_ARGS)

    statuses = Counter(m.status for m in everything(agent_memory.list_memories))
    assert statuses[RecordStatus.INVALID] >= 3
    assert statuses[RecordStatus.VALID] > statuses[RecordStatus.INVALID]


def test_demo_memories_are_linked_by_every_built_in_type_and_a_custom_one(agent_memory):
    call_command("seed_demo", *SEED_ARGS)

    links = everything(agent_memory.list_relations)
    assert Counter(link.relation_type for link in links) == {
        "supersedes": 9,
        "refines": 1,
        "duplicates": 1,
        "supports": 6,
        "contradicts": 1,
        "inspired": 1,
    }
    # Two retirements come from automatic (LLM) linking, for the review queue; people made the rest.
    by_llm = [link for link in links if link.made_by_llm]
    assert sorted(link.relation_type for link in by_llm) == ["duplicates", "supersedes"]
    assert all(link.metadata == {"created_by": "demo-llm", "origin": "llm"} for link in by_llm)
    assert all(link.metadata == {"created_by": "demo"} for link in links if not link.made_by_llm)
    [custom] = [link for link in links if link.relation_type == "inspired"]
    assert custom.opposite_relation_type == "inspired_by"
    # The contradiction is unresolved: both memories stay valid.
    [contradiction] = [link for link in links if link.relation_type == "contradicts"]
    ends = [
        agent_memory.get_memory(contradiction.source_record_id),
        agent_memory.get_memory(contradiction.target_record_id),
    ]
    assert [memory.status for memory in ends] == [RecordStatus.VALID, RecordStatus.VALID]
    # A chain: one memory supersedes another that supersedes a third.
    superseded = {link.target_record_id for link in links if link.relation_type == "supersedes"}
    assert any(link.source_record_id in superseded for link in links if link.relation_type == "supersedes")
    # Each link's event time follows both of its memories'.
    for link in links:
        for end in (link.source_record_id, link.target_record_id):
            assert link.timestamp > agent_memory.get_memory(end).timestamp


def test_invalid_demo_memories_are_invalid_because_a_newer_memory_replaces_them(agent_memory):
    call_command("seed_demo", *SEED_ARGS)

    invalid = agent_memory.list_memories(status="invalid", limit=None)
    assert len(invalid) == 11
    lifecycle = agent_memory.lifecycle([memory.id for memory in invalid])
    for memory in invalid:
        assert lifecycle[memory.id].own_status == RecordStatus.VALID  # no explicit flag: the link decides
        assert lifecycle[memory.id].retired_by
        assert memory.metadata["review"]["status"] == "rejected"
        assert memory.metadata["review"]["reason"] in {"superseded", "refined", "duplicate"}
        [replacing] = [
            link for link in agent_memory.list_relations(record_id=memory.id) if link.target_record_id == memory.id
        ]
        assert agent_memory.get_memory(replacing.source_record_id).timestamp > memory.timestamp


def test_the_demo_graph_of_a_user_reaches_beyond_their_threads(agent_memory):
    call_command("seed_demo", *SEED_ARGS)

    graph = agent_memory.memory_graph(user_id="alice")
    assert len(graph.edges) == 7 and not graph.truncated
    assert {node.user_id for node in graph.nodes} == {"alice"}
    assert any(node.thread_id is None for node in graph.nodes)  # a profile memory, outside the threads
    assert agent_memory.memory_graph(agent_id="atlas").edges


def test_demo_memories_carry_rich_metadata(agent_memory):
    call_command("seed_demo", *SEED_ARGS)

    open_reviews = agent_memory.list_memories(metadata_filter={"review": {"status": "open"}}, limit=None)
    travel = agent_memory.list_memories(metadata_filter={"tags": {"$array_contains": "travel"}}, limit=None)
    assert open_reviews
    assert travel
    assert all(isinstance(m.metadata["tags"], list) for m in travel)


def test_demo_chat_memories_name_the_messages_they_came_from(agent_memory):
    call_command("seed_demo", *SEED_ARGS)

    chat = agent_memory.list_memories(metadata_filter={"source": "chat"}, limit=None)
    assert chat
    with_provenance = [memory for memory in chat if memory.metadata.get("source_message_ids")]
    assert len(with_provenance) >= len(chat) - 2
    for memory in with_provenance:
        messages = [
            agent_memory.get_message_record(memory.thread_id, message_id)
            for message_id in memory.metadata["source_message_ids"]
        ]
        assert {message.role for message in messages} == {"user", "assistant"}
        for message in messages:
            assert memory.id in [m.id for m in agent_memory.memories_from_message(memory.thread_id, message.id)]


STOP_WORDS = set(
    [
        "about",
        "also",
        "and",
        "are",
        "but",
        "can",
        "did",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "her",
        "his",
        "how",
        "its",
        "just",
        "more",
        "not",
        "our",
        "she",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "they",
        "this",
        "was",
        "what",
        "when",
        "which",
        "who",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)


def meaningful_words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z0-9]+", text.lower()) if len(word) > 2 and word not in STOP_WORDS}


def test_demo_memories_share_words_with_the_messages_they_came_from(agent_memory):
    """Provenance names the exchange a memory was drawn from, not any reply of its thread."""
    call_command("seed_demo", *SEED_ARGS)

    unrelated = []
    stored = agent_memory.store.list(list(MEMORY_TYPES), limit=None, include_expired=True)
    for memory in [memory for memory in stored if memory.metadata["source"] == "chat"]:
        said = " ".join(
            agent_memory.get_message_record(memory.thread_id, message_id).content
            for message_id in memory.metadata.get("source_message_ids", [])
        )
        if said and len(meaningful_words(memory.content) & meaningful_words(said)) < 2:
            unrelated.append((memory.content, said))
    assert unrelated == []


def test_demo_conversations_span_several_weeks(agent_memory):
    call_command("seed_demo", *SEED_ARGS)

    moments = sorted(datetime.fromisoformat(m.timestamp) for m in everything(agent_memory.list_messages))
    assert moments[-1] < END
    assert moments[-1] - moments[0] > timedelta(weeks=3)


def test_the_same_seed_writes_the_same_data(agent_memory, settings, tmp_path):
    from memory import services

    call_command("seed_demo", *SEED_ARGS)
    first = snapshot(agent_memory)

    settings.OAM_STORE_URL = f"sqlite://{tmp_path / 'second.sqlite3'}"
    services.reset_agent_memory()
    call_command("seed_demo", *SEED_ARGS)

    assert snapshot(services.get_agent_memory()) == first


def test_another_seed_writes_other_ids(agent_memory, settings, tmp_path):
    from memory import services

    call_command("seed_demo", *SEED_ARGS)
    first = snapshot(agent_memory)

    settings.OAM_STORE_URL = f"sqlite://{tmp_path / 'second.sqlite3'}"
    services.reset_agent_memory()
    call_command("seed_demo", "--seed=8", "--end-date=2026-01-15")

    assert snapshot(services.get_agent_memory())["messages"] != first["messages"]


def test_if_empty_leaves_a_seeded_store_alone(agent_memory, capsys):
    call_command("seed_demo", *SEED_ARGS)
    before = snapshot(agent_memory)

    call_command("seed_demo", "--if-empty", *SEED_ARGS)

    assert snapshot(agent_memory) == before
    assert "not seeded" in capsys.readouterr().out


def test_if_empty_seeds_an_empty_store(agent_memory):
    call_command("seed_demo", "--if-empty", *SEED_ARGS)

    assert len(everything(agent_memory.list_threads)) == 12


def test_it_refuses_to_seed_a_store_that_has_threads(agent_memory):
    agent_memory.create_thread(thread_id="real-work", user_id="someone")

    with pytest.raises(CommandError, match="already has threads"):
        call_command("seed_demo", *SEED_ARGS)


@pytest.mark.django_db
def test_ensure_demo_user_creates_a_curator_login(monkeypatch, capsys):
    monkeypatch.setenv("OAM_DEMO_PASSWORD", "s3cret-demo")

    call_command("ensure_demo_user")

    user = authenticate(username="demo", password="s3cret-demo")
    assert user is not None
    assert list(user.groups.values_list("name", flat=True)) == ["curators"]
    assert "s3cret-demo" in capsys.readouterr().out


@pytest.mark.django_db
def test_ensure_demo_user_defaults_the_password_to_demo(monkeypatch):
    monkeypatch.delenv("OAM_DEMO_PASSWORD", raising=False)

    call_command("ensure_demo_user")

    assert authenticate(username="demo", password="demo") is not None


@pytest.mark.django_db
def test_ensure_demo_user_leaves_an_existing_demo_user_alone(monkeypatch, capsys):
    User.objects.create_user(username="demo", password="changed-by-the-admin")
    monkeypatch.setenv("OAM_DEMO_PASSWORD", "other")

    call_command("ensure_demo_user")

    assert authenticate(username="demo", password="changed-by-the-admin") is not None
    assert "other" not in capsys.readouterr().out


def test_the_demo_has_near_duplicates_for_every_user(agent_memory):
    call_command("seed_demo", *SEED_ARGS)
    groups = {user.id: agent_memory.find_duplicates(user.id).groups for user in agent_memory.list_users()}
    assert {user_id: len(found) for user_id, found in groups.items()} == {"alice": 3, "bruno": 1, "chen": 1, "dana": 1}
    assert max(len(group.memories) for group in groups["alice"]) == 3


def test_the_demo_agents_have_searched_and_read_cards_so_activity_is_not_empty(agent_memory):
    call_command("seed_demo", *SEED_ARGS)
    agent_memory.activity.flush()
    calls = list(agent_memory.list_activity(kind=["search", "card"], caller_kind="agent", limit=None))
    assert {event.kind for event in calls} == {"search", "card"}
    assert all(event.caller.endswith("-bot") and event.scope["thread_id"] for event in calls)
    searches = [event for event in calls if event.kind == "search"]
    assert all(event.results and event.content for event in searches)


# --- the demo happens in time -------------------------------------------------------------------


def moment(text: str | None) -> datetime:
    assert text is not None
    return datetime.fromisoformat(text)


def thread_memories(agent_memory, thread_id: str) -> list:
    return list(agent_memory.store.list(list(MEMORY_TYPES), limit=None, thread_id=thread_id, include_expired=True))


def test_messages_are_stored_when_they_were_said(agent_memory):
    call_command("seed_demo", *SEED_ARGS)

    messages = everything(agent_memory.list_messages)
    assert all(message.created_at == message.timestamp for message in messages)
    assert max(moment(message.created_at) for message in messages) < END


def test_a_thread_starts_with_its_first_message_and_was_last_active_at_its_latest_record(agent_memory):
    call_command("seed_demo", *SEED_ARGS)

    for thread in everything(agent_memory.list_threads):
        messages = agent_memory.list_thread_messages(thread.id, limit=None)
        images = agent_memory.list_images(thread_id=thread.id, limit=None)
        stored = [*messages, *images, *thread_memories(agent_memory, thread.id)]
        assert thread.created_at == messages[0].created_at, thread.id
        assert thread.updated_at == max(record.created_at for record in stored), thread.id
        # Its memories and images came within the hour after its last message.
        last_message = moment(messages[-1].created_at)
        assert last_message <= moment(thread.updated_at) <= last_message + timedelta(hours=1), thread.id


def test_threads_were_last_active_at_different_times_over_the_last_weeks(agent_memory):
    call_command("seed_demo", *SEED_ARGS)

    last_active = [moment(thread.updated_at) for thread in everything(agent_memory.list_threads)]
    assert len(set(last_active)) == len(THREADS)
    assert len({when.date() for when in last_active}) >= len(THREADS) // 2
    assert END - timedelta(days=22) < min(last_active) and max(last_active) < END
    assert max(last_active) - min(last_active) > timedelta(weeks=1)
    # Each conversation went on over days, not in one sitting.
    for thread in everything(agent_memory.list_threads):
        assert moment(thread.updated_at) - moment(thread.created_at) > timedelta(days=1), thread.id


def test_memories_are_stored_a_moment_after_the_messages_they_came_from(agent_memory):
    call_command("seed_demo", *SEED_ARGS)

    for demo in THREADS:
        thread_id = f"demo-{demo.slug}"
        first = moment(agent_memory.list_thread_messages(thread_id, limit=1)[0].created_at)
        for memory in thread_memories(agent_memory, thread_id):
            assert memory.created_at == memory.timestamp, memory.content
            assert moment(memory.created_at) > first, memory.content
            sources = memory.metadata.get("source_message_ids", [])
            if sources:
                said = max(moment(agent_memory.get_message_record(thread_id, source).created_at) for source in sources)
                assert said < moment(memory.created_at) <= said + timedelta(minutes=2), memory.content


def test_links_are_stored_after_both_their_memories(agent_memory):
    call_command("seed_demo", *SEED_ARGS)

    for link in everything(agent_memory.list_relations):
        ends = [agent_memory.get_memory(link.source_record_id), agent_memory.get_memory(link.target_record_id)]
        assert link.created_at == link.timestamp
        assert all(moment(link.created_at) > moment(end.created_at) for end in ends)


def test_the_card_as_of_a_threads_last_message_finds_what_was_said_before_it(agent_memory):
    """The card page's "as of": what the agent would have been handed right after the message.
    Every demo memory stamped after every message found nothing there."""
    call_command("seed_demo", *SEED_ARGS)

    for demo in THREADS:
        thread = agent_memory.get_thread(f"demo-{demo.slug}")
        [last] = agent_memory.list_thread_messages_by_seq_no(thread.thread_id, last_n=1)
        card = thread.get_context_card(as_of_message_id=last.id, refresh_summary_if_due=False)
        found = [result.record for result in card.relevant_results]
        assert len(found) >= 3, demo.slug
        assert all(moment(record.created_at) <= moment(last.created_at) for record in found), demo.slug
        assert any(record.thread_id == thread.thread_id for record in found), demo.slug
        # Earlier in the conversation, the card knew less.
        [first] = agent_memory.list_thread_messages(thread.thread_id, limit=1)
        then = thread.get_context_card(as_of_message_id=first.id, refresh_summary_if_due=False)
        assert not any(result.record.thread_id == thread.thread_id for result in then.relevant_results), demo.slug


def about(record, demo) -> bool:
    """Whether a record is about a demo thread's subject as the demo data declares it: drawn from
    the thread, or tagged with the thread's topic or one of its tags."""
    subject = {demo.topic, *demo.tags}
    return record.thread_id == f"demo-{demo.slug}" or bool(subject & set((record.metadata or {}).get("tags", ())))


def test_each_threads_card_holds_memories_about_its_subject(agent_memory):
    """What a person would pick: the Lisbon trip's card holds the trip and Alice's travel
    preferences, not her meal prep. The default embedder is lexical, so this is the demo's words
    at work: each thread's last messages and its memories share them, and share few with the rest."""
    call_command("seed_demo", *SEED_ARGS)

    for demo in THREADS:
        thread = agent_memory.get_thread(f"demo-{demo.slug}")
        now = thread.get_context_card(refresh_summary_if_due=False).relevant_results
        assert len(now) >= 4, demo.slug
        assert [result.content for result in now if not about(result.record, demo)] == [], demo.slug
        # As of its last message too (its latest memories are not written yet): the top three.
        [last] = agent_memory.list_thread_messages_by_seq_no(thread.thread_id, last_n=1)
        then = thread.get_context_card(as_of_message_id=last.id, refresh_summary_if_due=False).relevant_results
        assert [result.content for result in then[:3] if not about(result.record, demo)] == [], demo.slug


def test_the_agents_read_memory_as_the_questions_came(agent_memory):
    """Their calls are logged at the times they were made: each right after a user's message of
    its thread, before the reply, at that message's card (as the thread's pages place it)."""
    call_command("seed_demo", *SEED_ARGS)

    calls = list(agent_memory.list_activity(kind=["search", "card"], caller_kind="agent", limit=None))
    assert len(calls) >= 2 * len(THREADS)
    assert {call.scope["thread_id"] for call in calls} == {f"demo-{demo.slug}" for demo in THREADS}
    for call in calls:
        messages = agent_memory.list_thread_messages(call.scope["thread_id"], limit=None)
        before = [message for message in messages if message.created_at <= call.time]
        after = [message for message in messages if message.created_at > call.time]
        assert before and before[-1].role == "user", call
        assert after and moment(call.time) - moment(before[-1].created_at) < timedelta(seconds=4), call
        assert call.caller == f"{messages[0].agent_id}-bot" and call.on_behalf_of == messages[0].user_id
        if call.kind == "search":
            assert call.query == before[-1].content[:200]
    assert END - timedelta(days=29) < min(moment(call.time) for call in calls)


def test_some_live_demo_memories_expire_within_the_week(agent_memory):
    """For the review page's "Expiring soon"."""
    call_command("seed_demo", *SEED_ARGS)

    soon = agent_memory.list_memories(expires_before=datetime.now(UTC) + timedelta(days=7), limit=None)
    assert soon


def test_the_history_shows_the_reviewers_changes(agent_memory):
    call_command("seed_demo", *SEED_ARGS)

    entries = list(CurationEntry.objects.all())
    [bulk] = BulkChange.objects.all()
    assert len(entries) >= 3 and any(entry.bulk_id == bulk.pk for entry in entries)
    assert {entry.actor_name for entry in entries} == {"moderator-1", "moderator-2"}
    assert all(END - timedelta(days=2) < entry.at < END for entry in entries)
    for entry in entries:  # each as the store holds it, so that it can be undone
        memory = agent_memory.get_memory(entry.object_id)
        assert (memory.content, memory.version) == (entry.after["content"], entry.after["version"])
