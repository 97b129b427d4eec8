"""The MCP tools and resources: what each takes, what it does, and who may call it.

Arguments are checked by the API's own request serializers (memory.api.serializers) and the
dashboard's filter forms (memory.web), so a tool takes what the matching API call takes, with the
same limits and the same messages, under the engine's names (`memory_id`, not the body's `id`).
Reads go through `get_agent_memory()` (the caller's scope, memory.web.scopes, applies as to any
request); writes through the curation service as the API's token writes do, so that the history
says who made them ("via mcp", the token's name) and the activity log records the call under the
token's name. Every refusal is a ToolError with its messages by field: the server answers it as
a tool error (isError), never as a crash.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django import forms
from rest_framework import serializers

from memory.api.serializers.common import BodySerializer, WholeNumberField, id_field
from memory.api.serializers.links import LinkCreateSerializer, LinkSerializer
from memory.api.serializers.memories import MemoryCreateSerializer, MemorySerializer, MemoryUpdateSerializer
from memory.api.serializers.messages import MessageBatchSerializer
from memory.api.serializers.search import SearchRequestSerializer
from memory.api.serializers.threads import ThreadCreateSerializer
from memory.curation import Actor, Curation
from memory.engine import (
    MAX_INT,
    OutsideVisibilityError,
    SearchResultFormatConfig,
    StaleVersionError,
    Visibility,
    acting_as,
    estimate_tokens,
    visible_as,
)
from memory.mcp import schemas
from memory.queries.search import searcher
from memory.services import get_agent_memory
from memory.web.engine_errors import NON_FIELD, field_errors, flatten
from memory.web.fields import search_arguments
from memory.web.filters import MemoryFilters
from memory.web.forms.search import ContextCardForm


@dataclass(frozen=True)
class Caller:
    """Who calls: the activity log's caller (a token's name, or oam_mcp's --caller), whether it may
    write, the person it acts for (a token's owner; None over stdio) and that person's scope."""

    name: str
    writes: bool
    user: Any = None
    scope: Visibility | None = None
    token_name: str = ""

    @contextmanager
    def bound(self) -> Iterator[None]:
        """The engine's view of this caller for one call: its scope (the request-bound restriction
        the API's tokens get) and its name in the activity log."""
        on_behalf_of = self.user.get_username() if self.user is not None else None
        with visible_as(self.scope), acting_as(self.name, caller_kind="agent", on_behalf_of=on_behalf_of):
            yield

    def curation(self) -> Curation:
        return Curation(get_agent_memory(), Actor(self.user, via="mcp", token_name=self.token_name))


class ToolError(Exception):
    """A call refused: its message, and its messages by argument."""

    def __init__(self, message: str, errors: dict[str, list[str]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or {}


def invalid(errors: dict[str, list[str]]) -> ToolError:
    first = next(iter(errors.values()))[0] if errors else "Invalid arguments."
    return ToolError(f"Invalid arguments: {first}", errors)


def not_found(what: str, record_id: Any) -> ToolError:
    return ToolError(f"No {what} with id {record_id!r}.", {f"{what.replace(' ', '_')}_id": ["Not found."]})


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    writes: bool
    schema: Callable[[], dict[str, Any]]
    run: Callable[[dict[str, Any], Caller], dict[str, Any]]


# Checking arguments -------------------------------------------------------------------------


def checked(serializer_class: type[serializers.Serializer], arguments: dict[str, Any], **renamed: str) -> dict:
    """The arguments as the API's serializer checks them (its body), or a ToolError with its
    messages by argument; `renamed`: engine name → body name (memory_id="id")."""
    back = {body: engine for engine, body in renamed.items()}
    data = {renamed.get(name, name): value for name, value in arguments.items()}
    serializer = serializer_class(data=data)
    if not serializer.is_valid():
        errors = flatten(serializer.errors)
        raise invalid(
            {_rename(name, back): [_named(m, renamed) for m in messages] for name, messages in errors.items()}
        )
    fields = dict(serializer.validated_data)
    return {back.get(name, name): value for name, value in fields.items()}


def _named(message: str, renamed: dict[str, str]) -> str:
    """A message that lists the body's fields ("the fields are content, id, …") with the tool's names."""
    head, found, names = message.partition("the fields are ")
    if not found:
        return message
    back = {body: engine for engine, body in renamed.items()}
    listed = [back.get(name, name) for name in names.rstrip(".").split(", ")]
    return f"{head}the fields are {', '.join(listed)}."


def _rename(name: str, back: dict[str, str]) -> str:
    head = name.split(".", 1)[0].split("[", 1)[0]
    return back.get(head, head) + name[len(head) :]


class IdArguments(BodySerializer):
    """A tool's record id and the version it was read at, checked as the API checks ids and numbers."""

    memory_id = id_field(required=False)
    thread_id = id_field(required=False)
    expected_version = WholeNumberField(required=False, min_value=1, max_value=MAX_INT)


def split(arguments: Any, names: tuple[str, ...], required: tuple[str, ...] = ()) -> tuple[dict, dict]:
    """(the id arguments, checked; the rest) of a tool's arguments."""
    if not isinstance(arguments, dict):
        raise invalid({NON_FIELD: ["The arguments are a JSON object."]})
    ids = {name: arguments[name] for name in names if name in arguments}
    rest = {name: value for name, value in arguments.items() if name not in names}
    missing = {name: ["This field is required."] for name in required if name not in ids}
    if missing:
        raise invalid(missing)
    return checked(IdArguments, ids), rest


def form_checked(form_class: type[forms.Form], arguments: dict[str, Any], schema: dict[str, Any]) -> forms.Form:
    """The arguments as the dashboard's filter form checks a query string: first their JSON types
    (the form reads text, and would take a list for a text), then the form's own rules."""
    properties = schema["properties"]
    errors: dict[str, list[str]] = {}
    data: dict[str, Any] = {}
    for name, value in arguments.items():
        spec = properties.get(name)
        if spec is None:
            errors[name] = [f"Unknown field; the fields are {', '.join(properties)}."]
            continue
        problem = type_problem(value, spec)
        if problem:
            errors[name] = [problem]
        elif spec.get("type") == "object":
            data[name] = json.dumps(value)
        elif value is not None:
            data[name] = value
    if errors:
        raise invalid(errors)
    form = form_class(data)
    if not form.is_valid():
        raise invalid({name: [str(message) for message in messages] for name, messages in form.errors.items()})
    return form


JSON_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "object": dict, "array": list}


def type_problem(value: Any, spec: dict[str, Any]) -> str:
    kinds = spec.get("type")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
    if value is None:
        return "" if "null" in kinds or not kinds else "This field may not be null."
    for kind in kinds:
        expected = JSON_TYPES.get(kind)
        if expected is None or (isinstance(value, expected) and not (kind != "boolean" and isinstance(value, bool))):
            if kind == "array":
                problems = [type_problem(item, spec.get("items", {})) for item in value]
                return next((problem for problem in problems if problem), "")
            return ""
    return f"Give a {' or '.join(kinds)}, not a {type(value).__name__}."


def engine_refusal(error: ValueError, names: Any) -> ToolError:
    """The engine's ValueError as a refusal under the argument it names."""
    field, message = field_errors(error, names)
    return ToolError(message, {field or NON_FIELD: [message]})


# Answers ------------------------------------------------------------------------------------


def memory_data(record: Any) -> dict[str, Any]:
    data = dict(MemorySerializer(record).data)
    data["memory_id"] = data.get("id")
    return data


def search_result(result: Any, config: SearchResultFormatConfig) -> dict[str, Any]:
    text = result.format_content(config)
    return {
        "id": result.id,
        "record_type": result.record.record_type,
        "content": result.record.content,
        "user_id": getattr(result.record, "user_id", None),
        "agent_id": getattr(result.record, "agent_id", None),
        "thread_id": getattr(result.record, "thread_id", None),
        "version": result.record.version,
        "distance": result.distance,
        "scores": result.scores,
        "formatted_content": text,
        "tokens": estimate_tokens(text),
    }


# The tools ----------------------------------------------------------------------------------


def search_memory(arguments: dict[str, Any], caller: Caller) -> dict[str, Any]:
    given = checked(SearchRequestSerializer, arguments)
    agent_memory = get_agent_memory()
    try:
        search, call = searcher(agent_memory, given)
        results = search(given["query"], **search_arguments(given))
    except ValueError as error:
        raise engine_refusal(error, SearchRequestSerializer().fields) from None
    config = SearchResultFormatConfig(**given.get("format_config", {}))
    found = [search_result(result, config) for result in results]
    return {"results": found, "call": call, "total_tokens": sum(item["tokens"] for item in found)}


def get_context_card(arguments: dict[str, Any], caller: Caller) -> dict[str, Any]:
    ids, rest = split(arguments, ("thread_id",), required=("thread_id",))
    thread_id = ids["thread_id"]
    form = form_checked(ContextCardForm, rest, card_schema())
    agent_memory = get_agent_memory()
    try:
        thread = agent_memory.get_thread(thread_id)
    except KeyError:
        raise not_found("thread", thread_id) from None
    card_arguments = form.card_arguments()
    try:
        card = thread.get_context_card(**card_arguments, refresh_summary_if_due=False)
    except KeyError:
        message = "No such message in this thread."
        raise ToolError(message, {"as_of_message_id": [message]}) from None
    except ValueError as error:
        raise engine_refusal(error, form.fields) from None
    return {
        "thread_id": thread_id,
        "content": card.content,
        "tokens": estimate_tokens(card.content),
        "relevant_results": [
            {"id": result.id, "record_type": result.record.record_type, "distance": result.distance}
            for result in card.results
        ],
    }


def add_messages(arguments: dict[str, Any], caller: Caller) -> dict[str, Any]:
    ids, rest = split(arguments, ("thread_id",), required=("thread_id",))
    thread_id = ids["thread_id"]
    scope = {name: rest.pop(name) for name in ("user_id", "agent_id", "metadata") if name in rest}
    batch = checked(MessageBatchSerializer, rest)["messages"]
    thread_fields = checked(ThreadCreateSerializer, scope)
    agent_memory = get_agent_memory()
    service = caller.curation()
    created = False
    try:
        agent_memory.get_thread_record(thread_id)
    except KeyError:  # a new thread, as an agent's first message makes one
        service.create_thread(thread_id=thread_id, **thread_fields)
        created = True
    try:
        entries = service.add_messages(thread_id, [dict(item) for item in batch])
    except ValueError as error:
        raise ToolError(str(error), {"messages": [str(error)]}) from None
    return {"thread_id": thread_id, "thread_created": created, "message_ids": [entry.object_id for entry in entries]}


def add_memory(arguments: dict[str, Any], caller: Caller) -> dict[str, Any]:
    fields = checked(MemoryCreateSerializer, arguments, memory_id="id")
    entry = caller.curation().create_memory(**fields)
    return memory_data(get_agent_memory().get_memory(entry.object_id))


def current(memory_id: str) -> Any:
    try:
        return get_agent_memory().get_memory(memory_id)
    except KeyError:
        raise not_found("memory", memory_id) from None


def stale(memory_id: str, expected: int, actual: int) -> ToolError:
    message = f"memory {memory_id} is at version {actual}, not {expected}: read it again (get_memory)."
    return ToolError(message, {"expected_version": [message]})


def update_memory(arguments: dict[str, Any], caller: Caller) -> dict[str, Any]:
    ids, rest = split(arguments, ("memory_id", "expected_version"), required=("memory_id", "expected_version"))
    fields = checked(MemoryUpdateSerializer, rest)
    record = current(ids["memory_id"])
    if record.version != ids["expected_version"]:
        raise stale(record.id, ids["expected_version"], record.version)
    caller.curation().update_memory(record.id, version=ids["expected_version"], **fields)
    return memory_data(current(record.id))


def delete_memory(arguments: dict[str, Any], caller: Caller) -> dict[str, Any]:
    ids, rest = split(arguments, ("memory_id", "expected_version"), required=("memory_id", "expected_version"))
    if rest:
        raise invalid({name: ["Unknown field; the fields are memory_id, expected_version."] for name in rest})
    record = current(ids["memory_id"])
    if record.version != ids["expected_version"]:
        raise stale(record.id, ids["expected_version"], record.version)
    caller.curation().delete_memory(record.id, version=ids["expected_version"])
    return {"deleted": record.id}


def link_memories(arguments: dict[str, Any], caller: Caller) -> dict[str, Any]:
    fields = checked(LinkCreateSerializer, arguments)
    fields["opposite_relation_type"] = fields.get("opposite_relation_type") or None
    entry = caller.curation().create_link(**fields)
    return dict(LinkSerializer(get_agent_memory().get_relation(entry.object_id)).data)


def list_memories(arguments: dict[str, Any], caller: Caller) -> dict[str, Any]:
    if not isinstance(arguments, dict):
        raise invalid({NON_FIELD: ["The arguments are a JSON object."]})
    form = form_checked(MemoryFilters, arguments, list_schema())
    page = get_agent_memory().list_memories(**form.engine_arguments())
    return {"results": [memory_data(record) for record in page], "next_cursor": page.next_cursor}


def get_memory(arguments: dict[str, Any], caller: Caller) -> dict[str, Any]:
    ids, rest = split(arguments, ("memory_id",), required=("memory_id",))
    if rest:
        raise invalid({name: ["Unknown field; the fields are memory_id."] for name in rest})
    return memory_data(current(ids["memory_id"]))


# Schemas ------------------------------------------------------------------------------------

MEMORY_ID = {"type": "string", "minLength": 1, "maxLength": 512, "description": "The memory's id."}
THREAD_ID = {"type": "string", "minLength": 1, "maxLength": 512, "description": "The thread's id."}
EXPECTED_VERSION = {
    "type": "integer",
    "minimum": 1,
    "maximum": MAX_INT,
    "description": "The memory's version when it was read (get_memory, list_memories, search_memory): "
    "the write is refused if it has changed since.",
}


def card_schema() -> dict[str, Any]:
    query = schemas.query(
        "/api/v1/threads/{thread_id}/card/", objects=("metadata_filter", "min_relevant_results_by_type")
    )
    return schemas.with_properties(query, {"thread_id": THREAD_ID}, ("thread_id",))


def list_schema() -> dict[str, Any]:
    return schemas.query("/api/v1/memories/", objects=("metadata_filter",))


def messages_schema() -> dict[str, Any]:
    thread = schemas.body("ThreadCreateRequest")["properties"]
    scope = {
        name: {**thread[name], "description": f"{name}: for a new thread only."} for name in ("user_id", "agent_id")
    }
    scope["metadata"] = {**thread["metadata"], "description": "The new thread's metadata (a new thread only)."}
    return schemas.with_properties(
        schemas.body("MessageBatchRequest"), {"thread_id": THREAD_ID, **scope}, ("thread_id",)
    )


TOOLS = (
    Tool(
        "search_memory",
        "Search the memory store (AgentMemory.search; Thread.search with layer=thread) with the engine's "
        "parameters: query, user_id (required for a client search; null: records without a user), agent_id, "
        "thread_id, exact_*_match, record_types, metadata_filter, max_results, token_budget, num_hops, "
        "strategy. Each result has its id, version, distance, scores and the formatted text an agent reads.",
        False,
        lambda: schemas.body("SearchRequest"),
        search_memory,
    ),
    Tool(
        "get_context_card",
        "A thread's context card (Thread.get_context_card): its summary, relevant memories and recent "
        "messages within the budgets given, as the text an agent puts in its prompt.",
        False,
        card_schema,
        get_context_card,
    ),
    Tool(
        "list_memories",
        "Memories, newest first, filtered as in the dashboard's memory browser (q, memory_type, status, "
        "user_id, agent_id, thread_id, metadata_filter), a page of `limit` at a time: pass next_cursor "
        "as `cursor` for the next page.",
        False,
        list_schema,
        list_memories,
    ),
    Tool(
        "get_memory",
        "One memory by id, with its version (give it as expected_version to update_memory or delete_memory).",
        False,
        lambda: schemas.with_properties({}, {"memory_id": MEMORY_ID}, ("memory_id",)),
        get_memory,
    ),
    Tool(
        "add_messages",
        "Append messages ({role, content}) to a thread as its agent (Thread.add_messages); a thread that "
        "does not exist is created (with user_id and agent_id, if given). The thread's memory extraction "
        "and summary follow as for the agent.",
        True,
        messages_schema,
        add_messages,
    ),
    Tool(
        "add_memory",
        "Store a memory (fact, preference, guideline or memory) for a user, agent and/or thread.",
        True,
        lambda: schemas.body("MemoryCreateRequest", rename={"id": "memory_id"}),
        add_memory,
    ),
    Tool(
        "update_memory",
        "Change a memory's fields (content re-embedded). expected_version is required: the version it "
        "was read at; a memory changed since is refused, naming its current version.",
        True,
        lambda: schemas.with_properties(
            schemas.body("PatchedMemoryUpdateRequest"),
            {"memory_id": MEMORY_ID, "expected_version": EXPECTED_VERSION},
            ("memory_id", "expected_version"),
        ),
        update_memory,
    ),
    Tool(
        "delete_memory",
        "Delete a memory and its links (the history keeps a snapshot to restore them), if it is still "
        "at expected_version.",
        True,
        lambda: schemas.with_properties(
            {}, {"memory_id": MEMORY_ID, "expected_version": EXPECTED_VERSION}, ("memory_id", "expected_version")
        ),
        delete_memory,
    ),
    Tool(
        "link_memories",
        "Link two memories, source to target, with a relation type (AgentMemory.link_records): "
        "supersedes, refines or duplicates retire the target; supports, contradicts or your own type.",
        True,
        lambda: schemas.body("LinkCreateRequest"),
        link_memories,
    ),
)
BY_NAME = {tool.name: tool for tool in TOOLS}


def tools_for(caller: Caller) -> list[Tool]:
    """The tools this caller may call: the read tools only for a viewer's token or --read-only."""
    return [tool for tool in TOOLS if caller.writes or not tool.writes]


def call(name: str, arguments: Any, caller: Caller) -> dict[str, Any]:
    """Run a tool for the caller (in the caller's scope, recorded under its name): its answer, or a
    ToolError."""
    tool = BY_NAME.get(name)
    if tool is None or tool not in tools_for(caller):
        if tool is not None:
            raise ToolError(f"{name} writes, and this caller may only read (a viewer's token, or --read-only).")
        raise ToolError(f"No tool named {name!r}; the tools are {', '.join(t.name for t in tools_for(caller))}.")
    arguments = {} if arguments is None else arguments
    if not isinstance(arguments, dict):
        raise invalid({NON_FIELD: ["The arguments are a JSON object."]})
    with caller.bound():
        try:
            return tool.run(arguments, caller)
        except ToolError:
            raise
        except StaleVersionError as error:
            raise ToolError(str(error), {"expected_version": [str(error)]}) from None
        except OutsideVisibilityError as error:
            raise ToolError(str(error)) from None
        except KeyError as error:
            message = error.args[0] if error.args else "Not found."
            raise ToolError(str(message)) from None
        except ValueError as error:
            raise engine_refusal(error, tool.schema()["properties"]) from None


# Resources ----------------------------------------------------------------------------------

RESOURCES = (
    ("memory", "oam://memories/{memory_id}", "A memory, with its id, version, scope and metadata (JSON)."),
    ("thread", "oam://threads/{thread_id}", "A thread: its scope, summary and its latest 50 messages (JSON)."),
)


def read_resource(uri: str, caller: Caller) -> dict[str, Any]:
    """A memory or a thread by URI, read as the caller (its scope applies)."""
    kind, _, record_id = uri.removeprefix("oam://").partition("/")
    if not uri.startswith("oam://") or kind not in ("memories", "threads") or not record_id:
        raise ToolError(f"Unknown resource {uri!r}: oam://memories/<memory_id> or oam://threads/<thread_id>.")
    with caller.bound():
        if kind == "memories":
            split({"memory_id": record_id}, ("memory_id",))
            return get_memory({"memory_id": record_id}, caller)
        split({"thread_id": record_id}, ("thread_id",))
        agent_memory = get_agent_memory()
        try:
            thread = agent_memory.get_thread_record(record_id)
        except KeyError:
            raise not_found("thread", record_id) from None
        messages = agent_memory.list_thread_messages_by_seq_no(record_id, last_n=50)
        return {
            "thread_id": record_id,
            "user_id": thread.user_id,
            "agent_id": thread.agent_id,
            "metadata": thread.metadata,
            "summary": getattr(thread, "summary", None),
            "version": thread.version,
            "messages": [
                {"id": m.id, "seq_no": m.seq_no, "role": m.role, "content": m.content, "timestamp": str(m.timestamp)}
                for m in messages
            ],
        }
