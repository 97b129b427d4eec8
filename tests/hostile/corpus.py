"""The hostile corpus: what an attacker, a broken agent or a careless script may send. Every
payload has a name (the test ids) and says whether the site must refuse it (a 400 or 413 whatever
field it is in) or may take it (it is then stored exactly and rendered inert).

tests/hostile/test_dashboard.py sends it through every write form and filter of the dashboard,
tests/hostile/test_api.py through every write endpoint and query parameter of the API. The limits
it probes are docs/configuration.md's "Limits" table (memory.engine.limits, OAM_API_MAX_JSON_BYTES,
DATA_UPLOAD_MAX_MEMORY_SIZE).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote

from memory.engine import limits

MB = 1_000_000


@dataclass(frozen=True)
class Payload:
    name: str
    value: Any
    refused: bool = False
    """True: every field must refuse it (400/413) and store nothing."""
    stored: bool = False
    """True: the field it is sent in must take it (see `taken`)."""


def taken(payloads: list[Payload]) -> list[Payload]:
    """The payloads, those not refused marked as ones the field must store: free text takes any
    markup and any Unicode, metadata any JSON object within the limits."""
    return [replace(payload, stored=not payload.refused) for payload in payloads]


# --- Markup and template syntax: taken as text, never run --------------------------------------

MARKUP = [
    Payload("script", "<script>alert(1)</script>"),
    Payload("img-onerror", '"><img src=x onerror=alert(1)>'),
    Payload("attr-break", "' onmouseover='alert(1)' x='"),
    Payload("javascript-url", "javascript:alert(document.cookie)"),
    Payload("svg-onload", "<svg/onload=alert(1)><animate onbegin=alert(2) attributeName=x>"),
    Payload("textarea-break", "</textarea><script>alert(1)</script><textarea>"),
    Payload("script-break", "</script><script>alert(1)</script>"),
    Payload("django-variable", "{{ request.user.password }}{{ settings.SECRET_KEY }}"),
    Payload("django-tag", "{% debug %}{% load static %}{% csrf_token %}"),
    Payload("jinja-expression", "{{ 7*7 }}${7*7}#{7*7}"),
    Payload("html-comment", "<!-- <b>unclosed"),
    Payload("entity", "&lt;script&gt;&amp;#x3C;"),
]

# --- Unicode edge cases: stored exactly, shown escaped ----------------------------------------

UNICODE = [
    Payload("rtl-override", "user\u202egnp.exe"),
    Payload("zero-width", "ad\u200bmin\u200c\u200d\u2060\ufeff"),
    Payload("combining-marks", "Z" + "\u0351\u0358\u0362\u0315" * 200),
    Payload("emoji-zwj", "👩‍👩‍👧‍👦 🏳️‍🌈 👍🏽"),
    Payload("nfc", "caf\u00e9"),
    Payload("nfd", "cafe\u0301"),
    Payload("astral", "\U0001d54f\U0001d538 \U0010fffd"),
    Payload("noncharacter", "\ufffe\uffff"),
    Payload("line-separators", "a\u2028b\u2029c\r\nd\re"),
    Payload("overlong-line", "W" * 100_000),
]

NUL = Payload("nul", "before\x00after")

# --- Sizes around the limits ------------------------------------------------------------------

AT_LIMIT = Payload("1mb-content", "x" * limits.MAX_CONTENT_CHARS)
OVER_LIMIT = Payload("over-1mb-content", "x" * (limits.MAX_CONTENT_CHARS + 1), refused=True)

TEXTS = [*MARKUP, *UNICODE]
"""Text any free-text field (content, description, profile) stores as it is."""

# --- Metadata (JSON objects) ------------------------------------------------------------------


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": "<script>alert(1)</script>"}
    for _ in range(depth - 1):
        value = {"n": value}
    return value


METADATA = [
    Payload("markup-keys-and-values", {item.value: item.value for item in MARKUP}),
    Payload("unicode-keys", {item.name + item.value[:50]: item.value[:200] for item in UNICODE}),
    Payload("10k-keys", {f"key-{index}": index for index in range(10_000)}),
    Payload("deep-32", nested(limits.MAX_JSON_DEPTH)),
    Payload("deep-100", nested(100), refused=True),
    Payload("int-39-digits", {"n": 10**38}, refused=True),
]

METADATA_TEXTS = [
    Payload("not-json", "{'single': 'quotes'}", refused=True),
    Payload("not-an-object", "[1, 2, 3]", refused=True),
    Payload("a-string", '"<script>alert(1)</script>"', refused=True),
    Payload("deep-1000-text", '{"a":' * 1000 + "1" + "}" * 1000, refused=True),
    Payload("nan", '{"n": NaN}', refused=True),
    Payload("infinity", '{"n": 1e400}', refused=True),
]
"""Metadata as raw text: JSON (or not) no encoder would write."""


def metadata_texts() -> list[Payload]:
    """Every metadata payload as the text a form field or a JSON body carries."""
    return [Payload(item.name, json.dumps(item.value), item.refused) for item in METADATA] + METADATA_TEXTS


# --- Ids --------------------------------------------------------------------------------------

IDS = [
    Payload("dot-dot-slash", "../../etc/passwd"),
    Payload("encoded-slash", "a%2Fb"),
    Payload("encoded-dot-dot", "..%2f..%2fsecret"),
    Payload("backslashes", "..\\..\\windows"),
    Payload("slash-inside", "a/b"),
    Payload("dot", "."),
    Payload("dot-dot", ".."),
    Payload("markup-id", '"><script>alert(1)</script>'),
    Payload("unicode-id", "user\u202e\u200b👩‍👩‍👧"),
    Payload("id-512-bytes", "é" * (limits.MAX_ID_BYTES // 2)),
    Payload("id-4kb", "i" * 4096, refused=True),
    Payload("id-nul", "a\x00b", refused=True),
]
"""Ids a person or a script may type. Leading and trailing spaces are trimmed by the dashboard's
forms; the API refuses them (it never changes an id)."""

SPACED_ID = Payload("spaced-id", "  padded  ")

CONTROL_IDS = [
    Payload("id-newline", "a\nb", refused=True),
    Payload("id-crlf", "a\r\nb", refused=True),
    Payload("id-tab", "a\tb", refused=True),
    Payload("id-c1-control", "a\x85b", refused=True),
]
"""Ids holding a line break or another control character: every id field refuses them (one newline
in an id broke every bulk action whose selection held it, issue 25); free text may hold them."""

RAW_SEGMENTS = [
    ("utf8-surrogate", "%ED%A0%80"),
    ("not-utf8", "%FF%FE"),
    ("encoded-nul", "a%00b"),
    ("double-encoded-slash", "..%252F..%252Fsecret"),
    ("overlong-utf8-dot", "%C0%AE%C0%AE"),
]
"""URL path segments as sent, already percent-encoded: bytes no text id can be."""


def segments(payloads: list[Payload]) -> list[tuple[str, str]]:
    """(name, URL path segment) for each payload as an id in a URL, then the raw segments."""
    return [(payload.name, quote(payload.value, safe="")) for payload in payloads] + RAW_SEGMENTS


# --- Malformed HTTP bodies --------------------------------------------------------------------

BOUNDARY = "hostile-boundary"

MULTIPART = [
    ("missing-boundary", "multipart/form-data", b"--x\r\nContent-Disposition: form-data; name=a\r\n\r\n1\r\n--x--"),
    (
        "truncated-body",
        f"multipart/form-data; boundary={BOUNDARY}",
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\n'
        "Content-Type: image/png\r\n\r\n\x89PNG\r\n".encode(),
    ),
    (
        "huge-part-header",
        f"multipart/form-data; boundary={BOUNDARY}",
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="description"\r\nX-Junk: {"j" * 200_000}\r\n\r\n'
        f"x\r\n--{BOUNDARY}--\r\n".encode(),
    ),
    ("wrong-content-type", "text/plain", b"image=not-a-form"),
    ("json-as-multipart", f"multipart/form-data; boundary={BOUNDARY}", b'{"image": "x"}'),
    ("garbage-bytes", f"multipart/form-data; boundary={BOUNDARY}", bytes(range(256)) * 40),
]
"""(name, Content-Type, body) of uploads no browser would send."""
