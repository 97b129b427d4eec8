"""The thread-page examples of API_SPEC §10.1 that need no LLM, context card, summary or link.

Each example runs on the conftest `thread` (thread "t1", user "u1", agent "a1") of a fresh store.
"""

from __future__ import annotations

import asyncio


def test_c_t2_add_memory_returns_the_caller_supplied_memory_id(thread, memory):
    assert thread.add_memory("Remember this preference", memory_id="mem-thread-docs") == "mem-thread-docs"
    assert memory.get_memory("mem-thread-docs").content == "Remember this preference"


def test_c_t3_add_memory_async_returns_the_caller_supplied_memory_id(thread, memory):
    result = asyncio.run(thread.add_memory_async("Remember this preference", memory_id="mem-thread-docs-async"))
    assert result == "mem-thread-docs-async"
    assert memory.get_memory("mem-thread-docs-async").content == "Remember this preference"


def test_c_t4_add_messages_returns_one_id_per_message(thread):
    ids = thread.add_messages([{"role": "user", "content": "Thread message from docs"}])
    assert len(ids) == 1
    assert isinstance(ids[0], str) and ids[0]
    assert thread.get_message(ids[0]).content == "Thread message from docs"


def test_c_t5_delete_memory_of_an_unknown_id_returns_zero(thread):
    assert thread.delete_memory("456") == 0


def test_c_t6_delete_memory_async_of_an_unknown_id_returns_zero(thread):
    assert asyncio.run(thread.delete_memory_async("456")) == 0


def test_c_t7_delete_message_of_an_unknown_id_returns_zero(thread):
    assert thread.delete_message("123") == 0


def test_c_t8_delete_message_async_of_an_unknown_id_returns_zero(thread):
    assert asyncio.run(thread.delete_message_async("123")) == 0


def test_c_t12_the_last_stored_message_is_the_one_just_added(thread):
    thread.add_messages([{"role": "user", "content": "An earlier message"}])
    assert len(thread.add_messages([{"role": "user", "content": "Stored message example"}])) == 1
    assert thread.get_messages()[-1].content == "Stored message example"


def test_c_t13_async_add_then_async_get_messages_ends_with_the_new_message(thread):
    thread.add_messages([{"role": "user", "content": "An earlier message"}])
    message_ids = asyncio.run(thread.add_messages_async([{"role": "user", "content": "Stored message example"}]))
    assert len(message_ids) == 1
    messages = asyncio.run(thread.get_messages_async())
    assert messages[-1].content == "Stored message example"
    assert messages[-1].id == message_ids[0]


def test_c_t16_update_memory_async_returns_the_memory_id_and_replaces_the_content(thread, memory):
    memory_id = asyncio.run(thread.add_memory_async("Original memory"))
    assert asyncio.run(thread.update_memory_async(memory_id, content="Updated memory")) == memory_id
    assert memory.get_memory(memory_id).content == "Updated memory"


def test_c_t17_update_message_returns_the_message_id_and_replaces_the_content(thread):
    message_id = thread.add_messages([{"role": "user", "content": "Draft message"}])[0]
    assert thread.update_message(message_id, content="Edited message") == message_id
    assert thread.get_message(message_id).content == "Edited message"


def test_c_t18_update_message_async_returns_the_message_id_and_replaces_the_content(thread):
    message_ids = asyncio.run(thread.add_messages_async([{"role": "user", "content": "Draft message"}]))
    assert asyncio.run(thread.update_message_async(message_ids[0], content="Edited message")) == message_ids[0]
    assert thread.get_message(message_ids[0]).content == "Edited message"
