"""The few rules for writing values as text that every layer of the Django side shares (pages,
history summaries, messages, the graph's JSON): pure functions, importing nothing of the app, so
that a rule is written once and the template filters, the curation service and the views agree.
An import-linter contract (pyproject.toml) holds it to that: every layer may import it."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


def clip(text: Any, width: int) -> str:
    """The text cut to `width` characters with an ellipsis (truncatechars, without its Unicode
    grapheme handling, which costs a listing of 50 rows a millisecond)."""
    text = str(text or "")
    return text if len(text) <= width else text[: width - 1] + "…"


def short_id(value: Any) -> str:
    """An id where space is short (dense tables, history summaries; the full id is a click or a
    title away): a UUID by its first 8 characters, which tell UUIDs apart; a made-up id, which
    reads, whole up to 40 characters."""
    text = str(value)
    if UUID.fullmatch(text):
        return text[:8] + "…"
    return clip(text, 40)


def quoted(text: str | None, width: int = 60) -> str:
    """A record's text as a message or a summary names it: “in quotes”, on one line, cut to
    `width` characters. People know memories by what they say, not by their ids (the pages that
    show it escape it, as any text)."""
    text = " ".join(str(text or "").split())
    return f"“{clip(text, width)}”"


def plural(count: int, noun: str, *, grouped: bool = False) -> str:
    """ "1 memory", "3 memories": a count with its noun. `grouped`: the count with its thousands
    separated ("10,000 memories"), for counts that run that high (bulk selections)."""
    irregular = {"memory": "memories", "batch": "batches"}
    number = f"{count:,}" if grouped else str(count)
    return f"{number} {noun if count == 1 else irregular.get(noun, noun + 's')}"


INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"  # control characters other than tab, line feed and carriage return
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b\u200c\u200e\u200f"
    "\u2028-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e0fff]"
    # a zero-width joiner, except inside an emoji sequence (👩‍💻), where it is what draws one emoji
    "|\u200d(?![\u2600-\u27bf\U0001f000-\U0001faff])"
)
"""Characters that draw nothing or change the direction of what follows: zero-width spaces and
joiners, bidirectional overrides and isolates (U+202E shows "evil" as "live"), soft hyphens,
invisible operators, tag characters, Hangul fillers, control characters. Text an agent stored is
checked by reading it, so the pages show each as its code point (`visible_code_point`)."""


def visible_code_point(character: str) -> str:
    """An invisible character as it is shown: "U+202E", named (RIGHT-TO-LEFT OVERRIDE) on hover."""
    name = unicodedata.name(character, "control character")
    return f'<span class="oam-invisible" title="Invisible character: {name}">U+{ord(character):04X}</span>'
