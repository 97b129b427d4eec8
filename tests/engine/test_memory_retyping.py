"""A memory can change type and scope in place (the dashboard's memory editor), on every backend:
its id, links and history stay, and every read and search sees it under its new type and owners."""

from __future__ import annotations

import pytest

from memory.engine.types import RecordStatus


def test_a_memory_changes_type_and_its_links_follow(memory, store):
    kept = memory.add_memory("Ana likes tea.", memory_type="fact", user_id="u1", autonomous_linking=False)
    newer = memory.add_memory("Ana likes green tea.", memory_type="fact", user_id="u1", autonomous_linking=False)
    relation_id = memory.link_records(newer, "fact", kept, "fact", "supersedes")

    memory.update_memory(newer, memory_type="preference")

    record = memory.get_memory(newer)
    assert (record.record_type, record.version) == ("preference", 2)
    assert store.get("fact", newer) is None
    relation = memory.get_relation(relation_id)
    assert (relation.source_record_type, relation.target_record_type) == ("preference", "fact")
    assert memory.get_memory(kept).status == RecordStatus.INVALID  # the link still retires it
    assert [m.id for m in memory.list_memories(memory_types=["preference"])] == [newer]
    hits = memory.search("green tea", user_id="u1", record_types=["preference"])
    assert [hit.record.id for hit in hits] == [newer]
    assert memory.delete_record_link(newer, "preference", kept, "fact", "supersedes") == 1


def test_a_memory_moves_to_another_user_and_out_of_an_agents_scope(memory):
    memory_id = memory.add_memory(
        "Likes jazz.", memory_type="fact", user_id="u1", agent_id="a1", autonomous_linking=False
    )

    memory.update_memory(memory_id, user_id="u2", agent_id=None)

    record = memory.get_memory(memory_id)
    assert (record.user_id, record.agent_id) == ("u2", None)
    assert not memory.search("jazz", user_id="u1")
    assert [hit.record.id for hit in memory.search("jazz", user_id="u2")] == [memory_id]
    assert [m.id for m in memory.list_memories(agent_id=None)] == [memory_id]
    assert memory.stats(user_id="u2").records["fact"]["valid"] == 1


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"memory_type": "message"}, "record_type must be one of"),
        ({"memory_type": 5}, "record_type must be one of"),
        ({"user_id": 5}, "user_id"),
        ({"agent_id": ""}, "agent_id"),
    ],
)
def test_bad_types_and_owners_are_refused_and_change_nothing(memory, changes, message):
    memory_id = memory.add_memory("Likes jazz.", memory_type="fact", user_id="u1", autonomous_linking=False)

    with pytest.raises(ValueError, match=message):
        memory.update_memory(memory_id, **changes)

    record = memory.get_memory(memory_id)
    assert (record.record_type, record.user_id, record.version) == ("fact", "u1", 1)


def test_only_memories_change_type_or_owner(store, thread):
    [message_id] = thread.add_messages([{"role": "user", "content": "hello"}])

    for changes in ({"memory_type": "fact"}, {"user_id": "u9"}):
        with pytest.raises(ValueError, match="change memories only"):
            store.update("message", message_id, **changes)
    assert store.get("message", message_id).user_id == "u1"
