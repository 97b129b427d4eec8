"""Storage backends behind one interface (MemoryStore)."""

from .base import MemoryStore, SchemaError
from .oracle import OracleDBMemoryStore, OracleInDatabaseEmbedder
from .sqlite import SQLiteMemoryStore

__all__ = ["MemoryStore", "OracleDBMemoryStore", "OracleInDatabaseEmbedder", "SQLiteMemoryStore", "SchemaError"]
