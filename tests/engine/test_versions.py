"""Record versions (optimistic concurrency) and the message edits that came with them, on every backend.

A record, thread or relation starts at version 1 and moves by one whenever its stored row
changes; `expected_version` turns an update into a compare-and-set that writes nothing when the
version moved meanwhile (StaleVersionError, a ValueError naming the record and both versions).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.engine import StaleVersionError
from memory.engine.types import RecordStatus

from .test_images import PNG


def one_row_of_each_kind(memory, thread) -> tuple[str, str, str, str]:
    """A message, two memories linked, an image and user u1's profile, in thread t1: (message,
    memory, image, link) ids."""
    [message_id] = thread.add_messages([{"role": "user", "content": "hello"}])
    memory_id = thread.add_memory("likes tea")
    other = thread.add_memory("likes coffee")
    image_id = thread.add_image(PNG, description="a cup")
    relation_id = thread.link_records(memory_id, "memory", other, "memory", "supports")
    memory.add_user("u1", "Ada")
    return message_id, memory_id, image_id, relation_id


def test_every_kind_of_row_starts_at_version_1(memory, thread, store):
    message_id, memory_id, image_id, relation_id = one_row_of_each_kind(memory, thread)
    assert store.get("message", message_id).version == 1
    assert memory.get_memory(memory_id).version == 1
    assert store.get("image", image_id).version == 1
    assert memory.get_user("u1").version == 1
    assert memory.get_relation(relation_id).version == 1
    assert store.get_thread("t1").version == 1


def test_an_update_moves_the_version_by_one_and_a_stale_one_writes_nothing(memory):
    memory_id = memory.add_memory("likes tea", user_id="u1")
    memory.update_memory(memory_id, content="likes green tea", expected_version=1)
    assert memory.get_memory(memory_id).version == 2
    with pytest.raises(StaleVersionError, match=rf"memory '{memory_id}' is at version 2, not 1") as stale:
        memory.update_memory(memory_id, content="likes black tea", expected_version=1)
    assert isinstance(stale.value, ValueError) and (stale.value.expected, stale.value.actual) == (1, 2)
    record = memory.get_memory(memory_id)
    assert (record.content, record.version) == ("likes green tea", 2)
    memory.update_memory(memory_id, status=RecordStatus.INVALID)  # without expected_version: no check
    assert memory.get_memory(memory_id).version == 3


@pytest.mark.parametrize("bad", [-1, True, "1", 1.0, 2**64])
def test_a_bad_expected_version_is_a_value_error_naming_it(memory, bad):
    memory_id = memory.add_memory("likes tea", user_id="u1")
    with pytest.raises(ValueError, match="expected_version"):
        memory.update_memory(memory_id, content="x", expected_version=bad)
    assert memory.get_memory(memory_id).content == "likes tea"


def test_the_lifecycle_link_count_moves_the_target_version(memory):
    old = memory.add_memory("lives in Lisbon", user_id="u1")
    new = memory.add_memory("lives in Porto", user_id="u1")
    support = memory.add_memory("has a Porto library card", user_id="u1")
    memory.link_records(support, "memory", new, "memory", "supports")  # not a lifecycle link
    assert memory.get_memory(new).version == 1
    relation_id = memory.link_records(new, "memory", old, "memory", "supersedes")
    assert (memory.get_memory(old).status, memory.get_memory(old).version) == (RecordStatus.INVALID, 2)
    assert memory.get_memory(new).version == 1  # the source's row did not change
    memory.update_record_link(relation_id, metadata={"why": "moved"})  # the count stays 1
    assert memory.get_memory(old).version == 2
    memory.delete_record_link(relation_id=relation_id)
    assert (memory.get_memory(old).status, memory.get_memory(old).version) == (RecordStatus.VALID, 3)


def test_a_relation_moves_on_update_and_refuses_a_stale_update(memory):
    a = memory.add_memory("a", user_id="u1")
    b = memory.add_memory("b", user_id="u1")
    relation_id = memory.link_records(a, "memory", b, "memory", "supports")
    assert memory.update_record_link(relation_id, metadata={"n": 1}, expected_version=1) == 1
    assert memory.get_relation(relation_id).version == 2
    with pytest.raises(StaleVersionError, match=f"relation '{relation_id}' is at version 2, not 1"):
        memory.update_record_link(relation_id, relation_type="supersedes", expected_version=1)
    relation = memory.get_relation(relation_id)
    assert (relation.relation_type, relation.metadata) == ("supports", {"n": 1})
    assert memory.get_memory(b).version == 1  # the refused retype did not recount it


def test_a_thread_moves_on_metadata_and_summary_but_not_on_messages_or_extraction_progress(memory, thread, store):
    thread.add_messages([{"role": "user", "content": "hi"}])
    store.save_thread_state("t1", "extraction", {"extracted_through": 0})
    assert store.get_thread("t1").version == 1
    memory.update_thread("t1", metadata={"topic": "tea"}, expected_version=1)
    assert store.get_thread("t1").version == 2
    store.save_thread_summary("t1", "they talked about tea", ["tea"])
    assert store.get_thread("t1").version == 3
    with pytest.raises(StaleVersionError, match="thread 't1' is at version 3, not 2"):
        memory.update_thread("t1", metadata={"topic": "coffee"}, expected_version=2)
    assert store.get_thread("t1").metadata == {"topic": "tea"}
    assert store.update_thread("nope", metadata={}, expected_version=1) == 0


def test_a_thread_summary_written_with_expected_version_is_a_compare_and_set(thread, store):
    assert store.save_thread_summary("t1", "they talked about tea", ["tea"], expected_version=1) == 1
    assert store.get_thread("t1").version == 2
    with pytest.raises(StaleVersionError, match="thread 't1' is at version 2, not 1"):
        store.save_thread_summary("t1", "they talked about coffee", None, expected_version=1)
    assert (store.get_thread("t1").summary, store.get_thread("t1").topics) == ("they talked about tea", ["tea"])
    assert store.save_thread_summary("nope", "x", expected_version=1) == 0


def test_a_profile_moves_when_replaced_and_must_exist_for_expected_version(memory):
    memory.add_user("u1", "Ada")
    memory.add_user("u1", "Ada Lovelace", expected_version=1)
    profile = memory.get_user("u1")
    assert (profile.content, profile.version) == ("Ada Lovelace", 2)
    with pytest.raises(StaleVersionError, match="user_profile 'u1' is at version 2, not 1"):
        memory.add_user("u1", "Ada L.", expected_version=1)
    with pytest.raises(StaleVersionError, match="agent_profile 'a9' no longer exists"):
        memory.add_agent("a9", "a new agent", expected_version=1)
    with pytest.raises(KeyError):
        memory.get_agent("a9")
    assert memory.get_user("u1").content == "Ada Lovelace"


def test_version_0_writes_a_profile_only_where_there_is_none(memory):
    """Two people writing the first profile of the same user: the second is refused, not lost."""
    memory.add_user("u2", "Grace", expected_version=0)
    assert memory.get_user("u2").version == 1
    with pytest.raises(StaleVersionError, match="user_profile 'u2' is at version 1, not 0"):
        memory.add_user("u2", "Grace Hopper", expected_version=0)
    assert memory.get_user("u2").content == "Grace"


def test_version_0_never_matches_a_stored_record(memory):
    memory_id = memory.add_memory("likes tea", user_id="u1")
    with pytest.raises(StaleVersionError, match="is at version 1, not 0"):
        memory.update_memory(memory_id, content="x", expected_version=0)
    assert memory.get_memory(memory_id).content == "likes tea"


def test_get_user_and_get_agent_read_the_stored_profile(memory):
    memory.add_agent("a1", "Kitchen assistant")
    assert memory.get_agent("a1").content == "Kitchen assistant"
    with pytest.raises(KeyError):
        memory.get_user("nobody")
    with pytest.raises(ValueError, match="user_id"):
        memory.get_user("")


def test_listed_owners_without_a_profile_are_at_version_0(memory):
    memory.add_memory("x", user_id="u-no-profile")
    memory.add_user("u-profile", "has one")
    versions = {user.id: user.version for user in memory.list_users()}
    assert versions == {"u-no-profile": 0, "u-profile": 1}


def test_searches_carry_the_current_version_of_records_and_relations(memory, store):
    old = memory.add_memory("the oven bakes sourdough bread", user_id="u1")
    new = memory.add_memory("the oven bakes rye bread now", user_id="u1")
    memory.search("oven bread", user_id="u1")  # an index (where there is one) loads before the edits
    relation_id = memory.link_records(new, "memory", old, "memory", "refines")
    memory.update_memory(new, metadata={"edited": True})
    memory.update_record_link(relation_id, metadata={"n": 1})
    hits = {hit.id: hit for hit in memory.search("oven bread", user_id="u1", num_hops=1)}
    assert hits[new].record.version == 2 and hits[old].record.version == 2
    [(relation, _)] = hits[new].record.linked_results
    assert relation.version == 2


def test_message_role_timestamp_and_expiry_edits(thread, store):
    [message_id] = thread.add_messages(
        [{"role": "user", "content": [{"type": "text", "text": "see"}, {"type": "image", "bytes": PNG, "id": "img-m"}]}]
    )
    thread.update_message(message_id, role="assistant", timestamp="2024-05-01T12:00:00+02:00", expected_version=1)
    record = store.get("message", message_id)
    assert (record.role, record.timestamp, record.version) == ("assistant", "2024-05-01T10:00:00.000000+00:00", 2)
    later = datetime(2999, 1, 1, tzinfo=UTC)
    thread.update_message(message_id, expires_at=later)
    assert store.get("message", message_id).expires_at == "2999-01-01T00:00:00.000000+00:00"
    image = store.get("image", "img-m")
    assert (image.expires_at, image.version) == ("2999-01-01T00:00:00.000000+00:00", 2)
    thread.update_message(message_id, expires_at=None)
    assert store.get("message", message_id).expires_at is None and store.get("image", "img-m").expires_at is None
    thread.update_message(message_id, expires_at="2000-01-01T00:00:00Z")  # in the past: expired at once
    assert store.get("message", message_id) is None and store.get("image", "img-m") is None
    assert store.list("message", include_expired=True, record_id=message_id)[0].role == "assistant"


def test_message_edits_refuse_bad_values_before_writing(thread, memory, store):
    [message_id] = thread.add_messages([{"role": "user", "content": "hi"}])
    for kwargs, name in [
        ({"role": ""}, "role"),
        ({"role": 5}, "role"),
        ({"role": "x" * 513}, "role"),
        ({"expires_at": "soon"}, "expires_at"),
        ({"expires_at": "2999-01-01", "ttl_days": 3}, "expires_at"),
        ({"timestamp": "yesterday"}, "timestamp"),
    ]:
        with pytest.raises(ValueError, match=name):
            thread.update_message(message_id, **kwargs)
    record = store.get("message", message_id)
    assert (record.role, record.version) == ("user", 1)
    memory_id = memory.add_memory("a memory", user_id="u1")
    with pytest.raises(ValueError, match="role is for messages only"):
        store.update("memory", memory_id, role="user")


def test_a_stale_message_edit_keeps_content_and_images(thread, store):
    [message_id] = thread.add_messages(
        [
            {
                "role": "user",
                "content": [{"type": "text", "text": "see"}, {"type": "image", "bytes": PNG, "id": "img-keep"}],
            }
        ]
    )
    thread.update_message(message_id, metadata={"n": 1})
    with pytest.raises(StaleVersionError):
        thread.update_message(message_id, content="replaced, no image", expected_version=1)
    assert store.get("message", message_id).content == "see" and store.get("image", "img-keep") is not None


def test_update_memory_takes_an_absolute_expiry(memory):
    memory_id = memory.add_memory("temporary", user_id="u1", ttl_days=3)
    memory.update_memory(memory_id, expires_at=None)
    assert memory.get_memory(memory_id).expires_at is None
    with pytest.raises(ValueError, match="expires_at"):
        memory.update_memory(memory_id, expires_at="2999-01-01", ttl_days=3)


def test_image_edits_take_expected_version(memory, thread):
    image_id = memory.add_image(PNG, description="a cup", user_id="u1")
    memory.update_image(image_id, description="a blue cup", expected_version=1)
    with pytest.raises(StaleVersionError):
        memory.update_image(image_id, description="a red cup", expected_version=1)
    own = thread.add_image(PNG, description="a plate")
    thread.update_image(own, metadata={"n": 1}, expected_version=1)
    with pytest.raises(StaleVersionError):
        thread.update_image(own, metadata={"n": 2}, expected_version=1)
    assert memory.list_images(image_id=image_id)[0].content == "a blue cup"


def test_thread_memory_and_link_edits_take_expected_version(thread):
    a = thread.add_memory("a")
    b = thread.add_memory("b")
    relation_id = thread.link_records(a, "memory", b, "memory", "supports")
    thread.update_memory(a, content="a2", expected_version=1)
    with pytest.raises(StaleVersionError):
        thread.update_memory(a, content="a3", expected_version=1)
    assert thread.update_record_link(relation_id, metadata={"n": 1}, expected_version=1) == 1
    with pytest.raises(StaleVersionError):
        thread.update_record_link(relation_id, metadata={"n": 2}, expected_version=1)


CLAIMED = {"claimed": True}


def same_values_again(memory, thread, store) -> dict:
    """For each kind of row: a write of values that its row already holds (written once before,
    without expected_version, so that the row is at version 2), taking expected_version."""
    message_id, memory_id, image_id, relation_id = one_row_of_each_kind(memory, thread)
    writes = {
        "memory": lambda **version: memory.update_memory(memory_id, metadata=CLAIMED, **version),
        "message": lambda **version: thread.update_message(message_id, metadata=CLAIMED, **version),
        "image": lambda **version: memory.update_image(image_id, metadata=CLAIMED, **version),
        "thread": lambda **version: memory.update_thread("t1", metadata=CLAIMED, **version),
        "summary": lambda **version: thread.set_summary("tea", ["tea"], **version),
        "link": lambda **version: memory.update_record_link(relation_id, metadata=CLAIMED, **version),
        "profile": lambda **version: memory.add_user("u1", "Ada, claimed", **version),
    }
    versions = {
        "memory": lambda: memory.get_memory(memory_id).version,
        "message": lambda: store.get("message", message_id).version,
        "image": lambda: store.get("image", image_id).version,
        "thread": lambda: store.get_thread("t1").version,
        "summary": lambda: store.get_thread("t1").version,
        "link": lambda: memory.get_relation(relation_id).version,
        "profile": lambda: memory.get_user("u1").version,
    }
    return {kind: (writes[kind], versions[kind]) for kind in writes}


@pytest.mark.parametrize("kind", ["memory", "message", "image", "thread", "summary", "link", "profile"])
def test_a_stale_update_is_refused_even_when_its_values_are_already_stored(memory, thread, store, kind):
    """Writers that read version 1 and send the same values: once the first has written them, the
    others change nothing, and must still be refused, or each is told its write was the one made."""
    write, version = same_values_again(memory, thread, store)[kind]
    write()
    assert version() == 2
    with pytest.raises(StaleVersionError, match="is at version 2, not 1"):
        write(expected_version=1)
    assert version() == 2


def deletes_of_each_kind(memory, thread, store) -> dict:
    """For each kind of row that can be deleted alone: its delete (taking expected_version), a
    write that moves its version without deleting it, and whether it is still there."""
    message_id, memory_id, image_id, relation_id = one_row_of_each_kind(memory, thread)
    own = thread.add_memory("likes cake")
    own_image = thread.add_image(PNG, description="a plate")
    a, b = thread.add_memory("a"), thread.add_memory("b")
    own_link = thread.link_records(a, "memory", b, "memory", "supports")
    return {
        "memory": (
            lambda **v: memory.delete_memory(memory_id, **v),
            lambda: memory.update_memory(memory_id, metadata=CLAIMED),
            lambda: store.get("memory", memory_id) is not None,
        ),
        "thread memory": (
            lambda **v: thread.delete_memory(own, **v),
            lambda: thread.update_memory(own, metadata=CLAIMED),
            lambda: store.get("memory", own) is not None,
        ),
        "message": (
            lambda **v: thread.delete_message(message_id, **v),
            lambda: thread.update_message(message_id, metadata=CLAIMED),
            lambda: store.get("message", message_id) is not None,
        ),
        "image": (
            lambda **v: memory.delete_image(image_id, **v),
            lambda: memory.update_image(image_id, metadata=CLAIMED),
            lambda: store.get("image", image_id) is not None,
        ),
        "thread image": (
            lambda **v: thread.delete_image(own_image, **v),
            lambda: thread.update_image(own_image, metadata=CLAIMED),
            lambda: store.get("image", own_image) is not None,
        ),
        "link": (
            lambda **v: memory.delete_record_link(relation_id=relation_id, **v),
            lambda: memory.update_record_link(relation_id, metadata=CLAIMED),
            lambda: store.get_relation(relation_id) is not None,
        ),
        "thread link": (
            lambda **v: thread.delete_record_link(relation_id=own_link, **v),
            lambda: thread.update_record_link(own_link, metadata=CLAIMED),
            lambda: store.get_relation(own_link) is not None,
        ),
        "thread": (
            lambda **v: memory.delete_thread("t1", **v),
            lambda: memory.update_thread("t1", metadata=CLAIMED),
            lambda: store.get_thread("t1") is not None,
        ),
    }


DELETABLE = ["memory", "thread memory", "message", "image", "thread image", "link", "thread link", "thread"]


@pytest.mark.parametrize("kind", DELETABLE)
def test_a_stale_delete_is_refused_and_deletes_nothing(memory, thread, store, kind):
    """A delete made against the version read is refused when another writer changed the row
    since: the change it would delete unseen stays (issue 25, for deletes)."""
    delete, change, exists = deletes_of_each_kind(memory, thread, store)[kind]
    change()
    with pytest.raises(StaleVersionError, match="is at version 2, not 1"):
        delete(expected_version=1)
    assert exists()
    assert delete(expected_version=2) == 1
    assert not exists()


@pytest.mark.parametrize("kind", DELETABLE)
def test_a_delete_at_the_current_version_deletes_and_a_gone_record_is_0(memory, thread, store, kind):
    delete, _, exists = deletes_of_each_kind(memory, thread, store)[kind]
    assert delete(expected_version=1) == 1
    assert not exists()
    assert delete(expected_version=1) == 0  # gone: 0, as without a version, not a stale version


@pytest.mark.parametrize("bad", [-1, True, "1", 1.0, 2**64])
def test_a_bad_expected_version_of_a_delete_is_a_value_error_naming_it(memory, bad):
    memory_id = memory.add_memory("likes tea", user_id="u1")
    with pytest.raises(ValueError, match="expected_version"):
        memory.delete_memory(memory_id, expected_version=bad)
    with pytest.raises(ValueError, match="expected_version"):
        memory.delete_memory("no-such-memory", expected_version=bad)
    assert memory.get_memory(memory_id).content == "likes tea"


def test_a_memory_retyped_since_it_was_read_is_stale_not_gone(memory, store):
    memory_id = memory.add_memory("likes tea", user_id="u1")
    assert memory.get_memory(memory_id).record_type == "memory"
    memory.update_memory(memory_id, memory_type="preference")
    with pytest.raises(StaleVersionError, match="is at version 2, not 1"):
        store.delete("memory", memory_id, expected_version=1)  # as read before the retype
    assert memory.get_memory(memory_id).record_type == "preference"


def test_a_link_deleted_by_its_tuple_takes_expected_version(memory):
    a = memory.add_memory("a", user_id="u1")
    b = memory.add_memory("b", user_id="u1")
    relation_id = memory.link_records(a, "memory", b, "memory", "supports")
    memory.update_record_link(relation_id, metadata={"n": 1})
    tuple_of_it = {
        "source_record_id": a,
        "source_record_type": "memory",
        "target_record_id": b,
        "target_record_type": "memory",
        "relation_type": "supports",
    }
    with pytest.raises(StaleVersionError, match=f"relation '{relation_id}' is at version 2, not 1"):
        memory.delete_record_link(**tuple_of_it, expected_version=1)
    assert memory.delete_record_link(**tuple_of_it, expected_version=2) == 1


def test_a_thread_s_version_is_its_own_so_a_delete_at_it_takes_messages_added_since(memory, thread, store):
    """The thread's version moves with its metadata and summary, not with its records: a delete
    at the version read also takes messages added meanwhile (they do not move it)."""
    thread.add_messages([{"role": "user", "content": "added after the read"}])
    assert store.get_thread("t1").version == 1
    assert memory.delete_thread("t1", expected_version=1) == 1
    assert store.list("message", limit=None, thread_id="t1") == []
