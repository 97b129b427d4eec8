"""The SQL store's erasure of a person, and the scrubbing of its files afterwards.

An erasure is one transaction: the person's profile, threads, messages, memories, images and the
links touching their memories go (as delete_user with cascade would take them), and so does the
activity log's copy of them: their own events (kept without any text when they say who read or
exported something, the audit's kinds), and the results and text of other callers' events that
served their records. Nothing half done survives a crash; a re-run finds what is left.

Deleted rows are not yet gone from the files: SQLite keeps them in free pages and in the
write-ahead log, FTS5 keeps deleted words in its segments until they are merged, and the search
index's generations keep their vocabulary. scrub_files empties each (the erasure runs it).
"""

from __future__ import annotations

import json
from typing import Any

from ...limits import check_id
from ...types import USER_PROFILE_TYPE, ErasureReport, ScrubReport
from .changelog import _IndexSource
from .common import _ids_json, log

AUDIT_KINDS = ("view", "export")
"""Activity kinds that record who read or exported something: ids and the reader, never text. An
erasure keeps the person's such events (stripped of any request or text), so that who saw their
data can still be answered; every other event of theirs is deleted."""
_AUDIT_SQL = "(" + ", ".join(f"'{kind}'" for kind in AUDIT_KINDS) + ")"
_TEXT_COLUMNS = "query_text = NULL, request = '{}', content = NULL, content_chars = 0, cause = NULL"


class ErasureMixin:
    """SQLMemoryStore's erasure of a user (erase_user, with a preview) and scrub_files."""

    def erase_user(self, user_id: str, *, dry_run: bool = False) -> ErasureReport:
        """See MemoryStore.erase_user."""
        check_id("user_id", user_id)
        if not isinstance(dry_run, bool):
            raise TypeError(f"dry_run must be True or False, not {dry_run!r}")
        if dry_run:
            with self._read() as cursor:
                return self._erasure(cursor, user_id, erase=False)
        with self._write() as cursor:
            return self._erasure(cursor, user_id, erase=True)

    def _erasure(self, cursor: Any, user_id: str, *, erase: bool) -> ErasureReport:
        threads = [
            row["id"]
            for row in self._fetch(
                f"SELECT t.id FROM {self._threads} t WHERE t.user_id = :user_id", {"user_id": user_id}, cursor
            )
        ]
        condition = (
            f"(r.user_id = :user_id OR (r.kind = '{USER_PROFILE_TYPE}' AND r.id = :user_id) "
            f"OR {self._in('r.thread_id', 'threads')})"
        )
        params = {"user_id": user_id, "threads": _ids_json(threads)}
        records = self._fetch(f"SELECT r.pk, r.id, r.kind FROM {self._records} r WHERE {condition}", params, cursor)
        messages = [row["id"] for row in records if row["kind"] == "message"]
        if messages:  # an image of their message lives in their thread, but go by the message too
            seen = {row["pk"] for row in records}
            records += [
                row
                for row in self._fetch(
                    f"SELECT r.pk, r.id, r.kind FROM {self._records} r WHERE r.kind = 'image' "
                    f"AND {self._in('r.message_id', 'messages')}",
                    {"messages": _ids_json(messages)},
                    cursor,
                )
                if row["pk"] not in seen
            ]
        memories = [row["id"] for row in records if row["kind"] == "memory"]
        links = (
            self._fetch(
                f"SELECT rel.id FROM {self._relations} rel "
                f"WHERE {self._in('rel.source_id', 'ids')} OR {self._in('rel.target_id', 'ids')}",
                {"ids": _ids_json(memories)},
                cursor,
            )
            if memories
            else []
        )
        record_ids = [row["id"] for row in records]
        own_events = f"(a.user_id = :user_id OR {self._in('a.thread_id', 'threads')})"
        audit = self._fetch(
            f"SELECT COUNT(*) AS n FROM {self._activity} a WHERE {own_events} AND a.kind IN {_AUDIT_SQL}",
            params,
            cursor,
        )[0]["n"]
        own = self._fetch(
            f"SELECT a.pk FROM {self._activity} a WHERE {own_events} AND a.kind NOT IN {_AUDIT_SQL}", params, cursor
        )
        served_ids = [*record_ids, *threads]
        served = self._served_by_others(cursor, served_ids, params, own_events) if served_ids else []
        counts = {
            "profile": sum(1 for row in records if row["kind"] == USER_PROFILE_TYPE),
            "threads": len(threads),
            "messages": len(messages),
            "memories": len(memories),
            "images": sum(1 for row in records if row["kind"] == "image"),
            "links": len(links),
            "activity_events": len(own) + int(audit),
            "activity_served": len(served),
        }
        erased = sorted(
            [
                *(("record", record_id) for record_id in record_ids),
                *(("thread", thread_id) for thread_id in threads),
                *(("link", row["id"]) for row in links),
            ]
        )
        report = ErasureReport(user_id, counts, tuple(erased))
        if not erase:
            return report
        # The activity log first (its rows name the records, which are still there to be found).
        pks = _ids_json(row["pk"] for row in own)
        if own:
            cursor.execute(
                f"DELETE FROM {self._activity_records} WHERE {self._in('event_pk', 'pks', True)}", {"pks": pks}
            )
            cursor.execute(f"DELETE FROM {self._activity} WHERE {self._in('pk', 'pks', True)}", {"pks": pks})
        if audit:
            cursor.execute(
                f"UPDATE {self._activity} SET {_TEXT_COLUMNS} WHERE pk IN (SELECT a.pk FROM {self._activity} a "
                f"WHERE {own_events} AND a.kind IN {_AUDIT_SQL})",
                params,
            )
        if served:
            self._cut_served(cursor, served, set(served_ids))
        if records or threads:
            self._delete_where(cursor, condition, params)
            if threads:
                cursor.execute(
                    f"DELETE FROM {self._threads} WHERE {self._in('id', 'threads')}", {"threads": params["threads"]}
                )
                self._log_threads(cursor, len(threads))
        return report

    def _served_by_others(self, cursor: Any, ids: list[str], params: dict[str, Any], own_events: str) -> list[Any]:
        """The events of other callers whose results name one of `ids` (their pks)."""
        rows = self._fetch(
            f"SELECT DISTINCT ar.event_pk FROM {self._activity_records} ar WHERE {self._in('ar.record_id', 'ids')}",
            {"ids": _ids_json(ids)},
            cursor,
        )
        if not rows:
            return []
        candidates = [row["event_pk"] for row in rows]
        mine = {
            row["pk"]
            for row in self._fetch(
                f"SELECT a.pk FROM {self._activity} a WHERE {self._in('a.pk', 'pks', True)} AND {own_events}",
                {**params, "pks": _ids_json(candidates)},
                cursor,
            )
        }
        return [pk for pk in candidates if pk not in mine]

    def _cut_served(self, cursor: Any, event_pks: list[Any], ids: set[str]) -> None:
        """Take the erased records out of other callers' events: their results (and the rows that
        index them), and the text the call handed back, which held theirs among the rest."""
        rows = self._fetch(
            f"SELECT a.pk, a.results FROM {self._activity} a WHERE {self._in('a.pk', 'pks', True)}",
            {"pks": _ids_json(event_pks)},
            cursor,
        )
        updates = []
        for row in rows:
            results = json.loads(row["results"] or "[]")
            kept = [
                result
                for result in results
                if result.get("record_id") not in ids and not ids.intersection(result.get("path") or ())
            ]
            updates.append({"pk": row["pk"], "results": json.dumps(kept, separators=(",", ":"))})
        cursor.executemany(
            f"UPDATE {self._activity} SET results = :results, content = NULL, content_chars = 0 WHERE pk = :pk",
            updates,
        )
        cursor.execute(
            f"DELETE FROM {self._activity_records} WHERE {self._in('event_pk', 'pks', True)} "
            f"AND {self._in('record_id', 'ids')}",
            {"pks": _ids_json(event_pks), "ids": _ids_json(sorted(ids))},
        )

    def scrub_files(self, *, vacuum: bool | None = None) -> ScrubReport:
        """See MemoryStore.scrub_files."""
        if vacuum is not None and not isinstance(vacuum, bool):
            raise TypeError(f"vacuum must be True, False or None, not {vacuum!r}")
        purged = False
        statements = self.dialect.purge_text_index_sql(self._text_index_name)
        if statements and self._text_index_in_use():
            self._refresh_text_index()  # a text index kept from the change log learns of the deletes first
            with self._write(schema=True) as cursor:  # the change log's lock is not needed
                for statement in statements:
                    cursor.execute(statement)
            purged = True
        checkpointed, vacuumed = self._scrub_database_files(vacuum)
        rewritten, removed = False, 0
        if self.index is not None:
            with self._read() as cursor:
                gone = self.index.rewrite(_IndexSource(self, cursor))
            rewritten, removed = True, gone or 0
        report = ScrubReport(purged, checkpointed, vacuumed, rewritten, removed)
        log.info("scrubbed the store's files: %s", report)
        return report

    def _text_index_in_use(self) -> bool:
        """Whether a keyword index holds words: one the database keeps (Oracle Text) when it is
        there, one kept from the change log (FTS5) once a search has filled it."""
        if self.dialect.text_index_refresh(self._text_index_name, self._records, None):
            with self._read() as cursor:
                return self._text_index_seq(cursor) >= 0
        return self._text_index_ready()

    def _scrub_database_files(self, vacuum: bool | None) -> tuple[bool, bool]:
        """The database's own copies of deleted rows (a dialect with files of its own overrides
        this): whether it checkpointed a write-ahead log, and whether it rewrote the file."""
        return False, False
