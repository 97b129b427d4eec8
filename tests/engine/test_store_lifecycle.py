"""Record lifecycle at the store layer: TTL and retention, expiry, timestamps, status, schema policies.

API_SPEC §1.3, §1.4, §1.5, §3.2, §3.4; DECISIONS D2, D3, D9, D10.
"""

from __future__ import annotations

import warnings
from datetime import UTC, datetime, timedelta

import pytest

from memory.engine import (
    EmbedderMismatchError,
    HashingEmbedder,
    MemoryRetentionConfig,
    RecordStatus,
    SchemaPolicy,
    TimeToLiveAnchor,
)

TOLERANCE = timedelta(seconds=5)
EVENT = "2030-06-01T12:00:00+00:00"
EVENT_TIME = datetime(2030, 6, 1, 12, tzinfo=UTC)
LONG_AGO = "2000-01-01T00:00:00+00:00"


def as_utc(text: str) -> datetime:
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def lifetime(record) -> timedelta | None:
    """The record's expiry measured from its creation time; None when it never expires."""
    if record.expires_at is None:
        return None
    return as_utc(record.expires_at) - as_utc(record.created_at)


def assert_close(actual: timedelta | datetime | None, expected: timedelta | datetime) -> None:
    assert actual is not None, "expected an expiry, the record never expires"
    assert abs(actual - expected) <= TOLERANCE, f"{actual} is not {expected}"


def retention(**config) -> MemoryRetentionConfig:
    return MemoryRetentionConfig(**config)


def add_one(store, **kwargs) -> str:
    return store.add(["a record"], record_type="memory", **kwargs)[0]


# --- TTL at creation -------------------------------------------------------------------------


def test_an_omitted_ttl_without_retention_never_expires(store):
    assert store.get("memory", add_one(store)).expires_at is None


def test_an_omitted_ttl_uses_the_default_lifetime(store_factory):
    store = store_factory(memory_retention_config=retention(default_ttl_days=3))
    assert_close(lifetime(store.get("memory", add_one(store))), timedelta(days=3))


def test_an_omitted_ttl_with_only_a_maximum_never_expires(store_factory):
    store = store_factory(memory_retention_config=retention(max_ttl_days=10))
    assert store.get("memory", add_one(store)).expires_at is None


def test_ttl_none_uses_the_maximum_lifetime(store_factory):
    store = store_factory(memory_retention_config=retention(default_ttl_days=2, max_ttl_days=10))
    assert_close(lifetime(store.get("memory", add_one(store, ttl_days=None))), timedelta(days=10))


def test_ttl_none_without_retention_never_expires(store_factory):
    store = store_factory(memory_retention_config=retention(default_ttl_days=2))
    assert store.get("memory", add_one(store, ttl_days=None)).expires_at is None
    plain = store_factory()
    assert plain.get("memory", add_one(plain, ttl_days=None)).expires_at is None


def test_an_explicit_ttl_gives_that_many_days(store_factory):
    store = store_factory(memory_retention_config=retention(default_ttl_days=2, max_ttl_days=10))
    assert_close(lifetime(store.get("memory", add_one(store, ttl_days=7))), timedelta(days=7))
    plain = store_factory()
    assert_close(lifetime(plain.get("memory", add_one(plain, ttl_days=400))), timedelta(days=400))


def test_a_ttl_over_the_maximum_is_clamped_with_a_warning(store_factory):
    store = store_factory(memory_retention_config=retention(max_ttl_days=10))
    with pytest.warns(UserWarning):
        record_id = add_one(store, ttl_days=30)
    assert_close(lifetime(store.get("memory", record_id)), timedelta(days=10))


def test_a_ttl_at_the_maximum_is_kept_without_a_warning(store_factory):
    store = store_factory(memory_retention_config=retention(max_ttl_days=10))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        record_id = add_one(store, ttl_days=10)
    assert_close(lifetime(store.get("memory", record_id)), timedelta(days=10))


@pytest.mark.parametrize("bad", [0, -1, 1.5, "3", True], ids=["zero", "negative", "float", "string", "bool"])
def test_add_with_a_ttl_that_is_not_a_positive_integer_is_a_value_error(store, bad):
    with pytest.raises(ValueError, match="ttl"):
        add_one(store, ttl_days=bad)
    assert store.list("memory", include_expired=True) == []


def test_a_timestamp_anchor_counts_from_the_event_timestamp(store):
    record_id = add_one(store, timestamps=EVENT, ttl_days=2, ttl_anchor=TimeToLiveAnchor.TIMESTAMP)
    assert_close(as_utc(store.get("memory", record_id).expires_at), EVENT_TIME + timedelta(days=2))


def test_a_created_at_anchor_ignores_the_event_timestamp(store):
    record_id = add_one(store, timestamps=EVENT, ttl_days=2, ttl_anchor=TimeToLiveAnchor.CREATED_AT)
    assert_close(lifetime(store.get("memory", record_id)), timedelta(days=2))


def test_a_timestamp_anchor_without_a_timestamp_is_a_value_error_and_stores_nothing(store):
    with pytest.raises(ValueError, match=r"(?i)timestamp"):
        store.add(
            ["has one", "has none"],
            record_type="memory",
            timestamps=[EVENT, None],
            ttl_days=2,
            ttl_anchor=TimeToLiveAnchor.TIMESTAMP,
        )
    assert store.list("memory", include_expired=True) == []


def test_an_anchor_given_as_its_string_value_is_accepted(store):
    record_id = add_one(store, timestamps=EVENT, ttl_days=2, ttl_anchor="timestamp")
    assert_close(as_utc(store.get("memory", record_id).expires_at), EVENT_TIME + timedelta(days=2))


def test_an_unknown_anchor_is_a_value_error(store):
    with pytest.raises(ValueError):
        add_one(store, ttl_days=2, ttl_anchor="tomorrow")


# --- TTL refresh through update --------------------------------------------------------------


def test_update_ttl_sets_a_new_expiry_from_the_creation_time(store):
    record_id = add_one(store)
    assert store.update("memory", record_id, ttl_days=5) == 1
    assert_close(lifetime(store.get("memory", record_id)), timedelta(days=5))


def test_update_ttl_none_clears_the_expiry_without_retention(store):
    record_id = add_one(store, ttl_days=5)
    assert store.update("memory", record_id, ttl_days=None) == 1
    assert store.get("memory", record_id).expires_at is None


def test_update_ttl_none_uses_the_maximum_with_retention(store_factory):
    store = store_factory(memory_retention_config=retention(max_ttl_days=10))
    record_id = add_one(store, ttl_days=5)
    store.update("memory", record_id, ttl_days=None)
    assert_close(lifetime(store.get("memory", record_id)), timedelta(days=10))


def test_update_ttl_over_the_maximum_is_clamped_with_a_warning(store_factory):
    store = store_factory(memory_retention_config=retention(max_ttl_days=10))
    record_id = add_one(store, ttl_days=5)
    with pytest.warns(UserWarning):
        store.update("memory", record_id, ttl_days=99)
    assert_close(lifetime(store.get("memory", record_id)), timedelta(days=10))


@pytest.mark.parametrize("bad", [0, -3, 2.5, "3"], ids=["zero", "negative", "float", "string"])
def test_update_with_a_ttl_that_is_not_a_positive_integer_is_a_value_error(store, bad):
    record_id = add_one(store, ttl_days=5)
    with pytest.raises(ValueError):
        store.update("memory", record_id, ttl_days=bad)
    assert_close(lifetime(store.get("memory", record_id)), timedelta(days=5))


def test_update_with_a_timestamp_anchor_counts_from_the_stored_timestamp(store):
    record_id = add_one(store, timestamps=EVENT)
    store.update("memory", record_id, ttl_days=3, ttl_anchor=TimeToLiveAnchor.TIMESTAMP)
    assert_close(as_utc(store.get("memory", record_id).expires_at), EVENT_TIME + timedelta(days=3))


def test_update_with_a_timestamp_anchor_uses_the_timestamp_given_in_the_same_call(store):
    record_id = add_one(store, timestamps=EVENT)
    store.update(
        "memory", record_id, timestamp="2031-01-01T00:00:00+00:00", ttl_days=1, ttl_anchor=TimeToLiveAnchor.TIMESTAMP
    )
    record = store.get("memory", record_id)
    assert as_utc(record.timestamp) == datetime(2031, 1, 1, tzinfo=UTC)
    assert_close(as_utc(record.expires_at), datetime(2031, 1, 2, tzinfo=UTC))


def test_update_with_a_timestamp_anchor_and_no_timestamp_is_a_value_error(store):
    record_id = add_one(store, ttl_days=5)
    with pytest.raises(ValueError, match=r"(?i)timestamp"):
        store.update("memory", record_id, ttl_days=3, ttl_anchor=TimeToLiveAnchor.TIMESTAMP)
    assert_close(lifetime(store.get("memory", record_id)), timedelta(days=5))


def test_update_with_an_anchor_only_applies_the_default_lifetime_from_it(store_factory):
    store = store_factory(memory_retention_config=retention(default_ttl_days=4))
    record_id = add_one(store, timestamps=EVENT, ttl_days=None)
    store.update("memory", record_id, ttl_anchor=TimeToLiveAnchor.TIMESTAMP)
    assert_close(as_utc(store.get("memory", record_id).expires_at), EVENT_TIME + timedelta(days=4))


def test_update_without_ttl_arguments_keeps_the_expiry(store):
    record_id = add_one(store, ttl_days=5)
    before = store.get("memory", record_id).expires_at
    store.update("memory", record_id, text="new text", metadata={"k": 1})
    assert store.get("memory", record_id).expires_at == before


# --- expiry ----------------------------------------------------------------------------------


def add_expired(store, text="expired words") -> str:
    return store.add(
        [text], record_type="memory", timestamps=LONG_AGO, ttl_days=1, ttl_anchor=TimeToLiveAnchor.TIMESTAMP
    )[0]


def test_an_expired_record_is_invisible_to_get_list_and_search(store):
    expired = add_expired(store)
    alive = add_one(store)
    assert store.get("memory", expired) is None
    assert [r.id for r in store.list("memory")] == [alive]
    assert [r.id for r, _ in store.search("expired words", 10)] == [alive]
    vector = [float(x) for x in HashingEmbedder(64).embed(["expired words"])[0]]
    assert [r.id for r, _ in store.search(query_vector=vector, k=10)] == [alive]


def test_list_with_include_expired_shows_expired_records(store):
    expired = add_expired(store)
    alive = add_one(store)
    assert [r.id for r in store.list("memory", include_expired=True)] == [expired, alive]


def test_purge_expired_deletes_expired_records_and_returns_the_count(store):
    expired = [add_expired(store, "one"), add_expired(store, "two")]
    alive = add_one(store, ttl_days=30)
    assert [r.id for r in store.list("memory", include_expired=True)] == [*expired, alive]
    assert store.purge_expired() == 2
    assert [r.id for r in store.list("memory", include_expired=True)] == [alive]
    assert store.get("memory", alive) is not None
    assert store.purge_expired() == 0


def test_purge_expired_covers_every_record_type(store):
    store.add(
        ["old message"],
        record_type="message",
        thread_ids="t",
        roles="user",
        timestamps=LONG_AGO,
        ttl_days=1,
        ttl_anchor=TimeToLiveAnchor.TIMESTAMP,
    )
    add_expired(store)
    assert store.list_thread_messages("t") == []
    assert store.purge_expired() == 2
    assert store.list(["message", "memory"], include_expired=True) == []


def test_refreshing_the_ttl_brings_an_expiring_record_forward(store):
    record_id = add_one(store, timestamps=LONG_AGO, ttl_days=100_000, ttl_anchor=TimeToLiveAnchor.TIMESTAMP)
    assert store.get("memory", record_id) is not None
    store.update("memory", record_id, ttl_days=1, ttl_anchor=TimeToLiveAnchor.TIMESTAMP)
    assert store.get("memory", record_id) is None
    assert store.purge_expired() == 1


# --- timestamps ------------------------------------------------------------------------------


def test_naive_timestamps_are_utc(store):
    naive, utc, zulu, offset = store.add(
        ["naive", "utc", "zulu", "offset"],
        record_type="memory",
        timestamps=[
            "2024-05-06T07:08:09",
            "2024-05-06T07:08:09+00:00",
            "2024-05-06T07:08:09Z",
            "2024-05-06T09:08:09+02:00",
        ],
    )
    stamps = [store.get("memory", i).timestamp for i in (naive, utc, zulu, offset)]
    assert len(set(stamps)) == 1
    assert as_utc(stamps[0]) == datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
    assert datetime.fromisoformat(stamps[0]).utcoffset() == timedelta(0)


@pytest.mark.parametrize("stamp", ["0500-01-01T00:00:00", "0999-12-31T23:00:00+00:00", "9999-12-31T23:59:59+00:00"])
def test_timestamps_at_the_edges_of_the_calendar_read_back_as_iso_utc(store, stamp):
    record = store.get("memory", add_one(store, timestamps=stamp))
    assert as_utc(record.timestamp) == as_utc(stamp)
    assert datetime.fromisoformat(record.timestamp).utcoffset() == timedelta(0)


def test_timestamps_sort_as_instants_across_centuries(store):
    late, early = store.add(
        ["late", "early"], record_type="memory", timestamps=["2020-01-01T00:00:00", "0900-01-01T00:00:00"]
    )
    assert as_utc(store.get("memory", early).timestamp) < as_utc(store.get("memory", late).timestamp)


def test_a_record_expired_long_ago_by_its_early_timestamp_is_invisible(store):
    record_id = add_one(store, timestamps="0900-01-01T00:00:00", ttl_days=1, ttl_anchor=TimeToLiveAnchor.TIMESTAMP)
    assert store.get("memory", record_id) is None
    assert store.list("memory") == []
    assert store.purge_expired() == 1


@pytest.mark.parametrize(
    "kwargs",
    [
        {"ttl_days": 3_000_000},
        {"timestamps": "9999-12-30T00:00:00", "ttl_days": 5, "ttl_anchor": TimeToLiveAnchor.TIMESTAMP},
    ],
    ids=["huge-ttl", "expiry-after-year-9999"],
)
def test_an_expiry_beyond_the_calendar_is_stored_as_far_future_or_refused_with_a_value_error(store, kwargs):
    # §1.4: an integer ttl is "that many days"; D3: a bad argument is a ValueError, never another crash.
    try:
        record_id = add_one(store, **kwargs)
    except ValueError:
        assert store.list("memory", include_expired=True) == []
        return
    assert store.get("memory", record_id) is not None


def test_a_record_without_an_event_timestamp_reports_its_creation_time(store):
    before = datetime.now(UTC)
    record = store.get("memory", add_one(store))
    assert record.timestamp is not None
    assert record.timestamp == record.created_at
    assert_close(as_utc(record.timestamp), before)


def test_update_timestamp_none_falls_back_to_the_creation_time(store):
    record_id = add_one(store, timestamps=EVENT)
    store.update("memory", record_id, timestamp=None)
    record = store.get("memory", record_id)
    assert record.timestamp == record.created_at


# --- status ----------------------------------------------------------------------------------


def test_statuses_are_stored_and_read_back(store):
    invalid, valid = store.add(["a", "b"], record_type="memory", statuses=[RecordStatus.INVALID, RecordStatus.VALID])
    assert store.get("memory", invalid).status == RecordStatus.INVALID
    assert store.get("memory", valid).status == RecordStatus.VALID


def test_status_defaults_to_valid(store):
    assert store.get("memory", add_one(store)).status == RecordStatus.VALID


def test_update_status_changes_only_the_status(store):
    record_id = add_one(store, metadata={"k": 1})
    assert store.update("memory", record_id, status=RecordStatus.INVALID) == 1
    record = store.get("memory", record_id)
    assert (record.status, record.content, record.metadata) == (RecordStatus.INVALID, "a record", {"k": 1})
    store.update("memory", record_id, text="changed")
    assert store.get("memory", record_id).status == RecordStatus.INVALID
    store.update("memory", record_id, status=RecordStatus.VALID)
    assert store.get("memory", record_id).status == RecordStatus.VALID


def test_an_unknown_status_is_a_value_error(store):
    with pytest.raises(ValueError):
        store.add(["a"], record_type="memory", statuses=["archived"])
    record_id = add_one(store)
    with pytest.raises(ValueError):
        store.update("memory", record_id, status="archived")


# --- schema policies -------------------------------------------------------------------------


def test_a_second_store_requiring_the_existing_schema_opens_the_same_data(store_factory):
    first = store_factory("shared")
    record_id = add_one(first)
    second = store_factory("shared", schema_policy=SchemaPolicy.REQUIRE_EXISTING)
    assert second.get("memory", record_id).content == "a record"
    assert [r.id for r in second.list("memory")] == [record_id]


def test_require_existing_on_an_empty_database_fails_with_a_clear_message(store_factory):
    with pytest.raises(Exception, match=r"(?i)schema") as raised:
        store_factory("empty", schema_policy=SchemaPolicy.REQUIRE_EXISTING)
    assert not isinstance(raised.value, (AssertionError, TypeError, AttributeError, NameError))


def test_the_schema_policy_may_be_given_as_its_string_value(store_factory):
    first = store_factory("by-string", schema_policy="create_if_necessary")
    record_id = add_one(first)
    second = store_factory("by-string", schema_policy="require_existing")
    assert second.get("memory", record_id) is not None


def test_an_unknown_schema_policy_is_a_value_error(store_factory):
    with pytest.raises(ValueError):
        store_factory("bad-policy", schema_policy="sometimes")


def test_create_if_empty_bootstraps_a_new_database_and_keeps_an_existing_one(store_factory):
    first = store_factory("bootstrap", schema_policy=SchemaPolicy.CREATE_IF_EMPTY)
    record_id = add_one(first)
    second = store_factory("bootstrap", schema_policy=SchemaPolicy.CREATE_IF_EMPTY)
    assert second.get("memory", record_id).content == "a record"


def test_create_if_necessary_is_idempotent(store_factory):
    first = store_factory("twice", schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)
    record_id = add_one(first)
    second = store_factory("twice", schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)
    assert second.get("memory", record_id) is not None


def test_recreate_wipes_the_data(store_factory):
    first = store_factory("wiped")
    add_one(first)
    first.add_user("u", "profile")
    second = store_factory("wiped", schema_policy=SchemaPolicy.RECREATE)
    assert second.list("memory", include_expired=True) == []
    assert second.get("user_profile", "u") is None
    assert second.add(["after"], record_type="memory", record_ids="fresh") == ["fresh"]


def test_table_name_prefixes_isolate_two_stores_in_one_database(store_factory):
    left = store_factory("prefixed", table_name_prefix="left_")
    right = store_factory("prefixed", table_name_prefix="right_")
    left_id = left.add(["left only"], record_type="memory", record_ids="same-id")[0]
    assert right.list("memory") == []
    assert right.get("memory", left_id) is None
    right.add(["right only"], record_type="memory", record_ids="same-id")
    assert left.get("memory", "same-id").content == "left only"
    assert right.get("memory", "same-id").content == "right only"
    assert [r.id for r, _ in right.search("left only", 5)] == ["same-id"]
    assert right.search("left only", 5)[0][0].content == "right only"


def test_a_prefix_without_its_schema_is_not_an_existing_schema(store_factory):
    store_factory("prefix-missing", table_name_prefix="present_")
    with pytest.raises(Exception, match=r"(?i)schema"):
        store_factory("prefix-missing", table_name_prefix="absent_", schema_policy=SchemaPolicy.REQUIRE_EXISTING)


def test_a_vector_dim_that_disagrees_with_the_embedder_is_a_value_error(store_factory):
    with pytest.raises(ValueError, match=r"(?i)dim"):
        store_factory("mismatch", embedder=HashingEmbedder(64), vector_dim=32)


def test_a_vector_dim_that_agrees_with_the_embedder_is_accepted(store_factory):
    store = store_factory("agree", embedder=HashingEmbedder(32), vector_dim=32)
    record_id = add_one(store)
    assert store.search("a record", 1)[0][0].id == record_id


def test_opening_a_database_built_with_another_vector_dim_fails_clearly(store_factory):
    add_one(store_factory("dims", embedder=HashingEmbedder(64)))
    with pytest.raises(EmbedderMismatchError, match=r"(?i)dim"):
        store_factory("dims", embedder=HashingEmbedder(32), schema_policy=SchemaPolicy.REQUIRE_EXISTING)
    with pytest.raises(EmbedderMismatchError, match=r"(?i)dim"):
        store_factory("dims", embedder=HashingEmbedder(32), schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)
