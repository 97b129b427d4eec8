"""The tools' input schemas, taken from the API's OpenAPI document (drf-spectacular's, built once
per process): a body's component or an operation's query parameters, as plain JSON Schema
(references inlined, OpenAPI's `nullable` as a "null" type), so that a tool states exactly the
limits that the API's serializers and forms then enforce on its arguments."""

from __future__ import annotations

import copy
import functools
import threading
from typing import Any

_lock = threading.Lock()


@functools.cache
def _document() -> dict[str, Any]:
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


def document() -> dict[str, Any]:
    with _lock:  # built once; two first calls at once wait for the same one
        return _document()


def _plain(node: Any, components: dict[str, Any], depth: int = 0) -> Any:
    if depth > 20:
        raise ValueError("the API's schema nests deeper than a tool's input schema may")
    if isinstance(node, list):
        return [_plain(item, components, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return _plain(components[name], components, depth + 1)
    node = {key: _plain(value, components, depth + 1) for key, value in node.items() if key not in ("readOnly",)}
    if len(node.get("allOf", ())) == 1:  # drf-spectacular's way of describing a referenced enum
        [inner] = node.pop("allOf")
        node = {**inner, **node}
    if node.pop("nullable", False):
        if "enum" in node:
            node["enum"] = [*node["enum"], None]
        if isinstance(node.get("type"), str):
            node["type"] = [node["type"], "null"]
        elif "type" not in node and "enum" not in node:
            node = {"anyOf": [node, {"type": "null"}]}
    return node


def body(component: str, *, rename: dict[str, str] | None = None) -> dict[str, Any]:
    """The request body `component` (e.g. "MemoryCreateRequest") as an object schema; `rename`
    gives some properties the engine's names (the body's `id` is `memory_id`)."""
    doc = document()
    components = doc["components"]["schemas"]
    schema = copy.deepcopy(_plain(components[component], components))
    for old, new in (rename or {}).items():
        if old in schema.get("properties", {}):
            schema["properties"][new] = schema["properties"].pop(old)
            schema["required"] = [new if name == old else name for name in schema.get("required", [])]
    schema.setdefault("required", [])
    schema["additionalProperties"] = False
    return schema


def query(path: str, method: str = "get", *, objects: tuple[str, ...] = ()) -> dict[str, Any]:
    """An operation's query parameters as an object schema (a repeatable one: an array); those
    in `objects` (JSON text in a query string: metadata_filter) taken as JSON objects."""
    doc = document()
    components = doc["components"]["schemas"]
    operation = doc["paths"][path][method]
    properties: dict[str, Any] = {}
    required = []
    for parameter in operation.get("parameters", ()):
        if parameter.get("in") != "query":
            continue
        name = parameter["name"]
        schema = _plain(parameter.get("schema", {}), components)
        if name in objects:
            schema = {"type": "object"}
        if parameter.get("description"):
            schema = {**schema, "description": parameter["description"]}
        properties[name] = schema
        if parameter.get("required"):
            required.append(name)
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def with_properties(schema: dict[str, Any], properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict:
    """`schema` with these properties first (a path's id, expected_version), required as said."""
    merged = dict(schema)
    merged["properties"] = {**properties, **schema.get("properties", {})}
    merged["required"] = [*required, *(name for name in schema.get("required", []) if name not in required)]
    merged["additionalProperties"] = False
    merged["type"] = "object"
    return merged
