"""Client API of AgentMemory: threads, memories, users and agents, listings (contract; DECISIONS D3, D4).

Also checks that every Thread method has an `_async` twin with the same parameters (API_SPEC §4.2).
"""

from __future__ import annotations

import asyncio
import inspect
import time
import uuid

import pytest

from memory.engine import AgentMemory, MemoryRecord, RecordStatus, Thread, ThreadRecord

THREAD_METHODS = [
    "add_messages",
    "add_memory",
    "get_message",
    "get_messages",
    "update_message",
    "update_memory",
    "delete_message",
    "delete_memory",
    "search",
]


def ids(records) -> list[str]:
    return [r.id for r in records]


def page_through(list_call, limit: int, between_pages=None, **filters) -> list[str]:
    """Every id a cursor-paginated listing yields, page after page, in order."""
    seen, cursor = [], None
    for _ in range(100):
        page = list_call(limit=limit, cursor=cursor, **filters)
        assert len(page) <= limit
        seen.extend(ids(page))
        cursor = page.next_cursor
        if cursor is None:
            return seen
        if between_pages is not None:
            between_pages()
            between_pages = None
    raise AssertionError("pagination did not end")


def is_uuid(value) -> bool:
    try:
        return isinstance(value, str) and str(uuid.UUID(value)) == value.lower()
    except ValueError:
        return False


# --- threads -------------------------------------------------------------------------------


def test_create_thread_without_ids_generates_uuid_strings(memory):
    thread = memory.create_thread()
    assert isinstance(thread, Thread)
    assert is_uuid(thread.thread_id) and is_uuid(thread.user_id) and is_uuid(thread.agent_id)
    assert len({thread.thread_id, thread.user_id, thread.agent_id}) == 3
    assert memory.create_thread().thread_id != thread.thread_id


def test_create_thread_keeps_the_given_ids_and_metadata(memory):
    thread = memory.create_thread(thread_id="c1", user_id="u1", agent_id="a1", metadata={"topic": "billing"})
    assert (thread.thread_id, thread.user_id, thread.agent_id) == ("c1", "u1", "a1")
    assert thread.metadata == {"topic": "billing"}


def test_create_thread_with_an_existing_id_returns_a_handle_to_the_same_thread(memory, thread):
    [message_id] = thread.add_messages([{"role": "user", "content": "hello"}])
    again = memory.create_thread(thread_id="t1")
    assert (again.thread_id, again.user_id, again.agent_id) == ("t1", "u1", "a1")
    assert again.get_message(message_id).content == "hello"
    assert [t.id for t in memory.list_threads()].count("t1") == 1


def test_get_thread_returns_a_handle_with_the_stored_scope_and_metadata(memory):
    memory.create_thread(thread_id="c1", user_id="u1", agent_id="a1", metadata={"topic": "billing"})
    handle = memory.get_thread("c1")
    assert isinstance(handle, Thread)
    assert (handle.thread_id, handle.user_id, handle.agent_id, handle.metadata) == (
        "c1",
        "u1",
        "a1",
        {"topic": "billing"},
    )


def test_get_thread_of_an_unknown_id_raises_key_error(memory):
    with pytest.raises(KeyError):
        memory.get_thread("no-such-thread")


def test_update_thread_replaces_the_metadata(memory, thread):
    memory.update_thread("t1", metadata={"topic": "travel"})
    updated = memory.update_thread("t1", metadata={"stage": "done"})
    assert isinstance(updated, Thread) and updated.metadata == {"stage": "done"}
    assert memory.get_thread("t1").metadata == {"stage": "done"}
    assert ids(memory.list_threads(metadata_filter={"stage": "done"})) == ["t1"]
    assert memory.list_threads(metadata_filter={"topic": "travel"}) == []


def test_update_thread_of_an_unknown_id_raises_key_error(memory):
    with pytest.raises(KeyError):
        memory.update_thread("no-such-thread", metadata={"a": 1})


def test_delete_thread_removes_the_thread_its_messages_and_its_memories(memory, thread):
    sibling = memory.create_thread(thread_id="t2", user_id="u1", agent_id="a1")
    [message_id] = thread.add_messages([{"role": "user", "content": "zebra crossing message"}])
    memory_id = thread.add_memory("zebra crossing memory")
    kept_id = sibling.add_memory("zebra crossing in the sibling thread")
    assert memory.delete_thread("t1") == 1
    with pytest.raises(KeyError):
        memory.get_thread("t1")
    with pytest.raises(KeyError):
        memory.get_memory(memory_id)
    assert ids(memory.search("zebra crossing", user_id="u1", max_results=50)) == [kept_id]
    assert ids(sibling.search("zebra crossing", max_results=50)) == [kept_id]
    assert message_id not in ids(memory.list_messages())
    assert memory.list_messages(thread_id="t1") == []
    assert memory.list_memories(thread_id="t1") == []
    assert memory.delete_thread("t1") == 0


def test_delete_thread_of_an_unknown_id_returns_zero(memory):
    assert memory.delete_thread("no-such-thread") == 0


def test_list_threads_returns_thread_records_with_their_scope(memory, thread):
    [record] = memory.list_threads()
    assert isinstance(record, ThreadRecord)
    assert record.id == "t1"
    assert (record.user_id, record.agent_id) == ("u1", "a1")


def test_list_threads_orders_by_latest_activity_first(memory):
    for name in ("ta", "tb", "tc"):
        memory.create_thread(thread_id=name, user_id="u1", agent_id="a1").add_messages(
            [{"role": "user", "content": f"opening {name}"}]
        )
        time.sleep(0.01)
    assert ids(memory.list_threads()) == ["tc", "tb", "ta"]
    memory.get_thread("ta").add_messages([{"role": "user", "content": "ta again"}])
    assert ids(memory.list_threads()) == ["ta", "tc", "tb"]


def test_list_threads_filters_by_user_agent_and_metadata(memory):
    memory.create_thread(thread_id="x1", user_id="u1", agent_id="a1", metadata={"topic": "billing"})
    memory.create_thread(thread_id="x2", user_id="u1", agent_id="a2", metadata={"topic": "travel"})
    memory.create_thread(thread_id="x3", user_id="u2", agent_id="a1", metadata={"topic": "billing"})
    assert set(ids(memory.list_threads(user_id="u1"))) == {"x1", "x2"}
    assert set(ids(memory.list_threads(agent_id="a1"))) == {"x1", "x3"}
    assert set(ids(memory.list_threads(metadata_filter={"topic": "billing"}))) == {"x1", "x3"}
    assert ids(memory.list_threads(user_id="u1", agent_id="a1")) == ["x1"]
    assert memory.list_threads(user_id="nobody") == []


def test_list_threads_limit_and_cursor_visit_every_thread_once(memory):
    names = [f"p{n}" for n in range(7)]
    for name in names:
        memory.create_thread(thread_id=name, user_id="u1", agent_id="a1")
    first = memory.list_threads(limit=3)
    assert len(first) == 3 and first.next_cursor is not None
    listed = page_through(memory.list_threads, 3)
    assert sorted(listed) == sorted(names)
    assert listed == ids(memory.list_threads())


def test_list_threads_cursor_is_stable_when_a_thread_is_created_between_pages(memory):
    names = [f"p{n}" for n in range(6)]
    for name in names:
        memory.create_thread(thread_id=name, user_id="u1", agent_id="a1")
    listed = page_through(
        memory.list_threads,
        2,
        between_pages=lambda: memory.create_thread(thread_id="late", user_id="u1", agent_id="a1"),
    )
    assert len(listed) == len(set(listed))
    assert set(names) <= set(listed)


# --- memories ------------------------------------------------------------------------------


def test_client_add_memory_and_get_memory_round_trip(memory):
    memory_id = memory.add_memory(
        "The user's preferred pizza style is thin crust.",
        memory_id="pizza-thin-crust",
        memory_type="preference",
        user_id="u1",
        metadata={"source": "chat"},
    )
    assert memory_id == "pizza-thin-crust"
    record = memory.get_memory(memory_id)
    assert isinstance(record, MemoryRecord)
    assert (record.content, record.record_type, record.metadata) == (
        "The user's preferred pizza style is thin crust.",
        "preference",
        {"source": "chat"},
    )
    assert (record.user_id, record.agent_id, record.thread_id) == ("u1", None, None)
    assert record.status == RecordStatus.VALID


def test_client_add_memory_with_an_unknown_type_raises_value_error(memory):
    with pytest.raises(ValueError):
        memory.add_memory("x", memory_type="note", user_id="u1")


def test_client_get_memory_of_an_unknown_id_raises_key_error(memory):
    with pytest.raises(KeyError):
        memory.get_memory("no-such-memory")


def test_client_get_memory_of_a_message_id_raises_key_error(memory, thread):
    [message_id] = thread.add_messages([{"role": "user", "content": "a message"}])
    with pytest.raises(KeyError):
        memory.get_memory(message_id)


def test_client_update_memory_replaces_fields_and_returns_the_id(memory):
    memory_id = memory.add_memory("Original", user_id="u1", metadata={"a": 1})
    assert (
        memory.update_memory(memory_id, content="Updated", metadata={"b": 2}, status=RecordStatus.INVALID) == memory_id
    )
    record = memory.get_memory(memory_id)
    assert (record.content, record.metadata, record.status) == ("Updated", {"b": 2}, RecordStatus.INVALID)


def test_client_update_memory_works_on_a_memory_of_any_thread(memory, thread):
    memory_id = thread.add_memory("In t1")
    memory.update_memory(memory_id, content="Edited by the client")
    assert memory.get_memory(memory_id).content == "Edited by the client"


def test_client_update_memory_of_an_unknown_id_raises_key_error(memory):
    with pytest.raises(KeyError):
        memory.update_memory("no-such-memory", content="x")


def test_client_update_memory_with_an_unknown_keyword_raises_type_error(memory):
    memory_id = memory.add_memory("Original", user_id="u1")
    with pytest.raises(TypeError):
        memory.update_memory(memory_id, colour="red")


def test_client_delete_memory_returns_one_then_zero(memory):
    memory_id = memory.add_memory("Forget me", user_id="u1")
    assert memory.delete_memory(memory_id) == 1
    assert memory.delete_memory(memory_id) == 0
    with pytest.raises(KeyError):
        memory.get_memory(memory_id)


def test_client_search_finds_a_client_added_memory(memory):
    memory_id = memory.add_memory("The user collects vintage typewriters.", user_id="u1")
    assert ids(memory.search("vintage typewriters", user_id="u1"))[0] == memory_id


# --- users and agents ----------------------------------------------------------------------


def test_add_user_and_list_users(memory):
    assert memory.add_user("u-docs-profile", "Prefers concise answers.") == "u-docs-profile"
    memory.add_user("u-other", "Likes detail.")
    users = {r.id: r.content for r in memory.list_users()}
    assert users == {"u-docs-profile": "Prefers concise answers.", "u-other": "Likes detail."}


def test_add_agent_and_list_agents(memory):
    assert memory.add_agent("a-docs-agent", "Support assistant") == "a-docs-agent"
    assert {r.id: r.content for r in memory.list_agents()} == {"a-docs-agent": "Support assistant"}


def test_list_users_paginates_with_a_cursor(memory):
    names = [f"user-{n}" for n in range(5)]
    for name in names:
        memory.add_user(name, f"profile of {name}")
    listed = page_through(memory.list_users, 2)
    assert sorted(listed) == names


def populate_two_users(memory):
    memory.add_user("u1", "first user")
    memory.add_user("u2", "second user")
    created = {}
    for user in ("u1", "u2"):
        thread = memory.create_thread(thread_id=f"{user}-thread", user_id=user, agent_id="a1")
        created[user] = {
            "messages": thread.add_messages([{"role": "user", "content": f"hello from {user}"}]),
            "memories": [
                thread.add_memory(f"thread memory of {user}"),
                memory.add_memory(f"memory of {user}", user_id=user),
            ],
        }
    return created


def test_delete_user_with_cascade_removes_that_users_threads_messages_and_memories(memory):
    created = populate_two_users(memory)
    assert memory.delete_user("u1", cascade=True) >= 1
    assert ids(memory.list_users()) == ["u2"]
    assert memory.list_threads(user_id="u1") == []
    assert memory.list_messages(user_id="u1") == []
    assert memory.list_memories(user_id="u1") == []
    for memory_id in created["u1"]["memories"]:
        with pytest.raises(KeyError):
            memory.get_memory(memory_id)
    with pytest.raises(KeyError):
        memory.get_thread("u1-thread")
    assert memory.search("memory of u1", user_id="u1") == []
    # The other user keeps everything.
    assert ids(memory.list_threads(user_id="u2")) == ["u2-thread"]
    assert ids(memory.list_messages(user_id="u2")) == created["u2"]["messages"]
    assert sorted(ids(memory.list_memories(user_id="u2"))) == sorted(created["u2"]["memories"])


def test_delete_user_is_cascading_by_default(memory):
    populate_two_users(memory)
    memory.delete_user("u1")
    assert memory.list_threads(user_id="u1") == []
    assert memory.list_memories(user_id="u1") == []


def test_delete_user_without_cascade_removes_only_the_profile(memory, store):
    created = populate_two_users(memory)
    assert memory.delete_user("u1", cascade=False) == 1
    assert store.get("user_profile", "u1") is None
    assert store.get("user_profile", "u2").content == "second user"
    # u1 still owns data, so the listing may still name it, but without the deleted profile text.
    assert "first user" not in [r.content for r in memory.list_users()]
    assert ids(memory.list_threads(user_id="u1")) == ["u1-thread"]
    assert ids(memory.list_messages(user_id="u1")) == created["u1"]["messages"]
    assert sorted(ids(memory.list_memories(user_id="u1"))) == sorted(created["u1"]["memories"])


def test_delete_user_of_an_unknown_user_returns_zero(memory):
    assert memory.delete_user("nobody", cascade=False) == 0
    assert memory.delete_user("nobody", cascade=True) == 0


def test_delete_agent_with_cascade_removes_that_agents_threads_and_memories(memory):
    memory.add_agent("a1", "first agent")
    memory.add_agent("a2", "second agent")
    gone = memory.create_thread(thread_id="ta1", user_id="u1", agent_id="a1")
    kept = memory.create_thread(thread_id="ta2", user_id="u1", agent_id="a2")
    gone_id = gone.add_memory("memory of agent one")
    kept_id = kept.add_memory("memory of agent two")
    assert memory.delete_agent("a1", cascade=True) >= 1
    assert ids(memory.list_agents()) == ["a2"]
    assert ids(memory.list_threads(user_id="u1")) == ["ta2"]
    with pytest.raises(KeyError):
        memory.get_memory(gone_id)
    assert memory.get_memory(kept_id).content == "memory of agent two"


# --- list_memories / list_messages ---------------------------------------------------------


@pytest.fixture
def listed(memory):
    one = memory.create_thread(thread_id="l1", user_id="u1", agent_id="a1")
    two = memory.create_thread(thread_id="l2", user_id="u1", agent_id="a2")
    three = memory.create_thread(thread_id="l3", user_id="u2", agent_id="a1")
    return {
        "m-l1": one.add_memory("memory l1", memory_id="m-l1", metadata={"tag": "x"}),
        "f-l1": one.add_memory("fact l1", memory_id="f-l1", memory_type="fact"),
        "p-l2": two.add_memory("preference l2", memory_id="p-l2", memory_type="preference", metadata={"tag": "x"}),
        "g-l3": three.add_memory("guideline l3", memory_id="g-l3", memory_type="guideline"),
        "msg-l1": one.add_messages(
            [{"role": "user", "content": "message l1", "id": "msg-l1", "metadata": {"tag": "x"}}]
        )[0],
        "msg-l2": two.add_messages([{"role": "user", "content": "message l2", "id": "msg-l2"}])[0],
        "msg-l3": three.add_messages([{"role": "user", "content": "message l3", "id": "msg-l3"}])[0],
    }


def test_list_memories_returns_every_memory_like_record_and_no_messages(memory, listed):
    assert set(ids(memory.list_memories())) == {"m-l1", "f-l1", "p-l2", "g-l3"}


def test_list_memories_filters_by_scope_type_and_metadata(memory, listed):
    assert set(ids(memory.list_memories(user_id="u1"))) == {"m-l1", "f-l1", "p-l2"}
    assert set(ids(memory.list_memories(agent_id="a1"))) == {"m-l1", "f-l1", "g-l3"}
    assert set(ids(memory.list_memories(thread_id="l1"))) == {"m-l1", "f-l1"}
    assert set(ids(memory.list_memories(memory_types=["fact", "guideline"]))) == {"f-l1", "g-l3"}
    assert set(ids(memory.list_memories(metadata_filter={"tag": "x"}))) == {"m-l1", "p-l2"}
    assert ids(memory.list_memories(user_id="u1", memory_types=["preference"])) == ["p-l2"]


def test_list_memories_paginates_with_a_stable_cursor(memory, listed):
    extra = [memory.add_memory(f"extra {n}", user_id="u1") for n in range(5)]
    everything = {"m-l1", "f-l1", "p-l2", "g-l3", *extra}
    first = memory.list_memories(limit=3)
    assert len(first) == 3 and first.next_cursor is not None
    listed_ids = page_through(memory.list_memories, 3, between_pages=lambda: memory.add_memory("late", user_id="u1"))
    assert len(listed_ids) == len(set(listed_ids))
    assert everything <= set(listed_ids)


def test_list_messages_filters_by_thread_user_agent_and_metadata(memory, listed):
    assert set(ids(memory.list_messages())) == {"msg-l1", "msg-l2", "msg-l3"}
    assert ids(memory.list_messages(thread_id="l2")) == ["msg-l2"]
    assert set(ids(memory.list_messages(user_id="u1"))) == {"msg-l1", "msg-l2"}
    assert set(ids(memory.list_messages(agent_id="a1"))) == {"msg-l1", "msg-l3"}
    assert ids(memory.list_messages(metadata_filter={"tag": "x"})) == ["msg-l1"]


def test_list_messages_of_a_thread_come_in_chronological_order_across_pages(memory, thread):
    message_ids = thread.add_messages([{"role": "user", "content": f"line {n}"} for n in range(7)])
    assert page_through(memory.list_messages, 3, thread_id="t1") == message_ids


# --- async twins (§4.2) --------------------------------------------------------------------


@pytest.mark.parametrize("name", THREAD_METHODS)
def test_every_thread_method_has_an_async_twin_with_the_same_parameters(thread, name):
    sync_method = getattr(thread, name)
    async_method = getattr(thread, f"{name}_async")
    assert not inspect.iscoroutinefunction(sync_method)
    assert inspect.iscoroutinefunction(async_method)
    assert list(inspect.signature(async_method).parameters) == list(inspect.signature(sync_method).parameters)


def test_async_twins_behave_like_their_sync_methods(thread, memory):
    async def scenario():
        [message_id] = await thread.add_messages_async([{"role": "user", "content": "async draft"}])
        assert (await thread.get_message_async(message_id)).content == "async draft"
        assert await thread.update_message_async(message_id, content="async final") == message_id
        assert [m.content for m in await thread.get_messages_async()] == ["async final"]
        memory_id = await thread.add_memory_async("async memory about kites")
        assert await thread.update_memory_async(memory_id, metadata={"k": 1}) == memory_id
        assert [r.id for r in await thread.search_async("kites", record_types=["memory"])] == [memory_id]
        assert await thread.delete_memory_async(memory_id) == 1
        assert await thread.delete_message_async(message_id) == 1
        with pytest.raises(KeyError):
            await thread.get_message_async(message_id)

    asyncio.run(scenario())
    assert thread.get_messages() == []


def test_async_twins_raise_the_same_errors_as_their_sync_methods(thread):
    memory_id = thread.add_memory("kept as is")
    with pytest.raises(TypeError):
        asyncio.run(thread.update_memory_async(memory_id, colour="red"))
    with pytest.raises(KeyError):
        asyncio.run(thread.get_message_async("no-such-message"))
    with pytest.raises(KeyError):
        asyncio.run(thread.update_message_async("no-such-message", content="x"))
    with pytest.raises(ValueError):
        asyncio.run(thread.add_memory_async("typed wrongly", memory_type="note"))
    assert asyncio.run(thread.delete_message_async("no-such-message")) == 0


def test_agent_memory_can_be_built_over_a_store(store):
    client = AgentMemory(store)
    assert client.create_thread(thread_id="solo", user_id="u", agent_id="a").thread_id == "solo"


def test_a_transaction_stores_its_writes_together_or_none_of_them(memory):
    for n in range(3):
        memory.add_memory(f"note {n}", memory_id=f"note-{n}", user_id="u", autonomous_linking=False)

    with pytest.raises(RuntimeError), memory.transaction():
        memory.update_memory("note-0", status=RecordStatus.INVALID)
        memory.delete_memory("note-1")
        raise RuntimeError("the batch fails part-way")
    with memory.transaction():
        memory.update_memory("note-2", status=RecordStatus.INVALID)
        memory.delete_memory("note-0")

    assert [(r.id, r.status) for r in memory.list_memories(user_id="u")] == [
        ("note-1", RecordStatus.VALID),
        ("note-2", RecordStatus.INVALID),
    ]
