"""Listings with status, order and text filters (the dashboard's browsers), on every backend."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory.engine import RecordStatus, TimeToLiveAnchor
from memory.engine.stores.arguments import encode_cursor

EXPIRED = {"timestamp": "2000-01-01T00:00:00Z", "ttl_days": 1, "ttl_anchor": TimeToLiveAnchor.TIMESTAMP}


@pytest.fixture
def world(memory):
    """valid, flagged invalid, superseded (invalid by a link), its successor, one expired."""
    memory.add_memory("plain valid", user_id="u1", memory_id="valid")
    memory.add_memory("flagged", user_id="u1", memory_id="flagged", status="invalid")
    memory.add_memory("old address", user_id="u1", memory_id="old")
    memory.add_memory("new address", user_id="u1", memory_id="new", memory_id_to_link="old", link_type="supersedes")
    memory.add_memory("long gone", user_id="u1", memory_id="gone", **EXPIRED)
    return memory


def ids(page) -> list[str]:
    return [record.id for record in page]


def test_status_filters_by_effective_status_and_expiry(world):
    assert ids(world.list_memories(status="valid")) == ["valid", "new"]
    assert ids(world.list_memories(status=RecordStatus.INVALID)) == ["flagged", "old"]
    assert ids(world.list_memories(status="expired")) == ["gone"]
    assert ids(world.store.list("memory", status="invalid", include_expired=True)) == ["flagged", "old"]
    world.delete_record_link(relation_id=world.list_relations()[0].id)
    assert ids(world.list_memories(status="invalid")) == ["flagged"]


@pytest.mark.parametrize("bad", ["Valid", "live", "", None, 1, ["valid"], {"valid": 1}])
def test_an_unknown_status_is_a_value_error_naming_status(world, bad):
    with pytest.raises(ValueError, match="status"):
        world.list_memories(status=bad)


def test_newest_first_pages_backwards_and_cursors_keep_their_order(memory):
    for i in range(7):
        memory.add_memory(f"memory {i}", user_id="u1", memory_id=f"m{i}")
    first = memory.list_memories(limit=3, newest_first=True)
    assert ids(first) == ["m6", "m5", "m4"]
    second = memory.list_memories(limit=3, newest_first=True, cursor=first.next_cursor)
    assert ids(second) == ["m3", "m2", "m1"]
    last = memory.list_memories(limit=3, newest_first=True, cursor=second.next_cursor)
    assert ids(last) == ["m0"] and last.next_cursor is None
    forward = memory.list_memories(limit=3)
    with pytest.raises(ValueError, match="invalid cursor"):
        memory.list_memories(limit=3, newest_first=True, cursor=forward.next_cursor)
    with pytest.raises(ValueError, match="invalid cursor"):
        memory.list_memories(limit=3, cursor=first.next_cursor)
    with pytest.raises(ValueError, match="invalid cursor"):
        memory.list_memories(newest_first=True, cursor=encode_cursor(5, "asc"))
    with pytest.raises(ValueError, match="newest_first"):
        memory.list_memories(newest_first="yes")


def test_text_matches_content_id_and_metadata_ignoring_case_beyond_ascii(memory):
    memory.add_memory("Élodie lives in ZÜRICH", user_id="u1", memory_id="m-zurich")
    memory.add_memory("likes tea", user_id="u1", memory_id="m-tea", metadata={"tags": ["Grüntee"], "n": 1})
    memory.add_memory("something else", user_id="u1", memory_id="Special-ID")
    assert ids(memory.list_memories(text="élodie")) == ["m-zurich"]
    assert ids(memory.list_memories(text="zürich")) == ["m-zurich"]
    assert ids(memory.list_memories(text="GRÜNTEE")) == ["m-tea"]
    assert ids(memory.list_memories(text='"n":1')) == ["m-tea"]  # metadata as JSON text
    assert ids(memory.list_memories(text="special-id")) == ["Special-ID"]
    assert ids(memory.list_memories(text="")) == ["m-zurich", "m-tea", "Special-ID"]
    assert ids(memory.list_memories(text="nowhere")) == []


def test_like_wildcards_in_the_text_match_only_themselves(memory):
    memory.add_memory("a 100% sure thing", user_id="u1", memory_id="pct")
    memory.add_memory("a 1000 sure thing", user_id="u1", memory_id="digits")
    memory.add_memory("snake_case name", user_id="u1", memory_id="snake")
    memory.add_memory("snakeXcase name", user_id="u1", memory_id="x")
    memory.add_memory("back\\slash", user_id="u1", memory_id="slash")
    assert ids(memory.list_memories(text="100%")) == ["pct"]
    assert ids(memory.list_memories(text="e_c")) == ["snake"]
    assert ids(memory.list_memories(text="%")) == ["pct"]
    assert ids(memory.list_memories(text="k\\s")) == ["slash"]


@pytest.mark.parametrize("bad", [5, None, ["tea"], b"tea", "a\x00b", "\ud800", "x" * 501])
def test_a_bad_text_is_a_value_error_naming_text(memory, bad):
    with pytest.raises(ValueError, match="text"):
        memory.list_memories(text=bad)


def test_filters_combine_and_page_together(memory):
    for i in range(12):
        memory.add_memory(
            f"note {i} {'tea' if i % 2 else 'coffee'}",
            user_id="u1" if i % 3 else "u2",
            memory_id=f"n{i}",
            status="invalid" if i % 4 == 0 else "valid",
        )
    expected = [f"n{i}" for i in reversed(range(12)) if i % 2 and i % 3 and i % 4]
    seen, cursor = [], None
    while True:
        page = memory.list_memories(user_id="u1", status="valid", text="TEA", newest_first=True, limit=2, cursor=cursor)
        seen += ids(page)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == expected


def test_messages_list_with_the_same_filters(thread, memory):
    thread.add_messages(
        [
            {"role": "user", "content": "Hello Ünïcode", "id": "hello"},
            {"role": "assistant", "content": "hi", "id": "hi"},
        ]
    )
    assert ids(memory.list_messages(thread_id="t1", newest_first=True)) == ["hi", "hello"]
    assert ids(memory.list_messages(text="ÜNÏCODE")) == ["hello"]
    assert ids(memory.list_messages(status="valid")) == ["hello", "hi"]


def test_threads_list_by_text_in_their_id_or_metadata(memory):
    memory.create_thread(thread_id="Trip-Lisbon", user_id="u1", metadata={"topic": "Reise nach Köln"})
    memory.create_thread(thread_id="bread", user_id="u1", metadata={"topic": "sourdough"})
    assert [t.id for t in memory.list_threads(text="trip")] == ["Trip-Lisbon"]
    assert [t.id for t in memory.list_threads(text="KÖLN")] == ["Trip-Lisbon"]
    assert [t.id for t in memory.list_threads(text="sour", user_id="u1")] == ["bread"]
    assert {t.id for t in memory.list_threads(text="")} == {"Trip-Lisbon", "bread"}
    with pytest.raises(ValueError, match="text"):
        memory.list_threads(text=3)


def test_text_matches_any_case_in_ascii_and_beyond(memory):
    """ASCII rows, rows holding other characters, and characters whose lower case is ASCII (the
    Kelvin sign's is k) all match by Unicode lower case."""
    ids = {
        text: memory.add_memory(text, memory_type="fact", autonomous_linking=False)
        for text in ("COUPON code", "École du Louvre", "Zero \u212aelvin", "Kraków coupon", "nothing here")
    }

    def found(text: str) -> set[str]:
        return {record.content for record in memory.list_memories(text=text)}

    assert found("coupon") == {"COUPON code", "Kraków coupon"}
    assert found("école") == {"École du Louvre"}
    assert found("kelvin") == {"Zero \u212aelvin"}
    assert found("KRAKÓW") == {"Kraków coupon"}
    assert len(ids) == 5


def test_expires_before_keeps_live_records_whose_expiry_comes_by_then(memory):
    """The review queue's "expiring within N days": an expiry at or before the instant, live
    records only (expired ones with status="expired"); records without a lifetime never match."""
    memory.add_memory("forever", user_id="u1", memory_id="forever")
    memory.add_memory("two days", user_id="u1", memory_id="soon", ttl_days=2)
    memory.add_memory("thirty days", user_id="u1", memory_id="later", ttl_days=30)
    memory.add_memory("other user", user_id="u2", memory_id="soon-u2", ttl_days=3)
    memory.add_memory("long gone", user_id="u1", memory_id="gone", **EXPIRED)
    week = datetime.now(UTC) + timedelta(days=7)
    assert ids(memory.list_memories(expires_before=week)) == ["soon", "soon-u2"]
    assert ids(memory.list_memories(expires_before=week.isoformat(), user_id="u1")) == ["soon"]
    assert ids(memory.list_memories(expires_before=week + timedelta(days=30))) == ["soon", "later", "soon-u2"]
    assert ids(memory.list_memories(expires_before=week, status="expired")) == ["gone"]
    first = memory.list_memories(expires_before=week, limit=1)
    assert ids(first) == ["soon"]
    assert ids(memory.list_memories(expires_before=week, limit=1, cursor=first.next_cursor)) == ["soon-u2"]
    for bad in (None, "next week", 7):
        with pytest.raises(ValueError, match="expires_before"):
            memory.list_memories(expires_before=bad)


def test_list_expired_names_every_kind_purge_expired_deletes(memory, thread):
    """What a purge will remove, listed first (messages, memories and images alike), then gone."""
    thread.add_messages(
        [{"role": "user", "content": "old news", "id": "msg-old", "timestamp": EXPIRED["timestamp"]}],
        ttl_days=1,
        ttl_anchor=TimeToLiveAnchor.TIMESTAMP,
    )
    thread.add_messages([{"role": "user", "content": "still here", "id": "msg-live"}])
    memory.add_memory("long gone", user_id="u1", memory_id="gone", **EXPIRED)
    memory.add_memory("long gone too", user_id="u2", memory_id="gone-u2", **EXPIRED)
    memory.add_memory("plain valid", user_id="u1", memory_id="valid")

    assert ids(memory.list_expired()) == ["msg-old", "gone", "gone-u2"]
    assert ids(memory.list_expired(user_id="u2")) == ["gone-u2"]
    first = memory.list_expired(limit=2)
    assert ids(first) == ["msg-old", "gone"]
    assert ids(memory.list_expired(limit=2, cursor=first.next_cursor)) == ["gone-u2"]

    assert memory.purge_expired() == 3
    assert ids(memory.list_expired()) == []
    assert ids(memory.list_memories()) == ["valid"]
    assert [m.id for m in memory.list_messages()] == ["msg-live"]
    assert memory.purge_expired() == 0
