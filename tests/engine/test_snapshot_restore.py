"""Snapshot → delete → restore (the dashboard's undo), and the snapshot's JSON form, on every backend.

After a restore every row is what it was, field by field, except its version (snapshot version
+ 1, so an edit form opened before the delete is refused); searches find it again, and the
lifecycle statuses are as before.
"""

from __future__ import annotations

import base64
import dataclasses
import json

import pytest

from memory.engine import (
    RecordStatus,
    Snapshot,
    StaleVersionError,
    TimeToLiveAnchor,
    record_from_json,
    record_to_json,
    relation_from_json,
    relation_to_json,
    thread_from_json,
    thread_to_json,
)

from .test_images import JPEG, PNG

EXPIRED = {"timestamp": "2000-01-01T00:00:00Z", "ttl_days": 1, "ttl_anchor": TimeToLiveAnchor.TIMESTAMP}


@pytest.fixture
def world(memory):
    """Two users' threads with messages (one with image parts), memories linked both ways (a
    lifecycle link each way), a standalone image, profiles, an expired memory."""
    t1 = memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1", metadata={"topic": "bread"})
    memory.store.save_thread_summary("t1", "they talked about bread", ["bread", "ovens"])
    t1.add_messages(
        [
            {"role": "user", "content": "my sourdough starter smells of acetone", "id": "msg-1", "metadata": {"n": 1}},
            {
                "role": "photographer",
                "id": "msg-2",
                "timestamp": "2024-05-01T10:00:00Z",
                "content": [
                    {"type": "text", "text": "look at the crumb"},
                    {"type": "image", "bytes": PNG, "id": "img-p1", "description": "a crumb shot"},
                    {"type": "image", "bytes": JPEG, "id": "img-p2"},
                ],
            },
        ]
    )
    t1.add_memory("feeds the starter twice a day", memory_type="fact", memory_id="m-old")
    t1.add_memory(
        "feeds the starter once a day now",
        memory_type="fact",
        memory_id="m-mid",
        memory_id_to_link="m-old",
        link_type="supersedes",
        link_id="rel-in",
        link_metadata={"why": "changed"},
        timestamp="2024-05-02T08:00:00Z",
    )
    t1.add_memory("bakes on sundays", memory_type="preference", memory_id="m-new", metadata={"tags": ["a"]})
    memory.link_records("m-new", "preference", "m-mid", "fact", "refines", relation_id="rel-out")
    memory.link_records("m-old", "fact", "m-new", "preference", "mentions", relation_id="rel-custom")
    memory.store.update("fact", "m-mid", index_text="starter feeding schedule")
    t1.add_memory("an old expired note", memory_id="m-expired", **EXPIRED)
    t2 = memory.create_thread(thread_id="t2", user_id="u2", agent_id="a2")
    t2.add_messages([{"role": "user", "content": "plan a trip to Lisbon", "id": "msg-t2"}])
    t2.add_memory("wants a quiet hotel in Lisbon", memory_id="m-t2")
    memory.add_image(PNG, description="a standalone oven photo", image_id="img-free", user_id="u1", agent_id="a1")
    memory.add_user("u1", "Ana, a baker")
    memory.add_agent("a1", "Kitchen assistant")
    return memory


def rows(snapshot: Snapshot) -> dict:
    """Every row of a snapshot as JSON, by kind and id, versions apart."""
    document = snapshot.to_json()
    out = {}
    for kind in ("threads", "records", "relations"):
        for item in document[kind]:
            item = dict(item)
            item.pop("version")
            out[(kind, item.get("record_type"), item["id"])] = item
    return out


def versions(snapshot: Snapshot) -> dict:
    return {
        (kind, item.get("record_type"), item["id"]): item["version"]
        for kind in ("threads", "records", "relations")
        for item in snapshot.to_json()[kind]
    }


def statuses(memory) -> dict[str, RecordStatus]:
    return {record.id: record.status for record in memory.list_memories(limit=None)}


CASES = {
    "memory": ({"record_ids": [("fact", "m-mid")]}, lambda m: m.delete_memory("m-mid")),
    "message": ({"record_ids": [("message", "msg-2")]}, lambda m: m.get_thread("t1").delete_message("msg-2")),
    "thread": ({"thread_id": "t1"}, lambda m: m.delete_thread("t1")),
    "user": ({"user_id": "u1"}, lambda m: m.delete_user("u1", cascade=True)),
    "agent": ({"agent_id": "a1"}, lambda m: m.delete_agent("a1", cascade=True)),
    "image": ({"record_ids": [("image", "img-free")]}, lambda m: m.delete_image("img-free")),
}


@pytest.mark.parametrize("case", list(CASES))
def test_snapshot_delete_restore_gives_back_every_row(world, case):
    arguments, delete = CASES[case]
    before_statuses = statuses(world)
    before = world.snapshot(**arguments)
    assert before.records  # the case holds something
    assert delete(world) >= 1
    assert world.snapshot(**arguments).records == []
    report = world.restore(before)
    after = world.snapshot(**arguments)
    assert rows(after) == rows(before)
    assert versions(after) == {key: version + 1 for key, version in versions(before).items()}
    assert after.stored == before.stored
    assert report.skipped == []
    assert report.restored["records"] == len(before.records)
    assert report.restored["relations"] == len(before.relations)
    assert report.restored["threads"] == len(before.threads)
    assert statuses(world) == before_statuses
    for record in before.records:
        if not record.content or record.expires_at:
            continue
        found = world.store.search(record.content, k=20, record_types=[record.record_type])
        assert record.id in [hit.id for hit, _ in found], record.id


def test_what_each_snapshot_holds(world):
    memory_snapshot = world.snapshot(record_ids=[("fact", "m-mid")])
    assert [r.id for r in memory_snapshot.records] == ["m-mid"]
    assert {r.id for r in memory_snapshot.relations} == {"rel-in", "rel-out"}  # both directions
    message = world.snapshot(record_ids=[("message", "msg-2")])
    assert [r.id for r in message.records] == ["msg-2", "img-p1", "img-p2"]
    assert message.records[1].bytes == PNG and message.records[2].bytes == JPEG
    assert message.records[0].role == "photographer" and message.records[0].seq_no == 1
    thread = world.snapshot(thread_id="t1")
    [t1] = thread.threads
    assert (t1.summary, t1.topics, t1.metadata) == ("they talked about bread", ["bread", "ovens"], {"topic": "bread"})
    assert "m-expired" in [r.id for r in thread.records]  # expired records too
    assert thread.stored[("fact", "m-mid")]["index_text"] == "starter feeding schedule"
    assert thread.stored[("fact", "m-old")]["status"] is RecordStatus.VALID  # invalid only by its link
    user = world.snapshot(user_id="u1")
    assert {r.id for r in user.records} >= {"u1", "img-free", "msg-1"} and "a1" not in {r.id for r in user.records}
    agent = world.snapshot(agent_id="a2")
    assert [t.id for t in agent.threads] == ["t2"] and {r.id for r in agent.records} == {"msg-t2", "m-t2"}
    assert world.snapshot(record_ids=[("memory", "m-mid")]).records == []  # m-mid is a fact
    everything = world.snapshot()
    assert {t.id for t in everything.threads} == {"t1", "t2"} and len(everything.relations) == 3


def test_an_edit_read_before_the_delete_is_refused_after_the_restore(world):
    read = world.get_memory("m-new")
    undo = world.snapshot(record_ids=[("preference", "m-new")])
    world.delete_memory("m-new")
    world.restore(undo)
    with pytest.raises(StaleVersionError):
        world.update_memory("m-new", content="edited in a stale form", expected_version=read.version)
    world.update_memory("m-new", content="edited after reloading", expected_version=read.version + 1)


def test_a_restored_thread_numbers_new_messages_after_its_old_ones(world):
    undo = world.snapshot(thread_id="t1")
    world.delete_thread("t1")
    world.restore(undo)
    thread = world.get_thread("t1")
    [new_id] = thread.add_messages([{"role": "user", "content": "back again"}])
    assert world.store.get("message", new_id).seq_no == 2


def test_a_taken_id_refuses_the_whole_restore_unless_skip_existing(world, store):
    undo = world.snapshot(thread_id="t1")
    world.delete_thread("t1")
    world.add_memory("squatter", user_id="u9", memory_id="m-mid")  # takes a restored id
    before = world.stats()
    with pytest.raises(ValueError, match="'m-mid' already exists"):
        world.restore(undo)
    assert world.stats() == before and store.get_thread("t1") is None
    report = world.restore(undo, skip_existing=True)
    assert ("record", "m-mid", "exists") in report.skipped
    skipped_links = {(kind, relation_id) for kind, relation_id, _ in report.skipped if kind == "relation"}
    assert skipped_links == {("relation", "rel-in"), ("relation", "rel-out")}  # their end is another memory now
    assert world.get_memory("m-mid").content == "squatter"
    assert world.get_relation("rel-custom").source_record_id == "m-old"
    assert report.restored["threads"] == 1


def test_a_relation_whose_end_is_gone_is_skipped_and_reported(world):
    undo = world.snapshot(record_ids=[("fact", "m-mid")])
    world.delete_memory("m-mid")
    world.delete_memory("m-new")  # the far end of rel-out
    report = world.restore(undo)
    assert report.skipped == [("relation", "rel-out", "no memory 'm-new' to link")]
    assert report.restored == {"threads": 0, "records": 1, "relations": 1}
    assert world.get_memory("m-old").status is RecordStatus.INVALID  # superseded again by m-mid


def test_the_json_form_round_trips(world):
    snapshot = world.snapshot()
    document = snapshot.to_json()
    assert json.loads(json.dumps(document)) == document  # plain JSON types
    assert document["format"] == 1
    assert Snapshot.from_json(document) == snapshot
    image = next(item for item in document["records"] if item["id"] == "img-p1")
    assert base64.b64decode(image["bytes"]) == PNG
    for record in snapshot.records:
        assert record_from_json(record_to_json(record)) == record
    for thread in snapshot.threads:
        assert thread_from_json(thread_to_json(thread)) == thread
    for relation in snapshot.relations:
        assert relation_from_json(relation_to_json(relation)) == relation


def _document(world) -> dict:
    return world.snapshot(record_ids=[("message", "msg-2")]).to_json()


MALFORMED = [
    (lambda d: d.pop("format"), "snapshot lacks format"),
    (lambda d: d.update(format=2), "format must be 1"),
    (lambda d: d.update(records={}), "snapshot.records must be a list"),
    (lambda d: d.update(extra=1), "unknown keys"),
    (lambda d: d["records"][0].update(record_type="nope"), r"records\[0\].record_type"),
    (lambda d: d["records"][0].pop("id"), r"records\[0\] lacks id"),
    (lambda d: d["records"][0].update(version=0), r"records\[0\].version"),
    (lambda d: d["records"][0].update(status="gone"), r"records\[0\].status"),
    (lambda d: d["records"][0].update(created_at="yesterday"), r"records\[0\].created_at"),
    (lambda d: d["records"][0].update(metadata=[1]), r"records\[0\].metadata"),
    (lambda d: d["records"][0].update(seq_no="1"), r"records\[0\].seq_no"),
    (lambda d: d["records"][0]["stored"].update(status="x"), r"records\[0\].stored.status"),
    (lambda d: d["records"][1].update(bytes="%%%"), r"records\[1\].bytes is not valid base64"),
    (lambda d: d["records"][1].update(mime_type="image/gif"), r"records\[1\].mime_type"),
    (lambda d: d["records"][1].update(colour="red"), r"records\[1\] has unknown keys \['colour'\]"),
    (lambda d: d.update(relations=[{"id": "r"}]), r"relations\[0\] lacks"),
    (lambda d: d.update(threads=[{"id": "t", "settings": []}]), r"threads\[0\].settings"),
]


@pytest.mark.parametrize(("damage", "message"), MALFORMED, ids=[message for _, message in MALFORMED])
def test_a_malformed_document_is_a_value_error_naming_what_is_wrong(world, damage, message):
    document = _document(world)
    damage(document)
    with pytest.raises(ValueError, match=message):
        Snapshot.from_json(document)


@pytest.mark.parametrize("bad", [None, "snapshot", 5, [], {"format": 1}])
def test_a_document_that_is_no_object_is_refused(bad):
    with pytest.raises(ValueError, match="snapshot"):
        Snapshot.from_json(bad)


def test_a_bad_snapshot_is_refused_before_anything_is_written(world, store):
    before = world.stats()
    snapshot = world.snapshot(record_ids=[("fact", "m-mid")])
    world.delete_memory("m-mid")
    after_delete = world.stats()
    twice = dataclasses.replace(snapshot, records=snapshot.records * 2)
    with pytest.raises(ValueError, match="twice"):
        world.restore(twice)
    too_long = dataclasses.replace(snapshot, records=[dataclasses.replace(snapshot.records[0], id="x" * 600)])
    with pytest.raises(ValueError, match="512"):
        world.restore(too_long)
    for bad in (None, {"format": 1}, snapshot.to_json()):
        with pytest.raises(ValueError, match="Snapshot"):
            world.restore(bad)
    with pytest.raises(ValueError, match="skip_existing"):
        world.restore(snapshot, skip_existing="yes")
    assert world.stats() == after_delete != before


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"record_ids": "m-mid"}, "record_ids"),
        ({"record_ids": [("fact",)]}, "record_ids"),
        ({"record_ids": [("thread", "t1")]}, "record_ids"),
        ({"record_ids": [("fact", "")]}, "record_ids"),
        ({"record_ids": [("fact", "m-mid")], "thread_id": "t1"}, "not both"),
        ({"thread_id": "t1", "user_id": "u1"}, "at most one"),
        ({"user_id": ""}, "user_id"),
    ],
)
def test_bad_snapshot_arguments_are_value_errors(world, arguments, message):
    with pytest.raises(ValueError, match=message):
        world.snapshot(**arguments)
