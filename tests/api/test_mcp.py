"""The MCP front door (memory.mcp, docs/mcp.md) as an agent meets it: the SDK's own client against a
real site (runserver, as `make run` starts it, over a throwaway store and database), with a
curator's, a viewer's and a scoped viewer's tokens; and `manage.py oam_mcp` over stdio.

The site runs in a subprocess so that /mcp/ is served exactly as in production: by the WSGI
server, one event loop per request inside the Django process, on the dashboard's port."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
READS = {"search_memory", "get_context_card", "list_memories", "get_memory"}
WRITES = {"add_messages", "add_memory", "update_memory", "delete_memory", "link_memories"}

WORLD = """
from memory.services import get_agent_memory
m = get_agent_memory()
t = m.create_thread(thread_id="trip-lisbon", user_id="alice", agent_id="atlas")
t.add_messages([{"role": "user", "content": "Book me a quiet hotel in Lisbon, I'm vegetarian."},
                {"role": "assistant", "content": "Principe Real is calm at night."}])
m.add_memory("Alice prefers a window seat on long flights.", memory_type="preference", user_id="alice",
             agent_id="atlas", memory_id="alice-window")
m.add_memory("Alice is vegetarian.", memory_type="fact", user_id="alice", agent_id="atlas", memory_id="alice-veg")
m.add_memory("Bob is allergic to peanuts.", memory_type="fact", user_id="bob", agent_id="atlas",
             memory_id="bob-peanuts")
m.add_memory("Bob runs a marathon every spring.", memory_type="fact", user_id="bob", memory_id="bob-marathon")
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def manage(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        [PYTHON, "manage.py", *args], cwd=ROOT, env=env, input=stdin, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def site_env(tmp: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("OAM_", "DJANGO_"))}
    env.update(
        OAM_STORE_URL=f"sqlite:///{tmp / 'store.db'}",
        OAM_DATABASE_URL=f"sqlite:///{tmp / 'db.sqlite3'}",
        OAM_EMBEDDER="hashing",
        DJANGO_SETTINGS_MODULE="oam_site.settings",
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("mcp_site")
    env = site_env(tmp)
    manage(env, "migrate", "--noinput", "-v0")
    manage(env, "shell", "-c", WORLD)
    tokens = {}
    for name, role, scope in (("carl", "curator", ()), ("vera", "viewer", ()), ("bobby", "viewer", ("--users", "bob"))):
        manage(env, "oam_user", "add", name, "--role", role, "--password", f"{name}-password-123", *scope)
        out = manage(env, "oam_token", "create", name, "--name", f"{name}-agent", "--role", role)
        tokens[name] = out.strip().splitlines()[-1]
    port = free_port()
    server = subprocess.Popen(
        [PYTHON, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(tmp / "server.log", "w"),  # noqa: SIM115 - closed with the process
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            httpx.get(f"{url}/healthz", timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.2)
    try:
        yield {"url": url, "env": env, "tokens": tokens, "tmp": tmp}
    finally:
        server.terminate()
        server.wait(timeout=10)


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


async def session(site: dict[str, Any], who: str, calls: Any) -> Any:
    headers = {"Authorization": f"Bearer {site['tokens'][who]}"}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(f"{site['url']}/mcp/", http_client=http)) as client,
    ):
        return await calls(client)


def api(site: dict[str, Any], path: str, who: str = "carl") -> Any:
    response = httpx.get(f"{site['url']}/api/v1/{path}", headers={"Authorization": f"Bearer {site['tokens'][who]}"})
    response.raise_for_status()
    return response.json()


def memory_count(site: dict[str, Any]) -> int:
    return len(api(site, "memories/?limit=200")["results"])


def test_without_a_token_is_401_with_a_challenge_and_a_session_does_not_open_it(site):
    response = httpx.post(f"{site['url']}/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    wrong = httpx.post(f"{site['url']}/mcp/", json={}, headers={"Authorization": "Bearer oam_nope_nope"})
    assert wrong.status_code == 401 and "invalid_token" in wrong.headers["WWW-Authenticate"]

    with httpx.Client(base_url=site["url"]) as browser:  # a person signed in to the dashboard
        page = browser.get("/accounts/login/")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        signed_in = browser.post(
            "/accounts/login/",
            data={"username": "carl", "password": "carl-password-123", "csrfmiddlewaretoken": csrf},
            headers={"Referer": f"{site['url']}/accounts/login/"},
        )
        assert signed_in.status_code == 302 and "sessionid" in browser.cookies
        assert browser.get("/memories/").status_code == 200
        refused = browser.post("/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert refused.status_code == 401


def test_a_curator_token_lists_searches_adds_and_is_recorded_under_its_name(site):
    async def calls(client):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        found = await client.call_tool("search_memory", {"query": "window seat flights", "user_id": "alice"})
        added = await client.call_tool(
            "add_memory",
            {"content": "Alice books trains over planes in Europe.", "memory_type": "preference", "user_id": "alice"},
        )
        templates = await client.list_resource_templates()
        resource = await client.read_resource("oam://memories/alice-veg")
        thread = await client.read_resource("oam://threads/trip-lisbon")
        card = await client.call_tool("get_context_card", {"thread_id": "trip-lisbon", "max_recent_messages": 2})
        messages = await client.call_tool(
            "add_messages",
            {"thread_id": "trip-porto", "user_id": "alice", "messages": [{"role": "user", "content": "Porto next?"}]},
        )
        link = await client.call_tool(
            "link_memories",
            {"source_record_id": "alice-veg", "target_record_id": "alice-window", "relation_type": "supports"},
        )
        return tools, found, added, templates, resource, thread, card, messages, link

    tools, found, added, templates, resource, thread, card, messages, link = run(session(site, "carl", calls))
    assert set(tools) == READS | WRITES
    assert tools["add_memory"].input_schema["properties"]["content"]["type"] == "string"
    assert tools["add_memory"].input_schema["additionalProperties"] is False
    assert "memory_id" in tools["add_memory"].input_schema["properties"]
    assert tools["update_memory"].input_schema["required"][:2] == ["memory_id", "expected_version"]

    assert not found.is_error
    results = found.structured_content["results"]
    assert results[0]["id"] == "alice-window"
    assert results[0]["scores"] and "window seat" in results[0]["formatted_content"]
    assert all(result["user_id"] == "alice" for result in results)

    assert not added.is_error
    memory_id = added.structured_content["id"]
    stored = api(site, f"memories/{memory_id}/")
    assert stored["content"] == "Alice books trains over planes in Europe."

    activity = api(site, "activity/?limit=200")["results"]
    callers = {event.get("caller") for event in activity}
    assert "carl-agent" in callers
    history = api(site, f"history/?object_id={memory_id}")["results"]
    assert history and history[0]["via"] == "mcp" and history[0]["token_name"] == "carl-agent"

    assert {template.uri_template for template in templates.resource_templates} == {
        "oam://memories/{memory_id}",
        "oam://threads/{thread_id}",
    }
    assert json.loads(resource.contents[0].text)["content"] == "Alice is vegetarian."
    assert len(json.loads(thread.contents[0].text)["messages"]) == 2
    assert not card.is_error and "Principe Real" in card.structured_content["content"]
    assert not messages.is_error and messages.structured_content["thread_created"] is True
    assert not link.is_error and link.structured_content["relation_type"] == "supports"


def test_the_activity_page_shows_the_tokens_calls(site):
    with httpx.Client(base_url=site["url"]) as browser:
        page = browser.get("/accounts/login/")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        browser.post(
            "/accounts/login/",
            data={"username": "carl", "password": "carl-password-123", "csrfmiddlewaretoken": csrf},
            headers={"Referer": f"{site['url']}/accounts/login/"},
        )
        run(session(site, "carl", lambda client: client.call_tool("get_memory", {"memory_id": "alice-veg"})))
        assert "carl-agent" in browser.get("/activity/").text


def test_a_stale_update_is_refused_naming_the_current_version(site):
    async def calls(client):
        read = await client.call_tool("get_memory", {"memory_id": "bob-marathon"})
        version = read.structured_content["version"]
        fresh = await client.call_tool(
            "update_memory",
            {"memory_id": "bob-marathon", "expected_version": version, "content": "Bob runs two marathons a year."},
        )
        stale = await client.call_tool(
            "update_memory", {"memory_id": "bob-marathon", "expected_version": version, "content": "Bob stopped."}
        )
        missing = await client.call_tool("update_memory", {"memory_id": "bob-marathon", "content": "x"})
        gone = await client.call_tool("delete_memory", {"memory_id": "bob-marathon", "expected_version": version})
        return version, fresh, stale, missing, gone

    version, fresh, stale, missing, gone = run(session(site, "carl", calls))
    assert not fresh.is_error and fresh.structured_content["version"] == version + 1
    assert stale.is_error and f"version {version + 1}, not {version}" in stale.content[0].text
    assert missing.is_error and "expected_version" in missing.structured_content["errors"]
    assert gone.is_error  # stale too: nothing deleted
    assert api(site, "memories/bob-marathon/")["content"] == "Bob runs two marathons a year."


def test_a_viewer_token_gets_the_read_tools_only(site):
    async def calls(client):
        tools = {tool.name for tool in (await client.list_tools()).tools}
        refused = await client.call_tool("add_memory", {"content": "A viewer's note.", "user_id": "alice"})
        found = await client.call_tool("search_memory", {"query": "vegetarian", "user_id": "alice"})
        return tools, refused, found

    before = memory_count(site)
    tools, refused, found = run(session(site, "vera", calls))
    assert tools == READS
    assert refused.is_error and "may only read" in refused.content[0].text
    assert not found.is_error and found.structured_content["results"]
    assert memory_count(site) == before


def test_a_scoped_token_finds_nothing_outside_its_scope(site):
    async def calls(client):
        search = await client.call_tool("search_memory", {"query": "vegetarian window seat", "user_id": "alice"})
        listed = await client.call_tool("list_memories", {"limit": 100})
        outside = await client.call_tool("get_memory", {"memory_id": "alice-veg"})
        inside = await client.call_tool("get_memory", {"memory_id": "bob-peanuts"})
        card = await client.call_tool("get_context_card", {"thread_id": "trip-lisbon"})
        try:
            await client.read_resource("oam://memories/alice-veg")
            resource_refused = False
        except Exception:
            resource_refused = True
        return search, listed, outside, inside, card, resource_refused

    search, listed, outside, inside, card, resource_refused = run(session(site, "bobby", calls))
    assert search.is_error or not search.structured_content["results"]
    users = {record["user_id"] for record in listed.structured_content["results"]}
    assert users == {"bob"}
    assert outside.is_error and "alice-veg" in outside.content[0].text
    assert not inside.is_error
    assert card.is_error
    assert resource_refused


HOSTILE = [
    ("add_memory", {"content": 5}),
    ("add_memory", {"content": "x" * 1_000_001, "user_id": "alice"}),  # one past the API's limit
    ("add_memory", {"content": "ok", "user_id": "u" * 1_000_000}),
    ("search_memory", {"query": "q" * 1_000_000, "user_id": "alice"}),
    ("add_memory", {"content": "ok", "user_id": "alice", "surprise": True}),
    ("add_memory", {"content": "null\x00byte", "user_id": "alice"}),
    ("add_memory", {"content": "ok", "user_id": "a\x00lice"}),
    ("add_memory", {"content": "ok", "user_id": ["alice"]}),
    ("add_memory", {"content": "ok", "user_id": "alice", "ttl_days": "forever"}),
    ("search_memory", {"query": "x", "user_id": "alice", "metadata_filter": "nested"}),
    ("list_memories", {"limit": "many"}),
    ("list_memories", {"metadata_filter": "not an object"}),
    ("get_memory", {"memory_id": {"$gt": ""}}),
    ("update_memory", {"memory_id": "alice-veg", "expected_version": "1", "content": "hacked"}),
    ("delete_memory", {"memory_id": "alice-veg", "expected_version": -1}),
    ("link_memories", {"source_record_id": "alice-veg", "target_record_id": "alice-veg", "relation_type": "supports"}),
    ("add_messages", {"thread_id": "trip-lisbon", "messages": "hello"}),
    ("add_messages", {"thread_id": "trip-lisbon", "messages": [{"role": "user", "content": "x", "extra": 1}]}),
    ("no_such_tool", {}),
]


def deep(levels: int) -> dict:
    tree: dict = {"tags": "x"}
    for _ in range(levels):
        tree = {"$and": [tree]}
    return tree


def test_hostile_arguments_are_tool_errors_and_change_nothing(site):
    calls_made = [*HOSTILE, ("search_memory", {"query": "x", "user_id": "alice", "metadata_filter": deep(100)})]
    calls_made.append(("list_memories", {"metadata_filter": deep(100)}))

    async def calls(client):
        return [await client.call_tool(name, arguments) for name, arguments in calls_made]

    before = api(site, "memories/?limit=200")["results"]
    results = run(session(site, "carl", calls))
    for (name, arguments), result in zip(calls_made, results, strict=True):
        assert result.is_error, (name, str(arguments)[:200], result.content[0].text[:300])
        assert "failed on the server" not in result.content[0].text, (name, result.content[0].text)
    assert api(site, "memories/?limit=200")["results"] == before
    memory = results[0].structured_content
    assert memory["errors"]["content"]  # the field's message, as the API gives it


def test_the_python_example_of_the_docs_runs(site):
    text = (ROOT / "docs" / "mcp.md").read_text()
    example = re.search(r"<!-- python-example -->\s*```python\n(.*?)```", text, re.S).group(1)
    env = {**os.environ, "OAM_MCP_URL": f"{site['url']}/mcp/", "OAM_TOKEN": site["tokens"]["carl"]}
    done = subprocess.run([PYTHON, "-c", example], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "alice-window" in done.stdout


def test_the_stdio_server_does_the_same_round_trip(site):
    env = {**site["env"], "OAM_STORE_URL": f"sqlite:///{site['tmp'] / 'store.db'}"}

    async def main(*extra: str) -> Any:
        parameters = StdioServerParameters(
            command=PYTHON, args=["manage.py", "oam_mcp", "--caller", "stdio-agent", *extra], env=env, cwd=str(ROOT)
        )
        async with Client(parameters) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            found = await client.call_tool("search_memory", {"query": "peanuts allergy", "user_id": "bob"})
            added = await client.call_tool("add_memory", {"content": "Bob likes stdio.", "user_id": "bob"})
            hostile = await client.call_tool("add_memory", {"content": ["no"], "user_id": "bob"})
            return tools, found, added, hostile

    tools, found, added, hostile = run(main())
    assert tools == READS | WRITES
    assert found.structured_content["results"][0]["id"] == "bob-peanuts"
    assert not added.is_error and hostile.is_error
    history = api(site, f"history/?object_id={added.structured_content['id']}")["results"]
    assert history[0]["via"] == "mcp" and not history[0]["token_name"]
    assert "stdio-agent" in {event.get("caller") for event in api(site, "activity/?limit=200")["results"]}

    tools, found, added, hostile = run(main("--read-only"))
    assert tools == READS and added.is_error
