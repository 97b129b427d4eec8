"""Who is calling and why, for the calls made inside a block: context variables the recorder reads.

A process names its caller once (`connect(..., caller=...)`); a server acting for many callers
(the REST API, the dashboard) names each request's caller with `acting_as`, and the engine's own
LLM work names its cause with `caused_by`. Context variables follow threads' and asyncio tasks'
contexts, so concurrent requests never see each other's caller.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

from ..limits import check_id
from .events import CALLER_KINDS


@dataclass(frozen=True)
class Acting:
    """The caller of the calls in an `acting_as` block ("" keeps the recorder's own)."""

    caller: str
    caller_kind: str = "agent"
    on_behalf_of: str | None = None
    history_ref: str | None = None


_acting: ContextVar[Acting | None] = ContextVar("oam_activity_acting", default=None)
_cause: ContextVar[Mapping[str, Any] | None] = ContextVar("oam_activity_cause", default=None)
_inside: ContextVar[bool] = ContextVar("oam_activity_inside", default=False)
_quiet: ContextVar[bool] = ContextVar("oam_activity_quiet", default=False)


@contextmanager
def acting_as(
    caller: str, *, caller_kind: str = "agent", on_behalf_of: str | None = None, history_ref: str | None = None
) -> Iterator[None]:
    """Record the calls made in this block as `caller`'s: a person at the dashboard
    (caller_kind="person"), or an agent (an API token's name, on behalf of its owner).
    `history_ref` ties the writes of the block to the curation-history change they belong to."""
    check_id("caller", caller)
    if on_behalf_of is not None:
        check_id("on_behalf_of", on_behalf_of)
    if caller_kind not in CALLER_KINDS:
        raise ValueError(f"caller_kind must be one of {', '.join(CALLER_KINDS)}, not {caller_kind!r}")
    token = _acting.set(Acting(caller, caller_kind, on_behalf_of, history_ref))
    try:
        yield
    finally:
        _acting.reset(token)


@contextmanager
def history_change(history_ref: str) -> Iterator[None]:
    """Tie the writes of this block to one curation-history change, keeping the caller."""
    token = _acting.set(replace(_acting.get() or Acting(caller=""), history_ref=history_ref))
    try:
        yield
    finally:
        _acting.reset(token)


@contextmanager
def caused_by(cause: Mapping[str, Any]) -> Iterator[None]:
    """Record the writes of this block as the engine's own work with this cause (what: "extraction",
    "link", "summary", "caption", with the messages or memory it came from). Reads made for that
    work (the memories an extraction prompt shows) are the engine's, not a caller's retrievals,
    and are not recorded."""
    token = _cause.set(dict(cause))
    try:
        yield
    finally:
        _cause.reset(token)


@contextmanager
def continued_trace(traceparent: str | None, tracestate: str | None = None) -> Iterator[None]:
    """Continue a caller's W3C trace (its `traceparent` and `tracestate` headers) in this block:
    the spans of the retrievals made in it (otlp.py) become children of the caller's span, so
    that an agent calling the REST API sees its memory reads inside its own trace. A missing or
    malformed header continues nothing (the spans start their own trace), as the W3C spec asks."""
    if not traceparent:
        yield
        return
    from opentelemetry import context as otel_context
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier = {"traceparent": traceparent, **({"tracestate": tracestate} if tracestate else {})}
    token = otel_context.attach(TraceContextTextMapPropagator().extract(carrier))
    try:
        yield
    finally:
        otel_context.detach(token)


@contextmanager
def unrecorded() -> Iterator[None]:
    """Record nothing of the calls in this block (a replay of a recorded call, the recorder's own reads)."""
    token = _quiet.set(True)
    try:
        yield
    finally:
        _quiet.reset(token)


@contextmanager
def recording_call() -> Iterator[bool]:
    """Enter a retrieval; yields whether it is the outermost one, which alone is recorded (a card's
    searches are part of the card)."""
    outer = not _inside.get()
    token = _inside.set(True)
    try:
        yield outer
    finally:
        _inside.reset(token)


def current_acting() -> Acting | None:
    return _acting.get()


def current_cause() -> Mapping[str, Any] | None:
    return _cause.get()


def is_quiet() -> bool:
    return _quiet.get()
