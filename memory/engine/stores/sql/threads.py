"""The SQL store's threads, and the listings of threads, users and agents."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...filters import parse_filter
from ...limits import check_id, dump_metadata
from ...scope import check_scope_value
from ...ttl import normalize_timestamp, utc_now
from ...types import (
    AGENT_PROFILE_TYPE,
    NOT_SET,
    USER_PROFILE_TYPE,
    AgentProfileRecord,
    Page,
    ThreadRecord,
    UserProfileRecord,
)
from ..arguments import (
    DEFAULT_LIST_LIMIT,
    check_positive_int,
    check_version,
    decode_cursor,
    encode_cursor,
    expected_version_of,
)
from ..plans import summary_topics, thread_changes
from ..rows import scope_condition

THREAD_FACETS = ("user_id", "agent_id", "tag")
"""What thread_facet_counts groups by."""


class ThreadMixin:
    """SQLMemoryStore's threads and the listings of threads, users and agents."""

    # --- threads ----------------------------------------------------------------------------

    def _thread_select(self) -> str:
        return (
            f"SELECT {self._thread_columns}, (SELECT count(*) FROM {self._records} m WHERE m.thread_id = t.id "
            f"AND m.kind = 'message' AND (m.expires_at IS NULL OR m.expires_at > :now)) AS message_count "
            f"FROM {self._threads} t"
        )

    def _thread_record(self, row: Mapping[str, Any]) -> ThreadRecord:
        return ThreadRecord(
            id=row["id"],
            thread_id=row["id"],
            user_id=row["user_id"],
            agent_id=row["agent_id"],
            metadata=json.loads(row["metadata"]) if row["metadata"] else None,
            settings=json.loads(row["settings"]) if row["settings"] else {},
            created_at=self.dialect.text_time(row["created_at"]),
            timestamp=self.dialect.text_time(row["created_at"]),
            updated_at=self.dialect.text_time(row["updated_at"]),
            message_count=int(row["message_count"]),
            summary=row["summary"],
            topics=json.loads(row["topics"]) if row["topics"] else None,
            version=int(row["version"]),
        )

    def save_thread(
        self, thread_id: str, user_id: str | None, agent_id: str | None, metadata: Any, settings: dict
    ) -> ThreadRecord:
        """Create the thread unless it exists; returns the stored thread either way."""
        for name, value in (("thread_id", thread_id), ("user_id", user_id), ("agent_id", agent_id)):
            check_scope_value(name, value)
        with self._write() as cursor:
            created = self._ensure_thread(
                cursor,
                thread_id,
                user_id,
                agent_id,
                utc_now(),
                metadata=dump_metadata(metadata),
                settings=json.dumps(settings),
            )
            if created:  # in the activity log once the transaction commits
                self._note_thread_created(thread_id, user_id, agent_id)
        return self.get_thread(thread_id)

    def get_thread(self, thread_id: str) -> ThreadRecord | None:
        check_id("thread_id", thread_id)
        rows = self._fetch(
            f"{self._thread_select()} WHERE t.id = :id", {"id": thread_id, "now": self.dialect.db_time(utc_now())}
        )
        return self._thread_record(rows[0]) if rows else None

    def update_thread(
        self, thread_id: str, metadata: Any = NOT_SET, settings: Any = NOT_SET, *, expected_version: Any = NOT_SET
    ) -> int:
        check_id("thread_id", thread_id)
        changes = thread_changes(metadata, settings)
        expected = expected_version_of(expected_version)
        assignments = ", ".join(f"{column} = :{column}" for column in changes)
        with self._write() as cursor:
            if not self._thread_at(cursor, thread_id, expected):
                return 0
            cursor.execute(
                f"UPDATE {self._threads} SET {assignments}, updated_at = :now, version = version + 1 WHERE id = :id",
                {**changes, "now": self.dialect.db_time(utc_now()), "id": thread_id},
            )
            return cursor.rowcount

    def _thread_at(self, cursor: Any, thread_id: str, expected: int | None) -> bool:
        """The compare of a thread's compare-and-set, inside the write: False when the thread is
        missing, StaleVersionError when it is at another version than `expected` (None: no check)."""
        if expected is None:
            return True
        rows = self._fetch(
            f"SELECT version FROM {self._threads} WHERE id = :id{self.dialect.for_update}", {"id": thread_id}, cursor
        )
        if not rows:
            return False
        check_version(f"thread {thread_id!r}", expected, rows[0]["version"])
        return True

    def save_thread_summary(
        self,
        thread_id: str,
        summary: str | None,
        topics: list[str] | None = None,
        *,
        expected_version: Any = NOT_SET,
    ) -> int:
        """Persist a thread's summary and topics (None clears them); returns 1, or 0 for no thread."""
        check_id("thread_id", thread_id)
        topics_json = summary_topics(summary, topics)
        expected = expected_version_of(expected_version)
        with self._write() as cursor:
            if not self._thread_at(cursor, thread_id, expected):
                return 0
            self.dialect.declare(cursor, ["summary"])
            cursor.execute(
                f"UPDATE {self._threads} SET summary = :summary, topics = :topics, version = version + 1 "
                "WHERE id = :id",
                {"summary": summary, "topics": topics_json, "id": thread_id},
            )
            return cursor.rowcount

    def save_thread_state(self, thread_id: str, key: str, state: dict[str, Any]) -> int:
        """Merge `state` into the thread's settings under `key`, leaving its activity time alone."""
        check_id("thread_id", thread_id)
        if not isinstance(state, dict):
            raise ValueError("state must be a dict")
        with self._write() as cursor:
            cursor.execute(
                f"UPDATE {self._threads} "
                f"SET settings = {self.dialect.json_merge_patch('settings', 'patch')} WHERE id = :id",
                {"patch": json.dumps({key: state}), "id": thread_id},
            )
            return cursor.rowcount

    def list_threads(
        self,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata_filter: Any = NOT_SET,
        limit: int | None = DEFAULT_LIST_LIMIT,
        cursor: str | None = None,
        *,
        text: Any = NOT_SET,
    ) -> Page:
        """Threads, latest activity first; `cursor` continues from an earlier page."""
        check_positive_int("limit", limit, allow_none=True)
        where, params = self._thread_conditions(user_id, agent_id, metadata_filter, text)
        params["now"] = self.dialect.db_time(utc_now())
        if cursor is not None:
            updated_at, last_id = decode_cursor(cursor, (str, str))
            try:
                normalize_timestamp(updated_at)
            except ValueError:
                raise ValueError(f"invalid cursor: {cursor!r}") from None
            where.append("(t.updated_at < :c_updated OR (t.updated_at = :c_updated AND t.id < :c_id))")
            params.update(c_updated=self.dialect.db_time(updated_at), c_id=last_id)
        sql = f"{self._thread_select()} {'WHERE ' + ' AND '.join(where) if where else ''} "
        sql += "ORDER BY t.updated_at DESC, t.id DESC"
        rows = self._fetch(sql + self._fetch_first(limit, params), params)
        records = [self._thread_record(row) for row in rows[:limit]]
        more = limit is not None and len(rows) > limit
        return Page(records, encode_cursor(records[-1].updated_at, records[-1].id) if more else None)

    def thread_facet_counts(
        self,
        facet: str,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata_filter: Any = NOT_SET,
        *,
        text: Any = NOT_SET,
    ) -> list[tuple[Any, int]]:
        """Each value of `facet` among the threads list_threads lists, with its count
        (MemoryStore.thread_facet_counts): one GROUP BY over the listing's conditions."""
        if facet not in THREAD_FACETS:
            raise ValueError(f"facet must be one of {', '.join(THREAD_FACETS)}, not {facet!r}")
        where, params = self._thread_conditions(user_id, agent_id, metadata_filter, text)
        return self._value_counts(f"{self._threads} t", "t", None if facet == "tag" else f"t.{facet}", where, params)

    def _thread_conditions(
        self, user_id: Any, agent_id: Any, metadata_filter: Any, text: Any
    ) -> tuple[list[str], dict[str, Any]]:
        """The conditions (on alias t) and binds of list_threads' and thread_facet_counts' filters, checked."""
        where: list[str] = []
        params: dict[str, Any] = {}
        matching = self._text_condition(["t.id", self.dialect.json_text("t.metadata")], text, params)
        if matching is not None:
            where.append(matching)
        for column, value in (("user_id", user_id), ("agent_id", agent_id)):
            if value is not NOT_SET:
                check_scope_value(column, value)
                where.append(scope_condition(f"t.{column}", column, value, params))
        if metadata_filter is not NOT_SET and metadata_filter is not None:
            compiler = self.dialect.filter_compiler()
            where.append(compiler.compile(parse_filter(metadata_filter), "t.metadata"))
            params.update(compiler.params)
        return where, params

    def _list_owners(self, column: str, profile_type: str, limit: int | None, cursor: str | None) -> Page:
        check_positive_int("limit", limit, allow_none=True)
        params: dict[str, Any] = {"kind": profile_type}
        after = f" AND {column} > :after" if cursor is not None else ""
        if cursor is not None:
            params["after"] = decode_cursor(cursor, (str,))[0]
        # Each source gives its first ids in order (an ordered walk of its owner index that stops
        # after a page), and the page is the first ids of their union: never the distinct owners
        # of the whole table.
        first = self._fetch_first(limit, params)
        owners = " UNION ".join(
            f"SELECT id FROM (SELECT DISTINCT {column} AS id FROM {table} WHERE {column} IS NOT NULL{after} "
            f"ORDER BY {column}{first}) {alias}"
            for table, alias in ((self._threads, "t"), (self._records, "r"))
        )
        sql = (
            f"SELECT o.id, p.content, {self.dialect.json_text('p.metadata')} AS metadata, p.created_at, p.version "
            f"FROM ({owners}) o LEFT JOIN {self._records} p ON p.kind = :kind AND p.id = o.id ORDER BY o.id"
        )
        rows = self._fetch(sql + self._fetch_first(limit, params), params)
        cls = UserProfileRecord if profile_type == USER_PROFILE_TYPE else AgentProfileRecord
        records = [
            cls(
                id=row["id"],
                content=row["content"] or "",
                metadata=json.loads(row["metadata"]) if row["metadata"] else None,
                created_at=self.dialect.text_time(row["created_at"]),
                timestamp=self.dialect.text_time(row["created_at"]),
                version=0 if row["version"] is None else int(row["version"]),  # 0: no stored profile
            )
            for row in rows[:limit]
        ]
        more = limit is not None and len(rows) > limit
        return Page(records, encode_cursor(records[-1].id) if more else None)

    def list_users(self, limit: int | None = DEFAULT_LIST_LIMIT, cursor: str | None = None) -> Page:
        """Every user id that owns a profile, thread or record, by id, with its profile text if any."""
        return self._list_owners("user_id", USER_PROFILE_TYPE, limit, cursor)

    def list_agents(self, limit: int | None = DEFAULT_LIST_LIMIT, cursor: str | None = None) -> Page:
        """Every agent id that owns a profile, thread or record, by id, with its profile text if any."""
        return self._list_owners("agent_id", AGENT_PROFILE_TYPE, limit, cursor)
