"""The SQLite store's in-memory copy of its embeddings, for exact vector search at NumPy speed.

Reading every embedding blob from SQLite per query costs far more than the scan itself, so the
store keeps one float32 matrix of all embedded rows, with per-row codes (type, scope, status,
expiry) that turn filters into NumPy masks. The store tells the cache about its own writes row by
row; a write by another connection (another process) shows up as a new `PRAGMA data_version`, and
the cache then reloads from the database.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

SCOPE_COLUMNS = ("user_id", "agent_id", "thread_id")


@dataclass
class _Codes:
    """Dictionary encoding of one text column: 0 stands for NULL."""

    codes: dict[str, int] = field(default_factory=dict)

    def encode(self, value: str | None) -> int:
        if value is None:
            return 0
        code = self.codes.get(value)
        if code is None:
            code = self.codes[value] = len(self.codes) + 1
        return code

    def lookup(self, value: str | None) -> int | None:
        """The code of a value, or None when no row holds it (then nothing can match)."""
        return 0 if value is None else self.codes.get(value)


def _epoch(timestamp: str | None) -> float:
    return np.inf if timestamp is None else datetime.fromisoformat(timestamp).timestamp()


class VectorCache:
    """Unit-length embeddings of the live rows, in primary-key order, with their filter codes."""

    ROW_SQL = "pk, record_type, user_id, agent_id, thread_id, status, expires_at, embedding"

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.size = 0
        self.pks = np.empty(0, dtype=np.int64)
        self.matrix = np.empty((0, dim), dtype=np.float32)
        self.types = np.empty(0, dtype=np.int16)
        self.scopes = {column: np.empty(0, dtype=np.int32) for column in SCOPE_COLUMNS}
        self.valid = np.empty(0, dtype=bool)
        self.expires = np.empty(0, dtype=np.float64)
        self.type_codes = _Codes()
        self.scope_codes = {column: _Codes() for column in SCOPE_COLUMNS}

    # --- maintenance ------------------------------------------------------------------------

    def _reserve(self, extra: int) -> None:
        """Grow the arrays geometrically, so appending n rows one batch at a time costs O(n)."""
        needed = self.size + extra
        capacity = len(self.pks)
        if needed <= capacity:
            return
        capacity = max(needed, 2 * capacity, 1024)

        def grown(array: np.ndarray) -> np.ndarray:
            bigger = np.empty((capacity, *array.shape[1:]), dtype=array.dtype)
            bigger[: self.size] = array[: self.size]
            return bigger

        self.pks, self.matrix, self.types = grown(self.pks), grown(self.matrix), grown(self.types)
        self.valid, self.expires = grown(self.valid), grown(self.expires)
        self.scopes = {column: grown(codes) for column, codes in self.scopes.items()}

    def _write_row(self, index: int, row: Any) -> None:
        self.pks[index] = row["pk"]
        self.matrix[index] = np.frombuffer(row["embedding"], dtype=np.float32)
        self.types[index] = self.type_codes.encode(row["record_type"])
        for column in SCOPE_COLUMNS:
            self.scopes[column][index] = self.scope_codes[column].encode(row[column])
        self.valid[index] = row["status"] == "valid"
        self.expires[index] = _epoch(row["expires_at"])

    def load(self, rows: Iterable[Any]) -> None:
        """Replace the contents with `rows` (embedded rows in primary-key order)."""
        self.size = 0
        self.append(rows)

    def append(self, rows: Iterable[Any]) -> None:
        """Add rows whose keys are above every cached key (new inserts)."""
        rows = [row for row in rows if row["embedding"] is not None]
        self._reserve(len(rows))
        for offset, row in enumerate(rows):
            self._write_row(self.size + offset, row)
        self.size += len(rows)

    def refresh(self, pks: Iterable[int], rows: Iterable[Any]) -> None:
        """Bring the rows with keys `pks` in line with `rows`, their current state (absent = gone)."""
        current = {row["pk"]: row for row in rows if row["embedding"] is not None}
        keys = self.pks[: self.size]
        drop = []
        for pk in set(pks):
            index = int(np.searchsorted(keys, pk))
            present = index < self.size and keys[index] == pk
            if present and pk in current:
                self._write_row(index, current.pop(pk))
            elif present:
                drop.append(index)
        if drop:
            keep = np.ones(self.size, dtype=bool)
            keep[drop] = False
            self._select(keep)
        if current:
            # Rows that gained an embedding: rare enough to re-sort rather than track positions.
            self.append(sorted(current.values(), key=lambda row: row["pk"]))
            self._select(np.argsort(self.pks[: self.size], kind="stable"))

    def _select(self, selector: np.ndarray) -> None:
        """Keep (a mask) or reorder (an index array) the cached rows, in every column alike."""
        count = int(selector.sum()) if selector.dtype == bool else len(selector)
        for array in (self.pks, self.matrix, self.types, self.valid, self.expires, *self.scopes.values()):
            array[:count] = array[: self.size][selector]
        self.size = count

    # --- search -----------------------------------------------------------------------------

    def candidates(
        self,
        types: tuple[str, ...],
        exact: dict[str, str | None],
        include_invalid: bool,
        now: float,
        allowed_pks: np.ndarray | None = None,
    ) -> np.ndarray | None:
        """Row indexes that pass the filters; None means every row (no copy needed)."""
        n = self.size
        mask: np.ndarray | None = None

        def narrow(condition: np.ndarray) -> None:
            nonlocal mask
            mask = condition if mask is None else mask & condition

        type_codes = [code for code in (self.type_codes.lookup(t) for t in types) if code is not None]
        if len(type_codes) < len(self.type_codes.codes):
            narrow(np.isin(self.types[:n], type_codes))
        for column, value in exact.items():
            code = self.scope_codes[column].lookup(value)
            if code is None:
                return np.empty(0, dtype=np.int64)
            narrow(self.scopes[column][:n] == code)
        if not include_invalid:
            narrow(self.valid[:n])
        if np.isfinite(self.expires[:n]).any():
            narrow(self.expires[:n] > now)
        if allowed_pks is not None:
            narrow(np.isin(self.pks[:n], allowed_pks, assume_unique=True))
        return None if mask is None else np.flatnonzero(mask)

    def top_k(self, query: np.ndarray, rows: np.ndarray | None, k: int) -> list[tuple[int, float]]:
        """The k nearest rows by cosine distance, as (pk, distance); ties go to the older row."""
        matrix = self.matrix[: self.size] if rows is None else self.matrix[rows]
        if len(matrix) == 0:
            return []
        distances = 1.0 - matrix @ query
        if k < len(distances):
            nearest = np.argpartition(distances, k - 1)[:k]
            # Rows tied with the k-th distance may sit outside the partition; take them all.
            nearest = np.flatnonzero(distances <= distances[nearest].max())
        else:
            nearest = np.arange(len(distances))
        pks = self.pks[: self.size][nearest] if rows is None else self.pks[rows[nearest]]
        order = np.lexsort((pks, distances[nearest]))[:k]
        return [(int(pks[i]), float(distances[nearest][i])) for i in order]
