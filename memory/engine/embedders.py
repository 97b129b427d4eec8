"""Embedders: turn texts into fixed-size float32 vectors for the stores' vector search.

Two implementations cover the two ways OAM runs. `HashingEmbedder` needs no model, no download and
no network, so tests, demos and air-gapped installs work out of the box and give the same vectors
on every machine. `OpenAICompatibleEmbedder` talks to any server that speaks the OpenAI
`/embeddings` protocol (OpenAI, Ollama, vLLM, llama.cpp, LM Studio...) for real semantic quality.
`embedder_from_spec` turns the one-line OAM_EMBEDDER setting into either of them.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import os
import re
import unicodedata
from collections.abc import Sequence
from typing import Any, Protocol, Self, runtime_checkable

import numpy as np

from .http import OpenAICompatibleEndpoint


@runtime_checkable
class Embedder(Protocol):
    """What a store needs from an embedder.

    `name` is a stable identity recorded next to stored vectors, so that vectors made by different
    models (or the same hashing scheme at another size) are never compared with each other. `name`
    and `dim` are read-only properties here so that both plain attributes and computed properties
    (a remote model's dimension is only known after its first answer) satisfy the protocol.
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return one row per text: shape (len(texts), dim), dtype float32; (0, dim) for no texts."""
        ...


def _check_texts(texts: Sequence[str]) -> list[str]:
    # A bare string is itself a Sequence[str]; embedding it would silently yield one row per character.
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of strings, not a single string; wrap it in a list")
    texts = list(texts)
    for position, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"embed() takes strings; item {position} is {type(text).__name__}")
    return texts


# ---------------------------------------------------------------------------------------------
# HashingEmbedder
# ---------------------------------------------------------------------------------------------

_WORD_PATTERN = re.compile(r"\w+")

# Whole words carry the meaning, so they weigh most. Bigrams add a little word order. Character
# 3-grams let inflections and typos ("pizzas", "piza") still overlap; they are scaled per word (see
# `_features`) so that a long word does not outweigh a short one just by having more 3-grams.
_WORD_WEIGHT = 1.0
_BIGRAM_WEIGHT = 0.5
_CHAR_GRAMS_WEIGHT = 0.5


@functools.lru_cache(maxsize=1 << 16)
def _slot(feature: str, dim: int) -> tuple[int, float]:
    """The (column, sign) a feature hashes to.

    blake2b rather than `hash()`, which is salted per process (PYTHONHASHSEED): stored vectors must
    be reproducible by every later process. The column comes from the low bits and the sign from the
    top bit, so the two are independent; the random sign makes collisions cancel out on average
    instead of piling up. Cached because the same words recur across texts far more than they hash.
    """
    value = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
    return value % dim, -1.0 if value >> 63 else 1.0


def _features(text: str) -> list[tuple[str, float]]:
    """The weighted features of one text; the prefixes keep a word and an equal 3-gram distinct."""
    # NFKC first so that composed and decomposed accents ("café") give the same tokens, and
    # casefold so that case (including e.g. German "ß"/"SS") does not split a word in two.
    words = _WORD_PATTERN.findall(unicodedata.normalize("NFKC", text).casefold())
    features = [("w:" + word, _WORD_WEIGHT) for word in words]
    features.extend(("b:" + first + " " + second, _BIGRAM_WEIGHT) for first, second in itertools.pairwise(words))
    for word in words:
        padded = "<" + word + ">"
        count = len(padded) - 2
        weight = _CHAR_GRAMS_WEIGHT / math.sqrt(count)
        features.extend(("c:" + padded[start : start + 3], weight) for start in range(count))
    return features


class HashingEmbedder:
    """A local, dependency-free embedder based on feature hashing.

    It captures lexical overlap (shared words, word pairs and word fragments), not meaning: "car"
    and "automobile" are unrelated to it. That is enough for tests, demos and keyword-like recall,
    and its vectors depend only on the text and `dim`, so every process and machine computes the same
    ones (barring Unicode table updates in new Python versions, which affect only rare characters).
    """

    def __init__(self, dim: int = 384) -> None:
        # bool is an int subclass; True would otherwise pass as a dimension of 1.
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 8:
            raise ValueError(f"HashingEmbedder dim must be an integer >= 8, got {dim!r}")
        self._dim = dim

    @property
    def name(self) -> str:
        return f"hashing-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self._dim})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return L2-normalised rows; a text without any word characters gets an all-zero row."""
        texts = _check_texts(texts)
        dim = self._dim
        # One flat bincount over the whole batch is much faster than per-feature numpy updates.
        positions: list[int] = []
        weights: list[float] = []
        for row, text in enumerate(texts):
            offset = row * dim
            for feature, weight in _features(text):
                column, sign = _slot(feature, dim)
                positions.append(offset + column)
                weights.append(sign * weight)
        flat = np.bincount(
            np.asarray(positions, dtype=np.int64),
            weights=np.asarray(weights, dtype=np.float64),
            minlength=len(texts) * dim,
        )
        # bincount returns int64 when it got no positions at all (no texts, or none with a word).
        matrix = flat.astype(np.float64, copy=False).reshape(len(texts), dim)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        # Dividing a zero row by 1 keeps it zero rather than turning it into NaNs.
        matrix /= np.where(norms > 0.0, norms, 1.0)
        return matrix.astype(np.float32)


# ---------------------------------------------------------------------------------------------
# OpenAICompatibleEmbedder
# ---------------------------------------------------------------------------------------------

_ATTEMPTS = 3


class OpenAICompatibleEmbedder:
    """An embedder backed by a server implementing the OpenAI `POST /embeddings` API.

    Failures that are usually transient (connection errors, timeouts, HTTP 429 and 5xx) are retried
    a bounded number of times, so that a blip does not fail a whole batch insert, while a dead
    server still fails within a predictable time. Every failure surfaces as a RuntimeError naming
    the URL and the status; the API key never appears in a message.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dim: int | None = None,
        timeout: float = 30.0,
        batch_size: int = 256,
        *,
        retry_backoff: float = 0.5,
    ) -> None:
        """`retry_backoff` is the delay before the second attempt; it doubles before the third."""
        if not isinstance(model, str) or not model.strip():
            raise ValueError("model must be a non-empty string")
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim < 1):
            raise ValueError(f"dim must be a positive integer or None, got {dim!r}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self._endpoint = OpenAICompatibleEndpoint(
            base_url, "/embeddings", "Embedding", api_key, timeout, _ATTEMPTS, retry_backoff
        )
        self.base_url = self._endpoint.base_url
        self.model = model
        self._url = self._endpoint.url
        self._dim = dim
        self._batch_size = batch_size

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    @property
    def dim(self) -> int:
        """The vector size; when not configured, learned from the server with one probe request."""
        if self._dim is None:
            self._request(["dimension probe"])
        assert self._dim is not None  # _request either learns the dimension or raises
        return self._dim

    def __repr__(self) -> str:
        return f"OpenAICompatibleEmbedder(base_url={self.base_url!r}, model={self.model!r}, dim={self._dim!r})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = _check_texts(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batches = [
            self._request(texts[start : start + self._batch_size]) for start in range(0, len(texts), self._batch_size)
        ]
        return np.concatenate(batches) if len(batches) > 1 else batches[0]

    def close(self) -> None:
        self._endpoint.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _request(self, texts: list[str]) -> np.ndarray:
        return self._parse(self._post_with_retries(texts), len(texts))

    def _post_with_retries(self, texts: list[str]) -> Any:
        response = self._endpoint.post({"model": self.model, "input": texts})
        if not response.is_success:
            raise self._endpoint.failed(response)
        try:
            return response.json()
        except ValueError:
            raise RuntimeError(
                f"Embedding response from {self._url} (HTTP {response.status_code}) is not valid JSON"
            ) from None

    def _parse(self, payload: Any, expected: int) -> np.ndarray:
        """Check the response shape, order the rows by `index`, and learn or check the dimension."""

        def malformed(reason: str) -> RuntimeError:
            return RuntimeError(f"Malformed embedding response from {self._url}: {reason}")

        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise malformed('expected a JSON object with a "data" list')
        if len(data) != expected:
            raise malformed(f"expected {expected} embeddings, got {len(data)}")
        rows: list[list[Any] | None] = [None] * expected
        for position, item in enumerate(data):
            if not isinstance(item, dict):
                raise malformed(f"data[{position}] is not an object")
            # Servers may return items in any order; a few omit "index", in which case order is all we have.
            index = item.get("index", position)
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < expected:
                raise malformed(f"data[{position}] has an invalid index {index!r}")
            if rows[index] is not None:
                raise malformed(f"index {index} appears twice")
            embedding = item.get("embedding")
            if not isinstance(embedding, list) or not embedding:
                raise malformed(f'data[{position}] has no "embedding" list')
            rows[index] = embedding
        # `expected` distinct in-range indices fill every slot, so no None is left.
        vectors = [row for row in rows if row is not None]

        expected_dim = self._dim if self._dim is not None else len(vectors[0])
        for vector in vectors:
            if len(vector) != expected_dim:
                raise ValueError(
                    f"Embedding model {self.model!r} at {self._url} returned a vector of size {len(vector)}, "
                    f"but this embedder expects size {expected_dim}"
                )
        try:
            matrix = np.asarray(vectors, dtype=np.float32)
        except (TypeError, ValueError):
            raise malformed("embeddings must be lists of numbers") from None
        if not np.isfinite(matrix).all():
            raise malformed("embeddings contain non-finite values")
        self._dim = expected_dim
        return matrix


# ---------------------------------------------------------------------------------------------
# OAM_EMBEDDER
# ---------------------------------------------------------------------------------------------

_DIGITS = re.compile("[0-9]+")  # not str.isdigit(), which accepts "²" that int() then rejects
_SPEC_FORMS = (
    '"" or "hashing" (HashingEmbedder(384)), "hashing:<dim>" (or its name, "hashing-<dim>"), '
    '"openai:<model>@<base_url>", "openai:<model>:<dim>@<base_url>"'
)


def embedder_from_spec(spec: str | None) -> Embedder:
    """Build the embedder named by an OAM_EMBEDDER setting.

    For "openai:..." the API key comes from the OAM_EMBEDDER_API_KEY environment variable, never
    from the spec, so that the setting can be shown and logged safely. Model names may contain ":"
    (Ollama tags such as "nomic-embed-text:latest"); only a trailing all-digit ":<n>" is read as dim.
    A hashing embedder's own name ("hashing-256", what the store records and the pages show) is
    accepted as well as "hashing:256": it names one embedder only, so an administrator who copies
    it is not refused. An OpenAI-compatible embedder's name lacks the server's URL: not accepted.
    """
    text = (spec or "").strip()
    if text in ("", "hashing"):
        return HashingEmbedder()
    if text.startswith(("hashing:", "hashing-")):
        size = text.removeprefix("hashing")[1:]
        if _DIGITS.fullmatch(size):
            return HashingEmbedder(int(size))
    elif text.startswith("openai:"):
        model, at, base_url = text.removeprefix("openai:").partition("@")
        dim: int | None = None
        head, colon, tail = model.rpartition(":")
        if colon and _DIGITS.fullmatch(tail):
            model, dim = head, int(tail)
        if at and model and base_url:
            return OpenAICompatibleEmbedder(base_url, model, api_key=os.environ.get("OAM_EMBEDDER_API_KEY"), dim=dim)
    raise ValueError(f"Invalid OAM_EMBEDDER value {spec!r}; accepted forms: {_SPEC_FORMS}")


def check_spec(spec: str | None) -> None:
    """Raise ValueError, naming the accepted forms, unless `embedder_from_spec(spec)` succeeds.

    The settings call it so that a bad OAM_EMBEDDER stops the site and every management command
    at startup with one clear message, rather than as a traceback of the first page or command
    that opens the store. Nothing is contacted: a remote embedder is built and closed at once.
    """
    try:
        embedder = embedder_from_spec(spec)
    except ValueError as exc:
        message = str(exc)
        if "accepted forms" not in message:  # a well-formed spec with a bad value (hashing:4)
            message = f"Invalid OAM_EMBEDDER value {spec!r}: {message}; accepted forms: {_SPEC_FORMS}"
        raise ValueError(message) from None
    close = getattr(embedder, "close", None)
    if close is not None:
        close()


def spec_of(name: str, dim: int | None = None, base_url: str | None = None) -> str:
    """The OAM_EMBEDDER value that gives back the embedder a store records as `name` (and `dim`).

    "hashing-256" gives "hashing:256". "openai:<model>" gives "openai:<model>:<dim>@<base_url>":
    the name does not keep the server's URL, so without `base_url` the literal "<base_url>" stands
    in its place for the administrator to fill in. Pages and messages show this, the line to set,
    rather than the name, which (for an OpenAI-compatible embedder) is not a value to set.
    """
    size = name.removeprefix("hashing-")
    if size != name and _DIGITS.fullmatch(size):
        return f"hashing:{size}"
    if name.startswith("openai:") and len(name) > len("openai:"):
        return f"{name}{f':{dim}' if dim else ''}@{base_url or '<base_url>'}"
    raise ValueError(f"{name!r} is not the name of an embedder OAM_EMBEDDER can give")
