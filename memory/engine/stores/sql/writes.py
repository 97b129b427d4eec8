"""The SQL store's writes of records: insert, profiles, update, deletes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ...images import CheckedImage
from ...limits import check_id, dump_metadata
from ...ttl import expiry, utc_now
from ...types import AGENT_PROFILE_TYPE, IMAGE_TYPE, MESSAGE_TYPE, NOT_SET, USER_PROFILE_TYPE, check_bool
from ..arguments import (
    check_profile,
    check_record_type,
    check_version,
    expected_version_of,
    kind_of,
    normalize_rows,
    storable_id,
    to_vector,
)
from ..plans import AddPlan, NewRecord, prepare_update
from .common import _LIFECYCLE_SQL, _ids_json
from .findings import redacted_copy, redacted_parts


class WriteMixin:
    """SQLMemoryStore's writes of records: add's insert, profiles, update and the deletes."""

    # --- writes -----------------------------------------------------------------------------

    def _insert(self, plan: AddPlan, check_ids: bool, batch_size: int) -> list[str]:
        rows, checked = plan.rows, plan.images
        with self._write() as cursor:
            if check_ids:
                self._check_new_ids(cursor, rows)
            seq_numbers = self._touch_threads(cursor, rows, plan.now)
            try:
                inserted = self.dialect.insert_rows(
                    cursor, self._records, self._record_values(plan, seq_numbers), batch_size
                )
            except Exception as exc:  # a taken id that slipped past the check (check_ids=False)
                if self.dialect.is_unique_violation(exc):
                    raise ValueError(
                        f"a {kind_of(rows[0].record_type)} record with one of these ids already exists"
                    ) from None
                raise
            self._insert_image_bytes(cursor, rows, checked)
            ids = [row.id for row in rows]
            self._log_inserted(cursor, kind_of(rows[0].record_type), ids, inserted)
        return ids

    def _insert_image_bytes(self, cursor: Any, rows: list[NewRecord], checked: list[tuple[Any, Any]]) -> None:
        """The bytes of newly inserted image records (`checked`: one (image, owner) per row)."""
        if not checked:
            return
        keys = {
            row["id"]: row["pk"]
            for row in self._fetch(
                f"SELECT id, pk FROM {self._records} r WHERE kind = 'image' AND {self._in('r.id', 'ids')}",
                {"ids": _ids_json(row.id for row in rows)},
                cursor,
            )
        }
        cursor.executemany(
            f"INSERT INTO {self._image_bytes} (record_pk, bytes) VALUES (:record_pk, :bytes)",
            [{"record_pk": keys[row.id], "bytes": image.data} for row, (image, _) in zip(rows, checked, strict=True)],
        )

    def _record_values(self, plan: AddPlan, seq_numbers: list[int | None]) -> dict[str, list]:
        """The new records' column values, one list per column: a comprehension per column runs
        in a fraction of the time of a dict per record (bench/ingest.py). One record type per batch."""
        rows, images, count = plan.rows, plan.images, len(plan.rows)
        db_time, vector = self.dialect.db_time, self.dialect.vector
        contents = [row.content for row in rows]
        index_texts = [row.index_text for row in rows]
        roles = [row.role for row in rows]
        return {
            "id": [row.id for row in rows],
            "kind": [kind_of(rows[0].record_type)] * count,
            "record_type": [rows[0].record_type] * count,
            "content": [content or None for content in contents],
            "index_text": [text or None for text in index_texts],
            "index_text_empty": [int(text == "") for text in index_texts],
            "search_text": [
                (text if text is not None else content) or None
                for text, content in zip(index_texts, contents, strict=True)
            ],
            "parts": [row.parts for row in rows],
            "thread_id": [row.thread_id for row in rows],
            "user_id": [row.user_id for row in rows],
            "agent_id": [row.agent_id for row in rows],
            "role": [role or None for role in roles],
            "role_empty": [int(role == "") for role in roles],
            "seq_no": seq_numbers,
            "event_at": [db_time(row.timestamp) for row in rows],
            "created_at": [db_time(plan.now)] * count,
            "expires_at": [db_time(at) for at in plan.expiries],
            "status": [row.status for row in rows],
            "metadata": [row.metadata for row in rows],
            "embedding": [vector(values) for values in plan.vectors],
            "message_id": [owner for _, owner in images] if images else [None] * count,
            "mime_type": [image.mime_type.value for image, _ in images] if images else [None] * count,
        }

    def _check_new_ids(self, cursor: Any, rows: list[NewRecord]) -> None:
        kind = kind_of(rows[0].record_type)
        taken = self._fetch(
            f"SELECT id FROM {self._records} r WHERE r.kind = :kind AND {self._in('r.id', 'ids')}"
            + self.dialect.first_rows("1"),
            {"kind": kind, "ids": _ids_json(row.id for row in rows)},
            cursor,
        )
        if taken:
            raise ValueError(f"a {kind} record with id {taken[0]['id']!r} already exists")

    def _ensure_thread(self, cursor: Any, thread_id: str, user_id: Any, agent_id: Any, now: str, **extra: Any) -> bool:
        """Create the thread row unless it exists (a concurrent creator wins quietly); whether this
        call created it."""
        values = {"id": thread_id, "user_id": user_id, "agent_id": agent_id, "now": self.dialect.db_time(now), **extra}
        columns = {column: f":{column}" for column in ["id", "user_id", "agent_id", *extra]}
        try:
            cursor.execute(
                self.dialect.insert_if_absent(
                    self._threads, ["id"], {**columns, "created_at": ":now", "updated_at": ":now"}
                ),
                values,
            )
        except Exception as exc:
            if not self.dialect.is_unique_violation(exc):
                raise
            return False
        created = cursor.rowcount > 0
        self._log_threads(cursor, cursor.rowcount)
        return created

    def _log_threads(self, cursor: Any, count: int) -> None:
        """Note in the change log that threads were created or deleted (`count` of them, if any):
        indexes ignore such entries, but stats() knows from the log's newest entry that its
        memoised counts are out of date."""
        if count > 0:
            cursor.execute(
                f"INSERT INTO {self._changes} (entity, first_key, last_key) VALUES ('thread', 0, 0)",
            )
            self._trim_log(cursor)

    def _touch_threads(self, cursor: Any, rows: list[NewRecord], now: str) -> list[int | None]:
        """Create missing thread rows, mark activity, and number new messages within each thread."""
        seq_numbers: list[int | None] = [None] * len(rows)
        by_thread: dict[str, list[int]] = {}
        for i, row in enumerate(rows):
            if row.thread_id is not None:
                by_thread.setdefault(row.thread_id, []).append(i)
        for thread_id, indexes in by_thread.items():
            first = rows[indexes[0]]
            self._ensure_thread(cursor, thread_id, first.user_id, first.agent_id, now, settings="{}")
            messages = [i for i in indexes if rows[i].record_type == MESSAGE_TYPE]
            # The UPDATE locks the thread row until commit, so concurrent writers number in turn.
            cursor.execute(
                f"UPDATE {self._threads} SET updated_at = :now, next_seq_no = next_seq_no + :n WHERE id = :id",
                {"now": self.dialect.db_time(now), "n": len(messages), "id": thread_id},
            )
            if messages:
                [row] = self._fetch(
                    f"SELECT next_seq_no FROM {self._threads} WHERE id = :id", {"id": thread_id}, cursor
                )
                for offset, i in enumerate(messages):
                    seq_numbers[i] = int(row["next_seq_no"]) - len(messages) + offset
        return seq_numbers

    def _add_profile(
        self, record_type: str, owner_id: str, information: str, metadata: Any, expected_version: Any
    ) -> str:
        name = check_profile(record_type, owner_id, information)
        information, flagged, _ = self._screen_text(information)
        expected = expected_version_of(expected_version)
        vector = normalize_rows(self._embed([information]))[0] if information else None
        params = {
            "id": owner_id,
            "kind": record_type,
            "content": information or None,
            "search_text": information or None,
            "metadata": dump_metadata(metadata),
            "embedding": self.dialect.vector(vector),
            "now": self.dialect.db_time(utc_now()),
        }
        with self._write() as cursor:
            if expected is not None:  # the profile must be at that version (0: must not exist yet)
                rows = self._fetch(
                    f"SELECT version FROM {self._records} WHERE kind = :kind AND id = :id{self.dialect.for_update}",
                    {"kind": record_type, "id": owner_id},
                    cursor,
                )
                check_version(f"{record_type} {owner_id!r}", expected, rows[0]["version"] if rows else None)
            self.dialect.declare(cursor, ["embedding"])  # no LONG binds: Oracle takes those only as inserted values
            cursor.execute(
                self.dialect.upsert(
                    self._records,
                    ["kind", "id"],
                    {
                        "id": ":id",
                        "kind": ":kind",
                        "record_type": ":kind",
                        "content": ":content",
                        "search_text": ":search_text",
                        name: ":id",
                        "created_at": ":now",
                        "metadata": ":metadata",
                        "embedding": ":embedding",
                    },
                    ["content", "search_text", "metadata", "embedding"],
                    increments=["version"],
                ),
                params,
            )
            self._log(
                cursor, "record", self._records, "r.kind = :kind AND r.id = :id", {"kind": record_type, "id": owner_id}
            )
            self._refresh_findings(cursor, None, flagged, kind=record_type, record_id=owner_id)
        return owner_id

    def add_user(
        self, user_id: str, information: str, metadata: dict | None = None, *, expected_version: Any = NOT_SET
    ) -> str:
        """Insert (or replace) a user's profile text; returns the user id."""
        return self._add_profile(USER_PROFILE_TYPE, user_id, information, metadata, expected_version)

    def add_agent(
        self, agent_id: str, information: str, metadata: dict | None = None, *, expected_version: Any = NOT_SET
    ) -> str:
        """Insert (or replace) an agent's profile text; returns the agent id."""
        return self._add_profile(AGENT_PROFILE_TYPE, agent_id, information, metadata, expected_version)

    def update(
        self,
        record_type: str,
        record_id: str,
        text: Any = NOT_SET,
        index_text: Any = NOT_SET,
        embedding: Any = NOT_SET,
        metadata: Any = NOT_SET,
        *,
        content: Any = NOT_SET,
        timestamp: Any = NOT_SET,
        ttl_days: Any = NOT_SET,
        ttl_anchor: Any = NOT_SET,
        status: Any = NOT_SET,
        content_parts: Any = NOT_SET,
        image: Any = NOT_SET,
        role: Any = NOT_SET,
        expires_at: Any = NOT_SET,
        memory_type: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        expected_version: Any = NOT_SET,
    ) -> int:
        """Update one live record; returns 1, or 0 when it does not exist or has expired."""
        check_record_type(record_type)
        if image is not NOT_SET and (record_type != IMAGE_TYPE or not isinstance(image, CheckedImage)):
            raise ValueError("image= takes a checked image (images.check_image), for image records only")
        expected = expected_version_of(expected_version)
        flagged = None  # the new text's detections, when the text changes
        if content is not NOT_SET or text is not NOT_SET:
            new_text = content if content is not NOT_SET else text
            screened, flagged, redacted = self._screen_text(new_text)
            if redacted:  # the same values leave the index text and the message's parts too
                index_text = redacted_copy(index_text, new_text, redacted)
                content_parts = redacted_parts(content_parts, new_text, redacted)
                content, text = (screened, NOT_SET) if content is not NOT_SET else (NOT_SET, screened)
        with self._write() as cursor:
            row = self._live_row(cursor, record_type, record_id)
            stored_index_text = None
            if row is not None:
                stored_index_text = "" if row["index_text_empty"] else row["index_text"]
            plan = prepare_update(
                text,
                index_text,
                embedding,
                metadata,
                content,
                timestamp,
                ttl_days,
                ttl_anchor,
                status,
                content_parts,
                image is not NOT_SET,
                (row["content"] or "") if row else "",
                stored_index_text,
                record_type=record_type,
                role=role,
                expires_at=expires_at,
                memory_type=memory_type,
                user_id=user_id,
                agent_id=agent_id,
            )
            if row is None:
                return 0
            check_version(f"{record_type} {record_id!r}", expected, row["version"])
            changes: dict[str, Any] = {}
            if plan.role is not NOT_SET:
                changes["role"], changes["role_empty"] = plan.role, 0
            if plan.record_type is not NOT_SET:
                changes["record_type"] = plan.record_type
            changes.update(plan.owners)
            if plan.expires_at is not NOT_SET:
                changes["expires_at"] = self.dialect.db_time(plan.expires_at)
            if plan.content is not NOT_SET:
                changes["content"] = plan.content or None
            if plan.index_text is not NOT_SET:
                changes["index_text"] = plan.index_text or None
                changes["index_text_empty"] = int(plan.index_text == "")
            if plan.content is not NOT_SET or plan.index_text is not NOT_SET:
                new_index = stored_index_text if plan.index_text is NOT_SET else plan.index_text
                new_content = (row["content"] or "") if plan.content is NOT_SET else plan.content
                changes["search_text"] = (new_index if new_index is not None else new_content) or None
            for column in ("parts", "metadata", "status"):
                value = getattr(plan, column)
                if value is not NOT_SET:
                    changes[column] = value
            if plan.timestamp is not NOT_SET:
                changes["event_at"] = self.dialect.db_time(plan.timestamp)
            if plan.embedding is not NOT_SET:
                changes["embedding"] = (
                    None
                    if plan.embedding is None
                    else self.dialect.vector(normalize_rows(to_vector(plan.embedding, self.vector_dim)[None, :])[0])
                )
            elif plan.embed_text is not NOT_SET:
                changes["embedding"] = (
                    self.dialect.vector(normalize_rows(self._embed([plan.embed_text]))[0]) if plan.embed_text else None
                )
            if plan.ttl_days is not NOT_SET or plan.ttl_anchor is not NOT_SET:
                event = plan.timestamp if plan.timestamp is not NOT_SET else self.dialect.text_time(row["event_at"])
                changes["expires_at"] = self.dialect.db_time(
                    expiry(
                        plan.ttl_days,
                        plan.ttl_anchor,
                        created_at=self.dialect.text_time(row["created_at"]),
                        timestamp=event,
                        retention=self.retention,
                    )
                )
            if image is not NOT_SET:
                changes["mime_type"] = image.mime_type.value
                cursor.execute(
                    f"UPDATE {self._image_bytes} SET bytes = :bytes WHERE record_pk = :pk",
                    {"bytes": image.data, "pk": row["pk"]},
                )
            assignments = ", ".join(f"{column} = :{column}" for column in changes)
            self.dialect.declare(cursor, changes)
            cursor.execute(
                f"UPDATE {self._records} SET {assignments}, version = version + 1 WHERE pk = :pk",
                {**changes, "pk": row["pk"]},
            )
            self._log_keys(cursor, "record", [row["pk"]])
            if flagged is not None and "content" in changes:
                self._refresh_findings(cursor, row["pk"], flagged)
            if changes.get("record_type", record_type) != record_type:
                self._retype_links(cursor, record_id, changes["record_type"])
            if record_type == MESSAGE_TYPE and "expires_at" in changes:
                cursor.execute(
                    f"UPDATE {self._records} SET expires_at = :expires_at, version = version + 1 "
                    "WHERE kind = 'image' AND message_id = :id",
                    {"expires_at": changes["expires_at"], "id": record_id},
                )
                self._log(cursor, "record", self._records, "r.kind = 'image' AND r.message_id = :id", {"id": record_id})
            if row["thread_id"] is not None:
                self._touch_activity(cursor, [row["thread_id"]])
        return 1

    def _retype_links(self, cursor: Any, memory_id: str, record_type: str) -> None:
        """A memory's links name its type at each end they hold it: they follow a change of type."""
        for end in ("source", "target"):
            cursor.execute(
                f"UPDATE {self._relations} SET {end}_type = :record_type, version = version + 1 WHERE {end}_id = :id",
                {"record_type": record_type, "id": memory_id},
            )
        self._log(cursor, "link", self._relations, "rel.source_id = :id OR rel.target_id = :id", {"id": memory_id})

    def _touch_activity(self, cursor: Any, thread_ids: Iterable[str]) -> None:
        cursor.execute(
            f"UPDATE {self._threads} SET updated_at = :now WHERE {self._in('id', 'ids')}",
            {"now": self.dialect.db_time(utc_now()), "ids": _ids_json(sorted(set(thread_ids)))},
        )

    def _live_row(self, cursor: Any, record_type: str, record_id: Any) -> dict[str, Any] | None:
        if not isinstance(record_id, str):
            raise ValueError(f"record_id must be a string, not {type(record_id).__name__}")
        if not storable_id(record_id):
            return None
        rows = self._fetch(
            f"SELECT r.pk, r.content, r.index_text, r.index_text_empty, r.thread_id, r.event_at, r.created_at, "
            f"r.version FROM {self._records} r WHERE r.kind = :kind AND r.id = :id AND r.record_type = :record_type "
            "AND (r.expires_at IS NULL OR r.expires_at > :now)" + self.dialect.for_update,
            {
                "kind": kind_of(record_type),
                "id": record_id,
                "record_type": record_type,
                "now": self.dialect.db_time(utc_now()),
            },
            cursor,
        )
        return rows[0] if rows else None

    def _delete_where(self, cursor: Any, condition: str, params: Mapping[str, Any]) -> int:
        """Delete the records matching `condition` (alias r) with what goes with them; returns how many.

        What SQLite's triggers do, done here explicitly (a row trigger could not read the table
        it changes): a deleted memory's links go, and the memories they invalidated are
        recounted; a deleted message's images go; image bytes follow by ON DELETE CASCADE.
        """
        victims = self._fetch(
            f"SELECT r.pk, r.id, r.kind, r.thread_id FROM {self._records} r WHERE {condition}", params, cursor
        )
        if not victims:
            return 0
        memories = [row["id"] for row in victims if row["kind"] == "memory"]
        messages = [row["id"] for row in victims if row["kind"] == MESSAGE_TYPE]
        if memories:
            targets = self._fetch(
                f"SELECT DISTINCT rel.target_id FROM {self._relations} rel WHERE {self._in('rel.source_id', 'ids')} "
                f"AND rel.relation_type IN {_LIFECYCLE_SQL}",
                {"ids": _ids_json(memories)},
                cursor,
            )
            links = f"{self._in('rel.source_id', 'ids')} OR {self._in('rel.target_id', 'ids')}"
            self._log(cursor, "link", self._relations, links, {"ids": _ids_json(memories)})
            cursor.execute(
                f"DELETE FROM {self._relations} WHERE {self._in('source_id', 'ids')} OR {self._in('target_id', 'ids')}",
                {"ids": _ids_json(memories)},
            )
            self._recount_lifecycle(cursor, (row["target_id"] for row in targets))
        pks = [row["pk"] for row in victims]
        if messages:
            images = self._fetch(
                f"SELECT r.pk FROM {self._records} r WHERE r.kind = 'image' AND {self._in('r.message_id', 'ids')}",
                {"ids": _ids_json(messages)},
                cursor,
            )
            pks += [row["pk"] for row in images]
        cursor.execute(
            f"DELETE FROM {self._records} WHERE {self._in('pk', 'pks', numeric=True)}", {"pks": json.dumps(pks)}
        )
        self._log_keys(cursor, "record", pks)
        return len(victims)

    def delete(
        self, record_type: str, record_id: str, cascade: bool = False, *, expected_version: Any = NOT_SET
    ) -> int:
        """Delete one record (expired or not); returns the number deleted, 0 or 1. With
        `expected_version`, the record's row is read (locked) in the delete's transaction: gone
        is 0, another version StaleVersionError with nothing deleted."""
        check_record_type(record_type)
        if not isinstance(record_id, str):
            raise ValueError(f"record_id must be a string, not {type(record_id).__name__}")
        expected = expected_version_of(expected_version)
        if not storable_id(record_id):
            return 0
        with self._write() as cursor:
            if expected is not None:  # by kind and id: a memory retyped meanwhile is changed, not gone
                found = self._fetch(
                    f"SELECT r.version FROM {self._records} r WHERE r.kind = :kind AND r.id = :id"
                    + self.dialect.for_update,
                    {"kind": kind_of(record_type), "id": record_id},
                    cursor,
                )
                if not found:
                    return 0
                check_version(f"{record_type} {record_id!r}", expected, found[0]["version"])
            owner = self._fetch(
                f"SELECT r.thread_id FROM {self._records} r WHERE r.kind = :kind AND r.id = :id "
                "AND r.record_type = :record_type",
                {"kind": kind_of(record_type), "id": record_id, "record_type": record_type},
                cursor,
            )
            deleted = self._delete_where(
                cursor,
                "r.kind = :kind AND r.id = :id AND r.record_type = :record_type",
                {"kind": kind_of(record_type), "id": record_id, "record_type": record_type},
            )
            threads = [row["thread_id"] for row in owner if row["thread_id"] is not None]
            if threads:
                self._touch_activity(cursor, threads)
        return deleted

    def delete_thread(self, thread_id: str, *, expected_version: Any = NOT_SET) -> int:
        """Delete a thread with every record it holds; returns the number of threads deleted.
        With `expected_version` the thread's version is compared first, in the same transaction."""
        check_id("thread_id", thread_id)
        expected = expected_version_of(expected_version)
        with self._write() as cursor:
            if not self._thread_at(cursor, thread_id, expected):
                return 0
            self._delete_where(cursor, "r.thread_id = :thread_id", {"thread_id": thread_id})
            cursor.execute(f"DELETE FROM {self._threads} WHERE id = :id", {"id": thread_id})
            deleted = cursor.rowcount
            self._log_threads(cursor, deleted)
            return deleted

    def _delete_owner(self, column: str, profile_type: str, owner_id: str, cascade: bool) -> int:
        check_id(column, owner_id)
        check_bool("cascade", cascade)
        with self._write() as cursor:
            if not cascade:
                return self._delete_where(
                    cursor, "r.kind = :kind AND r.id = :id", {"kind": profile_type, "id": owner_id}
                )
            deleted = self._delete_where(cursor, f"r.{column} = :owner", {"owner": owner_id})
            deleted += self._delete_where(
                cursor,
                f"r.thread_id IN (SELECT t.id FROM {self._threads} t WHERE t.{column} = :owner)",
                {"owner": owner_id},
            )
            cursor.execute(f"DELETE FROM {self._threads} WHERE {column} = :owner", {"owner": owner_id})
            threads = cursor.rowcount
            self._log_threads(cursor, threads)
            return deleted + threads

    def delete_user(self, user_id: str, cascade: bool = True) -> int:
        """Delete a user's profile and, with `cascade`, their threads and records; returns rows deleted."""
        return self._delete_owner("user_id", USER_PROFILE_TYPE, user_id, cascade)

    def delete_agent(self, agent_id: str, cascade: bool = True) -> int:
        """Delete an agent's profile and, with `cascade`, its threads and records; returns rows deleted."""
        return self._delete_owner("agent_id", AGENT_PROFILE_TYPE, agent_id, cascade)

    def purge_expired(self) -> int:
        """Delete every expired record; returns how many."""
        with self._write() as cursor:
            return self._delete_where(
                cursor, "r.expires_at IS NOT NULL AND r.expires_at <= :now", {"now": self.dialect.db_time(utc_now())}
            )
