"""Thread search: ranking, bounds, argument validation, filters, token budgets and results.

API_SPEC §4.3.13, §7.4, §9.6, derived checks C-D17 to C-D19; DECISIONS D3, D7 (tokens = ceil(len / 3.5)).

Budget tests need a known rank order, so they run on a store whose embedder places a text containing
"rankN" at an angle growing with N from the query "rank0": results then come back as rank1, rank2, ...
"""

from __future__ import annotations

import asyncio
import math
import re

import numpy as np
import pytest

from memory.engine import (
    AgentMemory,
    MemorySearchConfig,
    RecordStatus,
    ScopedRecord,
    SearchResult,
    SearchScope,
    SearchStrategy,
    TimeToLiveAnchor,
)


class RankEmbedder:
    """Deterministic vectors: "rankN" lies 5*N degrees from "rank0"; text without a rank is far away."""

    name = "test-rank-8"
    dim = 8

    def embed(self, texts):
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            found = re.search(r"rank(\d+)", text)
            angle = math.radians(5 * int(found.group(1)) if found else 85)
            vectors[row, 0], vectors[row, 1] = math.cos(angle), math.sin(angle)
        return vectors


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 3.5)


def ids(results) -> list[str]:
    return [r.id for r in results]


@pytest.fixture
def ranked_memory(store_factory):
    return AgentMemory(store_factory(embedder=RankEmbedder(), search_strategy=SearchStrategy.VECTOR))


# Lengths alternate short and long so that "stop at the first overflow" and "skip what does not fit"
# give different answers.
RANKED_CONTENTS = [
    "rank1 short note",
    "rank2 " + "a long note about nothing in particular " * 6,
    "rank3 tiny",
    "rank4 " + "another long note that goes on and on " * 6,
    "rank5 small",
]


@pytest.fixture
def ranked(ranked_memory):
    """(thread, memory ids in rank order, token estimates of their formatted results in rank order)."""
    thread = ranked_memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    memory_ids = [thread.add_memory(content, memory_id=f"m{n}") for n, content in enumerate(RANKED_CONTENTS, 1)]
    results = thread.search("rank0", max_results=10)
    assert ids(results) == memory_ids, "precondition: the rank embedder orders results by N"
    return thread, memory_ids, [estimate_tokens(r.formatted_content) for r in results]


# --- ranking and bounds --------------------------------------------------------------------


def test_search_puts_the_record_matching_the_query_first(thread):
    thread.add_memory("The user is allergic to peanuts.", memory_id="allergy")
    thread.add_memory("The user drives a blue bicycle to work.", memory_id="commute")
    thread.add_memory("Quarterly revenue grew by twelve percent.", memory_id="revenue")
    assert thread.search("allergic to peanuts")[0].id == "allergy"
    assert thread.search("blue bicycle commute to work")[0].id == "commute"


def test_search_results_come_in_ascending_distance(thread):
    for n, text in enumerate(["pizza dough recipe", "pizza oven temperature", "garden tomato pizza", "tax forms"]):
        thread.add_memory(text, memory_id=f"m{n}")
    distances = [r.distance for r in thread.search("pizza dough")]
    assert len(distances) >= 2
    assert distances == sorted(distances)


def test_search_follows_the_embedders_rank_order(ranked):
    thread, memory_ids, _ = ranked
    assert ids(thread.search("rank0")) == memory_ids
    assert ids(thread.search("rank0", max_results=2)) == memory_ids[:2]


def test_search_returns_at_most_ten_results_by_default(thread):
    for n in range(15):
        thread.add_memory(f"pizza topping number {n}")
    assert len(thread.search("pizza topping")) == 10


def test_search_returns_at_most_max_results(thread):
    for n in range(15):
        thread.add_memory(f"pizza topping number {n}")
    assert len(thread.search("pizza topping", max_results=3)) == 3
    assert len(thread.search("pizza topping", max_results=1)) == 1
    assert len(thread.search("pizza topping", max_results=12)) == 12


def test_search_with_fewer_records_than_max_results_returns_them_all(thread):
    thread.add_memory("pizza one", memory_id="p1")
    thread.add_memory("pizza two", memory_id="p2")
    assert sorted(ids(thread.search("pizza", max_results=10))) == ["p1", "p2"]


def test_search_of_an_empty_store_returns_an_empty_list(thread):
    assert thread.search("anything") == []


# --- argument validation -------------------------------------------------------------------


@pytest.mark.parametrize("max_results", [0, -1])
def test_c_d18_search_with_max_results_below_one_raises_value_error(thread, max_results):
    thread.add_memory("pizza")
    with pytest.raises(ValueError):
        thread.search("pizza", max_results=max_results)


@pytest.mark.parametrize("metadata_filter", [[("a", 1)], "a=1", 3])
def test_c_d19_search_with_a_metadata_filter_that_is_not_a_dict_raises_value_error(thread, metadata_filter):
    thread.add_memory("pizza", metadata={"a": 1})
    with pytest.raises(ValueError):
        thread.search("pizza", metadata_filter=metadata_filter)


@pytest.mark.parametrize(
    "explicit",
    [{"user_id": "u1"}, {"agent_id": "a1"}, {"thread_id": "t1"}, {"exact_thread_match": True}, {"user_id": None}],
)
def test_c_d17_search_with_scope_and_an_explicit_scope_argument_raises_value_error(thread, explicit):
    thread.add_memory("pizza")
    with pytest.raises(ValueError):
        thread.search("pizza", scope=SearchScope(user_id="u1"), **explicit)


# --- filters -------------------------------------------------------------------------------


def test_search_record_types_limits_the_result_types(thread):
    thread.add_messages([{"role": "user", "content": "pizza message"}])
    thread.add_memory("pizza memory")
    thread.add_memory("pizza fact", memory_type="fact")
    thread.add_memory("pizza preference", memory_type="preference")
    assert {r.record.record_type for r in thread.search("pizza", record_types=["message"])} == {"message"}
    assert {r.record.record_type for r in thread.search("pizza", record_types=["fact"])} == {"fact"}
    assert {r.record.record_type for r in thread.search("pizza", record_types=["fact", "preference"])} == {
        "fact",
        "preference",
    }


def test_search_without_record_types_covers_messages_and_memories(thread):
    thread.add_messages([{"role": "user", "content": "pizza message"}])
    thread.add_memory("pizza memory")
    assert {r.record.record_type for r in thread.search("pizza")} == {"message", "memory"}


def test_search_metadata_filter_keeps_only_matching_records(thread):
    thread.add_memory("pizza from slack", memory_id="slack", metadata={"source": "slack"})
    thread.add_memory("pizza from mail", memory_id="mail", metadata={"source": "mail"})
    thread.add_memory("pizza from nowhere", memory_id="none")
    assert ids(thread.search("pizza", metadata_filter={"source": "slack"})) == ["slack"]
    assert sorted(ids(thread.search("pizza", metadata_filter=None))) == ["mail", "none", "slack"]


def test_search_includes_invalid_records_by_default_and_excludes_them_on_request(thread):
    thread.add_memory("pizza valid", memory_id="valid")
    thread.add_memory("pizza invalid", memory_id="invalid", status=RecordStatus.INVALID)
    assert sorted(ids(thread.search("pizza"))) == ["invalid", "valid"]
    assert sorted(ids(thread.search("pizza", include_invalid_results=True))) == ["invalid", "valid"]
    assert ids(thread.search("pizza", include_invalid_results=False)) == ["valid"]


def test_search_excludes_invalid_records_before_applying_max_results(ranked):
    thread, memory_ids, _ = ranked
    thread.update_memory(memory_ids[0], status=RecordStatus.INVALID)
    assert ids(thread.search("rank0", max_results=2, include_invalid_results=False)) == memory_ids[1:3]


def test_search_skips_expired_records(thread):
    thread.add_memory("pizza alive", memory_id="alive")
    thread.add_memory(
        "pizza expired",
        memory_id="gone",
        timestamp="2000-01-01T00:00:00Z",
        ttl_days=1,
        ttl_anchor=TimeToLiveAnchor.TIMESTAMP,
    )
    assert ids(thread.search("pizza")) == ["alive"]


def test_search_no_longer_finds_a_deleted_memory(thread):
    memory_id = thread.add_memory("pizza to forget")
    thread.delete_memory(memory_id)
    assert thread.search("pizza to forget") == []


def test_search_finds_updated_content(thread):
    memory_id = thread.add_memory("The user likes tea.")
    thread.update_memory(memory_id, content="The user collects vintage typewriters.")
    assert thread.search("vintage typewriters")[0].id == memory_id
    assert thread.search("vintage typewriters")[0].content == "The user collects vintage typewriters."


# --- token budgets (§7.4) ------------------------------------------------------------------


def test_token_budget_keeps_results_while_the_cumulative_estimate_fits(ranked):
    thread, memory_ids, tokens = ranked
    assert ids(thread.search("rank0", token_budget=tokens[0])) == memory_ids[:1]
    assert ids(thread.search("rank0", token_budget=sum(tokens[:2]))) == memory_ids[:2]
    assert ids(thread.search("rank0", token_budget=sum(tokens))) == memory_ids


def test_token_budget_stops_at_the_first_result_that_overflows(ranked):
    thread, memory_ids, tokens = ranked
    # rank2 is long and does not fit; rank3 is short and would fit, but the cut is at the first overflow.
    assert tokens[1] > tokens[2]
    assert ids(thread.search("rank0", token_budget=tokens[0] + tokens[2])) == memory_ids[:1]


def test_token_budget_smaller_than_the_first_result_returns_nothing(ranked):
    thread, _, tokens = ranked
    assert thread.search("rank0", token_budget=tokens[0] - 1) == []
    assert thread.search("rank0", token_budget=1) == []


@pytest.mark.parametrize("budget", [0, -1, None])
def test_token_budget_zero_negative_or_none_disables_the_cap(ranked, budget):
    thread, memory_ids, _ = ranked
    assert ids(thread.search("rank0", token_budget=budget)) == memory_ids


def test_soft_token_budget_keeps_the_result_that_crosses_the_target(ranked):
    thread, memory_ids, tokens = ranked
    assert ids(thread.search("rank0", soft_token_budget=tokens[0] + 1)) == memory_ids[:2]
    assert ids(thread.search("rank0", soft_token_budget=1)) == memory_ids[:1]


def test_soft_token_budget_stops_once_the_target_is_reached_exactly(ranked):
    thread, memory_ids, tokens = ranked
    assert ids(thread.search("rank0", soft_token_budget=tokens[0])) == memory_ids[:1]
    assert ids(thread.search("rank0", soft_token_budget=sum(tokens[:3]))) == memory_ids[:3]


@pytest.mark.parametrize("budget", [0, -5, None])
def test_soft_token_budget_zero_negative_or_none_disables_the_target(ranked, budget):
    thread, memory_ids, _ = ranked
    assert ids(thread.search("rank0", soft_token_budget=budget)) == memory_ids


def test_hard_and_soft_budgets_together_must_both_hold(ranked):
    thread, memory_ids, tokens = ranked
    # The soft target alone would keep rank1 and rank2; the hard cap only leaves room for rank1.
    assert (
        ids(thread.search("rank0", soft_token_budget=tokens[0] + 1, token_budget=sum(tokens[:2]) - 1)) == memory_ids[:1]
    )
    # The hard cap alone would keep three; the soft target is reached after two.
    assert ids(thread.search("rank0", soft_token_budget=tokens[0] + 1, token_budget=sum(tokens[:3]))) == memory_ids[:2]


def test_budgets_apply_after_max_results(ranked):
    thread, memory_ids, tokens = ranked
    assert ids(thread.search("rank0", max_results=2, token_budget=sum(tokens))) == memory_ids[:2]


def test_thread_search_config_supplies_the_default_token_budget(ranked_memory, ranked):
    _, memory_ids, tokens = ranked
    budgeted = ranked_memory.create_thread(
        thread_id="t-budget",
        user_id="u1",
        agent_id="a1",
        search_config=MemorySearchConfig(token_budget=sum(tokens[:2])),
    )
    assert ids(budgeted.search("rank0")) == memory_ids[:2]
    # An explicit argument wins over the config; <= 0 turns the configured cap off.
    assert ids(budgeted.search("rank0", token_budget=tokens[0])) == memory_ids[:1]
    assert ids(budgeted.search("rank0", token_budget=0)) == memory_ids


def test_thread_search_config_supplies_the_default_soft_token_budget(ranked_memory, ranked):
    _, memory_ids, tokens = ranked
    budgeted = ranked_memory.create_thread(
        thread_id="t-soft",
        user_id="u1",
        agent_id="a1",
        search_config=MemorySearchConfig(soft_token_budget=tokens[0] + 1),
    )
    assert ids(budgeted.search("rank0")) == memory_ids[:2]
    assert ids(budgeted.search("rank0", soft_token_budget=0)) == memory_ids


def test_a_thread_without_search_config_applies_no_budget(ranked):
    thread, memory_ids, _ = ranked
    assert ids(thread.search("rank0")) == memory_ids


def test_client_search_config_supplies_the_default_budget_of_client_searches(store_factory):
    store = store_factory(embedder=RankEmbedder(), search_strategy=SearchStrategy.VECTOR)
    plain = AgentMemory(store)
    thread = plain.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    memory_ids = [thread.add_memory(content, memory_id=f"m{n}") for n, content in enumerate(RANKED_CONTENTS, 1)]
    first_tokens = estimate_tokens(plain.search("rank0", user_id="u1")[0].formatted_content)
    budgeted = AgentMemory(store, search_config=MemorySearchConfig(token_budget=first_tokens))
    assert ids(budgeted.search("rank0", user_id="u1")) == memory_ids[:1]
    assert ids(budgeted.search("rank0", user_id="u1", token_budget=0)) == memory_ids


# --- SearchResult (§9.6) -------------------------------------------------------------------


def test_search_result_exposes_the_records_fields(thread):
    thread.add_memory(
        "The user prefers window seats.", memory_id="seat", metadata={"k": "v"}, timestamp="2024-05-01T12:00:00Z"
    )
    [result] = thread.search("window seats")
    assert isinstance(result, SearchResult)
    assert isinstance(result.distance, float)
    assert result.id == "seat" == result.record.id
    assert result.content == "The user prefers window seats." == result.record.content
    assert result.metadata == {"k": "v"}
    assert result.timestamp is not None and result.timestamp.startswith("2024-05-01T12:00:00")
    assert isinstance(result.record, ScopedRecord)
    assert (result.record.user_id, result.record.agent_id, result.record.thread_id) == ("u1", "a1", "t1")


def test_search_result_timestamp_falls_back_to_the_creation_time(thread):
    thread.add_memory("The user prefers aisle seats.", memory_id="seat")
    [result] = thread.search("aisle seats")
    assert result.timestamp is not None


def test_search_result_of_a_message_carries_a_scoped_message_record(thread):
    [message_id] = thread.add_messages([{"role": "tool-runner", "content": "pizza message"}])
    [result] = thread.search("pizza message")
    assert result.id == message_id
    assert result.record.record_type == "message"
    assert isinstance(result.record, ScopedRecord) and result.record.thread_id == "t1"


def test_formatted_content_contains_the_content(thread):
    thread.add_memory("The user prefers window seats.")
    [result] = thread.search("window seats")
    assert "The user prefers window seats." in result.formatted_content


def test_formatted_content_is_xml_escaped(thread):
    thread.add_memory("Use <b>bold</b> & keep it short", memory_id="markup")
    [result] = thread.search("bold short")
    assert result.content == "Use <b>bold</b> & keep it short"
    formatted = result.formatted_content
    assert "<b>" not in formatted and "</b>" not in formatted
    assert "& keep" not in formatted
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; keep it short" in formatted


def test_formatted_content_of_a_message_is_xml_escaped(thread):
    thread.add_messages([{"role": "user", "content": 'a "quote" & <tag>'}])
    [result] = thread.search("quote tag")
    assert "<tag>" not in result.formatted_content


# --- async twin ----------------------------------------------------------------------------


def test_search_async_returns_the_same_results_as_search(ranked):
    thread, memory_ids, tokens = ranked
    results = asyncio.run(thread.search_async("rank0"))
    assert ids(results) == memory_ids
    assert all(isinstance(r, SearchResult) for r in results)
    assert ids(asyncio.run(thread.search_async("rank0", token_budget=sum(tokens[:2])))) == memory_ids[:2]


def test_search_async_raises_the_same_errors(thread):
    with pytest.raises(ValueError):
        asyncio.run(thread.search_async("pizza", max_results=0))
    with pytest.raises(ValueError):
        asyncio.run(thread.search_async("pizza", metadata_filter=[("a", 1)]))
