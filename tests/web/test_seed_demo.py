"""seed_demo and ensure_demo_user, run against each test's temporary store."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from memory.engine import RecordStatus

MEMORY_TYPES = ("memory", "fact", "preference", "guideline")
# As on the command line, so that argparse converts them.
SEED_ARGS = ("--seed=7", "--end-date=2026-01-15")


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
            (t.id, t.user_id, t.agent_id, t.message_count, t.metadata) for t in everything(agent_memory.list_threads)
        ],
        "messages": [
            (m.id, m.role, m.content, m.timestamp, m.metadata) for m in everything(agent_memory.list_messages)
        ],
        "memories": [
            (m.id, m.record_type, m.content, m.timestamp, m.metadata, m.status)
            for m in everything(agent_memory.list_memories)
        ],
        "links": [
            (r.id, r.source_record_id, r.target_record_id, r.relation_type, r.opposite_relation_type, r.timestamp)
            for r in everything(agent_memory.list_relations)
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
    assert moments[-1] < datetime(2026, 1, 15, tzinfo=UTC)
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
