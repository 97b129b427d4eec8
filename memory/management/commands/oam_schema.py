"""Create, check or recreate the memory store's schema: `manage.py oam_schema --policy ...`.

`--print-sql` prints the DDL instead of running anything, for a DBA to review first (Oracle
stores: no connection is made). The store is the one OAM_STORE_URL names.
"""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.engine import (
    EmbedderMismatchError,
    OracleSchema,
    SchemaError,
    SchemaPolicy,
    SQLiteMemoryStore,
    connect,
    embedder_from_spec,
)
from memory.services import reset_agent_memory, store_options

POLICIES = {
    "require-existing": SchemaPolicy.REQUIRE_EXISTING,
    "create-if-empty": SchemaPolicy.CREATE_IF_EMPTY,
    "create-if-necessary": SchemaPolicy.CREATE_IF_NECESSARY,
    "recreate": SchemaPolicy.RECREATE,
}


class Command(BaseCommand):
    help = "Check, create or recreate the memory store's schema, or print its DDL."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--policy", choices=sorted(POLICIES), default="require-existing")
        parser.add_argument("--print-sql", action="store_true", help="print the DDL; run nothing")
        parser.add_argument("--yes", action="store_true", help="confirm --policy recreate (it deletes every record)")

    def handle(self, *args, policy: str, print_sql: bool, yes: bool, **options) -> None:
        url = settings.OAM_STORE_URL
        embedder = embedder_from_spec(settings.OAM_EMBEDDER)
        if print_sql:
            for statement in self.ddl(url, embedder.dim, policy):
                self.stdout.write(statement.rstrip() + ";\n")
            return
        if policy == "recreate" and not yes:
            raise CommandError("--policy recreate deletes every record in the store; add --yes to confirm")
        reset_agent_memory()  # the service's store must not hold the schema while it changes
        try:
            agent_memory = connect(url, embedder=embedder, **store_options(url, POLICIES[policy]))
        except EmbedderMismatchError as exc:
            raise CommandError(
                f"{exc}\nSet OAM_EMBEDDER to the store's embedder, or move the store with `manage.py oam_reembed`."
            ) from exc
        except SchemaError as exc:
            raise CommandError(f"{exc}\n`manage.py oam_schema --policy create-if-necessary` creates it.") from exc
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        agent_memory.close()
        self.stdout.write(f"The memory schema is in place ({policy}).")

    @staticmethod
    def ddl(url: str, vector_dim: int, policy: str) -> list[str]:
        if url.startswith("oracle://"):
            schema = OracleSchema("", vector_dim, vector_index=store_options(url)["vector_index"], keyword_index=True)
            return [*(schema.drop_sql() if policy == "recreate" else []), *schema.create_sql()]
        store = SQLiteMemoryStore(":memory:", schema_policy=SchemaPolicy.NO_CHECK, vector_dim=vector_dim)
        try:
            return store.schema_sql()
        finally:
            store.close()
