"""Counting without listing: MemoryStore.count and count_relations count what list and
list_relations list with the same filters, and duplicate_group_counts is find_duplicates'
total_groups for many users in one read, on every backend."""

from __future__ import annotations

import pytest

from memory.engine import AgentMemory, TimeToLiveAnchor, llm_link_metadata
from memory.engine.stores.sql import relations as sql_relations

from .test_duplicates import at, world  # noqa: F401 (the near-duplicates' world, a fixture)

EXPIRED = {"timestamp": "2000-01-01T00:00:00Z", "ttl_days": 1, "ttl_anchor": TimeToLiveAnchor.TIMESTAMP}


@pytest.fixture
def stocked(memory: AgentMemory) -> AgentMemory:
    """u1 and u2's memories of every status, with and without metadata and lifetimes; links by
    people and by the LLM; a thread's messages, one expired."""

    def fact(memory_id: str, content: str, user_id: str = "u1", **options) -> str:
        return memory.add_memory(
            content, memory_type="fact", memory_id=memory_id, user_id=user_id, autonomous_linking=False, **options
        )

    fact("porto", "Lives in Porto.", metadata={"source": "chat"})
    fact("lisbon", "Lives in Lisbon.")
    fact("boat", "Owns a boat.", status="invalid")
    fact("soon", "A ticket valid this week.", ttl_days=2)
    fact("later", "A passport renewal.", ttl_days=30)
    fact("gone", "An old appointment.", **EXPIRED)
    fact("bob-a", "Runs on Sundays.", user_id="u2")
    fact("bob-b", "Runs every Sunday.", user_id="u2", metadata={"source": "chat"})
    fact("bob-gone", "A race last year.", user_id="u2", **EXPIRED)
    memory.add_memory("Be brief.", memory_type="guideline", memory_id="brief", agent_id="a1")
    memory.link_records(
        "lisbon", "fact", "porto", "fact", "supersedes", relation_id="r-llm", metadata=llm_link_metadata("x")
    )
    memory.link_records(
        "bob-b", "fact", "bob-a", "fact", "duplicates", relation_id="r-bob", metadata=llm_link_metadata("x")
    )
    memory.link_records("later", "fact", "soon", "fact", "contradicts", relation_id="r-contra")
    memory.link_records("brief", "guideline", "lisbon", "fact", "supports", relation_id="r-mixed")
    thread = memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    thread.add_messages([{"role": "user", "content": "hello"}, {"role": "user", "content": "again"}])
    thread.add_messages(
        [{"role": "user", "content": "long ago", "timestamp": EXPIRED["timestamp"]}],
        ttl_days=1,
        ttl_anchor=TimeToLiveAnchor.TIMESTAMP,
    )
    return memory


LISTINGS = [
    {},
    {"user_id": "u1"},
    {"user_id": "u2", "status": "valid"},
    {"status": "invalid"},
    {"user_id": None},
    {"agent_id": "a1"},
    {"metadata_filter": {"source": "chat"}},
    {"metadata_filter": None, "user_id": "u1"},
    {"text": "sunday"},
    {"expires_before": "2999-01-01T00:00:00Z"},
    {"expires_before": "2999-01-01T00:00:00Z", "user_id": "u1", "status": "valid"},
]


@pytest.mark.parametrize("filters", LISTINGS)
def test_count_memories_is_the_length_of_the_listing(stocked, filters):
    assert stocked.count_memories(**filters) == len(stocked.list_memories(limit=None, **filters))


def facets_by_listing(memory: AgentMemory, filters: dict) -> dict[str, dict]:
    """Each facet's counts as the listing gives them, record by record."""
    listed = memory.list_memories(limit=None, **filters)
    counted: dict[str, dict] = {"memory_type": {}, "status": {}, "user_id": {}, "agent_id": {}, "tag": {}}
    for record in listed:
        for facet, value in (
            ("memory_type", record.record_type),
            ("status", record.status.value),
            ("user_id", record.user_id),
            ("agent_id", record.agent_id),
        ):
            counted[facet][value] = counted[facet].get(value, 0) + 1
        tags = (record.metadata or {}).get("tags")
        for tag in tags if isinstance(tags, list) else ():
            if isinstance(tag, str | int | float) and not isinstance(tag, bool):
                counted["tag"][str(tag)] = counted["tag"].get(str(tag), 0) + 1
    return counted


@pytest.mark.parametrize("filters", [f for f in LISTINGS if "expires_before" not in f])
def test_memory_facets_count_what_the_listing_lists(stocked, filters):
    stocked.add_memory("Tagged.", memory_type="preference", user_id="u1", metadata={"tags": ["diet", "travel", 3]})
    stocked.add_memory("Tagged too.", memory_type="fact", user_id="u2", metadata={"tags": ["diet", {"x": 1}, None]})
    stocked.add_memory("Not a list.", memory_type="fact", user_id="u1", metadata={"tags": "diet"})

    facets = stocked.memory_facets(["memory_type", "status", "user_id", "agent_id", "tag"], **filters)

    assert {facet: dict(pairs) for facet, pairs in facets.items()} == facets_by_listing(stocked, filters)
    for pairs in facets.values():
        assert [count for _, count in pairs] == sorted((count for _, count in pairs), reverse=True)


@pytest.mark.parametrize(
    "filters",
    [{}, {"user_id": "u1"}, {"agent_id": None}, {"metadata_filter": {"topic": "trips"}}, {"text": "t-"}],
)
def test_thread_facets_count_what_the_thread_listing_lists(stocked, filters):
    stocked.create_thread(thread_id="t-2", user_id="u2", metadata={"topic": "trips", "tags": ["lisbon", "food"]})
    stocked.create_thread(thread_id="t-3", user_id="u1", metadata={"tags": ["lisbon", {"x": 1}]})
    stocked.create_thread(thread_id="t-4", metadata={"topic": "trips", "tags": "lisbon"})

    facets = stocked.thread_facets(["user_id", "agent_id", "tag"], **filters)

    listed = stocked.list_threads(limit=None, **filters)
    expected: dict[str, dict] = {"user_id": {}, "agent_id": {}, "tag": {}}
    for thread in listed:
        for facet, value in (("user_id", thread.user_id), ("agent_id", thread.agent_id)):
            expected[facet][value] = expected[facet].get(value, 0) + 1
        tags = (thread.metadata or {}).get("tags")
        for tag in tags if isinstance(tags, list) else ():
            if isinstance(tag, str):
                expected["tag"][tag] = expected["tag"].get(tag, 0) + 1
    assert {facet: dict(pairs) for facet, pairs in facets.items()} == expected
    assert sum(count for _, count in facets["user_id"]) == len(listed)


def test_a_facet_the_store_does_not_know_is_refused(stocked):
    with pytest.raises(ValueError, match="facet must be one of"):
        stocked.store.thread_facet_counts("metadata")
    with pytest.raises(ValueError, match="facet must be one of"):
        stocked.store.facet_counts("fact", "content")


@pytest.mark.parametrize(
    "filters",
    [
        {"record_type": "fact", "status": "expired"},
        {"record_type": ["fact", "message"], "include_expired": True},
        {"record_type": "message", "thread_id": "t1"},
        {"record_type": "fact", "record_id": ["porto", "gone", "x"]},
    ],
)
def test_the_stores_count_takes_lists_filters(stocked, filters):
    filters = dict(filters)
    record_type = filters.pop("record_type")
    assert stocked.store.count(record_type, **filters) == len(stocked.store.list(record_type, limit=None, **filters))


@pytest.mark.parametrize("scope", [{}, {"user_id": "u1"}, {"user_id": "u2"}, {"thread_id": "t1"}, {"agent_id": "a1"}])
def test_count_expired_is_the_length_of_list_expired(stocked, scope):
    assert stocked.count_expired(**scope) == len(stocked.list_expired(limit=None, **scope))
    assert stocked.count_expired() == 3


@pytest.mark.parametrize(
    "filters",
    [
        {},
        {"user_id": "u1"},
        {"agent_id": "a1"},
        {"record_id": "lisbon"},
        {"relation_types": ["supersedes", "duplicates"]},
        {"relation_types": "contradicts", "user_id": "u2"},
    ],
)
def test_count_relations_is_the_length_of_list_relations(stocked, filters):
    assert stocked.count_relations(**filters) == len(stocked.list_relations(limit=None, **filters))


def test_count_relations_narrows_by_ids_and_metadata(stocked):
    llm = {"origin": "llm"}
    made_by_llm = [link for link in stocked.list_relations(limit=None) if link.made_by_llm]

    assert stocked.count_relations(metadata_filter=llm) == len(made_by_llm) == 2
    assert stocked.count_relations(metadata_filter=llm, user_id="u2") == 1
    assert stocked.count_relations(relation_ids=["r-llm", "r-contra", "nothing"]) == 2
    assert stocked.count_relations(relation_ids=["r-llm", "r-contra"], metadata_filter=llm) == 1
    assert stocked.count_relations(relation_ids=[]) == 0
    assert stocked.count_relations(metadata_filter=None) == 2  # r-contra and r-mixed have none


def test_counts_refuse_what_listings_refuse(stocked):
    with pytest.raises(ValueError, match="status"):
        stocked.count_memories(status="maybe")
    with pytest.raises(ValueError, match="expires_before"):
        stocked.count_memories(expires_before=None)
    with pytest.raises(ValueError, match="relation_ids"):
        stocked.count_relations(relation_ids="r-llm")


# --- duplicate_group_counts ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"max_distance": 0.11},
        {"max_distance": 0},
        {"statuses": None},
        {"memory_types": "fact", "max_distance": 0.11},
    ],
)
def test_duplicate_group_counts_are_find_duplicates_total_groups(world, arguments):  # noqa: F811
    users = ["u1", "u2", "nobody", "u1"]

    counts = world.duplicate_group_counts(users, **arguments)

    assert counts == {user: world.find_duplicates(user, **arguments).total_groups for user in ("u1", "u2", "nobody")}
    assert counts["u1"] > 0 or arguments.get("max_distance") == 0


def test_a_user_with_more_near_pairs_than_find_duplicates_takes_is_left_out(world, monkeypatch):  # noqa: F811
    monkeypatch.setattr("memory.engine.duplicates.MAX_PAIRS", 2)
    monkeypatch.setattr(sql_relations, "MAX_PAIRS", 2)
    with pytest.raises(ValueError, match="max_distance"):
        world.find_duplicates("u1", max_distance=0.5)

    assert world.duplicate_group_counts(["u1", "u2"], max_distance=0.5) == {"u2": 0}


def test_duplicate_group_counts_read_no_record(world, monkeypatch):  # noqa: F811
    def no_records(*args, **kwargs):
        raise AssertionError("a record was read")

    monkeypatch.setattr(world.store, "_records_by_pk", no_records)

    assert world.duplicate_group_counts(["u1"], max_distance=0.11) == {"u1": 3}


def test_duplicate_group_counts_refuse_bad_arguments(world):  # noqa: F811
    with pytest.raises(ValueError, match="user_ids"):
        world.duplicate_group_counts("u1")
    with pytest.raises(ValueError, match="max_distance"):
        world.duplicate_group_counts(["u1"], max_distance=0.9)
    assert world.duplicate_group_counts([]) == {}


def test_duplicate_group_counts_are_memoised_until_the_store_changes(world, monkeypatch):  # noqa: F811
    computed = []
    group_counts = world.store._group_counts
    monkeypatch.setattr(world.store, "_group_counts", lambda *args: computed.append(1) or group_counts(*args))

    first = world.duplicate_group_counts(["u1", "u2"], max_distance=0.11)
    again = world.duplicate_group_counts(["u1", "u2"], max_distance=0.11)
    world.store.add(["memory u2-copy"], "fact", embeddings=[at(0, 1, 0.0)], record_ids=["u2-copy"], user_ids="u2")
    after_a_write = world.duplicate_group_counts(["u1", "u2"], max_distance=0.11)

    assert first == again == {"u1": 3, "u2": 0}
    assert after_a_write == {"u1": 3, "u2": 1}
    assert len(computed) == 2
