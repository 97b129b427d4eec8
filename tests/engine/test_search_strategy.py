"""A search's own strategy: `strategy=` on store, client and thread searches (beyond the SDK).

A search with `strategy=X` must give exactly what a store opened with `search_strategy=X` gives:
the same records, order, distances and score parts, linked trees and formatted text, on every
backend. The second store below is opened on the same database, as another process would.
"""

from __future__ import annotations

import asyncio

import pytest

from memory.engine import AgentMemory, SearchResultFormatConfig, SearchStrategy

STRATEGIES = [SearchStrategy.VECTOR, SearchStrategy.KEYWORD, SearchStrategy.HYBRID]
QUERIES = ["sourdough pizza crust", "what oven does Bruno use?", "the", "Naples"]


def store_shape(hits) -> list:
    """Ids, distances and score parts of a store search, with each linked tree."""
    return [
        (
            hit[0].id,
            hit[1],
            dict(hit.parts),
            [(relation.id, child[0].id, child[1]) for relation, child in hit[0].linked_results],
        )
        for hit in hits
    ]


def result_shape(results) -> list:
    return [
        (
            result.id,
            result.record.record_type,
            result.distance,
            result.scores,
            [(relation.id, child.id, child.distance, child.scores) for relation, child in result.linked_results],
            result.format_content(SearchResultFormatConfig(include_invalid_results=False)),
        )
        for result in results
    ]


def assert_same(left: list, right: list) -> None:
    """Equal, with NaN distances (a linked memory in a keyword search) equal to each other."""
    assert len(left) == len(right)
    for a, b in zip(left, right, strict=True):
        assert repr(a).replace("nan", "NaN") == repr(b).replace("nan", "NaN")


def seed(memory: AgentMemory) -> None:
    thread = memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    thread.add_messages(
        [
            {"role": "user", "content": "My pizza crust comes out pale."},
            {"role": "assistant", "content": "Bake it one rack higher; the oven's bottom element is strong."},
            {"role": "user", "content": "I switched to a sourdough starter last week."},
            {"role": "assistant", "content": "Feed the starter twice a day in summer."},
        ]
    )
    thread.add_memory("Bruno bakes pizza in a gas oven.", memory_type="fact", memory_id="oven")
    thread.add_memory("Bruno likes thin pizza crust.", memory_type="preference", memory_id="thin")
    thread.add_memory(
        "Bruno now prefers a sourdough pizza crust.",
        memory_type="preference",
        memory_id="sourdough",
        memory_id_to_link="thin",
        link_type="supersedes",
    )
    thread.add_memory("Pizza comes from Naples.", memory_type="fact", memory_id="naples")
    thread.link_records("naples", "fact", "sourdough", "preference", "supports")
    thread.link_records("oven", "fact", "naples", "fact", "inspired", opposite_relation_type="inspired_by")
    memory.add_memory("Bruno's starter is called Clint.", memory_type="memory", user_id="u1", memory_id="clint")
    memory.link_records("clint", "memory", "sourdough", "preference", "refines")


@pytest.fixture
def pair(store_factory):
    """The default (hybrid) store, seeded, and one store per strategy opened on the same database."""
    default = store_factory("shared")
    seed(AgentMemory(default))
    return default, {strategy: store_factory("shared", search_strategy=strategy) for strategy in STRATEGIES}


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.value)
def test_a_store_search_with_a_strategy_is_the_store_opened_with_it(pair, strategy):
    default, opened = pair
    for query in QUERIES:
        for options in ({}, {"num_hops": 2}, {"record_types": ["message"], "user_id": "u1", "exact_user_match": True}):
            expected = opened[strategy].search(query, 10, **options)
            for given in (strategy, strategy.value):
                assert_same(store_shape(default.search(query, 10, strategy=given, **options)), store_shape(expected))
    # A query vector ranks by vectors whatever the strategy, as a store opened with it does.
    vector = default.embedder.embed(["pizza"])[0]
    assert_same(
        store_shape(default.search(query_vector=vector, k=5, strategy=strategy)),
        store_shape(opened[strategy].search(query_vector=vector, k=5)),
    )


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.value)
def test_client_and_thread_searches_with_a_strategy_match_the_store_opened_with_it(pair, strategy):
    default, opened = pair
    memory, reference = AgentMemory(default), AgentMemory(opened[strategy])
    thread, reference_thread = memory.get_thread("t1"), reference.get_thread("t1")
    for query in QUERIES:
        for options in ({}, {"num_hops": 2, "include_invalid_results": False}, {"record_types": ["message"]}):
            assert_same(
                result_shape(memory.search(query, user_id="u1", strategy=strategy.value, **options)),
                result_shape(reference.search(query, user_id="u1", **options)),
            )
            assert_same(
                result_shape(thread.search(query, strategy=strategy, **options)),
                result_shape(reference_thread.search(query, **options)),
            )
    twin = asyncio.run(memory.search_async("sourdough pizza", user_id="u1", num_hops=1, strategy=strategy))
    assert_same(result_shape(twin), result_shape(reference.search("sourdough pizza", user_id="u1", num_hops=1)))
    twin = asyncio.run(thread.search_async("oven", strategy=strategy))
    assert_same(result_shape(twin), result_shape(reference_thread.search("oven")))


def test_the_strategy_changes_the_ranking_it_names(pair):
    """Score parts say which rankings a result took part in."""
    default, _ = pair
    by_vector = default.search("sourdough pizza crust", 5, strategy="vector")
    by_keyword = default.search("sourdough pizza crust", 5, strategy="keyword")
    hybrid = default.search("sourdough pizza crust", 5)
    assert all(set(hit.parts) == {"vector_rank", "vector_distance"} for hit in by_vector)
    assert all(set(hit.parts) == {"keyword_rank", "keyword_score"} for hit in by_keyword)
    assert all("score" in hit.parts for hit in hybrid)
    assert by_vector and by_keyword and hybrid


def test_an_omitted_strategy_is_the_stores(store_factory):
    store = store_factory(search_strategy="keyword")
    seed(AgentMemory(store))
    assert_same(
        store_shape(store.search("pizza crust", 5)), store_shape(store.search("pizza crust", 5, strategy="keyword"))
    )
    assert all("keyword_rank" in hit.parts for hit in store.search("pizza crust", 5))


@pytest.mark.parametrize("bad", ["Hybrid", "", "bm25", None, 5, ["vector"], {"vector": 1}, float("nan")])
def test_a_bad_strategy_is_a_value_error_naming_it(memory, bad):
    seed(memory)
    thread = memory.get_thread("t1")
    calls = [
        lambda: memory.store.search("pizza", 3, strategy=bad),
        lambda: memory.store.search(query_vector=memory.store.embedder.embed(["x"])[0], k=3, strategy=bad),
        lambda: memory.search("pizza", user_id="u1", strategy=bad),
        lambda: thread.search("pizza", strategy=bad),
        lambda: asyncio.run(thread.search_async("pizza", strategy=bad)),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="strategy"):
            call()


def test_the_strategy_is_keyword_only(memory):
    seed(memory)
    with pytest.raises(TypeError):
        memory.store.search("pizza", 3, None, "t1", "u1", "a1", True, True, True, None, None, 0, 100, True, "vector")
