"""Thread message API: add_messages, get_message(s), update_message, delete_message (API_SPEC §4.3, §9).

Runs on the conftest `thread` (thread "t1", user "u1", agent "a1"); `other_thread` is a second thread of
the same user and agent in the same store, used for ownership checks (§2.8, §4.4, DECISIONS D3).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory.engine import Message, TextContent, TimeToLiveAnchor

from .helpers import parse_utc

PAST = "2000-01-01T00:00:00Z"


def add_numbered(thread, count: int) -> list[str]:
    return thread.add_messages([{"role": "user", "content": f"message {i:02d}"} for i in range(count)])


def contents(messages) -> list[str]:
    return [m.content for m in messages]


def numbered(indices) -> list[str]:
    return [f"message {i:02d}" for i in indices]


# --- add_messages --------------------------------------------------------------------------


def test_add_messages_accepts_dicts_and_message_objects_and_returns_ids_in_input_order(thread):
    ids = thread.add_messages(
        [
            {"role": "user", "content": "first as a dict"},
            Message(role="assistant", content="second as a Message"),
            {"role": "user", "content": "third as a dict"},
        ]
    )
    assert len(ids) == 3 and len(set(ids)) == 3
    assert [thread.get_message(i).content for i in ids] == ["first as a dict", "second as a Message", "third as a dict"]
    assert [thread.get_message(i).role for i in ids] == ["user", "assistant", "user"]
    assert contents(thread.get_messages()) == ["first as a dict", "second as a Message", "third as a dict"]


def test_add_messages_keeps_caller_supplied_ids_and_generates_the_missing_ones(thread):
    ids = thread.add_messages(
        [
            {"role": "user", "content": "with a dict id", "id": "msg-dict"},
            {"role": "user", "content": "without an id"},
            Message(role="user", content="with a Message id", id="msg-object"),
        ]
    )
    assert ids[0] == "msg-dict" and ids[2] == "msg-object"
    assert ids[1] not in ("msg-dict", "msg-object") and isinstance(ids[1], str) and ids[1]
    assert thread.get_message("msg-dict").id == "msg-dict"
    assert thread.get_message("msg-object").content == "with a Message id"


def test_add_messages_shared_metadata_applies_to_every_message(thread):
    ids = thread.add_messages(
        [{"role": "user", "content": "one"}, {"role": "user", "content": "two"}], metadata={"source": "slack"}
    )
    assert [thread.get_message(i).metadata for i in ids] == [{"source": "slack"}, {"source": "slack"}]


def test_add_messages_metadata_list_gives_one_entry_per_message(thread):
    ids = thread.add_messages(
        [{"role": "user", "content": "one"}, {"role": "user", "content": "two"}], metadata=[{"n": 1}, {"n": 2}]
    )
    assert thread.get_message(ids[0]).metadata == {"n": 1}
    assert thread.get_message(ids[1]).metadata == {"n": 2}


def test_add_messages_metadata_list_entry_none_stores_no_metadata_for_that_message(thread):
    ids = thread.add_messages(
        [{"role": "user", "content": "one"}, {"role": "user", "content": "two"}], metadata=[{"n": 1}, None]
    )
    assert thread.get_message(ids[0]).metadata == {"n": 1}
    assert not thread.get_message(ids[1]).metadata


def test_add_messages_without_metadata_argument_uses_each_messages_embedded_metadata(thread):
    ids = thread.add_messages(
        [
            {"role": "user", "content": "one", "metadata": {"own": "dict"}},
            Message(role="user", content="two", metadata={"own": "object"}),
            {"role": "user", "content": "three"},
        ]
    )
    assert thread.get_message(ids[0]).metadata == {"own": "dict"}
    assert thread.get_message(ids[1]).metadata == {"own": "object"}
    assert not thread.get_message(ids[2]).metadata


def test_add_messages_explicit_metadata_replaces_the_embedded_metadata_instead_of_merging(thread):
    ids = thread.add_messages(
        [
            {"role": "user", "content": "one", "metadata": {"own": 1}},
            Message(role="user", content="two", metadata={"own": 2}),
        ],
        metadata={"shared": True},
    )
    assert [thread.get_message(i).metadata for i in ids] == [{"shared": True}, {"shared": True}]


@pytest.mark.parametrize("metadata", [[{"n": 1}], [{"n": 1}, {"n": 2}, {"n": 3}], []])
def test_add_messages_metadata_list_of_the_wrong_length_raises_value_error_and_stores_nothing(thread, metadata):
    with pytest.raises(ValueError):
        thread.add_messages([{"role": "user", "content": "one"}, {"role": "user", "content": "two"}], metadata=metadata)
    assert thread.get_messages() == []


def test_add_messages_accepts_custom_role_names(thread):
    ids = thread.add_messages([{"role": "tool-runner", "content": "exit code 0"}, Message(role="critic", content="ok")])
    assert [thread.get_message(i).role for i in ids] == ["tool-runner", "critic"]


def test_add_messages_keeps_a_message_timestamp_normalised_to_utc(thread):
    ids = thread.add_messages([{"role": "user", "content": "timed", "timestamp": "2024-05-01T14:00:00+02:00"}])
    assert parse_utc(thread.get_message(ids[0]).timestamp) == datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def test_add_messages_scalar_ttl_applies_to_the_whole_batch(thread):
    ids = thread.add_messages(
        [
            {"role": "user", "content": "old one", "timestamp": PAST},
            {"role": "user", "content": "old two", "timestamp": PAST},
        ],
        ttl_days=1,
        ttl_anchor=TimeToLiveAnchor.TIMESTAMP,
    )
    assert thread.get_messages() == []
    for message_id in ids:
        with pytest.raises(KeyError):
            thread.get_message(message_id)


def test_add_messages_scalar_ttl_days_sets_an_expiry_counted_from_creation(thread, store):
    ids = thread.add_messages([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}], ttl_days=3)
    for message_id in ids:
        record = store.get("message", message_id)
        assert record.expires_at is not None
        lifetime = parse_utc(record.expires_at) - parse_utc(record.created_at)
        assert abs(lifetime - timedelta(days=3)) < timedelta(seconds=5)


def test_add_messages_ttl_days_list_gives_each_message_its_own_lifetime(thread, store):
    ids = thread.add_messages(
        [
            {"role": "user", "content": "expires", "timestamp": PAST},
            {"role": "user", "content": "never expires", "timestamp": PAST},
        ],
        ttl_days=[1, None],
        ttl_anchor=TimeToLiveAnchor.TIMESTAMP,
    )
    assert contents(thread.get_messages()) == ["never expires"]
    with pytest.raises(KeyError):
        thread.get_message(ids[0])
    assert store.get("message", ids[1]).expires_at is None


def test_add_messages_ttl_anchor_list_gives_each_message_its_own_anchor(thread):
    ids = thread.add_messages(
        [
            {"role": "user", "content": "counted from its old timestamp", "timestamp": PAST},
            {"role": "user", "content": "counted from creation", "timestamp": PAST},
        ],
        ttl_days=1,
        ttl_anchor=[TimeToLiveAnchor.TIMESTAMP, TimeToLiveAnchor.CREATED_AT],
    )
    assert contents(thread.get_messages()) == ["counted from creation"]
    assert thread.get_message(ids[1]).content == "counted from creation"


def test_add_messages_ttl_list_of_the_wrong_length_raises_value_error(thread):
    with pytest.raises(ValueError):
        thread.add_messages([{"role": "user", "content": "one"}, {"role": "user", "content": "two"}], ttl_days=[1])


def test_add_messages_timestamp_anchor_without_a_message_timestamp_raises_value_error(thread):
    with pytest.raises(ValueError):
        thread.add_messages(
            [{"role": "user", "content": "no timestamp"}], ttl_days=1, ttl_anchor=TimeToLiveAnchor.TIMESTAMP
        )


# --- Message and content parts -----------------------------------------------------------------


def test_message_with_an_empty_content_sequence_raises_value_error():
    with pytest.raises(ValueError):
        Message(role="user", content=[])


def test_message_stores_list_content_as_an_immutable_tuple():
    parts = [TextContent(text="a"), TextContent(text="b")]
    message = Message(role="user", content=parts)
    assert isinstance(message.content, tuple)
    assert [p.text for p in message.content] == ["a", "b"]


def test_text_content_parts_get_generated_ids_when_omitted():
    first, second = TextContent(text="a"), TextContent(text="b")
    assert isinstance(first.id, str) and first.id and first.id != second.id


def test_text_content_parts_round_trip_through_add_messages_and_get_message(thread):
    parts = [TextContent(text="hello", id="part-1"), TextContent(text="world", id="part-2")]
    [message_id] = thread.add_messages([Message(role="user", content=parts)])
    stored = thread.get_message(message_id)
    assert isinstance(stored.content, tuple)
    assert [type(p) for p in stored.content] == [TextContent, TextContent]
    assert [p.text for p in stored.content] == ["hello", "world"]
    assert [p.id for p in stored.content] == ["part-1", "part-2"]


# --- get_message ---------------------------------------------------------------------------


def test_get_message_returns_the_stored_message(thread):
    [message_id] = thread.add_messages([{"role": "assistant", "content": "Hi there", "metadata": {"k": "v"}}])
    message = thread.get_message(message_id)
    assert isinstance(message, Message)
    assert (message.id, message.role, message.content, message.metadata) == (
        message_id,
        "assistant",
        "Hi there",
        {"k": "v"},
    )


def test_get_message_of_an_unknown_id_raises_key_error(thread):
    with pytest.raises(KeyError):
        thread.get_message("no-such-message")


def test_get_message_of_another_threads_message_raises_key_error(thread, other_thread):
    [message_id] = other_thread.add_messages([{"role": "user", "content": "not yours"}])
    with pytest.raises(KeyError):
        thread.get_message(message_id)
    assert other_thread.get_message(message_id).content == "not yours"


# --- get_messages windows ------------------------------------------------------------------


def test_get_messages_of_an_empty_thread_is_an_empty_list(thread):
    assert thread.get_messages() == []


def test_get_messages_by_default_returns_the_last_50_in_chronological_order(thread):
    add_numbered(thread, 60)
    assert contents(thread.get_messages()) == numbered(range(10, 60))


def test_get_messages_by_default_returns_everything_when_there_are_fewer_than_50(thread):
    add_numbered(thread, 7)
    assert contents(thread.get_messages()) == numbered(range(7))


def test_get_messages_only_returns_this_threads_messages(thread, other_thread):
    thread.add_messages([{"role": "user", "content": "mine"}])
    other_thread.add_messages([{"role": "user", "content": "theirs"}])
    assert contents(thread.get_messages()) == ["mine"]


def test_get_messages_with_start_alone_returns_the_most_recent_window_not_before_start(thread):
    add_numbered(thread, 60)
    assert contents(thread.get_messages(start=5)) == numbered(range(10, 60))
    assert contents(thread.get_messages(start=55)) == numbered(range(55, 60))


def test_get_messages_with_start_and_end_returns_that_slice(thread):
    add_numbered(thread, 60)
    assert contents(thread.get_messages(start=3, end=7)) == numbered(range(3, 7))
    assert contents(thread.get_messages(start=0, end=60)) == numbered(range(60))


@pytest.mark.parametrize("end", [None, -1])
def test_get_messages_with_end_none_or_minus_one_returns_everything_from_start(thread, end):
    add_numbered(thread, 60)
    assert contents(thread.get_messages(start=5, end=end)) == numbered(range(5, 60))
    assert contents(thread.get_messages(start=0, end=end)) == numbered(range(60))


# --- update_message ------------------------------------------------------------------------


def test_update_message_replaces_the_content_and_returns_the_id(thread):
    [message_id] = thread.add_messages([{"role": "user", "content": "Draft"}])
    assert thread.update_message(message_id, content="Final") == message_id
    assert thread.get_message(message_id).content == "Final"


def test_update_message_with_empty_string_stores_empty_content(thread):
    [message_id] = thread.add_messages([{"role": "user", "content": "Draft"}])
    thread.update_message(message_id, content="")
    assert thread.get_message(message_id).content == ""


def test_update_message_replaces_metadata_without_merging(thread):
    [message_id] = thread.add_messages([{"role": "user", "content": "Draft", "metadata": {"a": 1, "b": 2}}])
    thread.update_message(message_id, metadata={"c": 3})
    message = thread.get_message(message_id)
    assert message.metadata == {"c": 3}
    assert message.content == "Draft"


def test_update_message_with_omitted_fields_keeps_them(thread):
    [message_id] = thread.add_messages([{"role": "user", "content": "Draft", "metadata": {"a": 1}}])
    thread.update_message(message_id, content="Final")
    assert thread.get_message(message_id).metadata == {"a": 1}


def test_update_message_never_changes_role_or_timestamp(thread):
    [message_id] = thread.add_messages([{"role": "assistant", "content": "Draft", "timestamp": "2024-01-02T03:04:05Z"}])
    before = thread.get_message(message_id)
    thread.update_message(message_id, content="Final", metadata={"x": 1})
    after = thread.get_message(message_id)
    assert after.role == "assistant"
    assert after.timestamp == before.timestamp
    assert parse_utc(after.timestamp) == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_update_message_keeps_the_message_in_its_chronological_position(thread):
    ids = add_numbered(thread, 3)
    thread.update_message(ids[0], content="edited 00")
    assert contents(thread.get_messages()) == ["edited 00", "message 01", "message 02"]


def test_update_message_of_an_unknown_id_raises_key_error(thread):
    with pytest.raises(KeyError):
        thread.update_message("no-such-message", content="x")


def test_update_message_of_another_threads_message_raises_key_error_and_changes_nothing(thread, other_thread):
    [message_id] = other_thread.add_messages([{"role": "user", "content": "not yours"}])
    with pytest.raises(KeyError):
        thread.update_message(message_id, content="hijacked")
    assert other_thread.get_message(message_id).content == "not yours"


def test_update_message_with_an_unknown_keyword_raises_type_error(thread):
    [message_id] = thread.add_messages([{"role": "user", "content": "Draft"}])
    with pytest.raises(TypeError):
        thread.update_message(message_id, colour="red")
    assert thread.get_message(message_id).content == "Draft"


def test_update_message_ttl_none_clears_the_expiry(thread, store):
    [message_id] = thread.add_messages([{"role": "user", "content": "short lived"}], ttl_days=2)
    assert store.get("message", message_id).expires_at is not None
    thread.update_message(message_id, ttl_days=None)
    assert store.get("message", message_id).expires_at is None


# --- delete_message ------------------------------------------------------------------------


def test_delete_message_returns_one_then_zero_and_the_message_is_gone(thread):
    ids = thread.add_messages([{"role": "user", "content": "keep"}, {"role": "user", "content": "drop"}])
    assert thread.delete_message(ids[1]) == 1
    assert thread.delete_message(ids[1]) == 0
    with pytest.raises(KeyError):
        thread.get_message(ids[1])
    assert contents(thread.get_messages()) == ["keep"]


def test_delete_message_of_another_threads_message_returns_zero_and_keeps_it(thread, other_thread):
    [message_id] = other_thread.add_messages([{"role": "user", "content": "not yours"}])
    assert thread.delete_message(message_id) == 0
    assert other_thread.get_message(message_id).content == "not yours"
