"""The Oracle store's SQL, checked without a server.

OracleDBMemoryStore runs its real code path against a recording connection (oracle_double): every
statement it sends is captured with its binds and compared with a reviewed snapshot in
snapshots/oracle/<operation>.sql, so any change to the SQL shows up as a failing diff. Regenerate
the snapshots after an intended change with

    OAM_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest -q tests/engine/test_oracle_offline.py

and review the diff line by line before committing it.

Beyond the snapshots: hostile ids, scope values, metadata and queries never reach SQL text (only
binds); metadata keys a JSON path cannot name safely are refused before anything is sent; and
the driver-facing behaviour (input sizes, batches, transactions, ORA- codes, sessions, URLs).
"""

from __future__ import annotations

import array
import difflib
import io
import json
import logging
import os
import re
import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import oracledb
import pytest
from PIL import Image

from memory.engine import (
    ActivityEvent,
    ActivityResult,
    HashingEmbedder,
    ImageMimeType,
    ImageRecord,
    Lifecycle,
    LinkedOwner,
    MemoryGraph,
    MemoryRecord,
    MessageRecord,
    RecordRelation,
    RecordStatus,
    SchemaPolicy,
    Snapshot,
    StaleVersionError,
    ThreadRecord,
    Visibility,
)
from memory.engine.images import check_image
from memory.engine.stores.arguments import encode_cursor
from memory.engine.stores.base import EmbedderMismatchError, SchemaError
from memory.engine.stores.oracle import (
    OracleDBMemoryStore,
    OracleInDatabaseEmbedder,
    OracleSchema,
    keyword_query,
    open_pool,
)

from .oracle_double import RecordingConnection, RecordingPool, Statement, managed_schema, ora_error

DIM = 8
SNAPSHOTS = Path(__file__).parent / "snapshots" / "oracle"
UPDATE_SNAPSHOTS = os.environ.get("OAM_UPDATE_SNAPSHOTS") == "1"
CREATED = datetime(2025, 1, 2, 3, 4, 5)


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (2, 2), (200, 10, 10)).save(buffer, format="PNG")
    return buffer.getvalue()


IMAGE = check_image(_png())


# --- building stores on the recording connection ------------------------------------------------


def open_store(
    conn: RecordingConnection | None = None, *, prefix: str = "", clear: bool = True, **options: Any
) -> tuple[RecordingConnection, OracleDBMemoryStore]:
    """A store on a recording connection scripted with an existing, current schema."""
    conn = conn or RecordingConnection()
    embedder = options.pop("embedder", None) or HashingEmbedder(DIM)
    managed_schema(conn, list(OracleSchema(prefix, DIM).names.values()), DIM, embedder.name)
    options.setdefault("schema_policy", SchemaPolicy.CREATE_IF_NECESSARY)
    store = OracleDBMemoryStore(embedder, conn, table_name_prefix=prefix, **options)
    if clear:
        reset(conn)
    return conn, store


def reset(conn: RecordingConnection) -> None:
    conn.statements.clear()
    conn.commits = conn.rollbacks = 0


def record_row(**values: Any) -> dict[str, Any]:
    """A row of the store's record columns (_RECORD_COLUMNS), as the database would return it."""
    row = {
        "pk": 1,
        "id": "m1",
        "kind": "memory",
        "record_type": "fact",
        "content": "the sky is blue",
        "index_text": None,
        "index_text_empty": 0,
        "parts": None,
        "thread_id": "t1",
        "user_id": "u1",
        "agent_id": "a1",
        "role": None,
        "role_empty": 0,
        "seq_no": None,
        "event_at": None,
        "created_at": CREATED,
        "expires_at": None,
        "status": "valid",
        "metadata": None,
        "message_id": None,
        "mime_type": None,
        "version": 1,
    }
    row.update(values)
    return row


def relation_row(**values: Any) -> dict[str, Any]:
    row = {
        "pos": 1,
        "id": "rel-1",
        "source_id": "m1",
        "source_type": "fact",
        "target_id": "m2",
        "target_type": "fact",
        "relation_type": "supports",
        "opposite_type": "is_supported_by",
        "event_at": None,
        "metadata": None,
        "created_at": CREATED,
        "version": 1,
    }
    row.update(values)
    return row


def thread_row(**values: Any) -> dict[str, Any]:
    row = {
        "id": "t1",
        "user_id": "u1",
        "agent_id": "a1",
        "metadata": '{"topic":"x"}',
        "settings": '{"lang":"en"}',
        "created_at": CREATED,
        "updated_at": CREATED,
        "summary": None,
        "topics": None,
        "message_count": 2,
        "version": 1,
    }
    row.update(values)
    return row


def live_row(**values: Any) -> dict[str, Any]:
    """The row update() locks first (SELECT ... FOR UPDATE)."""
    row = {
        "pk": 7,
        "content": "old text",
        "index_text": None,
        "index_text_empty": 0,
        "thread_id": "t1",
        "event_at": None,
        "created_at": CREATED,
        "version": 1,
    }
    row.update(values)
    return row


def vector(*values: float) -> list[float]:
    return list(values) + [0.0] * (DIM - len(values))


# --- snapshot rendering --------------------------------------------------------------------------

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


LONG_TEXT = 300
"""Bind strings longer than this are shown by their size, the deciding fact for their bind type."""


def normalise(value: Any) -> Any:
    """Binds with volatile values (times, generated ids, vectors, bytes) replaced by placeholders."""
    if isinstance(value, datetime):
        return "<timestamp>"
    if isinstance(value, array.array):
        return f"<vector {value.typecode}[{len(value)}]>"
    if isinstance(value, (bytes, bytearray)):
        return f"<bytes[{len(value)}]>"
    if isinstance(value, str) and len(value) > LONG_TEXT:
        return f"<text: {len(value)} characters, {len(value.encode())} bytes>"
    if isinstance(value, str):
        return _UUID.sub("<uuid>", value)
    if isinstance(value, dict):
        return {key: normalise(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalise(item) for item in value]
    return value


def _binds_text(binds: dict[str, Any]) -> str:
    return json.dumps(normalise(binds), ensure_ascii=False, sort_keys=False)


def render(name: str, statements: list[Statement]) -> str:
    """A snapshot: each statement verbatim, its binds (normalised) and input sizes as comments under it."""
    lines = [f"-- snapshot: {name}", f"-- statements: {len(statements)}"]
    for number, statement in enumerate(statements, 1):
        lines.append("")
        if statement.many:
            lines.append(f"-- [{number}] executemany, {len(statement.binds)} rows")
        else:
            lines.append(f"-- [{number}] execute")
        lines.extend(statement.sql.splitlines())
        if statement.many:
            lines.extend(f"-- binds[{i}]: {_binds_text(binds)}" for i, binds in enumerate(statement.binds))
        elif statement.binds:
            lines.append(f"-- binds: {_binds_text(statement.binds)}")
        if statement.input_sizes:
            sizes = ", ".join(f"{key}={getattr(kind, 'name', kind)}" for key, kind in statement.input_sizes.items())
            lines.append(f"-- input sizes: {sizes}")
        rows = statement.binds if statement.many else [statement.binds or {}]
        clobs = sorted(
            {
                name
                for binds in rows
                for name, value in binds.items()
                if name not in statement.input_sizes and _declared_type(statement, name, value) is oracledb.DB_TYPE_CLOB
            }
        )
        if clobs:
            lines.append(f"-- CLOB binds: {', '.join(clobs)}")
        if statement.options:
            lines.append(f"-- options: {', '.join(f'{k}={v!r}' for k, v in statement.options.items())}")
    return "\n".join(lines) + "\n"


# --- the operations, each recorded into a snapshot -------------------------------------------------

SCENARIOS: dict[str, Callable[[], list[Statement]]] = {}


def scenario(name: str) -> Callable:
    def register(run: Callable[[], list[Statement]]) -> Callable[[], list[Statement]]:
        assert name not in SCENARIOS, name
        SCENARIOS[name] = run
        return run

    return register


def _construct(**options: Any) -> list[Statement]:
    conn, _ = open_store(clear=False, **options)
    return conn.statements


@scenario("schema_create_if_necessary")
def _() -> list[Statement]:
    return _construct()


@scenario("schema_create_if_necessary_vector_index")
def _() -> list[Statement]:
    return _construct(vector_index=True)


@scenario("schema_create_if_necessary_no_text_index_prefixed")
def _() -> list[Statement]:
    return _construct(keyword_index=False, prefix="app_")


@scenario("schema_recreate")
def _() -> list[Statement]:
    return _construct(schema_policy=SchemaPolicy.RECREATE, vector_index=True)


@scenario("schema_create_if_empty_on_empty_database")
def _() -> list[Statement]:
    conn = RecordingConnection()
    embedder = HashingEmbedder(DIM)
    managed_schema(conn, list(OracleSchema("", DIM).names.values()), DIM, embedder.name)
    conn.answer(r"FROM user_tables", [], once=True)  # the first look finds nothing: create
    OracleDBMemoryStore(embedder, conn, schema_policy=SchemaPolicy.CREATE_IF_EMPTY)
    return conn.statements


@scenario("schema_create_if_empty_on_existing_schema")
def _() -> list[Statement]:
    return _construct(schema_policy=SchemaPolicy.CREATE_IF_EMPTY)


@scenario("schema_upgrade_from_version_5")
def _() -> list[Statement]:
    """A version-5 schema gains the version columns (one already added by another process is
    ORA-01430, which counts as done); the meta row then says 6."""
    conn = RecordingConnection()
    embedder = HashingEmbedder(DIM)
    managed_schema(conn, list(OracleSchema("", DIM).names.values()), DIM, embedder.name)
    conn.answer(r"SELECT meta_value FROM", [{"meta_value": "5"}], once=True)
    conn.answer(r"FROM user_tab_columns", [{"table_name": "OAM_THREADS"}])
    conn.fail(r'ALTER TABLE "OAM_RELATIONS"', ora_error(1430))
    OracleDBMemoryStore(embedder, conn, schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)
    return conn.statements


@scenario("schema_require_existing")
def _() -> list[Statement]:
    return _construct(schema_policy=SchemaPolicy.REQUIRE_EXISTING)


@scenario("add_messages_in_thread")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"SELECT next_seq_no", [{"next_seq_no": 5}])
    store.add(
        ["hello there", "", "look at this"],
        "message",
        index_texts=[None, "", "indexed words"],
        thread_ids="t1",
        user_ids="u1",
        agent_ids="a1",
        roles=["user", "", None],
        metadata=[{"source": "chat"}, None, {}],
        timestamps=["2025-01-02T03:04:05Z", None, None],
    )
    return conn.statements


@scenario("add_memories_with_ids_and_ttl")
def _() -> list[Statement]:
    conn, store = open_store()
    store.add(
        ["likes tea", "works remotely"],
        "fact",
        record_ids=["m1", "m2"],
        user_ids="u1",
        agent_ids=None,
        metadata={"source": "extraction", "confidence": 0.9},
        ttl_days=30,
        statuses=["valid", "invalid"],
    )
    return conn.statements


@scenario("add_images_with_bytes")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"SELECT next_seq_no", [{"next_seq_no": 0}])
    conn.answer(r"SELECT id, pk FROM", [{"id": "img-1", "pk": 11}, {"id": "img-2", "pk": 12}])
    store.add(
        ["a red square", ""],
        "image",
        record_ids=["img-1", "img-2"],
        thread_ids="t1",
        images=[IMAGE, IMAGE],
        message_ids=["msg-1", None],
    )
    return conn.statements


@scenario("add_in_batches")
def _() -> list[Statement]:
    conn, store = open_store()
    store.add([f"memory {i}" for i in range(5)], "memory", user_ids="u1", batch_size=2)
    return conn.statements


@scenario("add_with_given_embeddings")
def _() -> list[Statement]:
    conn, store = open_store()
    store.add(["given"], "memory", embeddings=[vector(3.0, 4.0)])
    return conn.statements


@scenario("add_user")
def _() -> list[Statement]:
    conn, store = open_store()
    store.add_user("u1", "Ada, prefers short answers", {"plan": "pro"})
    return conn.statements


@scenario("add_agent_empty_information")
def _() -> list[Statement]:
    conn, store = open_store()
    store.add_agent("a1", "")
    return conn.statements


@scenario("get")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"SELECT r\.pk, r\.id, r\.kind", [record_row()])
    assert store.get("fact", "m1").content == "the sky is blue"
    return conn.statements


@scenario("get_image_with_bytes")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(
        r"SELECT r\.pk, r\.id, r\.kind",
        [record_row(id="img-1", kind="image", record_type="image", message_id="msg-1", mime_type="image/png")],
    )
    conn.answer(r"SELECT r\.id, b\.bytes", [{"id": "img-1", "bytes": IMAGE.data}])
    assert store.get("image", "img-1", include_bytes=True).bytes == IMAGE.data
    return conn.statements


@scenario("list_by_scope")
def _() -> list[Statement]:
    conn, store = open_store()
    store.list(["message", "fact"], limit=20, thread_id="t1", user_id="u1", agent_id=None)
    return conn.statements


@scenario("restricted_list")
def _() -> list[Statement]:
    """A scoped login's listing: the records table is a subquery of the visible users and agents."""
    conn, store = open_store()
    view = store.restricted(Visibility(users=["alice", "bob"], agents=["atlas"]))
    view.list("fact", limit=20, status="valid")
    return conn.statements


@scenario("restricted_relations")
def _() -> list[Statement]:
    """A scoped login's links: both ends visible, records or threads."""
    conn, store = open_store()
    view = store.restricted(Visibility(users=["alice"]))
    conn.answer(r"SELECT count\(\*\) AS n FROM", [{"n": 1}])
    assert view.count_relations(record_id="m1") == 1
    return conn.statements


@scenario("list_by_record_id")
def _() -> list[Statement]:
    conn, store = open_store()
    store.list("fact", record_id=["m1", "m2"], limit=None)
    return conn.statements


@scenario("list_metadata_filter")
def _() -> list[Statement]:
    conn, store = open_store()
    store.list(
        "fact",
        metadata_filter={
            "source": "chat",
            "blank": "",
            "score": 3,
            "ratio": 0.5,
            "pinned": True,
            "archived": False,
            "deleted_at": None,
            "tags": ["a", "b"],
            "labels": {"$array_contains": ["x", {"k": 1}]},
            "colors": {"$array_contains_any": ["red", 7]},
            "empty": {"$array_contains_any": []},
            "any-array": {"$array_contains": []},
            "owner": {"team": "core", "level": {"$not": 2}},
            "state": {"$not": "done"},
            "shape": {"exact": 1},
        },
    )
    return conn.statements


@scenario("list_metadata_filter_none")
def _() -> list[Statement]:
    conn, store = open_store()
    store.list("fact", metadata_filter=None)
    return conn.statements


@scenario("list_after_cursor")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"ORDER BY r\.pk", [record_row(pk=6), record_row(pk=7, id="m2")])
    page = store.list("fact", limit=1, cursor=encode_cursor(5))
    assert page.next_cursor == encode_cursor(6)
    return conn.statements


@scenario("list_status_newest_first_text")
def _() -> list[Statement]:
    """Effective status, key descending after a newest-first cursor, and a text filter whose LIKE
    wildcards are escaped inside the one bind."""
    conn, store = open_store()
    conn.answer(r"ORDER BY r\.pk DESC", [record_row(pk=6), record_row(pk=5, id="m2")])
    page = store.list(
        ["fact", "memory"],
        limit=1,
        user_id="u1",
        status="invalid",
        newest_first=True,
        text="50%_Off\\É",
        cursor=encode_cursor(7, "desc"),
    )
    assert page.next_cursor == encode_cursor(6, "desc")
    store.list("message", status="valid")
    return conn.statements


@scenario("list_expired_only")
def _() -> list[Statement]:
    conn, store = open_store()
    store.list("fact", status="expired", limit=10)
    return conn.statements


@scenario("list_expiring_before")
def _() -> list[Statement]:
    conn, store = open_store()
    store.list(["fact", "memory"], expires_before="2030-01-08T00:00:00+00:00", user_id="u1", limit=10)
    return conn.statements


@scenario("count_expiring_before")
def _() -> list[Statement]:
    """list()'s conditions and binds, counted: the review queues' tallies."""
    conn, store = open_store()
    conn.answer(r"SELECT count\(\*\) AS n FROM", [{"n": 3}])
    assert store.count(["fact", "memory"], expires_before="2030-01-08T00:00:00+00:00", user_id="u1") == 3
    store.count(["message", "fact"], status="expired", agent_id=None)
    return conn.statements


@scenario("list_include_expired")
def _() -> list[Statement]:
    conn, store = open_store()
    store.list("message", include_expired=True, thread_id="t1")
    return conn.statements


@scenario("list_users")
def _() -> list[Statement]:
    conn, store = open_store()
    store.list_users(limit=5, cursor=encode_cursor("u0"))
    return conn.statements


@scenario("list_thread_messages")
def _() -> list[Statement]:
    conn, store = open_store()
    store.list_thread_messages("t1", last_n=10, range_start_seq_no=2, range_end_seq_no=20)
    return conn.statements


@scenario("thread_message_window")
def _() -> list[Statement]:
    conn, store = open_store()
    store.thread_message_window("t1", 4, 10)
    store.thread_message_window("t1", 0, None)
    return conn.statements


@scenario("count_thread_messages")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"SELECT count\(\*\) AS n", [{"n": 3}])
    assert store.count_thread_messages("t1") == 3
    return conn.statements


@scenario("count_thread_messages_through_seq_no")
def _() -> list[Statement]:
    """A message's position in its thread, for a context card as of that message."""
    conn, store = open_store()
    conn.answer(r"SELECT count\(\*\) AS n", [{"n": 2}])
    assert store.count_thread_messages("t1", through_seq_no=7) == 2
    return conn.statements


@scenario("update_text")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"FOR UPDATE", [live_row()])
    assert store.update("message", "msg-1", text="new text") == 1
    return conn.statements


@scenario("update_embedding_none")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"FOR UPDATE", [live_row(thread_id=None)])
    store.update("fact", "m1", embedding=None)
    return conn.statements


@scenario("update_metadata_and_index_text")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"FOR UPDATE", [live_row(thread_id=None)])
    store.update("fact", "m1", index_text="", metadata={"source": "edited"})
    return conn.statements


@scenario("update_ttl_of_message")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"FOR UPDATE", [live_row()])
    store.update("message", "msg-1", ttl_days=7, ttl_anchor="created_at")
    return conn.statements


@scenario("update_image")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"FOR UPDATE", [live_row(thread_id=None)])
    store.update("image", "img-1", image=IMAGE)
    return conn.statements


@scenario("update_memory_type_and_owners")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"FOR UPDATE", [live_row(thread_id=None)])
    store.update("fact", "m1", memory_type="preference", user_id="u2", agent_id=None)
    return conn.statements


@scenario("update_missing_record")
def _() -> list[Statement]:
    conn, store = open_store()
    assert store.update("fact", "nope", text="x") == 0
    return conn.statements


@scenario("delete_memory")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"SELECT r\.thread_id FROM", [{"thread_id": "t1"}])
    conn.answer(
        r"SELECT r\.pk, r\.id, r\.kind, r\.thread_id", [{"pk": 3, "id": "m1", "kind": "memory", "thread_id": "t1"}]
    )
    conn.answer(r"SELECT DISTINCT rel\.target_id", [{"target_id": "m9"}])
    assert store.delete("fact", "m1") == 1
    return conn.statements


@scenario("delete_message_with_images")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"SELECT r\.thread_id FROM", [{"thread_id": "t1"}])
    conn.answer(
        r"SELECT r\.pk, r\.id, r\.kind, r\.thread_id", [{"pk": 4, "id": "msg-1", "kind": "message", "thread_id": "t1"}]
    )
    conn.answer(r"SELECT r\.pk FROM .* r\.kind = 'image'", [{"pk": 11}])
    store.delete("message", "msg-1")
    return conn.statements


@scenario("delete_memory_expected_version")
def _() -> list[Statement]:
    """The version is read and the row locked in the delete's transaction, before anything goes."""
    conn, store = open_store()
    conn.answer(r"SELECT r\.version FROM .* FOR UPDATE", [{"version": 2}])
    conn.answer(r"SELECT r\.thread_id FROM", [{"thread_id": "t1"}])
    conn.answer(
        r"SELECT r\.pk, r\.id, r\.kind, r\.thread_id", [{"pk": 3, "id": "m1", "kind": "memory", "thread_id": "t1"}]
    )
    assert store.delete("fact", "m1", expected_version=2) == 1
    return conn.statements


@scenario("delete_memory_stale_version")
def _() -> list[Statement]:
    """Another version: nothing is deleted, the transaction rolls back."""
    conn, store = open_store()
    conn.answer(r"SELECT r\.version FROM .* FOR UPDATE", [{"version": 3}])
    with pytest.raises(StaleVersionError, match="fact 'm1' is at version 3, not 2"):
        store.delete("fact", "m1", expected_version=2)
    assert not any(statement.sql.lstrip().startswith("DELETE") for statement in conn.statements)
    return conn.statements


@scenario("delete_thread")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(
        r"SELECT r\.pk, r\.id, r\.kind, r\.thread_id",
        [
            {"pk": 4, "id": "msg-1", "kind": "message", "thread_id": "t1"},
            {"pk": 5, "id": "m1", "kind": "memory", "thread_id": "t1"},
        ],
    )
    store.delete_thread("t1")
    return conn.statements


@scenario("delete_thread_expected_version")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"FOR UPDATE", [{"version": 4}])
    store.delete_thread("t1", expected_version=4)
    return conn.statements


@scenario("delete_user_cascade")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(
        r"SELECT r\.pk, r\.id, r\.kind, r\.thread_id",
        [{"pk": 9, "id": "u1", "kind": "user_profile", "thread_id": None}],
    )
    store.delete_user("u1")
    return conn.statements


@scenario("erase_user")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"SELECT t\.id FROM", [{"id": "t1"}])
    conn.answer(
        r"SELECT r\.pk, r\.id, r\.kind FROM",
        [
            {"pk": 9, "id": "u1", "kind": "user_profile"},
            {"pk": 4, "id": "msg-1", "kind": "message"},
            {"pk": 5, "id": "m1", "kind": "memory"},
        ],
    )
    conn.answer(r"SELECT rel\.id FROM", [{"id": "l1"}])
    conn.answer(r"SELECT COUNT\(\*\) AS n FROM", [{"n": 1}])
    conn.answer(r"SELECT a\.pk FROM", [{"pk": 7}])
    conn.answer(r"SELECT DISTINCT ar\.event_pk", [{"event_pk": 8}])
    conn.answer(r"SELECT a\.pk, a\.results", [{"pk": 8, "results": '[{"record_id":"m1","record_type":"fact"}]'}])
    store.erase_user("u1")
    return conn.statements


@scenario("scrub_files")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"FROM user_indexes", [{"n": 1, "failed": 0}])
    store.scrub_files()
    return conn.statements


@scenario("delete_agent_profile_only")
def _() -> list[Statement]:
    conn, store = open_store()
    store.delete_agent("a1", cascade=False)
    return conn.statements


@scenario("purge_expired")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(
        r"SELECT r\.pk, r\.id, r\.kind, r\.thread_id", [{"pk": 8, "id": "old", "kind": "memory", "thread_id": None}]
    )
    assert store.purge_expired() == 1
    return conn.statements


def _relations_store() -> tuple[RecordingConnection, OracleDBMemoryStore]:
    conn, store = open_store()
    conn.answer(r"SELECT r\.record_type, r\.thread_id FROM", [{"record_type": "fact", "thread_id": "t1"}])
    return conn, store


@scenario("add_relations")
def _() -> list[Statement]:
    conn, store = _relations_store()
    store.add_relations(
        [
            {
                "source_record_id": "m1",
                "source_record_type": "fact",
                "target_record_id": "m2",
                "target_record_type": "fact",
                "relation_type": "supersedes",
                "id": "rel-1",
                "timestamp": "2025-01-02T03:04:05Z",
                "metadata": {"why": "newer"},
            },
            {
                "source_record_id": "m3",
                "source_record_type": "fact",
                "target_record_id": "m4",
                "target_record_type": "fact",
                "relation_type": "mentions",
            },
        ],
        thread_id="t1",
    )
    return conn.statements


@scenario("update_relations")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r'FROM "OAM_RELATIONS" rel WHERE rel\.id = :id', [relation_row()])
    conn.answer(r"SELECT count\(\*\) AS n FROM", [{"n": 2}])
    store.update_relations("rel-1", relation_type="refines", metadata={"why": "edited"}, thread_id="t1")
    return conn.statements


@scenario("delete_relations_by_id")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r'FROM "OAM_RELATIONS" rel WHERE rel\.id = :id', [relation_row()])
    assert store.delete_relations("rel-1") == 1
    return conn.statements


@scenario("delete_relations_stale_version")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r'FROM "OAM_RELATIONS" rel WHERE rel\.id = :id', [relation_row(version=2)])
    with pytest.raises(StaleVersionError, match="relation 'rel-1' is at version 2, not 1"):
        store.delete_relations("rel-1", expected_version=1)
    return conn.statements


@scenario("delete_relations_by_tuple")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"SELECT id FROM .* WHERE source_id = :source_id", [{"id": "rel-1"}])
    conn.answer(r'FROM "OAM_RELATIONS" rel WHERE rel\.id = :id', [relation_row()])
    store.delete_relations(
        source_record_id="m1",
        source_record_type="fact",
        target_record_id="m2",
        target_record_type="fact",
        relation_type="supports",
    )
    return conn.statements


@scenario("list_relations")
def _() -> list[Statement]:
    conn, store = open_store()
    store.list_relations(record_id="m1", user_id="u1", agent_id=None, limit=10, cursor=encode_cursor(4))
    return conn.statements


@scenario("count_relations")
def _() -> list[Statement]:
    """list_relations()'s conditions, of some ids and metadata, counted."""
    conn, store = open_store()
    conn.answer(r"SELECT count\(\*\) AS n FROM", [{"n": 2}])
    assert (
        store.count_relations(
            user_id="u1",
            relation_types=["supersedes", "refines"],
            relation_ids=["rel-1", "rel-2"],
            metadata_filter={"origin": "llm"},
        )
        == 2
    )
    assert store.count_relations(relation_ids=[]) == 0  # nothing is sent
    return conn.statements


@scenario("facet_counts")
def _() -> list[Statement]:
    """list()'s conditions grouped by a column, the effective status, and the items of the
    metadata's tags (JSON_TABLE beside each row)."""
    conn, store = open_store()
    conn.answer(r"SELECT .* AS facet_value, count\(\*\) AS n FROM", [{"facet_value": "u1", "n": 2}])
    assert store.facet_counts(["fact", "preference"], "user_id", agent_id="a1", text="lisbon") == [("u1", 2)]
    store.facet_counts("fact", "status", user_id="u1", metadata_filter={"source": "chat"})
    store.facet_counts("fact", "tag", status="valid")
    return conn.statements


@scenario("thread_facet_counts")
def _() -> list[Statement]:
    """list_threads()' conditions grouped by an owner, and by the items of the metadata's tags."""
    conn, store = open_store()
    conn.answer(r"SELECT .* AS facet_value, count\(\*\) AS n FROM", [{"facet_value": None, "n": 3}])
    assert store.thread_facet_counts("agent_id", user_id="u1", text="lisbon") == [(None, 3)]
    store.thread_facet_counts("tag", metadata_filter={"topic": "trips"})
    return conn.statements


@scenario("memory_graph_of_a_user")
def _() -> list[Statement]:
    """The seeds (the user's memories passing the node filters), one query for the links touching
    them (each end checked against the filters), one for the new frontier's, then the records."""
    conn, store = open_store()
    conn.answer(r'SELECT r\.id FROM "OAM_RECORDS" r WHERE r\.user_id', [{"id": "m1"}, {"id": "m2"}])
    conn.answer(
        r"AS source_ok",
        [{**relation_row(pos=2, id="rel-2", source_id="m3", target_id="m2"), "source_ok": 1, "target_ok": 1}],
        once=True,
    )  # hop 2 (the last frontier, m3), scripted first: the later script answers first
    conn.answer(
        r"AS source_ok",
        [
            {**relation_row(), "source_ok": 1, "target_ok": 1},
            {**relation_row(pos=2, id="rel-2", source_id="m3", target_id="m2"), "source_ok": 1, "target_ok": 1},
            {**relation_row(pos=3, id="rel-3", source_id="m1", target_id="m4"), "source_ok": 1, "target_ok": 0},
        ],
        once=True,
    )
    conn.answer(r"WHERE r\.kind = 'memory' AND r\.id IN", [record_row(pk=i, id=f"m{i}") for i in (1, 2, 3)])
    graph = store.memory_graph(
        user_id="u1", relation_types=["supports", "refines"], memory_types=["fact", "memory"], statuses="valid"
    )
    assert [node.id for node in graph.nodes] == ["m2", "m1", "m3"]
    assert [edge.id for edge in graph.edges] == ["rel-1", "rel-2"]
    return conn.statements


@scenario("memory_graph_of_a_memory_two_hops")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"r\.id = :centre", [{"id": "m1"}])
    conn.answer(r"AS source_ok", [], once=True)  # the links among the last frontier
    conn.answer(
        r"AS source_ok",
        [{**relation_row(pos=2, id="rel-2", source_id="m2", target_id="m3"), "source_ok": 1, "target_ok": 1}],
        once=True,
    )
    conn.answer(r"AS source_ok", [{**relation_row(), "source_ok": 1, "target_ok": 1}], once=True)
    conn.answer(r"WHERE r\.kind = 'memory' AND r\.id IN", [record_row(pk=i, id=f"m{i}") for i in (1, 2, 3)])
    graph = store.memory_graph(memory_id="m1", hops=2, statuses=["invalid"], max_nodes=2)
    assert [node.id for node in graph.nodes] == ["m1", "m2"] and graph.truncated
    assert (graph.total_nodes, graph.total_edges, [edge.id for edge in graph.edges]) == (3, 2, ["rel-1"])
    return conn.statements


@scenario("memory_graph_of_a_missing_memory")
def _() -> list[Statement]:
    conn, store = open_store()
    assert store.memory_graph(memory_id="gone") == MemoryGraph()
    return conn.statements


@scenario("find_duplicates")
def _() -> list[Statement]:
    """The near pairs from a self-join on VECTOR_DISTANCE (the user and the distance as binds),
    the candidates counted, the paired memories' vectors, then their records."""
    conn, store = open_store()
    conn.answer(r"AS first_pk", [{"first_pk": 1, "second_pk": 2}, {"first_pk": 2, "second_pk": 5}])
    conn.answer(r"count\(\*\) AS n", [{"n": 4}])
    embeddings = {1: vector(1.0), 2: vector(1.0, 0.1), 5: vector(1.0, 0.2)}
    conn.answer(
        r"SELECT r\.pk, r\.embedding FROM",
        [{"pk": pk, "embedding": array.array("f", values)} for pk, values in embeddings.items()],
    )
    conn.answer(r"r\.id, .*WHERE r\.pk IN", [record_row(pk=pk, id=f"m{pk}") for pk in embeddings])
    found = store.find_duplicates("u1", max_distance=0.1, memory_types=["fact", "memory"], limit=5)
    assert [[record.id for record in group.memories] for group in found.groups] == [["m2", "m5", "m1"]]
    assert (found.total_groups, found.compared) == (1, 4)
    return conn.statements


@scenario("duplicate_group_counts")
def _() -> list[Statement]:
    """Each user's near pairs from the self-join find_duplicates sends, counted as groups: no
    count of candidates, no vectors, no records; then memoised until the next write or expiry,
    as stats() is."""
    conn, store = open_store()
    _stats_answers(conn)
    conn.answer(
        r"AS first_pk",
        [{"first_pk": 1, "second_pk": 2}, {"first_pk": 2, "second_pk": 5}, {"first_pk": 7, "second_pk": 9}],
    )
    counts = store.duplicate_group_counts(["u1", "u2"], max_distance=0.1, memory_types="fact")
    assert counts == {"u1": 2, "u2": 2}
    assert store.duplicate_group_counts(["u1", "u2"], max_distance=0.1, memory_types="fact") == counts
    return conn.statements


@scenario("lifecycle")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(
        r"rel\.id AS link_id",
        [
            {"id": "m1", "status": "valid", "link_id": "rel-1"},
            {"id": "m1", "status": "valid", "link_id": "rel-2"},
            {"id": "m2", "status": "invalid", "link_id": None},
        ],
    )
    found = store.lifecycle(["m2", "m1", "missing", "m1"])
    assert found == {
        "m2": Lifecycle(RecordStatus.INVALID, ()),
        "m1": Lifecycle(RecordStatus.VALID, ("rel-1", "rel-2")),
    }
    return conn.statements


@scenario("memory_vectors")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"SELECT r\.id, r\.embedding", [{"id": "m1", "embedding": array.array("f", vector(0.6, 0.8))}])
    found = store.memory_vectors(["m1", "missing", "m1"])
    assert list(found) == ["m1"]
    assert found["m1"].dtype == np.float32 and found["m1"].tolist()[:3] == pytest.approx([0.6, 0.8, 0.0])
    assert store.memory_vectors([]) == {}
    return conn.statements


@scenario("save_thread")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"message_count", [thread_row()])
    assert store.save_thread("t1", "u1", "a1", {"topic": "x"}, {"lang": "en"}).id == "t1"
    return conn.statements


@scenario("get_thread")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"message_count", [thread_row()])
    assert store.get_thread("t1").message_count == 2
    return conn.statements


@scenario("list_threads")
def _() -> list[Statement]:
    conn, store = open_store()
    store.list_threads(
        user_id="u1",
        agent_id=None,
        metadata_filter={"project": "apollo"},
        limit=5,
        cursor=encode_cursor("2025-01-02T03:04:05.000000Z", "t9"),
    )
    return conn.statements


@scenario("list_threads_by_text")
def _() -> list[Statement]:
    conn, store = open_store()
    store.list_threads(user_id="u1", text="Köln %", limit=5)
    return conn.statements


def _stats_answers(conn: RecordingConnection) -> None:
    conn.answer(r"SELECT MAX\(seq\) AS seq", [{"seq": 41}])
    conn.answer(r"SELECT meta_value FROM", [{"meta_value": "store-1"}])
    conn.answer(r"s.state, count", [{"record_type": "fact", "state": "valid", "n": 3}])
    conn.answer(r"SELECT s\.day", [{"day": "2025-01-02", "kind": "memory", "n": 3}])
    conn.answer(r"SELECT rel\.relation_type, count", [{"relation_type": "supports", "n": 1}])
    conn.answer(r"AS threads", [{"threads": 1, "users": 1, "agents": 1}])
    conn.answer(r"MIN\(r\.expires_at\)", [{"at": None}])


@scenario("stats_whole_store_then_memoised")
def _() -> list[Statement]:
    conn, store = open_store()
    _stats_answers(conn)
    assert store.stats().records["fact"]["valid"] == 3
    assert store.stats().links == {"supports": 1}  # the second call reads only the log's newest entry
    return conn.statements


@scenario("stats_of_a_user_cascade")
def _() -> list[Statement]:
    conn, store = open_store()
    _stats_answers(conn)
    assert store.stats(user_id="u1").threads == 1
    return conn.statements


@scenario("stats_of_a_thread")
def _() -> list[Statement]:
    conn, store = open_store()
    _stats_answers(conn)
    store.stats(thread_id="t1")
    return conn.statements


@scenario("owner_counts")
def _() -> list[Statement]:
    """Counted once, then memoised until the next write or expiry, as stats() is."""
    conn, store = open_store()
    _stats_answers(conn)
    conn.answer(r"'thread' AS kind", [{"owner": "a1", "kind": "thread", "n": 2}])
    assert store.owner_counts("agent", ["a1", "a2"])["a1"]["threads"] == 2
    assert store.owner_counts("agent", ["a1", "a2"])["a1"]["threads"] == 2
    return conn.statements


@scenario("linked_owners")
def _() -> list[Statement]:
    """One grouped query over the links and their two memories, then memoised as stats() is."""
    conn, store = open_store()
    _stats_answers(conn)
    conn.answer(r"count\(DISTINCT o\.memory_pk\)", [{"owner_id": "u1", "links": 3, "memories": 2}])
    assert store.linked_owners("user", limit=5) == [LinkedOwner("u1", 3, 2)]
    assert store.linked_owners("user", limit=5) == [LinkedOwner("u1", 3, 2)]
    return conn.statements


@scenario("snapshot_of_records")
def _() -> list[Statement]:
    """A message with its images (bytes included) and a memory with its links, in one read."""
    conn, store = open_store()
    conn.answer(
        r"AS explicit_status",
        [
            {
                **record_row(pk=4, id="msg-1", kind="message", record_type="message", seq_no=0),
                "explicit_status": "valid",
            },
            {
                **record_row(
                    pk=5, id="img-1", kind="image", record_type="image", message_id="msg-1", mime_type="image/png"
                ),
                "explicit_status": "valid",
            },
        ],
    )
    conn.answer(r"SELECT r\.id, b\.bytes", [{"id": "img-1", "bytes": IMAGE.data}])
    snapshot = store.snapshot(record_ids=[("message", "msg-1"), ("fact", "m1"), ("fact", "m2")])
    assert snapshot.records[1].bytes == IMAGE.data
    return conn.statements


@scenario("snapshot_of_a_thread")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"message_count", [thread_row()])
    store.snapshot(thread_id="t1")
    return conn.statements


@scenario("restore")
def _() -> list[Statement]:
    """A thread (absent: created), a message with an image part, two facts and their link."""
    conn, store = open_store()
    conn.answer(r"SELECT id, pk FROM", [{"id": "img-1", "pk": 12}])
    conn.answer(
        r"SELECT r\.id, r\.record_type FROM", [{"id": "m1", "record_type": "fact"}, {"id": "m2", "record_type": "fact"}]
    )
    created = "2025-01-02T03:04:05.000000+00:00"
    scope = {"thread_id": "t1", "user_id": "u1", "agent_id": "a1", "created_at": created, "timestamp": created}
    snapshot = Snapshot(
        threads=[ThreadRecord(id="t1", user_id="u1", agent_id="a1", created_at=created, updated_at=created, version=3)],
        records=[
            MessageRecord(id="msg-1", record_type="message", content="hello", role="user", seq_no=4, **scope),
            ImageRecord(
                id="img-1",
                content="a red square",
                message_id="msg-1",
                mime_type=ImageMimeType.PNG,
                bytes=IMAGE.data,
                **scope,
            ),
            MemoryRecord(id="m1", record_type="fact", content="the sky is blue", metadata={"n": 1}, **scope),
            MemoryRecord(id="m2", record_type="fact", content="the sky was grey", **scope),
        ],
        relations=[
            RecordRelation(
                id="rel-1",
                source_record_id="m1",
                source_record_type="fact",
                target_record_id="m2",
                target_record_type="fact",
                relation_type="supersedes",
                opposite_relation_type="is_superseded_by",
                created_at=created,
            )
        ],
    )
    snapshot.stored[("fact", "m1")] = {"status": RecordStatus.VALID, "event_at": None, "index_text": "sky colour"}
    report = store.restore(snapshot)
    assert report.restored == {"threads": 1, "records": 4, "relations": 1}
    return conn.statements


@scenario("update_thread")
def _() -> list[Statement]:
    conn, store = open_store()
    store.update_thread("t1", metadata={"topic": "y"}, settings={"lang": "de"})
    return conn.statements


@scenario("save_thread_summary")
def _() -> list[Statement]:
    conn, store = open_store()
    store.save_thread_summary("t1", "they talked about tea", ["tea", "mornings"])
    store.save_thread_summary("t1", None, None)
    return conn.statements


@scenario("save_thread_summary_expected_version")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"FOR UPDATE", [{"version": 4}])
    store.save_thread_summary("t1", "they talked about tea", ["tea"], expected_version=4)
    return conn.statements


@scenario("save_thread_state")
def _() -> list[Statement]:
    conn, store = open_store()
    store.save_thread_state("t1", "extraction", {"cursor": 3, "failed": []})
    return conn.statements


def _search_answers(conn: RecordingConnection) -> None:
    conn.answer(r"VECTOR_DISTANCE\(r\.embedding, :query_vector, COSINE\) AS distance", [{"pk": 1, "distance": 0.25}])
    conn.answer(r"SCORE\(1\) AS score", [{"pk": 2, "score": 12}])
    conn.answer(r"WHERE r\.pk IN", [record_row(pk=1), record_row(pk=2, id="m2", content="tea in the morning")])


SEARCH_ARGS = {
    "k": 3,
    "user_id": "u1",
    "exact_user_match": True,
    "agent_id": None,
    "exact_agent_match": True,
    "record_types": ["fact", "message"],
    "metadata_filter": {"source": "chat"},
    "include_invalid_results": False,
}


@scenario("search_vector")
def _() -> list[Statement]:
    conn, store = open_store(search_strategy="vector")
    _search_answers(conn)
    store.search("morning tea", **SEARCH_ARGS)
    return conn.statements


@scenario("search_by_query_vector")
def _() -> list[Statement]:
    conn, store = open_store()
    _search_answers(conn)
    store.search(query_vector=vector(1.0), k=2, thread_id="t1", exact_thread_match=True)
    return conn.statements


@scenario("search_keyword")
def _() -> list[Statement]:
    conn, store = open_store(search_strategy="keyword")
    conn.answer(r"FROM user_indexes", [{"n": 1}])
    _search_answers(conn)
    store.search("morning tea", **SEARCH_ARGS)
    return conn.statements


@scenario("search_hybrid")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"FROM user_indexes", [{"n": 1}])
    _search_answers(conn)
    store.search("morning tea", **SEARCH_ARGS)
    return conn.statements


@scenario("search_hybrid_without_text_index")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"FROM user_indexes", [{"n": 0}])
    _search_answers(conn)
    store.search("morning tea", **SEARCH_ARGS)
    return conn.statements


@scenario("search_hybrid_created_at_or_before")
def _() -> list[Statement]:
    """A search as of a moment (a context card as of a message): both rankings take the cutoff."""
    conn, store = open_store()
    conn.answer(r"FROM user_indexes", [{"n": 1}])
    _search_answers(conn)
    store.search("morning tea", **SEARCH_ARGS, created_at_or_before="2025-01-02T03:04:05.000006+01:00")
    return conn.statements


@scenario("search_graph_one_hop_created_at_or_before")
def _() -> list[Statement]:
    """The hop's far ends take the cutoff too."""
    conn, store = open_store(search_strategy="vector")
    conn.answer(r"VECTOR_DISTANCE\(r\.embedding, :query_vector, COSINE\) AS distance", [{"pk": 1, "distance": 0.1}])
    conn.answer(r"WHERE r\.pk IN", [record_row(pk=1)])
    conn.answer(r"SELECT f\.v AS node", [{"node": "m1", **relation_row(), "admitted": 1}])
    conn.answer(r"AS distance FROM .* WHERE r\.kind = 'memory' AND r\.id IN", [record_row(pk=2, id="m2", distance=0.4)])
    hits = store.search("sky", k=1, num_hops=1, created_at_or_before=datetime(2025, 1, 2, 3, 4, 5))
    assert [link[1][0].id for link in hits[0][0].linked_results] == ["m2"]
    return conn.statements


@scenario("search_approximate")
def _() -> list[Statement]:
    conn, store = open_store(vector_index=True, approximate_accuracy=90, search_strategy="vector")
    _search_answers(conn)
    store.search("morning tea", k=5)
    return conn.statements


@scenario("search_approximate_filtered_with_hint")
def _() -> list[Statement]:
    conn, store = open_store(
        vector_index=True, approximate_accuracy=90, search_strategy="vector", vector_index_transform=True
    )
    _search_answers(conn)
    store.search("morning tea", k=5, record_types=["fact"], metadata_filter={"source": "chat"})
    return conn.statements


@pytest.mark.parametrize("strategy", ["vector", "keyword", "hybrid"])
def test_a_search_with_a_strategy_sends_what_a_store_opened_with_it_sends(strategy: str) -> None:
    """`strategy=` on a search changes no SQL: the statements are those of search_<strategy>."""
    sent = []
    for opened, given in ((strategy, {}), ("hybrid", {"strategy": strategy})):
        conn, store = open_store(search_strategy=opened)
        conn.answer(r"FROM user_indexes", [{"n": 1}])
        _search_answers(conn)
        store.search("morning tea", **SEARCH_ARGS, **given)
        sent.append(render("search", conn.statements))
    assert sent[0] == sent[1]


def test_the_vector_index_hint_needs_approximate_search():
    with pytest.raises(ValueError, match="approximate_accuracy"):
        open_store(vector_index=True, vector_index_transform=True)
    with pytest.raises(ValueError, match="vector_index_transform"):
        open_store(vector_index=True, approximate_accuracy=90, vector_index_transform="yes")


# Strings past the server's VARCHAR2 limit (4,000 bytes unless MAX_STRING_SIZE=EXTENDED) must go
# as CLOBs wherever they are not a plain inserted value: python-oracledb would send them as LONG,
# which Oracle refuses inside JSON(:x), JSON_TABLE(:ids ...) and MERGE (ORA-01461).
WIDE = "é" * 2500
"""2,500 characters, 5,000 bytes in UTF-8: past the limit in bytes though not in characters."""


@scenario("add_memory_with_5000_byte_metadata")
def _() -> list[Statement]:
    conn, store = open_store()
    store.add(["a note"], "memory", record_ids=["m1"], user_ids="u1", metadata={"note": WIDE})
    return conn.statements


@scenario("update_metadata_to_5000_bytes")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"FOR UPDATE", [live_row()])
    store.update("memory", "m1", metadata={"note": WIDE})
    return conn.statements


@scenario("list_200_ids")
def _() -> list[Statement]:
    conn, store = open_store()
    store.list("memory", record_id=[f"memory-{i:04d}-of-a-long-id" for i in range(200)], limit=None)
    return conn.statements


@scenario("add_6000_character_content")
def _() -> list[Statement]:
    conn, store = open_store()
    store.add(["x" * 6000], "memory", record_ids=["m1"], user_ids="u1")
    return conn.statements


def test_the_string_limit_is_the_servers():
    """4,000 bytes unless the server accepts a VARCHAR2(32767) (MAX_STRING_SIZE=EXTENDED)."""
    conn, store = open_store()
    assert store.dialect.max_string_bytes == 4000
    conn = RecordingConnection()
    conn.answer(r"VARCHAR2\(32767\)", [{"probe": "x"}])
    _, store = open_store(conn)
    assert store.dialect.max_string_bytes == 32767
    handler = store.dialect.cursor(conn).inputtypehandler
    assert handler(_VarMaker(), WIDE, 1) is None
    assert handler(_VarMaker(), "é" * 16384, 1).type is oracledb.DB_TYPE_CLOB


@scenario("search_graph_two_hops")
def _() -> list[Statement]:
    conn, store = open_store(search_strategy="vector")
    conn.answer(r"VECTOR_DISTANCE\(r\.embedding, :query_vector, COSINE\) AS distance", [{"pk": 1, "distance": 0.1}])
    conn.answer(r"WHERE r\.pk IN", [record_row(pk=1)])
    # hop 2 (scripted first: the later script answers first), then hop 1
    conn.answer(
        r"SELECT f\.v AS node",
        [{"node": "m2", **relation_row(pos=2, id="rel-2", source_id="m2", target_id="m3"), "admitted": 1}],
        once=True,
    )
    conn.answer(r"SELECT f\.v AS node", [{"node": "m1", **relation_row(), "admitted": 1}], once=True)
    conn.answer(
        r"AS distance FROM .* WHERE r\.kind = 'memory' AND r\.id IN",
        [record_row(pk=2, id="m2", distance=0.4), record_row(pk=3, id="m3", distance=0.6)],
    )
    hits = store.search("sky", k=1, num_hops=2, user_id="u1", exact_user_match=True, metadata_filter={"source": "chat"})
    assert [hit[0].id for hit in hits] == ["m1"]
    first = hits[0][0].linked_results
    assert [link[1][0].id for link in first] == ["m2"]
    assert [link[1][0].id for link in first[0][1][0].linked_results] == ["m3"]
    return conn.statements


@scenario("in_database_embedder_embed")
def _() -> list[Statement]:
    conn = RecordingConnection()
    conn.answer(
        r"VECTOR_EMBEDDING",
        [
            {"n": 1, "embedding": array.array("f", vector(1.0))},
            {"n": 2, "embedding": array.array("f", vector(0.0, 1.0))},
        ],
    )
    embedder = OracleInDatabaseEmbedder(conn, "doc_model", DIM)
    assert embedder.embed(["first text", "second text"]).shape == (2, DIM)
    return conn.statements


# --- re-embedding (MemoryStore.reembed): the staging table and the vector column's swap ---------

NEW_DIM = 16


def script_reembed(conn: RecordingConnection, columns: list[set[str]], phase: dict[str, str] | None = None) -> None:
    """Answers for one reembed run: two records to stage, the vector columns present at each look
    (first look first), and the meta rows a swap in progress left (`phase`)."""
    conn.answer(r"COUNT\(\*\) AS n FROM", [{"n": 0}])
    conn.answer(r"COUNT\(\*\) AS total", [{"total": 2, "staged": 2}])
    conn.answer(r"COUNT\(\*\) AS total", [{"total": 2, "staged": 0}], once=True)
    conn.answer(
        r"SELECT r\.pk, r\.version, r\.search_text",
        [{"pk": 1, "version": 1, "search_text": "first text"}, {"pk": 2, "version": 3, "search_text": "second"}],
        once=True,
    )
    conn.answer(r"FROM user_tab_columns", [{"column_name": name} for name in sorted(columns[-1])])
    for present in reversed(columns[:-1]):
        conn.answer(r"FROM user_tab_columns", [{"column_name": name} for name in sorted(present)], once=True)
    filled = {
        "reembed_phase": "filled",
        "reembed_target": json.dumps({"embedder": f"hashing-{NEW_DIM}", "vector_dim": NEW_DIM}, sort_keys=True),
    }
    conn.answer(r"meta_key IN", [{"meta_key": key, "meta_value": value} for key, value in filled.items()], once=True)
    if phase is not None:
        conn.answer(r"meta_key IN", [{"meta_key": key, "meta_value": value} for key, value in phase.items()], once=True)
    else:
        conn.answer(r"meta_key IN", [], once=True)


@scenario("reembed_to_a_new_dimension")
def _() -> list[Statement]:
    conn, store = open_store(vector_index=True)
    script_reembed(conn, [{"EMBEDDING"}, {"EMBEDDING", "EMBEDDING_NEXT"}, {"EMBEDDING", "EMBEDDING_PREV"}])
    report = store.reembed(HashingEmbedder(NEW_DIM), batch_size=2)
    assert (report.vector_dim, report.embedded, store.vector_dim) == (NEW_DIM, 2, NEW_DIM)
    return conn.statements


@scenario("reembed_finishes_a_swap_cut_short")
def _() -> list[Statement]:
    conn, store = open_store()
    phase = {
        "reembed_phase": "filled",
        "reembed_target": json.dumps({"embedder": f"hashing-{NEW_DIM}", "vector_dim": NEW_DIM}, sort_keys=True),
    }
    script_reembed(conn, [{"EMBEDDING_NEXT", "EMBEDDING_PREV"}, {"EMBEDDING", "EMBEDDING_PREV"}], phase)
    report = store.reembed(HashingEmbedder(NEW_DIM))
    assert report.embedded == 0 and store.vector_dim == NEW_DIM
    return conn.statements


@scenario("health")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"SELECT meta_value FROM", [{"meta_value": "7"}], once=True)
    conn.answer(r"MIN\(seq\) AS first_seq", [{"first_seq": 3, "last_seq": 41}])
    health = store.health()
    assert (health.backend, health.schema_version, health.last_change) == ("oracle", 7, 41)
    return conn.statements


# --- the activity log (sql/activity.py) ----------------------------------------------------------

ACTIVITY_AT = datetime(2025, 3, 4, 5, 6, 7, 890123)


def activity_row(*, content: bool = True, **values: Any) -> dict[str, Any]:
    """A row of the activity log's event columns (_EVENT_COLUMNS), then content and results unless
    the query leaves them out."""
    row = {
        "pk": 12,
        "id": "ev-1",
        "kind": "search",
        "entry_point": "AgentMemory.search",
        "event_at": ACTIVITY_AT,
        "caller": "support-bot",
        "caller_kind": "agent",
        "on_behalf_of": None,
        "user_id": "u1",
        "agent_id": "a1",
        "thread_id": "t1",
        "request": '{"query": "green tea", "max_results": 2}',
        "result_count": 1,
        "content_chars": 15,
        "tokens": 4,
        "duration_ms": 12.5,
        "cause": None,
        "history_ref": None,
        "content": "the sky is blue",
        "results": json.dumps([ActivityResult("m1", "fact", rank=1, status="valid").to_json()]),
    }
    if not content:
        del row["content"], row["results"]
    row.update(values)
    return row


def activity_events() -> list[ActivityEvent]:
    """A search (a ranked result and the record a link reached from it) and a write with its cause."""
    search = ActivityEvent(
        id="ev-1",
        kind="search",
        call="AgentMemory.search",
        time="2025-03-04T05:06:07.890123+00:00",
        caller="support-bot",
        scope={"user_id": "u1", "agent_id": "a1", "thread_id": "t1"},
        request={"query": "Green tea?", "max_results": 2},
        results=(
            ActivityResult("m1", "fact", rank=1, status="valid", version=3, scores={"distance": 0.25}, tokens=4),
            ActivityResult("m2", "fact", rank=1, status="invalid", version=1, hop=1, path=("m1", "supports", "m2")),
        ),
        result_count=1,
        content="likes green tea",
        content_chars=15,
        tokens=4,
        duration_ms=12.5,
    )
    write = ActivityEvent(
        id="ev-2",
        kind="write",
        call="MemoryStore.update",
        time="2025-03-04T05:06:08Z",
        caller="alice",
        caller_kind="person",
        on_behalf_of="u1",
        scope={"user_id": "u1", "agent_id": None, "thread_id": None},
        request={"operation": "update", "record_id": "m1"},
        results=(ActivityResult("m1", "fact", status="valid"),),
        result_count=1,
        duration_ms=3,
        cause={"reason": "extraction", "message_ids": ["msg-1"]},
        history_ref="change-7",
    )
    return [search, write]


@scenario("activity_append")
def _() -> list[Statement]:
    """The batch in one transaction, the big texts declared LONG; the new events' keys are read
    back by id for the rows of their records."""
    conn, store = open_store()
    conn.answer(r"SELECT a\.pk, a\.id FROM", [{"pk": 11, "id": "ev-1"}, {"pk": 12, "id": "ev-2"}])
    store.append_activity(activity_events())
    assert conn.commits == 1
    return conn.statements


@scenario("activity_append_without_results")
def _() -> list[Statement]:
    """No row of records (and no empty executemany) when no event returned or changed one."""
    conn, store = open_store()
    conn.answer(r"SELECT a\.pk, a\.id FROM", [{"pk": 11, "id": "ev-1"}])
    [search, _write] = activity_events()
    store.append_activity([replace(search, results=(), result_count=0, content="")])
    store.append_activity([])
    return conn.statements


@scenario("activity_purge")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.rowcount = 3
    assert store.purge_activity("2025-03-01T00:00:00+01:00") == 3
    return conn.statements


@scenario("activity_list")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r'FROM "OAM_ACTIVITY" a', [activity_row()])
    page = store.list_activity()
    assert [event.id for event in page] == ["ev-1"] and page.next_cursor is None
    assert page[0].time == "2025-03-04T05:06:07.890123+00:00" and page[0].results[0].record_id == "m1"
    return conn.statements


@scenario("activity_list_every_filter")
def _() -> list[Statement]:
    """Every filter at once, after a cursor, without the text and results; the q filter's LIKE
    wildcards are escaped inside its one bind."""
    conn, store = open_store()
    conn.answer(
        r'FROM "OAM_ACTIVITY" a', [activity_row(pk=9, content=False), activity_row(pk=8, id="ev-0", content=False)]
    )
    page = store.list_activity(
        kind=["search", "card", "search"],
        caller="support-bot",
        caller_kind="agent",
        user_id="u1",
        agent_id="a1",
        thread_id="t1",
        record_id="m1",
        q="50%_Off\\É",
        since="2025-03-01T00:00:00Z",
        until="2025-03-05T00:00:00+02:00",
        limit=1,
        cursor=encode_cursor("2025-03-04T05:06:08.000000+00:00", 10),
        include_content=False,
    )
    assert [event.id for event in page] == ["ev-1"]
    assert page.next_cursor == encode_cursor("2025-03-04T05:06:07.890123+00:00", 9)
    store.list_activity(kind="write", limit=None)
    return conn.statements


@scenario("activity_get")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"WHERE a\.id = :id", [activity_row()])
    event = store.get_activity("ev-1")
    assert event is not None and event.content == "the sky is blue"
    assert store.get_activity("x" * 65) is None  # longer than any id: nothing is sent
    return conn.statements


@scenario("activity_counts_filtered")
def _() -> list[Statement]:
    conn, store = open_store()
    conn.answer(r"SELECT a\.caller, a\.caller_kind, COUNT", [{"caller": "support-bot", "caller_kind": "agent", "n": 3}])
    conn.answer(r"SELECT a\.kind, COUNT", [{"kind": "search", "n": 3}])
    conn.answer(r"AS day", [{"day": "2025-03-04", "caller": "support-bot", "n": 3}])
    counts = store.activity_counts(
        kind=["search", "card"], caller_kind="agent", thread_id="t1", q="tea", since="2025-03-01T00:00:00Z"
    )
    assert counts.total == 3 and counts.by_day == [("2025-03-04", "support-bot", 3)]
    return conn.statements


def _served_rows() -> list[dict[str, Any]]:
    return [
        {"record_id": "m1", "record_type": "fact", "caller": "support-bot", "n": 2, "last_at": ACTIVITY_AT},
        {"record_id": "m1", "record_type": "fact", "caller": "other-bot", "n": 1, "last_at": CREATED},
    ]


@scenario("activity_served_records")
def _() -> list[Statement]:
    """Per record: its retrievals by each caller (an event that reached it twice counts once)."""
    conn, store = open_store()
    conn.answer(r"COUNT\(DISTINCT ar\.event_pk\)", _served_rows())
    served = store.served_records(["m1", "m2", "m1"], since="2025-03-01T00:00:00Z", caller_kind="agent")
    assert served["m1"].calls == 3 and served["m1"].last_served == "2025-03-04T05:06:07.890123+00:00"
    store.served_records(("m1",))
    assert store.served_records([]) == {}
    return conn.statements


@scenario("activity_hygiene")
def _() -> list[Statement]:
    """Most served, invalid still served, never served (a count and the oldest), the slowest calls:
    each statement binds only what it names."""
    conn, store = open_store()
    conn.answer(
        r"GROUP BY ar\.record_id ORDER BY n DESC",
        [{"record_id": "m1", "record_type": "fact", "n": 3, "last_at": ACTIVITY_AT}],
    )
    conn.answer(
        r"AS invalid_n",
        [
            {"record_id": "m1", "caller": "support-bot", "n": 2, "invalid_n": 1},
            {"record_id": "m1", "caller": "other-bot", "n": 1, "invalid_n": 0},
        ],
    )
    conn.answer(r"SELECT \(SELECT COUNT\(\*\) FROM", [{"n": 1}])
    conn.answer(
        r"SELECT r\.id, r\.record_type, r\.created_at", [{"id": "m3", "record_type": "fact", "created_at": CREATED}]
    )
    conn.answer(r"ORDER BY a\.duration_ms DESC", [activity_row(content=False)])
    hygiene = store.activity_hygiene(since="2025-03-01T00:00:00Z", limit=5, caller_kind="agent")
    assert (
        hygiene.never_served == [("m3", "fact", "2025-01-02T03:04:05.000000+00:00")] and hygiene.never_served_total == 1
    )
    assert hygiene.most_served[0].calls == 3 and [event.id for event in hygiene.slowest] == ["ev-1"]
    assert hygiene.most_served[0].by_caller == {"support-bot": 2, "other-bot": 1}
    assert hygiene.invalid_served[0].by_caller == {"support-bot": 1}
    store.activity_hygiene(since="2025-03-01T00:00:00Z")
    return conn.statements


# --- snapshot tests ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_sql_snapshot(name: str) -> None:
    """The SQL each operation sends equals its reviewed snapshot (OAM_UPDATE_SNAPSHOTS=1 rewrites them)."""
    text = render(name, SCENARIOS[name]())
    path = SNAPSHOTS / f"{name}.sql"
    if UPDATE_SNAPSHOTS:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"no snapshot {path}; run with OAM_UPDATE_SNAPSHOTS=1 and review it"
    expected = path.read_text(encoding="utf-8")
    if text != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True), text.splitlines(keepends=True), f"{name}.sql", "generated"
            )
        )
        pytest.fail(f"the SQL of {name} changed (OAM_UPDATE_SNAPSHOTS=1 to accept, after review):\n{diff}")


def test_every_snapshot_file_belongs_to_an_operation() -> None:
    files = {path.stem for path in SNAPSHOTS.glob("*.sql")}
    assert files == set(SCENARIOS), (
        f"stale: {sorted(files - set(SCENARIOS))}, missing: {sorted(set(SCENARIOS) - files)}"
    )


def test_snapshot_rendering_tracks_sql_and_binds() -> None:
    """A changed statement, bind or input size gives a different snapshot; volatile values do not."""
    base = Statement("SELECT 1 FROM dual WHERE x = :x", {"x": 1, "at": datetime(2024, 1, 1)})
    same = Statement("SELECT 1 FROM dual WHERE x = :x", {"x": 1, "at": datetime(2030, 5, 5)})
    assert render("n", [base]) == render("n", [same])
    assert render("n", [base]) != render("n", [Statement("SELECT 2 FROM dual WHERE x = :x", base.binds)])
    assert render("n", [base]) != render("n", [Statement(base.sql, {"x": 2, "at": base.binds["at"]})])
    sized = Statement(base.sql, base.binds, input_sizes={"x": oracledb.DB_TYPE_LONG})
    assert render("n", [base]) != render("n", [sized])
    assert "<uuid>" in render("n", [Statement("X", {"ids": '["4b6f5d38-1f0e-4a4e-9a55-2f2b0b3b5c11"]'})])


# --- statement hygiene over every recorded operation --------------------------------------------

# Oracle SQL reserved words (SQL Language Reference, "Oracle SQL Reserved Words"): never bind names (ORA-01745).
RESERVED = frozenset(
    re.findall(
        r"\w+",
        """ACCESS ADD ALL ALTER AND ANY AS ASC AUDIT BETWEEN BY CHAR CHECK CLUSTER COLUMN COLUMN_VALUE COMMENT
    COMPRESS CONNECT CREATE CURRENT DATE DECIMAL DEFAULT DELETE DESC DISTINCT DROP ELSE EXCLUSIVE EXISTS FILE
    FLOAT FOR FROM GRANT GROUP HAVING IDENTIFIED IMMEDIATE IN INCREMENT INDEX INITIAL INSERT INTEGER INTERSECT
    INTO IS LEVEL LIKE LOCK LONG MAXEXTENTS MINUS MLSLABEL MODE MODIFY NESTED_TABLE_ID NOAUDIT NOCOMPRESS NOT
    NOWAIT NULL NUMBER OF OFFLINE ON ONLINE OPTION OR ORDER PCTFREE PRIOR PRIVILEGES PUBLIC RAW RENAME RESOURCE
    REVOKE ROW ROWID ROWNUM ROWS SELECT SESSION SET SHARE SIZE SMALLINT START SUCCESSFUL SYNONYM SYSDATE TABLE
    THEN TO TRIGGER UID UNION UNIQUE UPDATE USER VALIDATE VALUES VARCHAR VARCHAR2 VIEW WHENEVER WHERE WITH""",
    )
)

_LITERALS = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"")
_PLACEHOLDER = re.compile(r"(?<![:\w]):([A-Za-z_][A-Za-z0-9_$#]*)")


def placeholders(sql: str) -> set[str]:
    """The bind names of a statement (outside string literals and quoted identifiers), lower case."""
    return {name.lower() for name in _PLACEHOLDER.findall(_LITERALS.sub(" ", sql))}


@pytest.fixture(scope="module")
def recorded() -> dict[str, list[Statement]]:
    return {name: run() for name, run in SCENARIOS.items()}


def test_binds_match_placeholders_exactly(recorded) -> None:
    """python-oracledb refuses a bind the SQL does not name (DPY-4008); Oracle refuses a missing one (ORA-01008)."""
    for name, statements in recorded.items():
        for statement in statements:
            names = placeholders(statement.sql)
            for binds in statement.binds if statement.many else [statement.binds]:
                assert {key.lower() for key in binds} == names, (name, statement.sql)
            assert set(statement.input_sizes) <= names, (name, statement.sql)


def test_bind_names_are_not_reserved_words(recorded) -> None:
    used = {bind for statements in recorded.values() for s in statements for bind in placeholders(s.sql)}
    assert used, "no binds recorded"
    assert not {bind.upper() for bind in used} & RESERVED


def test_dml_and_queries_have_no_comments_terminators_or_non_ascii(recorded) -> None:
    """Only DDL spans lines; no statement carries ';', '--', '/*' or characters outside ASCII, but for
    the one optimizer hint the store writes (vector_index_transform)."""
    for name, statements in recorded.items():
        for statement in statements:
            sql = re.sub(r"^SELECT /\*\+ VECTOR_INDEX_TRANSFORM\(r\) \*/ ", "SELECT ", statement.sql)
            assert sql.isascii() and ";" not in sql and "--" not in sql and "/*" not in sql, (name, sql)
            if not sql.startswith(("CREATE ", "DROP ")):
                assert "\n" not in sql, (name, sql)


def test_every_query_fetches_lobs_as_values(recorded) -> None:
    """CLOB/BLOB columns come back as str/bytes: each SELECT runs with fetch_lobs=False."""
    queries = [s for statements in recorded.values() for s in statements if s.sql.startswith(("SELECT", "WITH"))]
    assert queries
    for statement in queries:
        if "VECTOR_EMBEDDING" in statement.sql:
            continue  # the embedder reads vectors only
        assert statement.options.get("fetch_lobs") is False, statement.sql


def _declared_type(statement: Statement, name: str, value: Any) -> Any:
    """The database type a bind is sent as: its input size, else what an input type handler makes of it."""
    if name in statement.input_sizes:
        return statement.input_sizes[name]
    if statement.input_type_handler is not None:
        var = statement.input_type_handler(_VarMaker(), value, 1)
        if var is not None:
            return var.type
    return None  # python-oracledb infers it from the value: a datetime goes as DB_TYPE_DATE


class _VarMaker:
    def var(self, typ: Any, *args: Any, **kwargs: Any) -> Any:
        return type("Var", (), {"type": typ})()


def test_time_binds_keep_their_fractional_seconds(recorded) -> None:
    checked = 0
    for statements in recorded.values():
        for statement in statements:
            for binds in statement.binds if statement.many else [statement.binds]:
                for name, value in binds.items():
                    if isinstance(value, datetime):
                        checked += 1
                        assert _declared_type(statement, name, value) is oracledb.DB_TYPE_TIMESTAMP, (
                            name,
                            statement.sql,
                        )
    assert checked


def test_the_same_operation_records_the_same_sql_twice() -> None:
    """Snapshots are deterministic apart from the normalised values."""
    for name in ("add_messages_in_thread", "search_hybrid", "list_metadata_filter", "add_relations"):
        assert render(name, SCENARIOS[name]()) == render(name, SCENARIOS[name]())


# --- hostile input -------------------------------------------------------------------------------

DANGER = "'\"--);$@;\n/*ü🙂中文*/"
"""Quotes, a comment opener, a closing parenthesis, JSON-path sigils, a terminator, a newline, unicode."""


ID_TAGS = {"uid", "aid", "tid", "mid", "role", "rel", "label"}


def hostile(tag: str) -> str:
    """A value full of SQL's special characters; ids, roles and labels without the line break the
    engine's id rule refuses (texts, metadata and keys keep it)."""
    danger = DANGER.replace("\n", "") if tag in ID_TAGS else DANGER
    return f"{tag}{danger}{tag}"


UNSAFE_KEYS = [
    "it's",
    'say"hi',
    "$key",
    "a$b",
    "@key",
    "a@b",
    "has space",
    "line\nbreak",
    "trailing\n",
    "a--b",
    "a;b",
    "a)b",
    "a/*b",
    "ü",
    "🙂",
    "中文",
    "",
    " lead",
    "-lead",
    "trail-",
    "a.b",
    "a[0]",
    "k" * 129,
]


def _strings(value: Any) -> set[str]:
    """Every string inside a bind value, JSON texts decoded too."""
    found: set[str] = set()
    if isinstance(value, str):
        found.add(value)
        try:
            decoded = json.loads(value)
        except ValueError:
            return found
        if not isinstance(decoded, str):
            found |= _strings(decoded)
    elif isinstance(value, dict):
        for key, item in value.items():
            found |= _strings(key) | _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            found |= _strings(item)
    return found


def assert_only_in_binds(statements: list[Statement], values: dict[str, str]) -> None:
    """No hostile value, nor any fragment of one, in the SQL text; each of them in some bind
    (else the test did not exercise it)."""
    bound: set[str] = set()
    for statement in statements:
        sql = statement.sql
        for value in values.values():
            assert value not in sql, (value, sql)
        for fragment in ("ü", "🙂", "中文", "--", "/*", ";", "\n"):
            assert fragment not in sql, (fragment, sql)
        bound |= _strings(statement.binds)
    missing = [tag for tag, value in values.items() if not any(value in text for text in bound)]
    assert not missing, f"these values never reached a bind, so the test did not exercise them: {missing}"


def test_hostile_values_travel_only_as_binds() -> None:
    conn, store = open_store()
    h = {tag: hostile(tag) for tag in ("uid", "aid", "tid", "mid", "role", "text", "meta", "key", "rel", "label")}
    conn.answer(r"SELECT next_seq_no", [{"next_seq_no": 1}])
    conn.answer(r"FROM user_indexes", [{"n": 1}])
    conn.answer(r"FOR UPDATE", [live_row(thread_id=h["tid"])])
    conn.answer(r"SELECT r\.record_type, r\.thread_id FROM", [{"record_type": "fact", "thread_id": h["tid"]}])
    conn.answer(
        r'FROM "OAM_RELATIONS" rel WHERE rel\.id = :id',
        [relation_row(id=h["rel"], source_id=h["mid"] + "1", target_id=h["mid"] + "2")],
    )
    conn.answer(r"SELECT count\(\*\) AS n FROM", [{"n": 2}])

    store.add(
        [h["text"]],
        "message",
        record_ids=[h["mid"]],
        thread_ids=h["tid"],
        user_ids=h["uid"],
        agent_ids=h["aid"],
        roles=h["role"],
        metadata={"note": h["meta"], "tags": [h["meta"]], h["key"]: h["meta"]},
    )
    store.add(
        [h["text"] + "1", h["text"] + "2"],
        "fact",
        record_ids=[h["mid"] + "1", h["mid"] + "2"],
        thread_ids=h["tid"],
        user_ids=h["uid"],
    )
    store.add_user(h["uid"], h["text"], {h["key"]: h["meta"]})
    store.get("message", h["mid"])
    filter_ = {"note": h["meta"], "tags": {"$array_contains": h["meta"]}, "nested": {"deep": {"$not": h["meta"]}}}
    store.list(
        "message",
        thread_id=h["tid"],
        user_id=h["uid"],
        agent_id=h["aid"],
        record_id=[h["mid"]],
        metadata_filter=filter_,
    )
    store.update("message", h["mid"], text=h["text"], metadata={"note": h["meta"]})
    store.search(
        h["text"] + " morning",
        user_id=h["uid"],
        exact_user_match=True,
        thread_id=h["tid"],
        exact_thread_match=True,
        metadata_filter=filter_,
    )
    store.add_relations(
        [
            {
                "source_record_id": h["mid"] + "1",
                "source_record_type": "fact",
                "target_record_id": h["mid"] + "2",
                "target_record_type": "fact",
                "relation_type": h["label"],
                "opposite_relation_type": h["label"] + "-back",
                "id": h["rel"],
                "metadata": {h["key"]: h["meta"]},
            }
        ],
        thread_id=h["tid"],
    )
    store.list_relations(record_id=h["mid"] + "1", thread_id=h["tid"])
    store.lifecycle([h["mid"] + "1", h["mid"] + "2"])
    store.memory_vectors([h["mid"] + "1", h["mid"] + "2"])
    store.memory_graph(user_id=h["uid"], relation_types=[h["label"]], hops=2)
    store.memory_graph(memory_id=h["mid"] + "1")
    store.find_duplicates(h["uid"])
    store.update_relations(h["rel"], relation_type=h["label"] + "2", thread_id=h["tid"])
    store.delete_relations(h["rel"], thread_id=h["tid"])
    store.save_thread(h["tid"] + "x", h["uid"], h["aid"], {"k": h["meta"]}, {"s": h["meta"]})
    store.list_threads(user_id=h["uid"], agent_id=h["aid"], metadata_filter={"k": h["meta"]})
    store.save_thread_summary(h["tid"], h["text"], [h["meta"]])
    store.save_thread_state(h["tid"], h["key"], {h["key"]: h["meta"]})
    store.list_thread_messages(h["tid"])
    store.delete("message", h["mid"])
    store.delete_thread(h["tid"])
    store.delete_user(h["uid"])

    assert len(conn.statements) > 40
    assert_only_in_binds(conn.statements, h)
    for statement in conn.statements:
        for tag in ("uid", "tid", "mid"):  # as words: Oracle's own names may hold them (domidx_opstatus)
            assert not re.search(rf"\b{tag}\b", statement.sql), (tag, statement.sql)


def test_hostile_activity_values_travel_only_as_binds() -> None:
    """The activity log's callers, event ids, scope values, record ids, queries and texts reach
    binds only, when events are written and when the log is filtered, counted and reported on."""
    conn, store = open_store()
    h = {tag: hostile(tag) for tag in ("uid", "aid", "tid", "mid", "text", "meta")}
    h["caller"] = f"caller{DANGER.replace(chr(10), '')}caller"
    h["event"] = f"ev{DANGER.replace(chr(10), '')}ev"
    conn.answer(r"SELECT a\.pk, a\.id FROM", [{"pk": 1, "id": h["event"]}])
    conn.answer(r"SELECT COUNT\(\*\) AS n FROM", [{"n": 0}])
    conn.answer(r"SELECT \(SELECT COUNT\(\*\) FROM", [{"n": 0}])
    [search, _write] = activity_events()
    hostile_search = replace(
        search,
        id=h["event"],
        caller=h["caller"],
        on_behalf_of=h["uid"],
        scope={"user_id": h["uid"], "agent_id": h["aid"], "thread_id": h["tid"]},
        request={"query": h["text"], h["meta"]: h["meta"]},
        results=(ActivityResult(h["mid"], "fact", rank=1, status="valid", path=(h["mid"],)),),
        content=h["text"],
        cause={"reason": h["meta"]},
        history_ref=h["meta"],
    )
    store.append_activity([hostile_search])
    filters = {
        "caller": h["caller"],
        "user_id": h["uid"],
        "agent_id": h["aid"],
        "thread_id": h["tid"],
        "record_id": h["mid"],
        "q": h["text"],
    }
    store.list_activity(kind="search", caller_kind="agent", include_content=False, **filters)
    store.get_activity(h["event"])
    store.activity_counts(**filters)
    store.served_records([h["mid"], h["mid"] + "2"], since="2025-01-01T00:00:00Z")
    store.activity_hygiene(since="2025-01-01T00:00:00Z", caller_kind="person")
    store.purge_activity("2025-01-01T00:00:00Z")

    assert len(conn.statements) > 10
    assert_only_in_binds(conn.statements, h)


@pytest.mark.parametrize(
    "filters",
    [
        {"kind": "search' OR 1=1 --"},
        {"kind": ["search", "x) OR (1=1"]},
        {"caller_kind": "agent' --"},
        {"caller": "a\nb"},
        {"record_id": ""},
        {"q": 5},
        {"since": "2025-01-01'; DROP TABLE x"},
        {"until": "yesterday"},
    ],
    ids=repr,
)
def test_bad_activity_filters_are_refused_before_anything_is_sent(filters: dict[str, Any]) -> None:
    conn, store = open_store()
    for call in (store.list_activity, store.activity_counts):
        with pytest.raises(ValueError):
            call(**filters)
    assert conn.statements == []


@pytest.mark.parametrize("key", UNSAFE_KEYS, ids=repr)
def test_unsafe_metadata_keys_are_refused_before_anything_is_sent(key: str) -> None:
    conn, store = open_store()
    conn.answer(r"FROM user_indexes", [{"n": 1}])
    calls = {
        "list": lambda f: store.list("fact", metadata_filter=f),
        "list_threads": lambda f: store.list_threads(metadata_filter=f),
        "search_text": lambda f: store.search("morning tea", metadata_filter=f),
        "search_vector": lambda f: store.search(query_vector=vector(1.0), metadata_filter=f),
        "search_graph": lambda f: store.search(query_vector=vector(1.0), metadata_filter=f, num_hops=1),
    }
    for name, call in calls.items():
        for filter_ in ({key: 1}, {"ok": {key: "x"}}, {"ok": {"$not": {key: "x"}}}):
            with pytest.raises(ValueError):
                call(filter_)
            assert conn.statements == [], (name, filter_)
    assert conn.commits == 0


def test_safe_metadata_keys_are_quoted_path_steps() -> None:
    conn, store = open_store()
    store.list("fact", metadata_filter={"source-type_2": "x", "_private": {"Inner-Key": 1}})
    [statement] = conn.statements
    assert """'$."source-type_2"'""" in statement.sql
    assert """'$."_private"'""" in statement.sql and """'$."Inner-Key"'""" in statement.sql
    assert set(statement.binds.values()) >= {'"x"', "1"}  # values travel as JSON text


@pytest.mark.parametrize(
    "prefix",
    ["a'b", 'a"b', "a--", "a;b", "a)b", "a$b", "a@b", "a b", "a\nb", "a/*", "ü", "中文", "1abc", "_a", "a" * 31, "a-b"],
    ids=repr,
)
def test_hostile_table_prefix_is_refused_before_anything_is_sent(prefix: str) -> None:
    conn = RecordingConnection()
    with pytest.raises(ValueError, match="table_name_prefix"):
        OracleDBMemoryStore(
            HashingEmbedder(DIM), conn, schema_policy=SchemaPolicy.CREATE_IF_NECESSARY, table_name_prefix=prefix
        )
    assert conn.statements == []


@pytest.mark.parametrize("model", ["m'x", 'm"x', "m x", "m;x", "m--x", "m)x", "ü", "a.b.c", "", "1m"], ids=repr)
def test_hostile_embedding_model_names_are_refused(model: str) -> None:
    conn = RecordingConnection()
    with pytest.raises(ValueError):
        OracleInDatabaseEmbedder(conn, model, DIM)
    assert conn.statements == []


def test_keyword_queries_hold_only_escaped_words() -> None:
    """Oracle Text operators cannot come from a query: each word is braced and joined with ACCUM."""
    query = keyword_query("NEAR(a, b) OR x AND y -- {z} $stem ?fuzzy %wild ü 中文")
    assert query is not None
    for term in query.split(" ACCUM "):
        assert re.fullmatch(r"\{\w+\}", term), term
    assert keyword_query("'\"--);$@/*") is None


# --- behaviour through the double ------------------------------------------------------------------


def _insert(conn: RecordingConnection) -> list[Statement]:
    return [s for s in conn.statements if s.sql.startswith('INSERT INTO "OAM_RECORDS"')]


def test_empty_strings_and_none_are_told_apart_by_flags() -> None:
    conn, store = open_store()
    conn.answer(r"SELECT next_seq_no", [{"next_seq_no": 3}])
    store.add(["a", "", "c"], "message", thread_ids="t1", index_texts=[None, "", "x"], roles=["user", "", None])
    [insert] = _insert(conn)
    rows = insert.binds
    assert [(r["index_text"], r["index_text_empty"]) for r in rows] == [(None, 0), (None, 1), ("x", 0)]
    assert [(r["role"], r["role_empty"]) for r in rows] == [("user", 0), (None, 1), (None, 0)]
    assert [r["content"] for r in rows] == ["a", None, "c"]  # Oracle stores '' as NULL: bind None
    assert [r["search_text"] for r in rows] == ["a", None, "x"]
    assert [r["seq_no"] for r in rows] == [0, 1, 2]
    assert rows[1]["embedding"] is None  # nothing to embed for an explicitly empty index text


def test_stored_flags_read_back_as_empty_strings() -> None:
    conn, store = open_store()
    conn.answer(
        r"SELECT r\.pk, r\.id, r\.kind",
        [record_row(kind="message", record_type="message", content=None, role=None, role_empty=1, seq_no=4)],
    )
    record = store.get("message", "m1")
    assert record.content == "" and record.role == "" and record.seq_no == 4


def test_vectors_are_float32_arrays_declared_as_vectors() -> None:
    conn, store = open_store()
    store.add(["one", "two"], "memory")
    [insert] = _insert(conn)
    assert insert.input_sizes["embedding"] is oracledb.DB_TYPE_VECTOR
    for key in ("content", "index_text", "search_text"):
        assert insert.input_sizes[key] is oracledb.DB_TYPE_LONG
    for row in insert.binds:
        assert isinstance(row["embedding"], array.array) and row["embedding"].typecode == "f"
        assert len(row["embedding"]) == DIM
        assert abs(sum(v * v for v in row["embedding"]) - 1.0) < 1e-5  # unit length for cosine


def test_query_vectors_are_float32_arrays() -> None:
    conn, store = open_store(search_strategy="vector")
    store.search(query_vector=vector(3.0, 4.0), k=1)
    [query] = [s for s in conn.statements if "VECTOR_DISTANCE" in s.sql]
    bound = query.binds["query_vector"]
    assert isinstance(bound, array.array) and bound.typecode == "f" and list(bound)[:2] == pytest.approx([0.6, 0.8])


def test_executemany_runs_in_batches_of_batch_size() -> None:
    conn, store = open_store()
    ids = store.add([f"m{i}" for i in range(7)], "memory", batch_size=3)
    batches = _insert(conn)
    assert [len(b.binds) for b in batches] == [3, 3, 1] and all(b.many for b in batches)
    assert [row["id"] for b in batches for row in b.binds] == ids
    assert batches[0].input_sizes  # declared before the first batch (DPY-3013 when a batch is all None)
    assert conn.commits == 1 and conn.rollbacks == 0


def test_a_failing_statement_rolls_back_and_commits_nothing() -> None:
    conn, store = open_store()
    conn.answer(r"SELECT next_seq_no", [{"next_seq_no": 2}])
    conn.fail(r'^INSERT INTO "OAM_RECORDS"', ora_error(1400, "ORA-01400: cannot insert NULL"))
    with pytest.raises(oracledb.DatabaseError):
        store.add(["a", "b"], "message", thread_ids="t1")
    assert conn.rollbacks == 1 and conn.commits == 0
    assert conn.statements[-1].sql.startswith('INSERT INTO "OAM_RECORDS"')  # nothing ran after it


def test_a_python_error_inside_a_write_rolls_back_too() -> None:
    conn, store = open_store()
    conn.answer(r"SELECT next_seq_no", [{"next_seq_no": 1}])
    conn.answer(r"SELECT id, pk FROM", [])  # the inserted image rows are not found
    with pytest.raises(KeyError):
        store.add(["x"], "image", record_ids=["img-1"], images=[IMAGE])
    assert conn.rollbacks == 1 and conn.commits == 0


def test_name_already_used_during_create_is_tolerated() -> None:
    conn = RecordingConnection()
    conn.fail(r'CREATE INDEX IF NOT EXISTS "OAM_THREADS_USER"', ora_error(955))
    conn.fail(r"CREATE VECTOR INDEX", ora_error(955))
    _, store = open_store(conn, clear=False, vector_index=True)
    sqls = [s.sql for s in conn.statements]
    failed = sqls.index('CREATE INDEX IF NOT EXISTS "OAM_THREADS_USER" ON "OAM_THREADS" (user_id)')
    assert sqls[failed + 1].startswith('CREATE INDEX IF NOT EXISTS "OAM_THREADS_AGENT"')  # went on
    assert any(sql.startswith('MERGE INTO "OAM_META"') for sql in sqls)
    assert conn.commits == 1 and conn.rollbacks == 0
    assert store.vector_index


def test_other_ddl_errors_propagate_and_roll_back() -> None:
    conn = RecordingConnection()
    conn.fail(r'CREATE TABLE IF NOT EXISTS "OAM_RECORDS"', ora_error(1031, "ORA-01031: insufficient privileges"))
    with pytest.raises(oracledb.DatabaseError):
        open_store(conn, clear=False)
    assert conn.rollbacks == 1 and conn.commits == 0
    assert not any(s.sql.startswith("MERGE") for s in conn.statements)


def test_a_text_index_that_cannot_be_built_is_a_warning(caplog) -> None:
    conn = RecordingConnection()
    conn.fail(r"CTXSYS\.CONTEXT", ora_error(29855, "ORA-29855: error occurred in the execution of ODCIINDEXCREATE"))
    with caplog.at_level(logging.WARNING, logger="memory.engine.stores.oracle"):
        open_store(conn, clear=False)
    assert "no keyword index" in caplog.text
    assert conn.commits == 1 and conn.rollbacks == 0


def test_hybrid_search_without_text_index_ranks_by_vectors_and_warns_once(caplog) -> None:
    conn, store = open_store()
    conn.answer(r"FROM user_indexes", [{"n": 0}])
    with caplog.at_level(logging.WARNING, logger="memory.engine.stores.oracle"):
        store.search("morning tea")
        store.search("evening tea")
    sqls = [s.sql for s in conn.statements]
    assert sum("FROM user_indexes" in sql for sql in sqls) == 1  # checked once per store
    assert not any("CONTAINS(" in sql for sql in sqls)
    assert sum("VECTOR_DISTANCE" in sql for sql in sqls) == 2
    assert caplog.text.count("no keyword index") == 1
    assert [s.binds["name"] for s in conn.statements if "user_indexes" in s.sql] == ["OAM_RECORDS_TEXT"]


def test_a_failed_text_index_is_a_warning_and_hybrid_search_ranks_by_vectors(caplog) -> None:
    """An Oracle Text index left FAILED (USER_INDEXES.DOMIDX_OPSTATUS) would make CONTAINS raise."""
    conn, store = open_store()
    conn.answer(r"FROM user_indexes", [{"n": 1, "failed": 1}])
    with caplog.at_level(logging.WARNING):
        hits = store.search("morning tea")
        store.search("evening tea")
    sqls = [s.sql for s in conn.statements]
    assert not any("CONTAINS(" in sql for sql in sqls)
    assert sum("VECTOR_DISTANCE" in sql for sql in sqls) == 2
    assert caplog.text.count("OAM_RECORDS_TEXT is in the FAILED state") == 1
    assert "ALTER INDEX" in caplog.text
    assert isinstance(hits, list)


def test_hybrid_search_with_text_index_ranks_by_both() -> None:
    conn, store = open_store()
    conn.answer(r"FROM user_indexes", [{"n": 1}])
    store.search("Morning TEA, morning!")
    [keyword] = [s for s in conn.statements if "CONTAINS(" in s.sql]
    assert keyword.binds["keywords"] == "{morning} ACCUM {tea}"
    assert any("VECTOR_DISTANCE" in s.sql for s in conn.statements)


def test_a_raw_connection_is_one_session_used_one_call_at_a_time() -> None:
    conn, store = open_store()
    conn.delay = 0.01
    # the probe works: unsynchronised statements on the same connection do overlap
    _run_together(lambda: conn.cursor().execute("SELECT 1 FROM dual"), 4)
    assert conn.max_active > 1
    conn.max_active = 0
    _run_together(lambda: store.get("fact", "m1"), 4)
    _run_together(lambda: store.list("fact"), 4)
    assert conn.max_active == 1
    store.close()
    assert conn.closed


def test_a_pool_is_used_through_acquire_and_release() -> None:
    conn = RecordingConnection()
    pool = RecordingPool(conn)
    managed_schema(conn, list(OracleSchema("", DIM).names.values()), DIM, HashingEmbedder(DIM).name)
    store = OracleDBMemoryStore(HashingEmbedder(DIM), pool, schema_policy=SchemaPolicy.CREATE_IF_NECESSARY)
    assert pool.acquired == 2 and pool.busy == 0  # the schema transaction, then the schema check
    assert conn.commits == 1
    conn.delay = 0.02
    before = pool.acquired
    _run_together(lambda: store.get("fact", "m1"), 4)
    assert pool.acquired - before == 4 and pool.busy == 0
    assert conn.max_active > 1  # a pool serves concurrent callers: no store-wide lock
    conn.delay = 0
    conn.fail(r"^UPDATE", ora_error(54, "ORA-00054: resource busy"))
    with pytest.raises(oracledb.DatabaseError):
        store.save_thread_summary("t1", "s")
    assert pool.busy == 0 and conn.rollbacks == 1  # released after an error too
    store.close()
    assert pool.closed


def test_the_in_database_embedder_uses_a_pool_through_acquire_and_release() -> None:
    conn = RecordingConnection()
    conn.answer(r"VECTOR_EMBEDDING", [{"n": 1, "embedding": array.array("f", vector(1.0))}])
    pool = RecordingPool(conn)
    embedder = OracleInDatabaseEmbedder(pool, "schema1.doc_model", DIM)
    assert embedder.embed(["text"]).shape == (1, DIM)
    assert embedder.embed([]).shape == (0, DIM)
    assert pool.acquired == 1 and pool.busy == 0
    [statement] = conn.statements
    assert 'VECTOR_EMBEDDING("SCHEMA1"."DOC_MODEL" USING jt.t AS data)' in statement.sql
    assert json.loads(statement.binds["texts"]) == ["text"]


def _run_together(call: Callable[[], Any], count: int) -> None:
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            barrier.wait()
            call()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


@pytest.fixture
def fake_create_pool(monkeypatch):
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(oracledb, "create_pool", lambda **kwargs: calls.append(kwargs) or "pool")
    monkeypatch.delenv("OAM_ORACLE_PASSWORD", raising=False)
    return calls


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("oracle://scott:tiger@db.example.com:1521/FREEPDB1", "password"),
        ("oracle://scott:@db.example.com/FREEPDB1", "password"),
        ("postgres://scott@db.example.com/FREEPDB1", "oracle://"),
        ("oracle://db.example.com/FREEPDB1", "oracle://"),
        ("oracle://scott@/FREEPDB1", "oracle://"),
        ("oracle://scott@db.example.com", "oracle://"),
        ("oracle://scott@db.example.com/", "oracle://"),
    ],
)
def test_open_pool_refuses_bad_urls_without_connecting(fake_create_pool, url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        open_pool(url, password="secret")
    assert fake_create_pool == []


def test_open_pool_needs_a_password_and_valid_sizes(fake_create_pool, monkeypatch) -> None:
    with pytest.raises(ValueError, match="password"):
        open_pool("oracle://scott@db.example.com/FREEPDB1")
    with pytest.raises(ValueError, match="password"):
        open_pool("oracle://scott@db.example.com/FREEPDB1", password="")
    with pytest.raises(ValueError, match="pool_min"):
        open_pool("oracle://scott@db.example.com/FREEPDB1", password="x", pool_min=5, pool_max=2)
    assert fake_create_pool == []
    monkeypatch.setenv("OAM_ORACLE_PASSWORD", "from-env")
    assert open_pool("oracle://sc%40ott@db.example.com/FREEPDB1") == "pool"
    assert open_pool("oracle://scott@db.example.com:1522/svc.example", password="given", pool_max=8) == "pool"
    first, second = fake_create_pool
    assert first == {
        "user": "sc@ott",
        "password": "from-env",
        "host": "db.example.com",
        "port": 1521,
        "service_name": "FREEPDB1",
        "min": 1,
        "max": 4,
        "increment": 1,
    }
    assert (second["password"], second["port"], second["service_name"], second["max"]) == (
        "given",
        1522,
        "svc.example",
        8,
    )


def test_schema_checks_refuse_a_mismatched_store() -> None:
    conn = RecordingConnection()
    managed_schema(conn, list(OracleSchema("", DIM).names.values()), DIM + 8, "hashing-16")
    with pytest.raises(EmbedderMismatchError, match="dimensional"):
        OracleDBMemoryStore(HashingEmbedder(DIM), conn, schema_policy=SchemaPolicy.REQUIRE_EXISTING)
    empty = RecordingConnection()
    with pytest.raises(SchemaError):
        OracleDBMemoryStore(HashingEmbedder(DIM), empty, schema_policy=SchemaPolicy.REQUIRE_EXISTING)
    assert not any(s.sql.startswith("CREATE") for s in empty.statements)


def test_no_check_sends_nothing() -> None:
    conn = RecordingConnection()
    OracleDBMemoryStore(HashingEmbedder(DIM), conn, schema_policy=SchemaPolicy.NO_CHECK)
    assert conn.statements == []


# --- re-embedding: beyond the snapshots ---------------------------------------------------------


def test_reembed_stages_new_vectors_as_float32_vectors_of_the_new_dimension() -> None:
    conn, store = open_store()
    script_reembed(conn, [{"EMBEDDING"}, {"EMBEDDING", "EMBEDDING_NEXT"}, {"EMBEDDING", "EMBEDDING_PREV"}])
    store.reembed(HashingEmbedder(NEW_DIM))
    [staged] = [s for s in conn.statements if s.many and "OAM_REEMBED" in s.sql]
    assert staged.input_sizes == {"embedding": oracledb.DB_TYPE_VECTOR}
    assert [len(row["embedding"]) for row in staged.binds] == [NEW_DIM, NEW_DIM]
    assert all(row["embedding"].typecode == "f" for row in staged.binds)
    ddl = [s.sql for s in conn.statements if s.sql.startswith(("CREATE TABLE", "ALTER TABLE"))]
    assert f"VECTOR({NEW_DIM}, FLOAT32)" in ddl[0] and f"VECTOR({NEW_DIM}, FLOAT32)" in ddl[1]


def test_the_old_vector_column_is_renamed_only_after_the_new_one_is_filled_and_committed() -> None:
    conn, store = open_store()
    script_reembed(conn, [{"EMBEDDING"}, {"EMBEDDING", "EMBEDDING_NEXT"}, {"EMBEDDING", "EMBEDDING_PREV"}])
    commits = []
    record = conn.record

    def noting_commits(statement: Statement) -> None:
        commits.append((statement.sql, conn.commits))
        record(statement)

    conn.record = noting_commits
    store.reembed(HashingEmbedder(NEW_DIM))
    fill = next(i for i, (sql, _) in enumerate(commits) if sql.startswith(f'UPDATE "{store._names["records"]}"'))
    rename = next(i for i, (sql, _) in enumerate(commits) if "RENAME COLUMN embedding TO" in sql)
    assert fill < rename and commits[rename][1] > commits[fill][1]


def test_a_failing_embedder_sends_no_ddl_on_the_records_table() -> None:
    class Failing(HashingEmbedder):
        def embed(self, texts):
            raise RuntimeError("embedding server unreachable")

    conn, store = open_store()
    script_reembed(conn, [{"EMBEDDING"}])
    with pytest.raises(RuntimeError, match="unreachable"):
        store.reembed(Failing(NEW_DIM))
    assert not [s for s in conn.statements if s.sql.startswith(f'ALTER TABLE "{store._names["records"]}"')]
    assert store.vector_dim == DIM


def test_a_swap_cut_short_for_another_embedder_must_be_finished_first() -> None:
    conn, store = open_store()
    phase = {"reembed_phase": "filled", "reembed_target": json.dumps({"embedder": "hashing-32", "vector_dim": 32})}
    script_reembed(conn, [{"EMBEDDING_NEXT", "EMBEDDING_PREV"}], phase)
    with pytest.raises(RuntimeError, match="'hashing-32' stopped during its swap"):
        store.reembed(HashingEmbedder(NEW_DIM))
    assert not [s for s in conn.statements if "RENAME" in s.sql]
