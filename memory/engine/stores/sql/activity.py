"""The SQL store's activity log: what callers read and wrote, call by call (engine/activity/).

Two append-only tables: one row per call (OAM_ACTIVITY, with its request, results and text as
JSON and text), and one row per record a call returned or changed (OAM_ACTIVITY_RECORDS), so
that "which calls served this memory" is an index lookup rather than a scan of JSON. Rows go in
batches from the recorder's thread; retention deletes by time (the second table's rows follow
their event: ON DELETE CASCADE).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...activity.events import (
    CALLER_KINDS,
    KINDS,
    RETRIEVAL_KINDS,
    ActivityCounts,
    ActivityEvent,
    ActivityHygiene,
    ActivityResult,
    ServedRecord,
)
from ...limits import MAX_SEARCH_TEXT_CHARS, check_id
from ...ttl import normalize_timestamp, utc_now
from ...types import Page
from ..arguments import DEFAULT_LIST_LIMIT, check_positive_int, decode_cursor, encode_cursor, like_pattern

QUERY_TEXT_CHARS = 1_000
"""The part of a query kept in its own column, for listings and the `q` filter (4,000 bytes in Oracle)."""
MAX_Q_CHARS = MAX_SEARCH_TEXT_CHARS
"""The longest `q`: as long as any listing's text filter (a LIKE pattern that stays a VARCHAR2 in Oracle)."""
_SERVED_COLUMNS = (
    "ar.record_id, ar.record_type, ar.caller, COUNT(DISTINCT ar.event_pk) AS n, MAX(ar.event_at) AS last_at"
)
"""A record's calls by one caller, and the last of them (rows that _served merges per record)."""
_RETRIEVALS_SQL = "(" + ", ".join(f"'{kind}'" for kind in RETRIEVAL_KINDS) + ")"
_EVENT_COLUMNS = (
    "a.pk, a.id, a.kind, a.entry_point, a.event_at, a.caller, a.caller_kind, a.on_behalf_of, a.user_id, a.agent_id, "
    "a.thread_id, a.request, a.result_count, a.content_chars, a.tokens, a.duration_ms, a.cause, a.history_ref"
)


def _results_json(event: ActivityEvent) -> str:
    """An event's results as stored: each without the fields left at their defaults."""
    return json.dumps([result.stored() for result in event.results], separators=(",", ":"))


class ActivityLogMixin:
    """SQLMemoryStore's activity log: append, list, read, count, report on and purge events."""

    # --- writing ----------------------------------------------------------------------------

    def append_activity(self, events: Sequence[ActivityEvent]) -> None:
        """Store events (the recorder's batch) in one transaction, with a row per result."""
        if not events:
            return
        db_time = self.dialect.db_time
        times = [db_time(event.time) for event in events]
        columns: dict[str, list] = {
            "id": [event.id for event in events],
            "kind": [event.kind for event in events],
            "entry_point": [event.call for event in events],
            "event_at": times,
            "caller": [event.caller for event in events],
            "caller_kind": [event.caller_kind for event in events],
            "on_behalf_of": [event.on_behalf_of for event in events],
            "user_id": [event.scope.get("user_id") for event in events],
            "agent_id": [event.scope.get("agent_id") for event in events],
            "thread_id": [event.scope.get("thread_id") for event in events],
            "query_text": [event.query[:QUERY_TEXT_CHARS] or None for event in events],
            "request": [json.dumps(event.request) for event in events],
            "results": [_results_json(event) for event in events],
            "result_count": [event.result_count for event in events],
            "content": [event.content or None for event in events],
            "content_chars": [event.content_chars for event in events],
            "tokens": [event.tokens for event in events],
            "duration_ms": [float(event.duration_ms) for event in events],
            "cause": [None if event.cause is None else json.dumps(event.cause) for event in events],
            "history_ref": [event.history_ref for event in events],
        }
        results = [
            (n, position, result) for n, event in enumerate(events) for position, result in enumerate(event.results)
        ]
        with self._write(schema=True) as cursor:  # plain inserts: the change log's lock is not needed
            keys = self.dialect.insert_rows(cursor, self._activity, columns, len(events))
            if keys is not None:  # the database told the new rows' keys: consecutive, in order
                event_pks = list(range(keys[0], keys[1] + 1))
            else:
                found = self._fetch(
                    f"SELECT a.pk, a.id FROM {self._activity} a WHERE {self._in('a.id', 'ids')}",
                    {"ids": json.dumps(columns["id"])},
                    cursor,
                )
                by_id = {row["id"]: int(row["pk"]) for row in found}
                event_pks = [by_id[event.id] for event in events]
            if results:
                self.dialect.insert_rows(
                    cursor,
                    self._activity_records,
                    {
                        "event_pk": [event_pks[n] for n, _, _ in results],
                        "result_pos": [position for _, position, _ in results],
                        "record_id": [result.record_id for _, _, result in results],
                        "record_type": [result.record_type for _, _, result in results],
                        "result_rank": [result.rank for _, _, result in results],
                        "hop": [result.hop for _, _, result in results],
                        "status": [result.status for _, _, result in results],
                        "kind": [events[n].kind for n, _, _ in results],
                        "event_at": [times[n] for n, _, _ in results],
                        "caller": [events[n].caller for n, _, _ in results],
                        "caller_kind": [events[n].caller_kind for n, _, _ in results],
                    },
                    len(results),
                )

    def purge_activity(self, before: str) -> int:
        """Delete the events recorded before `before` (an ISO-8601 time); returns how many went."""
        if before is None:
            raise ValueError("before must be an ISO-8601 time")
        moment = self.dialect.db_time(normalize_timestamp(before, "before"))
        with self._write(schema=True) as cursor:
            # The records' rows first: a foreign key cascade would do it row by row on SQLite.
            cursor.execute(f"DELETE FROM {self._activity_records} WHERE event_at < :before", {"before": moment})
            cursor.execute(f"DELETE FROM {self._activity} WHERE event_at < :before", {"before": moment})
            return max(cursor.rowcount, 0)

    # --- reading ----------------------------------------------------------------------------

    def list_activity(
        self,
        *,
        kind: Any = None,
        caller: Any = None,
        caller_kind: Any = None,
        user_id: Any = None,
        agent_id: Any = None,
        thread_id: Any = None,
        record_id: Any = None,
        q: Any = None,
        since: Any = None,
        until: Any = None,
        limit: int | None = DEFAULT_LIST_LIMIT,
        cursor: str | None = None,
        include_content: bool = True,
    ) -> Page:
        """Events newest first (by the time of the call), filtered: `kind` (one of KINDS or a list
        of them), `caller` and the scope ids exactly, `caller_kind` ("agent" or "person"),
        `record_id` (events that returned or changed it), `q` (a case-insensitive substring of the
        query), `since` (inclusive) and `until` (exclusive) ISO-8601 times. Pass
        `page.next_cursor` back for the next page. `include_content=False` leaves out the text and
        results (a timeline needs neither)."""
        check_positive_int("limit", limit, allow_none=True)
        if not isinstance(include_content, bool):
            raise ValueError(f"include_content must be True or False, not {include_content!r}")
        params: dict[str, Any] = {}
        conditions = self._activity_filters(
            params,
            kind=kind,
            caller=caller,
            caller_kind=caller_kind,
            user_id=user_id,
            agent_id=agent_id,
            thread_id=thread_id,
            record_id=record_id,
            q=q,
            since=since,
            until=until,
        )
        if cursor is not None:
            after_at, after_pk = decode_cursor(cursor, (str, int))
            conditions.append("(a.event_at < :after_at OR (a.event_at = :after_at AND a.pk < :after_pk))")
            params["after_at"] = self.dialect.db_time(normalize_timestamp(after_at, "cursor"))
            params["after_pk"] = after_pk
        columns = _EVENT_COLUMNS + (", a.content, a.results" if include_content else "")
        where = f"WHERE {' AND '.join(conditions)} " if conditions else ""
        rows = self._fetch(
            f"SELECT {columns} FROM {self._activity} a {where}"
            f"ORDER BY a.event_at DESC, a.pk DESC{self._fetch_first(limit, params)}",
            params,
        )
        more = limit is not None and len(rows) > limit
        events = [self._event(row) for row in rows[:limit]]
        # Newest first by the time of the call, not of its writing: writers in several processes
        # each hold their events for a moment, and a batch's calls may be older than the last one's.
        return Page(events, encode_cursor(events[-1].time, int(rows[limit - 1]["pk"])) if more else None)

    def get_activity(self, event_id: str) -> ActivityEvent | None:
        """One event with its text and results, or None (an id that is not a string is a ValueError)."""
        if not isinstance(event_id, str):
            raise ValueError(f"event_id must be a string, not {type(event_id).__name__}")
        if not event_id or len(event_id) > 64:
            return None
        rows = self._fetch(
            f"SELECT {_EVENT_COLUMNS}, a.content, a.results FROM {self._activity} a WHERE a.id = :id", {"id": event_id}
        )
        return self._event(rows[0]) if rows else None

    def activity_counts(self, **filters: Any) -> ActivityCounts:
        """Counts of the events list_activity(**filters) would list: per caller, kind and day."""
        params: dict[str, Any] = {}
        conditions = self._activity_filters(params, **filters)
        where = f"WHERE {' AND '.join(conditions)} " if conditions else ""
        day = self.dialect.utc_day("a.event_at")
        with self._read() as cursor:
            callers = self._fetch(
                f"SELECT a.caller, a.caller_kind, COUNT(*) AS n FROM {self._activity} a {where}"
                "GROUP BY a.caller, a.caller_kind",
                params,
                cursor,
            )
            kinds = self._fetch(
                f"SELECT a.kind, COUNT(*) AS n FROM {self._activity} a {where}GROUP BY a.kind", params, cursor
            )
            days = self._fetch(
                f"SELECT {day} AS day, a.caller, COUNT(*) AS n FROM {self._activity} a {where}GROUP BY {day}, a.caller",
                params,
                cursor,
            )
        by_caller = sorted(
            ((row["caller"], row["caller_kind"], int(row["n"])) for row in callers), key=lambda c: (-c[2], c[0])
        )
        return ActivityCounts(
            total=sum(count for _, _, count in by_caller),
            by_caller=by_caller,
            by_kind={row["kind"]: int(row["n"]) for row in sorted(kinds, key=lambda row: row["kind"])},
            by_day=sorted((str(row["day"]), row["caller"], int(row["n"])) for row in days),
        )

    def served_records(
        self, record_ids: Sequence[str], *, since: Any = None, caller_kind: Any = None
    ) -> dict[str, ServedRecord]:
        """For each of these records that retrievals returned since `since` (all time when None),
        to callers of `caller_kind` (None: any): how many calls, by which callers, and when last.
        Records never served are left out."""
        if not isinstance(record_ids, list | tuple) or not all(isinstance(value, str) for value in record_ids):
            raise ValueError("record_ids must be a list of record ids")
        ids = list(dict.fromkeys(record_ids))
        if not ids:
            return {}
        params: dict[str, Any] = {"ids": json.dumps(ids)}
        when = ""
        if since is not None:
            params["since"] = self.dialect.db_time(normalize_timestamp(since, "since"))
            when = "AND ar.event_at >= :since "
        if caller_kind is not None:
            params["caller_kind"] = _caller_kind(caller_kind)
            when += "AND ar.caller_kind = :caller_kind "
        rows = self._fetch(
            f"SELECT {_SERVED_COLUMNS} FROM {self._activity_records} ar "
            f"WHERE {self._in('ar.record_id', 'ids')} AND ar.kind IN {_RETRIEVALS_SQL} {when}"
            "GROUP BY ar.record_id, ar.record_type, ar.caller",
            params,
        )
        return self._served(rows)

    def activity_hygiene(self, *, since: Any, limit: int = 10, caller_kind: Any = None) -> ActivityHygiene:
        """The log's view of memory hygiene since `since`, counting the calls of `caller_kind`
        (None: any): the most served records, memories never served (created before `since`,
        oldest first), invalid records still served, and the slowest calls.

        Every write is logged with a row per record it changed, so retrievals are a small part of
        the log's rows: the window's results are read through its retrieval events (their keys),
        never by time alone. The busiest records are ranked in the database, and only those
        returned are broken down by caller; the never-served count is the memories stored before
        `since` (an index of memories by creation) less those of them served since."""
        check_positive_int("limit", limit)
        moment = normalize_timestamp(since, "since")
        # Each statement gets exactly the binds it names: Oracle refuses any other (DPY-4008).
        params: dict[str, Any] = {"since": self.dialect.db_time(moment)}
        whose, whose_event = "", ""
        if caller_kind is not None:
            params["caller_kind"] = _caller_kind(caller_kind)
            whose, whose_event = " AND ar.caller_kind = :caller_kind", " AND a.caller_kind = :caller_kind"
        unserved_params = {**params, "now": self.dialect.db_time(utc_now())}
        events = f"FROM {self._activity} a WHERE a.kind IN {_RETRIEVALS_SQL} AND a.event_at >= :since{whose_event}"
        served = f"FROM {self._activity_records} ar WHERE ar.event_pk IN (SELECT a.pk {events})"
        live = "(r.expires_at IS NULL OR r.expires_at > :now)"
        stored_before = f"r.kind = 'memory' AND r.created_at < :since AND {live}"
        with self._read() as cursor:

            def busiest(condition: str) -> list[dict[str, Any]]:
                busy_params = dict(params)
                return self._fetch(
                    "SELECT ar.record_id, MAX(ar.record_type) AS record_type, COUNT(DISTINCT ar.event_pk) AS n, "
                    f"MAX(ar.event_at) AS last_at {served}{condition} GROUP BY ar.record_id "
                    f"ORDER BY n DESC, ar.record_id{self._fetch_first(limit, busy_params)}",
                    busy_params,
                    cursor,
                )[:limit]

            most, invalid = busiest(""), busiest(" AND ar.status = 'invalid'")
            by_caller = self._served_by_caller([row["record_id"] for row in most + invalid], params, whose, cursor)
            [total] = self._fetch(
                f"SELECT (SELECT COUNT(*) FROM {self._records} r WHERE {stored_before}) - (SELECT COUNT(*) FROM "
                f"(SELECT DISTINCT ar.record_id {served}) s WHERE EXISTS (SELECT 1 FROM {self._records} r "
                f"WHERE r.id = s.record_id AND {stored_before})) AS n{self.dialect.from_nothing}",
                unserved_params,
                cursor,
            )
            never_params = dict(unserved_params)
            never = self._fetch(
                f"SELECT r.id, r.record_type, r.created_at FROM {self._records} r WHERE {stored_before} "
                f"AND NOT EXISTS (SELECT 1 FROM {self._activity_records} ar WHERE ar.record_id = r.id "
                f"AND ar.kind IN {_RETRIEVALS_SQL} AND ar.event_at >= :since{whose}) "
                f"ORDER BY r.created_at, r.pk{self._fetch_first(limit, never_params)}",
                never_params,
                cursor,
            )[:limit]
            slow_params = dict(params)
            slowest = self._fetch(
                f"SELECT {_EVENT_COLUMNS} {events} ORDER BY a.duration_ms DESC, a.pk DESC"
                f"{self._fetch_first(limit, slow_params)}",
                slow_params,
                cursor,
            )[:limit]
        text_time = self.dialect.text_time

        def records(rows: list[dict[str, Any]], counts: str) -> list[ServedRecord]:
            return [
                ServedRecord(
                    row["record_id"],
                    row["record_type"],
                    int(row["n"]),
                    text_time(row["last_at"]),
                    {caller: n[counts] for caller, n in by_caller.get(row["record_id"], {}).items() if n[counts]},
                )
                for row in rows
            ]

        return ActivityHygiene(
            since=moment,
            most_served=records(most, "calls"),
            never_served=[(row["id"], row["record_type"], text_time(row["created_at"])) for row in never],
            never_served_total=int(total["n"]),
            invalid_served=records(invalid, "invalid"),
            slowest=[self._event(row) for row in slowest],
        )

    def _served_by_caller(
        self, record_ids: list[str], params: dict[str, Any], whose: str, cursor: Any
    ) -> dict[str, dict[str, dict[str, int]]]:
        """For each of these records, its retrievals since :since by each caller: {"calls": n,
        "invalid": n of them that served it invalid}; one grouped query by the records' index."""
        ids = list(dict.fromkeys(record_ids))
        if not ids:
            return {}
        rows = self._fetch(
            "SELECT ar.record_id, ar.caller, COUNT(DISTINCT ar.event_pk) AS n, "
            "COUNT(DISTINCT CASE WHEN ar.status = 'invalid' THEN ar.event_pk END) AS invalid_n "
            f"FROM {self._activity_records} ar WHERE {self._in('ar.record_id', 'ids')} "
            f"AND ar.kind IN {_RETRIEVALS_SQL} AND ar.event_at >= :since{whose} GROUP BY ar.record_id, ar.caller",
            {**params, "ids": json.dumps(ids)},
            cursor,
        )
        callers: dict[str, dict[str, dict[str, int]]] = {}
        for row in rows:
            callers.setdefault(row["record_id"], {})[row["caller"]] = {
                "calls": int(row["n"]),
                "invalid": int(row["invalid_n"]),
            }
        return callers

    # --- helpers ----------------------------------------------------------------------------

    def _activity_filters(
        self,
        params: dict[str, Any],
        *,
        kind: Any = None,
        caller: Any = None,
        caller_kind: Any = None,
        user_id: Any = None,
        agent_id: Any = None,
        thread_id: Any = None,
        record_id: Any = None,
        q: Any = None,
        since: Any = None,
        until: Any = None,
    ) -> list[str]:
        """The WHERE conditions (on alias a) of a filtered log, binds added to `params`; ValueError
        naming a bad filter."""
        conditions = []
        if kind is not None:
            kinds = [kind] if isinstance(kind, str) else list(kind) if isinstance(kind, list | tuple) else None
            if not kinds or any(value not in KINDS for value in kinds):
                raise ValueError(f"kind must be one of {', '.join(KINDS)} (or a list of them), not {kind!r}")
            binds = []
            for i, value in enumerate(dict.fromkeys(kinds)):
                params[f"kind{i}"] = value
                binds.append(f":kind{i}")
            conditions.append(f"a.kind IN ({', '.join(binds)})")
        if caller_kind is not None:
            conditions.append("a.caller_kind = :caller_kind")
            params["caller_kind"] = _caller_kind(caller_kind)
        for name, value in (("caller", caller), ("user_id", user_id), ("agent_id", agent_id), ("thread_id", thread_id)):
            if value is not None:
                check_id(name, value)
                conditions.append(f"a.{name} = :{name}")
                params[name] = value
        if record_id is not None:
            check_id("record_id", record_id)
            conditions.append(
                f"EXISTS (SELECT 1 FROM {self._activity_records} ar "
                "WHERE ar.event_pk = a.pk AND ar.record_id = :record_id)"
            )
            params["record_id"] = record_id
        if q is not None:
            if not isinstance(q, str):
                raise ValueError(f"q must be a string, not {type(q).__name__}")
            if len(q) > MAX_Q_CHARS:
                raise ValueError(f"q is {len(q):,} characters; the limit is {MAX_Q_CHARS:,}")
            pattern = like_pattern(q)
            if pattern is not None:
                params["text_pattern"] = pattern
                condition, binds = self.dialect.contains_text("a.query_text", pattern)
                conditions.append(condition)
                params.update(binds)
        for name, value, operator in (("since", since, ">="), ("until", until, "<")):
            if value is not None:
                params[name] = self.dialect.db_time(normalize_timestamp(value, name))
                conditions.append(f"a.event_at {operator} :{name}")
        return conditions

    def _event(self, row: Mapping[str, Any]) -> ActivityEvent:
        results = row.get("results")
        return ActivityEvent(
            id=row["id"],
            kind=row["kind"],
            call=row["entry_point"],
            time=self.dialect.text_time(row["event_at"]),
            caller=row["caller"],
            caller_kind=row["caller_kind"],
            on_behalf_of=row["on_behalf_of"],
            scope={"user_id": row["user_id"], "agent_id": row["agent_id"], "thread_id": row["thread_id"]},
            request=json.loads(row["request"]) if row["request"] else {},
            results=tuple(ActivityResult.from_json(item) for item in json.loads(results)) if results else (),
            result_count=int(row["result_count"]),
            content=row.get("content") or "",
            content_chars=int(row["content_chars"]),
            tokens=int(row["tokens"]),
            duration_ms=float(row["duration_ms"]),
            cause=json.loads(row["cause"]) if row["cause"] else None,
            history_ref=row["history_ref"],
        )

    def _served(self, rows: list[dict[str, Any]]) -> dict[str, ServedRecord]:
        """ServedRecords from (record_id, record_type, caller, n, last_at) rows, merged per record."""
        text_time = self.dialect.text_time
        merged: dict[str, dict[str, Any]] = {}
        for row in rows:
            entry = merged.setdefault(
                row["record_id"], {"record_type": row["record_type"], "calls": 0, "last": "", "by_caller": {}}
            )
            entry["calls"] += int(row["n"])
            entry["by_caller"][row["caller"]] = entry["by_caller"].get(row["caller"], 0) + int(row["n"])
            entry["last"] = max(entry["last"], text_time(row["last_at"]))
        return {
            record_id: ServedRecord(record_id, entry["record_type"], entry["calls"], entry["last"], entry["by_caller"])
            for record_id, entry in merged.items()
        }


def _caller_kind(value: Any) -> str:
    if value not in CALLER_KINDS:
        raise ValueError(f"caller_kind must be one of {', '.join(CALLER_KINDS)}, not {value!r}")
    return value
