"""Memory extraction by an LLM, INLINE mode (API_SPEC §4.1, §4.3.1, §4.3.11, §6.6, §8; DECISIONS D9).

The LLM is `FakeMemoryLlm`: a real OpenAI-compatible HTTP server on 127.0.0.1 that records every
request and answers each task ("memory_extraction", "memory_links", "shortened_message", ...) as the
test scripts it. Tests read the prompts the engine sent (the "NEW MESSAGES" and "EARLIER MESSAGES"
sections of the user prompt, the system prompt) and the records the answers produced.
"""

from __future__ import annotations

import warnings

import pytest

from memory.engine import (
    MemoryExtractionConfig,
    MemoryExtractionMode,
    MemoryLinkExtractionMode,
    OpenAICompatibleLlm,
    RecordStatus,
    SchemaPolicy,
    SQLiteMemoryStore,
    Thread,
    connect,
)
from memory.engine.types import SOURCE_MESSAGES_KEY

from .helpers import FakeMemoryLlm, RecordedRequest, fake_memory_llm

SCOPE = {"thread_id": "t1", "user_id": "u1", "agent_id": "a1"}
DISABLED_LINKS = MemoryLinkExtractionMode.DISABLED


# --- fixtures and helpers ------------------------------------------------------------------


@pytest.fixture
def fake():
    with fake_memory_llm() as server:
        yield server


@pytest.fixture
def make_llm(fake):
    made = []

    def factory(timeout: float = 5.0) -> OpenAICompatibleLlm:
        llm = OpenAICompatibleLlm(fake.url, "test-model", max_attempts=2, retry_backoff=0.01, timeout=timeout)
        made.append(llm)
        return llm

    yield factory
    for llm in made:
        llm.close()


@pytest.fixture
def make_client(make_llm):
    """In-memory clients with the fake LLM; `config=None` leaves the client without an extraction config."""
    made = []

    def factory(config: MemoryExtractionConfig | None = None, *, with_llm: bool = True, timeout: float = 5.0):
        client = connect(
            "sqlite://:memory:", llm=make_llm(timeout) if with_llm else None, memory_extraction_config=config
        )
        made.append(client)
        return client

    yield factory
    for client in made:
        client.close()


def cfg(**fields) -> MemoryExtractionConfig:
    """A config focused on extraction: no summary, no automatic links, unless the test asks for them."""
    fields.setdefault("enable_context_summary", False)
    fields.setdefault("memory_link_extraction_mode", DISABLED_LINKS)
    return MemoryExtractionConfig(**fields)


def user_messages(*texts: str) -> list[dict]:
    return [{"role": "user", "content": text} for text in texts]


def section(request: RecordedRequest, title: str) -> list[str] | None:
    """The lines of one titled section of the user prompt, or None when the prompt has no such section."""
    for block in FakeMemoryLlm.user_text(request).split("\n\n"):
        head, _, rest = block.partition("\n")
        if head.startswith(title):
            return rest.split("\n")
    return None


def said(lines: list[str] | None) -> list[str]:
    """The message texts of prompt lines such as "[1] user: text" or "assistant: text"."""
    return [line.split(": ", 1)[1] for line in lines or ()]


def new_texts(request: RecordedRequest) -> list[str]:
    return said(section(request, "NEW MESSAGES"))


def earlier_texts(request: RecordedRequest) -> list[str]:
    return said(section(request, "EARLIER MESSAGES"))


def system_text(request: RecordedRequest) -> str:
    return request.body["messages"][0]["content"]


def prompt_chars(request: RecordedRequest) -> int:
    return sum(len(m["content"]) for m in request.body["messages"] if isinstance(m["content"], str))


def remember(*memories: tuple[str, str, list[int]], links: list[dict] | None = None):
    """An extraction answer: each memory is (content, memory_type, source_messages)."""

    def answer(request: RecordedRequest) -> dict:
        body: dict = {
            "memories": [
                {"content": content, "memory_type": kind, "source_messages": sources}
                for content, kind, sources in memories
            ]
        }
        if links is not None:
            body["links"] = links
        return body

    return answer


def echo(request: RecordedRequest) -> dict:
    """One fact per new message: "Noted: <its text>", sourced from that message."""
    return {
        "memories": [
            {"content": f"Noted: {text}", "memory_type": "fact", "source_messages": [number]}
            for number, text in enumerate(new_texts(request), 1)
        ]
    }


def memory_contents(client, thread_id: str = "t1") -> list[str]:
    return [m.content for m in client.list_memories(thread_id=thread_id)]


# --- 1. one add_messages call ---------------------------------------------------------------


def test_extracted_memories_are_stored_typed_in_the_threads_scope_and_searchable(fake, make_client):
    fake.answers["memory_extraction"] = remember(
        ("The user lives in Lisbon.", "fact", [1]),
        ("The user prefers green tea over coffee.", "preference", [2]),
        ("Always answer the user in Portuguese.", "guideline", [2]),
        ("The user visited Porto last summer.", "memory", [1]),
    )
    client = make_client()  # the client's defaults: summary on, POST_EXTRACTION links
    thread = client.create_thread(**SCOPE)

    ids = thread.add_messages(
        [
            {"role": "user", "content": "I live in Lisbon and went to Porto last summer."},
            {"role": "assistant", "content": "Noted! Tea or coffee? And which language do you prefer?"},
        ]
    )

    assert [m.id for m in thread.get_messages()] == ids
    assert [m.content for m in thread.get_messages()] == [
        "I live in Lisbon and went to Porto last summer.",
        "Noted! Tea or coffee? And which language do you prefer?",
    ]
    memories = {m.content: m for m in client.list_memories(thread_id="t1")}
    assert {content: m.record_type for content, m in memories.items()} == {
        "The user lives in Lisbon.": "fact",
        "The user prefers green tea over coffee.": "preference",
        "Always answer the user in Portuguese.": "guideline",
        "The user visited Porto last summer.": "memory",
    }
    assert all((m.thread_id, m.user_id, m.agent_id) == ("t1", "u1", "a1") for m in memories.values())
    assert not set(ids) & {m.id for m in memories.values()}
    hits = thread.search("Lisbon", record_types=["fact"])
    assert [hit.record.content for hit in hits] == ["The user lives in Lisbon."]

    [request] = fake.of("memory_extraction")
    assert request.body["model"] == "test-model"
    assert new_texts(request) == [
        "I live in Lisbon and went to Porto last summer.",
        "Noted! Tea or coffee? And which language do you prefer?",
    ]
    first, second = section(request, "NEW MESSAGES")
    assert first.startswith("[1] user (") and second.startswith("[2] assistant (")  # numbered, with timestamps
    stats = client.extraction_stats()
    assert stats["failed"] == 0 and stats["completed"] == 1


def test_a_thread_llm_extracts_even_when_the_client_has_none(fake, make_client, make_llm):
    fake.answers["memory_extraction"] = echo
    client = make_client(cfg(), with_llm=False)
    thread = client.create_thread(**SCOPE, llm=make_llm())
    thread.add_messages(user_messages("I own a red bicycle."))
    assert memory_contents(client) == ["Noted: I own a red bicycle."]


# --- 2. frequency ---------------------------------------------------------------------------


def test_frequency_minus_one_extracts_once_per_call_over_the_whole_batch(fake, make_client):
    client = make_client(cfg(memory_extraction_frequency=-1))
    thread = client.create_thread(**SCOPE)

    thread.add_messages(user_messages("one", "two", "three"))
    assert [new_texts(r) for r in fake.of("memory_extraction")] == [["one", "two", "three"]]

    thread.add_messages(user_messages("four", "five"))
    thread.add_messages(user_messages("six"))
    assert [new_texts(r) for r in fake.of("memory_extraction")] == [
        ["one", "two", "three"],
        ["four", "five"],
        ["six"],
    ]


def test_frequency_n_waits_for_n_new_messages_across_calls_and_handles(fake, make_client):
    client = make_client(cfg(memory_extraction_frequency=3))
    thread = client.create_thread(**SCOPE)

    def extractions() -> list[list[str]]:
        return [new_texts(r) for r in fake.of("memory_extraction")]

    thread.add_messages(user_messages("m1", "m2"))
    assert extractions() == []
    thread.add_messages(user_messages("m3"))
    assert extractions() == [["m1", "m2", "m3"]]
    thread.add_messages(user_messages("m4", "m5"))
    assert extractions() == [["m1", "m2", "m3"]]

    # A new handle continues the count: it is kept in the thread's settings, not in the handle.
    again = client.get_thread("t1")
    again.add_messages(user_messages("m6"))
    assert extractions() == [["m1", "m2", "m3"], ["m4", "m5", "m6"]]

    # A batch larger than N is extracted at once, all of it.
    again.add_messages(user_messages("m7", "m8", "m9", "m10"))
    assert extractions()[-1] == ["m7", "m8", "m9", "m10"]
    assert len(extractions()) == 3


def test_frequency_one_extracts_every_message(fake, make_client):
    client = make_client(cfg(memory_extraction_frequency=1))
    thread = client.create_thread(**SCOPE)
    thread.add_messages(user_messages("a"))
    thread.add_messages(user_messages("b"))
    assert [new_texts(r) for r in fake.of("memory_extraction")] == [["a"], ["b"]]


# --- 3. window ------------------------------------------------------------------------------


def test_window_shows_earlier_messages_as_context_up_to_w_messages_in_all(fake, make_client):
    client = make_client(cfg(memory_extraction_window=4))
    thread = client.create_thread(**SCOPE)

    thread.add_messages(user_messages("a", "b", "c"))
    thread.add_messages(user_messages("d"))
    thread.add_messages(user_messages("e", "f"))

    first, second, third = fake.of("memory_extraction")
    assert section(first, "EARLIER MESSAGES") is None
    assert (earlier_texts(second), new_texts(second)) == (["a", "b", "c"], ["d"])
    assert (earlier_texts(third), new_texts(third)) == (["c", "d"], ["e", "f"])
    assert "context only" in FakeMemoryLlm.user_text(third)


def test_window_minus_one_shows_no_earlier_messages(fake, make_client):
    client = make_client(cfg(memory_extraction_window=-1))
    thread = client.create_thread(**SCOPE)
    thread.add_messages(user_messages("a", "b"))
    thread.add_messages(user_messages("c"))
    last = fake.of("memory_extraction")[-1]
    assert section(last, "EARLIER MESSAGES") is None
    assert "a" not in earlier_texts(last) and new_texts(last) == ["c"]


# --- 4. token limit -------------------------------------------------------------------------


def long_text(number: int) -> str:
    return f"message {number:02d} " + "lorem ipsum dolor sit amet " * 10


def test_token_limit_leaves_out_the_oldest_new_messages_and_bounds_the_prompt(fake, make_client):
    limit = 800  # about 2800 characters: the system prompt plus a few of these 280-character messages
    client = make_client(cfg(memory_extraction_token_limit=limit))
    thread = client.create_thread(**SCOPE)

    thread.add_messages(user_messages(*(long_text(i) for i in range(10))))

    [request] = fake.of("memory_extraction")
    kept = new_texts(request)
    assert 0 < len(kept) < 10
    assert kept == [long_text(i) for i in range(10 - len(kept), 10)]  # the newest, in order
    assert prompt_chars(request) <= limit * 3.5 * 1.05


def test_token_limit_drops_old_context_before_new_messages(fake, make_client):
    limit = 800
    client = make_client(cfg(memory_extraction_token_limit=limit, memory_extraction_window=20))
    thread = client.create_thread(**SCOPE)
    thread.add_messages(user_messages(*(long_text(i) for i in range(8))))
    thread.add_messages(user_messages(long_text(8)))

    last = fake.of("memory_extraction")[-1]
    assert new_texts(last) == [long_text(8)]
    context = earlier_texts(last)
    assert len(context) < 8
    assert context == [long_text(i) for i in range(8 - len(context), 8)]
    assert prompt_chars(last) <= limit * 3.5 * 1.05


@pytest.mark.parametrize("limit", [0, -1])
def test_token_limit_of_zero_or_less_disables_truncation(fake, make_client, limit):
    client = make_client(cfg(memory_extraction_token_limit=limit, memory_extraction_window=30))
    thread = client.create_thread(**SCOPE)
    thread.add_messages(user_messages(*(long_text(i) for i in range(10))))
    thread.add_messages(user_messages(*(long_text(i) for i in range(10, 20))))
    last = fake.of("memory_extraction")[-1]
    assert new_texts(last) == [long_text(i) for i in range(10, 20)]
    assert earlier_texts(last) == [long_text(i) for i in range(10)]


# --- 5. metadata inheritance ----------------------------------------------------------------

M1 = {"topic": "travel", "lang": "en", "channel": "web"}
M2 = {"topic": "food", "lang": "en", "channel": "web"}


@pytest.mark.parametrize(
    ("inherit", "expected"),
    [
        (
            True,
            {
                "from 1": M1,
                "from 2": M2,
                "from both": {"lang": "en", "channel": "web"},
                "no sources": {"lang": "en", "channel": "web"},
            },
        ),
        (
            ["lang", "topic"],
            {
                "from 1": {"lang": "en", "topic": "travel"},
                "from 2": {"lang": "en", "topic": "food"},
                "from both": {"lang": "en"},
                "no sources": {"lang": "en"},
            },
        ),
        (("absent",), {"from 1": {}, "from 2": {}, "from both": {}, "no sources": {}}),
        (False, {"from 1": {}, "from 2": {}, "from both": {}, "no sources": {}}),
    ],
)
def test_metadata_inheritance(fake, make_client, inherit, expected):
    fake.answers["memory_extraction"] = remember(
        ("from 1", "fact", [1]),
        ("from 2", "fact", [2]),
        ("from both", "fact", [1, 2]),
        ("no sources", "fact", []),  # no sources named: the whole batch
    )
    client = make_client(cfg(memory_extraction_inherit_message_metadata=inherit))
    thread = client.create_thread(**SCOPE)
    thread.add_messages(
        [
            {"role": "user", "content": "I flew to Rome.", "metadata": M1},
            {"role": "user", "content": "I ate carbonara.", "metadata": M2},
        ]
    )
    inherited = {
        m.content: {k: v for k, v in m.metadata.items() if k != SOURCE_MESSAGES_KEY}
        for m in client.list_memories(thread_id="t1")
    }
    assert inherited == expected


def test_extracted_memories_record_the_ids_of_their_source_messages(fake, make_client):
    fake.answers["memory_extraction"] = remember(
        ("from 2", "fact", [2]),
        ("from 3 and 1, named twice and out of order", "fact", [3, 1, 3]),
        ("no sources named: the whole batch", "fact", []),
        ("only unknown numbers: the whole batch", "fact", [7, "2", None]),
    )
    client = make_client(cfg(memory_extraction_inherit_message_metadata=False))
    thread = client.create_thread(**SCOPE)
    ids = thread.add_messages([{"role": "user", "content": text} for text in ("one", "two", "three")])

    sources = {m.content: m.metadata[SOURCE_MESSAGES_KEY] for m in client.list_memories(thread_id="t1")}
    assert sources == {
        "from 2": [ids[1]],
        "from 3 and 1, named twice and out of order": [ids[0], ids[2]],
        "no sources named: the whole batch": ids,
        "only unknown numbers: the whole batch": ids,
    }
    assert SOURCE_MESSAGES_KEY == "source_message_ids"  # documented in docs/engine.md: a stable name
    from_first = client.memories_from_message("t1", ids[0])
    assert sorted(m.content for m in from_first) == [
        "from 3 and 1, named twice and out of order",
        "no sources named: the whole batch",
        "only unknown numbers: the whole batch",
    ]
    assert [m.content for m in client.memories_from_message("t1", ids[1])] == [
        "from 2",
        "no sources named: the whole batch",
        "only unknown numbers: the whole batch",
    ]
    assert client.memories_from_message("t2", ids[1]) == []  # another thread's message id


def test_metadata_inheritance_refuses_a_bare_string_and_keeps_key_lists():
    with pytest.raises(ValueError, match="memory_extraction_inherit_message_metadata"):
        MemoryExtractionConfig(memory_extraction_inherit_message_metadata="lang")
    with pytest.raises(ValueError):
        MemoryExtractionConfig(memory_extraction_inherit_message_metadata=["lang", 3])
    assert MemoryExtractionConfig(
        memory_extraction_inherit_message_metadata=["lang"]
    ).memory_extraction_inherit_message_metadata == ("lang",)
    assert MemoryExtractionConfig().memory_extraction_inherit_message_metadata is True


# --- 6. custom instructions -----------------------------------------------------------------


def test_custom_instructions_are_appended_to_the_system_prompt(fake, make_client):
    client = make_client(cfg(memory_extraction_custom_instructions="Write every memory in French."))
    thread = client.create_thread(**SCOPE)
    thread.add_messages(user_messages("I like cats."))
    [request] = fake.of("memory_extraction")
    assert "Write every memory in French." in system_text(request)
    assert "Write every memory in French." not in FakeMemoryLlm.user_text(request)


def test_without_custom_instructions_the_system_prompt_has_no_additional_section(fake, make_client):
    client = make_client(cfg())
    client.create_thread(**SCOPE).add_messages(user_messages("I like cats."))
    [request] = fake.of("memory_extraction")
    assert "Additional instructions" not in system_text(request)


# --- 7. client and thread configs -----------------------------------------------------------


def test_a_thread_config_turns_extraction_on_in_that_thread_only_and_keeps_the_clients_other_fields(fake, make_client):
    client = make_client(
        cfg(extract_memories=False, memory_extraction_frequency=2, memory_extraction_custom_instructions="CLIENT RULE")
    )
    on = client.create_thread(
        thread_id="on",
        user_id="u1",
        agent_id="a1",
        memory_extraction_config=MemoryExtractionConfig(extract_memories=True),
    )
    off = client.create_thread(thread_id="off", user_id="u1", agent_id="a1")

    for thread in (on, off):
        thread.add_messages(user_messages("first"))
        thread.add_messages(user_messages("second"))

    [request] = fake.of("memory_extraction")  # frequency 2, from the client: one request, from "on"
    assert new_texts(request) == ["first", "second"]
    assert "CLIENT RULE" in system_text(request)
    assert on.memory_extraction_config.extract_memories is True
    assert on.memory_extraction_config.memory_extraction_frequency == 2
    assert off.memory_extraction_config.extract_memories is False


def test_a_thread_config_field_overrides_the_clients_field(fake, make_client):
    client = make_client(cfg(memory_extraction_custom_instructions="CLIENT RULE"))
    thread = client.create_thread(
        **SCOPE, memory_extraction_config=MemoryExtractionConfig(memory_extraction_custom_instructions="THREAD RULE")
    )
    thread.add_messages(user_messages("hello"))
    [request] = fake.of("memory_extraction")
    assert "THREAD RULE" in system_text(request) and "CLIENT RULE" not in system_text(request)
    # The client's other explicit fields survive the merge.
    assert thread.memory_extraction_config.enable_context_summary is False
    assert thread.memory_extraction_config.memory_link_extraction_mode is DISABLED_LINKS


def test_a_new_threads_own_config_is_stored_and_used_by_later_handles(fake, make_client):
    client = make_client(cfg(extract_memories=False))
    client.create_thread(
        **SCOPE,
        memory_extraction_config=MemoryExtractionConfig(
            extract_memories=True, memory_extraction_inherit_message_metadata=["topic"]
        ),
    )

    later = client.get_thread("t1")
    later.add_messages(user_messages("hello"))

    assert len(fake.of("memory_extraction")) == 1
    assert later.memory_extraction_config.memory_extraction_inherit_message_metadata == ("topic",)
    # A handle given its own config uses it instead, without changing what is stored.
    overridden = client.create_thread(
        thread_id="t1", memory_extraction_config=MemoryExtractionConfig(extract_memories=False)
    )
    overridden.add_messages(user_messages("again"))
    assert len(fake.of("memory_extraction")) == 1
    assert client.get_thread("t1").memory_extraction_config.extract_memories is True


def test_over_merges_field_by_field():
    client = MemoryExtractionConfig(memory_extraction_frequency=3, memory_extraction_window=2)
    thread = MemoryExtractionConfig(memory_extraction_window=5)
    merged = thread.over(client)
    assert (merged.memory_extraction_frequency, merged.memory_extraction_window) == (3, 5)
    assert merged.memory_extraction_token_limit == 30_000  # neither set it: the default
    assert merged.given == {"memory_extraction_frequency", "memory_extraction_window"}
    assert thread.over(None) is thread


# --- 8. deprecated inline parameters and validation -----------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "stored"),
    [
        ("memory_extraction_window", 3, 3),
        ("context_summary_update_frequency", 5, 5),
        ("memory_extraction_frequency", 2, 2),
        ("memory_extraction_token_limit", 1000, 1000),
        ("enable_context_summary", False, False),
        ("memory_extraction_custom_instructions", "Be brief.", "Be brief."),
        ("memory_extraction_inherit_message_metadata", ["lang"], ("lang",)),
    ],
)
def test_each_deprecated_inline_parameter_warns_and_takes_effect(make_client, name, value, stored):
    client = make_client(cfg())
    with pytest.warns(DeprecationWarning, match=name) as caught:
        thread = client.create_thread(**SCOPE, **{name: value})
    assert getattr(thread.memory_extraction_config, name) == stored
    assert caught[0].filename == __file__  # the warning points at the caller's line


def test_deprecated_parameters_drive_extraction_and_merge_with_the_client_config(fake, make_client):
    client = make_client(cfg(memory_extraction_custom_instructions="CLIENT RULE"))
    with pytest.warns(DeprecationWarning):
        thread = client.create_thread(**SCOPE, memory_extraction_frequency=2, memory_extraction_window=3)
    thread.add_messages(user_messages("one"))
    assert fake.of("memory_extraction") == []
    thread.add_messages(user_messages("two"))
    thread.add_messages(user_messages("three"))
    thread.add_messages(user_messages("four"))
    first, second = fake.of("memory_extraction")
    assert new_texts(first) == ["one", "two"]
    assert (earlier_texts(second), new_texts(second)) == (["two"], ["three", "four"])
    assert "CLIENT RULE" in system_text(second)


def test_deprecated_parameters_on_a_standalone_thread_warn(make_llm):
    store = SQLiteMemoryStore(":memory:", schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)
    try:
        with pytest.warns(DeprecationWarning) as caught:
            thread = Thread(store, **SCOPE, llm=make_llm(), memory_extraction_frequency=4)
        assert thread.memory_extraction_config.memory_extraction_frequency == 4
        assert caught[0].filename == __file__
    finally:
        store.close()


@pytest.mark.parametrize("config", [MemoryExtractionConfig(), None])
def test_mixing_deprecated_parameters_with_a_config_is_refused(make_client, config):
    client = make_client(cfg())
    with pytest.raises(ValueError, match="not both"):
        client.create_thread(**SCOPE, memory_extraction_config=config, memory_extraction_window=3)
    with pytest.raises(KeyError):
        client.get_thread("t1")  # nothing was created


def test_no_warning_without_deprecated_parameters(make_client):
    client = make_client(cfg())
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        client.create_thread(**SCOPE, memory_extraction_config=MemoryExtractionConfig(memory_extraction_window=3))


@pytest.mark.parametrize(
    "fields",
    [
        {"memory_extraction_frequency": 0},
        {"memory_extraction_window": 0},
        {"memory_extraction_frequency": "3"},
        {"memory_extraction_frequency": True},
        {"memory_extraction_window": 2.5},
        {"memory_extraction_token_limit": "big"},
        {"context_summary_update_frequency": None},
        {"extract_memories": "yes"},
        {"enable_context_summary": 1},
        {"memory_extraction_custom_instructions": 5},
        {"memory_link_extraction_custom_instructions": ["x"]},
        {"extraction_mode": "sometimes"},
        {"memory_link_extraction_mode": "telepathic"},
        {"memory_extraction_image_context": "video"},
        {"background_extraction_queue_full_behavior": "explode"},
        {"background_extraction_queue_put_timeout_seconds": -1},
    ],
)
def test_invalid_extraction_config_values_are_value_errors(fields):
    with pytest.raises(ValueError, match=next(iter(fields))):
        MemoryExtractionConfig(**fields)


def test_config_accepts_enum_values_as_strings_and_fills_defaults():
    config = MemoryExtractionConfig(extraction_mode="inline", memory_link_extraction_mode="during_extraction")
    assert config.extraction_mode is MemoryExtractionMode.INLINE
    assert config.memory_link_extraction_mode is MemoryLinkExtractionMode.DURING_EXTRACTION
    assert MemoryExtractionConfig().memory_link_extraction_mode is MemoryLinkExtractionMode.POST_EXTRACTION
    assert MemoryExtractionConfig().memory_extraction_frequency == -1
    with pytest.raises(TypeError):
        MemoryExtractionConfig(no_such_field=1)


def test_a_config_of_the_wrong_type_is_refused(make_client):
    client = make_client(cfg())
    with pytest.raises(ValueError, match="MemoryExtractionConfig"):
        client.create_thread(**SCOPE, memory_extraction_config={"memory_extraction_window": 3})


# --- 9. links ---------------------------------------------------------------------------------


def existing_memories(client, thread):
    """A superseded-to-be preference and an unrelated fact in the thread, and a memory of another user."""
    old = thread.add_memory("The user prefers thin crust pizza.", memory_type="preference", autonomous_linking=False)
    other = thread.add_memory("The user owns a bicycle.", memory_type="fact", autonomous_linking=False)
    foreign = client.add_memory("The user likes jazz.", user_id="u2", agent_id="a1", autonomous_linking=False)
    return old, other, foreign


def test_during_extraction_links_come_with_the_extraction_answer(fake, make_client):
    client = make_client(cfg(memory_link_extraction_mode=MemoryLinkExtractionMode.DURING_EXTRACTION))
    thread = client.create_thread(**SCOPE)
    old, other, foreign = existing_memories(client, thread)
    fake.answers["memory_extraction"] = remember(
        ("The user now prefers sourdough pizza.", "preference", [1]),
        links=[
            {"memory": 0, "target_id": old, "relation_type": "supersedes"},
            {"memory": 0, "target_id": "no-such-memory", "relation_type": "refines"},
            {"memory": 0, "target_id": other, "relation_type": "is_friend_of"},
            {"memory": 0, "target_id": foreign, "relation_type": "supports"},  # not shown: another user
            {"memory": 7, "target_id": other, "relation_type": "supports"},  # no such new memory
        ],
    )

    thread.add_messages(user_messages("These days I prefer sourdough pizza."))

    [request] = fake.of("memory_extraction")
    assert "links" in request.body["response_format"]["json_schema"]["schema"]["properties"]
    shown = section(request, "EXISTING MEMORIES")
    assert f"[{old}] (preference) The user prefers thin crust pizza." in shown
    assert not any(foreign in line for line in shown)
    assert fake.of("memory_links") == []

    [new] = [m for m in client.list_memories(thread_id="t1") if m.content.startswith("The user now")]
    relations = client.list_relations(record_id=new.id)
    assert [(r.source_record_id, r.target_record_id, r.relation_type) for r in relations] == [
        (new.id, old, "supersedes")
    ]
    assert client.get_memory(old).status is RecordStatus.INVALID  # a lifecycle link invalidates its target
    assert client.get_memory(other).status is RecordStatus.VALID
    assert list(client.list_relations(record_id=foreign)) == []


def test_post_extraction_makes_one_link_request_with_new_memories_and_candidates(fake, make_client):
    client = make_client(
        cfg(
            memory_link_extraction_mode=MemoryLinkExtractionMode.POST_EXTRACTION,
            memory_link_extraction_custom_instructions="LINK RULE",
        )
    )
    thread = client.create_thread(**SCOPE)
    old, other, _ = existing_memories(client, thread)
    fake.answers["memory_extraction"] = remember(
        ("The user now prefers sourdough pizza.", "preference", [1]),
        ("The user's bicycle is blue.", "fact", [1]),
    )
    fake.answers["memory_links"] = lambda request: {
        "links": [
            {"new_memory": 1, "target_id": old, "relation_type": "supersedes"},
            {"new_memory": 2, "target_id": other, "relation_type": "refines"},
            {"new_memory": 1, "target_id": "no-such-memory", "relation_type": "supports"},
            {"new_memory": 2, "target_id": old, "relation_type": "likes"},
        ]
    }

    thread.add_messages(user_messages("I prefer sourdough pizza now. My bike is blue, by the way."))

    assert [task for task, _ in fake.requests] == ["memory_extraction", "memory_links"]
    [extraction] = fake.of("memory_extraction")
    assert "links" not in extraction.body["response_format"]["json_schema"]["schema"]["properties"]
    [request] = fake.of("memory_links")
    assert section(request, "NEW MEMORIES") == [
        "[1] (preference) The user now prefers sourdough pizza.",
        "[2] (fact) The user's bicycle is blue.",
    ]
    candidates = section(request, "EXISTING MEMORIES")
    assert f"[{old}] (preference) The user prefers thin crust pizza." in candidates
    assert f"[{other}] (fact) The user owns a bicycle." in candidates
    assert "LINK RULE" in system_text(request)

    new = {m.content: m.id for m in client.list_memories(thread_id="t1")}
    links = {(r.source_record_id, r.target_record_id, r.relation_type) for r in client.list_relations(thread_id="t1")}
    assert links == {
        (new["The user now prefers sourdough pizza."], old, "supersedes"),
        (new["The user's bicycle is blue."], other, "refines"),
    }
    assert all(
        r.metadata == {"created_by": "openai:test-model", "origin": "llm"}
        for r in client.list_relations(thread_id="t1")
    )
    assert client.get_memory(old).status is RecordStatus.INVALID


def test_post_extraction_is_the_default_and_skips_the_request_without_new_memories(fake, make_client):
    client = make_client(MemoryExtractionConfig(enable_context_summary=False))
    thread = client.create_thread(**SCOPE)
    existing_memories(client, thread)
    thread.add_messages(user_messages("Nothing worth remembering."))  # the default answer: no memories
    assert fake.count("memory_links") == 0
    fake.answers["memory_extraction"] = echo
    thread.add_messages(user_messages("I prefer sourdough pizza now."))
    assert fake.count("memory_links") == 1


def test_disabled_links_make_no_link_request_and_no_links(fake, make_client):
    client = make_client(cfg(memory_link_extraction_mode=DISABLED_LINKS))
    thread = client.create_thread(**SCOPE)
    old, _, _ = existing_memories(client, thread)
    fake.answers["memory_extraction"] = remember(
        ("The user now prefers sourdough pizza.", "preference", [1]),
        links=[{"memory": 0, "target_id": old, "relation_type": "supersedes"}],
    )
    thread.add_messages(user_messages("I prefer sourdough pizza now."))
    assert fake.count("memory_links") == 0
    assert list(client.list_relations(thread_id="t1")) == []
    assert client.get_memory(old).status is RecordStatus.VALID
    assert "The user now prefers sourdough pizza." in memory_contents(client)


def test_a_failed_link_request_keeps_the_extracted_memories(fake, make_client):
    client = make_client(cfg(memory_link_extraction_mode=MemoryLinkExtractionMode.POST_EXTRACTION))
    thread = client.create_thread(**SCOPE)
    existing_memories(client, thread)
    fake.answers["memory_extraction"] = echo
    fake.fail("memory_links", "http500")
    ids = thread.add_messages(user_messages("I prefer sourdough pizza now."))
    assert len(ids) == 1
    assert "Noted: I prefer sourdough pizza now." in memory_contents(client)
    assert client.extraction_stats()["failed"] == 1


# --- 10. re-extraction after an edit ----------------------------------------------------------


def test_editing_a_message_re_extracts_it_without_touching_old_memories_or_the_counter(fake, make_client):
    fake.answers["memory_extraction"] = echo
    client = make_client(cfg(memory_extraction_frequency=2))
    thread = client.create_thread(**SCOPE)
    ids = thread.add_messages(user_messages("I live in Paris.", "I work as a nurse."))
    before = {m.id: m.content for m in client.list_memories(thread_id="t1")}
    assert sorted(before.values()) == ["Noted: I live in Paris.", "Noted: I work as a nurse."]

    thread.update_message(ids[0], content="I live in Berlin.")

    assert [new_texts(r) for r in fake.of("memory_extraction")] == [
        ["I live in Paris.", "I work as a nurse."],
        ["I live in Berlin."],
    ]
    after = {m.id: m.content for m in client.list_memories(thread_id="t1")}
    assert {k: after[k] for k in before} == before  # untouched
    assert sorted(set(after.values()) - set(before.values())) == ["Noted: I live in Berlin."]

    # The regular counter is unaffected: one new message is still below the frequency of 2.
    thread.add_messages(user_messages("I have a cat."))
    assert fake.count("memory_extraction") == 2
    thread.add_messages(user_messages("Her name is Mimi."))
    assert new_texts(fake.of("memory_extraction")[-1]) == ["I have a cat.", "Her name is Mimi."]


def test_editing_only_metadata_does_not_re_extract(fake, make_client):
    client = make_client(cfg())
    thread = client.create_thread(**SCOPE)
    [message_id] = thread.add_messages(user_messages("I live in Paris."))
    thread.update_message(message_id, metadata={"checked": True})
    assert fake.count("memory_extraction") == 1


def test_editing_does_not_re_extract_when_extraction_is_off(fake, make_client):
    client = make_client(cfg(extract_memories=False))
    thread = client.create_thread(**SCOPE)
    [message_id] = thread.add_messages(user_messages("I live in Paris."))
    thread.update_message(message_id, content="I live in Berlin.")
    assert fake.count("memory_extraction") == 0


# --- 11. failures -----------------------------------------------------------------------------


@pytest.mark.parametrize("failure", ["http500", "malformed", "no memories list", "slow"])
def test_a_failed_extraction_keeps_the_raw_messages_and_counts_as_failed(fake, make_client, failure):
    if failure == "no memories list":
        fake.answers["memory_extraction"] = lambda request: {"facts": ["The user lives in Paris."]}
    else:
        fake.fail("memory_extraction", failure)
        fake.slow_seconds = 2
    client = make_client(cfg(), timeout=0.5)
    thread = client.create_thread(**SCOPE)

    ids = thread.add_messages(user_messages("I live in Paris.", "I work as a nurse."))

    assert len(ids) == 2
    assert [(m.id, m.content) for m in thread.get_messages()] == list(
        zip(ids, ["I live in Paris.", "I work as a nurse."], strict=True)
    )
    assert memory_contents(client) == []
    stats = client.extraction_stats()
    assert (stats["failed"], stats["completed"]) == (1, 0)
    if failure in ("http500", "malformed"):
        assert fake.count("memory_extraction") == 2  # asked again once (max_attempts=2), then gave up


def test_after_a_failure_the_next_call_extracts_normally(fake, make_client):
    client = make_client(cfg())
    thread = client.create_thread(**SCOPE)
    fake.fail("memory_extraction", "http500")
    thread.add_messages(user_messages("I live in Paris."))
    fake.fail("memory_extraction", None)
    fake.answers["memory_extraction"] = echo
    thread.add_messages(user_messages("I work as a nurse."))
    assert memory_contents(client) == ["Noted: I work as a nurse."]
    assert client.extraction_stats()["failed"] == 1 and client.extraction_stats()["completed"] == 1


def test_malformed_memories_are_skipped_and_valid_ones_kept(fake, make_client):
    fake.answers["memory_extraction"] = lambda request: {
        "memories": [
            {"content": "The user lives in Paris.", "memory_type": "fact", "source_messages": [1]},
            "just a string",
            {"content": 42, "memory_type": "fact", "source_messages": [1]},
            {"content": "   ", "memory_type": "fact", "source_messages": [1]},
            {"memory_type": "fact"},
            None,
            {"content": "The user is a nurse.", "memory_type": "mood", "source_messages": [99]},
        ]
    }
    client = make_client(cfg())
    thread = client.create_thread(**SCOPE)
    thread.add_messages(user_messages("I live in Paris and I am a nurse."))
    stored = {m.content: m.record_type for m in client.list_memories(thread_id="t1")}
    # An unknown memory type is stored as the generic "memory".
    assert stored == {"The user lives in Paris.": "fact", "The user is a nurse.": "memory"}
    assert client.extraction_stats()["failed"] == 0


# --- 12. run_memory_extraction ----------------------------------------------------------------


def test_run_memory_extraction_covers_what_was_not_extracted_or_everything(fake, make_client):
    fake.answers["memory_extraction"] = echo
    client = make_client(cfg(memory_extraction_frequency=5))
    thread = client.create_thread(**SCOPE)
    thread.add_messages(user_messages("a", "b"))
    assert fake.count("memory_extraction") == 0

    created = thread.run_memory_extraction()
    assert new_texts(fake.of("memory_extraction")[-1]) == ["a", "b"]
    assert sorted(m.content for m in client.list_memories(thread_id="t1") if m.id in created) == [
        "Noted: a",
        "Noted: b",
    ]

    assert thread.run_memory_extraction() == []  # nothing left
    assert fake.count("memory_extraction") == 1

    thread.add_messages(user_messages("c"))
    thread.run_memory_extraction()
    assert new_texts(fake.of("memory_extraction")[-1]) == ["c"]

    thread.run_memory_extraction(include_extracted=True)
    assert new_texts(fake.of("memory_extraction")[-1]) == ["a", "b", "c"]

    # The automatic counter restarts after what run_memory_extraction covered.
    thread.add_messages(user_messages(*"defg"))
    assert fake.count("memory_extraction") == 3
    thread.add_messages(user_messages("h"))
    assert new_texts(fake.of("memory_extraction")[-1]) == list("defgh")


def test_run_memory_extraction_covers_messages_whose_automatic_extraction_failed(fake, make_client):
    client = make_client(cfg())
    thread = client.create_thread(**SCOPE)
    fake.fail("memory_extraction", "http500")
    thread.add_messages(user_messages("I live in Paris.", "I work as a nurse."))
    fake.fail("memory_extraction", None)
    fake.answers["memory_extraction"] = echo
    thread.add_messages(user_messages("I have a cat."))
    assert memory_contents(client) == ["Noted: I have a cat."]

    thread.run_memory_extraction()
    assert new_texts(fake.of("memory_extraction")[-1]) == ["I live in Paris.", "I work as a nurse."]
    assert sorted(memory_contents(client)) == [
        "Noted: I have a cat.",
        "Noted: I live in Paris.",
        "Noted: I work as a nurse.",
    ]
    requests = fake.count("memory_extraction")
    assert thread.run_memory_extraction() == []  # covered now
    assert fake.count("memory_extraction") == requests


def test_run_memory_extraction_works_in_chunks_and_with_extraction_off(fake, make_client):
    client = make_client(cfg(extract_memories=False))
    thread = client.create_thread(**SCOPE)
    thread.add_messages(user_messages(*(f"m{i}" for i in range(25))))
    assert fake.count("memory_extraction") == 0
    thread.run_memory_extraction()
    assert [len(new_texts(r)) for r in fake.of("memory_extraction")] == [20, 5]


def test_run_memory_extraction_needs_an_llm_and_a_boolean(make_client):
    client = make_client(cfg(), with_llm=False)
    thread = client.create_thread(**SCOPE)
    with pytest.raises(ValueError, match="LLM"):
        thread.run_memory_extraction()
    llm_client = make_client(cfg())
    with pytest.raises(ValueError):
        llm_client.create_thread(**SCOPE).run_memory_extraction(include_extracted="yes")


@pytest.mark.parametrize(("failure", "error"), [("http500", RuntimeError), ("malformed", ValueError)])
def test_run_memory_extraction_raises_what_the_llm_raises_and_can_be_retried(fake, make_client, failure, error):
    client = make_client(cfg(extract_memories=False))
    thread = client.create_thread(**SCOPE)
    thread.add_messages(user_messages("I live in Paris."))
    fake.fail("memory_extraction", failure)
    with pytest.raises(error):
        thread.run_memory_extraction()
    assert client.extraction_stats()["failed"] == 0  # not background work: the caller got the error

    fake.fail("memory_extraction", None)
    fake.answers["memory_extraction"] = echo
    thread.run_memory_extraction()  # the failed messages are still pending
    assert memory_contents(client) == ["Noted: I live in Paris."]


def test_run_memory_extraction_refreshes_the_summary(fake, make_client):
    client = make_client(cfg(extract_memories=False, enable_context_summary=True, context_summary_update_frequency=5))
    thread = client.create_thread(**SCOPE)
    thread.add_messages(user_messages("I live in Paris."))
    assert fake.count("thread_summary") == 0  # 1 message of 5
    thread.run_memory_extraction()
    [request] = fake.of("thread_summary")
    assert "I live in Paris." in FakeMemoryLlm.user_text(request)
    assert client.store.get_thread("t1").summary == "summary #1"


# --- 13. message shortening -------------------------------------------------------------------

LONG = "I have a very long story to tell about my trip to Japan. " * 6  # about 340 characters


def test_an_oversized_message_is_shortened_by_the_llm_for_the_prompt_only(fake, make_client):
    fake.answers["shortened_message"] = lambda request: {"text": "Trip to Japan."}
    client = make_client(cfg())
    thread = client.create_thread(**SCOPE, max_message_token_length=10)

    ids = thread.add_messages(user_messages("Short one.", LONG))

    [shortening] = fake.of("shortened_message")
    assert FakeMemoryLlm.user_text(shortening) == LONG
    assert "10 tokens" in system_text(shortening)
    [request] = fake.of("memory_extraction")
    assert new_texts(request) == ["Short one.", "Trip to Japan."]
    assert LONG.strip() not in FakeMemoryLlm.user_text(request)
    assert thread.get_message(ids[1]).content == LONG


def test_a_failed_shortening_truncates_the_prompt_copy(fake, make_client):
    fake.fail("shortened_message", "http500")
    fake.answers["memory_extraction"] = echo
    client = make_client(cfg())
    thread = client.create_thread(**SCOPE, max_message_token_length=10)

    [message_id] = thread.add_messages(user_messages(LONG))

    [copy] = new_texts(fake.of("memory_extraction")[0])
    assert copy.endswith(" […]") and len(copy) <= 35  # 10 tokens of 3.5 characters
    assert LONG.startswith(copy.removesuffix(" […]"))
    assert thread.get_message(message_id).content == LONG
    assert len(memory_contents(client)) == 1  # the extraction itself went on
    assert client.extraction_stats()["failed"] == 0


def test_a_too_long_shortening_is_truncated_and_the_excerpt_is_bounded(fake, make_client):
    fake.answers["shortened_message"] = lambda request: {"text": "x" * 200}
    client = make_client(cfg())
    thread = client.create_thread(**SCOPE, max_message_token_length=10, message_shortening_input_token_limit=20)
    thread.add_messages(user_messages(LONG))
    [shortening] = fake.of("shortened_message")
    assert len(FakeMemoryLlm.user_text(shortening)) <= 70  # 20 tokens
    [copy] = new_texts(fake.of("memory_extraction")[0])
    assert len(copy) <= 35


@pytest.mark.parametrize("limit", [0, -1])
def test_max_message_token_length_of_zero_or_less_disables_shortening(fake, make_client, limit):
    client = make_client(cfg())
    thread = client.create_thread(**SCOPE, max_message_token_length=limit)
    thread.add_messages(user_messages(LONG))
    assert fake.count("shortened_message") == 0
    assert new_texts(fake.of("memory_extraction")[0]) == [LONG.rstrip("\n")]


# --- 14. without an LLM -----------------------------------------------------------------------


def test_without_an_llm_nothing_is_requested(fake, make_client):
    client = make_client(cfg(memory_extraction_frequency=1), with_llm=False)
    thread = client.create_thread(**SCOPE)
    ids = thread.add_messages(user_messages("I live in Paris.", "I work as a nurse."))
    thread.update_message(ids[0], content="I live in Berlin.")
    assert [m.content for m in thread.get_messages()] == ["I live in Berlin.", "I work as a nurse."]
    assert thread.llm is None
    assert fake.requests == []
    assert memory_contents(client) == []
    assert client.extraction_stats() == {"queued": 0, "completed": 0, "failed": 0, "dropped": 0}
