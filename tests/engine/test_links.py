"""Memory links: relation types, status recomputation, errors, add_memory's link, listing relations.

API_SPEC §1.3, §4.3.2, §4.3.16 to §4.3.18, §4.4, §4.5.2, §6.2 to §6.4, C-T9, C-T15, C-T19;
DECISIONS D2 (effective status) and D3 (errors). Graph search is in test_graph_search.py.
"""

from __future__ import annotations

import asyncio

import pytest

from memory.engine import AgentMemory, RecordRelation, RecordStatus

from .helpers import parse_utc

VALID, INVALID = RecordStatus.VALID, RecordStatus.INVALID
LIFECYCLE = ["supersedes", "refines", "duplicates"]
NON_LIFECYCLE = ["supports", "contradicts"]
OPPOSITES = {
    "supersedes": "is_superseded_by",
    "refines": "is_refined_by",
    "duplicates": "duplicates",
    "supports": "is_supported_by",
    "contradicts": "contradicts",
}


def status_of(memory, memory_id: str) -> RecordStatus:
    return memory.get_memory(memory_id).status


def relation_ids(memory, **filters) -> list[str]:
    return [relation.id for relation in memory.list_relations(**filters)]


def searched_ids(thread, query: str, **options) -> set[str]:
    return {result.id for result in thread.search(query, max_results=50, **options)}


@pytest.fixture
def pair(thread):
    """Two memories of thread t1: "new" (the usual source) and "old" (the usual target)."""
    thread.add_memory("The user now prefers oolong tea.", memory_id="new")
    thread.add_memory("The user prefers green tea.", memory_id="old")
    return "new", "old"


def link(owner, relation_type: str = "supersedes", source: str = "new", target: str = "old", **options) -> str:
    return owner.link_records(source, "memory", target, "memory", relation_type, **options)


# --- creating links (§6.3; C-T15) -----------------------------------------------------------


def test_link_records_returns_a_relation_id_and_stores_the_relation_in_its_given_direction(thread, memory, pair):
    relation_id = link(thread, "supports")
    assert isinstance(relation_id, str) and relation_id
    relation = memory.get_relation(relation_id)
    assert isinstance(relation, RecordRelation)
    assert relation.id == relation_id
    assert (relation.source_record_id, relation.source_record_type) == ("new", "memory")
    assert (relation.target_record_id, relation.target_record_type) == ("old", "memory")
    assert (relation.relation_type, relation.opposite_relation_type) == ("supports", "is_supported_by")
    assert relation.timestamp is None and relation.metadata is None
    parse_utc(relation.created_at)


def test_link_records_stores_the_given_id_timestamp_and_metadata(thread, memory, pair):
    relation_id = link(
        thread,
        "supports",
        relation_id="rel-given",
        timestamp="2024-05-01T12:00:00+02:00",
        metadata={"reviewed_by": "me", "score": 2},
    )
    assert relation_id == "rel-given"
    relation = memory.get_relation("rel-given")
    assert parse_utc(relation.timestamp) == parse_utc("2024-05-01T10:00:00+00:00")
    assert relation.metadata == {"reviewed_by": "me", "score": 2}


def test_link_records_reads_a_naive_timestamp_as_utc(thread, memory, pair):
    link(thread, "supports", relation_id="naive", timestamp="2024-05-01T12:00:00")
    assert parse_utc(memory.get_relation("naive").timestamp) == parse_utc("2024-05-01T12:00:00+00:00")


def test_thread_docs_example_links_a_fact_to_a_memory_then_retypes_and_deletes_the_link(thread, memory):
    # C-T15, C-T19, C-T9 in sequence, on the same relation.
    thread.add_memory("The user is vegetarian.", memory_type="fact", memory_id="fact-1")
    thread.add_memory("Suggest vegetarian restaurants.", memory_id="memory-1")
    assert isinstance(thread.link_records("fact-1", "fact", "memory-1", "memory", "supports"), str)
    assert thread.delete_record_link("fact-1", "fact", "memory-1", "memory", "supports") == 1
    relation_id = thread.link_records("fact-1", "fact", "memory-1", "memory", "supports", relation_id="relation-id")
    assert relation_id == "relation-id"
    assert thread.update_record_link("relation-id", relation_type="supports") == 1
    assert thread.delete_record_link(relation_id="relation-id") == 1
    assert relation_ids(memory) == []


@pytest.mark.parametrize("relation_type", LIFECYCLE)
def test_a_lifecycle_link_invalidates_its_target_only(thread, memory, pair, relation_type):
    link(thread, relation_type)
    assert status_of(memory, "old") == INVALID
    assert status_of(memory, "new") == VALID


@pytest.mark.parametrize("relation_type", NON_LIFECYCLE)
def test_supports_and_contradicts_leave_both_endpoints_valid(thread, memory, pair, relation_type):
    link(thread, relation_type)
    assert status_of(memory, "old") == VALID
    assert status_of(memory, "new") == VALID


@pytest.mark.parametrize(("relation_type", "opposite"), sorted(OPPOSITES.items()))
def test_each_built_in_type_has_its_fixed_opposite_label(thread, memory, pair, relation_type, opposite):
    relation = memory.get_relation(link(thread, relation_type))
    assert (relation.relation_type, relation.opposite_relation_type) == (relation_type, opposite)
    assert relation.label_from("new") == relation_type
    assert relation.label_from("old") == opposite


def test_a_custom_type_reads_the_same_both_ways_when_no_opposite_is_given(thread, memory, pair):
    relation = memory.get_relation(link(thread, "inspired_by"))
    assert (relation.relation_type, relation.opposite_relation_type) == ("inspired_by", "inspired_by")


def test_a_custom_type_keeps_the_opposite_label_given(thread, memory, pair):
    relation = memory.get_relation(link(thread, "inspired_by", opposite_relation_type="inspired"))
    assert (relation.relation_type, relation.opposite_relation_type) == ("inspired_by", "inspired")


def test_a_custom_type_has_no_lifecycle_effect(thread, memory, pair):
    link(thread, "replaces_informally", opposite_relation_type="informally_replaced_by")
    assert status_of(memory, "old") == VALID
    assert status_of(memory, "new") == VALID


@pytest.mark.parametrize("relation_type", sorted(OPPOSITES))
def test_a_built_in_type_with_a_different_explicit_opposite_raises_value_error(thread, memory, pair, relation_type):
    with pytest.raises(ValueError):
        link(thread, relation_type, opposite_relation_type="something_else")
    assert relation_ids(memory) == []
    assert status_of(memory, "old") == VALID


def test_a_lifecycle_link_hides_its_target_from_searches_without_invalid_results(thread, pair):
    assert {"new", "old"} <= searched_ids(thread, "tea", include_invalid_results=False)
    link(thread, "supersedes")
    found = searched_ids(thread, "tea", include_invalid_results=False)
    assert "new" in found and "old" not in found
    assert {"new", "old"} <= searched_ids(thread, "tea")


# --- updating links and status recomputation (§6.4; D2) ------------------------------------


def test_retyping_a_lifecycle_link_to_supports_revalidates_the_target(thread, memory, pair):
    relation_id = link(thread, "supersedes")
    assert thread.update_record_link(relation_id, relation_type="supports") == 1
    relation = memory.get_relation(relation_id)
    assert (relation.relation_type, relation.opposite_relation_type) == ("supports", "is_supported_by")
    assert status_of(memory, "old") == VALID
    assert status_of(memory, "new") == VALID
    assert "old" in searched_ids(thread, "tea", include_invalid_results=False)


def test_retyping_supports_to_refines_invalidates_the_target(thread, memory, pair):
    relation_id = link(thread, "supports")
    assert thread.update_record_link(relation_id, relation_type="refines") == 1
    relation = memory.get_relation(relation_id)
    assert (relation.relation_type, relation.opposite_relation_type) == ("refines", "is_refined_by")
    assert status_of(memory, "old") == INVALID
    assert status_of(memory, "new") == VALID
    assert "old" not in searched_ids(thread, "tea", include_invalid_results=False)


def test_retyping_between_lifecycle_types_keeps_the_target_invalid(thread, memory, pair):
    relation_id = link(thread, "supersedes")
    assert thread.update_record_link(relation_id, relation_type="duplicates") == 1
    assert memory.get_relation(relation_id).opposite_relation_type == "duplicates"
    assert status_of(memory, "old") == INVALID


def test_retyping_a_lifecycle_link_to_a_custom_type_revalidates_the_target(thread, memory, pair):
    relation_id = link(thread, "refines")
    assert thread.update_record_link(relation_id, relation_type="mentions", opposite_relation_type="mentioned_by") == 1
    relation = memory.get_relation(relation_id)
    assert (relation.relation_type, relation.opposite_relation_type) == ("mentions", "mentioned_by")
    assert status_of(memory, "old") == VALID


def test_retyping_a_custom_link_to_a_built_in_type_replaces_its_opposite_label(thread, memory, pair):
    relation_id = link(thread, "mentions", opposite_relation_type="mentioned_by")
    assert thread.update_record_link(relation_id, relation_type="contradicts") == 1
    relation = memory.get_relation(relation_id)
    assert (relation.relation_type, relation.opposite_relation_type) == ("contradicts", "contradicts")


def test_retyping_to_a_custom_type_without_an_opposite_keeps_the_stored_opposite(thread, memory, pair):
    # §6.4: "opposite_relation_type OMITTED keeps the stored label".
    relation_id = link(thread, "mentions", opposite_relation_type="mentioned_by")
    assert thread.update_record_link(relation_id, relation_type="cites") == 1
    relation = memory.get_relation(relation_id)
    assert (relation.relation_type, relation.opposite_relation_type) == ("cites", "mentioned_by")


def test_update_record_link_changes_only_the_fields_given(thread, memory, pair):
    relation_id = link(
        thread, "mentions", opposite_relation_type="mentioned_by", timestamp="2024-01-01T00:00:00Z", metadata={"a": 1}
    )
    assert thread.update_record_link(relation_id, opposite_relation_type="is_mentioned_by") == 1
    relation = memory.get_relation(relation_id)
    assert (relation.relation_type, relation.opposite_relation_type) == ("mentions", "is_mentioned_by")
    assert relation.metadata == {"a": 1}
    assert parse_utc(relation.timestamp) == parse_utc("2024-01-01T00:00:00+00:00")

    assert thread.update_record_link(relation_id, metadata={"b": 2}) == 1
    relation = memory.get_relation(relation_id)
    assert relation.metadata == {"b": 2}
    assert relation.relation_type == "mentions" and relation.timestamp is not None

    assert thread.update_record_link(relation_id, timestamp=None) == 1
    relation = memory.get_relation(relation_id)
    assert relation.timestamp is None and relation.metadata == {"b": 2}


def test_changing_a_built_in_links_opposite_to_another_label_raises_value_error(thread, memory, pair):
    relation_id = link(thread, "supersedes")
    with pytest.raises(ValueError):
        thread.update_record_link(relation_id, opposite_relation_type="replaced_by")
    assert memory.get_relation(relation_id).opposite_relation_type == "is_superseded_by"


# --- deleting links and memories -------------------------------------------------------------


def test_deleting_a_lifecycle_link_by_id_revalidates_the_target(thread, memory, pair):
    relation_id = link(thread, "supersedes")
    assert thread.delete_record_link(relation_id=relation_id) == 1
    assert status_of(memory, "old") == VALID
    assert relation_ids(memory) == []
    with pytest.raises(KeyError):
        memory.get_relation(relation_id)
    assert "old" in searched_ids(thread, "tea", include_invalid_results=False)


def test_deleting_a_lifecycle_link_by_its_stored_tuple_revalidates_the_target(thread, memory, pair):
    link(thread, "refines")
    assert thread.delete_record_link("new", "memory", "old", "memory", "refines") == 1
    assert status_of(memory, "old") == VALID
    assert relation_ids(memory) == []


def test_delete_record_link_by_a_reversed_tuple_or_another_type_deletes_nothing(thread, memory, pair):
    relation_id = link(thread, "refines")
    assert thread.delete_record_link("old", "memory", "new", "memory", "refines") == 0
    assert thread.delete_record_link("new", "memory", "old", "memory", "supersedes") == 0
    assert thread.delete_record_link("new", "fact", "old", "memory", "refines") == 0
    assert relation_ids(memory) == [relation_id]
    assert status_of(memory, "old") == INVALID


def test_deleting_a_link_twice_returns_zero_the_second_time(thread, pair):
    relation_id = link(thread, "supports")
    assert thread.delete_record_link(relation_id=relation_id) == 1
    assert thread.delete_record_link(relation_id=relation_id) == 0


def test_a_target_stays_invalid_until_its_last_lifecycle_link_goes(thread, memory, pair):
    thread.add_memory("The user now prefers jasmine tea.", memory_id="newer")
    first = link(thread, "supersedes")
    second = link(thread, "duplicates", source="newer")
    assert thread.delete_record_link(relation_id=first) == 1
    assert status_of(memory, "old") == INVALID
    assert thread.delete_record_link(relation_id=second) == 1
    assert status_of(memory, "old") == VALID


def test_deleting_the_source_memory_revalidates_the_target_and_removes_the_relation(thread, memory, pair):
    relation_id = link(thread, "supersedes")
    assert "old" not in searched_ids(thread, "tea", include_invalid_results=False)
    assert thread.delete_memory("new") == 1
    assert status_of(memory, "old") == VALID
    assert relation_ids(memory) == []
    assert relation_ids(memory, record_id="old") == []
    with pytest.raises(KeyError):
        memory.get_relation(relation_id)
    assert "old" in searched_ids(thread, "tea", include_invalid_results=False)


def test_deleting_the_source_memory_through_the_client_revalidates_the_target(memory):
    memory.add_memory("old fact", memory_id="old", user_id="u1")
    memory.add_memory("new fact", memory_id="new", user_id="u1")
    link(memory, "duplicates")
    assert memory.delete_memory("new") == 1
    assert status_of(memory, "old") == VALID
    assert relation_ids(memory) == []


def test_deleting_the_target_memory_removes_the_relation_and_leaves_the_source_valid(thread, memory, pair):
    relation_id = link(thread, "supersedes")
    assert thread.delete_memory("old") == 1
    assert status_of(memory, "new") == VALID
    assert relation_ids(memory) == []
    with pytest.raises(KeyError):
        memory.get_relation(relation_id)
    # The freed id can be reused and linked again without a stale relation in the way.
    thread.add_memory("The user prefers green tea again.", memory_id="old")
    assert status_of(memory, "old") == VALID
    link(thread, "supports")


def test_deleting_a_thread_removes_its_relations_and_revalidates_targets_elsewhere(memory, thread, other_thread):
    thread.add_memory("kept", memory_id="kept")
    other_thread.add_memory("goes", memory_id="goes")
    memory.link_records("goes", "memory", "kept", "memory", "supersedes")
    assert status_of(memory, "kept") == INVALID
    assert memory.delete_thread("t2") == 1
    assert status_of(memory, "kept") == VALID
    assert relation_ids(memory) == []


def test_an_explicitly_invalid_memory_stays_invalid_when_its_lifecycle_link_goes(thread, memory):
    # D2: the caller's INVALID flag and the lifecycle links are separate causes.
    thread.add_memory("The user prefers green tea.", memory_id="old", status=INVALID)
    thread.add_memory("The user now prefers oolong tea.", memory_id="new")
    relation_id = link(thread, "supersedes")
    assert status_of(memory, "old") == INVALID
    assert thread.delete_record_link(relation_id=relation_id) == 1
    assert status_of(memory, "old") == INVALID


def test_a_memory_set_invalid_while_superseded_stays_invalid_after_the_link_goes(thread, memory, pair):
    relation_id = link(thread, "supersedes")
    thread.update_memory("old", status=INVALID)
    assert thread.update_record_link(relation_id, relation_type="supports") == 1
    assert status_of(memory, "old") == INVALID


def test_setting_a_superseded_memory_valid_leaves_it_invalid_while_the_link_exists(thread, memory, pair):
    relation_id = link(thread, "supersedes")
    assert thread.update_memory("old", status=VALID) == "old"
    assert status_of(memory, "old") == INVALID
    assert "old" not in searched_ids(thread, "tea", include_invalid_results=False)
    assert thread.delete_record_link(relation_id=relation_id) == 1
    assert status_of(memory, "old") == VALID


def test_setting_an_explicitly_invalid_superseded_memory_valid_clears_only_the_flag(thread, memory):
    thread.add_memory("The user prefers green tea.", memory_id="old", status=INVALID)
    thread.add_memory("The user now prefers oolong tea.", memory_id="new")
    relation_id = link(thread, "refines")
    memory.update_memory("old", status=VALID)
    assert status_of(memory, "old") == INVALID
    thread.delete_record_link(relation_id=relation_id)
    assert status_of(memory, "old") == VALID


# --- errors (D3; §4.4) ------------------------------------------------------------------------


def test_linking_a_message_raises_value_error(thread, memory, pair):
    [message_id] = thread.add_messages([{"role": "user", "content": "I like tea."}])
    with pytest.raises(ValueError):
        thread.link_records(message_id, "message", "old", "memory", "supports")
    with pytest.raises(ValueError):
        thread.link_records(message_id, "memory", "old", "memory", "supports")
    with pytest.raises(ValueError):
        memory.link_records("old", "memory", message_id, "message", "supports")
    assert relation_ids(memory) == []


@pytest.mark.parametrize("record_type", ["thread", "user_profile", "image", "note"])
def test_linking_with_a_non_memory_record_type_raises_value_error(thread, memory, pair, record_type):
    with pytest.raises(ValueError):
        thread.link_records("new", "memory", "old", record_type, "supports")
    assert relation_ids(memory) == []


def test_linking_with_the_wrong_logical_type_of_a_memory_raises_value_error(thread, memory, pair):
    with pytest.raises(ValueError):
        thread.link_records("new", "fact", "old", "memory", "supports")
    assert relation_ids(memory) == []


@pytest.mark.parametrize("missing_end", ["source", "target"])
def test_linking_a_missing_memory_raises_value_error(thread, memory, pair, missing_end):
    source, target = ("ghost", "old") if missing_end == "source" else ("new", "ghost")
    with pytest.raises(ValueError):
        thread.link_records(source, "memory", target, "memory", "supersedes")
    with pytest.raises(ValueError):
        memory.link_records(source, "memory", target, "memory", "supersedes")
    assert relation_ids(memory) == []
    assert status_of(memory, "old") == VALID


def test_linking_a_memory_to_itself_raises_value_error(thread, memory, pair):
    with pytest.raises(ValueError):
        link(thread, "supersedes", source="old", target="old")
    with pytest.raises(ValueError):
        link(memory, "supports", source="old", target="old")
    assert relation_ids(memory) == []
    assert status_of(memory, "old") == VALID


@pytest.mark.parametrize(
    ("source", "target", "relation_type"),
    [("new", "old", "supersedes"), ("new", "old", "supports"), ("old", "new", "supports"), ("old", "new", "refines")],
)
def test_a_second_relation_between_the_same_memories_raises_value_error(
    thread, memory, pair, source, target, relation_type
):
    first = link(thread, "supersedes")
    with pytest.raises(ValueError):
        link(thread, relation_type, source=source, target=target)
    with pytest.raises(ValueError):
        link(memory, relation_type, source=source, target=target)
    assert relation_ids(memory) == [first]
    assert status_of(memory, "new") == VALID
    assert status_of(memory, "old") == INVALID


def test_a_relation_id_already_taken_raises_value_error(thread, memory, pair):
    thread.add_memory("third", memory_id="third")
    link(thread, "supports", relation_id="taken")
    with pytest.raises(ValueError):
        link(thread, "supersedes", source="third", target="old", relation_id="taken")
    assert relation_ids(memory) == ["taken"]
    assert status_of(memory, "old") == VALID


def test_thread_link_records_with_an_endpoint_of_another_thread_raises_value_error(thread, other_thread, memory, pair):
    other_thread.add_memory("elsewhere", memory_id="elsewhere")
    with pytest.raises(ValueError):
        thread.link_records("new", "memory", "elsewhere", "memory", "supports")
    with pytest.raises(ValueError):
        thread.link_records("elsewhere", "memory", "old", "memory", "supersedes")
    with pytest.raises(ValueError):
        other_thread.link_records("elsewhere", "memory", "old", "memory", "supersedes")
    assert relation_ids(memory) == []
    assert status_of(memory, "old") == VALID


def test_thread_link_records_refuses_a_memory_of_no_thread(thread, memory, pair):
    memory.add_memory("unthreaded", memory_id="loose", user_id="u1")
    with pytest.raises(ValueError):
        thread.link_records("loose", "memory", "old", "memory", "supports")
    assert relation_ids(memory) == []


def test_client_link_records_may_link_memories_of_different_threads(memory, thread, other_thread, pair):
    other_thread.add_memory("elsewhere", memory_id="elsewhere")
    relation_id = memory.link_records("elsewhere", "memory", "old", "memory", "supersedes")
    assert memory.get_relation(relation_id).source_record_id == "elsewhere"
    assert status_of(memory, "old") == INVALID


def test_delete_record_link_with_an_id_and_tuple_fields_raises_value_error(thread, memory, pair):
    relation_id = link(thread, "supports")
    with pytest.raises(ValueError):
        thread.delete_record_link(source_record_id="new", relation_id=relation_id)
    with pytest.raises(ValueError):
        memory.delete_record_link("new", "memory", "old", "memory", "supports", relation_id=relation_id)
    assert relation_ids(memory) == [relation_id]


@pytest.mark.parametrize("left_out", range(5))
def test_delete_record_link_with_an_incomplete_tuple_raises_value_error(thread, memory, pair, left_out):
    relation_id = link(thread, "supports")
    fields = dict(
        source_record_id="new",
        source_record_type="memory",
        target_record_id="old",
        target_record_type="memory",
        relation_type="supports",
    )
    del fields[list(fields)[left_out]]
    with pytest.raises(ValueError):
        thread.delete_record_link(**fields)
    with pytest.raises(ValueError):
        memory.delete_record_link(**fields)
    assert relation_ids(memory) == [relation_id]


def test_delete_record_link_with_no_selector_raises_value_error(thread, memory, pair):
    link(thread, "supports")
    with pytest.raises(ValueError):
        thread.delete_record_link()
    with pytest.raises(ValueError):
        memory.delete_record_link()


def test_update_record_link_with_nothing_to_change_raises_value_error(thread, memory, pair):
    relation_id = link(thread, "supersedes")
    with pytest.raises(ValueError):
        thread.update_record_link(relation_id)
    with pytest.raises(ValueError):
        memory.update_record_link(relation_id)
    assert memory.get_relation(relation_id).relation_type == "supersedes"


@pytest.fixture
def foreign_relation(memory, other_thread, thread):
    """A supersedes link between two memories of thread t2, and one between t1 and t2."""
    other_thread.add_memory("foreign new", memory_id="f-new")
    other_thread.add_memory("foreign old", memory_id="f-old")
    thread.add_memory("mine", memory_id="mine")
    memory.link_records("mine", "memory", "f-new", "memory", "supports", relation_id="mixed")
    return other_thread.link_records("f-new", "memory", "f-old", "memory", "supersedes", relation_id="foreign")


@pytest.mark.parametrize("relation_id", ["foreign", "mixed"])
def test_thread_update_record_link_of_another_threads_relation_returns_zero(
    memory, thread, foreign_relation, relation_id
):
    before = memory.get_relation(relation_id)
    assert thread.update_record_link(relation_id, relation_type="contradicts") == 0
    assert thread.update_record_link(relation_id, metadata={"x": 1}) == 0
    assert thread.update_record_link(relation_id, timestamp=None) == 0
    assert memory.get_relation(relation_id) == before
    assert status_of(memory, "f-old") == INVALID


def test_thread_update_record_link_of_another_threads_relation_returns_zero_for_an_opposite_label_only(
    memory, thread, other_thread
):
    other_thread.add_memory("foreign source", memory_id="f-source")
    other_thread.add_memory("foreign target", memory_id="f-target")
    other_thread.link_records("f-source", "memory", "f-target", "memory", "mentions", relation_id="custom")
    before = memory.get_relation("custom")
    assert thread.update_record_link("custom", opposite_relation_type="mentioned_by") == 0
    assert memory.get_relation("custom") == before
    # The owner may make the same change: the arguments themselves are fine.
    assert other_thread.update_record_link("custom", opposite_relation_type="mentioned_by") == 1
    assert memory.get_relation("custom").opposite_relation_type == "mentioned_by"


@pytest.mark.parametrize("relation_id", ["foreign", "mixed"])
def test_thread_delete_record_link_of_another_threads_relation_returns_zero(
    memory, thread, foreign_relation, relation_id
):
    assert thread.delete_record_link(relation_id=relation_id) == 0
    assert relation_id in relation_ids(memory)


def test_thread_delete_record_link_by_another_threads_tuple_returns_zero(memory, thread, foreign_relation):
    assert thread.delete_record_link("f-new", "memory", "f-old", "memory", "supersedes") == 0
    assert "foreign" in relation_ids(memory)
    assert status_of(memory, "f-old") == INVALID


def test_the_owning_thread_can_update_and_delete_its_relation(memory, other_thread, foreign_relation):
    assert other_thread.update_record_link("foreign", relation_type="supports") == 1
    assert status_of(memory, "f-old") == VALID
    assert other_thread.delete_record_link(relation_id="foreign") == 1


@pytest.mark.parametrize(
    "change",
    [
        {"relation_type": "supports"},
        {"relation_type": "mentions"},
        {"opposite_relation_type": "mentioned_by"},
        {"timestamp": None},
        {"timestamp": "2024-01-01T00:00:00Z"},
        {"metadata": {"a": 1}},
    ],
    ids=lambda change: next(iter(change)) + "=" + repr(next(iter(change.values()))),
)
def test_update_record_link_of_an_unknown_relation_returns_zero(memory, thread, change):
    assert memory.update_record_link("no-such-relation", **change) == 0
    assert thread.update_record_link("no-such-relation", **change) == 0


def test_delete_record_link_of_an_unknown_relation_returns_zero(memory, thread, pair):
    assert memory.delete_record_link(relation_id="no-such-relation") == 0
    assert thread.delete_record_link(relation_id="no-such-relation") == 0
    assert memory.delete_record_link("new", "memory", "old", "memory", "supports") == 0


def test_client_get_relation_of_an_unknown_id_raises_key_error(memory):
    with pytest.raises(KeyError):
        memory.get_relation("no-such-relation")


# --- add_memory with a link (§4.3.2, §4.5.2) -----------------------------------------------


def test_thread_add_memory_with_a_link_returns_the_new_id_and_links_new_to_target(thread, memory):
    thread.add_memory("The user prefers green tea.", memory_id="old")
    new_id = thread.add_memory(
        "The user now prefers oolong tea.",
        memory_id="new",
        memory_id_to_link="old",
        link_type="supersedes",
        link_id="rel-1",
        link_timestamp="2024-05-01T12:00:00+02:00",
        link_metadata={"source": "manual"},
    )
    assert new_id == "new"
    relation = memory.get_relation("rel-1")
    assert (relation.source_record_id, relation.source_record_type) == ("new", "memory")
    assert (relation.target_record_id, relation.target_record_type) == ("old", "memory")
    assert (relation.relation_type, relation.opposite_relation_type) == ("supersedes", "is_superseded_by")
    assert parse_utc(relation.timestamp) == parse_utc("2024-05-01T10:00:00+00:00")
    assert relation.metadata == {"source": "manual"}
    assert status_of(memory, "old") == INVALID
    assert status_of(memory, "new") == VALID


def test_add_memory_with_a_link_generates_ids_when_none_are_given(thread, memory):
    thread.add_memory("The user prefers green tea.", memory_id="old")
    new_id = thread.add_memory(
        "green tea, with honey", memory_type="fact", memory_id_to_link="old", link_type="refines"
    )
    assert isinstance(new_id, str) and new_id
    [relation] = memory.list_relations(record_id="old")
    assert (relation.source_record_id, relation.source_record_type) == (new_id, "fact")
    assert relation.relation_type == "refines"
    assert relation.timestamp is None and relation.metadata is None
    assert status_of(memory, "old") == INVALID


def test_thread_add_memory_with_a_link_inherits_the_targets_scope(thread, memory):
    thread.add_memory("shared with a colleague", memory_id="old", user_id="u9", agent_id="a9")
    new_id = thread.add_memory("colleague now agrees", memory_id_to_link="old", link_type="supports")
    record = memory.get_memory(new_id)
    assert (record.user_id, record.agent_id, record.thread_id) == ("u9", "a9", "t1")


def test_thread_add_memory_with_a_link_keeps_explicit_scope_values(thread, memory):
    thread.add_memory("shared with a colleague", memory_id="old", user_id="u9", agent_id="a9")
    new_id = thread.add_memory("mine", user_id="u1", memory_id_to_link="old", link_type="supports")
    record = memory.get_memory(new_id)
    assert (record.user_id, record.agent_id, record.thread_id) == ("u1", "a9", "t1")


def test_client_add_memory_with_a_link_inherits_the_targets_user_agent_and_thread(memory, thread):
    thread.add_memory("The user prefers green tea.", memory_id="old")
    new_id = memory.add_memory("The user now prefers oolong tea.", memory_id_to_link="old", link_type="supersedes")
    record = memory.get_memory(new_id)
    assert (record.user_id, record.agent_id, record.thread_id) == ("u1", "a1", "t1")
    [relation] = memory.list_relations()
    assert (relation.source_record_id, relation.target_record_id) == (new_id, "old")
    assert status_of(memory, "old") == INVALID


def test_client_add_memory_without_a_link_stays_unscoped(memory, thread):
    # The control for the test above: without a link the client does not take a thread's scope.
    thread.add_memory("The user prefers green tea.", memory_id="old")
    record = memory.get_memory(memory.add_memory("free-standing", user_id="u1"))
    assert (record.agent_id, record.thread_id) == (None, None)


@pytest.mark.parametrize("given", ["memory_id_to_link", "link_type"])
def test_add_memory_with_only_one_of_the_link_pair_raises_value_error_and_stores_nothing(memory, thread, given):
    thread.add_memory("The user prefers green tea.", memory_id="old")
    pair_args = {"memory_id_to_link": "old", "link_type": "supersedes"}
    args = {given: pair_args[given]}
    with pytest.raises(ValueError):
        thread.add_memory("half a link", memory_id="half-thread", **args)
    with pytest.raises(ValueError):
        memory.add_memory("half a link", memory_id="half-client", user_id="u1", **args)
    for memory_id in ("half-thread", "half-client"):
        with pytest.raises(KeyError):
            memory.get_memory(memory_id)
    assert relation_ids(memory) == []
    assert status_of(memory, "old") == VALID


def test_add_memory_linking_a_missing_target_raises_value_error_and_stores_nothing(memory, thread):
    with pytest.raises(ValueError):
        thread.add_memory("orphan", memory_id="orphan-thread", memory_id_to_link="ghost", link_type="supports")
    with pytest.raises(ValueError):
        memory.add_memory("orphan", memory_id="orphan-client", memory_id_to_link="ghost", link_type="supports")
    for memory_id in ("orphan-thread", "orphan-client"):
        with pytest.raises(KeyError):
            memory.get_memory(memory_id)
    assert memory.list_memories() == []


def test_thread_add_memory_linking_another_threads_memory_raises_value_error_and_stores_nothing(
    memory, thread, other_thread
):
    other_thread.add_memory("elsewhere", memory_id="elsewhere")
    with pytest.raises(ValueError):
        thread.add_memory("crossing", memory_id="crossing", memory_id_to_link="elsewhere", link_type="supersedes")
    with pytest.raises(KeyError):
        memory.get_memory("crossing")
    assert relation_ids(memory) == []
    assert status_of(memory, "elsewhere") == VALID


def test_add_memory_whose_link_cannot_be_stored_stores_no_memory(memory, thread):
    thread.add_memory("first", memory_id="first")
    thread.add_memory("second", memory_id="second")
    thread.link_records("first", "memory", "second", "memory", "supports", relation_id="taken")
    with pytest.raises(ValueError):
        thread.add_memory("third", memory_id="third", memory_id_to_link="second", link_type="refines", link_id="taken")
    with pytest.raises(KeyError):
        memory.get_memory("third")
    assert relation_ids(memory) == ["taken"]
    assert status_of(memory, "second") == VALID


def test_add_memory_with_a_bad_link_type_stores_nothing(memory, thread):
    thread.add_memory("first", memory_id="first")
    with pytest.raises(ValueError):
        thread.add_memory("typed wrongly", memory_id="bad", memory_id_to_link="first", link_type="")
    with pytest.raises(KeyError):
        memory.get_memory("bad")


# --- async twins ------------------------------------------------------------------------------


def test_thread_link_methods_have_async_twins(thread, memory, pair):
    async def scenario():
        relation_id = await thread.link_records_async("new", "memory", "old", "memory", "supersedes")
        invalid_after_link = status_of(memory, "old")
        updated = await thread.update_record_link_async(relation_id, relation_type="supports")
        valid_after_retype = status_of(memory, "old")
        await thread.update_record_link_async(relation_id, relation_type="refines")
        deleted = await thread.delete_record_link_async("new", "memory", "old", "memory", "refines")
        return relation_id, invalid_after_link, updated, valid_after_retype, deleted

    relation_id, invalid_after_link, updated, valid_after_retype, deleted = asyncio.run(scenario())
    assert isinstance(relation_id, str) and relation_id
    assert (invalid_after_link, updated, valid_after_retype, deleted) == (INVALID, 1, VALID, 1)
    assert status_of(memory, "old") == VALID
    assert relation_ids(memory) == []


def test_client_link_methods_have_async_twins(memory, pair):
    async def scenario():
        relation_id = await memory.link_records_async("new", "memory", "old", "memory", "duplicates", relation_id="r")
        updated = await memory.update_record_link_async("r", metadata={"checked": True})
        deleted = await memory.delete_record_link_async(relation_id="r")
        return relation_id, updated, deleted

    assert asyncio.run(scenario()) == ("r", 1, 1)
    assert status_of(memory, "old") == VALID


def test_thread_add_memory_async_accepts_a_link(thread, memory, pair):
    new_id = asyncio.run(thread.add_memory_async("newest", memory_id_to_link="new", link_type="supersedes"))
    [relation] = memory.list_relations(record_id=new_id)
    assert (relation.source_record_id, relation.target_record_id) == (new_id, "new")
    assert status_of(memory, "new") == INVALID


# --- listing relations -----------------------------------------------------------------------


@pytest.fixture
def web(memory, thread, other_thread):
    """Relations r1..r5, created in that order, across users, agents and threads.

    a (t1) → b (t1) r1; c (t2) → b (t1) r2; d (u2, no thread) → c (t2) r3; e (u2) → d (u2) r4;
    f (u1, agent a2, no thread) → a (t1) r5.
    """
    thread.add_memory("a", memory_id="a")
    thread.add_memory("b", memory_id="b")
    other_thread.add_memory("c", memory_id="c")
    memory.add_memory("d", memory_id="d", user_id="u2")
    memory.add_memory("e", memory_id="e", user_id="u2")
    memory.add_memory("f", memory_id="f", user_id="u1", agent_id="a2")
    for relation_id, source, target in [
        ("r1", "a", "b"),
        ("r2", "c", "b"),
        ("r3", "d", "c"),
        ("r4", "e", "d"),
        ("r5", "f", "a"),
    ]:
        memory.link_records(source, "memory", target, "memory", "supports", relation_id=relation_id)


def test_list_relations_lists_every_relation_in_creation_order(memory, web):
    page = memory.list_relations()
    assert [relation.id for relation in page] == ["r1", "r2", "r3", "r4", "r5"]
    assert all(isinstance(relation, RecordRelation) for relation in page)
    assert page.next_cursor is None


@pytest.mark.parametrize(
    ("record_id", "expected"),
    [("a", ["r1", "r5"]), ("b", ["r1", "r2"]), ("c", ["r2", "r3"]), ("e", ["r4"]), ("nobody", [])],
)
def test_list_relations_by_record_id_matches_either_end(memory, web, record_id, expected):
    assert relation_ids(memory, record_id=record_id) == expected


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        ({"thread_id": "t1"}, ["r1", "r2", "r5"]),
        ({"thread_id": "t2"}, ["r2", "r3"]),
        ({"thread_id": None}, ["r3", "r4", "r5"]),
        ({"user_id": "u2"}, ["r3", "r4"]),
        ({"user_id": "u1"}, ["r1", "r2", "r3", "r5"]),
        ({"agent_id": "a2"}, ["r5"]),
        ({"agent_id": None}, ["r3", "r4"]),
        ({"user_id": "u1", "thread_id": None}, ["r5"]),
        ({"user_id": "u3"}, []),
    ],
    ids=repr,
)
def test_list_relations_by_scope_keeps_relations_with_either_end_in_scope(memory, web, scope, expected):
    assert relation_ids(memory, **scope) == expected


def test_list_relations_combines_record_id_and_scope(memory, web):
    assert relation_ids(memory, record_id="c", thread_id="t1") == ["r2"]
    assert relation_ids(memory, record_id="d", user_id="u1") == ["r3"]


def test_list_relations_pages_with_a_cursor(memory, web):
    first = memory.list_relations(limit=2)
    assert [relation.id for relation in first] == ["r1", "r2"]
    assert first.next_cursor is not None
    second = memory.list_relations(limit=2, cursor=first.next_cursor)
    assert [relation.id for relation in second] == ["r3", "r4"]
    third = memory.list_relations(limit=2, cursor=second.next_cursor)
    assert [relation.id for relation in third] == ["r5"]
    assert third.next_cursor is None


def test_list_relations_cursor_pages_stay_stable_while_relations_change(memory, web):
    first = memory.list_relations(limit=2)
    memory.delete_record_link(relation_id="r3")
    memory.link_records("a", "memory", "e", "memory", "contradicts", relation_id="r6")
    rest = memory.list_relations(limit=10, cursor=first.next_cursor)
    assert [relation.id for relation in rest] == ["r4", "r5", "r6"]


def test_list_relations_pages_a_filtered_listing(memory, web):
    first = memory.list_relations(user_id="u1", limit=3)
    assert [relation.id for relation in first] == ["r1", "r2", "r3"]
    second = memory.list_relations(user_id="u1", limit=3, cursor=first.next_cursor)
    assert [relation.id for relation in second] == ["r5"]
    assert second.next_cursor is None


def test_list_relations_by_relation_types_keeps_links_of_those_types(memory, web):
    memory.update_record_link("r2", relation_type="contradicts")
    memory.update_record_link("r4", relation_type="cites", opposite_relation_type="is_cited_by")
    assert relation_ids(memory, relation_types="contradicts") == ["r2"]
    assert relation_ids(memory, relation_types=["cites", "contradicts"]) == ["r2", "r4"]
    assert relation_ids(memory, relation_types="supports", user_id="u2") == ["r3"]
    first = memory.list_relations(relation_types="supports", limit=2)
    assert [relation.id for relation in first] == ["r1", "r3"]
    rest = memory.list_relations(relation_types="supports", limit=2, cursor=first.next_cursor)
    assert [relation.id for relation in rest] == ["r5"] and rest.next_cursor is None


@pytest.mark.parametrize("bad", [[], 7, ["supports", ""], "x" * 600])
def test_list_relations_refuses_a_bad_relation_types_filter(memory, web, bad):
    with pytest.raises(ValueError, match="relation_types"):
        memory.list_relations(relation_types=bad)


def test_list_relations_exact_limit_ends_without_a_cursor(memory, web):
    page = memory.list_relations(limit=5)
    assert len(page) == 5 and page.next_cursor is None


def test_list_relations_returns_relations_equal_to_get_relation(memory, web):
    for relation in memory.list_relations():
        assert memory.get_relation(relation.id) == relation


@pytest.mark.parametrize(
    "bad_option", [{"link_timestamp": "not a time"}, {"link_metadata": "not a dict"}, {"link_id": 7}], ids=repr
)
def test_add_memory_with_a_bad_link_option_raises_value_error_and_stores_nothing(memory, thread, bad_option):
    thread.add_memory("first", memory_id="first")
    with pytest.raises(ValueError):
        thread.add_memory("second", memory_id="second", memory_id_to_link="first", link_type="supersedes", **bad_option)
    with pytest.raises(KeyError):
        memory.get_memory("second")
    assert relation_ids(memory) == []
    assert status_of(memory, "first") == VALID


def test_add_memory_whose_id_is_taken_leaves_the_existing_memory_alone(memory, thread):
    thread.add_memory("first", memory_id="first")
    thread.add_memory("second", memory_id="second")
    with pytest.raises(ValueError):
        thread.add_memory("again", memory_id="second", memory_id_to_link="first", link_type="supersedes")
    assert memory.get_memory("second").content == "second"
    assert relation_ids(memory) == []
    assert status_of(memory, "first") == VALID


# --- the store's relation batch and a second connection ---------------------------------------


def relation_spec(source: str, target: str, relation_type: str = "supersedes", **extra) -> dict:
    return {
        "source_record_id": source,
        "source_record_type": "memory",
        "target_record_id": target,
        "target_record_type": "memory",
        "relation_type": relation_type,
        **extra,
    }


def test_store_add_relations_stores_a_whole_batch_or_nothing(memory, thread, pair):
    thread.add_memory("third", memory_id="third")
    with pytest.raises(ValueError):
        memory.store.add_relations([relation_spec("new", "old"), relation_spec("third", "third")])
    with pytest.raises(ValueError):
        memory.store.add_relations([relation_spec("new", "old"), relation_spec("old", "new", "supports")])
    assert relation_ids(memory) == []
    assert status_of(memory, "old") == VALID
    ids = memory.store.add_relations([relation_spec("new", "old", id="x1"), relation_spec("third", "new", id="x2")])
    assert ids == ["x1", "x2"]
    assert (status_of(memory, "old"), status_of(memory, "new"), status_of(memory, "third")) == (INVALID, INVALID, VALID)


def test_a_second_connection_sees_status_changes_made_through_links(store_factory):
    first = AgentMemory(store_factory("shared"))
    second = AgentMemory(store_factory("shared"))
    first.add_memory("note about green tea", memory_id="old", user_id="u1")
    first.add_memory("note about oolong tea", memory_id="new", user_id="u1")

    def visible(client) -> set[str]:
        return {r.id for r in client.search("note about tea", user_id="u1", include_invalid_results=False)}

    assert visible(second) == {"old", "new"}
    relation_id = first.link_records("new", "memory", "old", "memory", "supersedes")
    assert visible(second) == {"new"}
    assert status_of(second, "old") == INVALID
    second.update_record_link(relation_id, relation_type="supports")
    assert visible(first) == {"old", "new"}
    second.update_record_link(relation_id, relation_type="duplicates")
    first.delete_memory("new")
    assert visible(second) == {"old"}
    assert second.list_relations() == []
