"""Storage backends behind one interface (MemoryStore)."""

from .base import MemoryStore, SchemaError
from .sqlite import SQLiteMemoryStore

__all__ = ["MemoryStore", "SQLiteMemoryStore", "SchemaError"]
