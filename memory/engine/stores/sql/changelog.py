"""The SQL store's change log, and what the in-memory index reads of the store through it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ..index import LogState
from .common import EFFECTIVE_STATUS_SQL, _ids_json

RECORD_PAGE = 10_000
"""Record rows read per query when the in-memory index loads them all."""
CHANGE_LOG_KEEP = 100_000
"""The change log keeps this many newest entries; an index further behind reloads instead."""


class ChangeLogMixin:
    """SQLMemoryStore's change log: the keys of the records and links each write changed,
    appended in its transaction, from which the in-memory index keeps in step."""

    # --- the change log ---------------------------------------------------------------------

    @contextmanager
    def _index_read(self) -> Iterator[_IndexSource]:
        """What the in-memory index reads of the store, on a read of its own: the background
        writer of a new index generation opens one."""
        with self._read() as cursor:
            yield _IndexSource(self, cursor)

    def _log(self, cursor: Any, entity: str, table: str, condition: str, params: Mapping[str, Any]) -> None:
        """Note in the change log, in the writer's transaction, the records (or links) matching
        `condition`: rows of `table` r (records, by pk) or rel (relations, by pos), one entry each."""
        key = "r.pk" if entity == "record" else "rel.pos"
        alias = "r" if entity == "record" else "rel"
        cursor.execute(
            f"INSERT INTO {self._changes} (entity, first_key, last_key) "
            f"SELECT '{entity}', {key}, {key} FROM {table} {alias} WHERE {condition}",
            dict(params),
        )
        self._trim_log(cursor)

    def _log_inserted(self, cursor: Any, kind: str, ids: list[str], keys: tuple[int, int] | None) -> None:
        """Note the records an insert wrote (of `kind`, with these ids) as one range of keys:
        writers take keys one at a time, so a batch's keys are consecutive, and a reader skips any
        key of the range that holds no row. The range is `keys` (first, last) when the insert told
        it, else the lowest and highest key of those records."""
        if keys is None:
            cursor.execute(
                f"INSERT INTO {self._changes} (entity, first_key, last_key) "
                f"SELECT 'record', lo, hi FROM (SELECT MIN(r.pk) AS lo, MAX(r.pk) AS hi FROM {self._records} r "
                f"WHERE r.kind = :kind AND {self._in('r.id', 'ids')}) batch WHERE lo IS NOT NULL",
                {"kind": kind, "ids": _ids_json(ids)},
            )
        else:
            cursor.execute(
                f"INSERT INTO {self._changes} (entity, first_key, last_key) VALUES ('record', :first_key, :last_key)",
                {"first_key": keys[0], "last_key": keys[1]},
            )
        self._trim_log(cursor)

    def _log_keys(self, cursor: Any, entity: str, keys: Iterable[int]) -> None:
        """Note records (pks) or links (positions) by key: for rows a write deletes."""
        rows = [{"entity": entity, "key": int(key)} for key in sorted(set(keys))]
        if rows:
            cursor.executemany(
                f"INSERT INTO {self._changes} (entity, first_key, last_key) VALUES (:entity, :key, :key)", rows
            )
            self._trim_log(cursor)

    def _trim_log(self, cursor: Any) -> None:
        """Keep the newest CHANGE_LOG_KEEP entries: an index that saw less reloads (index/)."""
        cursor.execute(
            f"DELETE FROM {self._changes} WHERE seq <= (SELECT MAX(seq) FROM {self._changes}) - :keep",
            {"keep": CHANGE_LOG_KEEP},
        )


class _IndexSource:
    """What the in-memory index reads of the store (index.ChangeSource), on the search's cursor;
    `store` is the SQLMemoryStore, whose tables and queries every part of it reaches."""

    def __init__(self, store: Any, cursor: Any) -> None:
        self._store, self._cursor = store, cursor

    def _fetch(self, sql: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        return self._store._fetch(sql, params, self._cursor)

    def log_state(self) -> LogState:
        store = self._store
        [bounds] = self._fetch(f"SELECT MIN(seq) AS first_seq, MAX(seq) AS last_seq FROM {store._changes}")
        first, last = bounds["first_seq"], bounds["last_seq"]
        return LogState(
            store_id=store._meta_value(self._cursor, "store_id") or "",
            last_seq=0 if last is None else int(last),
            trimmed_to=0 if first is None else int(first) - 1,
        )

    def changes_since(self, seq: int) -> list[tuple[int, str, int, int]]:
        rows = self._fetch(
            f"SELECT seq, entity, first_key, last_key FROM {self._store._changes} WHERE seq > :seq ORDER BY seq",
            {"seq": seq},
        )
        return [(int(row["seq"]), row["entity"], int(row["first_key"]), int(row["last_key"])) for row in rows]

    def record_rows(self, pks: Sequence[int] | None) -> Iterable[dict[str, Any]]:
        if pks is not None:
            return self._record_rows(f"{self._store._in('r.pk', 'pks', numeric=True)}", {"pks": json.dumps(list(pks))})
        return self._all_record_rows()

    def _all_record_rows(self) -> Iterator[dict[str, Any]]:
        """Every record row, RECORD_PAGE at a time by pk, on the source's one read."""
        after = -1
        while page := self._record_rows("r.pk > :after", {"after": after}, RECORD_PAGE):
            yield from page
            after = page[-1]["pk"]

    def _record_rows(self, condition: str, params: dict[str, Any], page: int | None = None) -> list[dict[str, Any]]:
        store = self._store
        limit = "" if page is None else store.dialect.first_rows(":page")
        rows = self._fetch(
            f"SELECT r.pk, r.id, r.kind, r.record_type, r.user_id, r.agent_id, r.thread_id, r.seq_no, "
            f"{EFFECTIVE_STATUS_SQL} AS status, r.expires_at, r.event_at AS timestamp, r.created_at, "
            f"r.search_text AS text, r.embedding FROM {store._records} r WHERE {condition} ORDER BY r.pk{limit}",
            params if page is None else {**params, "page": page},
        )
        text_time = store.dialect.text_time
        for row in rows:
            for column in ("expires_at", "timestamp", "created_at"):
                row[column] = text_time(row[column])
        return rows

    def record_count(self) -> int:
        [row] = self._fetch(f"SELECT COUNT(*) AS n FROM {self._store._records} r")
        return int(row["n"])

    def link_rows(self, positions: Sequence[int] | None) -> list[tuple]:
        store, params = self._store, {}
        where = ""
        if positions is not None:
            where, params = (
                f"WHERE {store._in('rel.pos', 'positions', numeric=True)} ",
                {"positions": json.dumps(list(positions))},
            )
        text_time = store.dialect.text_time
        return [
            (
                int(row["pos"]),
                row["id"],
                row["source_id"],
                row["source_type"],
                row["target_id"],
                row["target_type"],
                row["relation_type"],
                row["opposite_type"],
                text_time(row["event_at"]),
                row["metadata"],
                text_time(row["created_at"]),
                int(row["version"]),
            )
            for row in self._fetch(
                f"SELECT {store._relation_columns} FROM {store._relations} rel {where}ORDER BY rel.created_at, rel.id",
                params,
            )
        ]
