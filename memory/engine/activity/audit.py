"""The audit's events: who read a whole record (kind "view") and who downloaded an export ("export").

Agents' searches are recorded with what they were handed; a person reading a record's page, a
token getting a record by id, or anyone exporting a part of the store is recorded here with ids,
scope and counts only: never a record's text, so that the log does not become one more copy of
what it audits (and an erasure has only ids to remove). The scope columns name whose data was
read, so that "who saw alice's data" is the log filtered by user_id: a view's are its record's, and
an export is recorded once per user whose records it held (tied together by one export id), so
that an export of the whole store answers for each of them.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from ..limits import check_id
from ..types import USER_PROFILE_TYPE
from .events import ActivityResult

VIEW_SCOPE = ("user_id", "agent_id", "thread_id")


def view_parts(records: Any, scope: Mapping[str, Any]) -> tuple[list[ActivityResult], dict[str, str | None]]:
    """The results (record ids and types) and scope of a view of `records` (engine Records, a
    ThreadRecord included); the scope given wins, else the first record's. ValueError naming a
    bad argument."""
    if not isinstance(records, list | tuple):
        raise ValueError(f"records must be a list of records, not {type(records).__name__}")
    results = []
    for record in records:
        record_id, record_type = getattr(record, "id", None), getattr(record, "record_type", None)
        if not isinstance(record_id, str) or not isinstance(record_type, str):
            raise ValueError(f"records must be records with an id and a record_type, not {type(record).__name__}")
        results.append(ActivityResult(record_id=record_id, record_type=record_type, status=_status(record)))
    given = {name: value for name, value in scope.items() if value is not None}
    for name, value in given.items():
        check_id(name, value)
    first = records[0] if records else None
    derived = _owner_scope(first) if first is not None else {}
    return results, {name: given.get(name, derived.get(name)) for name in VIEW_SCOPE}


def _status(record: Any) -> str | None:
    status = getattr(record, "status", None)
    return getattr(status, "value", status) if status is not None else None


def _owner_scope(record: Any) -> dict[str, str | None]:
    """Whose a record is: a thread is its own thread_id, a user's profile its user's."""
    scope = {name: getattr(record, name, None) for name in VIEW_SCOPE}
    if getattr(record, "record_type", None) == "thread":
        scope["thread_id"] = record.id
    elif getattr(record, "record_type", None) == USER_PROFILE_TYPE:
        scope["user_id"] = record.id
    return scope


def record_export(recorder: Any, scope: Mapping[str, Any], snapshot: Any, call: str) -> None:
    """Queue the events of an export of `snapshot` (read with `scope`, the export's filters): one
    per user whose threads or records it holds, and one for those of no user, each with that
    user's counts and the export's, tied by one export id. Nothing when the export is empty."""
    if recorder is None:
        return
    per_user: dict[str | None, dict[str, int]] = {}
    for thread in snapshot.threads:
        per_user.setdefault(thread.user_id, {"threads": 0, "records": 0})["threads"] += 1
    for record in snapshot.records:
        user = record.id if record.record_type == USER_PROFILE_TYPE else getattr(record, "user_id", None)
        per_user.setdefault(user, {"threads": 0, "records": 0})["records"] += 1
    if not per_user:
        return
    export_id = str(uuid.uuid4())
    totals = {"threads": len(snapshot.threads), "records": len(snapshot.records), "relations": len(snapshot.relations)}
    for user, counts in sorted(per_user.items(), key=lambda item: (item[0] is None, item[0] or "")):
        request = {
            "export_id": export_id,
            "filters": dict(scope),
            "users": len(per_user),
            "counts": counts,
            "file_counts": totals,
        }
        event_scope = {"user_id": user, "agent_id": scope.get("agent_id"), "thread_id": scope.get("thread_id")}
        recorder.audit("export", call, (), event_scope, request, counts["threads"] + counts["records"], wait=True)
