"""A context card as of a message (Thread.get_context_card(as_of_message_id=...), beyond the SDK), the
store search's `created_at_or_before` cutoff behind it, and the results a card chose (card.results)."""

from __future__ import annotations

import asyncio
from datetime import datetime

import pytest

from memory.engine import AgentMemory, SearchStrategy, TimeToLiveAnchor

CARD = {"max_recent_messages": 10, "max_relevant_results": 10}


def say(thread, text: str, role: str = "user") -> str:
    return thread.add_messages([{"role": role, "content": text}])[0]


def texts(card) -> list[str]:
    return [message.text for message in card.recent_messages or []]


def chosen(card) -> list[str]:
    return [result.id for result in card.results]


@pytest.fixture
def vector_memory(store_factory) -> AgentMemory:
    """Vector ranking only: a record's distance does not depend on records stored after it (BM25's
    statistics do), so a card as of a message can be compared with the card made at that moment."""
    return AgentMemory(store_factory(search_strategy=SearchStrategy.VECTOR))


def test_a_card_as_of_message_3_leaves_out_a_memory_added_after_it(memory):
    thread = memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    say(thread, "My cat Miso hates the vet.")
    say(thread, "Miso is a grey cat who loves tuna.", role="assistant")
    thread.add_memory("Miso the cat loves tuna.", memory_id="before")
    third = say(thread, "What should I feed my cat Miso?")
    thread.add_memory("Miso the cat is allergic to chicken.", memory_id="after")
    say(thread, "Tuna, and no chicken for Miso the cat.", role="assistant")
    say(thread, "Thanks!")

    then = thread.get_context_card(**CARD, as_of_message_id=third)
    now = thread.get_context_card(**CARD)
    assert "after" not in chosen(then) and "before" in chosen(then)
    assert {"after", "before"} <= set(chosen(now))
    assert texts(then) == [
        "My cat Miso hates the vet.",
        "Miso is a grey cat who loves tuna.",
        "What should I feed my cat Miso?",
    ]
    assert texts(now)[-1] == "Thanks!"
    assert then.summary == ""  # every message of then is a recent message: none is repeated in a summary
    summary = thread.get_context_card(as_of_message_id=third).summary
    assert summary.endswith("user: What should I feed my cat Miso?")  # the transcript ends there too
    assert "Thanks" not in then.content and "allergic" not in then.content


def test_the_card_as_of_a_message_is_the_card_made_right_after_it(vector_memory):
    thread = vector_memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    options = {**CARD, "min_relevant_results_by_type": {"message": 2, "fact": 1}, "fallback_message_count": 3}
    say(thread, "I am planning a trip to Lisbon in May.")
    thread.add_memory("Alice is vegetarian.", memory_type="fact", memory_id="diet")
    say(thread, "Príncipe Real is calm at night.", role="assistant")
    thread.add_memory("Alice prefers quiet hotels.", memory_type="preference", memory_id="quiet")
    third = say(thread, "Find me a quiet vegetarian-friendly hotel in Lisbon.")
    made_then = thread.get_context_card(**options)
    say(thread, "Here are three hotels in Príncipe Real.", role="assistant")
    thread.add_memory("Alice booked the Lisbon hotel.", memory_type="fact", memory_id="booked")
    thread.add_memory("Alice likes hotels near parks.", memory_type="preference", memory_id="parks")
    say(thread, "Book the second one, please.")
    assert thread.get_context_card(**options, as_of_message_id=third).content == made_then.content
    assert chosen(thread.get_context_card(**options, as_of_message_id=third)) == chosen(made_then)
    assert {"booked", "parks"} <= set(chosen(thread.get_context_card(**options)))


def test_messages_written_in_one_call_end_at_the_message(memory):
    """The messages after it in the same add_messages call share its creation time: they are
    still left out of the recent messages, the transcript and the message search."""
    thread = memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    ids = thread.add_messages(
        [{"role": "user", "content": f"sourdough question {i}"} for i in range(1, 5)]
        + [{"role": "assistant", "content": "sourdough answer"}]
    )
    card = thread.get_context_card(
        **CARD, min_relevant_results_by_type={"message": 5}, fallback_message_count=10, as_of_message_id=ids[1]
    )
    assert texts(card) == ["sourdough question 1", "sourdough question 2"]
    assert set(chosen(card)) == {ids[0], ids[1]}
    summary = thread.get_context_card(fallback_message_count=10, as_of_message_id=ids[1]).summary
    assert summary == "user: sourdough question 1\nuser: sourdough question 2"
    assert set(chosen(thread.get_context_card(**CARD, min_relevant_results_by_type={"message": 5}))) == set(ids)


def test_except_last_messages_counts_back_from_the_message(memory):
    thread = memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    ids = [say(thread, f"message number {i}") for i in range(1, 6)]
    card = thread.get_context_card(except_last_messages=1, max_recent_messages=1, as_of_message_id=ids[2])
    assert texts(card) == ["message number 3"]
    assert card.summary == "user: message number 1\nuser: message number 2"


def test_memories_keep_their_content_as_it_is_now_and_deleted_ones_are_gone(memory):
    thread = memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    thread.add_memory("The garden has tomatoes.", memory_id="kept")
    thread.add_memory("The garden has basil.", memory_id="deleted")
    first = say(thread, "What grows in my garden?")
    thread.update_memory("kept", content="The garden has tomatoes and peppers.")
    thread.delete_memory("deleted")
    card = thread.get_context_card(**CARD, as_of_message_id=first)
    assert chosen(card) == ["kept"]
    assert "tomatoes and peppers" in card.content


def test_the_stored_summary_and_topics_are_the_current_ones(memory):
    thread = memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    first = say(thread, "Hello there.")
    say(thread, "Later message.")
    memory.store.save_thread_summary("t1", "They talked about the weather.", ["weather"])
    card = thread.get_context_card(as_of_message_id=first, max_recent_messages=5)
    assert card.summary == "They talked about the weather."
    assert list(card.topics) == ["weather"]
    assert texts(card) == ["Hello there."]


def test_a_message_of_another_thread_a_missing_or_expired_one_is_a_key_error(memory):
    thread = memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    other = memory.create_thread(thread_id="t2", user_id="u1", agent_id="a1")
    foreign = say(other, "elsewhere")
    [expired] = thread.add_messages(
        [{"role": "user", "content": "old", "timestamp": "2000-01-01T00:00:00Z"}],
        ttl_days=1,
        ttl_anchor=TimeToLiveAnchor.TIMESTAMP,
    )
    memory_id = thread.add_memory("a memory, not a message")
    for bad in (foreign, "missing", expired, memory_id, 5, None, ["x"]):
        with pytest.raises(KeyError):
            thread.get_context_card(as_of_message_id=bad)
    with pytest.raises(KeyError):
        asyncio.run(thread.get_context_card_async(as_of_message_id=foreign))


def test_the_card_names_the_results_it_chose_in_card_order(memory):
    thread = memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    thread.add_memory("Bruno bakes sourdough.", memory_type="fact", memory_id="f1")
    thread.add_memory("Bruno likes rye bread.", memory_type="preference", memory_id="p1")
    say(thread, "How do I bake sourdough rye bread?")
    card = thread.get_context_card(min_relevant_results_by_type={"preference": 1, "message": 1})
    assert card.results == list(card.relevant_results)
    assert [result.record.record_type for result in card.results] == ["preference", "message", "fact"]
    assert all(isinstance(result.distance, float) for result in card.results)
    rendered = "\n".join(result.formatted_content for result in card.results)
    assert f"<relevant_information>\n{rendered}\n</relevant_information>" in card.content


# --- the store's cutoff ----------------------------------------------------------------------


def test_a_store_search_keeps_the_records_created_at_or_before_the_cutoff(store):
    early = store.add(["apple pie recipe", "apple tart"], "memory", user_ids="u1")
    cutoff = store.get("memory", early[1]).created_at
    late = store.add(["apple crumble"], "memory", user_ids="u1")
    for strategy in ("vector", "keyword", "hybrid"):
        found = {record.id for record, _ in store.search("apple", 10, strategy=strategy, created_at_or_before=cutoff)}
        assert found == set(early), strategy
        everything = {record.id for record, _ in store.search("apple", 10, strategy=strategy)}
        assert everything == set(early + late)
    moment = datetime.fromisoformat(cutoff)
    assert {record.id for record, _ in store.search("apple", 10, created_at_or_before=moment)} == set(early)
    assert store.search("apple", 10, created_at_or_before="2000-01-01T00:00:00Z") == []
    assert {record.id for record, _ in store.search("apple", 10, created_at_or_before=None)} == set(early + late)


def test_the_cutoff_applies_to_linked_memories_too(memory):
    old = memory.add_memory("tea in the morning", user_id="u1", memory_id="old")
    cutoff = memory.get_memory(old).created_at
    memory.add_memory("coffee later", user_id="u1", memory_id="new", memory_id_to_link="old", link_type="supports")
    memory.add_memory("green tea only", user_id="u1", memory_id="newer", memory_id_to_link="old", link_type="refines")
    [hit] = memory.store.search("tea in the morning", 1, num_hops=2, created_at_or_before=cutoff)
    assert hit[0].id == "old" and hit[0].linked_results == []
    [hit] = memory.store.search("tea in the morning", 1, num_hops=2, record_types=["memory"])
    assert {child[0].id for _, child in hit[0].linked_results} == {"new", "newer"}


@pytest.mark.parametrize("bad", ["yesterday", "", 5, ["2020-01-01"], "9999-12-31T23:00:00-05:00"])
def test_a_bad_cutoff_is_a_value_error_naming_it(store, bad):
    store.add(["apple"], "memory")
    with pytest.raises(ValueError, match="created_at_or_before"):
        store.search("apple", 3, created_at_or_before=bad)
