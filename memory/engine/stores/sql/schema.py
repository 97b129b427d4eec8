"""The SQL store's managed schema: policy, DDL, meta table, keyword index."""

from __future__ import annotations

import uuid
from typing import Any

from ...types import SchemaPolicy
from ..base import EmbedderMismatchError, SchemaError
from .common import SCHEMA_VERSION, _ids_json, log


class SchemaMixin:
    """SQLMemoryStore's schema: the schema policy, DDL, the meta table and the keyword index."""

    # --- schema -----------------------------------------------------------------------------

    def schema_sql(self) -> list[str]:
        """The DDL of the managed schema, in creation order."""
        return self.schema.create_sql()

    def _existing_tables(self, cursor: Any) -> set[str]:
        rows = self._fetch(
            self.dialect.tables_sql("names"),
            {"names": _ids_json(self._names.values())},
            cursor,
        )
        return {row["table_name"] for row in rows}

    def _apply_schema_policy(self) -> None:
        policy = self.schema_policy
        if policy is SchemaPolicy.NO_CHECK:
            return
        with self._write(schema=True) as cursor:
            existing = self._existing_tables(cursor)
            create = policy in (SchemaPolicy.RECREATE, SchemaPolicy.CREATE_IF_NECESSARY) or (
                policy is SchemaPolicy.CREATE_IF_EMPTY and not existing
            )
            if policy is SchemaPolicy.RECREATE:
                for statement in self.schema.drop_sql():
                    cursor.execute(statement)
            elif policy is SchemaPolicy.CREATE_IF_NECESSARY:
                self.schema.upgrade(cursor)  # an earlier layout, rebuilt in place
            if create:
                for statement in self.schema_sql():
                    self._run_ddl(cursor, statement)
                for key, value in (
                    ("schema_version", SCHEMA_VERSION),
                    ("vector_dim", self.vector_dim),
                    ("embedder", self.embedder.name),
                    ("store_id", str(uuid.uuid4())),  # tells an index generation which store it belongs to
                ):
                    self._merge_meta(cursor, key, str(value))
                # Versions 1 (Oracle's) to 5 are this layout less what creation just added (the
                # change log) and the versions, which columns with a default add to existing rows.
                if int(self._meta_value(cursor, "schema_version") or SCHEMA_VERSION) < SCHEMA_VERSION:
                    for statement in self.schema.upgrade_sql(cursor):
                        self._run_ddl(cursor, statement)
                    self._set_meta(cursor, "schema_version", str(SCHEMA_VERSION))
        self._check_schema()

    def _run_ddl(self, cursor: Any, statement: str) -> None:
        """Run one DDL statement; another process creating the same object at once is fine.

        A keyword index that cannot be built (Oracle without Oracle Text, as in slim images) is
        a notice: hybrid search then runs vector-only.
        """
        try:
            cursor.execute(statement)
        except Exception as exc:
            if self.dialect.is_name_in_use(exc):
                return
            if statement == self.schema.text_index_sql():
                log.warning("no keyword index (%s); hybrid search will rank by vectors only", exc)
                return
            raise

    def _merge_meta(self, cursor: Any, key: str, value: str) -> None:
        try:
            cursor.execute(
                self.dialect.insert_if_absent(
                    self._meta, ["meta_key"], {"meta_key": ":meta_key", "meta_value": ":meta_value"}
                ),
                {"meta_key": key, "meta_value": value},
            )
        except Exception as exc:
            if not self.dialect.is_unique_violation(exc):  # another process wrote it first: keep theirs
                raise

    def _meta_value(self, cursor: Any, key: str) -> str | None:
        rows = self._fetch(f"SELECT meta_value FROM {self._meta} WHERE meta_key = :meta_key", {"meta_key": key}, cursor)
        return rows[0]["meta_value"] if rows else None

    def _set_meta(self, cursor: Any, key: str, value: str) -> None:
        cursor.execute(
            self.dialect.upsert(
                self._meta, ["meta_key"], {"meta_key": ":meta_key", "meta_value": ":meta_value"}, ["meta_value"]
            ),
            {"meta_key": key, "meta_value": value},
        )

    def _check_schema(self) -> None:
        with self._read() as cursor:
            legacy = self.schema.legacy_version(cursor)
            missing = set(self._names.values()) - self._existing_tables(cursor)
            meta = {}
            if legacy is None and self._names["meta"] not in missing:
                meta = {
                    row["meta_key"]: row["meta_value"]
                    for row in self._fetch(f"SELECT meta_key, meta_value FROM {self._meta}", None, cursor)
                }
            self.dialect.connected(cursor)
        version = legacy if legacy is not None else int(meta.get("schema_version") or 0)
        if version and version != SCHEMA_VERSION:
            raise SchemaError(
                f"the memory schema{self._where()} is version {version}; this engine needs {SCHEMA_VERSION}"
                + (
                    " (open it once with schema_policy=SchemaPolicy.CREATE_IF_NECESSARY to upgrade it)"
                    if version < SCHEMA_VERSION
                    else ""
                )
            )
        if missing:
            raise SchemaError(
                f"the memory schema{self._where()} is missing or incomplete (no {', '.join(sorted(missing))}); "
                "open the store with schema_policy=SchemaPolicy.CREATE_IF_NECESSARY to create it"
            )
        stored = (meta.get("embedder") or "", int(meta.get("vector_dim") or 0))
        if stored != (self.embedder.name, self.vector_dim):
            raise EmbedderMismatchError(*stored, self.embedder.name, self.vector_dim)

    def _where(self) -> str:
        path = getattr(self, "path", None)
        return f" in {path}" if path else ""

    def _text_index_ready(self) -> bool:
        """Whether a keyword index (Oracle Text) serves keyword ranking; checked once per store."""
        if self._has_text_index is None:
            sql = self.dialect.text_index_sql()
            rows = self._fetch(sql, {"name": self._text_index_name}) if sql else []
            failed = bool(rows and rows[0].get("failed"))
            self._has_text_index = bool(rows and rows[0]["n"]) and not failed
            if failed:
                log.warning(
                    "keyword index %s is in the FAILED state (rebuild it: ALTER INDEX ... REBUILD): "
                    "hybrid search ranks by vectors only",
                    self._text_index_name,
                )
            elif not self._has_text_index:
                log.warning("no keyword index %s: hybrid search ranks by vectors only", self._text_index_name)
        return self._has_text_index
