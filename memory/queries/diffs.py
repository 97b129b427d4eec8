"""Readable differences between two versions of a record (the JSON a history entry keeps):
content word by word, metadata key by key, and the other fields old → new."""

from __future__ import annotations

import bisect
import difflib
import json
import re
from collections import Counter
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

TIME_FIELDS = frozenset({"timestamp", "expires_at"})
REWRITTEN = 0.4


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
    time: bool = False
    """A time (timestamp, expiry): shown as the pages show times (`2026-11-20 14:05:09 UTC`)."""


@dataclass(frozen=True)
class RecordDiff:
    content: list[Piece] | None
    metadata: list[KeyChange]
    fields: list[FieldChange]

    @property
    def empty(self) -> bool:
        return self.content is None and not self.metadata and not self.fields

    @property
    def content_before(self) -> list[Piece]:
        """The old text alone, its deleted words marked: the left side of a side-by-side diff."""
        return [piece for piece in self.content or () if piece.op != "insert"]

    @property
    def content_after(self) -> list[Piece]:
        """The new text alone, its inserted words marked: the right side."""
        return [piece for piece in self.content or () if piece.op != "delete"]

    @property
    def rewritten(self) -> bool:
        """Whether most of the text changed (more than REWRITTEN of its characters on either side):
        interleaved, such a diff reads as a jumble of struck and added words, so the page shows
        the two texts side by side unless asked otherwise."""
        if not self.content:
            return False
        changed = sum(len(piece.text) for piece in self.content if piece.op != "equal")
        total = sum(len(piece.text) for piece in self.content)
        return total > 0 and changed / total > REWRITTEN


def word_diff(old: str, new: str) -> list[Piece]:
    """The new text as runs of kept, deleted and inserted words (whitespace kept as it was)."""
    old_words, new_words = _WORDS.split(old), _WORDS.split(new)
    pieces = []
    for op, i1, i2, j1, j2 in WordDiffer(old_words, new_words).opcodes():
        if op in ("delete", "replace"):
            pieces.append(Piece("delete", "".join(old_words[i1:i2])))
        if op in ("insert", "replace"):
            pieces.append(Piece("insert", "".join(new_words[j1:j2])))
        if op == "equal":
            pieces.append(Piece("equal", "".join(old_words[i1:i2])))
    return pieces


_WORDS = re.compile(r"(\s+)")
Opcode = tuple[str, int, int, int, int]


class WordDiffer:
    """difflib-style opcodes between two token lists, at a cost near-linear in their length.

    Content may be a million characters and any curator or agent token can store it, so a diff
    must not be quadratic (difflib alone took two minutes on a 95 KB memory with one word changed).
    The common head and tail are set aside; what is left is cut at anchors, tokens that occur
    once on each side in the same order (a patience diff; in repetitive text, runs of tokens),
    and the stretches between them are diffed the same way. Only a stretch of at most FINE_CELLS
    token pairs gets difflib's fine matching. A budget of WORK_PER_TOKEN units per token bounds
    the whole: once it is spent, a stretch left is shown as replaced whole.
    """

    FINE_CELLS = 40_000
    WORK_PER_TOKEN = 24
    ANCHOR_RUN = 8
    RUN_REPEATS = 64

    def __init__(self, a: list[str], b: list[str]) -> None:
        numbers: dict[str, int] = {}  # each distinct token as a small int: hashed and compared fast
        self.a = [numbers.setdefault(token, len(numbers)) for token in a]
        self.b = [numbers.setdefault(token, len(numbers)) for token in b]
        self.budget = self.WORK_PER_TOKEN * (len(a) + len(b)) + self.FINE_CELLS

    def opcodes(self) -> list[Opcode]:
        found: list[Opcode] = []
        # A stack (not recursion: stretches can nest deeply) of stretches to diff and opcodes to
        # emit, popped in text order.
        stack: list[Opcode | tuple[int, int, int, int]] = [(0, len(self.a), 0, len(self.b))]
        while stack:
            item = stack.pop()
            if isinstance(item[0], str):
                found.append(item)  # type: ignore[arg-type]
            else:
                stack.extend(reversed(self._stretch(*item)))  # type: ignore[arg-type]
        return _coalesced(found)

    def _stretch(self, alo: int, ahi: int, blo: int, bhi: int) -> list[Any]:
        """What to do with a[alo:ahi] against b[blo:bhi]: opcodes and smaller stretches, in order."""
        a, b = self.a, self.b
        head = 0
        while alo + head < ahi and blo + head < bhi and a[alo + head] == b[blo + head]:
            head += 1
        tail = 0
        while alo + head < ahi - tail and blo + head < bhi - tail and a[ahi - tail - 1] == b[bhi - tail - 1]:
            tail += 1
        parts: list[Any] = [("equal", alo, alo + head, blo, blo + head)] if head else []
        alo, blo, ahi, bhi = alo + head, blo + head, ahi - tail, bhi - tail
        parts.extend(self._middle(alo, ahi, blo, bhi))
        if tail:
            parts.append(("equal", ahi, ahi + tail, bhi, bhi + tail))
        return parts

    def _middle(self, alo: int, ahi: int, blo: int, bhi: int) -> list[Any]:
        """A stretch whose first and last tokens differ on the two sides."""
        if alo == ahi and blo == bhi:
            return []
        if alo == ahi or blo == bhi:
            return [("insert" if alo == ahi else "delete", alo, ahi, blo, bhi)]
        cells = (ahi - alo) * (bhi - blo)
        if cells <= self.FINE_CELLS and cells <= self.budget:
            self.budget -= cells
            matcher = difflib.SequenceMatcher(None, self.a[alo:ahi], self.b[blo:bhi], autojunk=False)
            return [(op, alo + i1, alo + i2, blo + j1, blo + j2) for op, i1, i2, j1, j2 in matcher.get_opcodes()]
        anchors = self._anchors(alo, ahi, blo, bhi)
        if not anchors:
            return [("replace", alo, ahi, blo, bhi)]
        parts: list[Any] = []
        for i, j, length in anchors:
            parts.append((alo, i, blo, j))
            parts.append(("equal", i, i + length, j, j + length))
            alo, blo = i + length, j + length
        parts.append((alo, ahi, blo, bhi))
        return parts

    def _anchors(self, alo: int, ahi: int, blo: int, bhi: int) -> list[tuple[int, int, int]]:
        """(i, j, length) of runs both sides share, in an order both share: tokens that occur once
        on each side or else, for repetitive text, runs of ANCHOR_RUN tokens that occur as often on
        each side (at most RUN_REPEATS times), the n-th on one side paired with the n-th on the
        other. Empty when there are none or the budget is spent."""
        for length, repeats in ((1, 1), (self.ANCHOR_RUN, self.RUN_REPEATS)):
            cost = 2 * length * ((ahi - alo) + (bhi - blo))
            if cost > self.budget:
                return []
            self.budget -= cost
            keys_a, keys_b = _runs(self.a, alo, ahi, length), _runs(self.b, blo, bhi, length)
            counts_a, counts_b = Counter(keys_a), Counter(keys_b)
            shared = {key for key, count in counts_a.items() if count <= repeats and counts_b.get(key) == count}
            pairs = sorted(
                zip(_positions(keys_a, shared, counts_a, alo), _positions(keys_b, shared, counts_b, blo), strict=True),
                key=lambda pair: pair[0],
            )
            anchors, end_i, end_j = [], alo, blo
            for i, j in _increasing(pairs):
                if i >= end_i and j >= end_j:  # runs longer than one token must not overlap
                    anchors.append((i, j, length))
                    end_i, end_j = i + length, j + length
            if anchors:
                return anchors
        return []


def _runs(tokens: list[int], lo: int, hi: int, length: int) -> list[Any]:
    """The tokens of tokens[lo:hi], or its runs of `length` tokens as tuples."""
    if length == 1:
        return tokens[lo:hi]
    return list(zip(*(tokens[lo + k : hi] for k in range(length)), strict=False))


def _positions(keys: list[Any], shared: set[Any], counts: Counter, offset: int) -> list[int]:
    """The positions of the shared keys, grouped by key in a fixed order (the n-th occurrence of
    a key on one side lines up with its n-th on the other). Most keys occur once: those take one
    pass, the repeated ones a second."""
    last = {key: position for position, key in enumerate(keys, offset) if key in shared}
    groups: dict[Any, list[int]] = {key: [] for key in shared if counts[key] > 1}
    if groups:
        for position, key in enumerate(keys, offset):
            if key in groups:
                groups[key].append(position)
    return [position for key in shared for position in groups.get(key, (last[key],))]


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of `pairs` (sorted by i) whose j increase too: patience sorting, n log n."""
    tops: list[int] = []  # j at the top of each pile
    top_index: list[int] = []  # index into pairs of that top
    back: list[int] = []
    for index, (_, j) in enumerate(pairs):
        pile = bisect.bisect_left(tops, j)
        back.append(top_index[pile - 1] if pile else -1)
        if pile == len(tops):
            tops.append(j)
            top_index.append(index)
        else:
            tops[pile], top_index[pile] = j, index
    chain, index = [], top_index[-1] if top_index else -1
    while index >= 0:
        chain.append(pairs[index])
        index = back[index]
    return chain[::-1]


def _coalesced(opcodes: list[Opcode]) -> list[Opcode]:
    """Adjacent opcodes merged: runs of equal ones, and runs of changes into one replace (so a
    changed passage reads as the old words, then the new)."""
    merged: list[Opcode] = []
    for op, i1, i2, j1, j2 in opcodes:
        if i1 == i2 and j1 == j2:
            continue
        if merged and (merged[-1][0] == "equal") == (op == "equal"):
            last = merged[-1]
            kind = op if op == last[0] else "replace"
            merged[-1] = (kind, last[1], i2, last[3], j2)
        else:
            merged.append((op, i1, i2, j1, j2))
    return merged


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
            FieldChange(label, _listed(before.get(name)), _listed(after.get(name)), time=name in TIME_FIELDS)
            for name, label in FIELD_LABELS.items()
            if before.get(name) != after.get(name) and (name in before or name in after)
        ],
    )


def _listed(value: Any) -> Any:
    """A list (a thread's topics) as a person reads it: its items, comma-separated."""
    return ", ".join(map(str, value)) if isinstance(value, list) else value


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
