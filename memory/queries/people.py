"""What the people pages and the API's owners say about a user or an agent: their profile, and
whether they own anything."""

from __future__ import annotations

from typing import Any

from memory.engine import AgentMemory, StoreStats
from memory.models import ObjectKind


def profile_of(agent_memory: AgentMemory, kind: str, owner_id: str) -> Any:
    """A user's (`kind` "user") or agent's stored profile, or None when they have none: the
    people pages and the API's owners show it beside what they own."""
    try:
        return (agent_memory.get_user if kind == ObjectKind.USER else agent_memory.get_agent)(owner_id)
    except KeyError:
        return None


def owns_anything(stats: StoreStats) -> bool:
    """Whether the store counts of a user or an agent (AgentMemory.stats of them) hold any thread
    or record: the dashboard's pages and the API's owner resources ask it before showing one."""
    return bool(stats.threads) or any(sum(counts.values()) for counts in stats.records.values())
