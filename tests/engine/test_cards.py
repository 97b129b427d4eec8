"""Context cards and summaries (spec §7, DECISIONS D7; checks C-T10, C-T11, C-T22..C-T27, C-D21, C-D22)."""

from __future__ import annotations

import re

import pytest

from memory.engine import MemorySearchConfig, Message, RecordStatus, TextContent
from memory.engine.cards import ContextCard, Summary, build_context_card, build_summary
from memory.engine.search import SearchResult, estimate_tokens
from memory.engine.types import MemoryRecord


def say(thread, *texts: str, role: str = "user") -> list[str]:
    return thread.add_messages([{"role": role, "content": text} for text in texts])


def ids(card: ContextCard) -> list[str]:
    return [result.id for result in card.relevant_results or []]


def types(card: ContextCard) -> list[str]:
    return [result.record.record_type for result in card.relevant_results or []]


# --- Summary ------------------------------------------------------------------------------


def test_a_summary_returns_its_text_unchanged():
    summary = Summary(content="Plan the Rome itinerary.")
    assert summary.content == "Plan the Rome itinerary."  # C-T25a
    assert str(summary) == "Plan the Rome itinerary."  # C-T25b
    assert Summary(content="Keep the tea preference in mind.").content == "Keep the tea preference in mind."  # C-T26


def test_a_plain_summary_formats_as_its_text():
    assert Summary(content="Thread recap").formatted_content == "Thread recap"  # C-T27


def test_a_summary_formats_its_text_without_escaping():
    assert Summary("a < b & c").formatted_content == "a < b & c"


def test_a_summary_needs_a_string():
    with pytest.raises(ValueError, match="string"):
        Summary(None)


# --- ContextCard rendering ----------------------------------------------------------------


def test_a_card_renders_its_summary():
    card = ContextCard(summary="ctx")
    assert "<summary>" in card.content and "ctx" in card.content  # C-T22
    assert card.content == "<summary>ctx</summary>"


def test_an_empty_card_renders_as_the_empty_string():
    assert ContextCard(summary="").formatted_content == ""  # C-T23
    assert ContextCard().content == ""
    assert ContextCard(summary="", topics=[], relevant_results=[], recent_messages=[]).content == ""


def test_a_card_renders_its_topics():
    card = ContextCard(summary="ctx", topics=["travel"])
    assert "<topics>" in card.formatted_content  # C-T24
    assert card.content == "<summary>ctx</summary>\n<topics><topic>travel</topic></topics>"


def test_content_and_formatted_content_are_the_same_text():
    card = ContextCard(summary="ctx", topics=["a", "b"], recent_messages=[Message("user", "hi")])
    assert card.content == card.formatted_content


def test_a_card_renders_every_section_in_order():
    record = MemoryRecord(id="m1", record_type="fact", content="Likes tea", timestamp="2024-01-01T00:00:00+00:00")
    result = SearchResult(distance=0.1, record=record)
    card = ContextCard(
        summary="Trip planning",
        topics=["travel", "rome"],
        relevant_results=[result],
        recent_messages=[
            Message("user", "Book a hotel", timestamp="2024-01-02T00:00:00+00:00"),
            Message("assistant", "Done"),
        ],
    )
    assert card.content == (
        "<summary>Trip planning</summary>\n"
        "<topics><topic>travel</topic><topic>rome</topic></topics>\n"
        f"<relevant_information>\n{result.formatted_content}\n</relevant_information>\n"
        "<recent_messages>\n"
        "<message><timestamp>2024-01-02T00:00:00+00:00</timestamp><role>user</role>"
        "<content>Book a hotel</content></message>\n"
        "<message><timestamp></timestamp><role>assistant</role><content>Done</content></message>\n"
        "</recent_messages>"
    )


def test_a_card_without_summary_renders_its_other_sections_only():
    card = ContextCard(topics=["travel"])
    assert card.content == "<topics><topic>travel</topic></topics>"


def test_a_card_escapes_summary_topics_and_messages():
    card = ContextCard(
        summary="</summary>&",
        topics=["<b>"],
        recent_messages=[Message("<tool>", "1 < 2 & 3 > 2")],
    )
    assert "<summary>&lt;/summary&gt;&amp;</summary>" in card.content
    assert "<topic>&lt;b&gt;</topic>" in card.content
    assert "<role>&lt;tool&gt;</role><content>1 &lt; 2 &amp; 3 &gt; 2</content>" in card.content


def test_a_card_renders_a_structured_message_by_its_text():
    message = Message("user", (TextContent(text="first"), TextContent(text="second")))
    assert "<content>first\nsecond</content>" in ContextCard(recent_messages=[message]).content


def test_a_card_renders_recent_messages_with_its_message_format():
    card = ContextCard(recent_messages=[Message("user", "a&b")], message_format="{role} said {content}")
    assert card.content == "<recent_messages>\nuser said a&amp;b\n</recent_messages>"


def test_a_card_exposes_its_relevant_results_which_may_be_none():
    assert ContextCard(summary="x").relevant_results is None


# --- build_summary ------------------------------------------------------------------------


def test_the_summary_of_an_empty_thread_is_empty(thread):
    assert build_summary(thread).content == ""


def test_the_summary_is_a_transcript_of_the_messages_oldest_first(thread):
    say(thread, "I love pizza.")
    say(thread, "Noted!", role="assistant")
    assert build_summary(thread).content == "user: I love pizza.\nassistant: Noted!"


def test_one_message_gives_a_non_empty_summary(thread):
    say(thread, "Summary source message", role="assistant")  # C-T14
    assert build_summary(thread).content


def test_the_transcript_spans_more_than_one_page_of_messages(thread):
    say(thread, *(f"m{i:03d}" for i in range(120)))
    lines = build_summary(thread).content.split("\n")
    assert lines == [f"user: m{i:03d}" for i in range(120)]


def test_the_transcript_keeps_the_latest_whole_messages_within_4000_characters(thread):
    say(thread, *(f"message {i:03d} " + "x" * 90 for i in range(100)))
    text = build_summary(thread).content
    assert len(text) <= 4000
    assert text.endswith("message 099 " + "x" * 90)
    assert all(line.startswith("user: message ") for line in text.split("\n"))
    assert "message 000" not in text
    # As many whole messages as fit: one more would overflow.
    kept = len(text.split("\n"))
    assert len(text) + len("\nuser: message 000 " + "x" * 90) > 4000 and kept > 30


def test_an_overlong_latest_message_keeps_its_end(thread):
    say(thread, "old")
    say(thread, "start " + "y" * 5000 + " the end")
    text = build_summary(thread).content
    assert len(text) == 4000
    assert text.startswith("user: …") and text.endswith(" the end")


def test_except_last_leaves_the_latest_messages_out(thread):
    say(thread, "one", "two", "three")
    assert build_summary(thread, except_last=1).content == "user: one\nuser: two"
    assert build_summary(thread, except_last=3).content == ""
    assert build_summary(thread, except_last=10).content == ""


def test_a_token_budget_caps_a_transcript_keeping_its_end(thread):
    say(thread, "a" * 100, "b" * 100)
    text = build_summary(thread, token_budget=10).content
    assert len(text) <= 35
    assert text.endswith("b" * 20)


@pytest.mark.parametrize("budget", [0, -5, None])
def test_a_token_budget_of_zero_or_less_sets_no_cap(thread, budget):
    say(thread, "a" * 300)
    assert build_summary(thread, token_budget=budget).content == "user: " + "a" * 300


def test_a_budget_larger_than_the_transcript_changes_nothing(thread):
    say(thread, "short")
    assert build_summary(thread, token_budget=1000).content == "user: short"


def test_a_stored_summary_is_preferred_to_the_transcript(thread):
    say(thread, "I love pizza.")
    thread.store.save_thread_summary(thread.thread_id, "The user loves pizza.", ["food"])
    assert build_summary(thread).content == "The user loves pizza."
    assert build_summary(thread, except_last=0).content == "The user loves pizza."


def test_a_summary_a_person_sets_is_the_cards_and_moves_the_threads_version(thread):
    say(thread, "I love pizza.")
    version = thread.store.get_thread(thread.thread_id).version

    assert thread.set_summary("The user loves pizza.", ["food"], expected_version=version) is None

    stored = thread.store.get_thread(thread.thread_id)
    assert (stored.summary, stored.topics, stored.version) == ("The user loves pizza.", ["food"], version + 1)
    card = thread.get_context_card()
    assert (card.summary, card.topics) == ("The user loves pizza.", ["food"])
    assert "llm" not in stored.settings  # the progress stays as it was: none

    thread.set_summary(None, summarized_through=-1)
    stored = thread.store.get_thread(thread.thread_id)
    assert (stored.summary, stored.topics, stored.settings["llm"]) == (None, None, {"summarized_through": -1})


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"summary": 5}, "summary must be a string or None"),
        ({"summary": "s", "topics": ["food", 1]}, "topics must be a list of strings"),
        ({"summary": "s", "topics": "food"}, "topics must be a list of strings"),
        ({"summary": "x" * 1_000_001}, "summary has 1,000,001 characters"),
        ({"summary": "s", "summarized_through": -2}, "summarized_through must be a message's seq_no or -1"),
        ({"summary": "s", "summarized_through": True}, "summarized_through must be"),
        ({"summary": "s", "summarized_through": 2**64}, "summarized_through must fit in 64 bits"),
        ({"summary": "s", "expected_version": 7}, "thread 't1' is at version 1, not 7"),
        ({"summary": "s", "expected_version": -1}, "expected_version must be a non-negative integer"),
    ],
)
def test_set_summary_refuses_bad_values_and_a_stale_version_writing_nothing(thread, arguments, message):
    before = thread.store.get_thread(thread.thread_id)

    with pytest.raises(ValueError, match=re.escape(message)):
        thread.set_summary(**arguments)

    assert thread.store.get_thread(thread.thread_id) == before


def test_set_summary_of_a_deleted_thread_is_a_key_error(memory, thread):
    memory.delete_thread(thread.thread_id)

    with pytest.raises(KeyError):
        thread.set_summary("gone")


def test_except_last_ignores_the_stored_summary(thread):
    say(thread, "one", "two")
    thread.store.save_thread_summary(thread.thread_id, "Recap", None)
    assert build_summary(thread, except_last=1).content == "user: one"


def test_a_token_budget_keeps_the_start_of_a_stored_summary(thread):
    thread.store.save_thread_summary(thread.thread_id, "Gist first. " + "detail " * 50, None)
    assert build_summary(thread, token_budget=4).content == "Gist first. de"  # int(4 * 3.5) characters


@pytest.mark.parametrize("value", [-1, 1.5, "2", True, None])
def test_except_last_must_be_a_non_negative_integer(thread, value):
    with pytest.raises(ValueError, match="except_last"):
        build_summary(thread, except_last=value)


@pytest.mark.parametrize("value", [1.5, "10", True])
def test_the_summary_token_budget_must_be_an_integer(thread, value):
    with pytest.raises(ValueError, match="token_budget"):
        build_summary(thread, token_budget=value)


def test_build_summary_rejects_unknown_keywords(thread):
    with pytest.raises(TypeError):
        build_summary(thread, foo=1)  # C-D22


# --- build_context_card: summary, topics and recent messages ---------------------------------


def test_the_card_of_an_empty_thread_is_empty(thread):
    card = build_context_card(thread)
    assert card.content == ""
    assert card.relevant_results == [] and card.recent_messages == []


def test_the_card_summary_falls_back_to_the_last_five_messages(thread):
    say(thread, *(f"note {i}" for i in range(7)))
    card = build_context_card(thread)
    assert card.summary == "\n".join(f"user: note {i}" for i in range(2, 7))


def test_fallback_message_count_sets_how_many_messages_the_fallback_covers(thread):
    say(thread, "one", "two", "three")
    assert build_context_card(thread, fallback_message_count=2).summary == "user: two\nuser: three"
    assert build_context_card(thread, fallback_message_count=0).summary == ""


def test_the_card_prefers_the_stored_summary_and_shows_the_stored_topics(thread):
    say(thread, "Let's plan Rome.")
    thread.store.save_thread_summary(thread.thread_id, "Planning a Rome trip.", ["travel", "rome"])
    card = build_context_card(thread)
    assert card.summary == "Planning a Rome trip."
    assert "<topics><topic>travel</topic><topic>rome</topic></topics>" in card.content


def test_the_excluded_tail_is_left_out_of_the_fallback_summary(thread):
    say(thread, "one", "two", "three")
    assert build_context_card(thread, except_last_messages=1).summary == "user: one\nuser: two"


def test_recent_messages_are_the_latest_ones(thread):
    say(thread, "one", "two", "three")
    card = build_context_card(thread, max_recent_messages=2)
    assert [m.text for m in card.recent_messages] == ["two", "three"]
    assert "<recent_messages>" in card.content


def test_recent_messages_are_all_messages_when_there_are_fewer(thread):
    say(thread, "one", "two")
    assert [m.text for m in build_context_card(thread, max_recent_messages=10).recent_messages] == ["one", "two"]


def test_the_fallback_summary_leaves_out_the_recent_messages(thread):
    say(thread, *(f"note {i}" for i in range(8)))
    card = build_context_card(thread, max_recent_messages=3)
    assert [m.text for m in card.recent_messages] == ["note 5", "note 6", "note 7"]
    assert card.summary == "\n".join(f"user: note {i}" for i in range(5))
    assert card.content.count("note 6") == 1


def test_a_fallback_summary_with_every_message_recent_is_left_out(thread):
    say(thread, "one", "two")
    card = build_context_card(thread, max_recent_messages=2)
    assert card.summary == ""
    assert "<summary>" not in card.content and card.content.count("two") == 1


def test_recent_messages_do_not_change_the_relevant_search(thread):
    thread.add_memory("User likes sushi", memory_id="sushi")
    thread.add_memory("User likes pizza", memory_id="pizza")
    say(thread, "sushi", "pizza")
    card = build_context_card(thread, fallback_message_count=1, max_relevant_results=1, max_recent_messages=1)
    assert (card.summary, ids(card)) == ("user: sushi", ["pizza"])


def test_a_stored_summary_is_shown_beside_the_recent_messages(thread):
    say(thread, "Let's plan Rome.")
    thread.store.save_thread_summary(thread.thread_id, "Planning a Rome trip.", None)
    assert build_context_card(thread, max_recent_messages=1).summary == "Planning a Rome trip."


def test_a_self_contained_card_includes_the_excluded_tail_as_recent_messages(thread):
    say(thread, "one", "two", "three", "four")
    card = build_context_card(thread, except_last_messages=2, max_recent_messages=2)
    assert [m.text for m in card.recent_messages] == ["three", "four"]
    assert card.summary == "user: one\nuser: two"


def test_an_external_tail_card_has_no_recent_messages(thread):
    say(thread, "one", "two", "three")
    card = build_context_card(thread, except_last_messages=2, max_recent_messages=0)
    assert card.recent_messages == [] and "<recent_messages>" not in card.content


def test_max_recent_messages_must_be_zero_or_the_excluded_count(thread):
    with pytest.raises(ValueError, match="max_recent_messages must be 0 or 3"):
        build_context_card(thread, except_last_messages=3, max_recent_messages=2)  # C-D21


# --- build_context_card: relevant information ------------------------------------------------


@pytest.fixture
def pizza_thread(thread):
    """C-T10: a pizza memory and a message asking about pizza."""
    thread.add_memory("User likes pizza", memory_id="mem-context-docs")
    say(thread, "Tell me about pizza")
    return thread


def test_the_card_includes_a_relevant_memory(pizza_thread):
    card = build_context_card(pizza_thread)
    assert "User likes pizza" in card.content  # C-T10c
    assert "<relevant_information>" in card.content
    assert ids(card) == ["mem-context-docs"]


def test_relevant_results_render_as_their_formatted_content(pizza_thread):
    card = build_context_card(pizza_thread)
    assert card.relevant_results[0].formatted_content in card.content


@pytest.fixture
def many_memories(thread):
    """Eight memories about pizza of every memory type, a guideline and a preference among them."""
    kinds = ["memory", "fact", "memory", "fact", "memory", "fact", "guideline", "preference"]
    for i, kind in enumerate(kinds):
        thread.add_memory(f"pizza note {i}", memory_type=kind, memory_id=f"m{i}")
    say(thread, "What about pizza?")
    return thread


def test_the_card_holds_five_relevant_results_by_default(many_memories):
    assert len(build_context_card(many_memories).relevant_results) == 5


def test_max_relevant_results_caps_the_relevant_results(many_memories):
    assert len(build_context_card(many_memories, max_relevant_results=2).relevant_results) == 2


def test_max_relevant_results_zero_leaves_no_relevant_information(many_memories):
    card = build_context_card(many_memories, max_relevant_results=0)
    assert card.relevant_results == [] and "<relevant_information>" not in card.content


def test_a_minimum_within_the_maximum_keeps_the_maximum(many_memories):
    card = build_context_card(many_memories, max_relevant_results=4, min_relevant_results_by_type={"memory": 1})
    assert len(card.relevant_results or []) <= 4  # C-T10d
    assert len(card.relevant_results) == 4 and "memory" in types(card)


def test_minimums_of_rare_types_are_met_within_the_default_maximum(many_memories):
    card = build_context_card(many_memories, min_relevant_results_by_type={"preference": 1, "guideline": 1})
    assert len(card.relevant_results or []) <= 5  # C-T11
    assert types(card)[:2] == ["preference", "guideline"]
    assert len(card.relevant_results) == 5


def test_minimums_above_the_maximum_raise_it_to_their_sum(many_memories):
    card = build_context_card(
        many_memories, max_relevant_results=1, min_relevant_results_by_type={"fact": 2, "preference": 1}
    )
    assert types(card) == ["fact", "fact", "preference"]


def test_minimums_above_the_default_maximum_raise_it_to_their_sum(many_memories):
    card = build_context_card(many_memories, min_relevant_results_by_type={"memory": 3, "fact": 3})
    assert types(card) == ["memory"] * 3 + ["fact"] * 3


def test_a_minimum_takes_what_exists_and_the_rest_is_filled_from_all_memory_types(many_memories):
    card = build_context_card(many_memories, min_relevant_results_by_type={"guideline": 3})
    assert types(card)[0] == "guideline"
    assert types(card).count("guideline") == 1 and len(card.relevant_results) == 5


def test_the_relevant_results_hold_no_duplicates(many_memories):
    card = build_context_card(many_memories, max_relevant_results=8, min_relevant_results_by_type={"fact": 3})
    assert len(ids(card)) == len(set(ids(card))) == 8


def test_a_zero_minimum_is_no_minimum(many_memories):
    with_zero = build_context_card(many_memories, min_relevant_results_by_type={"guideline": 0})
    assert ids(with_zero) == ids(build_context_card(many_memories))


def test_the_card_is_deterministic(many_memories):
    options = {"min_relevant_results_by_type": {"fact": 1, "memory": 1, "guideline": 1, "preference": 1}}
    assert ids(build_context_card(many_memories, **options)) == ids(build_context_card(many_memories, **options))


def test_messages_come_only_with_a_message_minimum(thread):
    say(thread, "pizza in Naples", "pizza in Rome", "What about pizza?")
    assert build_context_card(thread).relevant_results == []
    card = build_context_card(thread, min_relevant_results_by_type={"message": 2})
    assert types(card) == ["message", "message"]


def test_relevant_messages_come_from_the_current_thread_only(thread, other_thread):
    say(other_thread, "pizza pizza pizza in another thread")
    say(thread, "pizza here", "Tell me about pizza")
    card = build_context_card(thread, min_relevant_results_by_type={"message": 5})
    assert {result.record.thread_id for result in card.relevant_results} == {"t1"}


def test_relevant_memories_may_come_from_other_threads_of_the_same_user_and_agent(thread, other_thread):
    other_thread.add_memory("User likes pizza margherita", memory_id="elsewhere")
    say(thread, "Tell me about pizza")
    assert ids(build_context_card(thread)) == ["elsewhere"]


def test_memories_of_another_user_are_not_relevant(memory, thread):
    stranger = memory.create_thread(thread_id="t9", user_id="u9", agent_id="a1")
    stranger.add_memory("Stranger likes pizza")
    say(thread, "Tell me about pizza")
    assert build_context_card(thread).relevant_results == []


def test_the_excluded_tail_never_appears_among_relevant_messages(thread):
    kept = say(thread, "pizza early", "pizza middle")
    tail = say(thread, "pizza pizza latest")
    card = build_context_card(thread, except_last_messages=1, min_relevant_results_by_type={"message": 3})
    assert tail[0] not in ids(card)
    assert sorted(ids(card)) == sorted(kept)


def test_the_relevant_search_uses_the_fallback_text(thread):
    thread.add_memory("User likes sushi", memory_id="sushi")
    thread.add_memory("User likes pizza", memory_id="pizza")
    say(thread, "sushi", "pizza")
    assert ids(build_context_card(thread, fallback_message_count=1, max_relevant_results=1)) == ["pizza"]


def test_without_messages_the_stored_summary_drives_the_search(thread):
    thread.add_memory("User likes pizza", memory_id="pizza")
    thread.store.save_thread_summary(thread.thread_id, "Talking about pizza", None)
    assert ids(build_context_card(thread)) == ["pizza"]


def test_without_messages_or_summary_there_is_no_relevant_search(thread):
    thread.add_memory("User likes pizza")
    assert build_context_card(thread).relevant_results == []


def test_the_metadata_filter_applies_to_relevant_results(thread):
    thread.add_memory("pizza from chat", memory_id="chat", metadata={"source": "chat"})
    thread.add_memory("pizza from email", memory_id="email", metadata={"source": "email"})
    say(thread, "pizza")
    assert ids(build_context_card(thread, metadata_filter={"source": "chat"})) == ["chat"]


def test_invalid_memories_are_relevant_unless_excluded(thread):
    thread.add_memory("pizza valid", memory_id="valid")
    thread.add_memory("pizza invalid", memory_id="invalid", status=RecordStatus.INVALID)
    say(thread, "pizza")
    assert sorted(ids(build_context_card(thread))) == ["invalid", "valid"]
    assert ids(build_context_card(thread, include_invalid_results=False)) == ["valid"]


def test_a_hard_token_budget_trims_the_relevant_results(many_memories):
    full = build_context_card(many_memories)
    first = estimate_tokens(full.relevant_results[0].formatted_content)
    card = build_context_card(many_memories, token_budget=first)
    assert ids(card) == ids(full)[:1]


def test_a_hard_budget_smaller_than_the_first_result_leaves_none(many_memories):
    assert build_context_card(many_memories, token_budget=1).relevant_results == []


def test_a_soft_token_budget_keeps_the_result_that_reaches_it(many_memories):
    assert len(build_context_card(many_memories, soft_token_budget=1).relevant_results) == 1


def test_token_budgets_default_to_the_threads_search_config(memory):
    thread = memory.create_thread(thread_id="tb", user_id="u1", agent_id="a1", search_config=MemorySearchConfig(1))
    thread.add_memory("User likes pizza")
    say(thread, "pizza")
    assert build_context_card(thread).relevant_results == []
    assert len(build_context_card(thread, token_budget=0).relevant_results) == 1
    assert len(build_context_card(thread, token_budget=None).relevant_results) == 1


# --- build_context_card: validation --------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("fallback_message_count", -1),
        ("fallback_message_count", "5"),
        ("fallback_message_count", None),
        ("max_relevant_results", -1),
        ("max_relevant_results", 2.0),
        ("max_relevant_results", None),
        ("max_recent_messages", -1),
        ("max_recent_messages", True),
        ("except_last_messages", -2),
        ("except_last_messages", "1"),
        ("token_budget", "100"),
        ("token_budget", 1.5),
        ("soft_token_budget", "100"),
        ("soft_token_budget", False),
        ("metadata_filter", [("a", 1)]),
        ("include_invalid_results", 1),
        ("include_invalid_results", None),
        ("refresh_summary_if_due", 0),
        ("refresh_summary_if_due", "False"),
    ],
)
def test_a_bad_argument_is_a_value_error_naming_it(thread, option, value):
    with pytest.raises(ValueError, match=option):
        build_context_card(thread, **{option: value})


@pytest.mark.parametrize(
    "minimums",
    [{"image": 1}, {"user_profile": 1}, {"message": -1}, {"fact": 1.5}, {"memory": None}, [("fact", 1)], "fact"],
)
def test_bad_minimums_are_a_value_error(thread, minimums):
    with pytest.raises(ValueError, match="min_relevant_results_by_type"):
        build_context_card(thread, min_relevant_results_by_type=minimums)


def test_an_unknown_type_name_is_named_in_the_error(thread):
    with pytest.raises(ValueError, match="'facts'"):
        build_context_card(thread, min_relevant_results_by_type={"facts": 1})


def test_no_minimums_given_as_none_means_none(many_memories):
    assert len(build_context_card(many_memories, min_relevant_results_by_type=None).relevant_results) == 5


def test_build_context_card_rejects_unknown_keywords(thread):
    with pytest.raises(TypeError):
        build_context_card(thread, foo=1)  # C-D22
