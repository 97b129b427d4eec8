"""What the hostile tests check on every answer: no 500, refusals that store nothing, and pages
where nothing a user wrote can run."""

from __future__ import annotations

from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any

from memory.engine import AgentMemory, export_lines
from memory.models import ApiToken, BulkChange, CurationEntry

REFUSALS = {400, 404, 409, 413, 415}
"""Statuses of a request turned away (404: an id no record has, 409: a duplicate id)."""
HTML_SPECIAL = set("<>\"'")


def state(memory: AgentMemory) -> tuple[list[str], int, int, int]:
    """The whole store as its export (every thread, record and link, exactly), the history's size
    and the number of API tokens."""
    return (
        list(export_lines(memory)),
        CurationEntry.objects.count(),
        BulkChange.objects.count(),
        ApiToken.objects.count(),
    )


def new_memory(memory: AgentMemory) -> str:
    """A memory of its own for each link a test makes (two memories are linked once)."""
    return memory.add_memory("Alice likes trains.", memory_type="fact", user_id="alice", autonomous_linking=False)


class LiveMarkup(HTMLParser):
    """What in a page could run: event-handler attributes, inline scripts, javascript: URLs, and
    <svg> or <img> elements that are not the site's own."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self.in_script = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        values = dict(attrs)
        self.found += [f"<{tag} {name}>" for name in values if name.startswith("on")]
        self.found += [
            f"<{tag} {name}=javascript:>"
            for name, value in values.items()
            if name in ("href", "src", "action", "formaction")
            and (value or "").strip().lower().startswith("javascript")
        ]
        if tag == "script":
            self.in_script = "src" not in values
        if tag == "img" and not (values.get("src") or "").startswith("/"):
            self.found.append("<img> from elsewhere")
        if tag == "svg" and "class" not in values:
            self.found.append("<svg> not the site's")

    def handle_data(self, data: str) -> None:
        if self.in_script and data.strip():
            self.found.append(f"inline script {data[:40]!r}")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self.in_script = False


def inert_problems(html: str, text: str) -> list[str]:
    """Why `html` is not safe to show with `text` (a hostile value) in it; [] when it is."""
    problems = []
    if HTML_SPECIAL & set(text) and len(text) < 100_000 and text in html:
        problems.append("the payload appears unescaped")
    parser = LiveMarkup()
    parser.feed(html)
    problems += parser.found
    return problems


class Failures:
    """Every payload's problems for one field, reported together (one test per field keeps the
    corpus fast; the message names each payload that failed and why)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def check(self, name: str, condition: bool, why: str) -> None:
        if not condition:
            self.lines.append(f"{name}: {why}")

    def run(self, name: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """call(*args, **kwargs), or None with the failure noted when it raises."""
        try:
            return call(*args, **kwargs)
        except Exception as error:  # the test client re-raises a view's exception: a 500
            self.lines.append(f"{name}: 500 ({type(error).__name__}: {str(error)[:200]})")
            return None

    def assert_none(self) -> None:
        assert not self.lines, "\n".join(self.lines)
