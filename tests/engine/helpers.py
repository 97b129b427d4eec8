"""Small test doubles and assertions shared by the conformance suite."""

from __future__ import annotations

from datetime import datetime, timedelta

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
