"""The store's calls recorded in the activity log: a search called directly, and the writes
(every record added, changed or deleted and every link made, changed or removed), whoever
called (an agent, the engine's LLM work, a person).

Each public write is wrapped here, first in the store's method order, so that the event is
taken only when the write succeeded. Inside a transaction() block events wait for its commit
(and go with a rollback: ConnectionMixin keeps them on the transaction).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...activity.events import ActivityResult, written_records
from ...types import AGENT_PROFILE_TYPE, NOT_SET, USER_PROFILE_TYPE

THREAD = "thread"
"""The record_type a write event gives a thread (threads are not records, but are written to)."""
_MAX_RELATIONS_DETAIL = 50


class RecordedCallsMixin:
    """Wraps SQLMemoryStore's writes, and its search when called directly, to note them in the
    activity log (`self.activity`)."""

    activity: Any = None  # an ActivityRecorder once a client records this store's activity

    def _note_write(
        self,
        call: str,
        operation: str,
        records: Sequence[ActivityResult],
        scope: Mapping[str, Any] | None = None,
        detail: Mapping[str, Any] | None = None,
        count: int | None = None,
    ) -> None:
        recorder = self.activity
        if recorder is None:
            return
        draft = recorder.write(f"MemoryStore.{call}", operation, records, scope, detail, count)
        if draft is None:
            return
        current = self._open_transaction()
        if current is not None:
            current.activity.append(draft)
        else:
            recorder.queue([draft])

    # --- search -----------------------------------------------------------------------------

    def search(self, query: Any = None, *args: Any, **kwargs: Any) -> Any:
        """A search called on the store itself (the client's searches record themselves, and
        their store search inside is not recorded again)."""
        if self.activity is None:
            return super().search(query, *args, **kwargs)
        names = ("k", "query_vector", "thread_id", "user_id", "agent_id")
        request = {"query": query, **dict(zip(names, args, strict=False)), **kwargs}
        request.pop("query_vector", None)  # a vector of hundreds of floats tells a reader nothing
        scope = {key: request.get(key) for key in ("user_id", "agent_id", "thread_id")}
        scope = {key: value if isinstance(value, str) else None for key, value in scope.items()}
        with self.activity.retrieval("search", "MemoryStore.search", scope, request) as capture:
            hits = super().search(query, *args, **kwargs)
            capture.done(list(hits))
        return hits

    # --- records ----------------------------------------------------------------------------

    def add(self, contents: Any, record_type: str, *args: Any, **kwargs: Any) -> list[str]:
        ids = super().add(contents, record_type, *args, **kwargs)
        if self.activity is not None and ids:
            names = ("index_texts", "embeddings", "record_ids", "thread_ids", "user_ids", "agent_ids")
            given = dict(zip(names, args, strict=False)) | kwargs
            scope = {
                "thread_id": _shared(given.get("thread_ids")),
                "user_id": _shared(given.get("user_ids")),
                "agent_id": _shared(given.get("agent_ids")),
            }
            self._note_write("add", "add", written_records((record_type, record_id) for record_id in ids), scope)
        return ids

    def update(self, record_type: str, record_id: str, *args: Any, **kwargs: Any) -> int:
        changed = super().update(record_type, record_id, *args, **kwargs)
        if changed and self.activity is not None:
            names = ("text", "index_text", "embedding", "metadata")
            fields = [
                name for name, value in (*zip(names, args, strict=False), *kwargs.items()) if value is not NOT_SET
            ]
            fields = [name for name in fields if name != "expected_version"]
            self._note_write(
                "update", "update", written_records([(record_type, record_id)]), detail={"fields": sorted(fields)}
            )
        return changed

    def delete(self, record_type: str, record_id: str, *args: Any, **kwargs: Any) -> int:
        deleted = super().delete(record_type, record_id, *args, **kwargs)
        if deleted:
            self._note_write("delete", "delete", written_records([(record_type, record_id)]))
        return deleted

    def purge_expired(self) -> int:
        purged = super().purge_expired()
        if purged:
            self._note_write("purge_expired", "purge", [], count=purged)
        return purged

    def add_user(self, user_id: str, *args: Any, **kwargs: Any) -> str:
        stored = super().add_user(user_id, *args, **kwargs)
        self._note_write("add_user", "update", written_records([(USER_PROFILE_TYPE, user_id)]), {"user_id": user_id})
        return stored

    def add_agent(self, agent_id: str, *args: Any, **kwargs: Any) -> str:
        stored = super().add_agent(agent_id, *args, **kwargs)
        self._note_write(
            "add_agent", "update", written_records([(AGENT_PROFILE_TYPE, agent_id)]), {"agent_id": agent_id}
        )
        return stored

    # --- threads and owners -----------------------------------------------------------------

    def _note_thread_created(self, thread_id: str, user_id: str | None, agent_id: str | None) -> None:
        """save_thread's write, when it created the thread (it is quiet about one that exists)."""
        scope = {"thread_id": thread_id, "user_id": user_id, "agent_id": agent_id}
        self._note_write("save_thread", "add", written_records([(THREAD, thread_id)]), scope)

    def delete_thread(self, thread_id: str, *args: Any, **kwargs: Any) -> int:
        deleted = super().delete_thread(thread_id, *args, **kwargs)
        if deleted:
            self._note_write(
                "delete_thread", "delete", written_records([(THREAD, thread_id)]), {"thread_id": thread_id}
            )
        return deleted

    def delete_user(self, user_id: str, *args: Any, **kwargs: Any) -> int:
        deleted = super().delete_user(user_id, *args, **kwargs)
        if deleted:
            records = written_records([(USER_PROFILE_TYPE, user_id)])
            self._note_write("delete_user", "delete", records, {"user_id": user_id}, count=deleted)
        return deleted

    def delete_agent(self, agent_id: str, *args: Any, **kwargs: Any) -> int:
        deleted = super().delete_agent(agent_id, *args, **kwargs)
        if deleted:
            records = written_records([(AGENT_PROFILE_TYPE, agent_id)])
            self._note_write("delete_agent", "delete", records, {"agent_id": agent_id}, count=deleted)
        return deleted

    def update_thread(self, thread_id: str, *args: Any, **kwargs: Any) -> int:
        changed = super().update_thread(thread_id, *args, **kwargs)
        if changed:
            self._note_write(
                "update_thread", "update", written_records([(THREAD, thread_id)]), {"thread_id": thread_id}
            )
        return changed

    def save_thread_summary(self, thread_id: str, *args: Any, **kwargs: Any) -> int:
        changed = super().save_thread_summary(thread_id, *args, **kwargs)
        if changed:
            records = written_records([(THREAD, thread_id)])
            self._note_write("save_thread_summary", "summary", records, {"thread_id": thread_id})
        return changed

    def restore(self, snapshot: Any, *args: Any, **kwargs: Any) -> Any:
        report = super().restore(snapshot, *args, **kwargs)
        if self.activity is not None:
            records = written_records((record.record_type, record.id) for record in snapshot.records)
            total = sum(report.restored.values())
            if total:
                self._note_write("restore", "restore", records, detail={"restored": dict(report.restored)}, count=total)
        return report

    # --- links ------------------------------------------------------------------------------

    def add_relations(self, relations: Sequence[Mapping[str, Any]], *args: Any, **kwargs: Any) -> list[str]:
        ids = super().add_relations(relations, *args, **kwargs)
        if self.activity is not None and ids:
            links = list(zip(ids, relations, strict=False))
            self._note_write(
                "add_relations", "link", _link_ends(link for _, link in links), detail=_links_detail(links)
            )
        return ids

    def update_relations(self, relation_id: str, *args: Any, **kwargs: Any) -> int:
        changed = super().update_relations(relation_id, *args, **kwargs)
        if changed and self.activity is not None:
            relation = self.get_relation(relation_id)
            if relation is not None:
                self._note_write(
                    "update_relations", "relink", _relation_ends(relation), detail=_relation_detail(relation)
                )
        return changed

    def delete_relations(self, relation_id: Any = NOT_SET, *args: Any, **kwargs: Any) -> int:
        relation = None
        if self.activity is not None and isinstance(relation_id, str):
            relation = self.get_relation(relation_id)
        deleted = super().delete_relations(relation_id, *args, **kwargs)
        if deleted and self.activity is not None:
            if relation is not None:
                self._note_write(
                    "delete_relations", "unlink", _relation_ends(relation), detail=_relation_detail(relation)
                )
            else:
                names = (
                    "source_record_id",
                    "source_record_type",
                    "target_record_id",
                    "target_record_type",
                    "relation_type",
                )
                given = dict(zip(names, args, strict=False)) | kwargs
                ends = [
                    (given.get("source_record_type"), given.get("source_record_id")),
                    (given.get("target_record_type"), given.get("target_record_id")),
                ]
                records = written_records((str(kind), str(key)) for kind, key in ends if isinstance(key, str))
                self._note_write(
                    "delete_relations", "unlink", records, detail={"relation_type": given.get("relation_type")}
                )
        return deleted


def _shared(value: Any) -> str | None:
    """A scope column's one value across an add (a single value, or a list holding one value)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(item == value[0] for item in value) and isinstance(value[0], str):
        return value[0]
    return None


def _link_ends(links: Iterable[Mapping[str, Any]]) -> list[ActivityResult]:
    ends = []
    for link in links:
        ends.append((str(link.get("source_record_type")), str(link.get("source_record_id"))))
        ends.append((str(link.get("target_record_type")), str(link.get("target_record_id"))))
    return written_records(dict.fromkeys(ends))


def _links_detail(links: list[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    return {
        "relations": [
            {
                "id": relation_id,
                "relation_type": link.get("relation_type"),
                "source_record_id": link.get("source_record_id"),
                "target_record_id": link.get("target_record_id"),
            }
            for relation_id, link in links[:_MAX_RELATIONS_DETAIL]
        ]
    }


def _relation_ends(relation: Any) -> list[ActivityResult]:
    return written_records(
        [
            (relation.source_record_type, relation.source_record_id),
            (relation.target_record_type, relation.target_record_id),
        ]
    )


def _relation_detail(relation: Any) -> dict[str, Any]:
    return {
        "relations": [
            {
                "id": relation.id,
                "relation_type": relation.relation_type,
                "source_record_id": relation.source_record_id,
                "target_record_id": relation.target_record_id,
            }
        ]
    }


def _declared_signatures() -> None:
    """The wrappers above take what the store contract declares (MemoryStore) and pass it on as
    given: introspection (and the contract's test) sees the contract's parameters."""
    from ..base import MemoryStore

    for name, member in vars(RecordedCallsMixin).items():
        if callable(member) and not name.startswith("_") and hasattr(MemoryStore, name):
            member.__signature__ = inspect.signature(getattr(MemoryStore, name))


_declared_signatures()
