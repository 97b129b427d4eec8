"""The process's one AgentMemory, built from settings on first use.

Views, API views and management commands all call `get_agent_memory()`; nothing in the web layer
opens a store itself. Building is lazy so that importing Django (for `check`, `makemigrations`, or
a test that overrides OAM_STORE_URL) never opens the configured store.
"""

from __future__ import annotations

import threading
from typing import Any

from django.conf import settings

from memory.engine import (
    AgentMemory,
    IndexRebuild,
    SchemaPolicy,
    connect,
    current_visibility,
    embedder_from_spec,
    llm_from_settings,
    spec_of,
)

_lock = threading.Lock()
_agent_memory: AgentMemory | None = None


def get_agent_memory() -> AgentMemory:
    """The shared AgentMemory of the OAM_STORE_URL, OAM_EMBEDDER and LLM settings, built on the first call;
    for a caller given a scope (a scoped login's request: memory.web.scopes sets the engine's
    current_visibility), its restricted() view, so that every read model and write path sees
    only that scope without a check of its own.

    With an LLM, threads extract memories inline: a dashboard edit shows its result at once.
    """
    global _agent_memory
    # Checked once without the lock so that the common path (already built) never waits.
    agent_memory = _agent_memory
    if agent_memory is None:
        with _lock:
            if _agent_memory is None:
                _agent_memory = connect(
                    settings.OAM_STORE_URL,
                    embedder=embedder_from_spec(settings.OAM_EMBEDDER),
                    llm=llm_from_settings(settings.OAM_LLM_BASE_URL, settings.OAM_LLM_MODEL, settings.OAM_LLM_API_KEY),
                    sensitive_policy=settings.OAM_SENSITIVE_POLICY,
                    **store_options(settings.OAM_STORE_URL),
                )
            agent_memory = _agent_memory
    visibility = current_visibility()
    return agent_memory if visibility is None else agent_memory.restricted(visibility)


def store_options(url: str, schema_policy: SchemaPolicy | None = None) -> dict[str, Any]:
    """The store options the settings give for this store URL (the embedded store's index
    generations; the Oracle pool and vector index)."""
    options: dict[str, Any] = {} if schema_policy is None else {"schema_policy": schema_policy}
    if url.startswith("sqlite://"):
        options["search_index_rebuild"] = IndexRebuild(
            after_changes=settings.OAM_INDEX_REBUILD_CHANGES, after_seconds=settings.OAM_INDEX_REBUILD_SECONDS
        )
    if url.startswith("oracle://"):
        options.update(
            pool_min=settings.OAM_ORACLE_POOL_MIN,
            pool_max=settings.OAM_ORACLE_POOL_MAX,
            vector_index=settings.OAM_ORACLE_VECTOR_INDEX,
            approximate_accuracy=settings.OAM_ORACLE_TARGET_ACCURACY,
            vector_index_transform=settings.OAM_ORACLE_VECTOR_INDEX_TRANSFORM,
        )
    return options


def reset_agent_memory() -> None:
    """Close the shared AgentMemory; the next `get_agent_memory()` builds one from current settings.

    Tests call this after pointing OAM_STORE_URL at a temporary store.
    """
    global _agent_memory
    with _lock:
        agent_memory, _agent_memory = _agent_memory, None
    if agent_memory is not None:
        agent_memory.close()


def embedder_spec(name: str, dim: int | None = None) -> str:
    """The OAM_EMBEDDER value that gives this embedder ("hashing:256" for "hashing-256"), the line an
    administrator sets when the store's embedder is not the configured one (the 503 page, the
    overview's alerts); an unknown name as is."""
    try:
        return spec_of(str(name), dim)
    except ValueError:
        return str(name)
