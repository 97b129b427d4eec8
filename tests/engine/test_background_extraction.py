"""Background and inline LLM work: the queue, waits, the delete barrier (API_SPEC §4.3.1, §4.3.7, §4.3.8,
§4.3.11, §4.3.19, §4.5.1, §8.4, DECISIONS D9).

The LLM is `FakeMemoryLlm`, a real HTTP server on 127.0.0.1. Its extraction answer remembers every new
message as one fact ("remembered: <text>"), so the memories show which messages an extraction covered.
`fake.hold(task)` keeps a worker inside that task's request until `fake.release()`; requests are recorded
before they are held, so `fake.count(task)` tells when a worker has picked a job up. Summaries and links
are off unless a test turns them on, so that each job makes exactly one extraction request.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable

import pytest

import memory.engine.client as client_module
import memory.engine.thread as thread_module
from memory.engine import (
    AgentMemory,
    BackgroundExtractionQueueFullBehavior,
    HashingEmbedder,
    MemoryExtractionConfig,
    MemoryExtractionMode,
    MemoryLinkExtractionMode,
    OpenAICompatibleLlm,
    SchemaPolicy,
    SQLiteMemoryStore,
)
from memory.engine.background import LlmWorkRunner

from .helpers import FakeMemoryLlm, RecordedRequest, fake_memory_llm

BACKGROUND = MemoryExtractionMode.BACKGROUND
INLINE = MemoryExtractionMode.INLINE
DROP = BackgroundExtractionQueueFullBehavior.DROP
WAIT_THEN_DROP = BackgroundExtractionQueueFullBehavior.WAIT_THEN_DROP
WAIT_THEN_RAISE = BackgroundExtractionQueueFullBehavior.WAIT_THEN_RAISE
EXTRACTION = "memory_extraction"
STATS_KEYS = {"queued", "completed", "failed", "dropped"}

# "[3] user: text" or "[3] user (2024-01-01T00:00:00Z): text", one line per new message of a prompt.
PROMPT_LINE = re.compile(r"^\[(\d+)\] \S+(?: \([^)]*\))?: (.*)$")


# ---------------------------------------------------------------------------------------------
# Helpers and fixtures
# ---------------------------------------------------------------------------------------------


def eventually(predicate: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    """Poll `predicate` until it holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def new_messages(request: RecordedRequest) -> list[tuple[int, str]]:
    """(number, text) of the NEW MESSAGES of an extraction prompt (the prompt's last section)."""
    section = FakeMemoryLlm.user_text(request).split("NEW MESSAGES:\n", 1)[1]
    return [(int(m.group(1)), m.group(2)) for m in map(PROMPT_LINE.match, section.splitlines()) if m]


def remember_each_new_message(request: RecordedRequest) -> dict:
    return {
        "memories": [
            {"content": f"remembered: {text}", "memory_type": "fact", "source_messages": [number]}
            for number, text in new_messages(request)
        ]
    }


def extracted_texts(fake: FakeMemoryLlm) -> list[list[str]]:
    """The new messages of each extraction request, in the order the requests arrived."""
    return [[text for _, text in new_messages(request)] for request in fake.of(EXTRACTION)]


def config(mode: MemoryExtractionMode = BACKGROUND, **fields) -> MemoryExtractionConfig:
    fields.setdefault("enable_context_summary", False)
    fields.setdefault("memory_link_extraction_mode", MemoryLinkExtractionMode.DISABLED)
    return MemoryExtractionConfig(extraction_mode=mode, **fields)


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def memories(client: AgentMemory, thread_id: str) -> list[str]:
    return sorted(record.content for record in client.list_memories(thread_id=thread_id, limit=None))


def contents(thread) -> list[str]:
    return [message.content for message in thread.get_messages()]


def stats(client: AgentMemory, **expected: int) -> dict[str, int]:
    """The client's stats with unnamed counts at 0, for comparing whole dicts."""
    return {key: expected.get(key, 0) for key in ("queued", "completed", "failed", "dropped")}


def wait_until_picked_up(fake: FakeMemoryLlm, count: int = 1, task: str = EXTRACTION) -> None:
    eventually(lambda: fake.count(task) >= count, f"{count} {task} request(s) to reach the LLM")


def store_at(path) -> SQLiteMemoryStore:
    return SQLiteMemoryStore(str(path), embedder=HashingEmbedder(64), schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)


@pytest.fixture
def fake():
    with fake_memory_llm() as fake:
        fake.answers[EXTRACTION] = remember_each_new_message
        yield fake


@pytest.fixture
def make_client(fake, tmp_path):
    """Builds AgentMemory clients on fresh SQLite files, talking to `fake`; all closed at teardown."""
    made: list[tuple[AgentMemory, OpenAICompatibleLlm]] = []

    def factory(extraction_config: MemoryExtractionConfig | None = None, **options) -> AgentMemory:
        llm = OpenAICompatibleLlm(fake.url, "test-model", max_attempts=2, retry_backoff=0.01)
        client = AgentMemory(
            store_at(tmp_path / f"client-{len(made)}.sqlite3"),
            llm=llm,
            memory_extraction_config=extraction_config or config(),
            **options,
        )
        made.append((client, llm))
        return client

    yield factory
    fake.release()  # nothing may stay held, or close() would wait for it
    for client, llm in made:
        client.close()
        llm.close()


@pytest.fixture
def client(make_client) -> AgentMemory:
    return make_client()


@pytest.fixture
def thread(client):
    return client.create_thread(thread_id="t1", user_id="u1", agent_id="a1")


class Background:
    """A call run in a helper thread, so that the test can look at it while it blocks."""

    def __init__(self, call: Callable[[], object]) -> None:
        self.result: object = None
        self.error: BaseException | None = None

        def run() -> None:
            try:
                self.result = call()
            except BaseException as exc:  # handed back to the test
                self.error = exc

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def still_blocked(self, seconds: float = 0.3) -> bool:
        self._thread.join(seconds)
        return self._thread.is_alive()

    def finish(self, timeout: float = 10.0) -> object:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the call did not return"
        if self.error is not None:
            raise self.error
        return self.result


# ---------------------------------------------------------------------------------------------
# BACKGROUND: add_messages returns after the raw write
# ---------------------------------------------------------------------------------------------


def test_background_add_messages_returns_while_extraction_runs_with_the_raw_messages_already_stored(
    client, thread, fake
):
    fake.hold(EXTRACTION)
    ids = thread.add_messages([user("I live in Lisbon"), user("I like green tea")])
    wait_until_picked_up(fake)

    assert [message.id for message in thread.get_messages()] == ids
    assert contents(thread) == ["I live in Lisbon", "I like green tea"]
    assert memories(client, "t1") == []
    assert client.extraction_stats() == stats(client, queued=1)

    fake.release()
    thread.wait_for_memory_extraction(timeout=10)
    assert memories(client, "t1") == ["remembered: I like green tea", "remembered: I live in Lisbon"]
    assert extracted_texts(fake) == [["I live in Lisbon", "I like green tea"]]
    assert client.extraction_stats() == stats(client, queued=1, completed=1)


def test_background_add_messages_async_also_returns_before_extraction(client, thread, fake):
    fake.hold(EXTRACTION)
    ids = asyncio.run(thread.add_messages_async([user("my cat is called Miso")]))
    wait_until_picked_up(fake)
    assert [message.id for message in thread.get_messages()] == ids
    assert memories(client, "t1") == []

    fake.release()
    asyncio.run(thread.wait_for_memory_extraction_async(timeout=10))
    assert memories(client, "t1") == ["remembered: my cat is called Miso"]


def test_background_extraction_with_default_summary_and_links_runs_them_in_the_background_too(make_client, fake):
    client = make_client(MemoryExtractionConfig(extraction_mode=BACKGROUND))
    thread = client.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    thread.add_memory("the launch was planned for Thursday", autonomous_linking=False)  # a link candidate
    fake.hold("thread_summary")
    thread.add_messages([user("we moved the launch to Friday")])
    wait_until_picked_up(fake, task="thread_summary")
    # Extracted and linked before the summary, all after add_messages returned.
    assert memories(client, "t1") == [
        "remembered: we moved the launch to Friday",
        "the launch was planned for Thursday",
    ]
    assert fake.count("memory_links") == 1
    with pytest.raises(TimeoutError):
        thread.wait_for_memory_extraction(timeout=0.2)

    fake.release()
    thread.wait_for_memory_extraction(timeout=10)
    assert thread.get_summary().content.startswith("summary #")
    assert client.extraction_stats() == stats(client, queued=1, completed=1)


# ---------------------------------------------------------------------------------------------
# wait_for_memory_extraction
# ---------------------------------------------------------------------------------------------


def test_wait_for_memory_extraction_raises_timeout_error_while_the_work_is_held(client, thread, fake):
    fake.hold(EXTRACTION)
    thread.add_messages([user("remember me")])
    wait_until_picked_up(fake)
    with pytest.raises(TimeoutError):
        thread.wait_for_memory_extraction(timeout=0.2)
    assert memories(client, "t1") == []
    with pytest.raises(TimeoutError):
        thread.wait_for_memory_extraction(timeout=0)


def test_wait_for_memory_extraction_with_timeout_none_waits_until_the_work_is_done(client, thread, fake):
    fake.hold(EXTRACTION)
    thread.add_messages([user("remember me")])
    wait_until_picked_up(fake)

    waiter = Background(lambda: (thread.wait_for_memory_extraction(timeout=None), memories(client, "t1")))
    assert waiter.still_blocked()
    fake.release()
    _, seen_when_the_wait_returned = waiter.finish()
    assert seen_when_the_wait_returned == ["remembered: remember me"]


def test_wait_for_memory_extraction_with_an_infinite_timeout_waits_without_limit(client, thread, fake):
    fake.hold(EXTRACTION)
    thread.add_messages([user("remember me")])
    wait_until_picked_up(fake)
    waiter = Background(lambda: thread.wait_for_memory_extraction(timeout=float("inf")))
    assert waiter.still_blocked()
    fake.release()
    waiter.finish()
    assert memories(client, "t1") == ["remembered: remember me"]


def test_wait_for_memory_extraction_returns_at_once_without_pending_work(client, thread):
    thread.wait_for_memory_extraction(timeout=0)
    thread.wait_for_memory_extraction(timeout=None)


def test_wait_for_memory_extraction_covers_only_its_own_thread(make_client, fake):
    client = make_client(extraction_workers=2)
    # t-summary's only job is a summary, which is held; t-free extracts, which is not held.
    held = client.create_thread(
        thread_id="t-summary",
        user_id="u1",
        agent_id="a1",
        memory_extraction_config=MemoryExtractionConfig(extract_memories=False, enable_context_summary=True),
    )
    free = client.create_thread(thread_id="t-free", user_id="u1", agent_id="a1")
    fake.hold("thread_summary")
    held.add_messages([user("held work")])
    wait_until_picked_up(fake, task="thread_summary")

    free.add_messages([user("free work")])
    free.wait_for_memory_extraction(timeout=10)  # not blocked by t-summary's running job
    assert memories(client, "t-free") == ["remembered: free work"]
    with pytest.raises(TimeoutError):
        held.wait_for_memory_extraction(timeout=0.2)

    fake.release()
    held.wait_for_memory_extraction(timeout=10)
    assert held.get_summary().content.startswith("summary #")


def test_wait_for_memory_extraction_does_not_wait_for_work_accepted_after_it_began():
    runner = LlmWorkRunner(queue_capacity=4, workers=2)
    first_may_finish, second_may_finish = threading.Event(), threading.Event()
    second_done = threading.Event()

    def second() -> None:
        assert second_may_finish.wait(10)
        second_done.set()

    def first() -> None:
        assert first_may_finish.wait(10)
        runner.submit("t1", second, "second job", WAIT_THEN_RAISE, 5)  # accepted while the wait below runs

    try:
        runner.submit("t1", first, "first job", WAIT_THEN_RAISE, 5)
        timer = threading.Timer(0.3, first_may_finish.set)
        timer.start()
        runner.wait("t1", timeout=10)  # returns once the first job is done, with the second still running
        assert not second_done.is_set()
        with pytest.raises(TimeoutError):
            runner.wait("t1", timeout=0.1)  # a new wait covers the second job
    finally:
        first_may_finish.set()
        second_may_finish.set()
        runner.close()
    assert second_done.is_set()
    assert runner.stats() == {"queued": 2, "completed": 2, "failed": 0, "dropped": 0}


@pytest.mark.parametrize("how", ["http500", "malformed"])
def test_failed_background_work_counts_as_finished_for_waits(client, thread, fake, how):
    fake.fail(EXTRACTION, how)
    ids = thread.add_messages([user("this extraction fails")])
    thread.wait_for_memory_extraction(timeout=10)  # returns, and does not re-raise the failure
    assert client.extraction_stats() == stats(client, queued=1, failed=1)
    assert [message.id for message in thread.get_messages()] == ids
    assert memories(client, "t1") == []


@pytest.mark.parametrize("timeout", [-1, -0.5, float("nan"), "1", True, [1]])
def test_wait_for_memory_extraction_rejects_invalid_timeouts(thread, timeout):
    with pytest.raises(ValueError):
        thread.wait_for_memory_extraction(timeout=timeout)


def test_wait_for_memory_extraction_rejects_an_invalid_timeout_even_with_pending_work(client, thread, fake):
    fake.hold(EXTRACTION)
    thread.add_messages([user("pending")])
    with pytest.raises(ValueError):
        thread.wait_for_memory_extraction(timeout=-1)


# ---------------------------------------------------------------------------------------------
# The delete barrier
# ---------------------------------------------------------------------------------------------


def test_delete_message_times_out_without_deleting_while_the_threads_work_runs(client, thread, fake, monkeypatch):
    monkeypatch.setattr(thread_module, "DELETE_BARRIER_SECONDS", 0.2)
    fake.hold(EXTRACTION)
    ids = thread.add_messages([user("keep me"), user("and me")])
    wait_until_picked_up(fake)

    with pytest.raises(TimeoutError):
        thread.delete_message(ids[0])
    assert contents(thread) == ["keep me", "and me"]

    fake.release()
    monkeypatch.setattr(thread_module, "DELETE_BARRIER_SECONDS", 10)
    assert thread.delete_message(ids[0]) == 1
    # The delete waited for the extraction: its memories are there without an explicit wait.
    assert memories(client, "t1") == ["remembered: and me", "remembered: keep me"]
    assert contents(thread) == ["and me"]


def test_client_delete_thread_waits_for_the_threads_work_so_that_it_does_not_come_back(
    client, thread, fake, monkeypatch
):
    monkeypatch.setattr(client_module, "DELETE_BARRIER_SECONDS", 0.2)
    fake.hold(EXTRACTION)
    thread.add_messages([user("extract me")])
    wait_until_picked_up(fake)

    with pytest.raises(TimeoutError):
        client.delete_thread("t1")
    assert contents(thread) == ["extract me"]

    fake.release()
    monkeypatch.setattr(client_module, "DELETE_BARRIER_SECONDS", 10)
    assert client.delete_thread("t1") == 1
    assert client.store.get_thread("t1") is None  # no memory written after the delete revived it
    assert list(client.list_memories(user_id="u1")) == []


def test_delete_memory_times_out_without_deleting_while_the_threads_work_runs(client, thread, fake, monkeypatch):
    monkeypatch.setattr(thread_module, "DELETE_BARRIER_SECONDS", 0.2)
    manual = thread.add_memory("a manual memory", autonomous_linking=False)
    fake.hold(EXTRACTION)
    thread.add_messages([user("extract me")])
    wait_until_picked_up(fake)

    with pytest.raises(TimeoutError):
        thread.delete_memory(manual)
    assert client.get_memory(manual).content == "a manual memory"

    fake.release()
    monkeypatch.setattr(thread_module, "DELETE_BARRIER_SECONDS", 10)
    assert thread.delete_memory(manual) == 1
    assert memories(client, "t1") == ["remembered: extract me"]


def test_delete_memory_can_delete_a_memory_the_awaited_extraction_created(client, thread, fake, monkeypatch):
    monkeypatch.setattr(thread_module, "DELETE_BARRIER_SECONDS", 10)
    fake.hold(EXTRACTION)
    thread.add_messages([user("short-lived fact")])
    wait_until_picked_up(fake)
    fake.release()
    thread.wait_for_memory_extraction(timeout=10)
    [created] = client.list_memories(thread_id="t1")
    assert thread.delete_memory(created.id) == 1
    assert memories(client, "t1") == []


def test_the_delete_barrier_covers_only_its_own_thread(client, thread, fake, monkeypatch):
    monkeypatch.setattr(thread_module, "DELETE_BARRIER_SECONDS", 5)
    other = client.create_thread(thread_id="t2", user_id="u1", agent_id="a1")
    other_message = other.add_messages([user("other thread message")])[0]
    other_memory = other.add_memory("other thread memory", autonomous_linking=False)
    other.wait_for_memory_extraction(timeout=10)

    fake.hold(EXTRACTION)
    thread.add_messages([user("held in t1")])
    wait_until_picked_up(fake, count=2)

    assert other.delete_message(other_message) == 1
    assert other.delete_memory(other_memory) == 1
    assert memories(client, "t1") == []  # t1's job was still held while t2 deleted
    assert contents(other) == []


def test_delete_of_a_missing_record_still_waits_for_the_barrier(client, thread, fake, monkeypatch):
    monkeypatch.setattr(thread_module, "DELETE_BARRIER_SECONDS", 0.2)
    fake.hold(EXTRACTION)
    thread.add_messages([user("held")])
    wait_until_picked_up(fake)
    with pytest.raises(TimeoutError):
        thread.delete_message("no-such-message")
    with pytest.raises(TimeoutError):
        thread.delete_memory("no-such-memory")


# ---------------------------------------------------------------------------------------------
# A full queue
# ---------------------------------------------------------------------------------------------


def full_queue_thread(make_client, fake, behavior, put_timeout: float = 0.2):
    """A thread whose client's only worker is held inside "first" and whose one queue slot holds "second"."""
    extraction_config = config(
        background_extraction_queue_full_behavior=behavior,
        background_extraction_queue_put_timeout_seconds=put_timeout,
    )
    client = make_client(extraction_config, extraction_queue_capacity=1, extraction_workers=1)
    thread = client.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    fake.hold(EXTRACTION)
    first = thread.add_messages([user("first")])[0]
    wait_until_picked_up(fake)
    thread.add_messages([user("second")])
    assert client.extraction_stats() == stats(client, queued=2)
    return client, thread, first


def test_drop_skips_the_work_at_once_when_the_queue_is_full_and_keeps_the_raw_messages(make_client, fake):
    client, thread, _ = full_queue_thread(make_client, fake, DROP, put_timeout=30)
    started = time.monotonic()
    ids = thread.add_messages([user("third")])
    assert time.monotonic() - started < 15  # DROP does not wait for the 30 s put timeout
    assert len(ids) == 1 and thread.get_message(ids[0]).content == "third"
    assert client.extraction_stats() == stats(client, queued=2, dropped=1)

    fake.release()
    thread.wait_for_memory_extraction(timeout=10)
    assert extracted_texts(fake) == [["first"], ["second"]]  # "third" was never extracted
    assert memories(client, "t1") == ["remembered: first", "remembered: second"]
    assert contents(thread) == ["first", "second", "third"]
    assert client.extraction_stats() == stats(client, queued=2, completed=2, dropped=1)
    # The dropped messages are what an on-demand extraction picks up.
    assert thread.run_memory_extraction() != []
    assert extracted_texts(fake)[-1] == ["third"]
    assert thread.run_memory_extraction() == []


def test_wait_then_drop_waits_for_the_put_timeout_then_skips_the_work(make_client, fake):
    client, thread, _ = full_queue_thread(make_client, fake, WAIT_THEN_DROP, put_timeout=0.2)
    started = time.monotonic()
    ids = thread.add_messages([user("third")])
    assert time.monotonic() - started >= 0.15  # it did wait for a slot first
    assert thread.get_message(ids[0]).content == "third"
    assert client.extraction_stats() == stats(client, queued=2, dropped=1)

    fake.release()
    thread.wait_for_memory_extraction(timeout=10)
    assert memories(client, "t1") == ["remembered: first", "remembered: second"]


def test_wait_then_drop_queues_the_work_when_a_slot_frees_during_the_wait(make_client, fake):
    client, thread, _ = full_queue_thread(make_client, fake, WAIT_THEN_DROP, put_timeout=10)
    third = Background(lambda: thread.add_messages([user("third")]))
    assert third.still_blocked()  # waiting for a queue slot
    assert contents(thread) == ["first", "second", "third"]  # the raw message is stored before the wait

    fake.release()
    third.finish()
    thread.wait_for_memory_extraction(timeout=10)
    assert client.extraction_stats() == stats(client, queued=3, completed=3)
    assert memories(client, "t1") == ["remembered: first", "remembered: second", "remembered: third"]


def test_wait_then_raise_raises_timeout_error_from_add_messages_and_keeps_the_raw_messages(make_client, fake):
    client, thread, _ = full_queue_thread(make_client, fake, WAIT_THEN_RAISE, put_timeout=0.2)
    with pytest.raises(TimeoutError):
        thread.add_messages([user("third"), user("fourth")])
    assert contents(thread) == ["first", "second", "third", "fourth"]
    assert client.extraction_stats() == stats(client, queued=2, dropped=1)

    fake.release()
    thread.wait_for_memory_extraction(timeout=10)
    assert memories(client, "t1") == ["remembered: first", "remembered: second"]
    assert client.extraction_stats() == stats(client, queued=2, completed=2, dropped=1)
    thread.run_memory_extraction()
    assert extracted_texts(fake)[-1] == ["third", "fourth"]


@pytest.mark.parametrize("behavior", [DROP, WAIT_THEN_DROP])
def test_update_message_with_a_full_queue_keeps_the_raw_update_and_drops_the_re_extraction(make_client, fake, behavior):
    client, thread, first = full_queue_thread(make_client, fake, behavior, put_timeout=0.2)
    assert thread.update_message(first, content="first, edited") == first
    assert thread.get_message(first).content == "first, edited"
    assert client.extraction_stats() == stats(client, queued=2, dropped=1)

    fake.release()
    thread.wait_for_memory_extraction(timeout=10)
    assert fake.count(EXTRACTION) == 2  # no re-extraction of the edit
    thread.run_memory_extraction()  # the edit is remembered as not extracted
    assert extracted_texts(fake)[-1] == ["first, edited"]


def test_update_message_with_a_full_queue_and_wait_then_raise_raises_but_keeps_the_raw_update(make_client, fake):
    client, thread, first = full_queue_thread(make_client, fake, WAIT_THEN_RAISE, put_timeout=0.2)
    with pytest.raises(TimeoutError):
        thread.update_message(first, content="first, edited", metadata={"edited": True})
    edited = thread.get_message(first)
    assert (edited.content, edited.metadata) == ("first, edited", {"edited": True})
    assert client.extraction_stats() == stats(client, queued=2, dropped=1)


def test_background_update_message_queues_a_re_extraction_of_the_edited_message(client, thread, fake):
    [message_id] = thread.add_messages([user("I live in Porto")])
    thread.wait_for_memory_extraction(timeout=10)
    fake.hold(EXTRACTION)
    thread.update_message(message_id, content="I live in Lisbon")
    wait_until_picked_up(fake, count=2)
    assert thread.get_message(message_id).content == "I live in Lisbon"  # the raw update came first
    assert memories(client, "t1") == ["remembered: I live in Porto"]

    fake.release()
    thread.wait_for_memory_extraction(timeout=10)
    assert extracted_texts(fake)[-1] == ["I live in Lisbon"]
    # Earlier memories stay; the re-extraction adds its own.
    assert memories(client, "t1") == ["remembered: I live in Lisbon", "remembered: I live in Porto"]


# ---------------------------------------------------------------------------------------------
# Failures in the background
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["http500", "malformed"])
def test_a_background_failure_keeps_the_raw_messages_and_the_worker_keeps_serving(make_client, fake, how):
    client = make_client(extraction_workers=1)
    thread = client.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    fake.fail(EXTRACTION, how)
    failed_ids = thread.add_messages([user("lost extraction")])
    thread.wait_for_memory_extraction(timeout=10)
    assert client.extraction_stats() == stats(client, queued=1, failed=1)

    fake.fail(EXTRACTION, None)
    thread.add_messages([user("later extraction")])
    thread.wait_for_memory_extraction(timeout=10)
    assert client.extraction_stats() == stats(client, queued=2, completed=1, failed=1)
    assert thread.get_message(failed_ids[0]).content == "lost extraction"
    assert memories(client, "t1") == ["remembered: later extraction"]  # no rollback, no retry of the lost one


def test_a_failure_in_one_thread_does_not_stop_another_threads_work(make_client, fake):
    client = make_client(extraction_workers=1)
    broken = client.create_thread(thread_id="t-broken", user_id="u1", agent_id="a1")
    healthy = client.create_thread(thread_id="t-healthy", user_id="u1", agent_id="a1")
    fake.answers[EXTRACTION] = lambda request: (
        "not an object" if "boom" in FakeMemoryLlm.user_text(request) else remember_each_new_message(request)
    )
    broken.add_messages([user("boom")])
    healthy.add_messages([user("fine")])
    healthy.wait_for_memory_extraction(timeout=10)
    broken.wait_for_memory_extraction(timeout=10)
    assert memories(client, "t-healthy") == ["remembered: fine"]
    assert memories(client, "t-broken") == []
    assert client.extraction_stats() == stats(client, queued=2, completed=1, failed=1)


# ---------------------------------------------------------------------------------------------
# Order: one job of a thread at a time, in the order the writes came
# ---------------------------------------------------------------------------------------------


def test_a_threads_background_jobs_run_one_at_a_time_in_submission_order(make_client, fake):
    client = make_client(extraction_workers=3)
    thread = client.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    lock = threading.Lock()
    running = {"now": 0, "most": 0}

    def answer(request: RecordedRequest) -> dict:
        with lock:
            running["now"] += 1
            running["most"] = max(running["most"], running["now"])
        time.sleep(0.02)  # room for a second job of the thread to overlap, if the runner let it
        with lock:
            running["now"] -= 1
        return remember_each_new_message(request)

    fake.answers[EXTRACTION] = answer
    texts = [f"message {i}" for i in range(12)]
    for text in texts:
        thread.add_messages([user(text)])
    thread.wait_for_memory_extraction(timeout=15)

    assert running["most"] == 1
    assert extracted_texts(fake) == [[text] for text in texts]
    assert client.extraction_stats() == stats(client, queued=12, completed=12)


def test_jobs_of_different_threads_keep_their_own_order(make_client, fake):
    client = make_client(extraction_workers=3)
    threads = [client.create_thread(thread_id=f"t{n}", user_id="u1", agent_id="a1") for n in range(3)]
    for i in range(4):
        for n, thread in enumerate(threads):
            thread.add_messages([user(f"t{n} message {i}")])
    for thread in threads:
        thread.wait_for_memory_extraction(timeout=15)
    seen = [texts[0] for texts in extracted_texts(fake)]
    for n in range(3):
        assert [text for text in seen if text.startswith(f"t{n} ")] == [f"t{n} message {i}" for i in range(4)]


# ---------------------------------------------------------------------------------------------
# close()
# ---------------------------------------------------------------------------------------------


def test_close_lets_the_queued_work_finish_first(make_client, fake):
    client = make_client(extraction_queue_capacity=8, extraction_workers=1)
    thread = client.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    fake.hold(EXTRACTION)
    for text in ("one", "two", "three"):
        thread.add_messages([user(text)])
    wait_until_picked_up(fake)

    closing = Background(client.close)
    assert closing.still_blocked()  # the held job and the two queued ones are not done yet
    fake.release()
    closing.finish()
    assert client.extraction_stats() == stats(client, queued=3, completed=3)
    assert extracted_texts(fake) == [["one"], ["two"], ["three"]]
    reopened = store_at(client.store.path)  # the closed client's database, opened again
    try:
        assert sorted(r.content for r in reopened.list("fact", limit=None, thread_id="t1")) == [
            "remembered: one",
            "remembered: three",
            "remembered: two",
        ]
    finally:
        reopened.close()


def test_a_closed_runner_refuses_new_work_and_close_is_idempotent():
    runner = LlmWorkRunner(queue_capacity=2, workers=1)
    runner.submit("t1", lambda: None, "before close", DROP, 1)
    runner.close()
    runner.close()
    assert runner.stats() == {"queued": 1, "completed": 1, "failed": 0, "dropped": 0}
    for behavior in BackgroundExtractionQueueFullBehavior:
        with pytest.raises(RuntimeError):
            runner.submit("t1", lambda: None, "after close", behavior, 1)
    assert runner.stats()["queued"] == 1
    runner.wait("t1", timeout=0)  # nothing pending


def test_closing_a_runner_that_never_ran_anything_returns_at_once():
    runner = LlmWorkRunner()
    runner.close()
    with pytest.raises(RuntimeError):
        runner.submit("t1", lambda: None, "after close", DROP, 1)


def test_closed_client_runner_makes_background_add_messages_raise_runtime_error_after_the_raw_write(client, thread):
    client.llm_work_runner.close()
    with pytest.raises(RuntimeError):
        thread.add_messages([user("after close")])
    assert contents(thread) == ["after close"]


# ---------------------------------------------------------------------------------------------
# INLINE
# ---------------------------------------------------------------------------------------------


def test_inline_extraction_is_done_when_add_messages_returns(make_client, fake):
    client = make_client(config(INLINE))
    thread = client.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    thread.add_messages([user("I am vegetarian")])
    assert memories(client, "t1") == ["remembered: I am vegetarian"]  # no wait needed
    assert client.extraction_stats() == stats(client, completed=1)  # inline work is not queued
    thread.wait_for_memory_extraction(timeout=0)


def test_inline_update_message_re_extracts_before_returning(make_client, fake):
    client = make_client(config(INLINE))
    thread = client.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    [message_id] = thread.add_messages([user("I live in Porto")])
    thread.update_message(message_id, content="I live in Lisbon")
    assert memories(client, "t1") == ["remembered: I live in Lisbon", "remembered: I live in Porto"]


@pytest.mark.parametrize("how", ["http500", "malformed"])
def test_an_inline_failure_does_not_raise_from_add_messages(make_client, fake, how):
    client = make_client(config(INLINE))
    thread = client.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    fake.fail(EXTRACTION, how)
    ids = thread.add_messages([user("no memory from this")])
    assert thread.get_message(ids[0]).content == "no memory from this"
    assert memories(client, "t1") == []
    assert client.extraction_stats() == stats(client, failed=1)

    fake.fail(EXTRACTION, None)
    thread.add_messages([user("but from this")])
    assert memories(client, "t1") == ["remembered: but from this"]


def test_a_thread_config_can_choose_inline_under_a_background_client(make_client, fake):
    client = make_client(config(BACKGROUND))
    thread = client.create_thread(
        thread_id="t1",
        user_id="u1",
        agent_id="a1",
        memory_extraction_config=MemoryExtractionConfig(extraction_mode=INLINE),
    )
    thread.add_messages([user("inline here")])
    assert memories(client, "t1") == ["remembered: inline here"]


# ---------------------------------------------------------------------------------------------
# LlmWorkRunner on its own
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, -1, True, 1.5, "2", None])
@pytest.mark.parametrize("name", ["queue_capacity", "workers"])
def test_runner_rejects_a_capacity_or_worker_count_that_is_not_a_positive_integer(name, value):
    with pytest.raises(ValueError):
        LlmWorkRunner(**{name: value})


@pytest.mark.parametrize("name", ["extraction_queue_capacity", "extraction_workers"])
def test_agent_memory_rejects_an_invalid_queue_capacity_or_worker_count(tmp_path, name):
    store = store_at(tmp_path / "x.sqlite3")
    try:
        with pytest.raises(ValueError):
            AgentMemory(store, **{name: 0})
    finally:
        store.close()


def test_runner_stats_start_at_zero_with_the_four_keys():
    runner = LlmWorkRunner(queue_capacity=1, workers=1)
    assert runner.stats() == dict.fromkeys(STATS_KEYS, 0)
    runner.close()


def test_client_extraction_stats_have_the_four_keys(client):
    assert client.extraction_stats() == dict.fromkeys(STATS_KEYS, 0)


def test_runner_run_inline_counts_outcomes_and_swallows_failures():
    runner = LlmWorkRunner()
    calls = []
    runner.run_inline("t1", lambda: calls.append("ran"), "works")

    def boom() -> None:
        raise RuntimeError("scripted")

    runner.run_inline("t1", boom, "fails")  # logged, not raised
    assert calls == ["ran"]
    assert runner.stats() == {"queued": 0, "completed": 1, "failed": 1, "dropped": 0}
    runner.close()


def test_runner_queue_full_behaviours_on_plain_callables():
    runner = LlmWorkRunner(queue_capacity=1, workers=1)
    gate = threading.Event()
    started = threading.Event()

    def blocker() -> None:
        started.set()
        assert gate.wait(10)

    try:
        runner.submit("t1", blocker, "blocker", DROP, 0)
        assert started.wait(10)
        runner.submit("t1", lambda: None, "fills the queue", DROP, 0)
        runner.submit("t1", lambda: None, "dropped", DROP, 0)
        runner.submit("t1", lambda: None, "dropped after waiting", WAIT_THEN_DROP, 0.05)
        with pytest.raises(TimeoutError):
            runner.submit("t1", lambda: None, "raised after waiting", WAIT_THEN_RAISE, 0.05)
        assert runner.stats() == {"queued": 2, "completed": 0, "failed": 0, "dropped": 3}
    finally:
        gate.set()
        runner.close()
    assert runner.stats() == {"queued": 2, "completed": 2, "failed": 0, "dropped": 3}


def test_runner_failed_background_work_is_counted_and_finishes_its_wait():
    runner = LlmWorkRunner(queue_capacity=2, workers=1)

    def boom() -> None:
        raise ValueError("scripted")

    try:
        runner.submit("t1", boom, "fails", DROP, 0)
        runner.wait("t1", timeout=10)
        runner.submit("t1", lambda: None, "works", DROP, 0)
        runner.wait("t1", timeout=10)
    finally:
        runner.close()
    assert runner.stats() == {"queued": 2, "completed": 1, "failed": 1, "dropped": 0}
