"""Retrievals as OpenTelemetry spans, sent to an OTLP/HTTP collector (OAM_OTLP_ENDPOINT).

So that a memory read shows up inside the agent's own trace in Langfuse, Arize Phoenix or any
OTLP collector: each recorded retrieval becomes one span, a child of the span the agent had
active when it called the engine (its context is taken on the caller's thread, `current_context`),
with the attributes of the OpenInference retrieval conventions that those tools display
(`openinference.span.kind` RETRIEVER, `input.value`, `retrieval.documents.{i}.document.*`) and
the activity log's own (`oam.*`).

The exporter has its own TracerProvider, so that an agent's global one (or its absence) is left
as it is; spans go through a BatchSpanProcessor, whose thread sends them. The endpoint is the
collector's base URL ("http://localhost:4318", "http://localhost:6006" for Phoenix) to which
/v1/traces is added, or the full traces URL ending in /v1/traces, used as it is. The standard
OTEL_EXPORTER_OTLP_TRACES_HEADERS / OTEL_EXPORTER_OTLP_HEADERS (an API key), ..._TIMEOUT and
OTEL_BSP_* variables apply; OTEL_SERVICE_NAME names the service (default "oam-memory").

Nothing here raises into the engine: a span that cannot be built is logged and skipped, and a
collector that is down or refuses a batch is the SDK's to log.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from opentelemetry import context as otel_context
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind

from ..search import SearchResult
from .events import ActivityEvent, ActivityResult

log = logging.getLogger(__name__)

TRACES_PATH = "/v1/traces"
DEFAULT_SERVICE_NAME = "oam-memory"
SPAN_NAMES = {"search": "memory.search", "card": "memory.context_card", "summary": "memory.summary"}
MAX_DOCUMENTS = 100
"""Documents per span: each is four attributes, and collectors refuse oversized spans."""
OTHER_ATTRIBUTES = 32
"""Room for the span's attributes other than its documents (the SDK's default limit is 128)."""
DEFAULT_DOCUMENT_CHARS = 20_000


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL of `endpoint`: a base URL gains /v1/traces, a URL already ending
    in it is kept; ValueError unless it is an http(s) URL with a host."""
    parts = urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"the OTLP endpoint must be an http:// or https:// URL, not {endpoint!r}")
    url = endpoint.strip().rstrip("/")
    return url if url.endswith(TRACES_PATH) else url + TRACES_PATH


class SpanExporter:
    """Sends each recorded retrieval to the collector at `endpoint` as one span; texts of the
    retrieved documents are cut at `document_chars`."""

    def __init__(self, endpoint: str, document_chars: int = DEFAULT_DOCUMENT_CHARS) -> None:
        self.endpoint = traces_url(endpoint)
        self.document_chars = document_chars
        service_name = os.environ.get("OTEL_SERVICE_NAME", "").strip() or DEFAULT_SERVICE_NAME
        self._provider = TracerProvider(
            resource=Resource.create({"service.name": service_name}),
            span_limits=SpanLimits(max_span_attributes=OTHER_ATTRIBUTES + 4 * MAX_DOCUMENTS),
        )
        self._provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=self.endpoint)))
        self._tracer = self._provider.get_tracer("memory.engine.activity")

    def current_context(self) -> Any:
        """The caller's OpenTelemetry context (its active span, if any), taken on its own thread."""
        return otel_context.get_current()

    def export(self, event: ActivityEvent, context: Any = None, source: Any = None) -> None:
        """Queue the span of a retrieval event, a child of the span active in `context`; `source`
        is what the call returned (search results, a card), read for the documents' texts."""
        try:
            start = _nanoseconds(event.time)
            span = self._tracer.start_span(
                SPAN_NAMES.get(event.kind, f"memory.{event.kind}"),
                context=context,
                kind=SpanKind.INTERNAL,
                attributes=self.attributes(event, record_texts(source)),
                start_time=start,
            )
            span.end(end_time=start + round(event.duration_ms * 1_000_000))
        except Exception as exc:  # exporting must never fail the recorder's writer
            log.warning("activity: event %s not exported as a span: %s", event.id, exc)

    def attributes(self, event: ActivityEvent, texts: Mapping[str, str]) -> dict[str, Any]:
        """The span's attributes: OpenInference's (RETRIEVER, the input, the documents in the
        order returned) and the activity log's (oam.*)."""
        scope = event.scope
        attributes: dict[str, Any] = {
            "openinference.span.kind": "RETRIEVER",
            "oam.event_id": event.id,
            "oam.call": event.call,
            "oam.kind": event.kind,
            "oam.caller": event.caller,
            "oam.caller_kind": event.caller_kind,
            "oam.tokens": event.tokens,
            "oam.result_count": event.result_count,
            "oam.request": json.dumps(event.request, sort_keys=True, default=str),
        }
        if event.kind == "search":
            attributes["input.value"] = event.query
            attributes["input.mime_type"] = "text/plain"
        else:  # a card or a summary: what was asked of which thread
            asked = {"call": event.call, "thread_id": scope.get("thread_id"), **event.request}
            attributes["input.value"] = json.dumps(asked, sort_keys=True, default=str)
            attributes["input.mime_type"] = "application/json"
            attributes["output.value"] = event.content
            attributes["output.mime_type"] = "text/plain"
        for key in ("user_id", "agent_id", "thread_id"):
            if scope.get(key):
                attributes[f"oam.{key}"] = scope[key]
        if scope.get("user_id"):
            attributes["user.id"] = scope["user_id"]
        if scope.get("thread_id"):
            attributes["session.id"] = scope["thread_id"]
        if event.on_behalf_of:
            attributes["oam.on_behalf_of"] = event.on_behalf_of
        for index, result in enumerate(event.results[:MAX_DOCUMENTS]):
            attributes.update(self._document(index, result, texts.get(result.record_id)))
        return attributes

    def _document(self, index: int, result: ActivityResult, text: str | None) -> dict[str, Any]:
        prefix = f"retrieval.documents.{index}.document"
        document: dict[str, Any] = {f"{prefix}.id": result.record_id}
        relevance = relevance_of(result)
        if relevance is not None:
            document[f"{prefix}.score"] = relevance
        if text is not None:
            document[f"{prefix}.content"] = text[: self.document_chars]
        metadata = {
            "record_type": result.record_type,
            "rank": result.rank,
            "status": result.status,
            "version": result.version,
            "scores": dict(result.scores),
            "tokens": result.tokens,
            "hop": result.hop,
            "path": list(result.path),
        }
        document[f"{prefix}.metadata"] = json.dumps(metadata, default=str)
        return document

    def shutdown(self) -> None:
        """Send the spans still batched (waiting at most the exporter's timeout), then stop."""
        try:
            self._provider.shutdown()
        except Exception as exc:
            log.warning("activity: the span exporter did not shut down cleanly: %s", exc)


def relevance_of(result: ActivityResult) -> float | None:
    """1 - distance: higher is better for every strategy (a vector search's cosine similarity, a
    hybrid search's fused score over the best possible); None where there is no distance."""
    distance = result.scores.get("distance")
    if not isinstance(distance, int | float) or math.isnan(distance):
        return None
    return round(1.0 - float(distance), 6)


def record_texts(source: Any) -> dict[str, str]:
    """Each returned record's text by its id: from search results (or a store's (record,
    distance) hits) and the records linked to them, or a card's results; a summary has none."""
    items: Sequence[Any] = source if isinstance(source, list) else getattr(source, "results", None) or []
    texts: dict[str, str] = {}
    pending = list(items)
    while pending:
        item = pending.pop()
        record = item.record if isinstance(item, SearchResult) else item[0]
        linked = item.linked_results if isinstance(item, SearchResult) else getattr(record, "linked_results", [])
        content = getattr(record, "content", None)
        if isinstance(content, str):
            texts[record.id] = content
        pending.extend(child for _, child in linked)
    return texts


def _nanoseconds(iso_time: str) -> int:
    moment = datetime.fromisoformat(iso_time)
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1_000
