"""SQLMemoryStore: the engine's store logic in SQL, the one store of every backend.

Every filter (scope, type, status, expiry, metadata) is a WHERE condition evaluated before the
top-k, vectors are compared in the database, the keyword half of hybrid search uses the
database's text index (Oracle Text, SQLite FTS5), and a graph hop is one query. User values only
ever travel as bind variables; the only names built into SQL are the table names from
`table_name_prefix` (validated, then quoted) and metadata keys (validated, then quoted in JSON
paths, see filters.json_path_step).

What differs between databases is a `SQLDialect` (dialect.py): SQLite's (stores/sqlite.py) and
Oracle's (stores/oracle.py). SQLiteMemoryStore and OracleDBMemoryStore are this store with a
dialect, a connection source and options.

Optionally an in-memory index (stores/index/) answers searches instead of SQL. It stays in step
through the change log: every write appends the keys of the records and links it changed to a
table, in the same transaction, and the index applies what it has not seen before each search,
whichever process wrote.

Oracle stores '' as NULL, and both databases follow that one layout: content reads NULL back as
'', and the two text columns where '' and None differ (index_text, role) have a flag column
marking an explicit ''.

The store is one class, SQLMemoryStore (store.py), composed of a mixin per part of it, each in a
module of its own: connections and transactions (connections.py), the managed schema
(schema.py), the change log (changelog.py), writes of records (writes.py), relations, graphs and
near-duplicates (relations.py), threads (threads.py), reads and counts (reads.py), snapshots
(snapshots.py), search (search.py) and maintenance: the consistency check, health, re-embedding
and outcomes (maintenance.py). common.py holds the names several parts share, dialect.py the
SQLDialect.
"""

from .common import DROP_ORDER, REEMBED_PHASE, SCHEMA_VERSION, VERSIONED_TABLES, table_names
from .dialect import SQLDialect
from .maintenance import REEMBED_TARGET
from .store import PREFIX_PATTERN, SQLMemoryStore

__all__ = [
    "DROP_ORDER",
    "PREFIX_PATTERN",
    "REEMBED_PHASE",
    "REEMBED_TARGET",
    "SCHEMA_VERSION",
    "VERSIONED_TABLES",
    "SQLDialect",
    "SQLMemoryStore",
    "table_names",
]
