"""MemoryStore writes down the whole store contract, and the one implementation follows it."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from memory.engine.stores.base import MemoryStore
from memory.engine.stores.sql import SQLMemoryStore

ENGINE = Path(__file__).resolve().parents[2] / "memory" / "engine"


def test_every_declared_method_is_implemented_with_the_declared_parameters():
    assert not SQLMemoryStore.__abstractmethods__
    for name in MemoryStore.__abstractmethods__:
        declared = inspect.signature(getattr(MemoryStore, name)).parameters
        implemented = inspect.signature(getattr(SQLMemoryStore, name)).parameters
        assert list(implemented) == list(declared), name
        assert getattr(MemoryStore, name).__doc__, f"{name} has no contract"


def test_the_engine_calls_only_methods_the_contract_declares():
    called = set()
    for path in ENGINE.glob("*.py"):  # the client, threads, cards, extraction: the stores' users
        called |= set(re.findall(r"\bstore\.([a-z][a-z_]*)\(", path.read_text()))
    public = {name for name in dir(MemoryStore) if not name.startswith("_")}
    assert called and called <= public, called - public
