"""What the people pages and the API's owners say about a user or an agent beyond their profile."""

from __future__ import annotations

from memory.engine import StoreStats


def owns_anything(stats: StoreStats) -> bool:
    """Whether the store counts of a user or an agent (AgentMemory.stats of them) hold any thread
    or record: the dashboard's pages and the API's owner resources ask it before showing one."""
    return bool(stats.threads) or any(sum(counts.values()) for counts in stats.records.values())
