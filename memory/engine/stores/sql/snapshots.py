"""The SQL store's snapshots and restores."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...images import CheckedImage
from ...limits import dump_metadata
from ...snapshot import RestorePlan, Snapshot, plan_restore, snapshot_pairs
from ...ttl import utc_now
from ...types import (
    AGENT_PROFILE_TYPE,
    IMAGE_TYPE,
    MEMORY_TYPES,
    NOT_SET,
    USER_PROFILE_TYPE,
    ImageRecord,
    Record,
    RecordStatus,
    RestoreReport,
    check_bool,
)
from ..arguments import DEFAULT_BATCH_SIZE, delete_scope, dump_parts, kind_of, normalize_rows
from ..plans import AddPlan, NewRecord
from .common import _ids_json


def _runs(items: Sequence[Any], key: Any) -> list[list[Any]]:
    """The items cut into runs of consecutive items with the same key, in order."""
    runs: list[list[Any]] = []
    for item in items:
        if runs and key(runs[-1][0]) == key(item):
            runs[-1].append(item)
        else:
            runs.append([item])
    return runs


class SnapshotMixin:
    """SQLMemoryStore's snapshots: what snapshot() reads and restore() writes back."""

    # --- snapshots --------------------------------------------------------------------------

    def snapshot(
        self,
        *,
        record_ids: Sequence[tuple[str, str]] = (),
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
    ) -> Snapshot:
        """Everything the matching delete would remove, as stored (MemoryStore.snapshot)."""
        scope = delete_scope(thread_id, user_id, agent_id)
        pairs = snapshot_pairs(record_ids)
        if pairs and scope is not None:
            raise ValueError("pass record_ids or one of thread_id, user_id and agent_id, not both")
        params: dict[str, Any] = {}
        if pairs:
            # The records by type and id (one bind of ids per type), a message's images, and the
            # links of a memory.
            by_type: dict[str, list[str]] = {}
            for record_type, record_id in pairs:
                by_type.setdefault(record_type, []).append(record_id)

            def chosen(alias: str) -> str:
                groups = [
                    f"({alias}.kind = :sk{i} AND {alias}.record_type = :st{i} "
                    f"AND {self._in(f'{alias}.id', f'sids{i}')})"
                    for i in range(len(by_type))
                ]
                return "(" + " OR ".join(groups) + ")"

            for i, (record_type, chosen_ids) in enumerate(sorted(by_type.items())):
                params.update(
                    {f"sk{i}": kind_of(record_type), f"st{i}": record_type, f"sids{i}": _ids_json(chosen_ids)}
                )
            records = (
                f"({chosen('r')} OR (r.kind = 'image' AND r.message_id IN (SELECT sm.id FROM {self._records} sm "
                f"WHERE sm.kind = 'message' AND {chosen('sm')})))"
            )
            links = (
                f"EXISTS (SELECT 1 FROM {self._records} lm WHERE lm.kind = 'memory' "
                f"AND (lm.id = rel.source_id OR lm.id = rel.target_id) AND {chosen('lm')})"
            )
            threads = None
        else:
            records = self._scope_records(scope, params)
            links = self._scope_links(scope, params)
            threads = self._scope_threads(scope, params)
        with self._read() as cursor:
            thread_rows = []
            if threads is not None:
                thread_rows = self._fetch(
                    f"{self._thread_select()} WHERE {threads} ORDER BY t.created_at, t.id",
                    {**params, "now": self.dialect.db_time(utc_now())},
                    cursor,
                )
            rows = self._fetch(
                f"SELECT {self._record_columns}, r.status AS explicit_status FROM {self._records} r "
                f"WHERE {records} ORDER BY r.pk",
                params,
                cursor,
            )
            relation_rows = self._fetch(
                f"SELECT {self._relation_columns} FROM {self._relations} rel WHERE {links} ORDER BY rel.pos",
                params,
                cursor,
            )
            images = [row["id"] for row in rows if row["kind"] == IMAGE_TYPE]
            data = {}
            if images:
                data = {
                    row["id"]: row["bytes"]
                    for row in self._fetch(
                        f"SELECT r.id, b.bytes FROM {self._records} r JOIN {self._image_bytes} b "
                        f"ON b.record_pk = r.pk WHERE r.kind = 'image' AND {self._in('r.id', 'ids')}",
                        {"ids": _ids_json(images)},
                        cursor,
                    )
                }
        snapshot = Snapshot(
            threads=[self._thread_record(row) for row in thread_rows],
            relations=[self._relation(row) for row in relation_rows],
        )
        for row in rows:
            record = self._record(row)
            if isinstance(record, ImageRecord):
                record.bytes = data.get(record.id)
            snapshot.records.append(record)
            snapshot.stored[(record.record_type, record.id)] = {
                "status": RecordStatus(row["explicit_status"]),
                "event_at": self.dialect.text_time(row["event_at"]),
                "index_text": "" if row["index_text_empty"] else row["index_text"],
            }
        return snapshot

    def restore(self, snapshot: Snapshot, *, skip_existing: bool = False, keep_versions: bool = False) -> RestoreReport:
        """Write a snapshot back, ids, links and times included (MemoryStore.restore)."""
        check_bool("skip_existing", skip_existing)
        check_bool("keep_versions", keep_versions)
        step = 0 if keep_versions else 1
        plan = plan_restore(snapshot)
        payloads = [plan.payload(record) for record in plan.records]
        wanted = [i for i, text in enumerate(payloads) if text]
        vectors: list[np.ndarray | None] = [None] * len(payloads)
        if wanted:  # embedded before the write lock is taken
            for i, vector in zip(wanted, normalize_rows(self._embed([payloads[i] for i in wanted])), strict=True):
                vectors[i] = vector
        report = RestoreReport()
        now = utc_now()
        with self._write() as cursor:
            records = self._restorable_records(cursor, plan, vectors, skip_existing, report)
            self._restore_threads(cursor, plan, records, now, report, step)
            for run in _runs(records, lambda item: kind_of(item[0].record_type)):
                self._insert_restored(cursor, plan, run, step)
            report.restored["records"] = len(records)
            self._find_in_restored(cursor, [record for record, _ in records])
            relations = self._restorable_relations(cursor, plan, skip_existing, report, step)
            if relations:
                cursor.executemany(
                    f"INSERT INTO {self._relations} ({', '.join(relations[0])}) "
                    f"VALUES ({', '.join(':' + column for column in relations[0])})",
                    relations,
                )
                self._log(
                    cursor,
                    "link",
                    self._relations,
                    self._in("rel.id", "ids"),
                    {"ids": _ids_json(row["id"] for row in relations)},
                )
            report.restored["relations"] = len(relations)
            restored = [record.id for record, _ in records if record.record_type in MEMORY_TYPES]
            self._recount_lifecycle(cursor, restored, bump=False)  # they are new rows: no change of theirs
            self._recount_lifecycle(
                cursor, {row["target_id"] for row in relations} - set(restored), bump=not keep_versions
            )
        return report

    def _restorable_records(
        self, cursor: Any, plan: RestorePlan, vectors: list, skip_existing: bool, report: RestoreReport
    ) -> list[tuple[Record, Any]]:
        """The snapshot's records whose ids are free, with their vectors; a taken one is an error
        unless `skip_existing`, which reports it."""
        taken: set[tuple[str, str]] = set()
        by_kind: dict[str, list[str]] = {}
        for record in plan.records:
            by_kind.setdefault(kind_of(record.record_type), []).append(record.id)
        for kind, ids in by_kind.items():
            rows = self._fetch(
                f"SELECT r.id FROM {self._records} r WHERE r.kind = :kind AND {self._in('r.id', 'ids')}",
                {"kind": kind, "ids": _ids_json(ids)},
                cursor,
            )
            taken.update((kind, row["id"]) for row in rows)
        kept = []
        for record, vector in zip(plan.records, vectors, strict=True):
            kind = kind_of(record.record_type)
            if (kind, record.id) in taken:
                if not skip_existing:
                    raise ValueError(f"a {kind} record with id {record.id!r} already exists; nothing was restored")
                report.skipped.append(("record", record.id, "exists"))
                continue
            kept.append((record, vector))
        return kept

    def _restore_threads(
        self,
        cursor: Any,
        plan: RestorePlan,
        records: list[tuple[Record, Any]],
        now: str,
        report: RestoreReport,
        step: int = 1,
    ) -> None:
        """Create the snapshot's absent threads as they were (and, as add does, the thread of a
        record whose thread is gone); keep each thread's next sequence number above its restored
        messages'."""
        db_time = self.dialect.db_time
        for thread in plan.threads:  # (a long summary binds as a CLOB: no LONG inside a MERGE)
            cursor.execute(
                self.dialect.insert_if_absent(
                    self._threads,
                    ["id"],
                    {
                        column: f":{column}"
                        for column in (
                            "id",
                            "user_id",
                            "agent_id",
                            "metadata",
                            "settings",
                            "created_at",
                            "updated_at",
                            "summary",
                            "topics",
                            "version",
                        )
                    },
                ),
                {
                    "id": thread.id,
                    "user_id": thread.user_id,
                    "agent_id": thread.agent_id,
                    "metadata": dump_metadata(thread.metadata),
                    "settings": json.dumps(thread.settings),
                    "created_at": db_time(thread.created_at or now),
                    "updated_at": db_time(thread.updated_at or thread.created_at or now),
                    "summary": thread.summary,
                    "topics": None if thread.topics is None else json.dumps(thread.topics),
                    "version": thread.version + step,
                },
            )
            created = cursor.rowcount
            self._log_threads(cursor, created)
            if created:
                report.restored["threads"] += 1
            else:
                report.skipped.append(("thread", thread.id, "exists"))
        next_seq: dict[str, int] = {}
        for record, _ in records:
            thread_id = getattr(record, "thread_id", None)
            if thread_id is not None:
                if thread_id not in next_seq:
                    self._ensure_thread(cursor, thread_id, record.user_id, record.agent_id, now, settings="{}")
                seq_no = getattr(record, "seq_no", None)
                next_seq[thread_id] = max(next_seq.get(thread_id, 0), 0 if seq_no is None else seq_no + 1)
        for thread_id, after in sorted(next_seq.items()):
            cursor.execute(
                f"UPDATE {self._threads} SET next_seq_no = :after WHERE id = :id AND next_seq_no < :after",
                {"after": after, "id": thread_id},
            )

    def _insert_restored(self, cursor: Any, plan: RestorePlan, run: list[tuple[Record, Any]], step: int = 1) -> None:
        """Insert a run of restored records of one kind, with their image bytes, and log them:
        the columns of an add (_record_values), with the snapshot's types, times and versions."""
        records = [record for record, _ in run]
        rows = []
        for record in records:
            facts = plan.stored_of(record)
            rows.append(
                NewRecord(
                    id=record.id,
                    record_type=record.record_type,
                    content=record.content,
                    index_text=facts["index_text"],
                    thread_id=getattr(record, "thread_id", None),
                    user_id=getattr(record, "user_id", None),
                    agent_id=getattr(record, "agent_id", None),
                    role=getattr(record, "role", None),
                    timestamp=facts["event_at"],
                    metadata=dump_metadata(record.metadata),
                    status=facts["status"].value,
                    parts=dump_parts(getattr(record, "parts", None)),
                )
            )
        # An image's stored dimensions are not needed to store it again: its bytes were checked when added.
        images = [
            (CheckedImage(r.bytes, r.mime_type, 0, 0), r.message_id) for r in records if isinstance(r, ImageRecord)
        ]
        expiries = [record.expires_at for record in records]
        values = self._record_values(
            AddPlan(rows, [vector for _, vector in run], images, expiries, utc_now()),
            [getattr(record, "seq_no", None) for record in records],
        )
        db_time = self.dialect.db_time
        values["record_type"] = [record.record_type for record in records]
        values["created_at"] = [db_time(record.created_at) for record in records]
        values["version"] = [record.version + step for record in records]
        kind = values["kind"][0]
        if kind in (USER_PROFILE_TYPE, AGENT_PROFILE_TYPE):  # a profile is its owner's record
            values["user_id" if kind == USER_PROFILE_TYPE else "agent_id"] = [record.id for record in records]
        inserted = self.dialect.insert_rows(cursor, self._records, values, DEFAULT_BATCH_SIZE)
        self._insert_image_bytes(cursor, rows, images)
        self._log_inserted(cursor, kind, values["id"], inserted)

    def _restorable_relations(
        self, cursor: Any, plan: RestorePlan, skip_existing: bool, report: RestoreReport, step: int = 1
    ) -> list[dict[str, Any]]:
        """Rows of the snapshot's relations to insert: a taken id or pair is an error unless
        `skip_existing`; a relation whose end is not a stored memory of its type is skipped."""
        if not plan.relations:
            return []
        ends = {end for relation in plan.relations for end in (relation.source_record_id, relation.target_record_id)}
        found = {
            row["id"]: row["record_type"]
            for row in self._fetch(
                f"SELECT r.id, r.record_type FROM {self._records} r WHERE r.kind = 'memory' "
                f"AND {self._in('r.id', 'ids')}",
                {"ids": _ids_json(sorted(ends))},
                cursor,
            )
        }
        taken = self._fetch(
            f"SELECT rel.id, rel.pair FROM {self._relations} rel WHERE {self._in('rel.id', 'ids')} "
            f"OR {self._in('rel.pair', 'pairs')}",
            {
                "ids": _ids_json(relation.id for relation in plan.relations),
                "pairs": _ids_json(plan.pair(relation) for relation in plan.relations),
            },
            cursor,
        )
        taken_ids, taken_pairs = {row["id"] for row in taken}, {row["pair"] for row in taken}
        rows = []
        for relation in plan.relations:
            missing = [
                end
                for end, end_type in (
                    (relation.source_record_id, relation.source_record_type),
                    (relation.target_record_id, relation.target_record_type),
                )
                if found.get(end) != end_type
            ]
            if missing:
                report.skipped.append(("relation", relation.id, f"no memory {missing[0]!r} to link"))
                continue
            if relation.id in taken_ids or plan.pair(relation) in taken_pairs:
                if not skip_existing:
                    raise ValueError(
                        f"relation {relation.id!r} (or a link of the same pair) already exists; nothing was restored"
                    )
                report.skipped.append(("relation", relation.id, "exists"))
                continue
            rows.append(
                {
                    "id": relation.id,
                    "source_id": relation.source_record_id,
                    "source_type": relation.source_record_type,
                    "target_id": relation.target_record_id,
                    "target_type": relation.target_record_type,
                    "relation_type": relation.relation_type,
                    "opposite_type": relation.opposite_relation_type,
                    "event_at": self.dialect.db_time(relation.timestamp),
                    "metadata": dump_metadata(relation.metadata),
                    "created_at": self.dialect.db_time(relation.created_at or utc_now()),
                    "pair": plan.pair(relation),
                    "version": relation.version + step,
                }
            )
        return rows
