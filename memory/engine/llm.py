"""Chat LLMs: the `Llm` protocol and an adapter for OpenAI-compatible chat-completions servers.

`OpenAICompatibleLlm` talks to any server that speaks the OpenAI `POST /chat/completions` protocol
(OpenAI, OCI Generative AI's compatible endpoint, vLLM, Ollama, llama.cpp server, LM Studio...).
`complete_json` asks for structured output and degrades gracefully on servers that do not support
JSON-schema response formats. `llm_from_settings` turns the optional LLM settings into an adapter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, Self, runtime_checkable

import httpx

from .http import ERROR_SNIPPET_CHARS, OpenAICompatibleEndpoint


@runtime_checkable
class Llm(Protocol):
    """What the engine needs from a chat model.

    `name` is a stable identity (for logs and records of what produced a result). Messages are
    OpenAI-style mappings with a "role" string and a "content" that is a string or a list of
    content parts ({"type": "text", "text": ...} or {"type": "image_url", "image_url": {"url":
    "data:image/png;base64,..."}}), which vision models read.
    """

    @property
    def name(self) -> str: ...

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        json_schema: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """Return the assistant's text; with `json_schema`, ask the server for JSON matching it."""
        ...

    def complete_json(
        self,
        messages: Sequence[Mapping[str, str]],
        json_schema: Mapping[str, Any],
        *,
        max_tokens: int | None = None,
    ) -> Any:
        """Return the parsed JSON answer, whose top-level type matches the schema's "type"."""
        ...


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------

_EXCERPT_CHARS = 120

# Ways of asking for JSON, best first. Servers differ: OpenAI and vLLM take "json_schema", older
# or smaller servers only "json_object", and some reject any response_format at all.
_JSON_SCHEMA, _JSON_OBJECT, _NO_FORMAT = "json_schema", "json_object", None
_FORMAT_MODES: tuple[str | None, ...] = (_JSON_SCHEMA, _JSON_OBJECT, _NO_FORMAT)
_FORMAT_COMPLAINT = re.compile(r"response_format|json_schema|json_object|response format", re.IGNORECASE)

_FENCED_BLOCK = re.compile(r"```[ \t]*(?:json)?[ \t]*\r?\n?(.*?)```", re.DOTALL | re.IGNORECASE)

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "null": (type(None),),
}


def _check_messages(messages: Sequence[Mapping[str, str]]) -> list[dict[str, Any]]:
    # A bare string is itself a Sequence; sending it would fail confusingly on the server.
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise TypeError("messages must be a sequence of {'role': ..., 'content': ...} mappings")
    checked: list[dict[str, Any]] = []
    for position, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise TypeError(f"messages[{position}] is {type(message).__name__}, not a mapping")
        content = message.get("content")
        parts_ok = isinstance(content, list) and bool(content) and all(isinstance(part, Mapping) for part in content)
        if not isinstance(message.get("role"), str) or not (isinstance(content, str) or parts_ok):
            raise TypeError(
                f'messages[{position}] needs a string "role" and a "content" that is a string '
                "or a non-empty list of content-part mappings"
            )
        checked.append(dict(message))
    if not checked:
        raise ValueError("messages must not be empty")
    return checked


def _check_max_tokens(max_tokens: int | None) -> None:
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1):
        raise ValueError(f"max_tokens must be a positive integer or None, got {max_tokens!r}")


def _matches_type(value: Any, schema: Mapping[str, Any]) -> bool:
    """Whether `value` has the schema's top-level "type" (a name or a list of names); no type: yes."""
    expected = schema.get("type")
    if expected is None:
        return True
    names = [expected] if isinstance(expected, str) else list(expected)
    for name in names:
        types = _JSON_TYPES.get(name)
        if types is None:
            return True  # an unknown type name: nothing to check against
        # bool is an int subclass, but JSON true is not a number.
        if isinstance(value, types) and not (isinstance(value, bool) and name in ("number", "integer")):
            return True
    return False


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _parse_json_text(text: str) -> Any:
    """Parse the model's answer as JSON, also when wrapped in a ```json fenced block."""
    stripped = text.strip()
    try:
        return json.loads(stripped, parse_constant=_reject_constant)
    except ValueError:
        fenced = _FENCED_BLOCK.search(stripped)
        if fenced is None:
            raise
        return json.loads(fenced.group(1).strip(), parse_constant=_reject_constant)


def _json_instruction(schema: Mapping[str, Any]) -> str:
    return "Answer with a single JSON value only, with no other text, that matches this JSON schema:\n" + json.dumps(
        schema, ensure_ascii=False
    )


def _with_instruction(messages: list[dict[str, Any]], instruction: str) -> list[dict[str, Any]]:
    """Add `instruction` to the leading system message, or put one first (some templates allow only one)."""
    if messages[0].get("role") == "system" and isinstance(messages[0]["content"], str):
        first = {**messages[0], "content": f"{messages[0]['content']}\n\n{instruction}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": instruction}, *messages]


# ---------------------------------------------------------------------------------------------
# OpenAICompatibleLlm
# ---------------------------------------------------------------------------------------------


class OpenAICompatibleLlm:
    """A chat model behind a server implementing the OpenAI `POST /chat/completions` API.

    Requests use temperature 0 for reproducible answers. Failures that are usually transient
    (connection errors, timeouts, HTTP 429 and 5xx) are retried up to `max_attempts` times with
    exponential backoff; other HTTP errors fail at once. Every transport or HTTP failure surfaces as
    a RuntimeError naming the URL and the status; the API key never appears in a message.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        *,
        max_attempts: int = 3,
        retry_backoff: float = 0.5,
    ) -> None:
        """`retry_backoff` is the delay before the second attempt; it doubles before each later one."""
        if not isinstance(model, str) or not model.strip():
            raise ValueError("model must be a non-empty string")
        self._endpoint = OpenAICompatibleEndpoint(
            base_url, "/chat/completions", "Chat completion", api_key, timeout, max_attempts, retry_backoff
        )
        self.base_url = self._endpoint.base_url
        self.model = model
        self._url = self._endpoint.url
        self._max_attempts = max_attempts
        # The best way of asking for JSON that this server has not rejected; learned on a 400.
        self._format_mode = 0

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    def __repr__(self) -> str:
        return f"OpenAICompatibleLlm(base_url={self.base_url!r}, model={self.model!r})"

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        json_schema: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> str:
        checked = _check_messages(messages)
        _check_max_tokens(max_tokens)
        if json_schema is not None and not isinstance(json_schema, Mapping):
            raise TypeError(f"json_schema must be a mapping, not {type(json_schema).__name__}")
        while True:
            mode = _FORMAT_MODES[self._format_mode] if json_schema is not None else _NO_FORMAT
            body = self._body(checked, json_schema, mode, max_tokens)
            response = self._endpoint.post(body)
            if response.is_success:
                return self._content(response)
            if (
                json_schema is not None
                and response.status_code == 400
                and self._format_mode + 1 < len(_FORMAT_MODES)
                and _FORMAT_COMPLAINT.search(response.text)
            ):
                # Remembered, so later calls go straight to what this server accepts.
                self._format_mode += 1
                continue
            raise self._endpoint.failed(response)

    def complete_json(
        self,
        messages: Sequence[Mapping[str, str]],
        json_schema: Mapping[str, Any],
        *,
        max_tokens: int | None = None,
    ) -> Any:
        """Ask for JSON and parse it; malformed answers are asked again, up to `max_attempts` times."""
        if not isinstance(json_schema, Mapping):
            raise TypeError(f"json_schema must be a mapping, not {type(json_schema).__name__}")
        reason, text = "", ""
        for _ in range(self._max_attempts):
            text = self.complete(messages, json_schema=json_schema, max_tokens=max_tokens)
            try:
                value = _parse_json_text(text)
            except ValueError as exc:
                reason = str(exc)
                continue
            if _matches_type(value, json_schema):
                return value
            reason = f"expected a JSON {json_schema.get('type')}, got {type(value).__name__}"
        excerpt = self._endpoint.scrub(" ".join(text.split()))
        if len(excerpt) > _EXCERPT_CHARS:
            excerpt = excerpt[:_EXCERPT_CHARS] + "..."
        raise ValueError(
            f"the model did not return valid JSON: {reason} "
            f"(model {self.model!r} at {self._url}, {self._max_attempts} attempt(s)); last answer: {excerpt!r}"
        )

    def close(self) -> None:
        self._endpoint.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _body(
        self,
        messages: list[dict[str, Any]],
        json_schema: Mapping[str, Any] | None,
        mode: str | None,
        max_tokens: int | None,
    ) -> dict[str, Any]:
        if json_schema is not None and mode != _JSON_SCHEMA:
            # Without schema enforcement the model must be told the shape; "json_object" mode on
            # OpenAI also requires the word JSON to appear in the messages.
            messages = _with_instruction(messages, _json_instruction(json_schema))
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0}
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if json_schema is not None and mode == _JSON_SCHEMA:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "result", "schema": dict(json_schema), "strict": True},
            }
        elif json_schema is not None and mode == _JSON_OBJECT:
            body["response_format"] = {"type": "json_object"}
        return body

    def _content(self, response: httpx.Response) -> str:
        """The assistant text of a successful response."""

        def malformed(reason: str) -> RuntimeError:
            return RuntimeError(f"Malformed chat completion response from {self._url}: {reason}")

        try:
            payload = response.json()
        except ValueError:
            raise malformed(f"HTTP {response.status_code} body is not valid JSON") from None
        choices = payload.get("choices") if isinstance(payload, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise malformed('expected a JSON object with a non-empty "choices" list')
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise malformed('choices[0] has no "message" object')
        content = message.get("content")
        if isinstance(content, list):
            # A few servers return content parts rather than one string.
            parts = [part.get("text") for part in content if isinstance(part, dict)]
            if parts and all(isinstance(part, str) for part in parts):
                return "".join(parts)
        if isinstance(content, str):
            return content
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal:
            raise RuntimeError(
                f"The model at {self._url} refused to answer: {self._endpoint.scrub(refusal)[:ERROR_SNIPPET_CHARS]}"
            )
        raise malformed('choices[0].message has no text "content"')


# ---------------------------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------------------------


def llm_from_settings(base_url: str | None, model: str | None, api_key: str | None) -> OpenAICompatibleLlm | None:
    """The configured LLM, or None when no base URL is set (the LLM features are then off).

    A base URL without a model is a configuration mistake and raises ValueError rather than
    silently disabling the LLM; blank values count as unset.
    """
    base_url = (base_url or "").strip()
    if not base_url:
        return None
    model = (model or "").strip()
    if not model:
        raise ValueError(f"an LLM base URL is set ({base_url!r}) but no model; set the model name too")
    return OpenAICompatibleLlm(base_url, model, api_key=(api_key or "").strip() or None)
