"""The largest inputs the engine accepts (docs/configuration.md: Limits), each refused with a ValueError naming it.

Every limit sits below what the databases refuse or Python cannot handle (a deeper filter
overflows SQLite's parser, an id over 512 bytes does not fit Oracle's column, deep JSON exhausts
Python's stack), so that the caller learns the documented limit instead of a database error.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_ID_BYTES = 512
"""Ids (record, link, thread, user, agent), roles and link labels, in UTF-8 bytes: Oracle's VARCHAR2(512)."""
MAX_CONTENT_CHARS = 1_000_000
"""Characters of one record's content, index text or description."""
MAX_SEARCH_TEXT_CHARS = 500
"""Characters of a listing's `text` filter: its LIKE pattern stays a plain bind on Oracle
(4,000 bytes, every character escaped or four bytes long) and far below SQLite's 50,000-byte
limit on LIKE patterns."""
MAX_JSON_DEPTH = 32
"""Levels of nesting of metadata and settings (the dict itself is level 1)."""
MAX_JSON_CHARS = 1_000_000
"""Characters of metadata or settings once written as JSON."""
MAX_JSON_INT_DIGITS = 38
"""Digits of an integer inside metadata or a filter: Oracle's NUMBER precision (2**64 fits; beyond
38 digits neither Oracle's JSON nor SQLite's, which reads big integers as floats, keeps it)."""
MAX_FILTER_DEPTH = 8
"""Levels of nesting a metadata filter may have: the filter is level 1, and every object or list
inside it (an operator's included) one more. SQLite's parser overflows on a filter a little deeper."""
MAX_FILTER_TERMS = 1000
"""Entries a metadata filter may hold in all: every key and every list item counts one."""
MAX_INT = 2**63 - 1
"""Integer arguments (limits, budgets, sequence numbers, days) are 64-bit, as the databases store them."""


def check_json_tree(value: Any, name: str, max_depth: int, max_terms: int | None = None) -> None:
    """Refuse a JSON-like value nested deeper than `max_depth`, with more than `max_terms` keys and
    list items, or with an integer of more than MAX_JSON_INT_DIGITS digits. Iterative, so that no
    nesting can exhaust Python's stack before the limit is reported."""
    terms, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, int) and not isinstance(item, bool):
            if abs(item) >= 10**MAX_JSON_INT_DIGITS:
                raise ValueError(f"{name} holds an integer of more than {MAX_JSON_INT_DIGITS} digits")
            continue
        if not isinstance(item, (dict, list, tuple)):
            continue
        if depth > max_depth:
            raise ValueError(f"{name} is nested more than {max_depth} levels deep")
        children = item.values() if isinstance(item, dict) else item
        terms += len(children)
        if max_terms is not None and terms > max_terms:
            raise ValueError(f"{name} holds more than {max_terms} keys and list items")
        pending.extend((child, depth + 1) for child in children)


def check_length(name: str, value: str, limit: int = MAX_CONTENT_CHARS) -> None:
    """Refuse a text of more than `limit` characters."""
    if len(value) > limit:
        raise ValueError(f"{name} has {len(value):,} characters; the limit is {limit:,}")


NOT_IN_IDS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
"""Characters no id may hold: the C0 and C1 control characters (NUL, tab, line feed, carriage
return…), DEL, and Unicode's line and paragraph separators."""


def check_id_text(name: str, value: str) -> None:
    """Refuse an id (or role, or link label) that is not one clean line of text: more than
    MAX_ID_BYTES bytes in UTF-8, one Python cannot encode (a lone surrogate), one holding a
    control character or a line break, or one beginning or ending with whitespace.

    NUL ends text in SQLite's JSON functions, so such an id could not be looked up reliably. A line
    break or a tab splits every list of ids carried as lines (the dashboard's bulk selections, a
    log line, a CSV row), and other control characters are invisible where the id is shown. Spaces
    at either end are what forms and JSON clients trim: such an id would come back changed. The
    rule holds for lookups too, so an id means the same wherever it travels."""
    if "\x00" in value:
        raise ValueError(f"{name} must not contain NUL characters")
    found = NOT_IN_IDS.search(value)
    if found:
        raise ValueError(
            f"{name} must not contain control characters or line breaks "
            f"(found {found.group()!r} at position {found.start()})"
        )
    if value[:1].isspace() or value[-1:].isspace():
        raise ValueError(f"{name} must not begin or end with whitespace")
    if value.isascii():
        size = len(value)
    else:
        try:
            size = len(value.encode())
        except UnicodeEncodeError:
            raise ValueError(f"{name} is not valid Unicode text") from None
    if size > MAX_ID_BYTES:
        raise ValueError(f"{name} is {size} bytes in UTF-8; the limit is {MAX_ID_BYTES}")


def check_int_range(name: str, value: int) -> None:
    """Refuse an integer argument beyond 64 bits (the databases bind no wider integers)."""
    if not -MAX_INT - 1 <= value <= MAX_INT:
        raise ValueError(f"{name} must fit in 64 bits (at most {MAX_INT}), not {value}")


def dump_metadata(metadata: Any, name: str = "metadata") -> str | None:
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        raise ValueError(f"{name} must be a dict or None, not {type(metadata).__name__}")
    check_json_tree(metadata, name, MAX_JSON_DEPTH)
    try:
        text = json.dumps(metadata, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be JSON-serialisable: {error}") from None
    check_length(f"{name} as JSON", text, MAX_JSON_CHARS)
    return text


def check_id(name: str, value: Any) -> str:
    """A required id (of a thread, record, link or owner): a non-empty string within the limits."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty string, not {value!r}")
    check_id_text(name, value)
    return value
