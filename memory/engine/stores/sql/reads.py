"""The SQL store's reads: records, listings, thread messages, and counts."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...filters import parse_filter
from ...limits import check_id, check_int_range
from ...scope import check_scope_value
from ...ttl import normalize_timestamp, utc_now
from ...types import MESSAGE_TYPE, NOT_SET, RECORD_TYPES, MessageRecord, Page, Record, StoreStats, check_bool
from ..arguments import (
    DEFAULT_LIST_LIMIT,
    DeleteScope,
    check_positive_int,
    check_record_type,
    check_record_types,
    decode_cursor,
    delete_scope,
    encode_cursor,
    kind_of,
    like_pattern,
    listing_status,
    record_id_list,
    storable_id,
)
from ..rows import build_record, scope_condition, seq_range_conditions
from .common import INVALID_SQL, SCHEMA_VERSION, _ids_json, _types_condition

FACETS = ("record_type", "status", "user_id", "agent_id", "tag")
"""What facet_counts groups by."""
FACET_SQL = {
    "record_type": "r.record_type",
    "status": f"CASE WHEN {INVALID_SQL} THEN 'invalid' ELSE 'valid' END",
    "user_id": "r.user_id",
    "agent_id": "r.agent_id",
}
"""Each facet's value on alias r; "tag" has none (the items of the metadata's tags: _value_counts)."""

STATS_MEMO_SIZE = 64
"""stats() keeps the counts of this many scopes (all cleared when full)."""


class ReadMixin:
    """SQLMemoryStore's reads: records, listings and thread messages, and the counts of stats()."""

    # --- counts -----------------------------------------------------------------------------

    def _deleted_by(self, alias: str, scope: DeleteScope, params: dict[str, Any]) -> str:
        """The records (alias) the delete of `scope` removes directly (a message's images aside)."""
        if scope.column == "thread_id":
            params["scope_id"] = scope.owner_id
            return f"{alias}.thread_id = :scope_id"
        params["scope_id"] = scope.owner_id
        return (
            f"({alias}.{scope.column} = :scope_id OR {alias}.thread_id IN "
            f"(SELECT st.id FROM {self._threads} st WHERE st.{scope.column} = :scope_id))"
        )

    def _scope_records(self, scope: DeleteScope | None, params: dict[str, Any]) -> str:
        """What the delete of `scope` removes (alias r): its records and their messages' images."""
        if scope is None:
            return "1 = 1"
        direct = self._deleted_by("r", scope, params)
        messages = self._deleted_by("sm", scope, params)
        return (
            f"({direct} OR (r.kind = 'image' AND r.message_id IN "
            f"(SELECT sm.id FROM {self._records} sm WHERE sm.kind = 'message' AND {messages})))"
        )

    def _scope_threads(self, scope: DeleteScope | None, params: dict[str, Any]) -> str:
        if scope is None:
            return "1 = 1"
        params["scope_id"] = scope.owner_id
        return f"t.{'id' if scope.column == 'thread_id' else scope.column} = :scope_id"

    def _scope_links(self, scope: DeleteScope | None, params: dict[str, Any]) -> str:
        """The links the delete of `scope` removes: those touching a memory it deletes."""
        if scope is None:
            return "1 = 1"
        memories = self._deleted_by("lm", scope, params)
        return (
            f"EXISTS (SELECT 1 FROM {self._records} lm WHERE lm.kind = 'memory' "
            f"AND (lm.id = rel.source_id OR lm.id = rel.target_id) AND {memories})"
        )

    def stats(self, *, thread_id: Any = NOT_SET, user_id: Any = NOT_SET, agent_id: Any = NOT_SET) -> StoreStats:
        """Counts of the store, or of what one delete would remove (MemoryStore.stats).

        A handful of grouped queries, memoised per scope: the memo holds while the change log's
        newest entry (every write adds one, threads' creation and deletion included) and the
        store id are those it was computed at, and no record has reached its expiry since."""
        scope = delete_scope(thread_id, user_id, agent_id)
        return self._memoised(("stats", scope), lambda cursor, now: self._count(cursor, scope, now))

    def _memoised(self, key: tuple, compute: Callable[[Any, str], tuple[Any, str | None]]) -> Any:
        """`compute(cursor, now)`'s value, memoised while the change log's newest entry (every
        write adds one, threads' creation and deletion included) and the store id are those it
        was computed at, and until the next expiry it returns with the value (None: none)."""
        # Inside a transaction that has written, the value counts uncommitted rows whose log
        # entries may be rolled back and their numbers taken again: no memo then.
        shared = self._written() is None
        with self._read() as cursor:
            [state] = self._fetch(f"SELECT MAX(seq) AS seq FROM {self._changes}", None, cursor)
            key = (*key, self._meta_value(cursor, "store_id"), state["seq"])
            now = utc_now()
            with self._stats_lock:
                memo = self._stats_memo.get(key) if shared else None
            if memo is not None and (memo[1] is None or now < memo[1]):
                return copy.deepcopy(memo[0])
            value, next_expiry = compute(cursor, now)
        if not shared:
            return value
        with self._stats_lock:
            if len(self._stats_memo) >= STATS_MEMO_SIZE:
                self._stats_memo.clear()
            self._stats_memo[key] = (value, next_expiry)
        return copy.deepcopy(value)

    def _next_expiry(self, cursor: Any, now: str) -> str | None:
        """The first expiry after `now`, when counts of live records change without a write."""
        [upcoming] = self._fetch(
            f"SELECT MIN(r.expires_at) AS at FROM {self._records} r WHERE r.expires_at > :now",
            {"now": self.dialect.db_time(now)},
            cursor,
        )
        return self.dialect.text_time(upcoming["at"])

    def _count(self, cursor: Any, scope: DeleteScope | None, now: str) -> tuple[StoreStats, str | None]:
        """The counts of `scope` at `now`, and the next expiry after it (None: none)."""
        params: dict[str, Any] = {"now": self.dialect.db_time(now)}
        in_scope = self._scope_records(scope, params)
        records = {record_type: {"valid": 0, "invalid": 0, "expired": 0} for record_type in RECORD_TYPES}
        state = (
            "CASE WHEN r.expires_at IS NOT NULL AND r.expires_at <= :now THEN 'expired' "
            "WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END"
        )
        # Grouped over an inline view: Oracle takes a bind inside a GROUP BY expression for another
        # expression than the same text in the select list (ORA-00979).
        for row in self._fetch(
            f"SELECT s.record_type, s.state, count(*) AS n FROM (SELECT r.record_type, {state} AS state "
            f"FROM {self._records} r WHERE {in_scope}) s GROUP BY s.record_type, s.state",
            params,
            cursor,
        ):
            records.setdefault(row["record_type"], {"valid": 0, "invalid": 0, "expired": 0})[row["state"]] = int(
                row["n"]
            )
        day = self.dialect.utc_day("COALESCE(r.event_at, r.created_at)")
        by_day = sorted(
            (row["day"], row["kind"], int(row["n"]))
            for row in self._fetch(
                f"SELECT s.day, s.kind, count(*) AS n FROM (SELECT {day} AS day, r.kind FROM {self._records} r "
                f"WHERE {in_scope} AND r.kind IN ('message', 'memory') "
                "AND (r.expires_at IS NULL OR r.expires_at > :now)) s GROUP BY s.day, s.kind",
                params,
                cursor,
            )
        )
        link_params: dict[str, Any] = {}
        links = {
            row["relation_type"]: int(row["n"])
            for row in self._fetch(
                f"SELECT rel.relation_type, count(*) AS n FROM {self._relations} rel "
                f"WHERE {self._scope_links(scope, link_params)} GROUP BY rel.relation_type ORDER BY rel.relation_type",
                link_params,
                cursor,
            )
        }
        owner_params: dict[str, Any] = {}
        thread_scope = self._scope_threads(scope, owner_params)
        record_scope = self._scope_records(scope, owner_params)
        [owners] = self._fetch(
            f"SELECT (SELECT count(*) FROM {self._threads} t WHERE {thread_scope}) AS threads, "
            + ", ".join(
                f"(SELECT count(*) FROM (SELECT t.{column} AS id FROM {self._threads} t "
                f"WHERE t.{column} IS NOT NULL AND {thread_scope} UNION SELECT r.{column} FROM {self._records} r "
                f"WHERE r.{column} IS NOT NULL AND {record_scope}) o) AS {name}"
                for column, name in (("user_id", "users"), ("agent_id", "agents"))
            )
            + self.dialect.from_nothing,
            owner_params,
            cursor,
        )
        stats = StoreStats(
            records=records,
            links=links,
            threads=int(owners["threads"]),
            users=int(owners["users"]),
            agents=int(owners["agents"]),
            by_day=by_day,
            backend=self.dialect.name,
            embedder=self.embedder.name,
            vector_dim=self.vector_dim,
            schema_version=SCHEMA_VERSION,
        )
        return stats, self._next_expiry(cursor, now)

    def owner_counts(self, owner: str, ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """Threads, live messages and live memories of each user or agent, in one grouped query,
        memoised as stats() is (an agent owns many records: counting them reads many rows)."""
        if not isinstance(owner, str) or owner not in ("user", "agent"):
            raise ValueError(f"owner must be 'user' or 'agent', not {owner!r}")
        if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence):
            raise ValueError(f"ids must be a list of {owner} ids, not {type(ids).__name__}")
        column = f"{owner}_id"
        wanted = list(dict.fromkeys(check_id(f"ids[{i}]", value) for i, value in enumerate(ids)))
        if not wanted:
            return {}
        return self._memoised(
            ("owner_counts", column, tuple(wanted)), lambda cursor, now: self._owner_counts(cursor, column, wanted, now)
        )

    def _owner_counts(
        self, cursor: Any, column: str, wanted: list[str], now: str
    ) -> tuple[dict[str, dict[str, int]], str | None]:
        counts = {owner_id: {"threads": 0, "messages": 0, "memories": 0} for owner_id in wanted}
        # Every kind is counted (the others are dropped here): a condition on kind would steer
        # SQLite to its (kind, id) key instead of the owner index.
        rows = self._fetch(
            f"SELECT t.{column} AS owner, 'thread' AS kind, count(*) AS n FROM {self._threads} t "
            f"WHERE {self._in(f't.{column}', 'ids')} GROUP BY t.{column} "
            f"UNION ALL SELECT r.{column}, r.kind, count(*) FROM {self._records} r "
            f"WHERE {self._in(f'r.{column}', 'ids')} AND (r.expires_at IS NULL OR r.expires_at > :now) "
            f"GROUP BY r.{column}, r.kind",
            {"ids": _ids_json(wanted), "now": self.dialect.db_time(now)},
            cursor,
        )
        names = {"thread": "threads", MESSAGE_TYPE: "messages", "memory": "memories"}
        for row in rows:
            if row["kind"] in names:
                counts[row["owner"]][names[row["kind"]]] = int(row["n"])
        return counts, self._next_expiry(cursor, now)

    # --- reads ------------------------------------------------------------------------------

    def _record(self, row: Mapping[str, Any]) -> Record:
        """The record of a row; NULL content is '' (Oracle stores '' as NULL), flags restore an explicit ''."""
        text_time = self.dialect.text_time
        return build_record(
            row,
            timestamp=text_time(row["event_at"]),
            created_at=text_time(row["created_at"]),
            expires_at=text_time(row["expires_at"]),
            content=row["content"] or "",
            role="" if row["role_empty"] else row["role"],
            seq_no=None if row["seq_no"] is None else int(row["seq_no"]),
        )

    def align_image_expiry(self, message_ids: Sequence[str]) -> None:
        """Give the images of these messages their message's expiry: they live and go together."""
        with self._write() as cursor:
            cursor.execute(
                f"UPDATE {self._records} SET expires_at = (SELECT m.expires_at FROM {self._records} m "
                f"WHERE m.kind = 'message' AND m.id = {self._records}.message_id) "
                f"WHERE kind = 'image' AND {self._in('message_id', 'ids')}",
                {"ids": _ids_json(message_ids)},
            )
            self._log(
                cursor,
                "record",
                self._records,
                f"r.kind = 'image' AND {self._in('r.message_id', 'ids')}",
                {"ids": _ids_json(message_ids)},
            )

    def image_bytes(self, image_ids: Sequence[str]) -> dict[str, bytes]:
        """The stored bytes of these images (live or not), by id."""
        rows = self._fetch(
            f"SELECT r.id, b.bytes FROM {self._records} r JOIN {self._image_bytes} b ON b.record_pk = r.pk "
            f"WHERE r.kind = 'image' AND {self._in('r.id', 'ids')}",
            {"ids": _ids_json(image_ids)},
        )
        return {row["id"]: row["bytes"] for row in rows}

    def get(self, record_type: str, record_id: str, include_bytes: bool = False) -> Record | None:
        """One live record by type and id, or None. `include_bytes` matters for images only."""
        if record_type == "thread":
            return self.get_thread(record_id)
        check_record_type(record_type)
        if not isinstance(record_id, str):
            raise ValueError(f"record_id must be a string, not {type(record_id).__name__}")
        if not storable_id(record_id):
            return None
        rows = self._fetch(
            f"SELECT {self._record_columns} FROM {self._records} r WHERE r.kind = :kind AND r.id = :id "
            "AND r.record_type = :record_type AND (r.expires_at IS NULL OR r.expires_at > :now)",
            {
                "kind": kind_of(record_type),
                "id": record_id,
                "record_type": record_type,
                "now": self.dialect.db_time(utc_now()),
            },
        )
        return self._with_bytes([self._record(rows[0])], include_bytes)[0] if rows else None

    def list(
        self,
        record_type: str | Sequence[str],
        limit: int | None = DEFAULT_LIST_LIMIT,
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata_filter: Any = NOT_SET,
        include_bytes: bool = False,
        record_id: Any = NOT_SET,
        *,
        cursor: str | None = None,
        include_expired: bool = False,
        status: Any = NOT_SET,
        newest_first: bool = False,
        text: Any = NOT_SET,
        expires_before: Any = NOT_SET,
    ) -> Page:
        """Records of one or more types in insertion order (or newest first), with exact scope
        filters, status, text and expiry filters (MemoryStore.list)."""
        check_record_types(record_type)
        check_positive_int("limit", limit, allow_none=True)
        check_bool("include_expired", include_expired)
        check_bool("newest_first", newest_first)
        where, params = self._listing_conditions(
            record_type,
            thread_id=thread_id,
            user_id=user_id,
            agent_id=agent_id,
            metadata_filter=metadata_filter,
            record_id=record_id,
            include_expired=include_expired,
            status=status,
            text=text,
            expires_before=expires_before,
        )
        if cursor is not None:
            # An ascending cursor is [pk] (as every earlier engine wrote it), a newest-first one
            # [pk, "desc"]: each order refuses the other's.
            values = decode_cursor(cursor, (int, str) if newest_first else (int,))
            if newest_first and values[1] != "desc":
                raise ValueError(f"invalid cursor: {cursor!r}")
            where.append("r.pk < :after" if newest_first else "r.pk > :after")
            params["after"] = values[0]
        order = "r.pk DESC" if newest_first else "r.pk"
        sql = f"SELECT {self._record_columns} FROM {self._records} r WHERE {' AND '.join(where)} ORDER BY {order}"
        rows = self._fetch(sql + self._fetch_first(limit, params), params)
        more = limit is not None and len(rows) > limit
        rows = rows[:limit]
        records = self._with_bytes([self._record(row) for row in rows], include_bytes)
        last = int(rows[-1]["pk"]) if more else None
        return Page(
            records, None if last is None else encode_cursor(last, "desc") if newest_first else encode_cursor(last)
        )

    def count(
        self,
        record_type: str | Sequence[str],
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata_filter: Any = NOT_SET,
        record_id: Any = NOT_SET,
        *,
        include_expired: bool = False,
        status: Any = NOT_SET,
        text: Any = NOT_SET,
        expires_before: Any = NOT_SET,
    ) -> int:
        """How many records list() would list with these filters, in one count query
        (MemoryStore.count)."""
        where, params = self._listing_conditions(
            record_type,
            thread_id=thread_id,
            user_id=user_id,
            agent_id=agent_id,
            metadata_filter=metadata_filter,
            record_id=record_id,
            include_expired=include_expired,
            status=status,
            text=text,
            expires_before=expires_before,
        )
        [row] = self._fetch(f"SELECT count(*) AS n FROM {self._records} r WHERE {' AND '.join(where)}", params)
        return int(row["n"])

    def facet_counts(
        self,
        record_type: str | Sequence[str],
        facet: str,
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata_filter: Any = NOT_SET,
        *,
        status: Any = NOT_SET,
        text: Any = NOT_SET,
    ) -> list[tuple[Any, int]]:
        """Each value of `facet` among what list() lists, with its count (MemoryStore.facet_counts):
        one GROUP BY over the listing's conditions; tags through the dialect's rows of a JSON array."""
        if facet not in FACETS:
            raise ValueError(f"facet must be one of {', '.join(FACETS)}, not {facet!r}")
        where, params = self._listing_conditions(
            record_type,
            thread_id=thread_id,
            user_id=user_id,
            agent_id=agent_id,
            metadata_filter=metadata_filter,
            record_id=NOT_SET,
            include_expired=False,
            status=status,
            text=text,
            expires_before=NOT_SET,
        )
        return self._value_counts(f"{self._records} r", "r", FACET_SQL.get(facet), where, params)

    def _value_counts(
        self, source: str, alias: str, value: str | None, where: list[str], params: dict[str, Any]
    ) -> list[tuple[Any, int]]:
        """The rows of `source` (named `alias`) that pass `where`, counted by `value`, or, given
        None, by each item of their metadata's "tags" list (the dialect's rows of it, joined
        beside each row): most first, then by value, None last among equals. Both listings'
        facets (facet_counts, thread_facet_counts)."""
        if value is None:
            items, value, is_item = self.dialect.json_array_items(f"{alias}.metadata", "$.tags", "tag")
            source, where = f"{source}, {items}", [*where, is_item]
        conditions = f" WHERE {' AND '.join(where)}" if where else ""
        sql = f"SELECT {value} AS facet_value, count(*) AS n FROM {source}{conditions} GROUP BY {value}"
        counted = [(row["facet_value"], int(row["n"])) for row in self._fetch(sql, params)]
        return sorted(counted, key=lambda pair: (-pair[1], pair[0] is None, str(pair[0])))

    def _listing_conditions(
        self,
        record_type: Any,
        *,
        thread_id: Any,
        user_id: Any,
        agent_id: Any,
        metadata_filter: Any,
        record_id: Any,
        include_expired: Any,
        status: Any,
        text: Any,
        expires_before: Any,
    ) -> tuple[list[str], dict[str, Any]]:
        """The conditions (on alias r) and binds of list()'s and count()'s filters, checked."""
        types = check_record_types(record_type)
        check_bool("include_expired", include_expired)
        wanted = listing_status(status)
        params: dict[str, Any] = {}
        where = [_types_condition("r", types, params)]
        for column, value in (("thread_id", thread_id), ("user_id", user_id), ("agent_id", agent_id)):
            if value is not NOT_SET:
                check_scope_value(column, value)
                where.append(scope_condition(f"r.{column}", column, value, params))
        if record_id is not NOT_SET:
            ids = record_id_list(record_id)
            # The kind adds nothing to the types but lets the (kind, id) key find the ids; without
            # it SQLite walks the table in key order (35 ms for one memory at 100k records).
            kinds = sorted({kind_of(t) for t in types})
            where.append(f"r.kind IN ({', '.join(f':kind{i}' for i in range(len(kinds)))})")
            params.update({f"kind{i}": kind for i, kind in enumerate(kinds)})
            where.append(self._in("r.id", "record_ids"))
            params["record_ids"] = _ids_json(ids)
        if metadata_filter is None:
            where.append(f"(r.metadata IS NULL OR {self.dialect.is_empty_object('r.metadata')})")
        elif metadata_filter is not NOT_SET:
            compiler = self.dialect.filter_compiler()
            where.append(compiler.compile(parse_filter(metadata_filter), "r.metadata"))
            params.update(compiler.params)
        if wanted == "expired":
            where.append("r.expires_at IS NOT NULL AND r.expires_at <= :now")
        elif not include_expired:
            where.append("(r.expires_at IS NULL OR r.expires_at > :now)")
        if wanted == "valid":
            where.append("r.status = 'valid' AND r.lifecycle_links = 0")
        elif wanted == "invalid":
            where.append(INVALID_SQL)
        if wanted == "expired" or not include_expired:
            params["now"] = self.dialect.db_time(utc_now())
        if expires_before is not NOT_SET:
            if expires_before is None:
                raise ValueError("expires_before must be an ISO-8601 timestamp, not None")
            where.append("r.expires_at IS NOT NULL AND r.expires_at <= :expires_before")
            params["expires_before"] = self.dialect.db_time(normalize_timestamp(expires_before, "expires_before"))
        matching = self._text_condition(["r.content", "r.id", self.dialect.json_text("r.metadata")], text, params)
        if matching is not None:
            where.append(matching)
        return where, params

    def _text_condition(self, expressions: Sequence[str], text: Any, params: dict[str, Any]) -> str | None:
        """A listing's `text` filter: a case-insensitive substring of any of `expressions`, as a
        LIKE of their lower case against one bind (wildcards escaped); None without a filter."""
        pattern = like_pattern(text)
        if pattern is None:
            return None
        params["text_pattern"] = pattern
        conditions = []
        for expression in expressions:
            condition, binds = self.dialect.contains_text(expression, pattern)
            conditions.append(condition)
            params.update(binds)
        return "(" + " OR ".join(conditions) + ")"

    def list_thread_messages(
        self,
        thread_id: str,
        last_n: int | None = None,
        range_start_seq_no: int | None = None,
        range_end_seq_no: int | None = None,
        include_bytes: bool = False,
    ) -> list[MessageRecord]:
        """A thread's live messages in order; `last_n` keeps the newest n, the range is [start, end)."""
        check_scope_value("thread_id", thread_id)
        check_positive_int("last_n", last_n, allow_none=True)
        where = ["r.thread_id = :thread_id", "r.kind = 'message'", "(r.expires_at IS NULL OR r.expires_at > :now)"]
        params: dict[str, Any] = {"thread_id": thread_id, "now": self.dialect.db_time(utc_now())}
        where += seq_range_conditions("r.seq_no", range_start_seq_no, range_end_seq_no, params)
        sql = f"SELECT {self._record_columns} FROM {self._records} r WHERE {' AND '.join(where)} ORDER BY r.seq_no DESC"
        if last_n is not None:
            sql += self.dialect.first_rows(":last_n")
            params["last_n"] = last_n
        return [self._record(row) for row in reversed(self._fetch(sql, params))]

    def thread_message_window(self, thread_id: str, offset: int, limit: int | None) -> list[MessageRecord]:
        """A slice of a thread's live messages by position (0 = oldest), for Thread.get_messages."""
        params: dict[str, Any] = {"thread_id": thread_id, "now": self.dialect.db_time(utc_now()), "offset": offset}
        sql = (
            f"SELECT {self._record_columns} FROM {self._records} r "
            "WHERE r.thread_id = :thread_id AND r.kind = 'message' "
            "AND (r.expires_at IS NULL OR r.expires_at > :now) ORDER BY r.seq_no"
        )
        if limit is not None:
            params["limit"] = limit
        sql += self.dialect.offset_rows(":offset", None if limit is None else ":limit")
        return [self._record(row) for row in self._fetch(sql, params)]

    def count_thread_messages(self, thread_id: str, *, through_seq_no: int | None = None) -> int:
        params: dict[str, Any] = {"thread_id": thread_id, "now": self.dialect.db_time(utc_now())}
        through = ""
        if through_seq_no is not None:
            if isinstance(through_seq_no, bool) or not isinstance(through_seq_no, int):
                raise ValueError(f"through_seq_no must be an integer or None, not {through_seq_no!r}")
            check_int_range("through_seq_no", through_seq_no)
            through, params["through_seq_no"] = " AND r.seq_no <= :through_seq_no", through_seq_no
        rows = self._fetch(
            f"SELECT count(*) AS n FROM {self._records} r WHERE r.thread_id = :thread_id AND r.kind = 'message' "
            f"AND (r.expires_at IS NULL OR r.expires_at > :now){through}",
            params,
        )
        return int(rows[0]["n"])
