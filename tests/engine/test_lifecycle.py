"""AgentMemory.lifecycle: what decides each memory's effective status (D2), for previews of link changes."""

from __future__ import annotations

import pytest

from memory.engine import Lifecycle, RecordStatus, TimeToLiveAnchor

VALID, INVALID = RecordStatus.VALID, RecordStatus.INVALID


@pytest.fixture
def world(memory):
    """old ← supersedes ← new; old ← duplicates ← copy; draft (own status invalid) ← refines ← final;
    new → supports → final; new ↔ contradicts ↔ rival; a custom link."""
    ids = {}
    for name in ("old", "new", "copy", "draft", "final", "rival", "other"):
        ids[name] = memory.add_memory(f"{name} memory", user_id="u1", memory_id=name)
    memory.update_memory("draft", status="invalid")
    memory.link_records("new", "memory", "old", "memory", "supersedes", relation_id="l-supersedes")
    memory.link_records("copy", "memory", "old", "memory", "duplicates", relation_id="l-duplicates")
    memory.link_records("final", "memory", "draft", "memory", "refines", relation_id="l-refines")
    memory.link_records("new", "memory", "final", "memory", "supports", relation_id="l-supports")
    memory.link_records("new", "memory", "rival", "memory", "contradicts", relation_id="l-contradicts")
    memory.link_records("other", "memory", "new", "memory", "inspired", "inspired_by", relation_id="l-custom")
    return memory


def test_each_memory_has_its_own_status_and_the_lifecycle_links_pointing_at_it(world):
    found = world.lifecycle(["old", "new", "copy", "draft", "final", "rival", "other"])
    assert found == {
        "old": Lifecycle(VALID, ("l-supersedes", "l-duplicates")),
        "new": Lifecycle(VALID, ()),
        "copy": Lifecycle(VALID, ()),
        "draft": Lifecycle(INVALID, ("l-refines",)),
        "final": Lifecycle(VALID, ()),
        "rival": Lifecycle(VALID, ()),
        "other": Lifecycle(VALID, ()),
    }
    assert list(found) == ["old", "new", "copy", "draft", "final", "rival", "other"]  # the order asked
    for memory_id, lifecycle in found.items():
        assert lifecycle.status == world.get_memory(memory_id).status


def test_missing_expired_and_other_records_are_left_out(world, thread):
    thread.add_messages([{"role": "user", "content": "hello", "id": "msg-1"}])
    expired = {"timestamp": "2000-01-01T00:00:00Z", "ttl_days": 1, "ttl_anchor": TimeToLiveAnchor.TIMESTAMP}
    world.add_memory("gone", user_id="u1", memory_id="expired", **expired)
    found = world.lifecycle(["new", "missing", "expired", "msg-1", "", "x" * 600, "new"])
    assert found == {"new": Lifecycle(VALID, ())}
    assert world.lifecycle([]) == {}
    assert world.lifecycle(("old",)) == {"old": Lifecycle(VALID, ("l-supersedes", "l-duplicates"))}


def test_it_predicts_what_a_link_change_does(world):
    """Before a link is created, retyped or deleted: which memory becomes invalid or valid again."""
    assert world.lifecycle(["rival"])["rival"].status is VALID
    world.update_record_link("l-contradicts", relation_type="supersedes")
    assert world.lifecycle(["rival"]) == {"rival": Lifecycle(VALID, ("l-contradicts",))}
    assert world.get_memory("rival").status is INVALID
    world.delete_record_link(relation_id="l-supersedes")
    assert world.lifecycle(["old"]) == {"old": Lifecycle(VALID, ("l-duplicates",))}
    world.delete_record_link(relation_id="l-duplicates")
    assert world.get_memory("old").status is VALID
    # draft stays invalid without its refining link: its own flag is set.
    world.delete_record_link(relation_id="l-refines")
    assert world.lifecycle(["draft"]) == {"draft": Lifecycle(INVALID, ())}
    assert world.get_memory("draft").status is INVALID
    world.update_memory("draft", status="valid")
    assert world.lifecycle(["draft"])["draft"].status is VALID


def test_a_deleted_source_takes_its_link_with_it(world):
    world.delete_memory("new")
    assert world.lifecycle(["old"]) == {"old": Lifecycle(VALID, ("l-duplicates",))}


@pytest.mark.parametrize("bad", ["old", b"old", None, 5, [5], ["old", None], [["old"]], {"old": 1}])
def test_bad_ids_are_value_errors(world, bad):
    with pytest.raises(ValueError, match="memory_ids"):
        world.lifecycle(bad)
