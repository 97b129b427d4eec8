"""What the writes of memory.curation share: comparing a record with the values asked for, the
check that a record is still at the version seen, and the words history summaries use."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory.engine import MEMORY_TYPES, ImageContent, Snapshot, StaleVersionError, TextContent
from memory.models import Action, CurationEntry, ObjectKind
from memory.text import plural

PROFILE_KINDS = {ObjectKind.USER: "user_id", ObjectKind.AGENT: "agent_id"}


@dataclass(frozen=True)
class StatusChange:
    """A memory whose effective status a change would turn from `before` to `after`."""

    memory: Any
    before: str
    after: str


def unchanged_since(record: Any, version: int) -> Any:
    """The record (a thread or a link too), if it is still at the version seen (StaleVersionError
    otherwise). It is the compare of a write that writes nothing: the record was read once, and
    that read both found nothing to change and is what is compared, so the answer holds at the
    moment of the read whatever other writers do after it."""
    if record.version != version:
        raise StaleVersionError(f"{getattr(record, 'record_type', 'relation')} {record.id!r}", version, record.version)
    return record


def expecting(version: int | None) -> dict[str, int]:
    """The engine's `expected_version` argument for a version seen (None: no check)."""
    return {} if version is None else {"expected_version": version}


def only_a_profile(entry: CurationEntry) -> bool:
    """Whether a creation or restore of a user or agent brought back their profile alone (then
    undoing it deletes the profile alone, not everything they own)."""
    if entry.action == Action.CREATE:
        return True
    restored = Snapshot.from_json(entry.after)
    return not restored.threads and all(record.record_type.endswith("_profile") for record in restored.records)


def differences(record: Any, fields: dict[str, Any]) -> dict[str, Any]:
    """The fields (curation arguments) whose value differs from the record's. A form's time,
    given to the second, is the stored one when they are the same second."""
    stored_names = {"memory_type": "record_type", "description": "content"}
    changes = {}
    for name, value in fields.items():
        stored = getattr(record, stored_names.get(name, name), None)
        if name == "timestamp" and (value is None or same_time(value, stored)):
            continue
        if value != stored:
            changes[name] = value
    return changes


def content_keeping_images(message: Any, text: str) -> Any:
    """New message content: the text alone, or, for a message with image parts, the text as its
    one text part in front of the same images (parts without bytes keep the stored image)."""
    images = [part for part in message.parts or () if part.get("type") == "image"]
    if not images:
        return text
    parts: list[Any] = [TextContent(text=text)] if text else []
    parts += [ImageContent(id=part["id"]) for part in images]
    return parts


def same_time(given: str, stored: str | None) -> bool:
    """Whether a time from a form is the stored one: forms show times to the second, so a stored
    time with microseconds comes back without them and must not be written over by them."""
    if stored is None:
        return False
    given_at, stored_at = datetime.fromisoformat(given), datetime.fromisoformat(stored)
    return given_at == stored_at or (given_at.microsecond == 0 and given_at == stored_at.replace(microsecond=0))


def summarized_through(settings: dict[str, Any] | None) -> int:
    """The seq_no of the last message a thread's summary covers (-1: none): the progress its
    settings keep (Thread.set_summary)."""
    return ((settings or {}).get("llm") or {}).get("summarized_through", -1)


def changed_fields(before: Any, after: Any) -> list[str]:
    """The names of what differs between two versions of a record, as a person would say them."""
    names = {
        "content": "content",
        "record_type": "type",
        "user_id": "user",
        "agent_id": "agent",
        "metadata": "metadata",
        "status": "status",
        "timestamp": "timestamp",
        "expires_at": "expiry",
        "role": "role",
    }
    return [label for name, label in names.items() if getattr(before, name, None) != getattr(after, name, None)]


def edited(noun: str, before: Any, after: Any) -> str:
    """ "Edited the fact's content and metadata": an update's summary in the history."""
    fields = changed_fields(before, after) or ["values"]
    listed = ", ".join(fields[:-1]) + " and " + fields[-1] if len(fields) > 1 else fields[0]
    return f"Edited the {noun}'s {listed}"


def describe_snapshot(snapshot: Snapshot) -> str:
    """ "12 messages, 3 memories, 1 image and 2 links": what a snapshot holds, for summaries."""
    counts: dict[str, int] = {}
    for record in snapshot.records:
        kind = "memory" if record.record_type in MEMORY_TYPES else record.record_type
        counts[kind] = counts.get(kind, 0) + 1
    parts = [
        plural(counts.get(kind, 0), noun)
        for kind, noun in (("message", "message"), ("memory", "memory"), ("image", "image"))
    ]
    parts.append(plural(len(snapshot.relations), "link"))
    if len(snapshot.threads) > 1:
        parts.insert(0, plural(len(snapshot.threads), "thread"))
    return ", ".join(parts[:-1]) + " and " + parts[-1]
