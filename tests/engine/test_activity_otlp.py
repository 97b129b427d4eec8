"""Retrievals exported as OpenTelemetry spans (engine/activity/otlp.py), received by a local
OTLP/HTTP collector: a thread serving POST /v1/traces on loopback that decodes each body."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider

from memory.engine import ActivityConfig, AgentMemory, HashingEmbedder, SchemaPolicy, SQLiteMemoryStore, connect


class Collector:
    """An OTLP/HTTP receiver on 127.0.0.1 that keeps every span it is sent and answers `status`."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.paths: list[str] = []
        self.spans: list = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                collector.paths.append(self.path)
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                for resource_spans in request.resource_spans:
                    resource = {item.key: item.value.string_value for item in resource_spans.resource.attributes}
                    for scope_spans in resource_spans.scope_spans:
                        collector.spans.extend((resource, span) for span in scope_spans.spans)
                self.send_response(collector.status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def collector() -> Iterator[Collector]:
    receiver = Collector()
    yield receiver
    receiver.close()


def attributes_of(span) -> dict:
    """A span's attributes as plain values."""
    values = {}
    for item in span.attributes:
        value = item.value
        values[item.key] = getattr(value, value.WhichOneof("value"))
    return values


def documents_of(attributes: dict) -> list[dict]:
    """The retrieval.documents.{i}.document.* attributes, as a list of {field: value} in index order."""
    documents: dict[int, dict] = {}
    for key, value in attributes.items():
        if key.startswith("retrieval.documents."):
            index, field = key.removeprefix("retrieval.documents.").split(".document.")
            documents.setdefault(int(index), {})[field] = value
    return [documents[index] for index in sorted(documents)]


def memory_exporting_to(endpoint: str, caller: str | None = None) -> AgentMemory:
    """A client over a new in-memory store whose retrievals go to `endpoint` as spans."""
    store = SQLiteMemoryStore(":memory:", embedder=HashingEmbedder(64), schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)
    return AgentMemory(store, caller=caller, activity_config=ActivityConfig(otlp_endpoint=endpoint))


def test_a_search_arrives_as_a_retriever_span_with_its_query_and_documents_in_rank_order(collector, monkeypatch):
    monkeypatch.setenv("OAM_OTLP_ENDPOINT", collector.url)
    memory = connect("sqlite://:memory:", embedder=None, caller="support-bot")
    for text in ("Ada is allergic to peanuts", "Ada prefers window seats", "Ada lives in Lyon"):
        memory.add_memory(text, user_id="ada", agent_id="bot")
    results = memory.search("peanut allergy", user_id="ada", max_results=3)
    memory.activity.flush()
    event_id = memory.list_activity(kind="search")[0].id
    memory.close()

    assert collector.paths == ["/v1/traces"]
    assert len(collector.spans) == 1, "one span per retrieval, none for the writes"
    resource, span = collector.spans[0]
    assert resource["service.name"] == "oam-memory"
    assert span.name == "memory.search"
    attributes = attributes_of(span)
    assert attributes["openinference.span.kind"] == "RETRIEVER"
    assert attributes["input.value"] == "peanut allergy"
    assert attributes["oam.caller"] == "support-bot"
    assert attributes["oam.event_id"] == event_id
    assert attributes["oam.user_id"] == "ada"
    assert attributes["user.id"] == "ada"
    assert attributes["oam.tokens"] > 0
    documents = documents_of(attributes)
    assert [document["id"] for document in documents] == [result.record.id for result in results]
    assert [document["score"] for document in documents] == pytest.approx(
        [1 - result.distance for result in results], abs=1e-6
    )
    assert [document["content"] for document in documents] == [result.record.content for result in results]
    metadata = [json.loads(document["metadata"]) for document in documents]
    assert [item["rank"] for item in metadata] == [1, 2, 3]
    assert {item["record_type"] for item in metadata} == {"memory"}
    assert all(item["status"] == "valid" and "distance" in item["scores"] for item in metadata)
    assert span.end_time_unix_nano >= span.start_time_unix_nano > 0


def test_a_memory_reached_through_a_link_follows_the_result_that_reached_it(collector):
    memory = memory_exporting_to(collector.url)
    allergy = memory.add_memory("Ada is allergic to peanuts", user_id="ada", memory_id="allergy")
    memory.add_memory("Ada carries an adrenaline pen", user_id="ada", memory_id="pen")
    memory.link_records(allergy, "memory", "pen", "memory", "explains")
    [result] = memory.search("peanuts", user_id="ada", max_results=1, num_hops=1)
    memory.close()
    assert [child.record.id for _, child in result.linked_results] == ["pen"]

    [(_, span)] = collector.spans
    documents = documents_of(attributes_of(span))
    assert [document["id"] for document in documents] == ["allergy", "pen"]
    assert documents[1]["content"] == "Ada carries an adrenaline pen"
    linked = json.loads(documents[1]["metadata"])
    assert (linked["rank"], linked["hop"], linked["path"]) == (1, 1, ["allergy", "explains", "pen"])


def test_a_context_card_span_describes_the_request_and_carries_the_card_text(collector):
    memory = memory_exporting_to(collector.url, caller="support-bot")
    thread = memory.create_thread(user_id="ada", agent_id="bot")
    thread.add_memory("Ada is allergic to peanuts")
    thread.add_messages([{"role": "user", "content": "What about peanuts?"}])
    card = thread.get_context_card(token_budget=500)
    memory.close()

    [(_, span)] = collector.spans
    assert span.name == "memory.context_card"
    attributes = attributes_of(span)
    assert attributes["openinference.span.kind"] == "RETRIEVER"
    asked = json.loads(attributes["input.value"])
    assert asked["call"] == "Thread.get_context_card"
    assert asked["thread_id"] == thread.thread_id
    assert asked["token_budget"] == 500
    assert attributes["output.value"] == card.formatted_content
    assert attributes["session.id"] == thread.thread_id
    assert [document["id"] for document in documents_of(attributes)] == [result.record.id for result in card.results]


def test_the_span_continues_the_trace_the_agent_has_active(collector):
    memory = memory_exporting_to(collector.url)
    memory.add_memory("Ada is allergic to peanuts", user_id="ada")
    agent_tracer = TracerProvider().get_tracer("agent")  # the agent's own, not registered globally
    with agent_tracer.start_as_current_span("answer the user") as parent:
        memory.search("peanuts", user_id="ada")
    memory.search("peanuts again", user_id="ada")  # outside any span: a trace of its own
    memory.close()

    spans = {attributes_of(span)["input.value"]: span for _, span in collector.spans}
    child, alone = spans["peanuts"], spans["peanuts again"]
    assert child.trace_id == parent.get_span_context().trace_id.to_bytes(16, "big")
    assert child.parent_span_id == parent.get_span_context().span_id.to_bytes(8, "big")
    assert alone.trace_id != child.trace_id
    assert alone.parent_span_id == b""


def test_a_base_url_and_a_full_traces_url_reach_the_same_path(collector):
    for endpoint in (collector.url + "/", collector.url + "/v1/traces"):
        memory = memory_exporting_to(endpoint)
        memory.search("anything", user_id="ada")
        memory.close()
    assert collector.paths == ["/v1/traces", "/v1/traces"]


@pytest.mark.parametrize("collector_state", ["answers 500", "is down"])
def test_a_failing_collector_never_fails_a_search_nor_the_recording(collector_state, monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "1")  # no long retries at close()
    receiver = Collector(status=500)
    url = receiver.url
    if collector_state == "is down":
        receiver.close()
    try:
        memory = memory_exporting_to(url)
        memory.add_memory("Ada is allergic to peanuts", user_id="ada")
        results = memory.search("peanuts", user_id="ada")
        memory.close()  # sends the batched span: refused, or not reaching anyone
        assert [result.content for result in results] == ["Ada is allergic to peanuts"]
        assert memory.activity.stats()["recorded"] == 2
        assert memory.activity.stats()["failed"] == 0
        if collector_state == "answers 500":
            assert len(receiver.spans) == 1, "the span was sent, and refused"
    finally:
        if collector_state == "answers 500":
            receiver.close()


@pytest.mark.parametrize("endpoint", ["localhost:4318", "ftp://collector/v1/traces", "http://"])
def test_an_endpoint_that_is_not_an_http_url_is_refused_naming_the_variable(endpoint):
    with pytest.raises(ValueError, match="OAM_OTLP_ENDPOINT"):
        ActivityConfig.from_env({"OAM_OTLP_ENDPOINT": endpoint})


def test_without_an_endpoint_nothing_is_exported():
    assert ActivityConfig.from_env({}).otlp_endpoint is None
    assert ActivityConfig.from_env({"OAM_OTLP_ENDPOINT": " http://localhost:4318 "}).otlp_endpoint == (
        "http://localhost:4318"
    )
