"""Storage backends behind one interface (MemoryStore): one SQL store, a dialect per database."""

from .base import EmbedderMismatchError, MemoryStore, SchemaError
from .index import IndexRebuild
from .oracle import OracleDBMemoryStore, OracleInDatabaseEmbedder
from .sql import SQLMemoryStore
from .sqlite import SQLiteMemoryStore

__all__ = [
    "EmbedderMismatchError",
    "IndexRebuild",
    "MemoryStore",
    "OracleDBMemoryStore",
    "OracleInDatabaseEmbedder",
    "SQLMemoryStore",
    "SQLiteMemoryStore",
    "SchemaError",
]
