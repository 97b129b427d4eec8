"""Store `search` (API_SPEC §3.3.9, §2.2-§2.4, §1.3, §1.4; §10.3 C-D10, C-D11, C-D20; DECISIONS D3, D10)."""

from __future__ import annotations

import pytest

from memory.engine import HashingEmbedder, RecordStatus, TimeToLiveAnchor

DIM = 64
QUERY = "apple banana cherry"


def hit_ids(results) -> list[str]:
    return [record.id for record, _ in results]


def vector_of(text: str) -> list[float]:
    """The default test embedder's vector for `text` (conftest stores use HashingEmbedder(64))."""
    return [float(x) for x in HashingEmbedder(DIM).embed([text])[0]]


# --- arguments -------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [0, -1])
def test_search_with_k_below_one_is_a_value_error(store, k):
    # C-D20
    store.add([QUERY], record_type="memory")
    with pytest.raises(ValueError):
        store.search(QUERY, k)


def test_search_with_both_query_and_query_vector_is_a_value_error(store):
    store.add([QUERY], record_type="memory")
    with pytest.raises(ValueError):
        store.search(QUERY, 5, query_vector=vector_of(QUERY))


def test_search_with_neither_query_nor_query_vector_is_a_value_error(store):
    store.add([QUERY], record_type="memory")
    with pytest.raises(ValueError):
        store.search(k=5)
    with pytest.raises(ValueError):
        store.search(None, 5, query_vector=None)


def test_search_with_a_query_vector_of_the_wrong_dimension_is_a_value_error(store):
    store.add([QUERY], record_type="memory")
    with pytest.raises(ValueError):
        store.search(query_vector=[1.0] * (DIM + 1), k=5)


def test_search_with_an_unknown_keyword_is_a_type_error(store):
    with pytest.raises(TypeError):
        store.search(QUERY, 5, colour="blue")


def test_search_returns_at_most_k_results(store):
    store.add([QUERY] * 8, record_type="memory")
    assert len(store.search(QUERY, 3)) == 3
    assert len(store.search(QUERY, 1)) == 1
    assert len(store.search(QUERY, 50)) == 8


def test_search_of_an_empty_store_returns_nothing(store):
    assert store.search(QUERY, 5) == []


# --- ranking ---------------------------------------------------------------------------------


def test_results_come_in_ascending_distance_best_first(store):
    best, middle, _worst = store.add(
        [QUERY, "apple banana kiwi mango", "apple pineapple lychee papaya guava"], record_type="memory"
    )
    results = store.search(QUERY, 10)
    distances = [distance for _, distance in results]
    assert distances == sorted(distances)
    assert hit_ids(results)[0] == best
    assert {best, middle} <= set(hit_ids(results))


def test_a_query_vector_search_ranks_the_identical_vector_first_at_near_zero_distance(store):
    target = store.add(["vector target words"], record_type="memory")[0]
    store.add(["something entirely different", "another unrelated sentence"], record_type="memory")
    results = store.search(query_vector=vector_of("vector target words"), k=3)
    assert hit_ids(results)[0] == target
    assert results[0][1] == pytest.approx(0.0, abs=1e-4)
    assert [d for _, d in results] == sorted(d for _, d in results)


def test_identical_records_tie_break_the_same_way_on_every_search(store):
    store.add([QUERY] * 3, record_type="memory")
    store.add(["unrelated words here"], record_type="memory")
    store.add([QUERY] * 3, record_type="memory")
    first = hit_ids(store.search(QUERY, 10))
    assert len(first) >= 6
    for _ in range(3):
        assert hit_ids(store.search(QUERY, 10)) == first
    assert hit_ids(store.search(QUERY, 4)) == first[:4]


def test_a_smaller_k_returns_a_prefix_of_a_larger_k(store):
    # k only caps the number of results (§3.3.9): the ranking of the records, and so the best
    # result, must not depend on it. One record is the closest vector, the other the keyword match.
    store.add(["zzz qqq"], record_type="memory", embeddings=[vector_of(QUERY)])
    store.add([QUERY], record_type="memory", embeddings=[vector_of("completely different words")])
    store.add(["apple"], record_type="memory")
    ranking = hit_ids(store.search(QUERY, 3))
    assert len(ranking) == 3
    for k in (1, 2):
        assert hit_ids(store.search(QUERY, k)) == ranking[:k]


def test_a_records_distance_does_not_depend_on_k(store):
    store.add(["zzz qqq"], record_type="memory", embeddings=[vector_of(QUERY)])
    store.add([QUERY], record_type="memory", embeddings=[vector_of("completely different words")])
    wide = dict((r.id, d) for r, d in store.search(QUERY, 2))
    for record, distance in store.search(QUERY, 1):
        assert distance == pytest.approx(wide[record.id])


def test_search_results_carry_the_stored_record(store):
    [record_id] = store.add(
        [QUERY], record_type="fact", thread_ids="t", user_ids="u", agent_ids="a", metadata={"k": [1, {"x": None}]}
    )
    record, _ = store.search(QUERY, 1)[0]
    assert (record.id, record.record_type, record.content) == (record_id, "fact", QUERY)
    assert (record.thread_id, record.user_id, record.agent_id) == ("t", "u", "a")
    assert record.metadata == {"k": [1, {"x": None}]}


# --- record types ----------------------------------------------------------------------------


def test_record_types_limits_results_to_those_types(store):
    memory_id = store.add([QUERY], record_type="memory")[0]
    fact_id = store.add([QUERY], record_type="fact")[0]
    message_id = store.add([QUERY], record_type="message", thread_ids="t", roles="user")[0]
    assert set(hit_ids(store.search(QUERY, 10, record_types={"fact"}))) == {fact_id}
    assert set(hit_ids(store.search(QUERY, 10, record_types={"memory", "message"}))) == {memory_id, message_id}
    assert {fact_id, memory_id, message_id} <= set(hit_ids(store.search(QUERY, 10, record_types=None)))
    assert {fact_id, memory_id, message_id} <= set(hit_ids(store.search(QUERY, 10)))


def test_record_types_are_applied_before_top_k(store):
    store.add([QUERY] * 10, record_type="memory")
    guidelines = store.add(["apple guideline text"] * 2, record_type="guideline")
    assert set(hit_ids(store.search(QUERY, 2, record_types={"guideline"}))) == set(guidelines)


# --- scope -----------------------------------------------------------------------------------


@pytest.fixture
def scoped(store):
    """Six records with the query text, differing only in scope: {label: id}."""
    labels = ["u1-a1-t1", "u1-a1-t2", "u1-none-none", "u2-a1-t1", "none-a2-t1", "none-none-none"]

    def part(label, i):
        value = label.split("-")[i]
        return None if value == "none" else value

    ids = store.add(
        [QUERY] * len(labels),
        record_type="memory",
        user_ids=[part(label, 0) for label in labels],
        agent_ids=[part(label, 1) for label in labels],
        thread_ids=[part(label, 2) for label in labels],
    )
    return dict(zip(labels, ids, strict=True))


def found_labels(store, scoped, **kwargs) -> set[str]:
    by_id = {v: k for k, v in scoped.items()}
    return {by_id[i] for i in hit_ids(store.search(QUERY, 20, **kwargs))}


def test_a_default_search_filters_on_no_scope_dimension(store, scoped):
    assert found_labels(store, scoped) == set(scoped)


def test_none_agent_with_exact_match_returns_only_agent_unscoped_records(store, scoped):
    # C-D10
    assert found_labels(store, scoped, agent_id=None, exact_agent_match=True) == {"u1-none-none", "none-none-none"}


def test_a_non_exact_agent_leaves_the_agent_dimension_unfiltered(store, scoped):
    # C-D11
    assert found_labels(store, scoped, agent_id="a1", exact_agent_match=False) == set(scoped)
    assert found_labels(store, scoped, agent_id="a1") == set(scoped)
    assert found_labels(store, scoped, user_id=None, thread_id=None) == set(scoped)


def test_an_exact_user_returns_only_that_users_records(store, scoped):
    assert found_labels(store, scoped, user_id="u1", exact_user_match=True) == {"u1-a1-t1", "u1-a1-t2", "u1-none-none"}


def test_none_user_with_exact_match_returns_only_user_unscoped_records(store, scoped):
    assert found_labels(store, scoped, user_id=None, exact_user_match=True) == {"none-a2-t1", "none-none-none"}


def test_an_exact_thread_returns_only_that_threads_records(store, scoped):
    assert found_labels(store, scoped, thread_id="t1", exact_thread_match=True) == {
        "u1-a1-t1",
        "u2-a1-t1",
        "none-a2-t1",
    }


def test_none_thread_with_exact_match_returns_only_thread_unscoped_records(store, scoped):
    assert found_labels(store, scoped, thread_id=None, exact_thread_match=True) == {"u1-none-none", "none-none-none"}


def test_exact_filters_on_several_dimensions_are_combined_with_and(store, scoped):
    found = found_labels(
        store, scoped, user_id="u1", agent_id="a1", thread_id="t1", exact_user_match=True, exact_agent_match=True
    )
    assert found == {"u1-a1-t1", "u1-a1-t2"}
    found = found_labels(
        store,
        scoped,
        user_id="u1",
        agent_id="a1",
        thread_id="t1",
        exact_user_match=True,
        exact_agent_match=True,
        exact_thread_match=True,
    )
    assert found == {"u1-a1-t1"}


def test_an_exact_match_on_an_unknown_id_returns_nothing(store, scoped):
    assert found_labels(store, scoped, user_id="nobody", exact_user_match=True) == set()


def test_scope_filters_are_applied_before_top_k(store):
    store.add([QUERY] * 50, record_type="memory", user_ids="user-a")
    weaker = store.add(
        ["apple pie recipe", "banana bread loaf", "cherry tart with cream"], record_type="memory", user_ids="user-b"
    )
    results = store.search(QUERY, 3, user_id="user-b", exact_user_match=True)
    assert set(hit_ids(results)) == set(weaker)


def test_scope_filters_are_applied_before_top_k_for_vector_queries(store):
    store.add([QUERY] * 30, record_type="memory", thread_ids="busy")
    quiet = store.add(["kiwi mango", "papaya guava"], record_type="memory", thread_ids="quiet")
    results = store.search(query_vector=vector_of(QUERY), k=2, thread_id="quiet", exact_thread_match=True)
    assert set(hit_ids(results)) == set(quiet)


# --- empty, expired and invalid records ------------------------------------------------------


def test_an_empty_content_record_is_never_a_vector_hit(store):
    empty, _ = store.add(["", QUERY], record_type="memory")
    assert empty not in hit_ids(store.search(QUERY, 10))
    assert empty not in hit_ids(store.search(query_vector=vector_of(QUERY), k=10))
    assert empty not in hit_ids(store.search(query_vector=vector_of("anything else"), k=10))


def test_a_record_indexed_with_an_empty_payload_is_never_a_vector_hit(store):
    hidden, shown = store.add([QUERY, QUERY], record_type="memory", index_texts=["", QUERY])
    vector_hits = hit_ids(store.search(query_vector=vector_of(QUERY), k=10))
    assert shown in vector_hits
    assert hidden not in vector_hits


def test_expired_records_are_never_returned(store):
    expired = store.add(
        [QUERY],
        record_type="memory",
        timestamps="2000-01-01T00:00:00+00:00",
        ttl_days=1,
        ttl_anchor=TimeToLiveAnchor.TIMESTAMP,
    )[0]
    alive = store.add([QUERY], record_type="memory")[0]
    assert hit_ids(store.search(QUERY, 10)) == [alive]
    assert hit_ids(store.search(query_vector=vector_of(QUERY), k=10)) == [alive]
    assert expired not in hit_ids(store.search(QUERY, 10, include_invalid_results=False))


def test_invalid_records_are_excluded_only_when_asked(store):
    invalid, valid = store.add(
        [QUERY, QUERY], record_type="memory", statuses=[RecordStatus.INVALID, RecordStatus.VALID]
    )
    assert set(hit_ids(store.search(QUERY, 10))) == {invalid, valid}
    assert set(hit_ids(store.search(QUERY, 10, include_invalid_results=True))) == {invalid, valid}
    assert hit_ids(store.search(QUERY, 10, include_invalid_results=False)) == [valid]


def test_invalid_records_are_excluded_before_top_k(store):
    store.add([QUERY] * 5, record_type="memory", statuses=[RecordStatus.INVALID] * 5)
    valid = store.add(["apple kiwi"], record_type="memory")[0]
    assert hit_ids(store.search(QUERY, 1, include_invalid_results=False)) == [valid]


def test_a_deleted_record_is_no_longer_found(store):
    gone, kept = store.add([QUERY, QUERY], record_type="memory")
    store.delete("memory", gone)
    assert hit_ids(store.search(QUERY, 10)) == [kept]
    assert hit_ids(store.search(query_vector=vector_of(QUERY), k=10)) == [kept]
