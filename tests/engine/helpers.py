"""Small test doubles and assertions shared by the conformance suite."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from memory.engine import HashingEmbedder


class CountingEmbedder:
    """Wraps the default embedder and records every text it is asked to embed."""

    def __init__(self, dim: int = 64) -> None:
        self.inner = HashingEmbedder(dim)
        self.name = self.inner.name
        self.dim = self.inner.dim
        self.calls: list[list[str]] = []

    def embed(self, texts):
        texts = list(texts)
        self.calls.append(texts)
        return self.inner.embed(texts)

    @property
    def texts(self) -> list[str]:
        return [text for call in self.calls for text in call]

    def reset(self) -> None:
        self.calls.clear()


def parse_utc(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    assert parsed.tzinfo is not None and parsed.utcoffset() == timedelta(0), f"not a UTC timestamp: {value!r}"
    return parsed


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: Any


@contextmanager
def local_json_server(respond: Callable[[RecordedRequest], tuple[int, bytes]]) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 answering each POST with `respond(request)`; yields its /v1 URL.

    Adapters are tested against it rather than a mocked transport, so that the wire format,
    headers, timeouts and connection handling of httpx are exercised.
    """

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            request = RecordedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw))
            status, body = respond(request)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test); nothing left to answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


TASKS = ("memory_extraction", "memory_links", "thread_summary", "shortened_message", "image_caption")


class FakeMemoryLlm:
    """An OpenAI-compatible chat server on 127.0.0.1 that plays the engine's LLM.

    It tells the engine's requests apart by the title of the JSON schema they ask for (one of
    TASKS) and answers each with `answers[task](request)` (a JSON-able value), or with whatever
    `fail(task, how)` scripted: "http500", "malformed" (text that is not JSON) or "slow" (an
    answer after `slow_seconds`). `hold(task)` makes that task's requests wait until `release()`,
    which lets tests keep background work running. Every request is kept in `requests`.
    """

    def __init__(self) -> None:
        self.requests: list[tuple[str, RecordedRequest]] = []
        self.answers: dict[str, Callable[[RecordedRequest], Any]] = {
            "memory_extraction": lambda request: {"memories": []},
            "memory_links": lambda request: {"links": []},
            "thread_summary": lambda request: {"summary": f"summary #{self.count('thread_summary')}", "topics": []},
            "shortened_message": lambda request: {"text": "shortened"},
            "image_caption": lambda request: {"description": "a captioned image"},
        }
        self.failures: dict[str, str] = {}
        self.slow_seconds = 2.0
        self._gate = threading.Event()
        self._gate.set()
        self._held: set[str] = set()
        self._lock = threading.Lock()
        self.url = ""

    @staticmethod
    def task_of(request: RecordedRequest) -> str:
        schema = ((request.body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
        title = schema.get("title")
        if title in TASKS:
            return title
        system = request.body["messages"][0]["content"]
        return next((task for task in TASKS if f'"title": "{task}"' in system), "unknown")

    @staticmethod
    def user_text(request: RecordedRequest) -> str:
        content = request.body["messages"][-1]["content"]
        return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)

    def count(self, task: str) -> int:
        with self._lock:
            return sum(1 for name, _ in self.requests if name == task)

    def of(self, task: str) -> list[RecordedRequest]:
        with self._lock:
            return [request for name, request in self.requests if name == task]

    def fail(self, task: str, how: str | None) -> None:
        if how is None:
            self.failures.pop(task, None)
        else:
            self.failures[task] = how

    def hold(self, *tasks: str) -> None:
        self._held.update(tasks)
        self._gate.clear()

    def release(self) -> None:
        self._held.clear()
        self._gate.set()

    def respond(self, request: RecordedRequest) -> tuple[int, bytes]:
        task = self.task_of(request)
        with self._lock:
            self.requests.append((task, request))
        if task in self._held:
            self._gate.wait(timeout=30)
        how = self.failures.get(task)
        if how == "http500":
            return 500, b'{"error": {"message": "scripted failure"}}'
        if how == "slow":
            import time

            time.sleep(self.slow_seconds)
        if how == "malformed":
            content = "this is not JSON"
        else:
            content = json.dumps(self.answers[task](request)) if task in self.answers else "{}"
        body = {"choices": [{"message": {"role": "assistant", "content": content}}]}
        return 200, json.dumps(body).encode()


@contextmanager
def fake_memory_llm() -> Iterator[FakeMemoryLlm]:
    fake = FakeMemoryLlm()
    with local_json_server(fake.respond) as url:
        fake.url = url
        try:
            yield fake
        finally:
            fake.release()


def store_state(store) -> dict[str, list[tuple]]:
    """Every row of every table the store manages, in key order: two equal states are the same
    store, byte for byte (records, links, threads with their activity, meta and change log). The
    activity log is left out: the recorder appends to it from its own thread, at moments of its
    own (tests/engine/test_activity.py checks what it holds)."""
    state = {}
    for key, name in sorted(store.schema.names.items()):
        if key.startswith("activity"):
            continue
        rows = store._fetch(f'SELECT * FROM "{name}"')
        state[key] = sorted((tuple(sorted(row.items())) for row in rows), key=repr)
    return state


def padded_export(exported: str, total_lines: int) -> list[str]:
    """An export (a whole store's, with a memory) grown to `total_lines` lines, header included, by
    copies of its first memory under ids of their own ("copy-00000"…) after its records: a file
    of many batches whose every line is valid, to damage one far into it."""
    header, *lines = exported.splitlines(keepends=True)
    document = json.loads(header)
    counts = document["counts"]
    records = [json.loads(line)["record"] for line in lines[counts["threads"] : counts["threads"] + counts["records"]]]
    memory = next(r for r in records if r["record_type"] in ("memory", "fact", "preference", "guideline"))
    copies = total_lines - 1 - len(lines)
    counts["records"] += copies
    end = counts["threads"] + len(records)
    padding = [export_line({"record": dict(memory, id=f"copy-{n:05d}")}) for n in range(copies)]
    return [export_line(document), *lines[:end], *padding, *lines[end:]]


def export_line(value: Any) -> str:
    """One line of an export, written as the exporter writes it."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def write_long_line_export(path, line_bytes: int) -> None:
    """An export of one record whose line is `line_bytes` bytes long (its "\\n" apart), written a
    megabyte at a time so that no test holds it whole."""
    header = {"counts": {"records": 1, "relations": 0, "threads": 0}, "format": "oam-export", "scope": {}, "version": 1}
    prefix, suffix = b'{"record":{"content":"', b'"}}'
    fill, chunk = line_bytes - len(prefix) - len(suffix), b"x" * 2**20
    with open(path, "wb") as out:
        out.write(export_line(header).encode() + prefix)
        while fill > 0:
            out.write(chunk[: min(fill, len(chunk))])
            fill -= len(chunk)
        out.write(suffix + b"\n")
