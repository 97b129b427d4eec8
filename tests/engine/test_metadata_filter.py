"""Conformance of the metadata filter language (API_SPEC §5, DECISIONS D8) at every layer.

Each case stores ONE record with the given metadata and asks whether a filter selects it. The same
decision must come out of `store.list`, `store.search`, thread `search` and client `search` (D8:
one filter language everywhere). For the search layers the query is the record's own text, so the
record is the best hit and only the filter can remove it; an unfiltered search checks that first.
"""

from __future__ import annotations

import pytest

F5 = {"source": "chat", "tags": {"$array_contains": "trip", "$not": {"$array_contains": "archived"}}}

TEXT = "zebra quantum lantern"
USER = "u-filter"

# §5.4 derived truth table, row by row: (stored metadata, filter, match?)
TRUTH_TABLE = [
    pytest.param({"tags": ["prod", "urgent"]}, {"tags": ["prod", "urgent"]}, True, id="list-exact"),
    pytest.param({"tags": ["prod", "urgent"]}, {"tags": ["urgent", "prod"]}, False, id="list-order"),
    pytest.param({"tags": ["prod", "urgent"]}, {"tags": ["prod"]}, False, id="list-length"),
    pytest.param(
        {"review": {"status": "open", "by": "x"}}, {"review": {"status": "open"}}, True, id="nested-containment"
    ),
    pytest.param({"source": "slack", "x": 1}, {"source": "slack"}, True, id="extra-keys"),
    pytest.param({}, {"source": "slack"}, False, id="empty-metadata-key-missing"),
    pytest.param(None, {"source": "slack"}, False, id="no-metadata-key-missing"),
    pytest.param({"tags": ["trip", "urgent"]}, {"tags": {"$array_contains": "trip"}}, True, id="array-contains"),
    pytest.param({"tags": ["trip"]}, {"tags": {"$array_contains": ["trip", "urgent"]}}, False, id="contains-all-of"),
    pytest.param({"tags": ["trip"]}, {"tags": {"$array_contains_any": ["trip", "urgent"]}}, True, id="contains-any"),
    pytest.param({"tags": "trip"}, {"tags": {"$array_contains": "trip"}}, False, id="contains-non-array"),
    pytest.param(
        {"tags": "archived"}, {"tags": {"$not": {"$array_contains": "archived"}}}, True, id="not-contains-non-array"
    ),
    pytest.param({}, {"tags": {"$not": {"$array_contains": "archived"}}}, True, id="not-contains-missing-field"),
    pytest.param({"source": "chat", "tags": ["trip", "archived"]}, F5, False, id="F5-not-branch-fails"),
    pytest.param({"source": "chat", "tags": ["trip"]}, F5, True, id="F5-matches"),
    pytest.param({}, {"source": {"$not": "chat"}}, True, id="not-scalar-missing-field"),
    pytest.param({"source": "chat"}, {"source": {"$not": "chat"}}, False, id="not-scalar-equal"),
]

# §5.3 examples F-1 … F-8, each with a record it must select and one it must not.
EXAMPLES = [
    pytest.param({"source": "chat", "n": 2}, {"source": "chat"}, True, id="F1-match"),
    pytest.param({"source": "email"}, {"source": "chat"}, False, id="F1-other-value"),
    pytest.param({"travel": {"need": "transit", "mode": "bus"}}, {"travel": {"need": "transit"}}, True, id="F2-match"),
    pytest.param({"travel": {"need": "hotel"}}, {"travel": {"need": "transit"}}, False, id="F2-other-value"),
    pytest.param({"need": "transit"}, {"travel": {"need": "transit"}}, False, id="F2-not-nested"),
    pytest.param({"tags": ["trip", "urgent"]}, {"tags": ["trip", "urgent"]}, True, id="F3-match"),
    pytest.param({"tags": ["trip", "urgent", "x"]}, {"tags": ["trip", "urgent"]}, False, id="F3-superset-list"),
    pytest.param(
        {"source": "chat", "travel": {"need": "transit"}, "tags": ["trip", "urgent"], "extra": True},
        {"source": "chat", "travel": {"need": "transit"}, "tags": ["trip", "urgent"]},
        True,
        id="F4-match",
    ),
    pytest.param(
        {"source": "chat", "travel": {"need": "transit"}, "tags": ["urgent", "trip"]},
        {"source": "chat", "travel": {"need": "transit"}, "tags": ["trip", "urgent"]},
        False,
        id="F4-one-entry-fails",
    ),
    pytest.param({"source": "chat", "tags": ["urgent", "trip", "x"]}, F5, True, id="F5-match-any-position"),
    pytest.param({"source": "slack", "tags": ["trip"]}, F5, False, id="F5-source-fails"),
    pytest.param({"source": "chat", "tags": ["urgent"]}, F5, False, id="F5-contains-fails"),
    pytest.param({"source": "slack"}, {"source": "slack"}, True, id="F6-match"),
    pytest.param({"source": "Slack"}, {"source": "slack"}, False, id="F6-case-sensitive"),
    pytest.param({"review": {"status": "open"}}, {"review": {"status": "open"}}, True, id="F7-match"),
    pytest.param({"review": {"status": "closed"}}, {"review": {"status": "open"}}, False, id="F7-other-value"),
    pytest.param({"tags": ["prod", "urgent"]}, {"tags": ["prod", "urgent"]}, True, id="F8-match"),
    pytest.param({"tags": ["urgent", "prod"]}, {"tags": ["prod", "urgent"]}, False, id="F8-order"),
]

# Further rules of §5.2 and the engine's documented decisions (filters.py): types, nesting, keys.
SEMANTICS = [
    pytest.param(None, {"tags": {"$not": {"$array_contains": "archived"}}}, True, id="not-contains-no-metadata"),
    pytest.param({"a": 1}, {"a": True}, False, id="true-does-not-match-1"),
    pytest.param({"a": True}, {"a": 1}, False, id="1-does-not-match-true"),
    pytest.param({"a": 0}, {"a": False}, False, id="false-does-not-match-0"),
    pytest.param({"a": True}, {"a": True}, True, id="true-matches-true"),
    pytest.param({"a": 1}, {"a": 1.0}, True, id="1-matches-1.0"),
    pytest.param({"a": 1.0}, {"a": 1}, True, id="1.0-matches-1"),
    pytest.param({"a": 1.5}, {"a": 1}, False, id="1.5-does-not-match-1"),
    pytest.param({"a": "1"}, {"a": 1}, False, id="string-1-does-not-match-1"),
    pytest.param({"a": None}, {"a": None}, True, id="null-matches-null"),
    pytest.param({}, {"a": None}, False, id="null-needs-the-key"),
    pytest.param({"a": "x"}, {"a": "x", "b": "y"}, False, id="and-all-entries"),
    pytest.param({"review": "open"}, {"review": {"status": "open"}}, False, id="nested-dict-against-scalar"),
    pytest.param(
        {"a": {"b": {"c": 1, "d": 2}, "e": 3}}, {"a": {"b": {"c": 1}}}, True, id="nested-containment-two-levels"
    ),
    pytest.param({"a": {"b": {"c": 1}}}, {"a": {"b": {"c": 2}}}, False, id="nested-two-levels-other-value"),
    pytest.param(
        {"trip": {"tags": ["a", "b"]}}, {"trip": {"tags": {"$array_contains": "b"}}}, True, id="operator-in-nested-dict"
    ),
    pytest.param(
        {"trip": {"tags": ["a", "b"]}},
        {"trip": {"tags": {"$not": {"$array_contains": "a"}}}},
        False,
        id="not-operator-in-nested-dict",
    ),
    pytest.param(
        {"trip": {"tags": ["a"]}},
        {"trip": {"tags": {"$array_contains_any": ["x", "y"]}}},
        False,
        id="any-operator-in-nested-dict-no-overlap",
    ),
    pytest.param({"trip": {}}, {"trip": {"tags": {"$not": "x"}}}, True, id="not-in-nested-dict-missing-field"),
    pytest.param(
        {"items": [{"a": 1, "b": 2}, {"c": 3}]},
        {"items": [{"a": 1, "b": 2}, {"c": 3}]},
        True,
        id="list-of-dicts-exact",
    ),
    pytest.param(
        {"items": [{"a": 1, "b": 2}, {"c": 3}]},
        {"items": [{"a": 1}, {"c": 3}]},
        False,
        id="list-of-dicts-no-containment-inside-lists",
    ),
    pytest.param(
        {"items": [{"a": 1}, {"c": 3}]}, {"items": [{"c": 3}, {"a": 1}]}, False, id="list-of-dicts-order-matters"
    ),
    pytest.param({"tags": ["a", "b"]}, {"tags": {"$array_contains": ["b", "a"]}}, True, id="all-of-order-irrelevant"),
    pytest.param({"tags": ["a", "b"]}, {"tags": {"$array_contains": "c"}}, False, id="contains-absent-value"),
    pytest.param({"tags": [1, 2]}, {"tags": {"$array_contains": True}}, False, id="contains-keeps-types-apart"),
    pytest.param({"tags": ["a"]}, {"tags": {"$not": ["a"]}}, False, id="not-raw-list-equal"),
    pytest.param({"tags": ["a", "b"]}, {"tags": {"$not": ["a"]}}, True, id="not-raw-list-different"),
    pytest.param(
        {"tags": ["trip", "x"]},
        {"tags": {"$array_contains": "trip", "$array_contains_any": ["y", "z"]}},
        False,
        id="operators-in-one-dict-are-and-ed",
    ),
    pytest.param({"a.b": 1}, {"a.b": 1}, True, id="dotted-key-is-literal"),
    pytest.param({"a": {"b": 1}}, {"a.b": 1}, False, id="dotted-key-is-not-a-path"),
    pytest.param({"a.b": 1}, {"a": {"b": 1}}, False, id="path-does-not-match-dotted-key"),
    pytest.param({'it"s': "x"}, {'it"s': "x"}, True, id="double-quote-in-key"),
    pytest.param({"it's": "x"}, {"it's": "x"}, True, id="single-quote-in-key"),
    pytest.param({"it's": "x"}, {"its": "x"}, False, id="quote-key-not-normalised"),
    pytest.param({"x$y": 1}, {"x$y": 1}, True, id="dollar-inside-key"),
    pytest.param({"a": {"b.c": 2, "$d": 0}}, {"a": {"b.c": 2}}, True, id="dotted-key-in-nested-dict"),
    pytest.param({"[0]": 1, "*": 2}, {"[0]": 1, "*": 2}, True, id="path-syntax-characters-in-keys"),
    pytest.param({"back\\slash": 1}, {"back\\slash": 1}, True, id="backslash-in-key"),
    pytest.param({"line\nbreak\ttab": 1}, {"line\nbreak\ttab": 1}, True, id="control-characters-in-key"),
    pytest.param({}, {"trip": {"tags": {"$not": "x"}}}, False, id="not-in-nested-dict-needs-the-parent-key"),
    pytest.param({"n": 2**64}, {"n": 2**64}, True, id="integer-beyond-64-bits-matches-itself"),
    pytest.param({"n": 2**63 - 1}, {"n": 2**63 - 1}, True, id="largest-64-bit-integer-matches-itself"),
    pytest.param({"ключ": "значение"}, {"ключ": "значение"}, True, id="non-ascii-key-and-value"),
    pytest.param({"s": "a"}, {"s": "x' OR '1'='1"}, False, id="quote-in-value-is-a-value"),
    pytest.param({"s": "x' OR '1'='1"}, {"s": "x' OR '1'='1"}, True, id="quote-in-value-matches-literally"),
]

LAYERS = ["store_list", "store_search", "thread_search", "client_search"]

INVALID_FILTERS = [
    pytest.param([("a", 1)], id="list-of-pairs"),
    pytest.param("source=chat", id="string"),
    pytest.param(42, id="int"),
    pytest.param({"tags": {"$regex": "tr.*"}}, id="unknown-operator"),
    pytest.param({"a": {"b": {"$contains": 1}}}, id="unknown-nested-operator"),
    pytest.param({"$or": [{"a": 1}, {"b": 2}]}, id="unknown-top-level-operator"),
    pytest.param({"tags": {"$array_contains": "x", "plain": 1}}, id="mixes-operator-and-plain-key"),
    pytest.param({"tags": {"$not": {"$array_contains": "x", "plain": 1}}}, id="mixes-keys-under-not"),
    pytest.param({"tags": {"$array_contains_any": "trip"}}, id="contains-any-with-a-string"),
    pytest.param({"tags": {"$array_contains_any": 3}}, id="contains-any-with-a-number"),
]


@pytest.fixture(params=LAYERS)
def selects(request, store):
    """`selects(stored_metadata, metadata_filter) -> bool`, answered through one layer on a fresh store."""
    layer = request.param

    def via_store_list(stored, metadata_filter):
        [record_id] = store.add([TEXT], record_type="memory", metadata=stored)
        assert [r.id for r in store.list("memory")] == [record_id]
        ids = [r.id for r in store.list("memory", metadata_filter=metadata_filter)]
        assert ids in ([], [record_id])
        return ids == [record_id]

    def via_store_search(stored, metadata_filter):
        [record_id] = store.add([TEXT], record_type="memory", metadata=stored)
        assert [r.id for r, _ in store.search(TEXT, 10)] == [record_id]
        ids = [r.id for r, _ in store.search(TEXT, 10, metadata_filter=metadata_filter)]
        assert ids in ([], [record_id])
        return ids == [record_id]

    def via_thread_search(stored, metadata_filter):
        from memory.engine import AgentMemory

        thread = AgentMemory(store).create_thread(thread_id="t-filter", user_id=USER, agent_id="a-filter")
        record_id = thread.add_memory(TEXT, metadata=stored)
        assert [r.id for r in thread.search(TEXT, max_results=10)] == [record_id]
        ids = [r.id for r in thread.search(TEXT, max_results=10, metadata_filter=metadata_filter)]
        assert ids in ([], [record_id])
        return ids == [record_id]

    def via_client_search(stored, metadata_filter):
        from memory.engine import AgentMemory

        memory = AgentMemory(store)
        record_id = memory.add_memory(TEXT, user_id=USER, metadata=stored)
        assert [r.id for r in memory.search(TEXT, user_id=USER, max_results=10)] == [record_id]
        ids = [r.id for r in memory.search(TEXT, user_id=USER, max_results=10, metadata_filter=metadata_filter)]
        assert ids in ([], [record_id])
        return ids == [record_id]

    return {
        "store_list": via_store_list,
        "store_search": via_store_search,
        "thread_search": via_thread_search,
        "client_search": via_client_search,
    }[layer]


@pytest.mark.parametrize(("stored", "metadata_filter", "expected"), TRUTH_TABLE)
def test_each_truth_table_row_decides_the_same_at_every_layer(selects, stored, metadata_filter, expected):
    assert selects(stored, metadata_filter) is expected


@pytest.mark.parametrize(("stored", "metadata_filter", "expected"), EXAMPLES)
def test_each_documented_filter_example_selects_exactly_its_records(selects, stored, metadata_filter, expected):
    assert selects(stored, metadata_filter) is expected


@pytest.mark.parametrize(("stored", "metadata_filter", "expected"), SEMANTICS)
def test_types_nesting_and_literal_keys_follow_the_filter_rules(selects, stored, metadata_filter, expected):
    assert selects(stored, metadata_filter) is expected


@pytest.fixture(params=LAYERS)
def run_filter(request, store):
    """`run_filter(metadata_filter)` runs a read with that filter through one layer (a record exists)."""
    from memory.engine import AgentMemory

    memory = AgentMemory(store)
    thread = memory.create_thread(thread_id="t-filter", user_id=USER, agent_id="a-filter")
    thread.add_memory(TEXT, metadata={"tags": ["trip"], "source": "chat"})
    return {
        "store_list": lambda f: store.list("memory", metadata_filter=f),
        "store_search": lambda f: store.search(TEXT, 10, metadata_filter=f),
        "thread_search": lambda f: thread.search(TEXT, metadata_filter=f),
        "client_search": lambda f: memory.search(TEXT, user_id=USER, metadata_filter=f),
    }[request.param]


@pytest.mark.parametrize("metadata_filter", INVALID_FILTERS)
def test_an_invalid_filter_is_a_value_error_at_every_layer(run_filter, metadata_filter):
    with pytest.raises(ValueError):
        run_filter(metadata_filter)


def test_a_filter_error_message_names_the_offending_operator(store):
    with pytest.raises(ValueError, match=r"\$regex"):
        store.list("memory", metadata_filter={"tags": {"$regex": "x"}})


def test_a_none_filter_in_list_selects_only_records_without_metadata(store):
    # C-D15: in store.list, None means "no stored metadata"; omitting the filter means no filtering.
    plain = store.add(["no metadata one", "no metadata two"], record_type="memory")
    tagged = store.add(["with metadata"], record_type="memory", metadata={"source": "chat"})
    plain += store.add(["explicit none"], record_type="memory", metadata=[None])
    assert [r.id for r in store.list("memory", metadata_filter=None)] == plain
    assert [r.id for r in store.list("memory")] == plain[:2] + tagged + plain[2:]


def test_a_none_filter_in_search_means_no_filtering(store):
    plain = store.add([TEXT], record_type="memory")
    tagged = store.add([TEXT], record_type="memory", metadata={"source": "chat"})
    found = {r.id for r, _ in store.search(TEXT, 10, metadata_filter=None)}
    assert found == set(plain + tagged)


def test_a_filter_applies_to_every_record_type_searched(store):
    memory_id = store.add([TEXT], record_type="memory", metadata={"k": "v"})[0]
    fact_id = store.add([TEXT], record_type="fact", metadata={"k": "v"})[0]
    store.add([TEXT], record_type="message", metadata={"k": "other"}, thread_ids="t", roles="user")
    found = {r.id for r, _ in store.search(TEXT, 10, metadata_filter={"k": "v"})}
    assert found == {memory_id, fact_id}


def test_a_filter_combines_with_scope_and_limit_in_list(store):
    ids = store.add(
        ["one", "two", "three", "four"],
        record_type="memory",
        user_ids=["u1", "u1", "u2", "u1"],
        metadata=[{"k": 1}, {"k": 2}, {"k": 1}, {"k": 1}],
    )
    assert [r.id for r in store.list("memory", user_id="u1", metadata_filter={"k": 1})] == [ids[0], ids[3]]
    assert [r.id for r in store.list("memory", user_id="u1", metadata_filter={"k": 1}, limit=1)] == [ids[0]]
