"""Thread memory API: add_memory, update_memory, delete_memory (API_SPEC §1.3 to §1.5, §4.3.2, §4.3.7, §4.3.12).

Memories are read back through the client (`memory.get_memory`), since a thread handle has no getter.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory.engine import AgentMemory, MemoryRetentionConfig, RecordStatus, ScopedRecord, TimeToLiveAnchor

from .helpers import parse_utc

PAST = "2000-01-01T00:00:00Z"
TIMESTAMP = TimeToLiveAnchor.TIMESTAMP


def assert_close_to_now(value: str) -> None:
    assert abs(datetime.now(UTC) - parse_utc(value)) < timedelta(minutes=1), value


def lifetime(record) -> timedelta:
    return parse_utc(record.expires_at) - parse_utc(record.created_at)


def add_expired_memory(thread, content: str = "already expired") -> str:
    """A memory whose lifetime, counted from an event time long past, ended before it was stored."""
    return thread.add_memory(content, timestamp=PAST, ttl_days=1, ttl_anchor=TIMESTAMP)


# --- add_memory ----------------------------------------------------------------------------


def test_add_memory_defaults_to_a_valid_memory_in_the_threads_scope(thread, memory):
    memory_id = thread.add_memory("The user likes green tea.")
    record = memory.get_memory(memory_id)
    assert isinstance(record, ScopedRecord)
    assert record.id == memory_id
    assert record.content == "The user likes green tea."
    assert record.record_type == "memory"
    assert record.status == RecordStatus.VALID
    assert (record.user_id, record.agent_id, record.thread_id) == ("u1", "a1", "t1")


def test_add_memory_generates_distinct_ids_when_none_is_given(thread):
    first, second = thread.add_memory("one"), thread.add_memory("two")
    assert isinstance(first, str) and first and first != second


@pytest.mark.parametrize("memory_type", ["memory", "fact", "guideline", "preference"])
def test_add_memory_stores_each_memory_like_type(thread, memory, memory_type):
    memory_id = thread.add_memory(f"a {memory_type}", memory_type=memory_type)
    assert memory.get_memory(memory_id).record_type == memory_type


@pytest.mark.parametrize("memory_type", ["note", "message", "image", "", "FACT"])
def test_add_memory_with_an_unknown_memory_type_raises_value_error(thread, memory, memory_type):
    with pytest.raises(ValueError):
        thread.add_memory("typed wrongly", memory_type=memory_type, memory_id="bad-type")
    with pytest.raises(KeyError):
        memory.get_memory("bad-type")


def test_add_memory_stores_metadata_and_an_initial_status(thread, memory):
    memory_id = thread.add_memory("tagged", metadata={"source": "crm", "tags": ["a"]}, status=RecordStatus.INVALID)
    record = memory.get_memory(memory_id)
    assert record.metadata == {"source": "crm", "tags": ["a"]}
    assert record.status == RecordStatus.INVALID


def test_add_memory_scope_arguments_override_the_threads_scope(thread, memory):
    memory_id = thread.add_memory("elsewhere", user_id="u9", agent_id="a9", thread_id="t9")
    record = memory.get_memory(memory_id)
    assert (record.user_id, record.agent_id, record.thread_id) == ("u9", "a9", "t9")


def test_add_memory_explicit_none_scope_stores_an_unscoped_dimension(thread, memory):
    memory_id = thread.add_memory("not tied to a thread", thread_id=None)
    record = memory.get_memory(memory_id)
    assert (record.user_id, record.agent_id, record.thread_id) == ("u1", "a1", None)


def test_add_memory_overriding_one_dimension_still_inherits_the_others(thread, memory):
    record = memory.get_memory(thread.add_memory("other agent", agent_id="a2"))
    assert (record.user_id, record.agent_id, record.thread_id) == ("u1", "a2", "t1")


# --- timestamps ----------------------------------------------------------------------------


def test_add_memory_without_timestamp_reads_back_the_creation_time(thread, memory):
    record = memory.get_memory(thread.add_memory("untimed"))
    assert record.timestamp is not None
    assert_close_to_now(record.timestamp)


def test_add_memory_with_timestamp_none_reads_back_the_creation_time(thread, memory):
    record = memory.get_memory(thread.add_memory("untimed", timestamp=None))
    assert_close_to_now(record.timestamp)


@pytest.mark.parametrize(
    "given",
    ["2024-05-01T12:00:00", "2024-05-01T12:00:00Z", "2024-05-01T14:00:00+02:00", "2024-05-01T07:00:00-05:00"],
)
def test_add_memory_timestamp_reads_back_as_normalised_utc(thread, memory, given):
    record = memory.get_memory(thread.add_memory("timed", timestamp=given))
    assert parse_utc(record.timestamp) == datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def test_add_memory_with_an_unparsable_timestamp_raises_value_error(thread):
    with pytest.raises(ValueError):
        thread.add_memory("badly timed", timestamp="yesterday at noon")


def test_update_memory_timestamp_replaces_the_event_time(thread, memory):
    memory_id = thread.add_memory("timed", timestamp="2024-05-01T12:00:00Z")
    thread.update_memory(memory_id, timestamp="2025-02-03T04:05:06")
    assert parse_utc(memory.get_memory(memory_id).timestamp) == datetime(2025, 2, 3, 4, 5, 6, tzinfo=UTC)


def test_update_memory_timestamp_none_falls_back_to_the_creation_time(thread, memory):
    memory_id = thread.add_memory("timed", timestamp="2020-01-01T00:00:00Z")
    thread.update_memory(memory_id, timestamp=None)
    assert_close_to_now(memory.get_memory(memory_id).timestamp)


def test_update_memory_without_timestamp_keeps_the_event_time(thread, memory):
    memory_id = thread.add_memory("timed", timestamp="2020-01-01T00:00:00Z")
    thread.update_memory(memory_id, content="retimed? no")
    assert parse_utc(memory.get_memory(memory_id).timestamp) == datetime(2020, 1, 1, tzinfo=UTC)


# --- update_memory -------------------------------------------------------------------------


def test_update_memory_replaces_content_and_returns_the_id(thread, memory):
    memory_id = thread.add_memory("Original", metadata={"k": 1})
    assert thread.update_memory(memory_id, content="Updated") == memory_id
    record = memory.get_memory(memory_id)
    assert record.content == "Updated"
    assert record.metadata == {"k": 1}


def test_update_memory_replaces_metadata_without_merging(thread, memory):
    memory_id = thread.add_memory("Original", metadata={"a": 1, "nested": {"x": 1}})
    thread.update_memory(memory_id, metadata={"nested": {"y": 2}})
    record = memory.get_memory(memory_id)
    assert record.metadata == {"nested": {"y": 2}}
    assert record.content == "Original"


def test_update_memory_metadata_none_clears_it(thread, memory):
    memory_id = thread.add_memory("Original", metadata={"a": 1})
    thread.update_memory(memory_id, metadata=None)
    assert not memory.get_memory(memory_id).metadata


def test_update_memory_status_replaces_it_and_omitting_it_keeps_it(thread, memory):
    memory_id = thread.add_memory("Original")
    thread.update_memory(memory_id, status=RecordStatus.INVALID)
    assert memory.get_memory(memory_id).status == RecordStatus.INVALID
    thread.update_memory(memory_id, content="Still invalid")
    assert memory.get_memory(memory_id).status == RecordStatus.INVALID
    thread.update_memory(memory_id, status=RecordStatus.VALID)
    assert memory.get_memory(memory_id).status == RecordStatus.VALID


def test_update_memory_keeps_type_and_scope(thread, memory):
    memory_id = thread.add_memory("A fact", memory_type="fact")
    thread.update_memory(memory_id, content="A changed fact")
    record = memory.get_memory(memory_id)
    assert (record.record_type, record.user_id, record.agent_id, record.thread_id) == ("fact", "u1", "a1", "t1")


def test_update_memory_of_an_unknown_id_raises_key_error(thread):
    with pytest.raises(KeyError):
        thread.update_memory("no-such-memory", content="x")


def test_update_memory_of_a_message_id_raises_key_error(thread):
    [message_id] = thread.add_messages([{"role": "user", "content": "a message, not a memory"}])
    with pytest.raises(KeyError):
        thread.update_memory(message_id, content="x")
    assert thread.get_message(message_id).content == "a message, not a memory"


def test_update_memory_with_an_unknown_keyword_raises_type_error(thread, memory):
    memory_id = thread.add_memory("Original")
    with pytest.raises(TypeError):
        thread.update_memory(memory_id, colour="red")
    assert memory.get_memory(memory_id).content == "Original"


# --- delete_memory -------------------------------------------------------------------------


def test_delete_memory_returns_one_then_zero_and_the_memory_is_gone(thread, memory):
    memory_id = thread.add_memory("Forget me")
    keep_id = thread.add_memory("Keep me")
    assert thread.delete_memory(memory_id) == 1
    assert thread.delete_memory(memory_id) == 0
    with pytest.raises(KeyError):
        memory.get_memory(memory_id)
    assert memory.get_memory(keep_id).content == "Keep me"


def test_delete_memory_of_a_message_id_returns_zero_and_keeps_the_message(thread):
    [message_id] = thread.add_messages([{"role": "user", "content": "a message, not a memory"}])
    assert thread.delete_memory(message_id) == 0
    assert thread.get_message(message_id).content == "a message, not a memory"


# --- ownership (§2.8, §4.4) ----------------------------------------------------------------


def test_a_memory_of_another_thread_cannot_be_updated_through_this_thread(thread, other_thread, memory):
    memory_id = other_thread.add_memory("Theirs", metadata={"owner": "t2"})
    with pytest.raises(KeyError):
        thread.update_memory(memory_id, content="Hijacked", metadata={"owner": "t1"})
    record = memory.get_memory(memory_id)
    assert (record.content, record.metadata) == ("Theirs", {"owner": "t2"})


def test_a_memory_of_another_thread_cannot_be_deleted_through_this_thread(thread, other_thread, memory):
    memory_id = other_thread.add_memory("Theirs")
    assert thread.delete_memory(memory_id) == 0
    assert memory.get_memory(memory_id).content == "Theirs"
    assert other_thread.delete_memory(memory_id) == 1


def test_a_memory_added_with_another_thread_id_is_not_owned_by_this_thread(thread, memory):
    memory_id = thread.add_memory("Filed under t9", thread_id="t9")
    with pytest.raises(KeyError):
        thread.update_memory(memory_id, content="x")
    assert thread.delete_memory(memory_id) == 0
    assert memory.get_memory(memory_id).content == "Filed under t9"


def test_a_thread_less_memory_is_not_owned_by_any_thread(thread, memory):
    memory_id = memory.add_memory("User-wide", user_id="u1", agent_id="a1")
    assert memory.get_memory(memory_id).thread_id is None
    with pytest.raises(KeyError):
        thread.update_memory(memory_id, content="x")
    assert thread.delete_memory(memory_id) == 0


# --- TTL on creation (§1.4) ----------------------------------------------------------------


def test_add_memory_without_ttl_and_without_retention_never_expires(thread, memory):
    assert memory.get_memory(thread.add_memory("forever")).expires_at is None
    assert memory.get_memory(thread.add_memory("forever too", ttl_days=None)).expires_at is None


def test_add_memory_ttl_days_counts_from_creation_by_default(thread, memory):
    record = memory.get_memory(thread.add_memory("five days", ttl_days=5))
    assert abs(lifetime(record) - timedelta(days=5)) < timedelta(seconds=5)


def test_add_memory_ttl_with_timestamp_anchor_counts_from_the_event_time(thread, memory):
    record = memory.get_memory(
        thread.add_memory("dated", timestamp="2030-01-01T00:00:00Z", ttl_days=2, ttl_anchor=TIMESTAMP)
    )
    assert parse_utc(record.expires_at) == datetime(2030, 1, 3, tzinfo=UTC)


def test_add_memory_timestamp_anchor_without_timestamp_raises_value_error(thread, memory):
    with pytest.raises(ValueError):
        thread.add_memory("undated", ttl_days=2, ttl_anchor=TIMESTAMP, memory_id="undated")
    with pytest.raises(KeyError):
        memory.get_memory("undated")


def test_an_expired_memory_is_invisible(thread, memory):
    memory_id = add_expired_memory(thread)
    with pytest.raises(KeyError):
        memory.get_memory(memory_id)


# --- TTL refresh through update_memory (§1.4 refresh table) --------------------------------


def test_update_memory_omitting_ttl_and_anchor_keeps_the_expiry(thread, memory):
    memory_id = thread.add_memory("five days", ttl_days=5)
    before = memory.get_memory(memory_id).expires_at
    thread.update_memory(memory_id, content="still five days", metadata={"x": 1})
    assert memory.get_memory(memory_id).expires_at == before


def test_update_memory_ttl_none_clears_the_expiry(thread, memory):
    memory_id = thread.add_memory("five days", ttl_days=5)
    thread.update_memory(memory_id, ttl_days=None)
    assert memory.get_memory(memory_id).expires_at is None


def test_update_memory_ttl_days_recomputes_the_expiry_from_creation(thread, memory):
    memory_id = thread.add_memory("five days", ttl_days=5)
    thread.update_memory(memory_id, ttl_days=10)
    assert abs(lifetime(memory.get_memory(memory_id)) - timedelta(days=10)) < timedelta(seconds=5)


def test_update_memory_ttl_days_gives_an_expiry_to_a_memory_that_had_none(thread, memory):
    memory_id = thread.add_memory("forever")
    thread.update_memory(memory_id, ttl_days=3)
    assert abs(lifetime(memory.get_memory(memory_id)) - timedelta(days=3)) < timedelta(seconds=5)


def test_update_memory_timestamp_anchor_uses_the_timestamp_given_in_the_same_call(thread, memory):
    memory_id = thread.add_memory("dated", timestamp="2030-01-01T00:00:00Z")
    thread.update_memory(memory_id, timestamp="2031-06-01T00:00:00Z", ttl_days=3, ttl_anchor=TIMESTAMP)
    record = memory.get_memory(memory_id)
    assert parse_utc(record.expires_at) == datetime(2031, 6, 4, tzinfo=UTC)
    assert parse_utc(record.timestamp) == datetime(2031, 6, 1, tzinfo=UTC)


def test_update_memory_timestamp_anchor_falls_back_to_the_stored_timestamp(thread, memory):
    memory_id = thread.add_memory("dated", timestamp="2030-01-01T00:00:00Z")
    thread.update_memory(memory_id, ttl_days=2, ttl_anchor=TIMESTAMP)
    assert parse_utc(memory.get_memory(memory_id).expires_at) == datetime(2030, 1, 3, tzinfo=UTC)


def test_update_memory_timestamp_anchor_without_any_timestamp_raises_value_error(thread, memory):
    memory_id = thread.add_memory("undated", ttl_days=5)
    before = memory.get_memory(memory_id)
    with pytest.raises(ValueError):
        thread.update_memory(memory_id, ttl_days=2, ttl_anchor=TIMESTAMP)
    assert memory.get_memory(memory_id).expires_at == before.expires_at


def test_update_memory_timestamp_anchor_with_a_timestamp_cleared_in_the_same_call_raises_value_error(thread, memory):
    memory_id = thread.add_memory("dated", timestamp="2030-01-01T00:00:00Z")
    with pytest.raises(ValueError):
        thread.update_memory(memory_id, timestamp=None, ttl_days=2, ttl_anchor=TIMESTAMP)


def test_update_memory_anchor_alone_applies_the_schema_default_lifetime(store_factory):
    memory = AgentMemory(store_factory(memory_retention_config=MemoryRetentionConfig(default_ttl_days=7)))
    thread = memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    memory_id = thread.add_memory("dated", timestamp="2030-01-01T00:00:00Z", ttl_days=None)
    assert memory.get_memory(memory_id).expires_at is None
    thread.update_memory(memory_id, ttl_anchor=TIMESTAMP)
    assert parse_utc(memory.get_memory(memory_id).expires_at) == datetime(2030, 1, 8, tzinfo=UTC)


def test_update_memory_ttl_above_the_retention_cap_is_clamped_with_a_warning(store_factory):
    memory = AgentMemory(store_factory(memory_retention_config=MemoryRetentionConfig(max_ttl_days=30)))
    thread = memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    memory_id = thread.add_memory("capped", timestamp="2030-01-01T00:00:00Z", ttl_days=10, ttl_anchor=TIMESTAMP)
    with pytest.warns(UserWarning):
        thread.update_memory(memory_id, ttl_days=100, ttl_anchor=TIMESTAMP)
    assert parse_utc(memory.get_memory(memory_id).expires_at) == datetime(2030, 1, 31, tzinfo=UTC)


def test_update_memory_ttl_none_with_retention_uses_the_retention_cap(store_factory):
    memory = AgentMemory(store_factory(memory_retention_config=MemoryRetentionConfig(max_ttl_days=30)))
    thread = memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    memory_id = thread.add_memory("capped", timestamp="2030-01-01T00:00:00Z", ttl_days=10, ttl_anchor=TIMESTAMP)
    thread.update_memory(memory_id, ttl_days=None, ttl_anchor=TIMESTAMP)
    assert parse_utc(memory.get_memory(memory_id).expires_at) == datetime(2030, 1, 31, tzinfo=UTC)


def test_an_expired_memory_cannot_be_updated_or_refreshed(thread):
    memory_id = add_expired_memory(thread)
    with pytest.raises(KeyError):
        thread.update_memory(memory_id, content="revived?")
    with pytest.raises(KeyError):
        thread.update_memory(memory_id, ttl_days=None)
    with pytest.raises(KeyError):
        thread.update_memory(memory_id, timestamp="2100-01-01T00:00:00Z", ttl_days=1, ttl_anchor=TIMESTAMP)


def test_an_expired_memory_cannot_be_refreshed_through_the_client_either(thread, memory):
    memory_id = add_expired_memory(thread)
    with pytest.raises(KeyError):
        memory.update_memory(memory_id, ttl_days=None)
