"""Shared machinery of the property-based contract suite (hypothesis): profiles, hostile values,
a seeded world to call into, and a raw dump of the store to compare before and after a call.

The contract (DECISIONS D3): bad arguments raise ValueError, unknown keywords TypeError, a
thread-layer read or update of a missing record KeyError; a failed write stores nothing. The
suite checks both halves on every public method of AgentMemory and Thread:
test_contract_properties.py (hostile arguments), test_contract_stateful.py (a model of the
store), test_contract_two_process.py (a writer and a graph searcher in two processes).

Profiles: "ci" (the default) keeps the three files within a few minutes on two cores;
HYPOTHESIS_PROFILE=long runs many more examples for local hunting. Examples found failing are
kept in var/hypothesis (var/ is git-ignored local state) and replayed first on the next run.
"""

from __future__ import annotations

import math
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase

from memory.engine import (
    NOT_SET,
    AgentMemory,
    ImageContent,
    ImageMimeType,
    MemoryExtractionConfig,
    MemorySearchConfig,
    Message,
    RecordStatus,
    Scope,
    SearchScope,
    SQLiteMemoryStore,
    TextContent,
    TimeToLiveAnchor,
)
from memory.engine.stores.arguments import encode_cursor

from . import test_images
from .conftest import make_store

ROOT = Path(__file__).resolve().parents[2]

# --- profiles --------------------------------------------------------------------------------

_DATABASE = DirectoryBasedExampleDatabase(str(ROOT / "var" / "hypothesis"))
# Every example opens its own store in a per-example directory under tmp_path, so the
# function-scoped `backend` and `tmp_path` fixtures are a parameter name and a parent directory,
# never state shared between examples: the health check that guards against that does not apply.
FIXTURES_ARE_NOT_STATE = [HealthCheck.function_scoped_fixture]
settings.register_profile(
    "ci",
    max_examples=20,
    stateful_step_count=50,
    deadline=None,  # a store call's time varies with the machine; the run is bounded by examples
    database=_DATABASE,
    print_blob=True,
)
settings.register_profile(
    "long",
    max_examples=400,
    stateful_step_count=100,
    deadline=None,
    database=_DATABASE,
    print_blob=True,
)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)
TWO_PROCESS_SECONDS = 30.0 if PROFILE == "long" else 3.0
"""How long the two-process test lets its writer and searcher race, per backend."""

SQLITE_BACKENDS = ("sqlite", "sqlite-sql")

# --- hostile values --------------------------------------------------------------------------


class Opaque:
    """An object of no type the engine knows, printed readably."""

    def __repr__(self) -> str:
        return "Opaque()"


class _Printed:
    """Big generated values print as the call that made them, not as their (huge) contents."""

    label = ""

    def __repr__(self) -> str:
        return self.label

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.label)


class NestedDict(_Printed, dict):
    pass


class WideDict(_Printed, dict):
    pass


class LongList(_Printed, list):
    pass


class LongStr(_Printed, str):
    pass


class NamedBytes(_Printed, bytes):
    """Image bytes that print as their name: a falsifying example stays readable."""


def named_bytes(label: str, data: bytes) -> NamedBytes:
    out = NamedBytes(data)
    out.label = label
    return out


PNG = named_bytes("PNG", test_images.PNG)
JPEG = named_bytes("JPEG", test_images.JPEG)
WEBP = named_bytes("WEBP", test_images.WEBP)
GIF = named_bytes("GIF", test_images.gif_bytes())
ANIMATED_PNG = named_bytes("ANIMATED_PNG", test_images.animated_bytes("PNG"))


def nested_dict(depth: int, leaf: Any = 1, key: str = "a") -> NestedDict:
    """{key: {key: ... leaf}} with `depth` levels, built without recursion."""
    value: Any = leaf
    for _ in range(depth - 1):
        value = {key: value}
    outer = NestedDict({key: value})
    outer.label = f"nested_dict({depth}, leaf={leaf!r}, key={key!r})"
    return outer


def nested_not(depth: int, leaf: Any = "x") -> NestedDict:
    """A metadata filter {"k": {"$not": {"$not": ... leaf}}} with `depth` operators."""
    value: Any = leaf
    for _ in range(depth):
        value = {"$not": value}
    outer = NestedDict({"k": value})
    outer.label = f"nested_not({depth}, leaf={leaf!r})"
    return outer


def wide_dict(count: int, value: Callable[[int], Any] = lambda i: i) -> WideDict:
    out = WideDict({f"k{i}": value(i) for i in range(count)})
    out.label = f"wide_dict({count})"
    return out


def long_list(count: int) -> LongList:
    out = LongList(range(count))
    out.label = f"long_list({count})"
    return out


def long_str(count: int, char: str = "x") -> LongStr:
    out = LongStr(char * count)
    out.label = f"long_str({count}, {char!r})"
    return out


UTC_MINUS_5 = timezone(timedelta(hours=-5))
UTC_PLUS_5 = timezone(timedelta(hours=5))
NAN, INF = math.nan, math.inf

HUGE_INTS = [
    2**63 - 1,
    2**63,
    -(2**63),
    -(2**63) - 1,
    2**64,
    -(2**64),
    2**64 + 1,
    10**30,
    -(10**30),
    2**1100,  # too large for a float
]

EXTREME_DATETIMES = [
    datetime(9999, 12, 31, 23, tzinfo=UTC_MINUS_5),  # past year 9999 in UTC
    datetime(1, 1, 1, tzinfo=UTC_PLUS_5),  # before year 1 in UTC
    datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(1, 1, 1, tzinfo=UTC),
    datetime.max,
    datetime.min,
    datetime.max.replace(tzinfo=timezone(timedelta(hours=-23, minutes=-59))),
    datetime.min.replace(tzinfo=timezone(timedelta(hours=23, minutes=59))),
]

EXTREME_TIMESTAMP_STRINGS = [
    "9999-12-31T23:00:00-05:00",
    "0001-01-01T00:00:00+05:00",
    "9999-12-31T23:59:59.999999-00:00:01",
    "0001-01-01T00:00:00+23:59",
    "9999-12-31T23:59:59.999999+00:00",
    "0001-01-01T00:00:00",
    "9999-12-31",
    "0001-01-01",
    "10000-01-01T00:00:00",
    "2024-02-30T00:00:00",
    "2024-01-01T25:00:00",
    "2024-01-01T00:00:00\x00",
    "now",
    "",
]

HOSTILE_SCALARS = [
    None,
    NOT_SET,
    True,
    False,
    0,
    -1,
    *HUGE_INTS,
    0.5,
    -0.0,
    NAN,
    INF,
    -INF,
    Decimal("1e400"),
    complex(1, 2),
    "",
    " ",
    "\x00",
    "a\x00b",
    "\ud800",
    "x\udfffy",
    long_str(100_000),
    b"bytes",
    bytearray(b"bytes"),
    [],
    ["x"],
    ("x",),
    {},
    {"a": 1},
    set(),
    frozenset({"x"}),
    Opaque(),
    *EXTREME_DATETIMES[:2],
    date(1, 1, 1),
    timedelta(days=1),
    RecordStatus.INVALID,
    TimeToLiveAnchor.TIMESTAMP,
    ImageMimeType.PNG,
]

hostile_scalar = st.sampled_from(HOSTILE_SCALARS)
hostile_int = st.one_of(
    st.sampled_from(HUGE_INTS),
    st.sampled_from([0, -1, -(10**6), True, False, 1.0, 2.5, NAN, INF, -INF, "1", None, NOT_SET, [1], {"n": 1}]),
    hostile_scalar,
)


def hostile_ids(*valid_pools: list[str]) -> st.SearchStrategy:
    """Ids of the wrong kind or type: other records' ids, containers, NUL bytes, surrogates, line
    breaks and other control characters, spaces at either end."""
    other = sorted({i for pool in valid_pools for i in pool})
    return st.one_of(
        st.sampled_from(other) if other else st.nothing(),
        st.sampled_from([{"id": "mem-1"}, {"a": 1}, ["mem-1"], ("msg-1",), {"mem-1"}, "mem-1\x00", "mem\ud800"]),
        st.sampled_from(["mem-1\n", "mem\n1", "mem\t1", "mem\x851", " mem-1", "mem-1 "]),
        hostile_scalar,
    )


json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=8),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(min_size=1, max_size=5), inner, max_size=3),
    max_leaves=8,
)
valid_metadata_dict = st.dictionaries(st.sampled_from(["source", "tags", "n", "x", "deep"]), json_value, max_size=4)
valid_metadata = st.one_of(valid_metadata_dict, st.none(), st.just({"tags": ["a", "b"], "n": 1}))

DEPTHS = [10, 11, 12, 50, 200, 999, 1000, 1001, 5000]

hostile_metadata = st.one_of(
    st.builds(nested_dict, st.sampled_from(DEPTHS)),
    st.builds(wide_dict, st.sampled_from([400, 1000, 2000])),
    st.builds(lambda n: {"tags": long_list(n)}, st.sampled_from([400, 1001])),
    st.sampled_from(HUGE_INTS).map(lambda n: {"n": n}),
    st.sampled_from([NAN, INF, -INF]).map(lambda f: {"f": f}),
    st.sampled_from(
        [
            {1: "int key"},
            {None: "none key"},
            {("a", "b"): "tuple key"},
            {"a": Opaque()},
            {"a": b"bytes"},
            {"a": {1, 2}},
            {"a": datetime(2020, 1, 1)},
            {"a": Decimal("1.5")},
            {"\ud800": "surrogate key"},
            {"a": "\ud800"},
            {"a\x00": "nul"},
            {"content": 5},
            {"": 1},
        ]
    ),
    hostile_scalar,
)


def metadata_param() -> P:
    return P(valid_metadata, hostile_metadata)


valid_filter = st.one_of(
    st.none(),
    st.sampled_from(
        [
            {"tags": {"$array_contains": "a"}},
            {"tags": ["a", "b"]},
            {"n": 1},
            {"source": {"$not": "chat"}},
            {"tags": {"$array_contains_any": ["a", "z"], "$not": {"$array_contains": "q"}}},
            {"deep": {"x": 1}},
        ]
    ),
    valid_metadata_dict.filter(bool),
)

hostile_filter = st.one_of(
    st.builds(nested_dict, st.sampled_from(DEPTHS)),
    st.builds(nested_not, st.sampled_from(DEPTHS)),
    st.builds(wide_dict, st.sampled_from([400, 999, 1000, 2000])),
    st.builds(lambda n: {"tags": long_list(n)}, st.sampled_from([400, 1001, 5000])),
    st.builds(lambda n: {"tags": {"$array_contains": long_list(n)}}, st.sampled_from([400, 1001])),
    st.builds(lambda n: {"tags": {"$array_contains_any": long_list(n)}}, st.sampled_from([400, 1001])),
    st.sampled_from(HUGE_INTS).map(lambda n: {"n": n}),
    st.sampled_from(HUGE_INTS).map(lambda n: {"tags": {"$array_contains": n}}),
    st.sampled_from(HUGE_INTS).map(lambda n: {"deep": {"x": [n]}}),
    st.sampled_from(
        [
            {"n": NAN},
            {"n": INF},
            {"$and": [{"n": 1}]},
            {"tags": {"$array_contains_any": "a"}},
            {"tags": {"$regex": "a"}},
            {"tags": {"$not": {}}},
            {"tags": {}},
            {1: "x"},
            {"": "x"},
            {"a": Opaque()},
            {"a": b"x"},
            {"a": {"$not": "x", "b": 1}},
            {"\ud800": 1},
            {"a": "\ud800"},
            {"a\x00": 1},
            [("a", 1)],
            "source",
        ]
    ),
    hostile_scalar,
)


def filter_param() -> P:
    return P(valid_filter, hostile_filter)


valid_timestamp = st.one_of(
    st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2090, 1, 1), timezones=st.just(UTC)).map(
        datetime.isoformat
    ),
    st.sampled_from(["2020-01-01T00:00:00Z", "2021-06-01T12:00:00+02:00", "2022-03-04T05:06:07"]),
    st.none(),
)
hostile_timestamp = st.one_of(
    st.sampled_from(EXTREME_TIMESTAMP_STRINGS), st.sampled_from(EXTREME_DATETIMES), hostile_scalar
)


def timestamp_param() -> P:
    return P(valid_timestamp, hostile_timestamp)


valid_text = st.text(max_size=30)
hostile_text = st.one_of(
    st.sampled_from(["", "\x00", "a\x00b", "\ud800", "x\udfffy", long_str(200_000), long_str(5_000, "é")]),
    hostile_scalar,
)


def text_param(valid: st.SearchStrategy = valid_text) -> P:
    return P(valid, hostile_text)


def int_param(valid: st.SearchStrategy, *extra_hostile: Any) -> P:
    hostile = hostile_int if not extra_hostile else st.one_of(st.sampled_from(list(extra_hostile)), hostile_int)
    return P(valid, hostile)


def flag_param() -> P:
    return P(st.booleans(), hostile_scalar)


def enum_param(enum: Any) -> P:
    values = [*enum, *(member.value for member in enum)]
    return P(st.sampled_from(values), st.one_of(st.sampled_from(["", "VALID ", "nope", "\x00"]), hostile_scalar))


def ttl_days_param() -> P:
    return int_param(st.one_of(st.integers(1, 3650), st.none()), 10**6, 10**9, 2_932_897)


hostile_cursor = st.one_of(
    st.sampled_from(
        [
            encode_cursor(2**64),
            encode_cursor(-(2**64)),
            encode_cursor(10**30),
            encode_cursor(2**63),
            encode_cursor(1.5),
            encode_cursor("x"),
            encode_cursor(None),
            encode_cursor([1]),
            encode_cursor({"a": 1}),
            encode_cursor(True),
            encode_cursor("9999-12-31T23:00:00-05:00", "t1"),
            encode_cursor("0001-01-01T00:00:00+05:00", "t1"),
            encode_cursor(2**64, "t1"),
            encode_cursor("2020-01-01T00:00:00+00:00", 2**64),
            encode_cursor(None, None),
            encode_cursor([], {}),
            encode_cursor(1, 2, 3),
            "!!!",
            "e30",  # base64 of "{}"
            "bm90IGpzb24",  # base64 of "not json"
            "WzFdPT09",
        ]
    ),
    hostile_scalar,
)


def cursor_param() -> P:
    return P(st.none(), hostile_cursor)


def limit_param() -> P:
    return int_param(st.one_of(st.integers(1, 5), st.none()))


def version_param() -> P:
    """expected_version: the seeded records are at versions 1-3; a stale one is a ValueError
    (StaleVersionError) that must write nothing."""
    return int_param(st.integers(1, 4), 0, -1)


# --- images and messages -----------------------------------------------------------------------

valid_image = st.sampled_from([PNG, JPEG, WEBP])
hostile_image = st.one_of(
    st.sampled_from(
        [
            b"",
            b"not an image",
            named_bytes("PNG[:20]", PNG[:20]),
            named_bytes("PNG[:-8]", PNG[:-8]),
            GIF,
            ANIMATED_PNG,
            bytearray(b"\x89PNG"),
            "PNG",
        ]
    ),
    hostile_scalar,
)
valid_mime = st.sampled_from([*ImageMimeType, "image/png", "image/jpeg", "image/webp", None])

FRESH_PART_IDS = ["part-a", "part-b", "part-c"]


def image_part(**overrides: Any) -> dict[str, Any]:
    part = {"type": "image", "bytes": PNG, "mime_type": "image/png", "description": "a picture"}
    part.update(overrides)
    return part


def _mime_matches(part: dict[str, Any]) -> bool:
    kinds = {PNG: "image/png", JPEG: "image/jpeg", WEBP: "image/webp"}
    return kinds.get(part["bytes"]) == part["mime_type"]


def _matching_mime(part: dict[str, Any]) -> dict[str, Any]:
    """A valid image part declares its bytes' own type, or none."""
    if "mime_type" in part and not _mime_matches(part):
        return {key: value for key, value in part.items() if key != "mime_type"}
    return part


valid_part = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": valid_text}),
    st.fixed_dictionaries(
        {"type": st.just("image"), "bytes": valid_image},
        optional={
            "description": st.one_of(valid_text, st.none()),
            "id": st.sampled_from(FRESH_PART_IDS),
            "timestamp": valid_timestamp,
            "mime_type": st.sampled_from(["image/png", "image/jpeg", "image/webp"]),
        },
    ).map(_matching_mime),
    st.builds(TextContent, text=valid_text),
)


hostile_part = st.one_of(
    # One bad field in an otherwise good image part: where a late failure hides.
    st.sampled_from(["description", "id", "timestamp", "mime_type", "bytes"]).flatmap(
        lambda key: {
            "description": st.one_of(st.sampled_from([5, b"x", ["d"], {"d": 1}, "\ud800", "a\x00b"]), hostile_scalar),
            "id": st.one_of(
                st.sampled_from(
                    ["img-1", "img-part-1", "img-c", "img-expired", "", 5, {"id": 1}, ["x"], "\ud800", "p\x00"]
                ),
                hostile_scalar,
            ),
            "timestamp": hostile_timestamp,
            "mime_type": st.one_of(st.sampled_from(["image/gif", "image/jpeg", "text/plain"]), hostile_scalar),
            "bytes": hostile_image,
        }[key].map(lambda value, key=key: image_part(**{key: value}))
    ),
    st.sampled_from(
        [
            {"type": "text", "text": 5},
            {"type": "text", "text": "t", "id": {"a": 1}},
            {"type": "text", "text": "t", "timestamp": "9999-12-31T23:00:00-05:00"},
            {"type": "video", "bytes": PNG},
            {"text": "no type"},
            {"type": "image"},
            {"type": "image", "bytes": PNG, "extra": 1},
            ImageContent(bytes=None),
            ImageContent(id="img-1", bytes=PNG),
            ImageContent(bytes=PNG, timestamp="0001-01-01T00:00:00+05:00"),
            ImageContent(bytes=PNG, description=5),  # type: ignore[arg-type]
            "a string part",
            5,
        ]
    ),
)


def content_value(part: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(valid_text, st.lists(part, min_size=1, max_size=3))


def message_value(content: st.SearchStrategy) -> st.SearchStrategy:
    as_dict = st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool"]), "content": content},
        optional={
            "id": st.sampled_from(["new-msg-1", "new-msg-2"]),
            "timestamp": valid_timestamp,
            "metadata": valid_metadata,
        },
    )
    return st.one_of(as_dict, as_dict.map(_as_message))


def _as_message(message: dict[str, Any]) -> Any:
    content = message["content"]
    if not isinstance(content, str):
        if not all(isinstance(p, (TextContent, ImageContent)) for p in content):
            return message  # Message() itself refuses mapping parts; keep the dict form
        content = tuple(content)
    try:
        return Message(
            role=message["role"],
            content=content,
            timestamp=message.get("timestamp"),
            metadata=message.get("metadata"),
            id=message.get("id"),
        )
    except (TypeError, ValueError):
        return message


valid_messages = st.lists(message_value(content_value(valid_part)), min_size=1, max_size=3)
hostile_message = st.one_of(
    message_value(
        st.lists(st.one_of(valid_part, hostile_part), min_size=1, max_size=3).filter(
            lambda parts: any(not isinstance(p, TextContent) for p in parts)
        )
    ),
    st.fixed_dictionaries(
        {"role": st.one_of(st.just("user"), st.just("user"), st.just(""), hostile_scalar), "content": valid_text},
        optional={
            "id": st.one_of(st.sampled_from(["msg-1", "", "msg-t2", "msg-expired"]), hostile_scalar),
            "timestamp": hostile_timestamp,
            "metadata": hostile_metadata,
        },
    ),
    st.sampled_from([{"role": "user"}, {"content": "x"}, {"role": "user", "content": "x", "bogus": 1}, "text", 5]),
    hostile_scalar,
)
hostile_messages = st.one_of(
    st.tuples(valid_messages, hostile_message, st.integers(0, 3)).map(lambda t: [*t[0][: t[2]], t[1], *t[0][t[2] :]]),
    st.sampled_from(["a string", {"role": "user", "content": "x"}, Message("user", "x"), [], ()]),
    hostile_scalar,
)

# --- parameters ------------------------------------------------------------------------------


@dataclass(frozen=True)
class P:
    """One parameter: values the contract accepts (or refuses cleanly) and hostile ones."""

    valid: st.SearchStrategy
    hostile: st.SearchStrategy
    required: bool = False

    def mixed(self) -> st.SearchStrategy:
        """Mostly valid, sometimes hostile; shrinks towards the valid branch."""
        return st.one_of(self.valid, self.valid, self.valid, self.hostile)

    def req(self) -> P:
        return P(self.valid, self.hostile, True)


# --- the seeded world ----------------------------------------------------------------------------

IDS = {
    "message": ["msg-1", "msg-2", "msg-3", "msg-t2", "msg-expired"],
    "memory": ["mem-1", "mem-2", "mem-3", "mem-ts", "mem-t2", "mem-c", "mem-expired"],
    "image": ["img-1", "img-part-1", "img-c", "img-t2", "img-expired"],
    "relation": ["rel-1", "rel-2", "rel-c"],
    "thread": ["t1", "t2", "t3"],
    "user": ["u1", "u2"],
    "agent": ["a1", "a2"],
}
MISSING = "missing-id"
ALL_IDS = [i for pool in IDS.values() for i in pool]


def id_param(kind: str) -> P:
    return P(st.sampled_from([*IDS[kind], MISSING]), hostile_ids(ALL_IDS))


def scope_param(kind: str) -> P:
    return P(st.sampled_from([*IDS[kind], None]), hostile_ids(ALL_IDS))


@dataclass
class World:
    """A store with a bit of everything, and handles on it: `thread` is t1 (u1, a1)."""

    store: Any
    memory: AgentMemory
    thread: Any
    path: Path


def seed_world(memory: AgentMemory) -> Any:
    """Threads, messages (one with an image part), memories of several types, links, images,
    profiles, and a memory, a message and an image already expired: every id in IDS exists,
    most in thread t1."""
    t1 = memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1", metadata={"topic": "food"})
    t2 = memory.create_thread(thread_id="t2", user_id="u1", agent_id="a1")
    memory.create_thread(thread_id="t3", user_id="u2", agent_id="a2")
    t1.add_messages(
        [
            {"role": "user", "content": "I like pizza", "id": "msg-1", "timestamp": "2020-01-01T00:00:00Z"},
            {
                "role": "user",
                "id": "msg-2",
                "content": [
                    {"type": "text", "text": "look at my pizza"},
                    image_part(id="img-part-1", description="a pizza photo"),
                ],
            },
            {"role": "assistant", "content": "Nice pizza", "id": "msg-3", "metadata": {"source": "chat"}},
        ]
    )
    t1.add_memory("likes thin crust pizza", memory_id="mem-1", memory_type="preference")
    t1.add_memory(
        "now likes sourdough pizza",
        memory_id="mem-2",
        memory_type="preference",
        memory_id_to_link="mem-1",
        link_type="supersedes",
        link_id="rel-1",
    )
    t1.add_memory("pizza is from Naples", memory_id="mem-3", memory_type="fact", metadata={"tags": ["a", "b"], "n": 1})
    t1.add_memory("pizza on fridays", memory_id="mem-ts", timestamp="2020-01-01T00:00:00Z", ttl_days=3650)
    t1.link_records("mem-3", "fact", "mem-2", "preference", "supports", relation_id="rel-2")
    t1.add_image(PNG, description="a pizza oven", image_id="img-1", metadata={"n": 1})
    t2.add_messages([{"role": "user", "content": "other thread pizza", "id": "msg-t2"}])
    t2.add_memory("other thread memory about pizza", memory_id="mem-t2")
    t2.add_image(JPEG, description="another oven", image_id="img-t2")
    memory.add_memory("client pizza memory", memory_id="mem-c", user_id="u1")
    memory.add_image(WEBP, description="client image", image_id="img-c", user_id="u1")
    memory.link_records("mem-c", "memory", "mem-3", "fact", "contradicts", relation_id="rel-c")
    memory.add_user("u1", "a pizza lover")
    memory.add_agent("a1", "a food assistant")
    # Expired on arrival (a day after an event in 2000): invisible to reads, their ids still taken.
    expired = {"timestamp": "2000-01-01T00:00:00Z", "ttl_days": 1, "ttl_anchor": TimeToLiveAnchor.TIMESTAMP}
    t1.add_memory("an expired pizza memory", memory_id="mem-expired", **expired)
    t1.add_image(PNG, description="an expired oven", image_id="img-expired", **expired)
    t1.add_messages(
        [{"role": "user", "content": "an expired message", "id": "msg-expired", "timestamp": expired["timestamp"]}],
        ttl_days=1,
        ttl_anchor=TimeToLiveAnchor.TIMESTAMP,
    )
    return t1


@contextmanager
def fresh_world(backend: str, parent: Path) -> Iterator[World]:
    """A seeded store of `backend` in a new directory under `parent`, closed and removed after."""
    directory = Path(tempfile.mkdtemp(dir=parent))
    path = directory / "store.sqlite3"
    store = make_store(backend, path)
    try:
        memory = AgentMemory(store)
        thread = seed_world(memory)
        yield World(store, memory, thread, path)
    finally:
        store.close()
        shutil.rmtree(directory, ignore_errors=True)


# --- the store dump ------------------------------------------------------------------------------

VOLATILE_META_KEYS = {"text_index_seq"}
"""Meta rows that reads move: how far the FTS5 keyword index has caught up with the change log."""


def store_dump(store: Any) -> dict[str, list[tuple]]:
    """Every row of every table of the store, as sorted tuples, keyed by table name.

    SQLite stores are read straight from the file with a raw sqlite3 connection (not through the
    engine), so nothing the engine caches can hide a write. Left out, because reads legitimately
    change them and they hold nothing that is not derived from the tables dumped:
    - the FTS5 keyword index (the virtual table and its shadow tables `<name>_data`, `_idx`,
      `_content`, `_docsize`, `_config`): a cache of the records' `search_text`, brought up to
      date from the change log by the first plain-SQL keyword search that needs it;
    - the meta rows of VOLATILE_META_KEYS: that cache's progress marker;
    - the activity log (OAM_ACTIVITY, OAM_ACTIVITY_RECORDS, and their key counter in
      sqlite_sequence): every call, a read or a refused one included, may append to it, from the
      recorder's thread at a moment of its own; tests/engine/test_activity.py checks what it holds.
    Everything else is kept: records (with image bytes), relations, threads (with `updated_at`,
    `next_seq_no`, settings, summary), meta, the change log, and sqlite_sequence (a key taken
    and given back by a compensating delete is a write that happened).
    Other backends (Oracle) are dumped through the store's own connection, table by table.
    """
    if isinstance(store, SQLiteMemoryStore):
        return sqlite_file_dump(store.path)
    return connection_dump(store)


def connection_dump(store: Any) -> dict[str, list[tuple]]:
    """The managed tables read through the store's own connection (for servers: Oracle)."""
    dump = {}
    for name in store.schema.names.values():
        rows = [tuple(row.values()) for row in store._fetch(f'SELECT * FROM "{name}"')]  # in column order
        dump[name] = sorted(_comparable(rows))
    return _without_volatile(dump)


def sqlite_file_dump(path: str | Path) -> dict[str, list[tuple]]:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = connection.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()
        virtual = [name for name, sql in tables if (sql or "").upper().startswith("CREATE VIRTUAL TABLE")]
        dump = {}
        for name, _ in tables:
            if name in virtual or any(name.startswith(f"{v}_") for v in virtual):
                continue
            rows = connection.execute(f'SELECT * FROM "{name}"').fetchall()
            dump[name] = sorted(_comparable(rows))
    finally:
        connection.close()
    return _without_volatile(dump)


def _comparable(rows: list[tuple]) -> list[tuple]:
    """Rows whose None, numbers, text and bytes sort together (by type name, then value)."""
    return [tuple((type(value).__name__, value) for value in row) for row in rows]


def _without_volatile(dump: dict[str, list[tuple]]) -> dict[str, list[tuple]]:
    dump = {name: rows for name, rows in dump.items() if not name.upper().endswith(ACTIVITY_TABLES)}
    for name in dump:
        if name.upper().endswith("OAM_META"):
            dump[name] = [row for row in dump[name] if row[0][1] not in VOLATILE_META_KEYS]
        if name == "sqlite_sequence":
            dump[name] = [row for row in dump[name] if not str(row[0][1]).upper().endswith(ACTIVITY_TABLES)]
    return dump


ACTIVITY_TABLES = ("OAM_ACTIVITY", "OAM_ACTIVITY_RECORDS")


def dump_diff(before: dict[str, list[tuple]], after: dict[str, list[tuple]], limit: int = 6) -> str:
    """What changed, table by table: rows gone and rows new (values only, shortened)."""
    lines = []
    for name in sorted(set(before) | set(after)):
        old, new = set(before.get(name, [])), set(after.get(name, []))
        if old == new:
            continue
        gone = sorted(old - new)
        added = sorted(new - old)
        lines.append(f"{name}: {len(gone)} row(s) gone, {len(added)} row(s) new")
        for sign, rows in (("-", gone), ("+", added)):
            for row in rows[:limit]:
                lines.append(f"  {sign} {_short(row)}")
    return "\n".join(lines)


def _short(row: tuple) -> str:
    values = []
    for _, value in row:
        text = repr(value)
        values.append(text if len(text) <= 60 else text[:57] + "...")
    return "(" + ", ".join(values) + ")"


# --- other valid configuration values ----------------------------------------------------------

valid_search_config = st.sampled_from([MemorySearchConfig(), MemorySearchConfig(token_budget=50)])
hostile_search_config = st.one_of(
    st.builds(MemorySearchConfig, token_budget=hostile_int, soft_token_budget=st.one_of(st.none(), hostile_int)),
    hostile_scalar,
)
valid_extraction_config = st.sampled_from(
    [None, MemoryExtractionConfig(extract_memories=False), MemoryExtractionConfig(enable_context_summary=False)]
)


def config_or_fields(fields: dict[str, Any]) -> Any:
    """A config with these fields if its constructor takes them, else the fields as a bare dict
    (which is a hostile value too): the constructor's own checks may tighten at any time."""
    try:
        return MemoryExtractionConfig(**fields)
    except (TypeError, ValueError):
        return dict(fields)


hostile_extraction_config = st.one_of(
    st.sampled_from(
        [
            {"memory_extraction_frequency": 2**64},
            {"memory_extraction_token_limit": -(2**70)},
            {"background_extraction_queue_put_timeout_seconds": 1e308},
            {"background_extraction_queue_put_timeout_seconds": INF},
            {"memory_extraction_custom_instructions": "\ud800"},
            {"memory_extraction_custom_instructions": long_str(100_000)},
            {"memory_extraction_inherit_message_metadata": ["a\x00", "\ud800"]},
            {"extract_memories": False},
        ]
    ).map(config_or_fields),
    hostile_scalar,
)
valid_scope_object = st.one_of(
    st.builds(
        SearchScope,
        user_id=st.sampled_from(["u1", None]),
        agent_id=st.sampled_from(["a1", None, NOT_SET]),
        thread_id=st.sampled_from(["t1", None, NOT_SET]),
        exact_user_match=st.sampled_from([True, NOT_SET]),
        exact_agent_match=st.sampled_from([True, False, NOT_SET]),
        exact_thread_match=st.sampled_from([True, False, NOT_SET]),
    ),
    st.builds(Scope, user_id=st.just("u1")),
)
hostile_scope_object = st.one_of(
    st.builds(
        SearchScope,
        user_id=hostile_ids(ALL_IDS),
        agent_id=st.one_of(st.just(NOT_SET), hostile_ids(ALL_IDS)),
        exact_user_match=st.one_of(st.just(NOT_SET), hostile_scalar),
        exact_thread_match=st.one_of(st.just(NOT_SET), hostile_scalar),
    ),
    st.builds(Scope, user_id=hostile_ids(ALL_IDS), thread_id=hostile_ids(ALL_IDS)),
    st.sampled_from([{"user_id": "u1"}, "u1"]),
    hostile_scalar,
)
