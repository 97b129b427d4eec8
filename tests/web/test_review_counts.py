"""The review pages count, they do not list (issue 29): the queues' tallies come from counting
queries (no engine listing without a limit), and the near-duplicate finder's list of users is one
engine read, not a search per user. Guarded by the engine calls the pages make, not by timing."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.engine import AgentMemory, llm_link_metadata
from memory.models import ReviewKind, ReviewMark

from .test_review import counts, queues  # noqa: F401 (the review queues' world, a fixture)

LISTINGS = {"list_relations", "list_memories", "list_expired", "list_messages", "list_images"}


@pytest.fixture
def calls(agent_memory, monkeypatch) -> list[tuple[str, dict]]:
    """Every call to the AgentMemory's public methods, with its keyword arguments."""
    made: list[tuple[str, dict]] = []
    for name in dir(AgentMemory):
        if name.startswith("_") or not callable(getattr(AgentMemory, name)):
            continue
        method = getattr(agent_memory, name)

        def spying(*args, _name=name, _method=method, **kwargs):
            made.append((_name, kwargs))
            return _method(*args, **kwargs)

        monkeypatch.setattr(agent_memory, name, spying)
    return made


def many_in_each_queue(memory: AgentMemory, n: int) -> None:
    """n more items in every queue: LLM retirements, expiring, expired and invalid memories,
    contradictions."""
    for i in range(n):
        for suffix in ("a", "b", "c", "d"):
            memory.add_memory(
                f"Bulk fact {i}{suffix}.",
                memory_type="fact",
                memory_id=f"bulk-{i}{suffix}",
                user_id="carol",
                autonomous_linking=False,
                ttl_days=3 if suffix == "c" else None,
            )
        memory.link_records(f"bulk-{i}a", "fact", f"bulk-{i}b", "fact", "supersedes", metadata=llm_link_metadata("x"))
        memory.link_records(f"bulk-{i}c", "fact", f"bulk-{i}d", "fact", "contradicts")


def test_the_review_page_counts_its_queues_without_listing_them(viewer_client, queues, calls):  # noqa: F811
    many_in_each_queue(queues, 30)

    response = viewer_client.get(reverse("memory:review"), {"queue": "llm", "limit": 5})

    assert response.status_code == 200
    unlimited = [(name, kwargs) for name, kwargs in calls if name in LISTINGS and kwargs.get("limit") is None]
    assert unlimited == []
    counted = {name for name, _ in calls if name.startswith("count_")}
    assert counted == {"count_relations", "count_memories", "count_expired", "count_findings"}
    assert counts(response) == dict(llm=32, expiring=31, expired=2, invalid=34, contradictions=31, sensitive=0)


def test_the_queues_counts_are_their_rows_marks_and_scope_included(viewer_client, queues, curator):  # noqa: F811
    """Every queue's tally is the number of rows its pages show, once some links are marked."""
    many_in_each_queue(queues, 3)
    for relation_id in ("rel-llm", "rel-contra"):
        link = queues.get_relation(relation_id)
        kind = ReviewKind.ACCEPTED if relation_id == "rel-llm" else ReviewKind.DISMISSED
        ReviewMark.objects.create(
            actor=curator,
            actor_name="carl",
            kind=kind,
            relation_id=link.id,
            relation_type=link.relation_type,
            source_record_id=link.source_record_id,
            target_record_id=link.target_record_id,
        )
    for user in ("", "alice", "bob", "carol"):
        tallies = counts(viewer_client.get(reverse("memory:review"), {"user_id": user}))
        for queue, tally in tallies.items():
            rows = viewer_client.get(reverse("memory:review"), {"queue": queue, "user_id": user, "limit": 100})
            assert len(rows.context["rows"]) == tally, (user, queue)


def test_the_duplicate_finder_makes_one_search_whatever_the_number_of_users(viewer_client, agent_memory, calls):
    for user in ("ann", "ben", "cid", "dot", "eve"):
        for _n in range(2):
            agent_memory.add_memory(
                "Likes green tea in the morning.", memory_type="preference", user_id=user, autonomous_linking=False
            )
    calls.clear()

    response = viewer_client.get(reverse("memory:review_duplicates"), {"user_id": "ann"})

    assert response.status_code == 200
    made = [name for name, _ in calls]
    assert made.count("find_duplicates") == 1
    assert made.count("duplicate_group_counts") == 1
    listed = {user["user_id"]: user["groups"] for user in response.context["other_users"]}
    assert listed == {user: 1 for user in ("ann", "ben", "cid", "dot", "eve")}
