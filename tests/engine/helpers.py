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
