"""Names the SQL store's parts share: schema version, table names, status SQL, meta keys."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from typing import Any

from ...types import LIFECYCLE_RELATIONS

log = logging.getLogger(__package__)  # the store's one logger, as when it was one module


SCHEMA_VERSION = 8
"""5: one schema for SQLite and Oracle, with the change log (1-4 were the embedded store's own);
6: a version on every record, thread and relation (optimistic concurrency); 7: the activity log
(two new tables, which CREATE_IF_NECESSARY adds to a version 6 schema); 8: the sensitive-data
findings (a new table, which CREATE_IF_NECESSARY adds to a version 7 schema)."""
VERSIONED_TABLES = ("threads", "records", "relations")
"""The tables whose rows carry a version (schema 6)."""
TABLE_KEYS = (
    "meta",
    "threads",
    "records",
    "relations",
    "images",
    "changes",
    "activity",
    "activity_records",
    "findings",
)
DROP_ORDER = (
    "findings",
    "activity_records",
    "activity",
    "images",
    "relations",
    "changes",
    "records",
    "threads",
    "meta",
)
"""The managed tables, each before the tables it refers to: the order SchemaPolicy.RECREATE drops them in."""
_LIFECYCLE_SQL = "(" + ", ".join(f"'{name}'" for name in LIFECYCLE_RELATIONS) + ")"
EFFECTIVE_STATUS_SQL = "CASE WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END"
"""D2: invalid when set so, or while a supersedes/refines/duplicates link points at the record."""
INVALID_SQL = "(r.status <> 'valid' OR r.lifecycle_links <> 0)"
"""The records whose effective status is invalid; SQLite's partial index of them has this condition."""
REEMBED_PHASE = "reembed_phase"
"""The meta row of a swap done in steps (Oracle): "filled" (new vectors in the new column), then
"switched" (columns renamed, embedder recorded) until the old column is cleaned up."""


def table_names(prefix: str) -> dict[str, str]:
    """The managed tables of a prefix, upper case on every database (quoted wherever they are used)."""
    p = prefix.upper()
    suffixes = (
        "OAM_META",
        "OAM_THREADS",
        "OAM_RECORDS",
        "OAM_RELATIONS",
        "OAM_IMAGE_BYTES",
        "OAM_CHANGES",
        "OAM_ACTIVITY",
        "OAM_ACTIVITY_RECORDS",
        "OAM_FINDINGS",
    )
    return {key: f"{p}{suffix}" for key, suffix in zip(TABLE_KEYS, suffixes, strict=True)}


def _types_condition(alias: str, types: Sequence[str], params: dict[str, Any]) -> str:
    """`record_type IN (:type0, …)`: one bind per type (at most seven, all checked), not a JSON_TABLE
    subquery, so that Oracle's simplest plan for a filtered approximate search stays open (the
    HNSW optimizer plans exclude subqueries)."""
    binds = []
    for i, record_type in enumerate(types):
        params.setdefault(f"type{i}", record_type)
        binds.append(f":type{i}")
    return f"{alias}.record_type IN ({', '.join(binds)})"


def _ids_json(ids: Iterable[Any]) -> str:
    return json.dumps(list(ids))
