"""The keyword half of search: analysis, BM25 with message context, fusion parts, and filters.

Keyword-only stores (SearchStrategy.KEYWORD) isolate the ranking rules from the embedder.
"""

from __future__ import annotations

import pytest

from memory.engine import AgentMemory, SearchStrategy


@pytest.fixture
def backend() -> str:
    """These tests are about the embedded store's keyword analyser (stems, accents, message
    context, dates in words); Oracle ranks keywords with Oracle Text."""
    return "sqlite"


@pytest.fixture
def keyword_store(store_factory):
    return store_factory(search_strategy=SearchStrategy.KEYWORD)


def hit_ids(store, query, k=10, **filters):
    return [record.id for record, _ in store.search(query, k, **filters)]


def test_words_match_across_inflections_case_and_accents(keyword_store):
    keyword_store.add(["She was Running to the CAFÉ"], "memory", record_ids=["r"])
    assert hit_ids(keyword_store, "runs cafe") == ["r"]


def test_function_words_in_a_query_match_nothing_on_their_own(keyword_store):
    keyword_store.add(["what is the plan", "pizza dough"], "memory", record_ids=["fn", "pizza"])
    assert hit_ids(keyword_store, "what is the pizza") == ["pizza"]
    # A query of function words only still searches for them rather than for nothing.
    assert hit_ids(keyword_store, "what is the") == ["fn"]


def test_rarer_words_weigh_more_than_common_ones(keyword_store):
    keyword_store.add(["apple tart", "apple pie", "apple juice", "pear"], "memory", record_ids=["t", "p", "j", "x"])
    # "tart" is in one record, "apple" in three: the record holding the rare word ranks first.
    assert hit_ids(keyword_store, "apple tart")[0] == "t"


def test_a_message_is_found_by_the_words_of_the_turns_around_it(store_factory):
    memory = AgentMemory(store_factory(search_strategy=SearchStrategy.KEYWORD))
    thread = memory.create_thread(thread_id="t", user_id="u", agent_id="a")
    ids = thread.add_messages(
        [
            {"role": "user", "content": "Where did you go for the holidays?"},
            {"role": "assistant", "content": "We drove up to the lake."},
            {"role": "user", "content": "Nice! Unrelated: my printer is broken."},
        ]
    )
    found = [result.id for result in thread.search("holidays", exact_thread_match=True)]
    # The question holds the word; its answer, one turn later, is found through its context.
    assert found[:2] == ids[:2]
    assert ids[2] in found  # two turns away: still in context, at half weight


def test_context_does_not_leak_between_threads(store_factory):
    memory = AgentMemory(store_factory(search_strategy=SearchStrategy.KEYWORD))
    first = memory.create_thread(thread_id="t1", user_id="u", agent_id="a")
    second = memory.create_thread(thread_id="t2", user_id="u", agent_id="a")
    first.add_messages([{"role": "user", "content": "volcano trip"}])
    [other] = second.add_messages([{"role": "user", "content": "grocery list"}])
    assert other not in [result.id for result in second.search("volcano")]


def test_a_message_is_found_by_its_date_in_words(store_factory):
    memory = AgentMemory(store_factory(search_strategy=SearchStrategy.KEYWORD))
    thread = memory.create_thread(thread_id="t", user_id="u", agent_id="a")
    thread.add_messages([{"role": "user", "content": "we met", "timestamp": "2024-01-02T10:00:00"}])
    [dated] = thread.add_messages([{"role": "user", "content": "we met", "timestamp": "2023-05-08T13:56:00"}])
    assert thread.search("what happened in May 2023")[0].id == dated


def test_an_index_text_is_searched_instead_of_the_content(keyword_store):
    keyword_store.add(["shown text"], "memory", index_texts=["hidden keywords"], record_ids=["r"])
    assert hit_ids(keyword_store, "hidden") == ["r"]
    assert hit_ids(keyword_store, "shown") == []


def test_keyword_filters_apply_before_top_k(keyword_store):
    keyword_store.add(["pizza pizza pizza"] * 20, "memory", user_ids="A")
    weak = keyword_store.add(["pizza and other things"] * 3, "memory", user_ids="B")
    assert hit_ids(keyword_store, "pizza", k=3, user_id="B", exact_user_match=True) == weak


def test_an_edit_changes_what_keywords_find(keyword_store):
    keyword_store.add(["old words"], "memory", record_ids=["r"])
    assert hit_ids(keyword_store, "old") == ["r"]
    keyword_store.update("memory", "r", text="new words")
    assert hit_ids(keyword_store, "old") == []
    assert hit_ids(keyword_store, "new") == ["r"]
    keyword_store.delete("memory", "r")
    assert hit_ids(keyword_store, "new") == []


def test_results_expose_the_parts_of_their_score(store_factory):
    memory = AgentMemory(store_factory(search_strategy=SearchStrategy.HYBRID))
    memory.add_memory("purple elephant parade", user_id="u", memory_id="both")
    memory.add_memory("grey mouse", user_id="u", memory_id="vector-only")
    best, other = memory.search("purple elephant", user_id="u", max_results=2)
    assert best.id == "both"
    assert best.scores["vector_rank"] == 1 and best.scores["keyword_rank"] == 1
    assert best.scores["keyword_score"] > 0 and best.scores["score"] == pytest.approx(3 / 11)
    assert "keyword_rank" not in other.scores and other.scores["vector_rank"] == 2
    assert other.scores["vector_distance"] > best.scores["vector_distance"]
