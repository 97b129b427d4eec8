"""Prompt rendering of search results and their linked-memory trees (spec §6.7, DECISIONS D6).

A result renders as one XML-like `<record>` element; its linked memories nest inside it under
`<linked_memories>`, each labelled with the relation as read from the displayed parent. Every
piece of record text is XML-escaped, so stored text can never open or close an element.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, fields
from typing import Any, NamedTuple
from xml.sax.saxutils import quoteattr

from .types import NOT_SET, MessageRecord, Record, RecordStatus, ScopedRecord


@dataclass(frozen=True)
class SearchResultFormatConfig:
    """Which parts of a result `format_result` shows. Every option left NOT_SET takes its default.

    Defaults: `include_invalid_results` comes from the search that produced the result;
    timestamp, role and status are shown; thread, user and agent ids, distance and metadata are
    hidden. A config therefore overrides only what it sets.
    """

    include_invalid_results: Any = NOT_SET
    show_thread_id: Any = NOT_SET
    show_distance: Any = NOT_SET
    show_timestamp: Any = NOT_SET
    show_role: Any = NOT_SET
    show_user_id: Any = NOT_SET
    show_agent_id: Any = NOT_SET
    show_status: Any = NOT_SET
    show_metadata: Any = NOT_SET

    def __post_init__(self) -> None:
        for option in fields(self):
            value = getattr(self, option.name)
            if value is not NOT_SET and not isinstance(value, bool):
                raise ValueError(f"{option.name} must be True or False, not {value!r}")


_SHOWN_BY_DEFAULT = {"show_timestamp", "show_role", "show_status"}


class _Options(NamedTuple):
    include_invalid_results: bool
    show_thread_id: bool
    show_distance: bool
    show_timestamp: bool
    show_role: bool
    show_user_id: bool
    show_agent_id: bool
    show_status: bool
    show_metadata: bool


def _default_options(include_invalid_results: bool) -> _Options:
    shown = {name: name in _SHOWN_BY_DEFAULT for name in _Options._fields}
    return _Options(**{**shown, "include_invalid_results": include_invalid_results})


_DEFAULT_OPTIONS = {flag: _default_options(flag) for flag in (True, False)}
"""The options without a config, made once: resolving them was half the time of formatting a result."""


def _resolve(config: SearchResultFormatConfig | None, result: Any) -> _Options:
    if config is None:
        if result.include_invalid_results in _DEFAULT_OPTIONS:
            return _DEFAULT_OPTIONS[result.include_invalid_results]
        config = SearchResultFormatConfig()
    elif not isinstance(config, SearchResultFormatConfig):
        raise ValueError(f"config must be a SearchResultFormatConfig or None, not {type(config).__name__}")
    defaults = {name: name in _SHOWN_BY_DEFAULT for name in _Options._fields}
    defaults["include_invalid_results"] = result.include_invalid_results
    chosen = {name: getattr(config, name) for name in _Options._fields}
    return _Options(**{name: defaults[name] if value is NOT_SET else value for name, value in chosen.items()})


def format_result(result: Any, config: SearchResultFormatConfig | None = None) -> str:
    """A search result and its linked-memory tree as XML-like prompt text.

    With invalid content excluded (the config's or the search's `include_invalid_results` is
    False), an invalid linked memory that leads to a valid one stays as a connector: its status
    and relation label without its content. A branch of invalid memories only is left out. The
    top-level result is always rendered in full.
    """
    options = _resolve(config, result)
    children = _render_links(result.record.id, result.linked_results, options)
    return _render_record(result.record, result.distance, children, options, connector=False)


def _render_links(parent_id: str, linked_results: list, options: _Options) -> str:
    rendered = []
    for relation, child in linked_results:
        element = _render_linked(child, options)
        if element is not None:
            label = quoteattr(relation.label_from(parent_id))
            rendered.append(f"<linked_memory relation={label}>{element}</linked_memory>")
    return f"<linked_memories>{''.join(rendered)}</linked_memories>" if rendered else ""


def _render_linked(result: Any, options: _Options) -> str | None:
    """A linked memory's element, or None when its whole branch is hidden invalid history."""
    children = _render_links(result.record.id, result.linked_results, options)
    hidden = not options.include_invalid_results and result.record.status == RecordStatus.INVALID
    if hidden and not children:
        return None
    return _render_record(result.record, result.distance, children, options, connector=hidden)


def _render_record(record: Record, distance: float, children: str, options: _Options, *, connector: bool) -> str:
    parts = []
    if options.show_timestamp and record.timestamp:
        parts.append(f"<timestamp>{_escape(record.timestamp)}</timestamp>")
    if options.show_role and isinstance(record, MessageRecord) and record.role:
        parts.append(f"<role>{_escape(record.role)}</role>")
    if isinstance(record, ScopedRecord):
        for name, shown in (
            ("thread_id", options.show_thread_id),
            ("user_id", options.show_user_id),
            ("agent_id", options.show_agent_id),
        ):
            value = getattr(record, name)
            if shown and value is not None:
                parts.append(f"<{name}>{_escape(value)}</{name}>")
    # A connector without its status would be an unexplained empty record.
    if options.show_status or connector:
        status = _STATUS_TEXT.get(record.status) or RecordStatus(record.status).value
        parts.append(f"<status>{status}</status>")
    if options.show_distance and isinstance(distance, (int, float)) and not math.isnan(distance):
        parts.append(f"<distance>{distance:.4f}</distance>")
    if options.show_metadata and record.metadata:
        metadata = json.dumps(record.metadata, separators=(",", ":"), ensure_ascii=False, default=str)
        parts.append(f"<metadata>{_escape(metadata)}</metadata>")
    if not connector:
        parts.append(f"<content>{_escape(record.content or '')}</content>")
    return f"<record type={_type_attribute(record.record_type)}>{''.join(parts)}{children}</record>"


_STATUS_TEXT = {status: status.value for status in RecordStatus}
"""A status as its element's text: a status is one of these words, which need no escaping."""


def _escape(text: str) -> str:
    """Text as element content: &, < and > escaped (what xml.sax.saxutils.escape does, without
    its call overhead: a search's text is most of an activity event's cost)."""
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    return text


@functools.cache
def _type_attribute(record_type: str) -> str:
    """A record type as a quoted attribute value (a handful of types: made once each)."""
    return quoteattr(record_type)
