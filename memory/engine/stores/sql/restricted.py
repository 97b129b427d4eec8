"""A restricted view of a SQL store: the same store (connections, transactions, change log) seen
through a Visibility.

Every query of the store names its tables through the store's attributes (`_records`, `_threads`,
`_relations`, `_activity`, `_activity_records`). The view is a shallow copy of the store whose
attributes name, instead of each table, a subquery of that table's visible rows, so every read
(listings, counts, facets, stats, search, graph, duplicates, vectors, activity, snapshots, owners,
reads by id) applies the restriction in SQL, before any grouping, paging or top-k, without a
condition written per query. The visible users and agents are two JSON-array binds that `_fetch`
adds to the statements naming them. Searches and graphs go to SQL, not to the process's
in-memory index (whose masks know no visibility).

Writes do not run on the copy: each is checked through the view (a record, thread or relation it
cannot see is missing: 0 or KeyError, as for one that does not exist; a new record outside is a
ValueError naming the field) and then made by the store itself. Changes to the whole store
(re-embed, check, the activity log's purge, erasing a person, rescanning for
sensitive data) are refused; expired records are purged
as far as it sees them; a restore only when all of it is inside.
"""

from __future__ import annotations

import copy
import inspect
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ...types import AGENT_PROFILE_TYPE, NOT_SET, RECORD_TYPES, USER_PROFILE_TYPE
from ...visibility import OutsideVisibilityError, Visibility
from .common import _ids_json

USERS_BIND, AGENTS_BIND = "vis_users", "vis_agents"
_WHOLE_STORE = ("reembed", "check", "purge_activity", "erase_user", "rescan_findings")


def restricted_store(store: Any, visibility: Visibility) -> Any:
    """A view of `store` that sees only what `visibility` lets it (module docstring)."""
    if not isinstance(visibility, Visibility):
        raise TypeError(f"visibility must be a Visibility, not {type(visibility).__name__}")
    if getattr(store, "visibility", None) is not None:
        visibility = store.visibility.narrowed(visibility)  # a view restricted again: never wider
    base = getattr(store, "_unrestricted", None) or store
    if visibility.unrestricted:
        return base
    view = copy.copy(base)
    view._unrestricted = base
    view.visibility = visibility
    view.index = None  # its masks know no visibility: the view's searches run in SQL
    view._stats_memo, view._stats_lock = {}, threading.Lock()
    binds: dict[str, str] = {}
    owner = []
    if visibility.users is not None:
        binds[USERS_BIND] = _ids_json(sorted(visibility.users))
        owner.append(f"user_id IN ({base.dialect.ids(USERS_BIND)})")
    if visibility.agents is not None:
        binds[AGENTS_BIND] = _ids_json(sorted(visibility.agents))
        owner.append(f"agent_id IN ({base.dialect.ids(AGENTS_BIND)})")
    view._visibility_binds = binds
    seen = " AND ".join(owner)
    # A profile is about its owner alone: a user's is seen where the user is named, an agent's
    # where the agent is (the other dimension, which a profile lacks, does not hide it).
    profiles = [
        f"(record_type = '{USER_PROFILE_TYPE}' AND {owner[0]})" if visibility.users is not None else "",
        f"(record_type = '{AGENT_PROFILE_TYPE}' AND {owner[-1]})" if visibility.agents is not None else "",
    ]
    records = f"(SELECT * FROM {base._records} WHERE {' OR '.join(['(' + seen + ')', *filter(None, profiles)])})"
    threads = f"(SELECT * FROM {base._threads} WHERE {seen})"
    activity = f"(SELECT * FROM {base._activity} WHERE {seen})"

    def visible_end(column: str) -> str:
        return (
            f"(EXISTS (SELECT 1 FROM {records} ve WHERE ve.id = vr.{column}) "
            f"OR EXISTS (SELECT 1 FROM {threads} vt WHERE vt.id = vr.{column}))"
        )

    view._records, view._threads, view._activity = records, threads, activity
    view._relations = (
        f"(SELECT * FROM {base._relations} vr WHERE {visible_end('source_id')} AND {visible_end('target_id')})"
    )
    view._activity_records = (
        f"(SELECT * FROM {base._activity_records} va WHERE va.event_pk IN (SELECT pk FROM {activity}) "
        f"AND (EXISTS (SELECT 1 FROM {records} ve WHERE ve.id = va.record_id) "
        f"OR EXISTS (SELECT 1 FROM {threads} vt WHERE vt.id = va.record_id)))"
    )
    for name, method in _writes(base, view, visibility).items():
        setattr(view, name, method)
    return view


def _bound(method: Callable[..., Any], args: tuple, kwargs: dict) -> dict[str, Any]:
    arguments = inspect.signature(method).bind_partial(*args, **kwargs)
    return dict(arguments.arguments)


def _values(value: Any) -> list[Any]:
    """A batch argument of add() as its values (a broadcast scalar, or NOT_SET: none given)."""
    if value is NOT_SET or value is None or isinstance(value, str):
        return [None if value is NOT_SET else value]
    return list(value)


def _writes(base: Any, view: Any, visibility: Visibility) -> dict[str, Callable[..., Any]]:
    """The view's write methods: each checks through the view, then writes through the store."""

    def record_seen(record_type: Any, record_id: Any) -> bool:
        if record_type == "thread":
            return isinstance(record_id, str) and bool(record_id) and view.get_thread(record_id) is not None
        try:
            return view.get(record_type, record_id) is not None
        except (ValueError, TypeError):
            return True  # a bad argument: the store refuses it with its own message

    def thread_seen(thread_id: Any) -> bool:
        try:
            return view.get_thread(thread_id) is not None
        except (ValueError, TypeError):
            return True

    def add(*args: Any, **kwargs: Any) -> list[str]:
        given = _bound(base.add, args, kwargs)
        users, agents = _values(given.get("user_ids", NOT_SET)), _values(given.get("agent_ids", NOT_SET))
        count = max(len(users), len(agents))
        for user_id, agent_id in zip(
            users * count if len(users) == 1 else users, agents * count if len(agents) == 1 else agents, strict=False
        ):
            visibility.check_new(user_id, agent_id)
        for thread_id in _values(given.get("thread_ids", NOT_SET)):
            if thread_id is not None and not thread_seen(thread_id):
                raise KeyError(f"no thread {thread_id!r}")
        record_type = given.get("record_type")
        for record_id in _values(given.get("record_ids", NOT_SET)):
            if record_id is not None and base_has(record_type, record_id) and not record_seen(record_type, record_id):
                raise OutsideVisibilityError(f"record_ids: {record_id!r} is taken", "id")
        return base.add(*args, **kwargs)

    def base_has(record_type: Any, record_id: Any) -> bool:
        try:
            return base.get(record_type, record_id) is not None
        except (ValueError, TypeError):
            return False

    def on_record(name: str) -> Callable[..., int]:
        method = getattr(base, name)

        def write(record_type: Any, record_id: Any, *args: Any, **kwargs: Any) -> int:
            if not record_seen(record_type, record_id):
                return 0
            return method(record_type, record_id, *args, **kwargs)

        return write

    def update(record_type: Any, record_id: Any, *args: Any, **kwargs: Any) -> int:
        """A record it sees, changed: moved to another user or agent only inside the view (a
        record moved out would be a write into a scope it cannot see)."""
        if not record_seen(record_type, record_id):
            return 0
        if kwargs.get("user_id", NOT_SET) is not NOT_SET or kwargs.get("agent_id", NOT_SET) is not NOT_SET:
            record = view.get(record_type, record_id)
            user_id, agent_id = kwargs.get("user_id", NOT_SET), kwargs.get("agent_id", NOT_SET)
            visibility.check_new(
                record.user_id if user_id is NOT_SET else user_id, record.agent_id if agent_id is NOT_SET else agent_id
            )
        return base.update(record_type, record_id, *args, **kwargs)

    def on_thread(name: str) -> Callable[..., Any]:
        method = getattr(base, name)

        def write(thread_id: Any, *args: Any, **kwargs: Any) -> Any:
            if not thread_seen(thread_id):
                return 0
            return method(thread_id, *args, **kwargs)

        return write

    def save_thread(thread_id: Any, user_id: Any, agent_id: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(thread_id, str) and base.get_thread(thread_id) is not None:
            if not thread_seen(thread_id):
                raise OutsideVisibilityError(f"thread_id: {thread_id!r} is taken", "thread_id")
        else:
            visibility.check_new(user_id, agent_id)
        return base.save_thread(thread_id, user_id, agent_id, *args, **kwargs)

    def add_user(user_id: Any, *args: Any, **kwargs: Any) -> str:
        visibility.check_new(user_id, None)
        return base.add_user(user_id, *args, **kwargs)

    def add_agent(agent_id: Any, *args: Any, **kwargs: Any) -> str:
        visibility.check_new(None, agent_id)
        return base.add_agent(agent_id, *args, **kwargs)

    def delete_owner(name: str, dimension: str, other: str) -> Callable[..., int]:
        method = getattr(base, name)

        def delete(owner_id: Any, *args: Any, **kwargs: Any) -> int:
            ids = getattr(visibility, dimension)
            if ids is not None and owner_id not in ids:
                return 0
            if ids is None or getattr(visibility, other) is not None:
                raise OutsideVisibilityError(f"{name} would delete records outside this view's {other}")
            return method(owner_id, *args, **kwargs)

        return delete

    def add_relations(relations: Any, *args: Any, **kwargs: Any) -> list[str]:
        if isinstance(relations, list | tuple):
            for relation in relations:
                if not isinstance(relation, Mapping):
                    continue
                for end in ("source", "target"):
                    record_id, record_type = relation.get(f"{end}_record_id"), relation.get(f"{end}_record_type")
                    if not record_seen(record_type, record_id):
                        raise ValueError(f"no memory {record_id!r} to link ({end})")  # as for a missing one
        return base.add_relations(relations, *args, **kwargs)

    def relation_seen(relation_id: Any, thread_id: Any = NOT_SET) -> bool:
        try:
            return view.get_relation(relation_id, thread_id=thread_id) is not None
        except (ValueError, TypeError):
            return True

    def update_relations(relation_id: Any, *args: Any, **kwargs: Any) -> int:
        if not relation_seen(relation_id, kwargs.get("thread_id", NOT_SET)):
            return 0
        return base.update_relations(relation_id, *args, **kwargs)

    def delete_relations(*args: Any, **kwargs: Any) -> int:
        given = _bound(base.delete_relations, args, kwargs)
        relation_id = given.get("relation_id", NOT_SET)
        if relation_id is not NOT_SET and not relation_seen(relation_id, given.get("thread_id", NOT_SET)):
            return 0
        for end in ("source", "target"):
            record_id = given.get(f"{end}_record_id", NOT_SET)
            if record_id is not NOT_SET and not record_seen(given.get(f"{end}_record_type"), record_id):
                return 0
        return base.delete_relations(*args, **kwargs)

    def restore(snapshot: Any, *args: Any, **kwargs: Any) -> Any:
        """A snapshot (an import, a revert) restored only when all of it is inside."""
        for record in getattr(snapshot, "records", ()):
            if record.record_type == USER_PROFILE_TYPE and visibility.users is not None:
                visibility.check_new(record.user_id, next(iter(visibility.agents or [None])))
            elif record.record_type == AGENT_PROFILE_TYPE and visibility.agents is not None:
                visibility.check_new(next(iter(visibility.users or [None])), record.agent_id)
            else:
                visibility.check_new(record.user_id, record.agent_id)
        for thread in getattr(snapshot, "threads", ()):
            visibility.check_new(thread.user_id, thread.agent_id)
        inside = {record.id for record in getattr(snapshot, "records", ())}
        inside |= {thread.id for thread in getattr(snapshot, "threads", ())}
        for relation in getattr(snapshot, "relations", ()):
            for record_id, record_type in (
                (relation.source_record_id, relation.source_record_type),
                (relation.target_record_id, relation.target_record_type),
            ):
                if record_id not in inside and not record_seen(record_type, record_id):
                    raise OutsideVisibilityError(f"relations: no memory {record_id!r} to link")
        return base.restore(snapshot, *args, **kwargs)

    def purge_expired() -> int:
        """The expired records it sees, deleted (a message takes its images along)."""
        expired = view.list(list(RECORD_TYPES), limit=None, status="expired")
        return sum(base.delete(record.record_type, record.id) for record in expired)

    def whole_store(name: str) -> Callable[..., Any]:
        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise OutsideVisibilityError(
                f"{name} changes the whole store: not allowed to a view of {visibility.describe()}"
            )

        return refuse

    def fetch(sql: str, params: Mapping[str, Any] | None = None, cursor: Any = None) -> list[dict[str, Any]]:
        extra = {name: value for name, value in view._visibility_binds.items() if f":{name}" in sql}
        return base._fetch(sql, {**(params or {}), **extra} if extra else params, cursor)

    methods: dict[str, Callable[..., Any]] = {
        "add": add,
        "update": update,
        "delete": on_record("delete"),
        "delete_thread": on_thread("delete_thread"),
        "update_thread": on_thread("update_thread"),
        "save_thread_summary": on_thread("save_thread_summary"),
        "save_thread_state": on_thread("save_thread_state"),
        "save_thread": save_thread,
        "add_user": add_user,
        "add_agent": add_agent,
        "delete_user": delete_owner("delete_user", "users", "agents"),
        "delete_agent": delete_owner("delete_agent", "agents", "users"),
        "add_relations": add_relations,
        "restore": restore,
        "purge_expired": purge_expired,
        "update_relations": update_relations,
        "delete_relations": delete_relations,
        "_fetch": fetch,
        # What the store does for every view alike: its transactions, activity, text index.
        "transaction": base.transaction,
        "align_image_expiry": base.align_image_expiry,
        "append_activity": base.append_activity,
        # A write's outcome under its token (curation's two-phase recording): bookkeeping, no records.
        "settle_outcome": base.settle_outcome,
        "forget_outcomes": base.forget_outcomes,
        # What a Redact of a finding it sees does beyond the record: the store's files scrubbed of
        # what was deleted (no record is read). Its redact_activity is the store's own, run on the
        # view, so that it changes only the events the view sees.
        "scrub_files": base.scrub_files,
        "_refresh_text_index": base._refresh_text_index,
        "close": lambda: None,  # the view shares the store: closing is the store's owner's
    }
    methods.update({name: whole_store(name) for name in _WHOLE_STORE})
    return methods
