"""The engine's ValueErrors as errors on the field they name, for the dashboard's forms and the
API's 400 bodies alike: the engine names the argument it refuses at the start of its messages, and
both front doors put the message on the field of that name (or on the form as a whole); and a
serializer's nested errors flattened by field, as the API's 400s and the MCP tools' errors give them.
"""

from __future__ import annotations

import re
from typing import Any

ENGINE_ARGUMENTS = {
    "text": "content",
    "contents": "content",
    "user_ids": "user_id",
    "agent_ids": "agent_id",
    "thread_ids": "thread_id",
    "roles": "role",
    "timestamps": "timestamp",
    "relation_types": "relation_type",
    "memory_types": "memory_type",
    "statuses": "status",
    "record_ids": "id",
}
"""Engine argument names that differ from the form field they come from (the store's batch names)."""


def field_errors(error: ValueError, fields: Any) -> tuple[str | None, str]:
    """The form field an engine ValueError names ("metadata must be a dict…"), and its message.

    The engine names the argument at the start of its messages (a batch argument with its index,
    "contents[0] has…"), or, for a call's requirement, after it ("AgentMemory.search requires
    user_id"); an argument that is no field of the form (or no argument at all) gives None: the
    error belongs to the form as a whole.
    """
    message = str(error)
    match = re.match(r"(?:the )?([a-z_]+)(?:\[\d+\])?\b", message)
    if match:
        name = ENGINE_ARGUMENTS.get(match.group(1), match.group(1))
        if name in fields:  # said with the field's name, not the engine's ("user_ids[0] is…")
            return name, name + message[match.end() :]
    required = re.search(r"\brequires ([a-z_]+)\b", message)
    if required and required.group(1) in fields:
        return required.group(1), message
    return None, message


NON_FIELD = "non_field_errors"
"""Where a message about a body or a call's arguments as a whole goes (DRF's name for it)."""


def flatten(detail: Any) -> dict[str, list[str]]:
    """DRF's nested validation detail as {field: [messages]} (nested fields as `parent.child`, the
    items of a list as `parent[index]`: DRF gives a list serializer's errors by index)."""
    if isinstance(detail, list):
        return {NON_FIELD: [str(item) for item in detail]}
    errors: dict[str, list[str]] = {}
    for name, value in detail.items():
        key = f"[{name}]" if isinstance(name, int) else str(name)
        if isinstance(value, dict):
            for inner, messages in flatten(value).items():
                errors[key + inner if inner.startswith("[") else f"{key}.{inner}"] = messages
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for index, item in enumerate(value):
                errors.update({f"{key}[{index}].{inner}": messages for inner, messages in flatten(item).items()})
        else:
            errors[key] = [str(item) for item in (value if isinstance(value, list) else [value])]
    return errors
