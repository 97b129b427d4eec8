"""The engine's documented input limits (memory/engine/limits.py, docs/configuration.md "Limits").

Each limit is accepted exactly at its value, on every backend and every path that compiles or
stores the input, and refused one step beyond with a ValueError that names it, before anything
is written. Inputs that Python or the databases cannot take (timestamps that leave the calendar
once converted to UTC, integers beyond 64 bits, damaged cursors) are ValueErrors too.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime, timedelta, timezone

import pytest

from memory.engine import NOT_SET, limits

from .helpers import store_state
from .test_images import PNG


def nested(depth: int, leaf=1, key: str = "k") -> dict:
    """A dict `depth` levels deep (the dict itself is level 1)."""
    value = leaf
    for _ in range(depth):
        value = {key: value}
    return value


def searches(memory, metadata_filter):
    """Every call that compiles a metadata filter: listing, search, graph search."""
    memory.list_memories(user_id="u", metadata_filter=metadata_filter)
    memory.search("pizza", user_id="u", metadata_filter=metadata_filter)
    return memory.search("pizza", user_id="u", metadata_filter=metadata_filter, num_hops=2, max_linked_results=5)


# --- metadata filters -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda d: nested(d), id="objects"),
        pytest.param(lambda d: {"a": json.loads("[" * (d - 1) + "1" + "]" * (d - 1))}, id="lists"),
        pytest.param(lambda d: {"a": nested(d - 1, {"k": 1}, "$not")["$not"]}, id="negations"),
    ],
)
def test_a_filter_as_deep_as_the_limit_compiles_everywhere_and_one_deeper_is_refused(memory, build):
    deepest = build(limits.MAX_FILTER_DEPTH)
    memory.add_memory("pizza", user_id="u", metadata={"a": 1})
    searches(memory, deepest)
    with pytest.raises(ValueError, match=f"more than {limits.MAX_FILTER_DEPTH} levels"):
        searches(memory, {"wrap": deepest})


def test_a_filter_with_the_most_terms_compiles_and_matches_exactly(memory):
    """A thousand keys, or a list of almost a thousand items, is one shallow condition."""
    keys = {f"k{i}": i for i in range(limits.MAX_FILTER_TERMS)}
    wanted = memory.add_memory("pizza with every key", user_id="u", metadata=keys)
    memory.add_memory("pizza missing the last key", user_id="u", metadata={**keys, "k999": -1})
    assert [hit.record.id for hit in searches(memory, keys)] == [wanted]
    items = list(range(limits.MAX_FILTER_TERMS - 2))  # the key and the operator count too
    tagged = memory.add_memory("pizza tagged", user_id="u", metadata={"tags": [items[-1]]})
    assert [hit.record.id for hit in searches(memory, {"tags": {"$array_contains_any": items}})] == [tagged]
    with pytest.raises(ValueError, match=f"more than {limits.MAX_FILTER_TERMS} keys"):
        searches(memory, {**keys, "one_more": 1})


def test_filter_integers_beyond_38_digits_are_refused(memory):
    with pytest.raises(ValueError, match="38 digits"):
        searches(memory, {"n": 10**38})
    searches(memory, {"n": 10**38 - 1})


# --- stored values -----------------------------------------------------------------------------


def test_metadata_beyond_its_limits_is_refused_and_nothing_is_stored(memory, thread, store):
    memory.add_memory("deepest allowed", user_id="u", metadata=nested(limits.MAX_JSON_DEPTH))
    before = store_state(store)
    refused = [
        (nested(limits.MAX_JSON_DEPTH + 1), "nested more than"),
        (nested(10_000), "nested more than"),  # far beyond Python's recursion limit
        ({"big": "x" * limits.MAX_JSON_CHARS}, "characters"),
        ({"n": -(10**38)}, "38 digits"),
    ]
    for metadata, message in refused:
        with pytest.raises(ValueError, match=message):
            memory.add_memory("refused", user_id="u", metadata=metadata)
        with pytest.raises(ValueError, match=message):
            thread.add_messages([{"role": "user", "content": "refused", "metadata": metadata}])
    assert store_state(store) == before


def test_content_and_ids_at_their_limits_are_stored_and_beyond_refused(memory, thread, store):
    longest = "é" * limits.MAX_CONTENT_CHARS
    widest = "id-" + "x" * (limits.MAX_ID_BYTES - 3)
    memory_id = memory.add_memory(longest, user_id=widest, memory_id=widest)
    assert memory.get_memory(memory_id).content == longest
    before = store_state(store)
    too_wide = "é" * (limits.MAX_ID_BYTES // 2 + 1)  # two bytes each in UTF-8
    for call, message in [
        (lambda: memory.add_memory(longest + "x", user_id="u"), "contents"),
        (lambda: memory.add_memory("x", user_id="u", memory_id=too_wide), "record_ids"),
        (lambda: memory.add_memory("x", user_id=too_wide), "user_id"),
        (lambda: memory.create_thread(thread_id=too_wide), "thread_id"),
        (lambda: thread.add_messages([{"role": too_wide, "content": "x"}]), "roles"),
        (lambda: memory.link_records(memory_id, "memory", memory_id, "memory", too_wide), "relation_type"),
        (lambda: memory.update_memory(memory_id, content=longest + "x"), "text"),
    ]:
        with pytest.raises(ValueError, match=f"{message}.*(limit|bytes)"):
            call()
    assert store_state(store) == before


# --- values Python or the database cannot take ------------------------------------------------------


@pytest.mark.parametrize(
    "moment",
    [
        datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-5))),
        datetime(1, 1, 1, 1, tzinfo=timezone(timedelta(hours=5))),
        "9999-12-31T23:00:00-05:00",
    ],
    ids=["after-9999", "before-year-1", "text"],
)
def test_a_timestamp_outside_the_calendar_in_utc_is_a_value_error(memory, thread, moment):
    with pytest.raises(ValueError, match=r"timestamp.*years 1 to 9999"):
        memory.add_memory("x", user_id="u", timestamp=moment)
    with pytest.raises(ValueError, match="timestamp"):
        thread.add_messages([{"role": "user", "content": "x", "timestamp": moment}])


def test_integers_beyond_64_bits_are_value_errors_naming_the_argument(memory, thread):
    huge = 2**64
    calls = {
        "limit": lambda: memory.list_memories(user_id="u", limit=huge),
        "max_results": lambda: memory.search("x", user_id="u", max_results=huge),
        "token_budget": lambda: memory.search("x", user_id="u", token_budget=huge),
        "max_linked_results": lambda: memory.search("x", user_id="u", num_hops=1, max_linked_results=huge),
        "ttl_days": lambda: memory.add_memory("x", user_id="u", ttl_days=huge),
        "start": lambda: thread.get_messages(start=huge),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match=name):
            call()


@pytest.mark.parametrize(
    "values",
    [[{"a": 1}, 1], ["2026-01-01", 2**64], [True, 1], []],
    ids=["a-dict", "a-huge-integer", "a-flag", "empty"],
)
def test_a_forged_cursor_is_a_value_error(memory, values):
    memory.add_memory("one", user_id="u")
    cursor = base64.urlsafe_b64encode(json.dumps(values).encode()).decode()
    with pytest.raises(ValueError, match="invalid cursor"):
        memory.list_memories(user_id="u", cursor=cursor)
    with pytest.raises(ValueError, match="invalid cursor"):
        memory.list_threads(cursor=cursor)


def test_a_deeply_nested_cursor_is_a_value_error(memory):
    cursor = base64.urlsafe_b64encode(b"[" * 100_000).decode()
    with pytest.raises(ValueError, match="invalid cursor"):
        memory.list_memories(user_id="u", cursor=cursor)


def test_the_largest_64_bit_limit_lists_everything(memory):
    memory.add_memory("one", user_id="u")
    assert len(memory.list_memories(user_id="u", limit=limits.MAX_INT)) == 1
    assert len(memory.list_users(limit=limits.MAX_INT)) == 1


@pytest.mark.parametrize("thread_id", [{"id": "t1"}, ["t1"], 5, ""])
def test_a_thread_id_of_the_wrong_type_is_refused_not_sent_to_the_database(memory, store, thread_id):
    memory.create_thread(thread_id="t1", user_id="u")
    with pytest.raises(ValueError, match="thread_id"):
        memory.update_thread(thread_id, metadata={"a": 1})
    with pytest.raises(ValueError, match="thread_id"):
        store.get_thread(thread_id)
    # The client reads an id that is not a string as a thread that does not exist.
    with pytest.raises(ValueError if isinstance(thread_id, str) else KeyError):
        memory.get_thread(thread_id)


def test_ids_with_a_nul_character_are_refused(memory, thread):
    """SQLite's JSON functions end text at NUL, so such an id could be stored twice or not found."""
    for call in [
        lambda: memory.add_memory("x", user_id="u", memory_id="a\x00b"),
        lambda: thread.add_image(PNG, image_id="a\x00b"),
        lambda: memory.add_memory("x", user_id="a\x00b"),
    ]:
        with pytest.raises(ValueError, match="NUL"):
            call()


NOT_ONE_LINE = ["a\nb", "a\r\nb", "a\rb", "a\tb", "a\x1fb", "a\x7fb", "a\x85b", "a\u2028b", "a\u2029b"]
"""Ids holding a control character or a line break: one newline in an id broke every bulk action
whose selection held it (the dashboard carries selections as lines of ids)."""
SPACED = [" a", "a ", "\ta", "a\u00a0", "\u3000a"]


@pytest.mark.parametrize("bad", [*NOT_ONE_LINE, *SPACED])
def test_ids_roles_and_labels_that_are_not_one_clean_line_are_refused_everywhere(memory, thread, store, bad):
    """Control characters, line breaks and whitespace at either end: refused in every id a caller
    gives (records, images, messages, threads, owners, links), in roles and in link labels,
    naming the argument, before anything is stored."""
    kept = memory.add_memory("kept", user_id="u", memory_id="kept")
    other = memory.add_memory("other", user_id="u", memory_id="other")
    before = store_state(store)
    for call, name in [
        (lambda: memory.add_memory("x", user_id="u", memory_id=bad), "record_ids"),
        (lambda: memory.add_memory("x", user_id=bad), "user_ids"),
        (lambda: memory.add_memory("x", user_id="u", agent_id=bad), "agent_ids"),
        (lambda: thread.add_image(PNG, image_id=bad), "record_ids"),
        (lambda: thread.add_messages([{"role": "user", "content": "x", "id": bad}]), "record_ids"),
        (lambda: thread.add_messages([{"role": bad, "content": "x"}]), r"roles\[0\]"),
        (lambda: memory.create_thread(thread_id=bad), "thread_id"),
        (lambda: memory.link_records(kept, "memory", other, "memory", "supports", relation_id=bad), "relation id"),
        (lambda: memory.link_records(kept, "memory", other, "memory", bad), "relation_type"),
        (lambda: memory.list_memories(user_id=bad), "user_id"),
        (lambda: memory.delete_user(bad), "user_id"),
    ]:
        with pytest.raises(ValueError, match=f"^{name} must not (contain control characters|begin or end)"):
            call()
    assert store_state(store) == before
    assert store.get("memory", bad) is None  # a lookup by an id no record can have finds nothing
    assert store.delete("memory", bad) == 0


def test_spaces_and_unusual_characters_inside_an_id_are_kept(memory):
    """Only the ends and control characters are refused: an id may hold spaces, zero-width and
    right-to-left characters, slashes, and line-separator look-alikes that are not line breaks."""
    for record_id in ["a b", "x\u200by", "user\u202e", "a/b c", "é\u00a0é", "a\\nb"]:
        assert memory.get_memory(memory.add_memory("x", user_id="u", memory_id=record_id)).id == record_id


@pytest.mark.parametrize("owner", ["thread", "user", "agent"])
def test_deleting_an_owner_needs_its_id(memory, owner):
    delete = getattr(memory, f"delete_{owner}")
    for bad in [NOT_SET, None, {"id": "x"}, 5]:
        with pytest.raises(ValueError, match=f"{owner}_id"):
            delete(bad)


def test_link_selectors_are_checked_before_the_database_sees_them(memory):
    a = memory.add_memory("a", user_id="u")
    b = memory.add_memory("b", user_id="u")
    memory.link_records(a, "memory", b, "memory", "supports")
    link = {
        "source_record_id": a,
        "source_record_type": "memory",
        "target_record_id": b,
        "target_record_type": "memory",
        "relation_type": "supports",
    }
    for bad in [{"id": a}, 2**64, ["x"]]:
        with pytest.raises(ValueError, match="record_id"):
            memory.list_relations(record_id=bad)
        for field in ("source_record_id", "relation_type"):
            with pytest.raises(ValueError, match=field):
                memory.delete_record_link(**{**link, field: bad})
    assert len(memory.list_relations(record_id=a)) == 1


@pytest.mark.parametrize(
    ("listing", "values"),
    [("memories", ["zzz"]), ("memories", [None]), ("threads", [5, None]), ("threads", ["not a time", "t1"])],
)
def test_a_cursor_of_the_right_length_but_the_wrong_types_is_a_value_error(memory, listing, values):
    memory.create_thread(thread_id="t1", user_id="u")
    cursor = base64.urlsafe_b64encode(json.dumps(values).encode()).decode()
    listing_call = memory.list_memories if listing == "memories" else memory.list_threads
    with pytest.raises(ValueError, match="invalid cursor"):
        listing_call(cursor=cursor)


def test_an_id_with_a_lone_surrogate_is_a_value_error_naming_it(memory):
    with pytest.raises(ValueError, match="record_ids is not valid Unicode"):
        memory.add_memory("x", user_id="u", memory_id="\ud800")
    with pytest.raises(ValueError, match=r"user_ids? is not valid Unicode"):
        memory.add_memory("x", user_id="\ud800")


def test_wall_times_an_hour_apart_across_a_fold_keep_their_own_instants(store):
    """01:30 twice on the night clocks go back: equal as datetimes, an hour apart in UTC."""
    from zoneinfo import ZoneInfo

    first = datetime(2024, 11, 3, 1, 30, tzinfo=ZoneInfo("America/New_York"))
    second = first.replace(fold=1)
    ids = store.add(["first", "second"], "memory", user_ids="u", timestamps=[first, second])
    stamps = [store.get("memory", record_id).timestamp for record_id in ids]
    assert stamps == ["2024-11-03T05:30:00.000000+00:00", "2024-11-03T06:30:00.000000+00:00"]


def test_a_lookup_by_an_id_no_record_can_have_finds_nothing(memory, store):
    """Ids past the limit cannot exist: found nowhere, without a bind the database might refuse."""
    too_long = "x" * (limits.MAX_ID_BYTES + 1)
    assert store.get("memory", too_long) is None
    assert store.get("memory", "a\x00b") is None
    assert store.delete("memory", too_long) == 0
    assert store.update("memory", too_long, metadata={"a": 1}) == 0
    assert store.get_relation(too_long) is None
    with pytest.raises(KeyError):
        memory.get_memory(too_long)


def test_flags_and_id_lists_of_the_wrong_type_are_value_errors_naming_them(memory, thread):
    [message_id] = thread.add_messages([{"role": "user", "content": "hello"}])
    calls = {
        "cascade": lambda: memory.delete_user("u1", cascade=NOT_SET),
        "include_bytes": lambda: memory.list_images(include_bytes=NOT_SET),
        "include_image_bytes": lambda: thread.get_messages(include_image_bytes=NOT_SET),
        "included_image_ids": lambda: thread.get_message(message_id, included_image_ids=5),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match=name):
            call()
    assert thread.get_message(message_id, included_image_ids=["none-of-its-images"]).content == "hello"
