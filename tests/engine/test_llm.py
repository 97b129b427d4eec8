"""Tests for memory.engine.llm.

The OpenAI-compatible adapter is tested against a real HTTP server on 127.0.0.1 rather than a
mocked transport, so that the actual wire format, headers, timeouts and connection handling of
httpx are exercised. Each test scripts the server's answers as a queue.
"""

from __future__ import annotations

import json
import threading
import time
import traceback
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from memory.engine.llm import Llm, OpenAICompatibleLlm, llm_from_settings

from .helpers import RecordedRequest, closed_port, local_json_server

API_KEY = "sk-test-secret-llm-key-456"
MESSAGES = [{"role": "system", "content": "You extract facts."}, {"role": "user", "content": "I love pizza"}]
SCHEMA = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {"type": "string"}}},
    "required": ["facts"],
    "additionalProperties": False,
}


# ---------------------------------------------------------------------------------------------
# A real local chat-completions server
# ---------------------------------------------------------------------------------------------


@dataclass
class Reply:
    status: int = 200
    body: Any = b""  # bytes are sent as they are; anything else as JSON
    delay: float = 0.0


def chat(content: Any, status: int = 200) -> Reply:
    """An OpenAI-style chat completion whose assistant message is `content`."""
    return Reply(
        status,
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        },
    )


@dataclass
class FakeChatServer:
    """Records every request and answers with the next scripted reply (HTTP 599 once they run out)."""

    url: str
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    # Set at teardown so that handlers simulating a slow server stop waiting at once.
    released: threading.Event = field(default_factory=threading.Event)

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)


@pytest.fixture
def server() -> Iterator[FakeChatServer]:
    state: FakeChatServer
    lock = threading.Lock()

    def respond(request: RecordedRequest) -> tuple[int, bytes]:
        with lock:
            state.requests.append(request)
            reply = state.replies.popleft() if state.replies else Reply(599, b"no scripted reply left")
        if reply.delay:
            state.released.wait(timeout=reply.delay)
        body = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        return reply.status, body.replace(b"{auth}", request.headers.get("authorization", "").encode())

    with local_json_server(respond) as url:
        state = FakeChatServer(url=url)
        try:
            yield state
        finally:
            state.released.set()


def fast_llm(server: FakeChatServer, **kwargs: Any) -> OpenAICompatibleLlm:
    kwargs.setdefault("retry_backoff", 0.01)
    return OpenAICompatibleLlm(server.url, "test-model", **kwargs)


# ---------------------------------------------------------------------------------------------
# Requests and text completions
# ---------------------------------------------------------------------------------------------


def test_llm_posts_model_messages_and_temperature_with_a_bearer_token(server: FakeChatServer) -> None:
    server.script(chat("Hello!"))
    with fast_llm(server, api_key=API_KEY) as llm:
        assert llm.complete(MESSAGES) == "Hello!"

    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body == {"model": "test-model", "messages": MESSAGES, "temperature": 0}
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert request.headers["content-type"] == "application/json"


def test_llm_sends_max_tokens_and_no_authorization_without_a_key(server: FakeChatServer) -> None:
    server.script(chat("Hi"))
    with OpenAICompatibleLlm(server.url + "/", "test-model") as llm:
        assert llm.complete(MESSAGES, max_tokens=50) == "Hi"
    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["max_tokens"] == 50
    assert "authorization" not in request.headers
    assert "response_format" not in request.body


def test_llm_is_an_llm_without_contacting_the_server() -> None:
    llm = OpenAICompatibleLlm(f"http://127.0.0.1:{closed_port()}", "m")
    assert isinstance(llm, Llm)
    assert llm.name == "openai:m"
    assert API_KEY not in repr(llm)
    llm.close()


def test_llm_joins_content_parts(server: FakeChatServer) -> None:
    server.script(chat([{"type": "text", "text": "Hel"}, {"type": "text", "text": "lo"}]))
    with fast_llm(server) as llm:
        assert llm.complete(MESSAGES) == "Hello"


@pytest.mark.parametrize(
    "body",
    [b"not json", b"[1]", {"choices": []}, {"choices": [{"message": {"role": "assistant"}}]}, {"nope": 1}],
)
def test_llm_reports_a_malformed_response_envelope(server: FakeChatServer, body: Any) -> None:
    server.script(Reply(200, body))
    with fast_llm(server) as llm, pytest.raises(RuntimeError, match=r"Malformed.*127\.0\.0\.1"):
        llm.complete(MESSAGES)
    assert len(server.requests) == 1


def test_llm_refuses_invalid_messages() -> None:
    llm = OpenAICompatibleLlm("http://127.0.0.1:1/v1", "m")
    with pytest.raises(TypeError, match="sequence"):
        llm.complete("hello")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"messages\[0\]"):
        llm.complete([{"role": "user"}])
    with pytest.raises(ValueError, match="empty"):
        llm.complete([])
    with pytest.raises(ValueError, match="max_tokens"):
        llm.complete(MESSAGES, max_tokens=0)
    llm.close()


# ---------------------------------------------------------------------------------------------
# JSON completions
# ---------------------------------------------------------------------------------------------


def test_llm_asks_for_strict_json_schema_output_and_parses_it(server: FakeChatServer) -> None:
    server.script(chat('{"facts": ["likes pizza"]}'))
    with fast_llm(server) as llm:
        assert llm.complete_json(MESSAGES, SCHEMA) == {"facts": ["likes pizza"]}
    [request] = server.requests
    assert request.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "result", "schema": SCHEMA, "strict": True},
    }
    assert request.body["messages"] == MESSAGES


def test_llm_accepts_json_in_a_fenced_block(server: FakeChatServer) -> None:
    server.script(chat('Here you go:\n```json\n{"facts": ["a", "b"]}\n```\n'))
    with fast_llm(server) as llm:
        assert llm.complete_json(MESSAGES, SCHEMA) == {"facts": ["a", "b"]}
    assert len(server.requests) == 1


def test_llm_asks_again_after_malformed_json_then_succeeds(server: FakeChatServer) -> None:
    server.script(chat('{"facts": ["unterminated'), chat('["wrong", "top-level type"]'), chat('{"facts": []}'))
    with fast_llm(server) as llm:
        assert llm.complete_json(MESSAGES, SCHEMA) == {"facts": []}
    assert len(server.requests) == 3


def test_llm_raises_value_error_when_the_json_stays_malformed(server: FakeChatServer) -> None:
    server.script(*[chat("Sorry, I cannot produce JSON today. " * 10)] * 4)
    with fast_llm(server, max_attempts=4) as llm, pytest.raises(ValueError) as excinfo:
        llm.complete_json(MESSAGES, SCHEMA)
    message = str(excinfo.value)
    assert message.startswith("the model did not return valid JSON: ")
    assert "Sorry, I cannot produce JSON today." in message
    assert len(message) < 500
    assert len(server.requests) == 4


@pytest.mark.parametrize(
    ("schema_type", "text", "expected"),
    [("array", "[1, 2]", [1, 2]), ("integer", "7", 7), ("boolean", "true", True), (["string", "null"], "null", None)],
)
def test_llm_checks_the_top_level_type(server: FakeChatServer, schema_type: Any, text: str, expected: Any) -> None:
    server.script(chat(text))
    with fast_llm(server) as llm:
        assert llm.complete_json(MESSAGES, {"type": schema_type}) == expected


def test_llm_does_not_take_true_for_an_integer(server: FakeChatServer) -> None:
    server.script(chat("true"), chat("NaN"))
    with fast_llm(server, max_attempts=2) as llm, pytest.raises(ValueError, match="valid JSON"):
        llm.complete_json(MESSAGES, {"type": "integer"})


def test_llm_falls_back_to_json_object_then_no_response_format_and_remembers(server: FakeChatServer) -> None:
    server.script(
        Reply(400, {"error": {"message": "response_format type json_schema is not supported"}}),
        Reply(400, {"error": {"message": "Unknown parameter: 'response_format'"}}),
        chat('{"facts": ["x"]}'),
        chat('{"facts": ["y"]}'),
    )
    with fast_llm(server) as llm:
        assert llm.complete_json(MESSAGES, SCHEMA) == {"facts": ["x"]}
        assert llm.complete_json(MESSAGES, SCHEMA) == {"facts": ["y"]}

    first, second, third, fourth = (request.body for request in server.requests)
    assert first["response_format"]["type"] == "json_schema"
    assert second["response_format"] == {"type": "json_object"}
    assert "response_format" not in third
    assert "response_format" not in fourth  # remembered: no more rejected attempts
    # Without schema enforcement the schema is spelled out in the (single, leading) system message.
    assert [message["role"] for message in third["messages"]] == ["system", "user"]
    assert third["messages"][0]["content"].startswith("You extract facts.")
    assert '"facts"' in third["messages"][0]["content"]
    assert "JSON" in second["messages"][0]["content"]


def test_llm_does_not_fall_back_on_an_unrelated_400(server: FakeChatServer) -> None:
    server.script(Reply(400, {"error": {"message": "context length exceeded"}}))
    with fast_llm(server) as llm, pytest.raises(RuntimeError, match=r"HTTP 400.*context length"):
        llm.complete_json(MESSAGES, SCHEMA)
    assert len(server.requests) == 1


# ---------------------------------------------------------------------------------------------
# Retries and failures
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 500, 503])
def test_llm_retries_transient_errors_then_succeeds(server: FakeChatServer, status: int) -> None:
    server.script(Reply(status, b"busy"), Reply(status, b"busy"), chat("done"))
    with fast_llm(server) as llm:
        assert llm.complete(MESSAGES) == "done"
    assert len(server.requests) == 3


def test_llm_fails_after_max_attempts_without_leaking_the_key(server: FakeChatServer) -> None:
    # The server echoes the Authorization header, as some real error pages do.
    server.script(*[Reply(500, b"boom, you sent {auth}")] * 2)
    with fast_llm(server, api_key=API_KEY, max_attempts=2) as llm, pytest.raises(RuntimeError) as excinfo:
        llm.complete(MESSAGES)
    message = str(excinfo.value)
    assert f"{server.url}/chat/completions" in message
    assert "HTTP 500" in message
    assert "2 attempts" in message
    assert "***" in message
    assert API_KEY not in "".join(traceback.format_exception(excinfo.value))
    assert len(server.requests) == 2


def test_llm_keeps_the_key_out_of_client_errors_and_json_errors(server: FakeChatServer) -> None:
    server.script(Reply(401, b"bad key {auth}"), chat("not json, key {auth}"))
    with fast_llm(server, api_key=API_KEY, max_attempts=1) as llm:
        with pytest.raises(RuntimeError, match="HTTP 401") as client_error:
            llm.complete(MESSAGES)
        with pytest.raises(ValueError, match="valid JSON") as json_error:
            llm.complete_json(MESSAGES, SCHEMA)
    for excinfo in (client_error, json_error):
        assert API_KEY not in "".join(traceback.format_exception(excinfo.value))


def test_llm_does_not_retry_a_client_error(server: FakeChatServer) -> None:
    server.script(Reply(404, {"error": "model not found"}))
    with fast_llm(server) as llm, pytest.raises(RuntimeError, match=r"HTTP 404.*model not found"):
        llm.complete_json(MESSAGES, SCHEMA)
    assert len(server.requests) == 1


def test_llm_gives_up_on_a_server_that_is_too_slow(server: FakeChatServer) -> None:
    server.script(*[Reply(200, chat("late").body, delay=2.0)] * 3)
    started = time.monotonic()
    with fast_llm(server, timeout=0.1) as llm, pytest.raises(RuntimeError, match=r"127\.0\.0\.1.*timed out"):
        llm.complete(MESSAGES)
    assert time.monotonic() - started < 1.5
    assert len(server.requests) == 3


def test_llm_gives_up_on_a_server_that_is_not_listening() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    with (
        OpenAICompatibleLlm(url, "m", retry_backoff=0.01) as llm,
        pytest.raises(RuntimeError, match=r"127\.0\.0\.1.*3 attempts.*connection error"),
    ):
        llm.complete(MESSAGES)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"base_url": "localhost:8000"}, "base_url"),
        ({"base_url": "ftp://example.com"}, "base_url"),
        ({"model": " "}, "model"),
        ({"timeout": 0}, "timeout"),
        ({"max_attempts": 0}, "max_attempts"),
        ({"retry_backoff": -1}, "retry_backoff"),
    ],
)
def test_llm_rejects_invalid_settings(kwargs: dict[str, Any], match: str) -> None:
    arguments = {"base_url": "http://localhost:8000/v1", "model": "m", **kwargs}
    with pytest.raises(ValueError, match=match):
        OpenAICompatibleLlm(**arguments)


# ---------------------------------------------------------------------------------------------
# llm_from_settings
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("base_url", [None, "", "   "])
def test_settings_without_a_base_url_turn_the_llm_off(base_url: str | None) -> None:
    assert llm_from_settings(base_url, "some-model", API_KEY) is None


@pytest.mark.parametrize("model", [None, "", "  "])
def test_settings_with_a_base_url_but_no_model_are_rejected(model: str | None) -> None:
    with pytest.raises(ValueError, match="model"):
        llm_from_settings("http://localhost:11434/v1", model, None)


def test_settings_build_an_openai_compatible_llm(server: FakeChatServer) -> None:
    server.script(chat("ok"), chat("ok"))
    llm = llm_from_settings(f" {server.url} ", " llama3.2:3b ", API_KEY)
    assert isinstance(llm, OpenAICompatibleLlm)
    with llm:
        assert llm.name == "openai:llama3.2:3b"
        assert llm.complete(MESSAGES) == "ok"
    assert server.requests[0].headers["authorization"] == f"Bearer {API_KEY}"

    keyless = llm_from_settings(server.url, "m", "")
    assert keyless is not None
    with keyless:
        keyless.complete(MESSAGES)
    assert "authorization" not in server.requests[1].headers


def test_settings_reject_a_base_url_without_a_scheme() -> None:
    with pytest.raises(ValueError, match="base_url"):
        llm_from_settings("localhost:11434", "m", None)
