"""Tests for memory.engine.embedders.

The OpenAI-compatible embedder is tested against a real HTTP server on 127.0.0.1 rather than a
mocked transport, so that the actual wire format, headers, timeouts and connection handling of
httpx are exercised.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory.engine.embedders import (
    Embedder,
    HashingEmbedder,
    OpenAICompatibleEmbedder,
    check_spec,
    embedder_from_spec,
    spec_of,
)

from .helpers import RecordedRequest, closed_port, local_json_server

REPO_ROOT = Path(__file__).resolve().parents[2]
API_KEY = "sk-test-secret-key-123"


# ---------------------------------------------------------------------------------------------
# HashingEmbedder
# ---------------------------------------------------------------------------------------------


def test_hashing_embedder_gives_the_same_vector_for_the_same_text() -> None:
    embedder = HashingEmbedder()
    first = embedder.embed(["I love pizza", "other text"])
    second = HashingEmbedder().embed(["I love pizza"])
    np.testing.assert_array_equal(first[0], second[0])


def test_hashing_embedder_gives_the_same_vector_in_another_python_process() -> None:
    # A different hash seed in the child proves no salted hash() leaks into the vectors.
    texts = ["I love pizza", "Ünïcödé straße café 123"]
    script = (
        "import json, sys\n"
        "from memory.engine.embedders import HashingEmbedder\n"
        "print(json.dumps(HashingEmbedder(64).embed(json.loads(sys.argv[1])).tolist()))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(REPO_ROOT)}
    completed = subprocess.run(
        [sys.executable, "-c", script, json.dumps(texts)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    child = np.asarray(json.loads(completed.stdout), dtype=np.float32)
    np.testing.assert_array_equal(child, HashingEmbedder(64).embed(texts))


def test_hashing_embedder_returns_float32_rows_of_unit_length() -> None:
    vectors = HashingEmbedder(128).embed(["one", "two words", "a somewhat longer sentence about pizza"])
    assert vectors.shape == (3, 128)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


def test_hashing_embedder_returns_an_empty_matrix_for_no_texts() -> None:
    vectors = HashingEmbedder(32).embed([])
    assert vectors.shape == (0, 32)
    assert vectors.dtype == np.float32


@pytest.mark.parametrize("text", ["", "   ", "?!, ..."])
def test_hashing_embedder_returns_a_zero_row_for_text_without_words(text: str) -> None:
    vectors = HashingEmbedder().embed([text, "pizza"])
    assert not vectors[0].any()
    assert vectors[1].any()


def test_hashing_embedder_returns_zero_rows_for_a_batch_without_any_words() -> None:
    vectors = HashingEmbedder(16).embed(["", "..."])
    assert vectors.shape == (2, 16)
    assert vectors.dtype == np.float32
    assert not vectors.any()


def test_hashing_embedder_places_similar_texts_closer_than_unrelated_ones() -> None:
    love, reordered, unrelated = HashingEmbedder().embed(
        ["I love pizza", "pizza is what I love", "quarterly tax filing deadline"]
    )
    assert float(love @ reordered) > 0.5
    assert float(love @ reordered) > float(love @ unrelated) + 0.4


def test_hashing_embedder_ignores_case_and_unicode_composition() -> None:
    composed, decomposed = HashingEmbedder().embed(["Café", "cafe\u0301"])
    np.testing.assert_allclose(composed, decomposed)


def test_hashing_embedder_has_a_name_that_records_its_dimension() -> None:
    assert HashingEmbedder().name == "hashing-384"
    assert HashingEmbedder(512).dim == 512
    assert isinstance(HashingEmbedder(), Embedder)


@pytest.mark.parametrize("dim", [0, 7, -1, 8.0, "384", True, None])
def test_hashing_embedder_rejects_an_invalid_dimension(dim: Any) -> None:
    with pytest.raises(ValueError, match="dim"):
        HashingEmbedder(dim)


def test_embedders_refuse_a_bare_string_instead_of_a_list() -> None:
    with pytest.raises(TypeError, match="single string"):
        HashingEmbedder().embed("pizza")
    with pytest.raises(TypeError, match="item 1"):
        HashingEmbedder().embed(["pizza", 3])  # type: ignore[list-item]


# ---------------------------------------------------------------------------------------------
# A real local embeddings server
# ---------------------------------------------------------------------------------------------


Reply = tuple[int, bytes]


def vectors_reply(request: RecordedRequest, dim: int = 4, reverse: bool = False) -> Reply:
    """A valid answer whose first component is the text's length, so tests can check row order."""
    items = [
        {"object": "embedding", "index": index, "embedding": [float(len(text))] + [0.5] * (dim - 1)}
        for index, text in enumerate(request.body["input"])
    ]
    if reverse:
        items.reverse()
    return 200, json.dumps({"object": "list", "data": items, "model": request.body["model"]}).encode()


@dataclass
class FakeEmbeddingsServer:
    """Records every request and answers with `reply`, which each test may replace."""

    url: str
    requests: list[RecordedRequest] = field(default_factory=list)
    reply: Callable[[RecordedRequest], Reply] = vectors_reply
    # Set at teardown so that handlers simulating a slow server stop waiting at once.
    released: threading.Event = field(default_factory=threading.Event)


@pytest.fixture
def server() -> Iterator[FakeEmbeddingsServer]:
    state: FakeEmbeddingsServer

    def respond(request: RecordedRequest) -> tuple[int, bytes]:
        state.requests.append(request)
        return state.reply(request)

    with local_json_server(respond) as url:
        state = FakeEmbeddingsServer(url=url)
        try:
            yield state
        finally:
            state.released.set()


def fast_embedder(server: FakeEmbeddingsServer, **kwargs: Any) -> OpenAICompatibleEmbedder:
    kwargs.setdefault("retry_backoff", 0.01)
    return OpenAICompatibleEmbedder(server.url, "test-model", **kwargs)


# ---------------------------------------------------------------------------------------------
# OpenAICompatibleEmbedder
# ---------------------------------------------------------------------------------------------


def test_openai_embedder_posts_the_model_and_inputs_with_a_bearer_token(server: FakeEmbeddingsServer) -> None:
    with fast_embedder(server, api_key=API_KEY) as embedder:
        vectors = embedder.embed(["a", "bb"])

    assert vectors.shape == (2, 4)
    assert vectors.dtype == np.float32
    [request] = server.requests
    assert request.path == "/v1/embeddings"
    assert request.body == {"model": "test-model", "input": ["a", "bb"]}
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert request.headers["content-type"] == "application/json"


def test_openai_embedder_sends_no_authorization_header_without_a_key(server: FakeEmbeddingsServer) -> None:
    with fast_embedder(server) as embedder:
        embedder.embed(["a"])
    assert "authorization" not in server.requests[0].headers


def test_openai_embedder_strips_a_trailing_slash_from_the_base_url(server: FakeEmbeddingsServer) -> None:
    with OpenAICompatibleEmbedder(server.url + "/", "test-model") as embedder:
        embedder.embed(["a"])
    assert server.requests[0].path == "/v1/embeddings"


def test_openai_embedder_orders_rows_by_the_response_index(server: FakeEmbeddingsServer) -> None:
    server.reply = lambda request: vectors_reply(request, reverse=True)
    with fast_embedder(server) as embedder:
        vectors = embedder.embed(["a", "bb", "ccc"])
    assert vectors[:, 0].tolist() == [1.0, 2.0, 3.0]


def test_openai_embedder_sends_inputs_in_batches(server: FakeEmbeddingsServer) -> None:
    with fast_embedder(server, batch_size=2) as embedder:
        vectors = embedder.embed(["a", "bb", "ccc", "dddd", "eeeee"])
    assert [request.body["input"] for request in server.requests] == [["a", "bb"], ["ccc", "dddd"], ["eeeee"]]
    assert vectors[:, 0].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_openai_embedder_learns_its_dimension_from_one_probe_request(server: FakeEmbeddingsServer) -> None:
    server.reply = lambda request: vectors_reply(request, dim=6)
    with fast_embedder(server) as embedder:
        assert embedder.dim == 6
        assert embedder.dim == 6
        assert embedder.embed([]).shape == (0, 6)
    assert [request.body["input"] for request in server.requests] == [["dimension probe"]]


def test_openai_embedder_learns_its_dimension_from_the_first_embedding_without_a_probe(
    server: FakeEmbeddingsServer,
) -> None:
    with fast_embedder(server) as embedder:
        embedder.embed(["a"])
        assert embedder.dim == 4
    assert len(server.requests) == 1


def test_openai_embedder_with_a_configured_dimension_sends_nothing_for_empty_input(
    server: FakeEmbeddingsServer,
) -> None:
    with fast_embedder(server, dim=4) as embedder:
        assert embedder.embed([]).shape == (0, 4)
        assert embedder.dim == 4
    assert server.requests == []


def test_openai_embedder_rejects_vectors_of_another_size_than_configured(server: FakeEmbeddingsServer) -> None:
    with fast_embedder(server, dim=8) as embedder, pytest.raises(ValueError, match=r"size 4.*size 8"):
        embedder.embed(["a"])


def test_openai_embedder_is_an_embedder_without_contacting_the_server() -> None:
    embedder = OpenAICompatibleEmbedder(f"http://127.0.0.1:{closed_port()}", "m")
    assert isinstance(embedder, Embedder)
    assert embedder.name == "openai:m"
    embedder.close()


@pytest.mark.parametrize("status", [429, 500, 503])
def test_openai_embedder_retries_transient_errors_then_succeeds(server: FakeEmbeddingsServer, status: int) -> None:
    server.reply = lambda request: (status, b"busy") if len(server.requests) < 3 else vectors_reply(request)
    with fast_embedder(server) as embedder:
        vectors = embedder.embed(["a"])
    assert vectors[0, 0] == 1.0
    assert len(server.requests) == 3


def test_openai_embedder_fails_after_three_attempts_without_leaking_the_key(server: FakeEmbeddingsServer) -> None:
    # The server echoes the Authorization header, as some real error pages do.
    server.reply = lambda request: (500, f"boom, you sent {request.headers['authorization']}".encode())
    with fast_embedder(server, api_key=API_KEY) as embedder, pytest.raises(RuntimeError) as excinfo:
        embedder.embed(["a"])

    message = str(excinfo.value)
    assert f"{server.url}/embeddings" in message
    assert "500" in message
    assert "3 attempts" in message
    assert API_KEY not in "".join(traceback.format_exception(excinfo.value))
    assert len(server.requests) == 3


def test_openai_embedder_does_not_retry_a_client_error(server: FakeEmbeddingsServer) -> None:
    server.reply = lambda request: (404, b'{"error": "model not found"}')
    with fast_embedder(server) as embedder, pytest.raises(RuntimeError, match=r"HTTP 404.*model not found"):
        embedder.embed(["a"])
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b'{"nope": []}',
        b'{"data": "x"}',
        b"[1, 2]",
        b'{"data": []}',
        b'{"data": [{"index": 0}]}',
        b'{"data": [{"index": 5, "embedding": [1.0]}]}',
        b'{"data": [{"index": 0, "embedding": ["a", "b"]}]}',
        b'{"data": [{"index": 0, "embedding": [1.0, null]}]}',
    ],
)
def test_openai_embedder_reports_a_malformed_response(server: FakeEmbeddingsServer, body: bytes) -> None:
    server.reply = lambda request: (200, body)
    with fast_embedder(server) as embedder, pytest.raises(RuntimeError, match=r"127\.0\.0\.1"):
        embedder.embed(["a"])
    assert len(server.requests) == 1


def test_openai_embedder_gives_up_on_a_server_that_is_too_slow(server: FakeEmbeddingsServer) -> None:
    def too_slow(request: RecordedRequest) -> Reply:
        server.released.wait(timeout=2)
        return vectors_reply(request)

    server.reply = too_slow
    started = time.monotonic()
    with fast_embedder(server, timeout=0.1) as embedder, pytest.raises(RuntimeError, match="timed out"):
        embedder.embed(["a"])
    assert time.monotonic() - started < 1.5
    assert len(server.requests) == 3


def test_openai_embedder_gives_up_on_a_server_that_is_not_listening() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    with (
        OpenAICompatibleEmbedder(url, "m", retry_backoff=0.01) as embedder,
        pytest.raises(RuntimeError, match=r"127\.0\.0\.1.*3 attempts.*connection error"),
    ):
        embedder.embed(["a"])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"base_url": "localhost:8000"}, "base_url"),
        ({"base_url": "ftp://example.com"}, "base_url"),
        ({"model": ""}, "model"),
        ({"dim": 0}, "dim"),
        ({"batch_size": 0}, "batch_size"),
    ],
)
def test_openai_embedder_rejects_invalid_settings(kwargs: dict[str, Any], match: str) -> None:
    arguments = {"base_url": "http://localhost:8000/v1", "model": "m", **kwargs}
    with pytest.raises(ValueError, match=match):
        OpenAICompatibleEmbedder(**arguments)


# ---------------------------------------------------------------------------------------------
# embedder_from_spec
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [None, "", "hashing", "  hashing  "])
def test_spec_defaults_to_the_hashing_embedder(spec: str | None) -> None:
    embedder = embedder_from_spec(spec)
    assert isinstance(embedder, HashingEmbedder)
    assert embedder.dim == 384


def test_spec_can_size_the_hashing_embedder() -> None:
    assert embedder_from_spec("hashing:512").name == "hashing-512"


def test_spec_accepts_the_hashing_embedders_own_name() -> None:
    # What the store records and the pages show: an administrator who copies it is not refused.
    assert embedder_from_spec("hashing-256").name == "hashing-256"
    assert embedder_from_spec("hashing-256").dim == 256


@pytest.mark.parametrize(
    ("name", "dim", "base_url", "spec"),
    [
        ("hashing-256", 256, None, "hashing:256"),
        ("hashing-384", None, None, "hashing:384"),
        ("openai:text-embedding-3-small", 1536, None, "openai:text-embedding-3-small:1536@<base_url>"),
        (
            "openai:nomic-embed-text:latest",
            768,
            "http://localhost:11434/v1",
            "openai:nomic-embed-text:latest:768@http://localhost:11434/v1",
        ),
        ("openai:m", None, "http://h/v1", "openai:m@http://h/v1"),
    ],
)
def test_spec_of_gives_the_setting_for_a_stored_embedders_name(name, dim, base_url, spec) -> None:
    assert spec_of(name, dim, base_url) == spec


def test_spec_of_round_trips_through_embedder_from_spec() -> None:
    assert embedder_from_spec(spec_of("hashing-256", 256)).name == "hashing-256"
    embedder = embedder_from_spec(spec_of("openai:nomic-embed-text:latest", 768, "http://localhost:11434/v1"))
    assert (embedder.name, embedder.dim) == ("openai:nomic-embed-text:latest", 768)
    embedder.close()


@pytest.mark.parametrize("name", ["bogus", "hashing-", "hashing-x", "openai:", "hashing:256"])
def test_spec_of_refuses_what_is_not_an_embedders_name(name: str) -> None:
    with pytest.raises(ValueError, match="not the name of an embedder"):
        spec_of(name)


@pytest.mark.parametrize("spec", ["hashing", "hashing:64", "hashing-64", "openai:m:8@http://localhost:1"])
def test_check_spec_accepts_what_embedder_from_spec_accepts(spec: str) -> None:
    check_spec(spec)  # builds nothing lasting, contacts nothing


@pytest.mark.parametrize("spec", ["bogus", "hashing:4", "openai:m@ftp://example.com", "openai:nomic-embed-text"])
def test_check_spec_refuses_with_the_accepted_forms(spec: str) -> None:
    with pytest.raises(ValueError, match=r"Invalid OAM_EMBEDDER value .*accepted forms: .*hashing:<dim>"):
        check_spec(spec)


def test_spec_builds_an_openai_embedder_with_the_key_from_the_environment(
    server: FakeEmbeddingsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OAM_EMBEDDER_API_KEY", API_KEY)
    embedder = embedder_from_spec(f"openai:text-embedding-3-small@{server.url}")
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert embedder.name == "openai:text-embedding-3-small"
    embedder.embed(["a"])
    embedder.close()
    assert server.requests[0].headers["authorization"] == f"Bearer {API_KEY}"
    assert server.requests[0].body["model"] == "text-embedding-3-small"


def test_spec_reads_a_trailing_number_as_the_dimension() -> None:
    embedder = embedder_from_spec("openai:nomic-embed-text:768@http://localhost:11434/v1")
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert (embedder.model, embedder.dim, embedder.base_url) == ("nomic-embed-text", 768, "http://localhost:11434/v1")
    embedder.close()


def test_spec_keeps_a_non_numeric_model_tag_in_the_model_name() -> None:
    embedder = embedder_from_spec("openai:nomic-embed-text:latest@http://localhost:11434/v1")
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert embedder.model == "nomic-embed-text:latest"
    embedder.close()


@pytest.mark.parametrize(
    "spec",
    [
        "bogus",
        "hashing:",
        "hashing:abc",
        "hashing:²",
        "openai:",
        "openai:model-without-url",
        "openai:@http://localhost:1234",
        "openai:model@",
        "sentence-transformers:all-MiniLM-L6-v2",
    ],
)
def test_spec_rejects_unknown_forms_and_lists_the_accepted_ones(spec: str) -> None:
    with pytest.raises(ValueError, match=r"accepted forms: .*hashing:<dim>.*openai:<model>@<base_url>"):
        embedder_from_spec(spec)


@pytest.mark.parametrize("spec", ["hashing:4", "openai:m@ftp://example.com", "openai:m:0@http://localhost"])
def test_spec_passes_on_invalid_values_as_value_errors(spec: str) -> None:
    with pytest.raises(ValueError):
        embedder_from_spec(spec)
