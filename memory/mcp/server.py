"""The SDK's low-level MCP server over memory.mcp.tools: it lists the tools and resource templates
the caller may use and calls them for the caller bound to the connection (`serving`).

Each tool runs in a worker thread (the engine and Django's ORM are synchronous, and Django refuses
the ORM on a thread that runs an event loop); that thread's database connections are closed when
the call ends. The caller travels in a context variable, which the SDK's tasks and anyio's worker
threads inherit.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import anyio.to_thread
import mcp_types as types
from django.db import connections
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS

from memory.mcp.tools import RESOURCES, Caller, ToolError, call, read_resource, tools_for

logger = logging.getLogger(__name__)

_caller: ContextVar[Caller | None] = ContextVar("oam_mcp_caller", default=None)

INSTRUCTIONS = (
    "OAM Dashboard's memory store: search it (search_memory, get_context_card), read it (list_memories, "
    "get_memory, the oam://memories/{memory_id} and oam://threads/{thread_id} resources) and, with a "
    "curator's token, write it (add_messages, add_memory, update_memory with the version read, "
    "delete_memory, link_memories). People see and correct every call in the dashboard."
)


@contextmanager
def serving(caller: Caller) -> Iterator[None]:
    """Calls made inside are this caller's."""
    token = _caller.set(caller)
    try:
        yield
    finally:
        _caller.reset(token)


def current_caller() -> Caller:
    caller = _caller.get()
    if caller is None:
        raise RuntimeError("an MCP request is served inside memory.mcp.server.serving(caller)")
    return caller


def in_worker(function: Any, *args: Any) -> Any:
    """`function(*args)` on this worker thread, its database connections closed after."""
    try:
        return function(*args)
    finally:
        connections.close_all()


def as_text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, default=str, indent=1)


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    caller = current_caller()
    chosen = tools_for(caller)
    schemas = await anyio.to_thread.run_sync(in_worker, lambda: [tool.schema() for tool in chosen])
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name=tool.name,
                description=tool.description,
                input_schema=schema,
                annotations=types.ToolAnnotations(read_only_hint=not tool.writes, destructive_hint=tool.writes),
            )
            for tool, schema in zip(chosen, schemas, strict=True)
        ]
    )


def error_result(error: ToolError) -> types.CallToolResult:
    lines = [str(error)] + [f"{name}: {message}" for name, messages in error.errors.items() for message in messages]
    return types.CallToolResult(
        content=[types.TextContent(type="text", text="\n".join(dict.fromkeys(lines)))],
        structured_content={"detail": str(error), "errors": error.errors},
        is_error=True,
    )


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    caller = current_caller()
    try:
        data = await anyio.to_thread.run_sync(in_worker, call, params.name, params.arguments, caller)
    except ToolError as error:
        return error_result(error)
    except Exception:  # never a crash nor a protocol error: the caller learns the call failed
        logger.exception("MCP tool %s failed", params.name)
        return error_result(ToolError(f"{params.name} failed on the server; the server's log says why."))
    return types.CallToolResult(content=[types.TextContent(type="text", text=as_text(data))], structured_content=data)


async def list_resource_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(
        resource_templates=[
            types.ResourceTemplate(name=name, uri_template=template, description=text, mime_type="application/json")
            for name, template, text in RESOURCES
        ]
    )


async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=[])


async def read(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    caller = current_caller()
    uri = str(params.uri)
    try:
        data = await anyio.to_thread.run_sync(in_worker, read_resource, uri, caller)
    except ToolError as error:
        # A resource has no error result: a JSON-RPC error (invalid params: the URI) says why.
        raise MCPError(INVALID_PARAMS, str(error), {"errors": error.errors}) from None
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=as_text(data))]
    )


def build_server() -> Server:
    return Server(
        "oam-dashboard",
        version="1",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read,
    )


SERVER = build_server()
