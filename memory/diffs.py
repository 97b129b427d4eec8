"""Readable differences between two versions of a record (the JSON a history entry keeps):
content word by word, metadata key by key, and the other fields old → new."""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any

FIELD_LABELS = {
    "record_type": "Type",
    "role": "Role",
    "status": "Status",
    "user_id": "User",
    "agent_id": "Agent",
    "thread_id": "Thread",
    "timestamp": "Timestamp",
    "expires_at": "Expires",
    "relation_type": "Relation",
    "opposite_relation_type": "Read back as",
    "summary": "Summary",
    "topics": "Topics",
}


@dataclass(frozen=True)
class Piece:
    """A run of words: kept ("equal"), or only in the old ("delete") or the new ("insert") text."""

    op: str
    text: str


@dataclass(frozen=True)
class KeyChange:
    key: str
    change: str  # "added", "removed" or "changed"
    old: str
    new: str


@dataclass(frozen=True)
class FieldChange:
    label: str
    old: Any
    new: Any


@dataclass(frozen=True)
class RecordDiff:
    content: list[Piece] | None
    metadata: list[KeyChange]
    fields: list[FieldChange]

    @property
    def empty(self) -> bool:
        return self.content is None and not self.metadata and not self.fields


def word_diff(old: str, new: str) -> list[Piece]:
    """The new text as runs of kept, deleted and inserted words (whitespace kept as it was)."""
    old_words, new_words = re.split(r"(\s+)", old), re.split(r"(\s+)", new)
    pieces = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_words, new_words, autojunk=False).get_opcodes():
        if op in ("delete", "replace"):
            pieces.append(Piece("delete", "".join(old_words[i1:i2])))
        if op in ("insert", "replace"):
            pieces.append(Piece("insert", "".join(new_words[j1:j2])))
        if op == "equal":
            pieces.append(Piece("equal", "".join(old_words[i1:i2])))
    return pieces


def metadata_diff(old: dict | None, new: dict | None) -> list[KeyChange]:
    old, new = old or {}, new or {}
    changes = []
    for key in dict.fromkeys([*old, *new]):
        if key not in new:
            changes.append(KeyChange(key, "removed", _json(old[key]), ""))
        elif key not in old:
            changes.append(KeyChange(key, "added", "", _json(new[key])))
        elif old[key] != new[key]:
            changes.append(KeyChange(key, "changed", _json(old[key]), _json(new[key])))
    return changes


def record_diff(before: dict | None, after: dict | None) -> RecordDiff:
    """What changed from `before` to `after` (either may be None: a creation or a deletion)."""
    before, after = before or {}, after or {}
    old_content, new_content = before.get("content") or "", after.get("content") or ""
    return RecordDiff(
        content=word_diff(old_content, new_content) if old_content != new_content else None,
        metadata=metadata_diff(before.get("metadata"), after.get("metadata")),
        fields=[
            FieldChange(label, _listed(before.get(name)), _listed(after.get(name)))
            for name, label in FIELD_LABELS.items()
            if before.get(name) != after.get(name) and (name in before or name in after)
        ],
    )


def _listed(value: Any) -> Any:
    """A list (a thread's topics) as a person reads it: its items, comma-separated."""
    return ", ".join(map(str, value)) if isinstance(value, list) else value


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
