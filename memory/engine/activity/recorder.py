"""The activity recorder: events taken off the caller's path and written to the store in batches.

A recorded call costs its caller a timestamp, a few references and a put on a bounded queue; the
events themselves (results flattened, texts formatted and capped, tokens counted) are built and
written by one background thread per recorder, up to BATCH_SIZE events per transaction. When the
queue is full an event is dropped and counted; when the store cannot take a batch, the batch is
dropped and counted with the error: recording never makes a call fail or wait. `stats()` reports
these counts (the dashboard's overview and /healthz show them).

What a crash can lose: the events still queued, those of the last FLUSH_SECONDS in normal running
(a clean exit writes them: `close()`, and an exit hook for processes that never call it).
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import random
import sys
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..limits import check_id
from ..search import SearchResult, estimate_tokens, result_from_hit
from ..ttl import format_utc, utc_now
from .context import Acting, current_acting, current_cause, is_quiet, recording_call
from .events import (
    AUDIT_KINDS,
    RETRIEVAL_KINDS,
    ActivityEvent,
    ActivityResult,
    json_safe,
    search_results,
    tokens_of,
)

log = logging.getLogger(__name__)

DEFAULT_RETENTION_DAYS = 30
DEFAULT_CONTENT_CHARS = 20_000
"""The text kept per event: a context card of the default 2,000-token budget is about 7,000 characters."""
DEFAULT_QUEUE_CAPACITY = 10_000
MAX_RESULTS = 1_000
"""Results kept per event (result_count keeps the whole number): a bulk write of 100k records is
one event per batch, not 100k rows."""
BATCH_SIZE = 200
FLUSH_SECONDS = 0.25
PURGE_EVERY_SECONDS = 3_600.0
AUDIT_WAIT_SECONDS = 1.0
"""How long an audit event (a view, an export) waits for room in a full queue before it is dropped."""


@dataclass(frozen=True)
class ActivityConfig:
    """How a process records its activity. `from_env()` reads OAM_ACTIVITY ("on"/"off"),
    OAM_ACTIVITY_RETENTION_DAYS (days an event is kept; 0 keeps them forever),
    OAM_ACTIVITY_CONTENT_CHARS (text kept per event), OAM_ACTIVITY_SAMPLE (the share of retrieval
    events kept, 0-1; writes are always kept) and OAM_OTLP_ENDPOINT (export retrievals as
    OpenTelemetry spans to this OTLP/HTTP collector)."""

    enabled: bool = True
    retention_days: int = DEFAULT_RETENTION_DAYS
    content_chars: int = DEFAULT_CONTENT_CHARS
    sample: float = 1.0
    queue_capacity: int = DEFAULT_QUEUE_CAPACITY
    otlp_endpoint: str | None = None

    def __post_init__(self) -> None:
        for name in ("retention_days", "content_chars", "queue_capacity"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < (1 if name == "queue_capacity" else 0):
                raise ValueError(f"{name} must be a non-negative integer, not {value!r}")
        if isinstance(self.sample, bool) or not isinstance(self.sample, int | float) or not 0 <= self.sample <= 1:
            raise ValueError(f"sample must be a number from 0 to 1, not {self.sample!r}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ActivityConfig:
        """The configuration the OAM_ACTIVITY* variables give; ValueError naming a bad one."""
        env = os.environ if environ is None else environ
        switch = env.get("OAM_ACTIVITY", "on").strip().lower()
        if switch not in ("on", "off"):
            raise ValueError(f"OAM_ACTIVITY must be 'on' or 'off', not {switch!r}")
        return cls(
            enabled=switch == "on",
            retention_days=_env_int(env, "OAM_ACTIVITY_RETENTION_DAYS", DEFAULT_RETENTION_DAYS),
            content_chars=_env_int(env, "OAM_ACTIVITY_CONTENT_CHARS", DEFAULT_CONTENT_CHARS),
            sample=_env_float(env, "OAM_ACTIVITY_SAMPLE", 1.0),
            otlp_endpoint=_env_url(env, "OAM_OTLP_ENDPOINT"),
        )


def _env_int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, not {raw!r}") from None
    if value < 0:
        raise ValueError(f"{name} must not be negative, not {raw!r}")
    return value


def _env_url(env: Mapping[str, str], name: str) -> str | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{name} must be an http:// or https:// URL, not {raw!r}")
    return raw


def _env_float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number from 0 to 1, not {raw!r}") from None
    if not 0 <= value <= 1:
        raise ValueError(f"{name} must be a number from 0 to 1, not {raw!r}")
    return value


def default_caller() -> str:
    """OAM_CALLER, else the program's name ("support_bot.py", "gunicorn", "manage.py seed_demo", "python")."""
    name = os.environ.get("OAM_CALLER", "").strip()
    if name:
        check_id("OAM_CALLER", name)
        return name
    program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    if program == "manage.py" and len(sys.argv) > 1:  # a Django command: which one
        program = f"manage.py {sys.argv[1]}"
    try:
        return check_id("caller", program) if program != "-c" else "python"
    except ValueError:  # a program name no log could show (a line break, 600 bytes)
        return "python"


@dataclass
class _Draft:
    """A call as taken on the caller's path: who, when, what was asked and what the call returned,
    not yet flattened or formatted (the writer thread builds the event). `source` is a list of
    SearchResult or store hits, a ContextCard, a Summary, or the ActivityResults of a write."""

    kind: str
    call: str
    scope: Mapping[str, Any]
    request: Mapping[str, Any]
    source: Any
    acting: Acting | None
    cause: Mapping[str, Any] | None
    at: float
    """The wall-clock time the call started (time.time())."""
    started: float
    """The same on the performance counter, for the duration."""
    duration_ms: float = 0.0
    count: int | None = None
    trace_context: Any = None


class Capture:
    """What a retrieval hands the recorder when it returns (`done`)."""

    def __init__(self) -> None:
        self.source: Any = None
        self.finished = False

    def done(self, source: Any) -> None:
        self.source, self.finished = source, True


class ActivityRecorder:
    """Records one process's calls to one store (`store.activity`), under `caller` unless a block
    says otherwise (context.acting_as)."""

    def __init__(self, store: Any, config: ActivityConfig | None = None, caller: str | None = None) -> None:
        if caller is not None:
            check_id("caller", caller.strip() if isinstance(caller, str) else caller)
        self.store = store
        self.config = config or ActivityConfig.from_env()
        self.caller = caller.strip() if caller else default_caller()
        self._queue: queue.Queue[_Draft | None] = queue.Queue(self.config.queue_capacity)
        self._lock = threading.Lock()
        self._counts = {"recorded": 0, "dropped": 0, "failed": 0, "sampled_out": 0}
        self._last_error: tuple[str, str] | None = None
        self._writer: threading.Thread | None = None
        self._wake = threading.Event()
        self._closed = False
        self._next_purge = 0.0
        self._exporter = None
        if self.config.otlp_endpoint:
            from .otlp import SpanExporter

            self._exporter = SpanExporter(self.config.otlp_endpoint, document_chars=self.config.content_chars)
        atexit.register(_flush_at_exit, weakref.ref(self))

    # --- the caller's side ------------------------------------------------------------------

    @contextmanager
    def retrieval(
        self, kind: str, call: str, scope: Mapping[str, Any], request: Mapping[str, Any]
    ) -> Iterator[Capture]:
        """Record the retrieval in this block when it is the outermost one and returns; the block
        calls `capture.done(...)` with what it hands back."""
        capture = Capture()
        with recording_call() as outer:
            if not outer or is_quiet() or current_cause() is not None or not self.config.enabled:
                yield capture
                return
            at, started = time.time(), time.perf_counter()
            yield capture
            if not capture.finished:
                return
            if self.config.sample < 1 and random.random() >= self.config.sample:
                self._count("sampled_out")
                return
            draft = _Draft(kind, call, scope, request, capture.source, current_acting(), None, at, started)
            if self._exporter is not None:
                draft.trace_context = self._exporter.current_context()
            self._put(draft)

    def write(
        self,
        call: str,
        operation: str,
        records: Sequence[ActivityResult],
        scope: Mapping[str, Any] | None = None,
        detail: Mapping[str, Any] | None = None,
        count: int | None = None,
    ) -> _Draft | None:
        """The draft of a write that succeeded (records as (type, id) results), or None when
        nothing is recorded; the store queues it at once, or when its transaction commits."""
        if not self.config.enabled or is_quiet():
            return None
        request = {"operation": operation, **(detail or {})}
        now = time.perf_counter()
        return _Draft(
            "write",
            call,
            scope or {},
            request,
            list(records[:MAX_RESULTS]),
            current_acting(),
            current_cause(),
            time.time(),
            now,
            count=len(records) if count is None else count,
        )

    def queue(self, drafts: Sequence[_Draft]) -> None:
        for draft in drafts:
            self._put(draft)

    def audit(
        self,
        kind: str,
        call: str,
        records: Sequence[ActivityResult],
        scope: Mapping[str, Any],
        request: Mapping[str, Any],
        count: int,
        wait: bool = False,
    ) -> None:
        """Queue an audit event (one of AUDIT_KINDS): the caller of this block read these records
        whole, or downloaded `count` of them in an export. Never sampled out; with `wait` (an
        export's events, many at once) the put waits for room in a full queue, a second at most,
        where a page's view is dropped and counted rather than slow the page. Ids only: no text
        reaches the event."""
        if not self.config.enabled or is_quiet():
            return
        results = list(records[:MAX_RESULTS])
        draft = _Draft(kind, call, scope, request, results, current_acting(), None, time.time(), time.perf_counter())
        draft.count = count
        self._put(draft, wait=AUDIT_WAIT_SECONDS if wait else 0.0)

    def _put(self, draft: _Draft, wait: float = 0.0) -> None:
        if self._closed:
            return
        draft.duration_ms = round((time.perf_counter() - draft.started) * 1000, 3)
        try:
            if wait:
                if self._writer is None:
                    self._start_writer()
                self._queue.put(draft, timeout=wait)
            else:
                self._queue.put_nowait(draft)
        except queue.Full:
            self._count("dropped")
            return
        if self._writer is None:
            self._start_writer()

    def _count(self, name: str, by: int = 1) -> None:
        with self._lock:
            self._counts[name] += by

    # --- the writer's side ------------------------------------------------------------------

    def _start_writer(self) -> None:
        with self._lock:
            if self._writer is None:
                self._writer = threading.Thread(target=self._run, name="oam-activity-writer", daemon=True)
                self._writer.start()

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            batch = [first]
            if first is not None and self._queue.qsize() < BATCH_SIZE - 1:
                # The batch gathers while this thread sleeps: waiting on the queue instead would wake
                # it at every event, a thread switch that each recorded call would pay for.
                self._wake.wait(FLUSH_SECONDS)
                self._wake.clear()
            while batch[-1] is not None and len(batch) < BATCH_SIZE:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            drafts = [draft for draft in batch if draft is not None]
            try:
                if drafts:
                    self._write(drafts)
                self._purge_if_due()
            finally:
                for _ in batch:
                    self._queue.task_done()
            if batch[-1] is None:
                return

    def _write(self, drafts: list[_Draft]) -> None:
        events: list[ActivityEvent] = []
        try:
            events = [self._finish(draft) for draft in drafts]
            self.store.append_activity(events)
        except Exception as exc:  # recording must never fail a caller: counted and reported instead
            self._count("failed", len(drafts))
            with self._lock:
                self._last_error = (utc_now(), f"{type(exc).__name__}: {exc}")
            log.warning("activity: %d events not written: %s", len(drafts), exc)
            return
        self._count("recorded", len(events))
        if self._exporter is not None:
            for draft, event in zip(drafts, events, strict=True):
                if event.kind in RETRIEVAL_KINDS:
                    self._exporter.export(event, draft.trace_context, draft.source)

    def _finish(self, draft: _Draft) -> ActivityEvent:
        """The event of a call: its caller, results, text and tokens, from what the call returned."""
        source = draft.source
        content = ""
        if draft.kind == "write" or draft.kind in AUDIT_KINDS:
            results, count, tokens = source, draft.count or 0, 0
        else:
            if isinstance(source, list):  # search results, or a store's hits
                found = [item if isinstance(item, SearchResult) else result_from_hit(item, True) for item in source]
                texts = [result.formatted_content for result in found]
                results = search_results(found, texts)
                content = "\n".join(texts)
                tokens = tokens_of(results)
            else:  # a ContextCard or a Summary
                card_results = getattr(source, "results", None)
                results = search_results(card_results) if card_results is not None else []
                content = source.formatted_content
                tokens = estimate_tokens(content)
            count = sum(1 for result in results if result.hop == 0)
        acting = draft.acting
        return ActivityEvent(
            id=str(uuid.uuid4()),
            kind=draft.kind,
            call=draft.call,
            time=format_utc(datetime.fromtimestamp(draft.at, UTC)),
            caller=acting.caller if acting and acting.caller else self.caller,
            caller_kind=acting.caller_kind if acting and acting.caller else "agent",
            on_behalf_of=acting.on_behalf_of if acting else None,
            scope={key: draft.scope.get(key) for key in ("user_id", "agent_id", "thread_id")},
            request={key: json_safe(value) for key, value in draft.request.items()},
            results=tuple(results[:MAX_RESULTS]),
            result_count=count,
            content=content[: self.config.content_chars],
            content_chars=len(content),
            tokens=tokens,
            duration_ms=draft.duration_ms,
            cause=draft.cause,
            history_ref=acting.history_ref if acting else None,
        )

    def _purge_if_due(self) -> None:
        if not self.config.retention_days or time.monotonic() < self._next_purge:
            return
        self._next_purge = time.monotonic() + PURGE_EVERY_SECONDS
        try:
            self.purge()
        except Exception as exc:
            log.warning("activity: purge failed: %s", exc)

    # --- control ----------------------------------------------------------------------------

    def purge(self, now: datetime | None = None) -> int:
        """Delete the events older than the retention; returns how many went (0 when kept forever)."""
        if not self.config.retention_days:
            return 0
        before = (now or datetime.now(UTC)) - timedelta(days=self.config.retention_days)
        return self.store.purge_activity(format_utc(before))

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every queued event is written (or dropped); False if `timeout` ran out."""
        if self._writer is None:
            return True
        self._wake.set()
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)
        return True

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued, then stop the writer; later events are not recorded."""
        if self._closed:
            return
        self.flush(timeout)
        self._closed = True
        if self._writer is not None:
            try:
                self._queue.put(None, timeout=timeout)
            except queue.Full:
                return
            self._writer.join(timeout)
        if self._exporter is not None:
            self._exporter.shutdown()

    def stats(self) -> dict[str, Any]:
        """Events recorded, dropped (queue full), failed (the store refused them) and sampled out,
        with the queue's length and the last write error (time, message) if any."""
        with self._lock:
            counts: dict[str, Any] = dict(self._counts)
            counts["queued"] = self._queue.qsize()
            counts["last_error"] = self._last_error
        return counts


def _flush_at_exit(reference: Callable[[], ActivityRecorder | None]) -> None:
    recorder = reference()
    if recorder is not None and not recorder._closed:
        recorder.flush(timeout=5.0)


@contextmanager
def recorded_retrieval(
    store: Any, kind: str, call: str, scope: Mapping[str, Any], request: Mapping[str, Any]
) -> Iterator[Capture]:
    """Record a retrieval against `store` when its activity is recorded (else a capture nobody reads)."""
    recorder = getattr(store, "activity", None)
    if recorder is None:
        yield Capture()
        return
    with recorder.retrieval(kind, call, scope, request) as capture:
        yield capture


def given(**parameters: Any) -> dict[str, Any]:
    """A call's parameters as passed: those left at NOT_SET are left out."""
    from ..types import NOT_SET

    return {name: value for name, value in parameters.items() if value is not NOT_SET}
