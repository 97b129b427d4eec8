"""Hostile arguments for every public method of AgentMemory and Thread (DECISIONS D3).

Each call runs on a freshly seeded store (properties.seed_world: threads, messages with an image
part, memories of several types, links, images, profiles, records already expired) and must
either return, or raise one of the exceptions the contract names for that method (Spec.raises);
when it raises, the whole store (every table of the SQLite file, read with raw sqlite3: records,
relations, threads with their activity time and message counter, meta, change log; see
properties.store_dump for the two derived caches left out) must be exactly what it was.
Read-only methods must leave it so even when they return.

Three tests share that check (check_contract):
- test_hostile_arguments_...: hypothesis draws the arguments in two shapes, every parameter
  mostly valid and sometimes hostile ("mixed"), or all valid but one hostile ("one hostile"),
  which reaches the late failures (an image part that fails after its message row is written);
  for some examples the `_async` twin is called instead, and must keep the same contract;
- test_each_parameter_with_each_core_hostile_value: a deterministic sweep, one CORE_HOSTILE value
  at a time in each parameter of each method, every escape listed;
- test_known_escape_classes_...: KNOWN_ESCAPES, fixed calls for the escape classes seen before.
The profile (properties.py) sets how many examples the first draws: HYPOTHESIS_PROFILE=long for
local hunting.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

from memory.engine import (
    NOT_SET,
    ActivityConfig,
    AgentMemory,
    ImageInputLimitConfig,
    MemoryRecord,
    RecordRelation,
    RecordStatus,
    SearchStrategy,
    Snapshot,
    Thread,
    ThreadRecord,
    TimeToLiveAnchor,
    Visibility,
)
from memory.engine.stores.arguments import encode_cursor
from memory.engine.types import BUILTIN_RELATIONS, MEMORY_TYPES, SEARCHABLE_TYPES

from .conftest import oracle_connection
from .properties import (
    EXTREME_DATETIMES,
    FIXTURES_ARE_NOT_STATE,
    HUGE_INTS,
    IDS,
    PNG,
    Opaque,
    P,
    config_or_fields,
    connection_dump,
    content_value,
    cursor_param,
    dump_diff,
    enum_param,
    filter_param,
    flag_param,
    fresh_world,
    hostile_extraction_config,
    hostile_ids,
    hostile_image,
    hostile_int,
    hostile_messages,
    hostile_part,
    hostile_scalar,
    hostile_scope_object,
    hostile_search_config,
    hostile_text,
    hostile_timestamp,
    id_param,
    image_part,
    int_param,
    limit_param,
    long_list,
    metadata_param,
    nested_dict,
    nested_not,
    scope_param,
    store_dump,
    text_param,
    timestamp_param,
    ttl_days_param,
    valid_extraction_config,
    valid_image,
    valid_messages,
    valid_metadata,
    valid_mime,
    valid_part,
    valid_scope_object,
    valid_search_config,
    valid_text,
    valid_timestamp,
    version_param,
    wide_dict,
)

pytestmark = [
    # Hostile values include the deprecated inline extraction options and lifetimes over the cap:
    # their warnings are part of the contract, not failures.
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]

CONTRACT = (ValueError, TypeError)  # D3, and issue 12: a bad value is a ValueError or TypeError naming it
LOOKUP = (*CONTRACT, KeyError)  # D3: thread-layer (and client) reads/updates of a missing record
BARRIER = (*CONTRACT, TimeoutError)  # spec §4.3.7/§4.3.8: the 300 s background barrier of deletes
ALL_IDS = [i for pool in IDS.values() for i in pool]


@dataclass(frozen=True, repr=False)
class Spec:
    """How to call one public method, and what its contract lets it raise."""

    owner: str  # "client" (AgentMemory), "thread" (Thread t1) or "constructor" (AgentMemory(store, ...))
    name: str
    params: dict[str, P] = field(default_factory=dict)
    raises: tuple[type[BaseException], ...] = CONTRACT
    readonly: bool = False
    bases: tuple[tuple[str, dict[str, Any]], ...] = (("", {}),)
    """Named sets of valid arguments the sweep adds to the minimal call, one set at a time, so
    that a hostile value reaches the code behind a first check (a client search needs user_id)."""

    @property
    def label(self) -> str:
        return f"{self.owner}.{self.name}"

    def __repr__(self) -> str:  # the falsifying example names the method, not every generator
        return f"<{self.label}>"

    def kwargs(self, make: Callable[[P], st.SearchStrategy]) -> st.SearchStrategy:
        required = {n: make(p) for n, p in self.params.items() if p.required}
        optional = {n: make(p) for n, p in self.params.items() if not p.required}
        return st.fixed_dictionaries(required, optional=optional)


# --- parameter families ---------------------------------------------------------------------------


def choice(*values: Any, hostile: st.SearchStrategy = hostile_scalar) -> P:
    return P(st.sampled_from(values), hostile)


memory_type = choice(
    *MEMORY_TYPES, hostile=st.one_of(st.sampled_from(["message", "image", "thread", "Memory"]), hostile_scalar)
)
record_type_end = choice(
    *MEMORY_TYPES, hostile=st.one_of(st.sampled_from(["message", "image", "user_profile", ""]), hostile_scalar)
)
relation_type = choice(
    *BUILTIN_RELATIONS, "custom_rel", hostile=st.one_of(st.sampled_from(["", " ", "\x00", "\ud800"]), hostile_scalar)
)
opposite_type = choice(
    "is_superseded_by", "custom_back", hostile=st.one_of(st.sampled_from(["", " ", "\ud800"]), hostile_scalar)
)
new_memory_id = P(st.sampled_from(["new-mem-1", "new-mem-2", "mem-1", "msg-1", "mem-expired"]), hostile_ids(ALL_IDS))
new_image_id = P(st.sampled_from(["new-img-1", "img-1", "mem-1", "img-expired"]), hostile_ids(ALL_IDS))
token_list = P(
    st.lists(st.sampled_from(["change-1", "change-2"]), max_size=2),
    st.one_of(st.lists(hostile_ids(ALL_IDS), min_size=1, max_size=2), hostile_scalar),
    required=True,
)
new_relation_id = P(st.sampled_from(["new-rel-1", "rel-1", "mem-1"]), hostile_ids(ALL_IDS))
ttl_anchor = enum_param(TimeToLiveAnchor)
status = enum_param(RecordStatus)
batch_size = int_param(st.integers(1, 600))
record_types = P(
    st.one_of(st.lists(st.sampled_from(SEARCHABLE_TYPES), min_size=1, max_size=3, unique=True), st.just("memory")),
    st.one_of(
        st.sampled_from([[], ["nope"], [1], [["memory"]], {"memory": 1}, "thread", ("memory", None)]), hostile_scalar
    ),
)
memory_types = P(
    st.one_of(st.lists(st.sampled_from(MEMORY_TYPES), min_size=1, max_size=2, unique=True), st.none()),
    st.one_of(st.sampled_from([[], ["message"], [1], "memories", {"fact"}]), hostile_scalar),
)
relation_types = P(
    st.one_of(
        st.sampled_from([*BUILTIN_RELATIONS, "custom_rel"]),
        st.lists(st.sampled_from([*BUILTIN_RELATIONS]), min_size=1, max_size=2, unique=True),
    ),
    st.one_of(st.sampled_from([[], [""], [1], {"supports"}, "\x00"]), hostile_scalar),
)
small_int = int_param(st.integers(0, 8))
hops = int_param(st.integers(0, 5), 6, -1)
max_results = int_param(st.integers(1, 20))
budget = int_param(st.one_of(st.none(), st.integers(-5, 5000)))
query = text_param(st.sampled_from(["pizza", "sourdough pizza crust", "oven", "", "Naples"]))
information = text_param()
content = text_param(st.sampled_from(["a new memory about pizza", "", "x"]))
image = P(valid_image, hostile_image)
mime = P(valid_mime, st.one_of(st.sampled_from(["image/gif", "image/JPEG ", ""]), hostile_scalar))
description = P(st.one_of(st.text(max_size=20), st.none()), hostile_scalar)
timeout = P(
    st.sampled_from([0, 0.01, 1, None, float("inf")]),
    st.one_of(st.sampled_from([-1, float("nan"), -0.5]), hostile_scalar),
)
llm = P(st.none(), st.one_of(st.sampled_from([Opaque(), "gpt", 5, {"model": "x"}]), hostile_scalar))
image_limits = P(st.just(ImageInputLimitConfig()), hostile_scalar)
minimums = P(
    st.one_of(st.none(), st.dictionaries(st.sampled_from(["message", *MEMORY_TYPES]), st.integers(0, 3), max_size=2)),
    st.one_of(
        st.sampled_from(HUGE_INTS).map(lambda n: {"memory": n}),
        st.sampled_from([{"image": 1}, {"memory": -1}, {"memory": 1.5}, {"memory": True}, [("memory", 1)], "memory"]),
        hostile_scalar,
    ),
)
included_image_ids = P(
    st.one_of(st.none(), st.lists(st.sampled_from(IDS["image"]), max_size=2)),
    st.one_of(st.sampled_from(["img-part-1", [{"id": 1}], [["img-part-1"]], {"img-part-1": 1}, 5]), hostile_scalar),
)
per_message_metadata = P(
    st.one_of(valid_metadata, st.lists(valid_metadata, min_size=1, max_size=3)),
    st.one_of(
        st.lists(
            st.one_of(valid_metadata, st.builds(nested_dict, st.sampled_from([1000, 5000]))), min_size=1, max_size=3
        ),
        metadata_param().hostile,
    ),
)
per_message_ttl = P(
    st.one_of(ttl_days_param().valid, st.lists(ttl_days_param().valid, min_size=1, max_size=3)),
    st.one_of(st.lists(hostile_int, min_size=1, max_size=3), hostile_int),
)
messages = P(valid_messages, hostile_messages, required=True)
message_content = P(
    content_value(valid_part), st.one_of(content_value(st.one_of(valid_part, hostile_part)), hostile_scalar)
)


def scope_args(prefix: str = "") -> dict[str, P]:
    return {"user_id": scope_param("user"), "agent_id": scope_param("agent"), "thread_id": scope_param("thread")}


def search_params() -> dict[str, P]:
    return {
        "query": query.req(),
        **scope_args(),
        "exact_user_match": flag_param(),
        "exact_agent_match": flag_param(),
        "exact_thread_match": flag_param(),
        "max_results": max_results,
        "token_budget": budget,
        "soft_token_budget": budget,
        "record_types": record_types,
        "metadata_filter": filter_param(),
        "include_invalid_results": flag_param(),
        "num_hops": hops,
        "max_linked_results": int_param(st.integers(0, 100)),
        "scope": P(valid_scope_object, hostile_scope_object),
        "strategy": P(
            st.sampled_from([*SearchStrategy, *(member.value for member in SearchStrategy)]),
            st.one_of(st.sampled_from(["Hybrid", "", "bm25", "vector ", ["keyword"]]), hostile_scalar),
        ),
    }


def add_memory_params() -> dict[str, P]:
    return {
        "content": content.req(),
        "memory_type": memory_type,
        **scope_args(),
        "memory_id": new_memory_id,
        "metadata": metadata_param(),
        "timestamp": timestamp_param(),
        "ttl_days": ttl_days_param(),
        "ttl_anchor": ttl_anchor,
        "status": status,
        "autonomous_linking": flag_param(),
        "memory_id_to_link": id_param("memory"),
        "link_type": relation_type,
        "link_id": new_relation_id,
        "link_timestamp": timestamp_param(),
        "link_metadata": metadata_param(),
        "batch_size": batch_size,
    }


def add_image_params() -> dict[str, P]:
    return {
        "image": image.req(),
        "description": description,
        "mime_type": mime,
        "image_id": new_image_id,
        **scope_args(),
        "metadata": metadata_param(),
        "timestamp": timestamp_param(),
        "ttl_days": ttl_days_param(),
        "ttl_anchor": ttl_anchor,
        "batch_size": batch_size,
    }


def update_image_params() -> dict[str, P]:
    return {
        "image_id": id_param("image").req(),
        "image": image,
        "description": description,
        "mime_type": mime,
        "metadata": metadata_param(),
        "timestamp": timestamp_param(),
        "ttl_days": ttl_days_param(),
        "ttl_anchor": ttl_anchor,
        "expected_version": version_param(),
    }


def update_memory_params() -> dict[str, P]:
    return {
        "memory_id": id_param("memory").req(),
        "content": content,
        "metadata": metadata_param(),
        "timestamp": timestamp_param(),
        "ttl_days": ttl_days_param(),
        "ttl_anchor": ttl_anchor,
        "status": status,
        "memory_type": memory_type,
        "user_id": scope_param("user"),
        "agent_id": scope_param("agent"),
        "expires_at": P(st.one_of(st.none(), timestamp_param().valid), timestamp_param().hostile),
        "expected_version": version_param(),
    }


def link_params() -> dict[str, P]:
    return {
        "source_record_id": id_param("memory").req(),
        "source_record_type": record_type_end.req(),
        "target_record_id": id_param("memory").req(),
        "target_record_type": record_type_end.req(),
        "relation_type": relation_type.req(),
        "opposite_relation_type": opposite_type,
        "relation_id": new_relation_id,
        "timestamp": timestamp_param(),
        "metadata": metadata_param(),
    }


def update_link_params() -> dict[str, P]:
    return {
        "relation_id": id_param("relation").req(),
        "relation_type": relation_type,
        "opposite_relation_type": opposite_type,
        "timestamp": timestamp_param(),
        "metadata": metadata_param(),
        "expected_version": version_param(),
    }


def delete_link_params() -> dict[str, P]:
    return {
        "source_record_id": id_param("memory"),
        "source_record_type": record_type_end,
        "target_record_id": id_param("memory"),
        "target_record_type": record_type_end,
        "relation_type": relation_type,
        "relation_id": id_param("relation"),
        "expected_version": version_param(),
    }


def finding_filters() -> dict[str, P]:
    """The filters of the sensitive-data findings' listing and count."""
    return {
        "user_id": scope_param("user"),
        "agent_id": scope_param("agent"),
        "record_id": id_param("memory"),
        "kinds": P(
            st.lists(st.sampled_from(["card", "aws_key", "email"]), max_size=2),
            st.one_of(st.sampled_from([["nope"], "card", [1]]), hostile_scalar),
        ),
        "exclude": P(
            st.lists(st.sampled_from(["mem-1 abc", "x y"]), max_size=2),
            st.one_of(st.sampled_from(["mem-1 abc", [1]]), hostile_scalar),
        ),
    }


def listing(**params: P) -> dict[str, P]:
    return {**params, "limit": limit_param(), "cursor": cursor_param()}


listing_text = text_param(st.sampled_from(["pizza", "PIZZA", "50%", "a_b", "", "mem-1", '"n":1', "Ünï"]))


def record_listing(**params: P) -> dict[str, P]:
    """A listing of records: the scope and metadata filters, and status, order and text."""
    return listing(
        **params,
        status=choice(
            "valid",
            "invalid",
            "expired",
            RecordStatus.INVALID,
            hostile=st.one_of(st.sampled_from(["Valid", "", "live"]), hostile_scalar),
        ),
        newest_first=flag_param(),
        text=listing_text,
    )


# --- the methods ---------------------------------------------------------------------------------

CREATED = "2024-01-01T00:00:00.000000+00:00"
PAST = "2000-01-01T00:00:00Z"
activity_time = P(
    st.sampled_from([None, PAST, "2999-01-01", CREATED]),
    st.one_of(st.sampled_from(["yesterday", "2024-13-01", ""]), hostile_scalar),
)
activity_caller_kind = choice(
    None, "agent", "person", hostile=st.one_of(st.sampled_from(["agents", ""]), hostile_scalar)
)


def activity_filters() -> dict[str, P]:
    """The filters of the activity log's listing and counts (AgentMemory.list_activity)."""
    return {
        "kind": P(
            st.sampled_from([None, "search", "write", ["card", "summary"]]),
            st.one_of(st.sampled_from(["searches", [], ["search", 1], ""]), hostile_scalar),
        ),
        "caller": P(st.sampled_from([None, "support-bot"]), hostile_ids(ALL_IDS)),
        "caller_kind": activity_caller_kind,
        "user_id": P(st.sampled_from([None, *IDS["user"]]), hostile_ids(ALL_IDS)),
        "agent_id": P(st.sampled_from([None, *IDS["agent"]]), hostile_ids(ALL_IDS)),
        "thread_id": P(st.sampled_from([None, *IDS["thread"]]), hostile_ids(ALL_IDS)),
        "record_id": P(st.sampled_from([None, *IDS["memory"]]), hostile_ids(ALL_IDS)),
        "q": P(st.sampled_from([None, "pizza", "50%", ""]), st.one_of(st.just("q" * 1_001), hostile_scalar)),
        "since": activity_time,
        "until": activity_time,
    }


def restored_fact(memory_id: str) -> MemoryRecord:
    return MemoryRecord(
        id=memory_id,
        record_type="fact",
        content="a restored pizza fact",
        timestamp=CREATED,
        created_at=CREATED,
        user_id="u1",
        thread_id="t1",
    )


def restored_link(source: str, target: str, relation_id: str = "rel-new") -> RecordRelation:
    return RecordRelation(
        id=relation_id,
        source_record_id=source,
        source_record_type="fact",
        target_record_id=target,
        target_record_type="preference",
        relation_type="supersedes",
        opposite_relation_type="is_superseded_by",
        created_at=CREATED,
    )


snapshot_value = P(
    st.sampled_from(
        [
            Snapshot(),
            Snapshot(records=[restored_fact("restored-1")]),
            Snapshot(records=[restored_fact("mem-3")]),  # taken: an error unless skip_existing
            Snapshot(records=[restored_fact("restored-2")], relations=[restored_link("restored-2", "mem-1")]),
            Snapshot(threads=[ThreadRecord(id="t-restored", user_id="u1", created_at=CREATED, updated_at=CREATED)]),
        ]
    ),
    st.one_of(
        st.sampled_from(
            [
                {"format": 1, "threads": [], "records": [], "relations": []},
                Snapshot(records=[restored_fact("x" * 600)]),
                Snapshot(records=[restored_fact("dup"), restored_fact("dup")]),
                Snapshot(records=["not a record"]),  # type: ignore[list-item]
                Snapshot(records=[restored_fact("r-3")], relations=[restored_link("r-3", "r-3")]),
                Snapshot(threads=[ThreadRecord(id="t-new", settings={"a": Opaque()})]),
                Snapshot(records=[restored_fact("r-4")], relations=[restored_link("r-4", "mem-2", "rel-1")]),
            ]
        ),
        hostile_scalar,
    ),
    required=True,
)
LINKED = {"memory_id_to_link": "mem-1", "link_type": "supports"}
FREE_PAIR = {  # two memories of thread t1 with no link between them yet
    "source_record_id": "mem-ts",
    "source_record_type": "memory",
    "target_record_id": "mem-1",
    "target_record_type": "preference",
    "relation_type": "supports",
}

SPECS = [
    # AgentMemory's constructor writes nothing; its options are checked like a method's arguments.
    Spec(
        "constructor",
        "AgentMemory",
        {
            "llm": llm,
            "memory_extraction_config": P(valid_extraction_config, hostile_extraction_config),
            "image_input_limit_config": image_limits,
            "search_config": P(valid_search_config, hostile_search_config),
            "extraction_queue_capacity": int_param(st.integers(1, 100)),
            "extraction_workers": int_param(st.integers(1, 4)),
            "caller": P(st.sampled_from([None, "support-bot"]), hostile_scalar),
            "record_activity": flag_param(),
            "activity_config": P(
                st.sampled_from([None, ActivityConfig(), ActivityConfig(enabled=False)]), hostile_scalar
            ),
        },
        readonly=True,
    ),
    # --- AgentMemory ---
    Spec(
        "client",
        "create_thread",
        {
            "thread_id": P(st.sampled_from(["t1", "t2", "t-new"]), hostile_ids(ALL_IDS)),
            "user_id": scope_param("user"),
            "agent_id": scope_param("agent"),
            "metadata": metadata_param(),
            "search_config": P(valid_search_config, hostile_search_config),
            "llm": llm,
            "memory_extraction_config": P(valid_extraction_config, hostile_extraction_config),
            "image_input_limit_config": image_limits,
            "context_card_token_limit": int_param(st.integers(-5, 10**6)),
            "context_card_type_search_concurrency": int_param(st.integers(1, 8)),
            "max_message_token_length": int_param(st.integers(-5, 10**6)),
            "message_shortening_input_token_limit": int_param(st.integers(-5, 10**6)),
            "memory_extraction_window": int_param(st.sampled_from([-1, 1, 5])),
            "enable_context_summary": flag_param(),
        },
    ),
    Spec("client", "get_thread", {"thread_id": id_param("thread").req()}, LOOKUP, readonly=True),
    Spec("client", "get_thread_record", {"thread_id": id_param("thread").req()}, LOOKUP, readonly=True),
    Spec(
        "client",
        "list_thread_messages",
        {
            "thread_id": id_param("thread").req(),
            "start": int_param(st.integers(0, 5), -1),
            "limit": int_param(st.one_of(st.integers(1, 5), st.none()), 0, -1),
        },
        readonly=True,
    ),
    Spec(
        "client",
        "list_thread_messages_by_seq_no",
        {
            "thread_id": id_param("thread").req(),
            "last_n": int_param(st.one_of(st.integers(1, 5), st.none()), 0, -1),
            "range_start_seq_no": int_param(st.one_of(st.integers(0, 5), st.none()), -1),
            "range_end_seq_no": int_param(st.one_of(st.integers(0, 5), st.none()), -1),
        },
        readonly=True,
    ),
    Spec(
        "client",
        "count_thread_messages",
        {
            "thread_id": id_param("thread").req(),
            "through_seq_no": int_param(st.one_of(st.integers(0, 5), st.none()), -1),
        },
        readonly=True,
    ),
    Spec(
        "client",
        "get_message_record",
        {"thread_id": id_param("thread").req(), "message_id": id_param("message").req()},
        LOOKUP,
        readonly=True,
    ),
    Spec(
        "client",
        "memories_from_message",
        listing(thread_id=id_param("thread").req(), message_id=id_param("message").req()),
        readonly=True,
    ),
    Spec(
        "client",
        "update_thread",
        {"thread_id": id_param("thread").req(), "metadata": metadata_param(), "expected_version": version_param()},
        LOOKUP,
    ),
    # delete_thread first waits for the thread's accepted background work: TimeoutError after 300 s.
    Spec(
        "client",
        "delete_thread",
        {"thread_id": id_param("thread").req(), "expected_version": version_param()},
        BARRIER,
    ),
    Spec(
        "client",
        "list_threads",
        listing(
            user_id=scope_param("user"),
            agent_id=scope_param("agent"),
            metadata_filter=filter_param(),
            text=listing_text,
        ),
        readonly=True,
    ),
    Spec("client", "add_memory", add_memory_params(), bases=(("", {}), ("linked", LINKED))),
    Spec("client", "get_memory", {"memory_id": id_param("memory").req()}, LOOKUP, readonly=True),
    Spec(
        "client",
        "get_image",
        {"image_id": id_param("image").req(), "include_bytes": flag_param()},
        LOOKUP,
        readonly=True,
    ),
    Spec("client", "update_memory", update_memory_params(), LOOKUP),
    Spec("client", "delete_memory", {"memory_id": id_param("memory").req(), "expected_version": version_param()}),
    Spec(
        "client",
        "list_memories",
        record_listing(
            **scope_args(),
            memory_types=memory_types,
            metadata_filter=filter_param(),
            expires_before=P(valid_timestamp.filter(lambda value: value is not None), hostile_timestamp),
        ),
        readonly=True,
    ),
    Spec(
        "client",
        "count_memories",
        {
            key: param
            for key, param in record_listing(
                **scope_args(),
                memory_types=memory_types,
                metadata_filter=filter_param(),
                expires_before=P(valid_timestamp.filter(lambda value: value is not None), hostile_timestamp),
            ).items()
            if key not in ("limit", "cursor", "newest_first")
        },
        readonly=True,
    ),
    Spec(
        "client",
        "memory_facets",
        {
            "facets": P(
                st.lists(
                    st.sampled_from(["memory_type", "status", "user_id", "agent_id", "tag"]), max_size=3, unique=True
                ),
                st.one_of(st.sampled_from([["content"], ["record_type"], [None], [5], "tags"]), hostile_scalar),
                required=True,
            ),
            **{
                key: param
                for key, param in record_listing(
                    **scope_args(), memory_types=memory_types, metadata_filter=filter_param()
                ).items()
                if key not in ("limit", "cursor", "newest_first")
            },
        },
        readonly=True,
    ),
    Spec("client", "count_expired", scope_args(), readonly=True),
    Spec(
        "client",
        "thread_facets",
        {
            "facets": P(
                st.lists(st.sampled_from(["user_id", "agent_id", "tag"]), max_size=3, unique=True),
                st.one_of(st.sampled_from([["thread_id"], ["status"], [None], [5], "tags"]), hostile_scalar),
                required=True,
            ),
            "user_id": scope_param("user"),
            "agent_id": scope_param("agent"),
            "metadata_filter": filter_param(),
            "text": listing_text,
        },
        readonly=True,
    ),
    Spec(
        "client",
        "count_relations",
        {
            "record_id": id_param("memory"),
            **scope_args(),
            "relation_types": relation_types,
            "relation_ids": P(
                st.lists(st.sampled_from([*IDS["relation"], "missing-id"]), max_size=3),
                st.one_of(st.sampled_from(["rel-1", [None], [["rel-1"]], {"rel-1": 1}]), hostile_scalar),
            ),
            "metadata_filter": filter_param(),
        },
        readonly=True,
    ),
    Spec(
        "client",
        "memory_vectors",
        {
            "user_id": id_param("user").req(),
            "memory_types": memory_types,
            "status": record_listing()["status"],
            "limit": int_param(st.integers(1, 5), 0, -1),
        },
        readonly=True,
    ),
    Spec("client", "vector_state", {}, readonly=True),
    Spec("client", "health", {}, readonly=True),
    Spec(
        "client",
        "settle_outcome",
        {
            "token": P(st.sampled_from(["change-1", "change-2"]), hostile_ids(ALL_IDS), required=True),
            "outcome": choice(
                "committed", "aborted", hostile=st.one_of(st.sampled_from(["Committed", ""]), hostile_scalar)
            ),
        },
    ),
    Spec("client", "outcomes", {"tokens": token_list}, readonly=True),
    Spec("client", "forget_outcomes", {"tokens": token_list}),
    Spec("client", "list_expired", listing(**scope_args()), readonly=True),
    Spec("client", "purge_expired", {}),
    Spec("client", "list_messages", record_listing(**scope_args(), metadata_filter=filter_param()), readonly=True),
    Spec("client", "add_image", add_image_params()),
    Spec(
        "client",
        "update_image",
        update_image_params(),
        LOOKUP,
        bases=(("", {}), ("new image", {"image": PNG, "mime_type": "image/png"})),
    ),
    Spec("client", "delete_image", {"image_id": id_param("image").req(), "expected_version": version_param()}),
    Spec(
        "client",
        "list_images",
        {
            "image_id": id_param("image"),
            **scope_args(),
            "metadata_filter": filter_param(),
            "include_bytes": flag_param(),
            "limit": limit_param(),
            "cursor": cursor_param(),
        },
        readonly=True,
    ),
    Spec("client", "link_records", link_params(), bases=(("", FREE_PAIR),)),
    Spec("client", "update_record_link", update_link_params()),
    Spec("client", "delete_record_link", delete_link_params(), bases=(("", {}), ("by tuple", FREE_PAIR))),
    Spec("client", "get_relation", {"relation_id": id_param("relation").req()}, LOOKUP, readonly=True),
    Spec(
        "client",
        "list_relations",
        listing(record_id=id_param("memory"), **scope_args(), relation_types=relation_types),
        readonly=True,
    ),
    Spec(
        "client",
        "memory_graph",
        {
            "user_id": id_param("user"),
            "agent_id": id_param("agent"),
            "thread_id": id_param("thread"),
            "memory_id": id_param("memory"),
            "hops": hops,
            "relation_types": P(
                st.one_of(
                    st.none(),
                    st.sampled_from([*BUILTIN_RELATIONS, "custom_rel"]),
                    st.lists(st.sampled_from([*BUILTIN_RELATIONS, "custom_rel"]), min_size=1, max_size=3),
                ),
                st.one_of(st.sampled_from([[], [""], [" "], ["\x00"], [5], {"supports": 1}]), hostile_scalar),
            ),
            "memory_types": memory_types,
            "statuses": P(
                st.one_of(
                    st.none(),
                    st.sampled_from(["valid", "invalid", RecordStatus.VALID]),
                    st.lists(st.sampled_from(["valid", "invalid"]), min_size=1, max_size=2),
                ),
                st.one_of(st.sampled_from([[], ["expired"], "Valid", [None], {"valid": 1}]), hostile_scalar),
            ),
            "max_nodes": int_param(st.integers(1, 10_000), 0, 10_001),
        },
        LOOKUP,  # a missing or expired memory_id
        readonly=True,
        bases=(("", {}), ("user", {"user_id": "u1"}), ("memory", {"memory_id": "mem-2", "hops": 2})),
    ),
    Spec(
        "client",
        "find_duplicates",
        {
            "user_id": scope_param("user").req(),
            "max_distance": P(
                st.one_of(st.sampled_from([0, 0.25, 0.5]), st.floats(0, 0.5)),
                st.one_of(st.sampled_from([-0.01, 0.51, 2, float("nan"), float("inf"), "0.2", True]), hostile_scalar),
            ),
            "memory_types": memory_types,
            "statuses": P(
                st.one_of(st.none(), st.sampled_from(["valid", "invalid"]), st.just(["valid", "invalid"])),
                st.one_of(st.sampled_from([[], ["expired"], "Valid", [None]]), hostile_scalar),
            ),
            "limit": int_param(st.integers(1, 1000), 0, 1001),
        },
        readonly=True,
        bases=(("", {}), ("user", {"user_id": "u1", "max_distance": 0.5})),
    ),
    Spec(
        "client",
        "duplicate_group_counts",
        {
            "user_ids": P(
                st.lists(st.sampled_from([*IDS["user"], "missing-id"]), max_size=3),
                st.one_of(st.sampled_from(["u1", [None], [["u1"]], [""], {"u1": 1}]), hostile_scalar),
                required=True,
            ),
            "max_distance": P(
                st.one_of(st.sampled_from([0, 0.25, 0.5]), st.floats(0, 0.5)),
                st.one_of(st.sampled_from([-0.01, 0.51, 2, float("nan"), float("inf"), "0.2", True]), hostile_scalar),
            ),
            "memory_types": memory_types,
            "statuses": P(
                st.one_of(st.none(), st.sampled_from(["valid", "invalid"]), st.just(["valid", "invalid"])),
                st.one_of(st.sampled_from([[], ["expired"], "Valid", [None]]), hostile_scalar),
            ),
        },
        readonly=True,
    ),
    Spec(
        "client",
        "lifecycle",
        {
            "memory_ids": P(
                st.lists(st.sampled_from([*IDS["memory"], *IDS["message"], "missing-id", ""]), max_size=5),
                st.one_of(st.sampled_from(["mem-1", [None], [["mem-1"]], ("mem-1", 5), {"mem-1": 1}]), hostile_scalar),
                required=True,
            )
        },
        readonly=True,
    ),
    Spec(
        "client",
        "add_user",
        {"user_id": scope_param("user").req(), "information": information.req(), "expected_version": version_param()},
    ),
    Spec(
        "client",
        "add_agent",
        {"agent_id": scope_param("agent").req(), "information": information.req(), "expected_version": version_param()},
    ),
    Spec("client", "list_activity", listing(**activity_filters(), include_content=flag_param()), readonly=True),
    Spec("client", "activity_counts", activity_filters(), readonly=True),
    Spec(
        "client",
        "get_activity",
        {"event_id": P(st.sampled_from(["missing-event", "", "x" * 70]), hostile_scalar, required=True)},
        LOOKUP,
        readonly=True,
    ),
    Spec(
        "client",
        "served_records",
        {
            "record_ids": P(
                st.lists(st.sampled_from([*IDS["memory"], "missing-id"]), max_size=4),
                st.one_of(st.sampled_from(["mem-1", [None], [["mem-1"]], ("mem-1", 5)]), hostile_scalar),
                required=True,
            ),
            "since": activity_time,
            "caller_kind": activity_caller_kind,
        },
        readonly=True,
    ),
    Spec(
        "client",
        "activity_hygiene",
        {
            "since": P(st.sampled_from([PAST, "2999-01-01T00:00:00Z"]), activity_time.hostile, required=True),
            "limit": int_param(st.integers(1, 20)),
            "caller_kind": activity_caller_kind,
        },
        readonly=True,
    ),
    Spec("client", "purge_activity", {"before": activity_time}, readonly=True),
    Spec(
        "client",
        "record_view",
        {
            "call": P(st.sampled_from(["GET /memories/{memory_id}/"]), hostile_scalar, required=True),
            "records": P(
                st.sampled_from([[], [restored_fact("mem-1")], (ThreadRecord(id="t1", user_id="u1"),)]),
                st.one_of(st.sampled_from([[None], ["mem-1"], [{"id": "mem-1"}], "mem-1"]), hostile_scalar),
            ),
            "user_id": scope_param("user"),
            "agent_id": scope_param("agent"),
            "thread_id": scope_param("thread"),
        },
        readonly=True,
    ),
    Spec("client", "check", {"repair": flag_param(), "examples": int_param(st.integers(1, 10))}),
    Spec(
        "client",
        "stats",
        {"thread_id": id_param("thread"), "user_id": id_param("user"), "agent_id": id_param("agent")},
        readonly=True,
    ),
    Spec(
        "client",
        "owner_counts",
        {
            "owner": choice(
                "user", "agent", hostile=st.one_of(st.sampled_from(["users", "thread", ""]), hostile_scalar)
            ).req(),
            "ids": P(
                st.lists(st.sampled_from([*IDS["user"], *IDS["agent"], "missing-id"]), max_size=4),
                st.one_of(st.sampled_from(["u1", [""], [None], [["u1"]], ("u1", 5)]), hostile_scalar),
                required=True,
            ),
        },
        readonly=True,
    ),
    Spec(
        "client",
        "linked_owners",
        {
            "owner": choice(
                "user", "agent", hostile=st.one_of(st.sampled_from(["users", "thread", ""]), hostile_scalar)
            ).req(),
            "limit": int_param(st.integers(1, 20), 0, -1),
        },
        readonly=True,
    ),
    Spec(
        "client",
        "snapshot",
        {
            "record_ids": P(
                st.lists(
                    st.tuples(
                        st.sampled_from(["message", "fact", "preference", "memory", "image", "user_profile"]),
                        st.sampled_from(ALL_IDS),
                    ),
                    max_size=3,
                ),
                st.one_of(
                    st.sampled_from(["mem-1", [("fact",)], [("thread", "t1")], [["fact", 5]], {"fact": "m"}]),
                    hostile_scalar,
                ),
            ),
            "thread_id": id_param("thread"),
            "user_id": id_param("user"),
            "agent_id": id_param("agent"),
        },
        readonly=True,
    ),
    Spec(
        "client", "restore", {"snapshot": snapshot_value, "skip_existing": flag_param(), "keep_versions": flag_param()}
    ),
    Spec("client", "get_user", {"user_id": id_param("user").req()}, LOOKUP, readonly=True),
    Spec("client", "get_agent", {"agent_id": id_param("agent").req()}, LOOKUP, readonly=True),
    Spec("client", "delete_user", {"user_id": scope_param("user").req(), "cascade": flag_param()}),
    Spec("client", "delete_agent", {"agent_id": scope_param("agent").req(), "cascade": flag_param()}),
    Spec(
        "client", "erase_user", {"user_id": scope_param("user").req(), "dry_run": flag_param(), "scrub": flag_param()}
    ),
    Spec(
        "client",
        "scrub_files",
        {"vacuum": P(st.sampled_from([None, True, False]), st.one_of(st.sampled_from(["yes", 1, 0]), hostile_scalar))},
    ),
    Spec("client", "list_findings", listing(**finding_filters()), readonly=True),
    Spec("client", "count_findings", finding_filters(), readonly=True),
    Spec("client", "get_finding", {"finding_id": P(st.sampled_from(["1", "2", "999"]), hostile_scalar).req()}, LOOKUP),
    Spec(
        "client",
        "rescan_findings",
        {"after": int_param(st.integers(0, 100)), "batch": int_param(st.integers(1, 600))},
    ),
    Spec("client", "count_texts", {}, readonly=True),
    Spec(
        "client",
        "redact_activity",
        {
            "value": P(st.sampled_from(["pizza", "AKIAIOSFODNN7EXAMPLE"]), hostile_scalar).req(),
            "replacement": P(st.sampled_from(["[REDACTED:aws_key]", ""]), hostile_scalar).req(),
        },
    ),
    Spec("client", "list_users", listing(), readonly=True),
    Spec("client", "list_agents", listing(), readonly=True),
    Spec(
        "client",
        "search",
        search_params(),
        readonly=True,
        bases=(("", {"user_id": "u1"}), ("2 hops", {"user_id": "u1", "num_hops": 2})),
    ),
    Spec("client", "extraction_stats", {}, readonly=True),
    Spec(
        "client",
        "restricted",
        {
            "visibility": P(
                st.builds(
                    Visibility,
                    users=st.one_of(st.none(), st.lists(st.sampled_from(["u1", "u2", "zz"]), min_size=1)),
                    agents=st.one_of(st.none(), st.lists(st.sampled_from(["a1", "zz"]), min_size=1)),
                ),
                st.one_of(hostile_scalar, st.just({"users": ["u1"]})),
            ).req()
        },
        readonly=True,
    ),
    # --- Thread (t1: user u1, agent a1) ---
    # add_messages may raise TimeoutError when its background work finds the queue full and the
    # config says WAIT_THEN_RAISE (spec §4.3.1); that needs an LLM, which these threads lack.
    Spec(
        "thread",
        "add_messages",
        {
            "messages": messages,
            "metadata": per_message_metadata,
            "ttl_days": per_message_ttl,
            "ttl_anchor": ttl_anchor,
            "batch_size": batch_size,
        },
        BARRIER,
    ),
    Spec(
        "thread",
        "get_message",
        {"message_id": id_param("message").req(), "included_image_ids": included_image_ids},
        LOOKUP,
        readonly=True,
    ),
    Spec(
        "thread",
        "get_messages",
        {
            "start": int_param(st.one_of(st.none(), st.integers(-5, 10))),
            "end": int_param(st.one_of(st.none(), st.integers(-1, 10))),
            "include_image_bytes": flag_param(),
        },
        readonly=True,
    ),
    Spec(
        "thread",
        "update_message",
        {
            "message_id": id_param("message").req(),
            "content": message_content,
            "metadata": metadata_param(),
            "ttl_days": ttl_days_param(),
            "ttl_anchor": ttl_anchor,
            "role": P(st.sampled_from(["user", "assistant", "tool"]), text_param().hostile),
            "timestamp": timestamp_param(),
            "expires_at": P(st.one_of(st.none(), timestamp_param().valid), timestamp_param().hostile),
            "expected_version": version_param(),
        },
        (*LOOKUP, TimeoutError),  # TimeoutError: as add_messages, when re-extraction cannot be queued
    ),
    Spec(
        "thread",
        "delete_message",
        {"message_id": id_param("message").req(), "expected_version": version_param()},
        BARRIER,
    ),
    Spec("thread", "add_memory", add_memory_params(), bases=(("", {}), ("linked", LINKED))),
    Spec("thread", "update_memory", update_memory_params(), LOOKUP),
    Spec(
        "thread",
        "delete_memory",
        {"memory_id": id_param("memory").req(), "expected_version": version_param()},
        BARRIER,
    ),
    Spec("thread", "add_image", add_image_params()),
    Spec(
        "thread",
        "update_image",
        update_image_params(),
        LOOKUP,
        bases=(("", {}), ("new image", {"image": PNG, "mime_type": "image/png"})),
    ),
    Spec("thread", "delete_image", {"image_id": id_param("image").req(), "expected_version": version_param()}),
    Spec(
        "thread",
        "list_images",
        {
            "image_id": id_param("image"),
            "metadata_filter": filter_param(),
            "include_bytes": flag_param(),
            "limit": limit_param(),
        },
        readonly=True,
    ),
    Spec("thread", "link_records", link_params(), bases=(("", FREE_PAIR),)),
    Spec("thread", "update_record_link", update_link_params()),
    Spec("thread", "delete_record_link", delete_link_params(), bases=(("", {}), ("by tuple", FREE_PAIR))),
    Spec(
        "thread",
        "get_context_card",
        {
            "fallback_message_count": small_int,
            "max_relevant_results": small_int,
            "token_budget": budget,
            "soft_token_budget": budget,
            "max_recent_messages": small_int,
            "except_last_messages": small_int,
            "min_relevant_results_by_type": minimums,
            "metadata_filter": filter_param(),
            "include_invalid_results": flag_param(),
            "as_of_message_id": id_param("message"),
            "refresh_summary_if_due": flag_param(),
        },
        LOOKUP,  # as_of_message_id: a missing, expired or other thread's message, as the thread's reads
        readonly=True,
    ),
    Spec("thread", "get_summary", {"except_last": small_int, "token_budget": budget}, readonly=True),
    Spec("thread", "search", search_params(), readonly=True, bases=(("", {}), ("2 hops", {"num_hops": 2}))),
    # wait_for_memory_extraction's documented error is TimeoutError (spec §4.3.19).
    Spec("thread", "wait_for_memory_extraction", {"timeout": timeout}, BARRIER, readonly=True),
    # Without an LLM, run_memory_extraction and refresh_summary are ValueErrors, refresh_summary_if_due a no-op.
    Spec("thread", "run_memory_extraction", {"include_extracted": flag_param()}, readonly=True),
    Spec("thread", "refresh_summary", {}, readonly=True),
    Spec(
        "thread",
        "set_summary",
        {
            "summary": P(st.one_of(st.none(), valid_text), hostile_text).req(),
            "topics": P(
                st.one_of(st.none(), st.lists(valid_text, max_size=3)),
                st.one_of(st.sampled_from([["food", 1], "food", [None], [["food"]], {"food": 1}]), hostile_scalar),
            ),
            "summarized_through": int_param(st.integers(-1, 5), -2),
            "expected_version": version_param(),
        },
    ),
    Spec("thread", "refresh_summary_if_due", {}, readonly=True),
    Spec("thread", "messages_due_for_summary", {}, readonly=True),
]
BY_LABEL = {spec.label: spec for spec in SPECS}
NOT_COVERED = {
    "client.close": "it closes the store the other calls need; it takes no arguments",
    "client.transaction": "a context manager without arguments; test_client_api.py tests it",
    "client.reembed": "it moves the whole store to another dimension; tests/engine/test_reembed.py checks it",
}


def test_every_public_method_has_a_spec_with_its_real_parameters():
    """New public methods (and new parameters) must get a generator here."""
    for owner, cls in (("client", AgentMemory), ("thread", Thread)):
        for name, member in inspect.getmembers(cls, callable):
            if name.startswith("_") or name.endswith("_async"):
                continue
            label = f"{owner}.{name}"
            if label in NOT_COVERED:
                continue
            assert label in BY_LABEL, f"{label} has no Spec in test_contract_properties.py"
            signature = inspect.signature(member)
            named = {p.name for p in signature.parameters.values() if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
            named.discard("self")
            missing = named - set(BY_LABEL[label].params)
            assert not missing, f"{label}: no generator for {sorted(missing)}"


# --- calling ---------------------------------------------------------------------------------


@pytest.fixture
def live_backend(backend: str) -> str:
    if backend == "oracle":
        oracle_connection().close()  # skips without a server
    return backend


def invoke(world: Any, spec: Spec, kwargs: dict[str, Any], via_async: bool) -> Any:
    if spec.owner == "constructor":
        return AgentMemory(world.store, **kwargs)
    target = world.memory if spec.owner == "client" else world.thread
    if via_async:
        return asyncio.run(getattr(target, f"{spec.name}_async")(**kwargs))
    return getattr(target, spec.name)(**kwargs)


def has_twin(spec: Spec) -> bool:
    owner = {"client": AgentMemory, "thread": Thread}.get(spec.owner)
    return owner is not None and hasattr(owner, f"{spec.name}_async")


def short(error: BaseException) -> str:
    text = str(error)
    return text if len(text) <= 300 else text[:297] + "..."


def brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}...({len(text)} characters)"


def check_contract(world: Any, spec: Spec, kwargs: dict[str, Any], via_async: bool = False) -> None:
    """Call once; fail on an exception outside the contract, or on any change a failure left.

    A failure says both: whether the exception is the contract's, and whether the store changed."""
    before = store_dump(world.store)
    allowed = ", ".join(e.__name__ for e in spec.raises)
    try:
        invoke(world, spec, kwargs, via_async)
    except Exception as error:
        diff = dump_diff(before, store_dump(world.store))
        inside = isinstance(error, spec.raises)
        if inside and not diff:
            return
        what = "" if inside else f"; its contract allows only {allowed}"
        change = f" and the store changed:\n{diff}" if diff else " (the store is unchanged)"
        raise AssertionError(f"{spec.label} raised {type(error).__name__} ({short(error)}){what}{change}") from error
    if spec.readonly:
        diff = dump_diff(before, store_dump(world.store))
        assert not diff, f"{spec.label} is a read but changed the store:\n{diff}"


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.label)
@settings(suppress_health_check=FIXTURES_ARE_NOT_STATE)
@given(data=st.data())
def test_hostile_arguments_raise_only_contract_errors_and_a_failure_changes_nothing(
    spec: Spec, live_backend: str, tmp_path, data
):
    shape = data.draw(st.sampled_from(["one hostile", "mixed"]), label="shape")
    if shape == "mixed" or not spec.params:
        kwargs = data.draw(spec.kwargs(P.mixed), label="kwargs")
    else:
        kwargs = data.draw(spec.kwargs(lambda p: p.valid), label="valid kwargs")
        name = data.draw(st.sampled_from(sorted(spec.params)), label="hostile parameter")
        kwargs[name] = data.draw(spec.params[name].hostile, label=f"hostile {name}")
    if data.draw(st.integers(0, 9), label="9: add an unknown keyword") == 9:
        kwargs["unknown_option"] = 1
    via_async = has_twin(spec) and data.draw(st.integers(0, 3), label="3: call the _async twin") == 3
    with fresh_world(live_backend, tmp_path) as world:
        check_contract(world, spec, kwargs, via_async)


# --- the escape classes seen before, on every run ------------------------------------------------

DEEP_FILTERS = [nested_dict(12), nested_not(12), wide_dict(1000), {"tags": long_list(400)}, {"n": 2**64}]
KNOWN_ESCAPES = [
    # A late image failure: the message row is already written when the image part fails.
    ("thread.add_messages", {"messages": [{"role": "user", "content": [image_part(description=5)]}]}),
    ("thread.add_messages", {"messages": [{"role": "user", "content": [image_part(timestamp=EXTREME_DATETIMES[0])]}]}),
    ("thread.add_messages", {"messages": [{"role": "user", "content": [image_part(id="img-1")]}]}),
    (
        "thread.add_messages",
        {"messages": [{"role": "user", "content": [image_part(timestamp="9999-12-31T23:00:00-05:00")]}]},
    ),
    ("thread.update_message", {"message_id": "msg-1", "content": [image_part(description=5)]}),
    ("thread.update_message", {"message_id": "msg-1", "content": [image_part(timestamp="0001-01-01T00:00:00+05:00")]}),
    # add_memory's link fails after the memory is stored.
    ("thread.add_memory", {"content": "x", "memory_id_to_link": "mem-1", "link_type": "supports", "link_id": "rel-1"}),
    ("client.add_memory", {"content": "x", "memory_id_to_link": "mem-1", "link_type": "supports", "link_id": 5}),
    (
        "client.add_memory",
        {
            "content": "x",
            "memory_id_to_link": "mem-1",
            "link_type": "supports",
            "link_timestamp": "9999-12-31T23:00:00-05:00",
        },
    ),
    (
        "client.add_memory",
        {"content": "x", "memory_id_to_link": "mem-1", "link_type": "supports", "link_metadata": nested_dict(5000)},
    ),
    # Timestamps outside years 1-9999 once in UTC.
    ("thread.add_memory", {"content": "x", "timestamp": "9999-12-31T23:00:00-05:00"}),
    ("thread.add_memory", {"content": "x", "timestamp": "0001-01-01T00:00:00+05:00"}),
    ("client.update_memory", {"memory_id": "mem-1", "timestamp": "9999-12-31T23:00:00-05:00"}),
    ("thread.add_image", {"image": PNG, "timestamp": "0001-01-01T00:00:00+05:00"}),
    (
        "client.link_records",
        {
            "source_record_id": "mem-c",
            "source_record_type": "memory",
            "target_record_id": "mem-1",
            "target_record_type": "preference",
            "relation_type": "supports",
            "timestamp": "9999-12-31T23:00:00-05:00",
        },
    ),
    ("client.update_record_link", {"relation_id": "rel-1", "timestamp": "0001-01-01T00:00:00+05:00"}),
    # Integers beyond 64 bits.
    ("client.list_memories", {"limit": 2**64}),
    ("client.list_threads", {"limit": 2**63}),
    ("client.list_relations", {"cursor": encode_cursor(2**64)}),
    ("client.list_threads", {"cursor": encode_cursor("9999-12-31T23:00:00-05:00", "t1")}),
    ("thread.get_messages", {"start": 2**64}),
    ("thread.get_messages", {"start": 0, "end": 2**64}),
    ("thread.search", {"query": "pizza", "max_results": 2**63}),
    ("thread.get_summary", {"token_budget": 2**1100}),
    ("thread.get_context_card", {"min_relevant_results_by_type": {"memory": 2**64}}),
    ("thread.add_memory", {"content": "x", "batch_size": 2**64}),
    # Deep, wide and huge metadata and filters.
    ("thread.add_memory", {"content": "x", "metadata": nested_dict(5000)}),
    ("thread.update_message", {"message_id": "msg-1", "metadata": nested_dict(5000)}),
    *[("thread.search", {"query": "pizza", "metadata_filter": f}) for f in DEEP_FILTERS],
    *[("client.list_memories", {"metadata_filter": f}) for f in DEEP_FILTERS],
    ("thread.list_images", {"metadata_filter": nested_dict(12)}),
    # Ids holding a NUL character (SQLite's JSON functions end text there).
    ("thread.add_messages", {"messages": [{"role": "user", "content": [image_part(id="p\x00")]}]}),
    ("thread.add_messages", {"messages": [{"role": "user", "content": "x", "id": "msg-1\x00"}]}),
    ("client.add_memory", {"content": "x", "memory_id": "mem-1\x00"}),
    ("client.add_image", {"image": PNG, "image_id": "img-1\x00"}),
    ("client.link_records", {**FREE_PAIR, "relation_id": "rel-1\x00"}),
    ("client.create_thread", {"thread_id": "t1\x00", "user_id": "u9"}),
    # Ids holding a line break or another control character, or spaces at either end.
    ("thread.add_messages", {"messages": [{"role": "user", "content": "x", "id": "msg-9\n"}]}),
    ("thread.add_messages", {"messages": [{"role": "user\n", "content": "x"}]}),
    ("client.add_memory", {"content": "x", "memory_id": "mem\t9"}),
    ("client.add_memory", {"content": "x", "user_id": " u1"}),
    ("client.add_image", {"image": PNG, "image_id": "img-9\r"}),
    ("client.link_records", {**FREE_PAIR, "relation_id": "rel-9 "}),
    ("client.create_thread", {"thread_id": "t\x859", "user_id": "u9"}),
    # Records already expired: invisible, but their ids are taken.
    ("client.add_memory", {"content": "x", "memory_id": "mem-expired"}),
    ("thread.add_messages", {"messages": [{"role": "user", "content": "x", "id": "msg-expired"}]}),
    ("thread.add_messages", {"messages": [{"role": "user", "content": [image_part(id="img-expired")]}]}),
    ("thread.add_image", {"image": PNG, "image_id": "img-expired"}),
    ("client.update_memory", {"memory_id": "mem-expired", "content": "x"}),
    ("thread.update_message", {"message_id": "msg-expired", "content": [image_part()]}),
    ("thread.update_image", {"image_id": "img-expired", "description": "x"}),
    ("thread.add_memory", {"content": "x", "memory_id_to_link": "mem-expired", "link_type": "supports"}),
    ("client.link_records", {**FREE_PAIR, "target_record_id": "mem-expired", "target_record_type": "memory"}),
    # Ids and flags of the wrong type, NOT_SET passed explicitly.
    ("client.get_relation", {"relation_id": {"id": "rel-1"}}),
    ("client.update_thread", {"thread_id": {"id": "t1"}, "metadata": {}}),
    ("client.delete_thread", {"thread_id": {"id": "t1"}}),
    ("client.list_memories", {"user_id": {"id": "u1"}}),
    ("client.delete_user", {"user_id": "u1", "cascade": NOT_SET}),
    ("thread.list_images", {"include_bytes": NOT_SET}),
    ("thread.get_messages", {"include_image_bytes": NOT_SET}),
    ("client.search", {"query": "pizza", "user_id": "u1", "include_invalid_results": NOT_SET}),
    (
        "client.create_thread",
        {
            "thread_id": "t-new",
            "memory_extraction_config": config_or_fields({"memory_extraction_custom_instructions": "\ud800"}),
        },
    ),
]


@pytest.mark.parametrize(
    ("label", "kwargs"), KNOWN_ESCAPES, ids=[f"{i:02d}-{label}" for i, (label, _) in enumerate(KNOWN_ESCAPES)]
)
def test_known_escape_classes_stay_inside_the_contract(label: str, kwargs: dict[str, Any], live_backend: str, tmp_path):
    with fresh_world(live_backend, tmp_path) as world:
        check_contract(world, BY_LABEL[label], kwargs)


# --- the harness itself ----------------------------------------------------------------------------


def test_the_dump_sees_a_write_undone_by_a_compensating_delete(live_backend: str, tmp_path):
    """What a "store both or neither" written as insert-then-delete leaves behind is a change."""
    with fresh_world(live_backend, tmp_path) as world:
        before = store_dump(world.store)
        world.thread.add_memory("written then removed", memory_id="undone")
        assert world.thread.delete_memory("undone") == 1
        diff = dump_diff(before, store_dump(world.store))
        assert "OAM_THREADS" in diff  # the thread's activity time moved
        assert "OAM_CHANGES" in diff  # and the change log saw the insert and the delete


def test_the_dump_through_the_connection_reads_what_the_file_holds(live_backend: str, tmp_path):
    """The Oracle path of store_dump, checked where both paths can run."""
    if live_backend == "oracle":
        pytest.skip("the file dump is SQLite's")
    with fresh_world(live_backend, tmp_path) as world:
        by_file, by_connection = store_dump(world.store), connection_dump(world.store)
        assert set(by_connection) < set(by_file)
        assert {name: by_file[name] for name in by_connection} == by_connection


def test_the_dump_ignores_only_what_reads_refresh(live_backend: str, tmp_path):
    """Searches (keyword ranking in plain SQL refreshes FTS5 and its meta marker), listings and
    cards leave the dump as it was; a real write does not."""
    with fresh_world(live_backend, tmp_path) as world:
        before = store_dump(world.store)
        world.thread.search("pizza oven", num_hops=2, record_types=["memory", "message", "image"])
        world.memory.search("sourdough", user_id="u1", num_hops=1)
        world.thread.get_context_card(max_recent_messages=2)
        world.memory.list_memories(limit=None)
        assert store_dump(world.store) == before
        world.thread.update_memory("mem-3", metadata={"n": 2})
        assert store_dump(world.store) != before


# --- a sweep: every parameter of every method, one hostile value at a time ------------------------

CORE_HOSTILE = [
    {"id": "mem-1"},
    ["mem-1"],
    Opaque(),
    b"bytes",
    NOT_SET,
    True,
    2**63,
    2**64,
    -(2**64),
    2**1100,
    float("nan"),
    float("inf"),
    "",
    "a\x00b",
    "mem-1\x00",  # a real id and a NUL: SQLite's JSON functions used to cut ids there
    "mem-1\n",  # a real id and a line break: it split the dashboard's bulk selections
    " mem-1",
    "\ud800",
    "9999-12-31T23:00:00-05:00",
    "0001-01-01T00:00:00+05:00",
    *EXTREME_DATETIMES[:2],
    nested_dict(12),
    nested_dict(5000),
    nested_not(12),
    wide_dict(1000),
    {"tags": long_list(400)},
    {"n": 2**64},
]
"""One of each escape class, tried in every parameter of every method (the sweep below)."""


def minimal_call(spec: Spec) -> dict[str, Any]:
    """The simplest valid values of the required parameters (hypothesis shrinks to them)."""
    required = {n: p.valid for n, p in spec.params.items() if p.required}
    return find(st.fixed_dictionaries(required), lambda _: True, settings=settings(database=None))


@pytest.mark.parametrize("spec", [s for s in SPECS if s.params], ids=lambda spec: spec.label)
def test_each_parameter_with_each_core_hostile_value(spec: Spec, live_backend: str, tmp_path):
    """Deterministic: each CORE_HOSTILE value in each parameter, the others minimal; one seeded
    store per method (a call that succeeds may write, and the next call compares from there).
    Every escape of the method is listed, not only the first."""
    minimal = minimal_call(spec)
    escapes: list[str] = []
    with fresh_world(live_backend, tmp_path) as world:
        for base_name, base in spec.bases:
            for name in spec.params:
                for value in CORE_HOSTILE:
                    kwargs = {**minimal, **base, name: value}
                    try:
                        check_contract(world, spec, kwargs)
                    except AssertionError as failure:
                        given = f" [{base_name}]" if base_name else ""
                        first_lines = " | ".join(str(failure).splitlines()[:2])  # the error, the first change
                        escapes.append(f"{name}={brief(value)}{given}: {first_lines}")
    assert not escapes, f"{len(escapes)} escape(s) of {spec.label}:\n" + "\n".join(escapes)
