"""One POST endpoint of an OpenAI-compatible server, as the embedder and LLM adapters use it.

Failures that are usually transient (connection errors, timeouts, HTTP 429 and 5xx) are retried a
bounded number of times with doubling backoff, so that a blip does not fail a whole batch while a
dead server still fails within a predictable time. The API key is sent as a bearer token and
scrubbed from every message, since some servers echo it back.
"""

from __future__ import annotations

import time
from typing import Any, Self

import httpx

ERROR_SNIPPET_CHARS = 200


class OpenAICompatibleEndpoint:
    def __init__(
        self,
        base_url: str,
        path: str,
        what: str,
        api_key: str | None,
        timeout: float,
        max_attempts: int = 3,
        retry_backoff: float = 0.5,
    ) -> None:
        """`what` names the request in errors ("Embedding"); `retry_backoff` is the first delay."""
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise ValueError(f"max_attempts must be a positive integer, got {max_attempts!r}")
        if isinstance(retry_backoff, bool) or not isinstance(retry_backoff, int | float) or retry_backoff < 0:
            raise ValueError(f"retry_backoff must be a non-negative number, got {retry_backoff!r}")
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}{path}"
        self.what = what
        self.max_attempts = max_attempts
        self._retry_backoff = float(retry_backoff)
        self._api_key = api_key or None
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # One client for the adapter's lifetime: connections are pooled and kept alive.
        self._client = httpx.Client(timeout=timeout, headers=headers)

    def post(self, body: dict[str, Any]) -> httpx.Response:
        """The first non-transient response; RuntimeError once every attempt failed transiently."""
        failure = ""
        last_error: Exception | None = None
        for attempt in range(self.max_attempts):
            if attempt:
                time.sleep(self._retry_backoff * 2 ** (attempt - 1))
            try:
                response = self._client.post(self.url, json=body)
            except httpx.TimeoutException as exc:
                failure, last_error = "timed out", exc
                continue
            except httpx.TransportError as exc:
                failure, last_error = self.scrub(f"connection error ({type(exc).__name__}: {exc})"), exc
                continue
            if response.status_code == 429 or response.status_code >= 500:
                failure, last_error = self.describe(response), None
                continue
            return response
        raise RuntimeError(
            f"{self.what} request to {self.url} failed after {self.max_attempts} attempts: {failure}"
        ) from last_error

    def failed(self, response: httpx.Response) -> RuntimeError:
        return RuntimeError(f"{self.what} request to {self.url} failed: {self.describe(response)}")

    def scrub(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text

    def describe(self, response: httpx.Response) -> str:
        """'HTTP <status>: <start of the body>', which is often the server's own explanation."""
        snippet = self.scrub(" ".join(response.text.split()))[:ERROR_SNIPPET_CHARS]
        return f"HTTP {response.status_code}: {snippet}" if snippet else f"HTTP {response.status_code}"

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
