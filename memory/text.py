"""The few rules for writing values as text that every layer of the Django side shares (pages,
history summaries, messages, the graph's JSON): pure functions, importing nothing of the app, so
that a rule is written once and the template filters, the curation service and the views agree.
An import-linter contract (pyproject.toml) holds it to that: every layer may import it."""

from __future__ import annotations

import re
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
