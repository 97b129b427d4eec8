"""The MCP tools in process (memory.mcp.tools): their input schemas are JSON Schema taken from the
API's, each refusal is a ToolError with the API's messages, and /mcp/ answers only a token.
The SDK's client against a live server: tests/api/test_mcp.py."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from memory.engine import Visibility
from memory.mcp.tools import TOOLS, Caller, ToolError, call, tools_for

CURATOR = Caller(name="test-agent", writes=True)
READER = Caller(name="test-reader", writes=False)


@pytest.mark.django_db
def test_every_tool_has_an_object_schema_that_refuses_unknown_arguments():
    for tool in TOOLS:
        schema = tool.schema()
        Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False, tool.name
    add = next(tool for tool in TOOLS if tool.name == "add_memory").schema()
    assert add["properties"]["user_id"]["maxLength"] == 512  # memory.web.fields.ID_MAX_LENGTH, as the API's
    assert add["properties"]["ttl_days"]["maximum"] == 36_500
    assert add["required"] == ["content"]


def test_a_reader_gets_the_read_tools_only():
    assert {tool.name for tool in tools_for(READER)} == {
        "search_memory",
        "get_context_card",
        "list_memories",
        "get_memory",
    }
    with pytest.raises(ToolError, match="may only read"):
        call("add_memory", {"content": "x", "user_id": "alice"}, READER)


@pytest.mark.django_db
def test_refusals_carry_the_apis_messages_and_change_nothing(agent_memory):
    agent_memory.add_memory("Alice is vegetarian.", user_id="alice", memory_id="alice-veg")
    cases = [
        ("add_memory", {"content": 5, "user_id": "alice"}, "content"),
        ("add_memory", {"content": "ok", "memory_idx": "y"}, "memory_idx"),
        ("add_memory", {"content": "ok", "user_id": "x" * 600}, "user_id"),
        ("update_memory", {"memory_id": "alice-veg", "content": "new"}, "expected_version"),
        ("update_memory", {"memory_id": "alice-veg", "expected_version": 9, "content": "new"}, "expected_version"),
        ("list_memories", {"limit": [1]}, "limit"),
        ("search_memory", {"query": "x"}, "user_id"),
    ]
    for name, arguments, field in cases:
        with pytest.raises(ToolError) as refused:
            call(name, arguments, CURATOR)
        assert field in refused.value.errors, (name, refused.value.errors)
    with pytest.raises(ToolError) as refused:
        call("add_memory", {"content": "ok", "memory_idx": "y"}, CURATOR)
    assert "memory_id" in refused.value.errors["memory_idx"][0] and ", id," not in refused.value.errors["memory_idx"][0]
    assert [record.content for record in agent_memory.list_memories()] == ["Alice is vegetarian."]


@pytest.mark.django_db
def test_a_scoped_caller_sees_nothing_outside(agent_memory):
    agent_memory.add_memory("Alice is vegetarian.", user_id="alice", memory_id="alice-veg")
    agent_memory.add_memory("Bob likes tea.", user_id="bob", memory_id="bob-tea")
    bob_only = Caller(name="bob-agent", writes=False, scope=Visibility(users=["bob"]))
    listed = call("list_memories", {}, bob_only)["results"]
    assert [record["id"] for record in listed] == ["bob-tea"]
    with pytest.raises(ToolError):
        call("get_memory", {"memory_id": "alice-veg"}, bob_only)
    assert call("search_memory", {"query": "vegetarian", "user_id": "alice"}, bob_only)["results"] == []


@pytest.mark.django_db
def test_a_scoped_writer_changes_nothing_outside(agent_memory):
    alice = agent_memory.add_memory("Alice is vegetarian.", user_id="alice", memory_id="alice-veg")
    agent_memory.add_memory("Bob likes tea.", user_id="bob", memory_id="bob-tea")
    bob_writer = Caller(name="bob-agent", writes=True, scope=Visibility(users=["bob"]))
    version = agent_memory.get_memory(alice).version
    outside = [
        ("update_memory", {"memory_id": "alice-veg", "content": "Alice eats meat.", "expected_version": version}),
        ("update_memory", {"memory_id": "bob-tea", "user_id": "alice", "expected_version": 1}),
        ("delete_memory", {"memory_id": "alice-veg", "expected_version": version}),
        ("link_memories", {"source_record_id": "bob-tea", "target_record_id": "alice-veg", "relation_type": "refines"}),
        ("add_memory", {"content": "Alice likes jazz.", "user_id": "alice"}),
        ("add_messages", {"thread_id": "t1", "user_id": "alice", "messages": [{"role": "user", "content": "x"}]}),
    ]
    for name, arguments in outside:
        with pytest.raises(ToolError):
            call(name, arguments, bob_writer)
    assert {(record.id, record.user_id, record.content) for record in agent_memory.list_memories()} == {
        ("alice-veg", "alice", "Alice is vegetarian."),
        ("bob-tea", "bob", "Bob likes tea."),
    }
    assert list(agent_memory.list_relations()) == [] and list(agent_memory.list_threads()) == []


def test_mcp_opens_with_a_token_only(curator_client):
    response = curator_client.post("/mcp/", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, "application/json")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="mcp"'
    assert curator_client.post("/mcp", {}, "application/json").status_code == 401  # without the slash too


def test_mcp_spends_the_apis_rate_budget_of_the_token(client, curator, settings):
    from django.core.cache import cache

    from memory.web.tokens import create_token

    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"token": "2/minute", "user": None}}
    cache.clear()
    _, token = create_token(curator, name="busy-agent", role="curator")
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}", "HTTP_ACCEPT": "application/json, text/event-stream"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    statuses = [client.post("/mcp/", body, "application/json", **headers).status_code for _ in range(3)]
    assert statuses[2] == 429 and statuses[0] != 429
    assert client.post("/api/v1/memories/", {}, "application/json", **headers).status_code == 429  # one budget
    cache.clear()
