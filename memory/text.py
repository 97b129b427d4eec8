"""The few rules for writing values as text that every layer of the Django side shares (pages,
history summaries, messages, the graph's JSON): pure functions, importing nothing of the app."""

from __future__ import annotations

from typing import Any


def clip(text: Any, width: int) -> str:
    """The text cut to `width` characters with an ellipsis (truncatechars, without its Unicode
    grapheme handling, which costs a listing of 50 rows a millisecond)."""
    text = str(text or "")
    return text if len(text) <= width else text[: width - 1] + "…"
