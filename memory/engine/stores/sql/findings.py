"""The sensitive-data findings of the SQL store: screening writes by the policy, and the findings table.

A write's text is screened before it is embedded or stored (engine/sensitive.py): the `refuse`
policy fails the write, `redact` stores the text with each span replaced, `flag` stores it and
keeps a row per finding in the findings table, in the write's own transaction. A finding
references its record's key (ON DELETE CASCADE): a deleted, purged or erased record takes its
findings along, and a record whose text changes has its findings made again from the new text.
The table sits in the store, not in Django's database, so that an agent process's findings
reach the dashboard.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ...sensitive import Detection, SensitiveFinding, SensitivePolicy, redact, refusal, scan
from ...ttl import utc_now
from ...types import NOT_SET, Page
from ..arguments import DEFAULT_LIST_LIMIT, check_positive_int, decode_cursor, encode_cursor, kind_of
from ..rows import scope_condition
from .common import _ids_json

FIELD = "content"
"""The field a finding is in: the record's text (a memory's or message's content, an image's
description, a profile's information)."""


class FindingsMixin:
    """SQLMemoryStore's sensitive-data screening and findings (module docstring)."""

    sensitive_policy: SensitivePolicy | None = SensitivePolicy.FLAG
    """What a write does with what it finds; None screens nothing (bench/sensitive.py's baseline)."""

    # --- screening writes -------------------------------------------------------------------

    def _screen_rows(self, rows: list[Any]) -> dict[int, list[Detection]]:
        """Screen the rows of an `add` (plans.NewRecord) in place: refused, redacted or flagged.
        Returns the detections per row index that the flag policy records after the insert."""
        policy = self.sensitive_policy
        if policy is None:
            return {}
        found: dict[int, list[Detection]] = {}
        for i, row in enumerate(rows):
            detections = scan(row.content) if row.content else []
            if not detections:
                continue
            if policy is SensitivePolicy.REFUSE:
                raise refusal(detections)
            if policy is SensitivePolicy.REDACT:
                rows[i] = replace(
                    row,
                    content=redact(row.content, detections),
                    index_text=redacted_copy(row.index_text, row.content, detections),
                    parts=redacted_parts(row.parts, row.content, detections),
                )
            else:
                found[i] = detections
        return found

    def _screen_text(self, text: Any) -> tuple[Any, list[Detection], list[Detection]]:
        """A text about to be written (an update's or a profile's): refused (raises), or the text
        to store with the detections the flag policy records and those the redact policy replaced."""
        policy = self.sensitive_policy
        if policy is None or not isinstance(text, str) or not text:
            return text, [], []
        detections = scan(text)
        if not detections:
            return text, [], []
        if policy is SensitivePolicy.REFUSE:
            raise refusal(detections)
        if policy is SensitivePolicy.REDACT:
            return redact(text, detections), [], detections
        return text, detections, []

    def _record_findings(self, record_type: str, by_id: dict[str, list[Detection]]) -> None:
        with self._write() as cursor:
            self._save_findings(cursor, record_type, by_id)

    def _save_findings(self, cursor: Any, record_type: str, by_id: dict[str, list[Detection]]) -> None:
        """The findings of freshly written records, by record id (all of one type), in the write's transaction."""
        if not by_id:
            return
        rows = self._fetch(
            f"SELECT r.pk, r.id FROM {self._records} r WHERE r.kind = :kind AND {self._in('r.id', 'ids')}",
            {"kind": kind_of(record_type), "ids": _ids_json(by_id)},
            cursor,
        )
        self._insert_findings(cursor, [(row["pk"], by_id[row["id"]]) for row in rows])

    def _find_in_restored(self, cursor: Any, records: Sequence[Any]) -> None:
        """Records written back as they were (an import, an undone delete, a snapshot restored)
        keep their text: their findings are recorded, whatever the policy (a restore refused or
        rewritten would not give back what was there)."""
        if self.sensitive_policy is None:
            return
        by_type: dict[str, dict[str, list[Detection]]] = {}
        for record in records:
            text = getattr(record, "content", None)
            detections = scan(text) if isinstance(text, str) and text else []
            if detections:
                by_type.setdefault(record.record_type, {})[record.id] = detections
        for record_type, by_id in by_type.items():
            self._save_findings(cursor, record_type, by_id)

    def _refresh_findings(
        self, cursor: Any, record_pk: int | None, detections: list[Detection], *, kind: str = "", record_id: str = ""
    ) -> None:
        """A record's text changed: its findings are those of the new text (by key, or by kind and id)."""
        if record_pk is not None:
            cursor.execute(f"DELETE FROM {self._findings} WHERE record_pk = :pk", {"pk": record_pk})
            self._insert_findings(cursor, [(record_pk, detections)])
            return
        cursor.execute(
            f"DELETE FROM {self._findings} WHERE record_pk IN "
            f"(SELECT r.pk FROM {self._records} r WHERE r.kind = :kind AND r.id = :id)",
            {"kind": kind, "id": record_id},
        )
        if detections:
            self._save_findings(cursor, kind, {record_id: detections})

    def _insert_findings(self, cursor: Any, found: Sequence[tuple[int, list[Detection]]]) -> None:
        items = [(pk, detection) for pk, detections in found for detection in detections]
        if not items:
            return
        now = self.dialect.db_time(utc_now())
        columns: dict[str, list] = {
            "record_pk": [pk for pk, _ in items],
            "field": [FIELD] * len(items),
            "kind": [d.kind for _, d in items],
            "span_start": [d.start for _, d in items],
            "span_end": [d.end for _, d in items],
            "preview": [d.preview for _, d in items],
            "digest": [d.digest for _, d in items],
            "found_at": [now] * len(items),
        }
        self.dialect.insert_rows(cursor, self._findings, columns, len(items))

    # --- reading and rescanning -------------------------------------------------------------

    def _finding_conditions(
        self,
        params: dict[str, Any],
        *,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        kinds: Any = NOT_SET,
        record_id: Any = NOT_SET,
        exclude: Any = NOT_SET,
    ) -> list[str]:
        conditions = []
        for column, value in (("user_id", user_id), ("agent_id", agent_id), ("id", record_id)):
            if value is not NOT_SET:
                conditions.append(scope_condition(f"r.{column}", column, value, params))
        if kinds is not NOT_SET and kinds is not None:
            conditions.append(self._in("f.kind", "f_kinds"))
            params["f_kinds"] = _ids_json(kinds)
        if exclude is not NOT_SET and exclude:
            # "not sensitive" decisions: a record id and a value's digest, as "id digest"
            conditions.append(f"NOT ({self._in("r.id || ' ' || f.digest", 'f_exclude')})")
            params["f_exclude"] = _ids_json(exclude)
        return conditions

    def list_findings(
        self,
        *,
        limit: int | None = DEFAULT_LIST_LIMIT,
        cursor: str | None = None,
        finding_ids: Any = NOT_SET,
        **filters: Any,
    ) -> Page:
        """Findings, newest first, with their records' scope and masked text (SensitiveFinding)."""
        check_positive_int("limit", limit, allow_none=True)
        params: dict[str, Any] = {}
        conditions = self._finding_conditions(params, **filters)
        if finding_ids is not NOT_SET:
            conditions.append(self._in("f.pk", "f_pks", numeric=True))
            params["f_pks"] = json.dumps([int(pk) for pk in finding_ids])
        if cursor is not None:
            conditions.append("f.pk < :f_after")
            params["f_after"] = decode_cursor(cursor, (int,))[0]
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        sql = (
            "SELECT f.pk, f.field, f.kind, f.span_start, f.span_end, f.preview, f.digest, f.found_at, f.record_pk, "
            "r.id AS record_id, r.record_type, r.user_id, r.agent_id, r.thread_id, r.content "
            f"FROM {self._findings} f JOIN {self._records} r ON r.pk = f.record_pk {where} ORDER BY f.pk DESC"
            + self._fetch_first(limit, params)
        )
        with self._read() as read:
            rows = self._fetch(sql, params, read)
            more = limit is not None and len(rows) > limit
            rows = rows[:limit] if limit is not None else rows
            spans = self._spans_of([row["record_pk"] for row in rows], read)
        for row in rows:
            row["found_at"] = self.dialect.text_time(row["found_at"])
        findings = [_finding(row, spans.get(row["record_pk"], [])) for row in rows]
        next_cursor = encode_cursor(int(rows[-1]["pk"])) if more else None
        return Page(findings, next_cursor)

    def _spans_of(self, record_pks: list[int], cursor: Any) -> dict[int, list[tuple[int, int, str]]]:
        """Every finding's span and preview in these records, to mask all of them in a record's text."""
        if not record_pks:
            return {}
        rows = self._fetch(
            f"SELECT f.record_pk, f.span_start, f.span_end, f.preview FROM {self._findings} f "
            f"WHERE {self._in('f.record_pk', 'pks', numeric=True)}",
            {"pks": json.dumps(sorted(set(record_pks)))},
            cursor,
        )
        spans: dict[int, list[tuple[int, int, str]]] = {}
        for row in rows:
            spans.setdefault(row["record_pk"], []).append((row["span_start"], row["span_end"], row["preview"]))
        return spans

    def count_findings(self, **filters: Any) -> int:
        """How many findings list_findings would list with these filters."""
        params: dict[str, Any] = {}
        conditions = self._finding_conditions(params, **filters)
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        rows = self._fetch(
            f"SELECT COUNT(*) AS n FROM {self._findings} f JOIN {self._records} r ON r.pk = f.record_pk {where}",
            params,
        )
        return int(rows[0]["n"])

    def rescan_findings(self, after_pk: int = 0, batch: int = 500) -> tuple[int, int, int]:
        """Scan the next `batch` stored records with text after key `after_pk` again, replacing
        their findings (flag, whatever the policy: what is stored is not changed by a rescan).
        Returns (the last key read, 0 when done; records read; findings recorded)."""
        rows = self._fetch(
            f"SELECT r.pk, r.content FROM {self._records} r WHERE r.pk > :after AND r.content IS NOT NULL "
            "ORDER BY r.pk" + self.dialect.first_rows(":fetch_limit"),
            {"after": int(after_pk), "fetch_limit": batch},
        )
        if not rows:
            return 0, 0, 0
        found = [(row["pk"], scan(row["content"] or "")) for row in rows]
        with self._write(schema=True) as cursor:  # findings only: the change log's lock is not needed
            cursor.execute(
                f"DELETE FROM {self._findings} WHERE {self._in('record_pk', 'pks', numeric=True)}",
                {"pks": json.dumps([row["pk"] for row in rows])},
            )
            self._insert_findings(cursor, found)
        return rows[-1]["pk"], len(rows), sum(len(detections) for _, detections in found)

    def redact_activity(self, value: str, replacement: str) -> int:
        """Replace `value` in the activity log's texts (as it is, and as JSON writes it inside the
        request and results); returns how many events held it. A restricted view changes only
        the events it sees: the others are outside its scope, to change or keep as their own
        scope decides."""
        forms = list(dict.fromkeys([value, json.dumps(value)[1:-1]]))
        base = getattr(self, "_unrestricted", None) or self
        holds = " OR ".join(f"INSTR({column}, :old) > 0" for column in _ACTIVITY_TEXTS)
        binds: dict[str, Any] = {}
        if base is not self:  # self._activity is a subquery of the visible events, not a table
            holds = f"({holds}) AND pk IN (SELECT pk FROM {self._activity})"
            binds = self._visibility_binds
        sets = ", ".join(f"{column} = REPLACE({column}, :old, :new)" for column in _ACTIVITY_TEXTS)
        changed = 0
        with self._write(schema=True) as cursor:  # the log only: the change log's lock is not needed
            for n, form in enumerate(forms):
                cursor.execute(
                    f"UPDATE {base._activity} SET {sets} WHERE {holds}", {"old": form, "new": replacement, **binds}
                )
                changed += cursor.rowcount if n == 0 else 0
        return changed

    def stored_records_with_text(self) -> int:
        """How many records hold text (what a full rescan reads): the progress bar's total."""
        return int(self._fetch(f"SELECT COUNT(*) AS n FROM {self._records} r WHERE r.content IS NOT NULL")[0]["n"])


_ACTIVITY_TEXTS = ("query_text", "request", "results", "content", "cause")
"""The activity log's columns that hold text of records: a search's query, the call's arguments,
what it returned and the text it handed back (sql/activity.py)."""


def redacted_copy(value: Any, text: str, detections: list[Detection]) -> Any:
    if not isinstance(value, str) or not value:
        return value
    for detection in detections:
        value = value.replace(text[detection.start : detection.end], f"[REDACTED:{detection.kind}]")
    return value


def redacted_parts(parts: Any, text: str, detections: list[Detection]) -> Any:
    """A message's parts (JSON text) with the same values redacted inside their JSON strings."""
    if isinstance(parts, (list, dict)):
        return json.loads(redacted_parts(json.dumps(parts), text, detections))
    if not isinstance(parts, str) or not parts:
        return parts
    for detection in detections:
        escaped = json.dumps(text[detection.start : detection.end])[1:-1]
        parts = parts.replace(escaped, f"[REDACTED:{detection.kind}]")
    return parts


def _masked(content: str, spans: list[tuple[int, int, str]]) -> str:
    out, position = [], 0
    for start, end, preview in sorted(spans):
        if start < position or end > len(content):
            continue
        out += [content[position:start], preview]
        position = end
    out.append(content[position:])
    return "".join(out)


def _finding(row: dict[str, Any], spans: list[tuple[int, int, str]]) -> SensitiveFinding:
    content = row["content"] or ""
    return SensitiveFinding(
        id=str(row["pk"]),
        kind=row["kind"],
        field=row["field"],
        start=int(row["span_start"]),
        end=int(row["span_end"]),
        preview=row["preview"],
        digest=row["digest"],
        found_at=row["found_at"],
        record_id=row["record_id"],
        record_type=row["record_type"],
        user_id=row["user_id"],
        agent_id=row["agent_id"],
        thread_id=row["thread_id"],
        masked_text=_masked(content, spans),
    )
