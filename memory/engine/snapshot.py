"""Snapshots of records, threads and links, and their JSON form: the dashboard's undo of deletes,
and the export/import format.

`MemoryStore.snapshot(...)` reads everything a delete would remove (MemoryStore.snapshot) and
`MemoryStore.restore(snapshot)` writes it back with the same ids, links and times. A snapshot is
plain data: `Snapshot.to_json()` gives JSON types only (image bytes in base64, a "format" key),
`Snapshot.from_json()` reads it back, refusing a malformed document with a ValueError that says
where it is wrong. `record_to_json`/`record_from_json` (and the same for threads and relations)
convert one value, e.g. to keep the before and after of an edit.

A record's reads derive some values from what is stored: its status is the effective one (D2),
its timestamp falls back to its creation time, and its index text is not shown. A snapshot keeps
what is stored in `Snapshot.stored`, by (record_type, id): "status" (the explicit flag), "event_at"
(the event time, or None) and "index_text", so that a restore is exact; in JSON it is each
record's "stored" object.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any

from .graph import check_label
from .limits import check_id, check_id_text, check_length, dump_metadata
from .scope import check_scope_value
from .ttl import normalize_timestamp
from .types import (
    AGENT_PROFILE_TYPE,
    IMAGE_TYPE,
    MEMORY_TYPES,
    MESSAGE_TYPE,
    SEARCHABLE_TYPES,
    USER_PROFILE_TYPE,
    AgentProfileRecord,
    ImageMimeType,
    ImageRecord,
    MemoryRecord,
    MessageRecord,
    Record,
    RecordRelation,
    RecordStatus,
    ThreadRecord,
    UserProfileRecord,
)

SNAPSHOT_FORMAT = 1
"""The version of the JSON document; from_json refuses others."""

_RECORD_CLASSES: dict[str, type[Record]] = {
    MESSAGE_TYPE: MessageRecord,
    IMAGE_TYPE: ImageRecord,
    USER_PROFILE_TYPE: UserProfileRecord,
    AGENT_PROFILE_TYPE: AgentProfileRecord,
    **dict.fromkeys(MEMORY_TYPES, MemoryRecord),
}
_STORED_KEYS = ("status", "event_at", "index_text")


@dataclass
class Snapshot:
    """Threads, records (images with their bytes) and relations, as stored; `stored` holds, per
    (record_type, id), what reads derive values from (see the module docstring)."""

    threads: list[ThreadRecord] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    relations: list[RecordRelation] = field(default_factory=list)
    stored: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The snapshot as JSON types only (image bytes in base64), with a "format" version."""
        return {
            "format": SNAPSHOT_FORMAT,
            "threads": [thread_to_json(thread) for thread in self.threads],
            "records": [self.record_json(record) for record in self.records],
            "relations": [relation_to_json(relation) for relation in self.relations],
        }

    def record_json(self, record: Record) -> dict[str, Any]:
        """One record of to_json's "records": its fields, and what is stored of it under "stored"."""
        data = record_to_json(record)
        stored = self.stored.get((record.record_type, record.id))
        if stored is not None:
            data["stored"] = {key: stored.get(key) for key in _STORED_KEYS}
        return data

    def add_record_json(self, item: Any, where: str) -> None:
        """Append one record of from_json's "records" (with its "stored" object, if any)."""
        record, stored = record_and_stored_from_json(item, where)
        self.add_record(record, stored)

    def add_record(self, record: Record, stored: dict[str, Any] | None) -> None:
        """Append a record, with what is stored of it (None: what its fields tell)."""
        if stored is not None:
            self.stored[(record.record_type, record.id)] = stored
        self.records.append(record)

    @classmethod
    def from_json(cls, data: Any) -> Snapshot:
        """A snapshot from its JSON form; ValueError naming what is wrong in a malformed document."""
        _check_keys(data, "snapshot", required=("format", "threads", "records", "relations"), optional=())
        if type(data["format"]) is not int or data["format"] != SNAPSHOT_FORMAT:
            raise ValueError(f"snapshot.format must be {SNAPSHOT_FORMAT}, not {data['format']!r}")
        for key in ("threads", "records", "relations"):
            if not isinstance(data[key], list):
                raise ValueError(f"snapshot.{key} must be a list, not {type(data[key]).__name__}")
        snapshot = cls(
            threads=[thread_from_json(item, f"threads[{i}]") for i, item in enumerate(data["threads"])],
            relations=[relation_from_json(item, f"relations[{i}]") for i, item in enumerate(data["relations"])],
        )
        for i, item in enumerate(data["records"]):
            snapshot.add_record_json(item, f"records[{i}]")
        return snapshot


# --- records, threads and relations ----------------------------------------------------------------


def _to_json(value: Any) -> dict[str, Any]:
    """A dataclass's fields as JSON types: enums by value, bytes in base64, linked results left out."""
    data: dict[str, Any] = {}
    for item in fields(value):
        if item.name == "linked_results":
            continue
        field_value = getattr(value, item.name)
        if isinstance(field_value, Enum):
            field_value = field_value.value
        elif isinstance(field_value, bytes):
            field_value = base64.b64encode(field_value).decode("ascii")
        data[item.name] = field_value
    return data


def _from_json(cls: type, data: Any, where: str, required: tuple[str, ...]) -> Any:
    names = [item.name for item in fields(cls) if item.name != "linked_results"]
    _check_keys(data, where, required=required, optional=[name for name in names if name not in required])
    return cls(**{name: _field(name, data[name], f"{where}.{name}") for name in names if name in data})


def record_to_json(record: Record) -> dict[str, Any]:
    """A record's fields as JSON types (linked results left out, image bytes in base64)."""
    if not isinstance(record, Record) or isinstance(record, ThreadRecord):
        raise ValueError(f"record_to_json takes a record, not {type(record).__name__}")
    return _to_json(record)


def record_from_json(data: Any, where: str = "record") -> Record:
    """The record of record_to_json's output; ValueError naming the bad field."""
    record_type = data.get("record_type") if isinstance(data, Mapping) else None
    if not isinstance(record_type, str) or record_type not in SEARCHABLE_TYPES:
        if not isinstance(data, Mapping):
            raise ValueError(f"{where} must be an object, not {type(data).__name__}")
        raise ValueError(f"{where}.record_type must be one of {', '.join(SEARCHABLE_TYPES)}, not {record_type!r}")
    return _from_json(_RECORD_CLASSES[record_type], data, where, ("id", "record_type"))


def record_and_stored_from_json(item: Any, where: str = "record") -> tuple[Record, dict[str, Any] | None]:
    """One record of to_json's "records" and its "stored" object (None when it has none)."""
    stored = None
    if isinstance(item, Mapping) and "stored" in item:
        item = dict(item)
        stored = _stored_from_json(item.pop("stored"), f"{where}.stored")
    return record_from_json(item, where), stored


def thread_to_json(thread: ThreadRecord) -> dict[str, Any]:
    """A thread's fields as JSON types."""
    if not isinstance(thread, ThreadRecord):
        raise ValueError(f"thread_to_json takes a ThreadRecord, not {type(thread).__name__}")
    return _to_json(thread)


def thread_from_json(data: Any, where: str = "thread") -> ThreadRecord:
    """The thread of thread_to_json's output; ValueError naming the bad field."""
    thread = _from_json(ThreadRecord, data, where, ("id",))
    if thread.record_type != "thread":
        raise ValueError(f"{where}.record_type must be 'thread', not {thread.record_type!r}")
    return thread


def relation_to_json(relation: RecordRelation) -> dict[str, Any]:
    """A relation's fields as JSON types."""
    if not isinstance(relation, RecordRelation):
        raise ValueError(f"relation_to_json takes a RecordRelation, not {type(relation).__name__}")
    return _to_json(relation)


_RELATION_REQUIRED = (
    "id",
    "source_record_id",
    "source_record_type",
    "target_record_id",
    "target_record_type",
    "relation_type",
    "opposite_relation_type",
)


def relation_from_json(data: Any, where: str = "relation") -> RecordRelation:
    """The relation of relation_to_json's output; ValueError naming the bad field."""
    relation = _from_json(RecordRelation, data, where, _RELATION_REQUIRED)
    for end in ("source_record_type", "target_record_type"):
        if getattr(relation, end) not in MEMORY_TYPES:
            raise ValueError(f"{where}.{end} must be one of {', '.join(MEMORY_TYPES)}, not {getattr(relation, end)!r}")
    return relation


def _stored_from_json(data: Any, where: str) -> dict[str, Any]:
    _check_keys(data, where, required=_STORED_KEYS, optional=())
    return {
        "status": _enum(RecordStatus, data["status"], f"{where}.status"),
        "event_at": _time(data["event_at"], f"{where}.event_at"),
        "index_text": _text(data["index_text"], f"{where}.index_text", optional=True),
    }


# --- field checks --------------------------------------------------------------------------------

_IDS = frozenset(
    {
        "id",
        "record_type",
        "source_record_id",
        "source_record_type",
        "target_record_id",
        "target_record_type",
        "relation_type",
        "opposite_relation_type",
    }
)
_OPTIONAL_IDS = frozenset({"thread_id", "user_id", "agent_id", "message_id"})
_TEXTS = frozenset({"content"})
_OPTIONAL_TEXTS = frozenset({"summary", "role"})
_TIMES = frozenset({"timestamp", "created_at", "expires_at", "updated_at"})
_DICTS = frozenset({"metadata"})


def _field(name: str, value: Any, where: str) -> Any:
    if name in _IDS:
        return _text(value, where, optional=False, non_empty=True)
    if name in _OPTIONAL_IDS:
        return _text(value, where, optional=True, non_empty=True)
    if name in _TEXTS:
        return _text(value, where, optional=False)
    if name in _OPTIONAL_TEXTS:
        return _text(value, where, optional=True)
    if name in _TIMES:
        return _time(value, where)
    if name in _DICTS:
        if value is not None and not isinstance(value, dict):
            raise ValueError(f"{where} must be an object or null, not {type(value).__name__}")
        return value
    if name == "settings":
        if not isinstance(value, dict):
            raise ValueError(f"{where} must be an object, not {type(value).__name__}")
        return value
    if name == "status":
        return _enum(RecordStatus, value, where)
    if name == "mime_type":
        return None if value is None else _enum(ImageMimeType, value, where)
    if name in ("version", "message_count", "seq_no"):
        if value is None and name == "seq_no":
            return None
        low = 1 if name == "version" else 0
        if type(value) is not int or not low <= value < 2**63:
            raise ValueError(f"{where} must be an integer from {low} up, not {value!r}")
        return value
    if name == "bytes":
        if value is None:
            return None
        if not isinstance(value, str):
            raise ValueError(f"{where} must be base64 text or null, not {type(value).__name__}")
        try:
            return base64.b64decode(value.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError):
            raise ValueError(f"{where} is not valid base64") from None
    if name == "parts":
        if value is not None and (not isinstance(value, list) or not all(isinstance(p, dict) for p in value)):
            raise ValueError(f"{where} must be a list of objects or null")
        return value
    if name == "topics":
        if value is not None and (not isinstance(value, list) or not all(isinstance(t, str) for t in value)):
            raise ValueError(f"{where} must be a list of strings or null")
        return value
    raise AssertionError(f"no check for {where}")  # every field of the dataclasses has one above


def _check_keys(data: Any, where: str, *, required: Any, optional: Any) -> None:
    if not isinstance(data, Mapping):
        raise ValueError(f"{where} must be an object, not {type(data).__name__}")
    missing = [key for key in required if key not in data]
    if missing:
        raise ValueError(f"{where} lacks {', '.join(missing)}")
    unknown = sorted(str(key) for key in data if key not in required and key not in optional)
    if unknown:
        raise ValueError(f"{where} has unknown keys {unknown}")


def _text(value: Any, where: str, *, optional: bool, non_empty: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or (non_empty and not value):
        kind = "a non-empty string" if non_empty else "a string"
        raise ValueError(f"{where} must be {kind}{' or null' if optional else ''}, not {value!r}")
    return value


def _time(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{where} must be an ISO-8601 time or null, not {type(value).__name__}")
    normalized = normalize_timestamp(value, where)
    if normalized != value:
        raise ValueError(f"{where} must be canonical UTC text ({normalized}), not {value!r}")
    return value


def _enum(enum: Any, value: Any, where: str) -> Any:
    try:
        return enum(value)
    except (ValueError, TypeError):
        raise ValueError(f"{where} must be one of {', '.join(repr(m.value) for m in enum)}, not {value!r}") from None


# --- restoring -------------------------------------------------------------------------------------


@dataclass
class RestorePlan:
    """A snapshot checked for a restore: its values within the engine's limits, no id twice."""

    threads: list[ThreadRecord]
    records: list[Record]
    relations: list[RecordRelation]
    stored: dict[tuple[str, str], dict[str, Any]]

    def stored_of(self, record: Record) -> dict[str, Any]:
        """What is stored of a record: the snapshot's, else what its fields tell (a record from
        record_from_json alone: the event time is its timestamp unless that is its creation time)."""
        facts = self.stored.get((record.record_type, record.id))
        if facts is not None:
            return facts
        event = record.timestamp if record.timestamp != record.created_at else None
        return {"status": RecordStatus(record.status), "event_at": event, "index_text": None}

    def payload(self, record: Record) -> str:
        """The text a record is embedded and indexed by."""
        index_text = self.stored_of(record)["index_text"]
        return index_text if index_text is not None else record.content

    @staticmethod
    def pair(relation: RecordRelation) -> str:
        """The link's two ends in sorted order, as the store keys one link per pair."""
        return "\x1f".join(sorted((relation.source_record_id, relation.target_record_id)))


def plan_restore(snapshot: Any) -> RestorePlan:
    """Check a snapshot before anything is written: its shape (through its JSON form, which
    from_json checks field by field), the engine's input limits, and ids given twice."""
    if not isinstance(snapshot, Snapshot):
        raise ValueError(f"snapshot must be a Snapshot, not {type(snapshot).__name__}")
    try:
        document = json.loads(json.dumps(snapshot.to_json(), allow_nan=False))
    except (TypeError, ValueError, AttributeError, RecursionError) as error:
        raise ValueError(f"the snapshot cannot be written as JSON: {error}") from None
    checked = Snapshot.from_json(document)
    for i, thread in enumerate(checked.threads):
        check_thread(thread, f"threads[{i}]")
    for i, record in enumerate(checked.records):
        check_record(record, checked.stored.get((record.record_type, record.id)), f"records[{i}]")
    for i, relation in enumerate(checked.relations):
        check_relation(relation, f"relations[{i}]")
    _refuse_twice("thread", [thread.id for thread in checked.threads])
    _refuse_twice("record", [f"{_kind(record.record_type)} {record.id!r}" for record in checked.records])
    _refuse_twice("relation", [relation.id for relation in checked.relations])
    _refuse_twice("link between", [RestorePlan.pair(relation) for relation in checked.relations])
    return RestorePlan(checked.threads, checked.records, checked.relations, checked.stored)


def check_thread(thread: ThreadRecord, where: str) -> None:
    """A thread to restore within the engine's input rules, as create_thread applies them: its id
    and owners (the id rule of every write), metadata, settings and summary. plan_restore checks
    each thread with it, and an import's first pass each line (memory.engine.transfer)."""
    check_id(f"{where}.id", thread.id)
    for name in ("user_id", "agent_id"):
        check_scope_value(f"{where}.{name}", getattr(thread, name))
    dump_metadata(thread.metadata, f"{where}.metadata")
    dump_metadata(thread.settings, f"{where}.settings")
    if thread.summary is not None:
        check_length(f"{where}.summary", thread.summary)


def check_record(record: Record, stored: Mapping[str, Any] | None, where: str) -> None:
    """A record to restore within the engine's input rules, as add applies them: its id, scope,
    role and message ids, content and index text (`stored`, what is stored of it, or None),
    metadata; an image has its bytes and type (what they are is an import's check, images.check_image,
    with the limits of the memory it goes to)."""
    check_id(f"{where}.id", record.id)
    for name in ("thread_id", "user_id", "agent_id"):
        check_scope_value(f"{where}.{name}", getattr(record, name, None))
    message_id = getattr(record, "message_id", None)
    if message_id is not None:
        check_id(f"{where}.message_id", message_id)
    role = getattr(record, "role", None)
    if role is not None:  # a role may be empty, as add allows
        check_id_text(f"{where}.role", role)
    check_length(f"{where}.content", record.content)
    index_text = (stored or {}).get("index_text")
    if index_text is not None:
        check_length(f"{where}.stored.index_text", index_text)
    dump_metadata(record.metadata, f"{where}.metadata")
    if record.created_at is None:
        raise ValueError(f"{where}.created_at is missing")
    if isinstance(record, ImageRecord) and (not record.bytes or record.mime_type is None):
        raise ValueError(f"{where} is an image without its bytes or mime_type")


def check_relation(relation: RecordRelation, where: str) -> None:
    """A link to restore within the engine's input rules, as add_relations applies them: its id,
    ends and labels, no link of a memory to itself, metadata."""
    check_id(f"{where}.id", relation.id)
    for name in ("source_record_id", "target_record_id"):
        check_id(f"{where}.{name}", getattr(relation, name))
    check_label(f"{where}.relation_type", relation.relation_type)
    check_label(f"{where}.opposite_relation_type", relation.opposite_relation_type)
    if relation.source_record_id == relation.target_record_id:
        raise ValueError(f"{where} links a memory to itself")
    dump_metadata(relation.metadata, f"{where}.metadata")


def _kind(record_type: str) -> str:
    return "memory" if record_type in MEMORY_TYPES else record_type


def _refuse_twice(what: str, keys: list[str]) -> None:
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            raise ValueError(f"the snapshot holds the {what} {key.replace(chr(31), ' and ')} twice")
        seen.add(key)


def snapshot_pairs(record_ids: Any) -> list[tuple[str, str]]:
    """snapshot()'s `record_ids`: (record_type, id) pairs."""
    if isinstance(record_ids, (str, bytes, Mapping)) or not isinstance(record_ids, (list, tuple)):
        raise ValueError(f"record_ids must be a list of (record_type, id) pairs, not {type(record_ids).__name__}")
    pairs = []
    for i, pair in enumerate(record_ids):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError(f"record_ids[{i}] must be a (record_type, id) pair, not {pair!r}")
        record_type, record_id = pair
        if not isinstance(record_type, str) or record_type not in SEARCHABLE_TYPES:
            raise ValueError(f"record_ids[{i}] has no record type: {record_type!r}")
        if not isinstance(record_id, str) or not record_id:
            raise ValueError(f"record_ids[{i}] must name a record id, not {record_id!r}")
        check_id_text(f"record_ids[{i}]", record_id)
        pairs.append((record_type, record_id))
    return pairs
