"""LLM-backed summaries, autonomous links and image captions, against a real local LLM server.

API_SPEC §4.3.2-§4.3.4 (add_memory autonomous_linking, add_image / update_image captions), §6.6 (automatic
linking, the pizza walk-through), §7.1-§7.3 and §7.5 (persisted summary, topics, get_summary), §8 (extraction
config, image context), §10.1 (C-T1 to C-T3); DECISIONS D7, D9. The LLM is `FakeMemoryLlm` (tests/engine/helpers.py):
an OpenAI-compatible HTTP server on 127.0.0.1 that answers each engine task with a scripted JSON value.
"""

from __future__ import annotations

import asyncio
import base64
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from memory.engine import (
    AgentMemory,
    ImageContent,
    ImageInputLimitConfig,
    MemoryExtractionConfig,
    MemoryExtractionImageContext,
    MemoryExtractionMode,
    MemoryLinkExtractionMode,
    OpenAICompatibleLlm,
    RecordStatus,
    connect,
)

from .helpers import FakeMemoryLlm, RecordedRequest, fake_memory_llm
from .test_images import jpeg_bytes, png_bytes

PNG = png_bytes(color=(200, 30, 30))
OTHER_PNG = png_bytes(color=(30, 30, 200))
JPEG = jpeg_bytes()

SUMMARY_ONLY = {"extract_memories": False, "enable_context_summary": True}
"""Summaries with extraction off: the summary check runs on every add_messages call (§7.3)."""
NOTHING = {"extract_memories": False, "enable_context_summary": False}
"""No extraction and no summary: only captions and links reach the LLM."""

THIN_TEXT = "The user's preferred pizza style is thin crust."
SOURDOUGH_TEXT = "The user now prefers sourdough pizza."


# --- fixtures and helpers --------------------------------------------------------------------------


@pytest.fixture
def fake() -> Iterator[FakeMemoryLlm]:
    with fake_memory_llm() as server:
        yield server


@pytest.fixture
def llm(fake: FakeMemoryLlm) -> Iterator[OpenAICompatibleLlm]:
    with OpenAICompatibleLlm(fake.url, "test-model", max_attempts=2, retry_backoff=0.01) as model:
        yield model


@pytest.fixture
def make_client() -> Iterator[Callable[..., AgentMemory]]:
    """Clients on fresh in-memory SQLite stores: make_client(llm, **MemoryExtractionConfig fields)."""
    made: list[AgentMemory] = []

    def factory(llm: OpenAICompatibleLlm | None = None, **config: Any) -> AgentMemory:
        client = connect(
            "sqlite://:memory:",
            llm=llm,
            memory_extraction_config=MemoryExtractionConfig(**config) if config else None,
        )
        made.append(client)
        return client

    yield factory
    for client in made:
        client.close()


def say(thread, *texts: str, role: str = "user") -> list[str]:
    """One add_messages call with one message per text."""
    return thread.add_messages([{"role": role, "content": text} for text in texts])


def stored_thread(thread):
    return thread.store.get_thread(thread.thread_id)


def summary_texts(fake: FakeMemoryLlm) -> list[str]:
    return [fake.user_text(request) for request in fake.of("thread_summary")]


def system_text(request: RecordedRequest) -> str:
    return request.body["messages"][0]["content"]


def image_urls(request: RecordedRequest) -> list[str]:
    content = request.body["messages"][-1]["content"]
    if isinstance(content, str):
        return []
    return [part["image_url"]["url"] for part in content if part.get("type") == "image_url"]


def data_url(data: bytes, media_type: str) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"


def image_part(data: bytes = PNG, description: str | None = None) -> dict[str, Any]:
    return {"type": "image", "bytes": data, "description": description}


def id_of_line_containing(text: str, needle: str) -> str:
    """The [id] of the prompt line that shows `needle` (the engine lists memories as "[id] (type) content")."""
    match = re.search(r"^\[([^\]]+)\] \(\w+\) .*" + re.escape(needle), text, re.MULTILINE)
    assert match, f"no memory line with {needle!r} in:\n{text}"
    return match.group(1)


def section(text: str, title: str) -> str:
    """The body of one "TITLE:\\n..." section of a prompt (up to the next blank line)."""
    match = re.search(re.escape(title) + r":\n(.*?)(?:\n\n|\Z)", text, re.DOTALL)
    assert match, f"no {title!r} section in:\n{text}"
    return match.group(1)


# --- §7.3 summary persistence and refresh ------------------------------------------------------------


def test_add_messages_persists_the_llm_summary_and_topics_and_the_card_renders_them(fake, llm, make_client):
    fake.answers["thread_summary"] = lambda request: {
        "summary": "The user loves pizza & pasta.",
        "topics": ["pizza", " ", "Italian food"],
    }
    thread = make_client(llm, **SUMMARY_ONLY).create_thread(thread_id="t1", user_id="u1", agent_id="a1")

    assert len(say(thread, "I love pizza.", "And pasta too.")) == 2

    assert fake.count("thread_summary") == 1
    assert fake.count("memory_extraction") == 0
    stored = stored_thread(thread)
    assert stored.summary == "The user loves pizza & pasta."
    assert stored.topics == ["pizza", "Italian food"]  # blank topics are dropped
    content = thread.get_context_card().content
    assert "<summary>The user loves pizza &amp; pasta.</summary>" in content
    assert "<topics><topic>pizza</topic><topic>Italian food</topic></topics>" in content
    assert content.index("<summary>") < content.index("<topics>")
    assert fake.count("thread_summary") == 1  # the card reuses the persisted summary


def test_the_summary_waits_for_n_messages_since_the_last_summary(fake, llm, make_client):
    thread = make_client(llm, context_summary_update_frequency=3, **SUMMARY_ONLY).create_thread()

    say(thread, "first message")
    say(thread, "second message")
    assert fake.count("thread_summary") == 0
    assert stored_thread(thread).summary is None
    thread.get_context_card()  # a check before the third message does not refresh either
    assert fake.count("thread_summary") == 0

    say(thread, "third message")
    assert fake.count("thread_summary") == 1
    [first] = summary_texts(fake)
    assert all(text in first for text in ("first message", "second message", "third message"))
    assert stored_thread(thread).summary == "summary #1"

    say(thread, "fourth message", "fifth message")
    assert fake.count("thread_summary") == 1
    say(thread, "sixth message")
    assert fake.count("thread_summary") == 2
    second = summary_texts(fake)[1]
    assert all(text in second for text in ("fourth message", "fifth message", "sixth message"))
    assert "third message" not in second
    assert stored_thread(thread).summary == "summary #2"


SUMMARY_DUE_AFTER_2 = {"memory_extraction_frequency": 10, "context_summary_update_frequency": 2}
"""The summary is checked only when an extraction runs (every 10 messages), and due after 2 new ones."""


def test_a_card_built_without_refreshing_a_due_summary_asks_and_writes_nothing(fake, llm, make_client):
    thread = make_client(llm, **SUMMARY_DUE_AFTER_2).create_thread()
    say(thread, "first message")
    assert thread.messages_due_for_summary() == 0  # one new message: not due yet
    say(thread, "second message", "third message")
    before = stored_thread(thread)

    card = thread.get_context_card(refresh_summary_if_due=False)

    assert thread.messages_due_for_summary() == 3
    assert fake.count("thread_summary") == 0
    assert stored_thread(thread) == before
    assert card.summary == "user: first message\nuser: second message\nuser: third message"  # the transcript


def test_the_agents_card_still_refreshes_a_due_summary_first(fake, llm, make_client):
    thread = make_client(llm, **SUMMARY_DUE_AFTER_2).create_thread()
    say(thread, "first message", "second message")

    card = thread.get_context_card()

    assert fake.count("thread_summary") == 1
    assert card.summary == stored_thread(thread).summary == "summary #1"
    assert thread.messages_due_for_summary() == 0


def test_no_summary_is_due_without_an_llm(memory):
    thread = memory.create_thread()
    say(thread, "first message", "second message")

    assert thread.messages_due_for_summary() == 0


def test_refresh_summary_asks_the_llm_now_whatever_the_frequency(fake, llm, make_client):
    thread = make_client(llm, context_summary_update_frequency=10, **SUMMARY_ONLY).create_thread()
    say(thread, "first message")
    assert fake.count("thread_summary") == 0

    summary = thread.refresh_summary()

    assert fake.count("thread_summary") == 1
    assert summary.content == stored_thread(thread).summary == "summary #1"


def test_refresh_summary_with_no_message_since_the_last_asks_nothing_and_writes_nothing(fake, llm, make_client):
    thread = make_client(llm, context_summary_update_frequency=10, **SUMMARY_ONLY).create_thread()
    say(thread, "first message")
    thread.refresh_summary()
    version = stored_thread(thread).version

    assert thread.refresh_summary() is None

    assert fake.count("thread_summary") == 1
    assert stored_thread(thread).version == version
    assert stored_thread(thread).summary == "summary #1"


def test_set_summary_puts_back_an_earlier_summary_and_the_messages_it_covered(fake, llm, make_client):
    thread = make_client(llm, context_summary_update_frequency=10, **SUMMARY_ONLY).create_thread()
    fake.answers["thread_summary"] = lambda request: {
        "summary": f"summary #{fake.count('thread_summary')}",
        "topics": [f"topic {fake.count('thread_summary')}"],
    }
    say(thread, "first message")
    thread.refresh_summary()
    earlier = stored_thread(thread)
    say(thread, "second message")
    thread.refresh_summary()

    thread.set_summary(
        earlier.summary,
        earlier.topics,
        summarized_through=earlier.settings["llm"]["summarized_through"],
        expected_version=stored_thread(thread).version,
    )

    assert (stored_thread(thread).summary, stored_thread(thread).topics) == ("summary #1", ["topic 1"])
    thread.refresh_summary()  # the second message is not summarised any more: it is folded in again
    assert "second message" in summary_texts(fake)[2] and "first message" not in summary_texts(fake)[2]
    assert "summary #1" in summary_texts(fake)[2]


def test_refresh_summary_needs_an_llm(memory):
    with pytest.raises(ValueError, match="needs an LLM"):
        memory.create_thread().refresh_summary()


def test_the_summary_count_is_persisted_across_thread_handles(fake, llm, make_client):
    client = make_client(llm, context_summary_update_frequency=3, **SUMMARY_ONLY)
    say(client.create_thread(thread_id="t1"), "one", "two")
    assert fake.count("thread_summary") == 0

    say(client.get_thread("t1"), "three")  # a new handle continues the count

    assert fake.count("thread_summary") == 1
    assert stored_thread(client.get_thread("t1")).summary == "summary #1"


@pytest.mark.parametrize("frequency", [0, -1])
def test_a_frequency_of_zero_or_less_refreshes_at_every_check(fake, llm, make_client, frequency):
    thread = make_client(llm, context_summary_update_frequency=frequency, **SUMMARY_ONLY).create_thread()

    for number in range(1, 4):
        say(thread, f"message {number}")
        assert fake.count("thread_summary") == number
        assert stored_thread(thread).summary == f"summary #{number}"


def test_with_extraction_enabled_the_summary_check_waits_for_a_due_extraction(fake, llm, make_client):
    thread = make_client(
        llm, memory_extraction_frequency=4, context_summary_update_frequency=3, enable_context_summary=True
    ).create_thread()

    for number in range(1, 4):
        say(thread, f"message {number}")
    # Three messages since the last summary would be enough, but no extraction has run yet.
    assert fake.count("memory_extraction") == 0
    assert fake.count("thread_summary") == 0
    assert stored_thread(thread).summary is None

    say(thread, "message 4")

    assert [task for task, _ in fake.requests] == ["memory_extraction", "thread_summary"]
    [summary_request] = summary_texts(fake)
    assert all(f"message {number}" in summary_request for number in range(1, 5))
    assert stored_thread(thread).summary == "summary #1"


def test_with_extraction_enabled_the_summary_still_needs_its_own_frequency(fake, llm, make_client):
    thread = make_client(
        llm, memory_extraction_frequency=2, context_summary_update_frequency=3, enable_context_summary=True
    ).create_thread()

    say(thread, "message 1", "message 2")  # extraction due; only 2 messages for the summary
    assert (fake.count("memory_extraction"), fake.count("thread_summary")) == (1, 0)

    say(thread, "message 3", "message 4")
    assert (fake.count("memory_extraction"), fake.count("thread_summary")) == (2, 1)


def test_the_next_summary_request_gets_the_previous_summary_and_only_the_new_messages(fake, llm, make_client):
    thread = make_client(llm, **SUMMARY_ONLY).create_thread()

    say(thread, "I am planning a trip to Rome.")
    say(thread, "I will travel in May.")

    first, second = summary_texts(fake)
    assert "PREVIOUS SUMMARY:\n(none)" in first
    assert "I am planning a trip to Rome." in first
    assert "PREVIOUS SUMMARY:\nsummary #1" in second
    assert "I will travel in May." in section(second, "NEW MESSAGES")
    assert "trip to Rome" not in second
    assert stored_thread(thread).summary == "summary #2"


def test_the_stored_summary_is_context_for_the_next_extraction(fake, llm, make_client):
    fake.answers["thread_summary"] = lambda request: {"summary": "The user is planning a Rome trip.", "topics": []}
    thread = make_client(llm).create_thread()  # defaults: extraction and summary on, frequency -1

    say(thread, "I am planning a trip to Rome.")
    say(thread, "Book me a hotel near the Colosseum.")

    first, second = (fake.user_text(request) for request in fake.of("memory_extraction"))
    assert "SUMMARY OF THE CONVERSATION SO FAR" not in first  # no summary existed before the first message
    assert section(second, "SUMMARY OF THE CONVERSATION SO FAR") == "The user is planning a Rome trip."
    assert "Book me a hotel near the Colosseum." in section(second, "NEW MESSAGES")


def test_background_mode_persists_the_summary_after_the_wait(fake, llm, make_client):
    client = make_client(llm, extraction_mode=MemoryExtractionMode.BACKGROUND, **SUMMARY_ONLY)
    thread = client.create_thread()

    say(thread, "I love pizza.")
    thread.wait_for_memory_extraction(timeout=10)

    assert stored_thread(thread).summary == "summary #1"
    assert client.extraction_stats()["completed"] >= 1


# --- §7.2 get_summary --------------------------------------------------------------------------------


def test_get_summary_returns_the_persisted_summary_without_asking_again(fake, llm, make_client):
    thread = make_client(llm, **SUMMARY_ONLY).create_thread()
    say(thread, "I love pizza.")
    assert fake.count("thread_summary") == 1

    summary = thread.get_summary()

    assert summary.content == "summary #1" == stored_thread(thread).summary
    assert fake.count("thread_summary") == 1
    assert thread.get_summary(token_budget=2).content == "summary #1"[: int(2 * 3.5)]


def test_get_summary_refreshes_a_summary_that_is_due(fake, llm, make_client):
    # Extraction every 5 messages: add_messages does not check the summary before that (§7.3).
    thread = make_client(llm, memory_extraction_frequency=5, context_summary_update_frequency=1).create_thread()
    say(thread, "I love pizza.", "Margherita is my favourite.")
    assert fake.count("thread_summary") == 0

    assert thread.get_summary().content == "summary #1"

    assert fake.count("thread_summary") == 1
    assert "Margherita is my favourite." in summary_texts(fake)[0]
    assert stored_thread(thread).summary == "summary #1"
    assert thread.get_summary().content == "summary #1"
    assert fake.count("thread_summary") == 1  # nothing new since: reused


def test_get_summary_async_refreshes_too(fake, llm, make_client):
    thread = make_client(llm, memory_extraction_frequency=5, context_summary_update_frequency=1).create_thread()
    say(thread, "I love pizza.")

    assert asyncio.run(thread.get_summary_async()).content == "summary #1"
    assert stored_thread(thread).summary == "summary #1"


def test_get_summary_except_last_summarises_the_earlier_messages_on_the_fly(fake, llm, make_client):
    thread = make_client(llm, **SUMMARY_ONLY).create_thread()
    say(thread, "The first message.", "The second message.", "The last message.")
    assert stored_thread(thread).summary == "summary #1"
    state_before = stored_thread(thread).settings
    fake.answers["thread_summary"] = lambda request: {"summary": "An on-the-fly summary.", "topics": ["t"]}

    summary = thread.get_summary(except_last=1)

    assert summary.content == "An on-the-fly summary."
    assert fake.count("thread_summary") == 2
    request = summary_texts(fake)[1]
    assert "PREVIOUS SUMMARY:\n(none)" in request
    assert "The first message." in request and "The second message." in request
    assert "The last message." not in request
    stored = stored_thread(thread)
    assert stored.summary == "summary #1"  # never persisted (§7.3)
    assert stored.topics == []
    assert stored.settings == state_before
    assert thread.get_summary().content == "summary #1"
    assert fake.count("thread_summary") == 2


def test_get_summary_except_last_covering_every_message_asks_nothing(fake, llm, make_client):
    thread = make_client(llm, **SUMMARY_ONLY).create_thread()
    say(thread, "I love pizza.", "Margherita please.")
    assert fake.count("thread_summary") == 1

    assert thread.get_summary(except_last=2).content == ""
    assert thread.get_summary(except_last=5).content == ""
    assert fake.count("thread_summary") == 1  # no request to summarise nothing
    assert stored_thread(thread).summary == "summary #1"


@pytest.mark.parametrize("how", ["http500", "malformed"])
def test_a_failing_summary_llm_falls_back_to_a_transcript(fake, llm, make_client, how):
    fake.fail("thread_summary", how)
    client = make_client(llm, **SUMMARY_ONLY)
    thread = client.create_thread()

    assert len(say(thread, "I love pizza.", "Margherita please.")) == 2  # the failure is not raised

    assert fake.count("thread_summary") >= 1
    assert stored_thread(thread).summary is None
    assert client.extraction_stats()["failed"] == 1
    assert thread.get_summary().content == "user: I love pizza.\nuser: Margherita please."
    assert thread.get_summary(except_last=1).content == "user: I love pizza."
    assert thread.get_context_card().summary == "user: I love pizza.\nuser: Margherita please."

    fake.fail("thread_summary", None)  # the LLM is back: the summary is still due and gets written
    assert thread.get_summary().content.startswith("summary #")
    assert stored_thread(thread).summary == thread.get_summary().content


def test_without_context_summary_no_summary_is_requested(fake, llm, make_client):
    thread = make_client(llm, extract_memories=True, enable_context_summary=False).create_thread()

    say(thread, "I love pizza.")
    say(thread, "Margherita please.")
    card = thread.get_context_card()
    summary = thread.get_summary()

    assert fake.count("memory_extraction") == 2
    assert fake.count("thread_summary") == 0
    assert stored_thread(thread).summary is None
    assert summary.content == "user: I love pizza.\nuser: Margherita please."
    assert "<topics>" not in card.content


def test_context_card_token_limit_bounds_the_summary_prompt(fake, llm, make_client):
    client = make_client(llm, **SUMMARY_ONLY)
    messages = [f"message {number:02d} " + "about the travel plans " * 4 for number in range(30)]
    bounded = client.create_thread(context_card_token_limit=400)
    unbounded = client.create_thread()

    bounded.add_messages([{"role": "user", "content": text} for text in messages])
    unbounded.add_messages([{"role": "user", "content": text} for text in messages])

    small, large = fake.of("thread_summary")
    prompt_chars = len(system_text(small)) + len(fake.user_text(small))
    assert prompt_chars <= int(400 * 3.5) + 100  # the headers around the sections are not counted
    small_text = fake.user_text(small)
    assert "message 29 " in small_text  # the newest messages are kept…
    assert "message 00 " not in small_text  # …the oldest left out
    assert all(f"message {number:02d} " in fake.user_text(large) for number in range(30))


def test_context_card_token_limit_clips_a_long_previous_summary(fake, llm, make_client):
    fake.answers["thread_summary"] = lambda request: {"summary": "long summary " * 200, "topics": []}
    thread = make_client(llm, **SUMMARY_ONLY).create_thread(context_card_token_limit=400)

    say(thread, "first")
    say(thread, "second")

    previous = section(summary_texts(fake)[1], "PREVIOUS SUMMARY")
    assert previous.startswith("long summary")
    assert len(previous) <= int(400 * 3.5) // 3
    assert "second" in section(summary_texts(fake)[1], "NEW MESSAGES")


# --- §10.1 C-T1 to C-T3 ------------------------------------------------------------------------------


def test_c_t1_to_c_t3_a_thread_with_an_llm_and_context_summary(fake, llm, make_client):
    client = make_client()  # the LLM is the thread's own
    thread = client.create_thread(
        thread_id="c4", llm=llm, memory_extraction_config=MemoryExtractionConfig(enable_context_summary=True)
    )

    assert len(thread.add_messages([{"role": "user", "content": "I love pizza."}])) == 1  # C-T1
    assert fake.count("memory_extraction") == 1
    assert stored_thread(thread).summary == "summary #1"

    assert thread.add_memory("Remember this preference", memory_id="mem-thread-docs") == "mem-thread-docs"  # C-T2
    assert (
        asyncio.run(thread.add_memory_async("Remember this preference", memory_id="mem-thread-docs-async"))
        == "mem-thread-docs-async"
    )  # C-T3
    assert {m.id for m in client.list_memories(thread_id="c4")} >= {"mem-thread-docs", "mem-thread-docs-async"}


# --- §6.6 autonomous linking of manual memories ------------------------------------------------------


def supersede_thin_crust(request: RecordedRequest) -> dict[str, Any]:
    """The linker of the graph guide: the new sourdough memory supersedes the thin-crust one."""
    text = FakeMemoryLlm.user_text(request)
    return {
        "links": [
            {"new_memory": 1, "target_id": id_of_line_containing(text, "thin crust"), "relation_type": "supersedes"}
        ]
    }


def test_the_pizza_walk_through_links_sourdough_as_superseding_thin_crust(fake, llm, make_client):
    client = make_client(llm, extract_memories=False)
    thread = client.create_thread(thread_id="pizza-preferences", user_id="graph-demo-user")
    thin = thread.add_memory(THIN_TEXT, memory_type="preference", memory_id="pizza-thin-crust")
    assert fake.count("memory_links") == 0  # nothing to link the first memory to
    fake.answers["memory_links"] = supersede_thin_crust

    sourdough = thread.add_memory(SOURDOUGH_TEXT, memory_type="preference", memory_id="pizza-sourdough")

    assert sourdough == "pizza-sourdough"
    [request] = fake.of("memory_links")
    text = fake.user_text(request)
    assert section(text, "NEW MEMORIES") == f"[1] (preference) {SOURDOUGH_TEXT}"
    assert f"[{thin}] (preference) {THIN_TEXT}" in section(text, "EXISTING MEMORIES")
    assert sourdough not in section(text, "EXISTING MEMORIES")
    [relation] = client.list_relations(record_id=sourdough)
    assert (relation.source_record_id, relation.target_record_id, relation.relation_type) == (
        sourdough,
        thin,
        "supersedes",
    )
    assert relation.metadata == {"created_by": llm.name, "origin": "llm"}
    assert relation.made_by_llm
    assert client.get_memory(thin).status is RecordStatus.INVALID
    assert client.get_memory(sourdough).status is RecordStatus.VALID

    results = thread.search("Which pizza does the user prefer?", num_hops=1, include_invalid_results=False)
    assert thin not in [result.id for result in results]  # invalid: not a direct result…
    [direct] = [result for result in results if result.id == sourdough]
    assert [(rel.label_from(sourdough), child.id) for rel, child in direct.linked_results] == [
        ("supersedes", thin)
    ]  # …but still linked context


def test_without_an_llm_autonomous_linking_is_off_by_default(fake, llm, make_client):
    client = make_client(llm, extract_memories=False)
    thread = client.create_thread(llm=None)  # the thread opts out of the client's LLM
    thread.add_memory(THIN_TEXT, memory_type="preference")

    new = thread.add_memory(SOURDOUGH_TEXT, memory_type="preference")

    assert client.get_memory(new).content == SOURDOUGH_TEXT
    assert fake.requests == []
    assert len(client.list_relations(thread_id=thread.thread_id)) == 0


def test_autonomous_linking_false_makes_no_link_request(fake, llm, make_client):
    fake.answers["memory_links"] = supersede_thin_crust
    client = make_client(llm, extract_memories=False)
    thread = client.create_thread()
    thin = thread.add_memory(THIN_TEXT, memory_type="preference")

    thread.add_memory(SOURDOUGH_TEXT, memory_type="preference", autonomous_linking=False)
    client.add_memory(SOURDOUGH_TEXT, user_id=thread.user_id, agent_id=thread.agent_id, autonomous_linking=False)

    assert fake.count("memory_links") == 0
    assert len(client.list_relations(record_id=thin)) == 0
    assert client.get_memory(thin).status is RecordStatus.VALID


def test_autonomous_linking_true_without_an_llm_is_refused_before_storing(make_client):
    client = make_client()
    thread = client.create_thread()

    with pytest.raises(ValueError, match="LLM"):
        thread.add_memory(SOURDOUGH_TEXT, memory_id="m-thread", autonomous_linking=True)
    with pytest.raises(ValueError, match="LLM"):
        client.add_memory(SOURDOUGH_TEXT, memory_id="m-client", user_id="u1", autonomous_linking=True)

    for memory_id in ("m-thread", "m-client"):
        with pytest.raises(KeyError):
            client.get_memory(memory_id)
    assert len(client.list_memories(user_id=thread.user_id)) == 0


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_autonomous_linking_must_be_a_bool(fake, llm, make_client, value):
    thread = make_client(llm, extract_memories=False).create_thread()
    with pytest.raises(ValueError, match="autonomous_linking"):
        thread.add_memory(SOURDOUGH_TEXT, memory_id="m1", autonomous_linking=value)
    with pytest.raises(KeyError):
        thread.client.get_memory("m1")


def test_the_disabled_link_mode_turns_the_default_off_but_not_an_explicit_request(fake, llm, make_client):
    fake.answers["memory_links"] = supersede_thin_crust
    client = make_client(llm, extract_memories=False, memory_link_extraction_mode=MemoryLinkExtractionMode.DISABLED)
    thread = client.create_thread()
    thin = thread.add_memory(THIN_TEXT, memory_type="preference")

    thread.add_memory("The user also likes calzone pizza.", memory_type="preference")
    assert fake.count("memory_links") == 0

    sourdough = thread.add_memory(SOURDOUGH_TEXT, memory_type="preference", autonomous_linking=True)
    assert fake.count("memory_links") == 1
    [relation] = client.list_relations(record_id=thin)
    assert (relation.source_record_id, relation.relation_type) == (sourdough, "supersedes")


@pytest.mark.parametrize("how", ["http500", "malformed"])
def test_a_failing_linker_never_removes_the_memory(fake, llm, make_client, how):
    fake.fail("memory_links", how)
    client = make_client(llm, extract_memories=False)
    thread = client.create_thread()
    thin = thread.add_memory(THIN_TEXT, memory_type="preference")

    sourdough = thread.add_memory(SOURDOUGH_TEXT, memory_type="preference", memory_id="pizza-sourdough")
    by_client = client.add_memory(SOURDOUGH_TEXT, user_id=thread.user_id, agent_id=thread.agent_id)

    assert sourdough == "pizza-sourdough"
    assert fake.count("memory_links") >= 2
    assert client.get_memory(sourdough).content == SOURDOUGH_TEXT
    assert client.get_memory(by_client).content == SOURDOUGH_TEXT
    assert client.get_memory(thin).status is RecordStatus.VALID
    assert len(client.list_relations(user_id=thread.user_id)) == 0
    assert client.extraction_stats()["failed"] == 2


def test_proposed_links_to_memories_that_were_not_candidates_are_ignored(fake, llm, make_client):
    client = make_client(llm, extract_memories=False)
    thread = client.create_thread(user_id="u1", agent_id="a1")
    thin = thread.add_memory(THIN_TEXT, memory_type="preference")
    elsewhere = client.add_memory(THIN_TEXT, memory_type="preference", user_id="u2", agent_id="a1")

    def reckless(request: RecordedRequest) -> dict[str, Any]:
        return {
            "links": [
                {"new_memory": 1, "target_id": elsewhere, "relation_type": "supersedes"},  # another user's
                {"new_memory": 1, "target_id": "no-such-memory", "relation_type": "supersedes"},
                {"new_memory": 1, "target_id": thin, "relation_type": "replaces"},  # unknown type
                {"new_memory": 7, "target_id": thin, "relation_type": "supersedes"},  # no such new memory
                "not a link",
            ]
        }

    fake.answers["memory_links"] = reckless
    sourdough = thread.add_memory(SOURDOUGH_TEXT, memory_type="preference")

    [request] = fake.of("memory_links")
    assert elsewhere not in fake.user_text(request)
    assert client.get_memory(sourdough).content == SOURDOUGH_TEXT
    assert len(client.list_relations(user_id="u1")) == 0
    assert len(client.list_relations(user_id="u2")) == 0
    assert client.get_memory(thin).status is RecordStatus.VALID
    assert client.get_memory(elsewhere).status is RecordStatus.VALID


def test_thread_add_memory_with_another_user_links_within_that_users_memories(fake, llm, make_client):
    client = make_client(llm, extract_memories=False)
    thread = client.create_thread(user_id="u1", agent_id="a1")
    threads_own = thread.add_memory(THIN_TEXT, memory_type="preference", autonomous_linking=False)
    overridden = thread.add_memory(THIN_TEXT, memory_type="preference", user_id="u2", autonomous_linking=False)
    fake.answers["memory_links"] = supersede_thin_crust

    sourdough = thread.add_memory(SOURDOUGH_TEXT, memory_type="preference", user_id="u2")

    [request] = fake.of("memory_links")
    existing = section(fake.user_text(request), "EXISTING MEMORIES")
    assert overridden in existing and threads_own not in existing
    [relation] = client.list_relations(record_id=sourdough)
    assert (relation.target_record_id, relation.relation_type) == (overridden, "supersedes")
    assert client.get_memory(threads_own).status is RecordStatus.VALID  # the thread's user is untouched
    assert client.get_memory(overridden).status is RecordStatus.INVALID


def test_client_add_memory_links_within_that_users_memories_only(fake, llm, make_client):
    client = make_client(llm, extract_memories=False)
    mine = client.add_memory(THIN_TEXT, memory_type="preference", user_id="u1", autonomous_linking=False)
    theirs = client.add_memory(THIN_TEXT, memory_type="preference", user_id="u2", autonomous_linking=False)
    fake.answers["memory_links"] = supersede_thin_crust

    sourdough = client.add_memory(SOURDOUGH_TEXT, memory_type="preference", user_id="u1")

    [request] = fake.of("memory_links")
    existing = section(fake.user_text(request), "EXISTING MEMORIES")
    assert mine in existing and theirs not in existing
    [relation] = client.list_relations(record_id=sourdough)
    assert (relation.source_record_id, relation.target_record_id, relation.relation_type) == (
        sourdough,
        mine,
        "supersedes",
    )
    assert client.get_memory(mine).status is RecordStatus.INVALID
    assert client.get_memory(theirs).status is RecordStatus.VALID


def test_client_add_memory_links_by_default_with_an_llm(fake, llm, make_client):
    client = make_client(llm)
    thin = client.add_memory(THIN_TEXT, memory_type="preference", user_id="u1")
    fake.answers["memory_links"] = supersede_thin_crust

    asyncio.run(client.add_memory_async(SOURDOUGH_TEXT, memory_type="preference", user_id="u1"))

    assert fake.count("memory_links") == 1
    assert client.get_memory(thin).status is RecordStatus.INVALID


# --- §4.3.3 / §4.3.4 image captions ------------------------------------------------------------------


@pytest.mark.parametrize(("data", "media_type"), [(PNG, "image/png"), (JPEG, "image/jpeg")])
def test_add_image_without_a_description_is_captioned_by_the_llm(fake, llm, make_client, data, media_type):
    fake.answers["image_caption"] = lambda request: {"description": "  A red bicycle leaning on a wall.  "}
    thread = make_client(llm, **NOTHING).create_thread()

    image_id = thread.add_image(data)

    [request] = fake.of("image_caption")
    assert image_urls(request) == [data_url(data, media_type)]
    [image] = thread.list_images(image_id=image_id)
    assert image.content == "A red bicycle leaning on a wall."
    results = thread.search("red bicycle", record_types=["image"])
    assert [result.id for result in results] == [image_id]


def test_add_image_with_a_description_makes_no_caption_request(fake, llm, make_client):
    thread = make_client(llm, **NOTHING).create_thread()

    image_id = thread.add_image(PNG, description="my own words")

    assert fake.count("image_caption") == 0
    assert thread.list_images(image_id=image_id)[0].content == "my own words"


@pytest.mark.parametrize("how", ["http500", "malformed"])
def test_a_failing_caption_leaves_the_image_stored_without_a_description(fake, llm, make_client, how):
    fake.fail("image_caption", how)
    thread = make_client(llm, **NOTHING).create_thread()

    image_id = thread.add_image(PNG)

    assert fake.count("image_caption") >= 1
    [image] = thread.list_images(image_id=image_id, include_bytes=True)
    assert image.content == ""
    assert image.bytes == PNG


def test_an_empty_caption_answer_leaves_the_description_empty(fake, llm, make_client):
    fake.answers["image_caption"] = lambda request: {"description": "   "}
    thread = make_client(llm, **NOTHING).create_thread()

    image_id = thread.add_image(PNG)

    assert fake.count("image_caption") == 1
    assert thread.list_images(image_id=image_id)[0].content == ""


def test_message_image_parts_without_a_description_are_captioned(fake, llm, make_client):
    fake.answers["image_caption"] = lambda request: {"description": "a blue square"}
    thread = make_client(llm, **NOTHING).create_thread()

    [message_id] = thread.add_messages(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look at these"},
                    image_part(OTHER_PNG),
                    image_part(PNG, description="a red square"),
                ],
            }
        ]
    )

    [request] = fake.of("image_caption")
    assert image_urls(request) == [data_url(OTHER_PNG, "image/png")]
    parts = [part for part in thread.get_message(message_id).content if isinstance(part, ImageContent)]
    assert [part.description for part in parts] == ["a blue square", "a red square"]
    assert {image.content for image in thread.list_images()} == {"a blue square", "a red square"}


def test_update_image_with_description_none_re_captions(fake, llm, make_client):
    fake.answers["image_caption"] = lambda request: {"description": "a fresh caption"}
    client = make_client(llm, **NOTHING)
    thread = client.create_thread()
    image_id = thread.add_image(PNG, description="an old description")

    assert thread.update_image(image_id, description=None) == image_id

    [request] = fake.of("image_caption")
    assert image_urls(request) == [data_url(PNG, "image/png")]
    assert thread.list_images(image_id=image_id)[0].content == "a fresh caption"

    thread.update_image(image_id, description="typed by hand")
    assert fake.count("image_caption") == 1
    assert thread.list_images(image_id=image_id)[0].content == "typed by hand"


def test_client_add_image_and_update_image_caption_with_the_llm(fake, llm, make_client):
    captions = iter(["first caption", "second caption"])
    fake.answers["image_caption"] = lambda request: {"description": next(captions)}
    client = make_client(llm, **NOTHING)

    image_id = client.add_image(JPEG, user_id="u1")
    [request] = fake.of("image_caption")
    assert image_urls(request) == [data_url(JPEG, "image/jpeg")]
    assert client.list_images(image_id=image_id)[0].content == "first caption"

    client.update_image(image_id, description=None)
    assert client.list_images(image_id=image_id)[0].content == "second caption"
    assert [result.id for result in client.search("second caption", user_id="u1", record_types=["image"])] == [image_id]


def test_without_an_llm_images_keep_an_empty_description(fake, make_client):
    client = make_client()
    thread = client.create_thread()

    image_id = thread.add_image(PNG)
    client_image = client.add_image(PNG, user_id="u1")
    thread.add_messages([{"role": "user", "content": [{"type": "text", "text": "see"}, image_part(OTHER_PNG)]}])
    described = thread.add_image(JPEG, description="words")
    thread.update_image(described, description=None)

    assert thread.list_images(image_id=image_id)[0].content == ""
    assert client.list_images(image_id=client_image)[0].content == ""
    assert thread.list_images(image_id=described)[0].content == ""  # None clears it
    assert all(image.content == "" for image in thread.list_images())
    assert fake.requests == []


# --- §8 image context of extraction ------------------------------------------------------------------


def extraction_thread(llm, make_client, context: MemoryExtractionImageContext, **options: Any):
    client = make_client(llm, enable_context_summary=False, memory_extraction_image_context=context)
    return client.create_thread(**options)


def add_look(thread, *parts: dict[str, Any]) -> str:
    [message_id] = thread.add_messages(
        [{"role": "user", "content": [{"type": "text", "text": "look at my bike"}, *parts]}]
    )
    return message_id


def test_caption_image_context_shows_the_description_in_the_extraction_prompt(fake, llm, make_client):
    fake.answers["image_caption"] = lambda request: {"description": "a green tent"}
    thread = extraction_thread(llm, make_client, MemoryExtractionImageContext.CAPTION)

    add_look(thread, image_part(PNG, description="a red bicycle"), image_part(OTHER_PNG))

    # The caption is written before the extraction, which then sees it.
    assert [task for task, _ in fake.requests] == ["image_caption", "memory_extraction"]
    [request] = fake.of("memory_extraction")
    text = fake.user_text(request)
    assert "look at my bike\n[image: a red bicycle]\n[image: a green tent]" in text
    assert image_urls(request) == []


def test_disabled_image_context_shows_a_placeholder_only(fake, llm, make_client):
    thread = extraction_thread(llm, make_client, MemoryExtractionImageContext.DISABLED)

    add_look(thread, image_part(PNG, description="a red bicycle"))

    [request] = fake.of("memory_extraction")
    text = fake.user_text(request)
    assert "look at my bike\n[image]" in text
    assert "red bicycle" not in text
    assert image_urls(request) == []


def test_memory_image_context_asks_the_llm_to_remember_the_images(fake, llm, make_client):
    thread = extraction_thread(llm, make_client, MemoryExtractionImageContext.MEMORY)

    add_look(thread, image_part(PNG, description="a red bicycle"))

    [request] = fake.of("memory_extraction")
    assert "[image: a red bicycle]" in fake.user_text(request)
    assert "Images in the messages" in system_text(request)


def test_image_context_sends_the_images_to_the_extraction_llm(fake, llm, make_client):
    thread = extraction_thread(llm, make_client, MemoryExtractionImageContext.IMAGE)

    add_look(thread, image_part(PNG, description="a red bicycle"), image_part(JPEG, description="a green tent"))

    [request] = fake.of("memory_extraction")
    assert image_urls(request) == [data_url(PNG, "image/png"), data_url(JPEG, "image/jpeg")]
    content = request.body["messages"][-1]["content"]
    assert content[0]["type"] == "text" and "NEW MESSAGES" in content[0]["text"]


def test_image_context_respects_max_images_per_llm_request(fake, llm, make_client):
    thread = extraction_thread(
        llm,
        make_client,
        MemoryExtractionImageContext.IMAGE,
        image_input_limit_config=ImageInputLimitConfig(max_images_per_llm_request=1),
    )

    add_look(thread, image_part(PNG, description="a red bicycle"), image_part(JPEG, description="a green tent"))

    [request] = fake.of("memory_extraction")
    assert image_urls(request) == [data_url(PNG, "image/png")]
    assert "[image: a green tent]" in fake.user_text(request)  # the image left out is still described
