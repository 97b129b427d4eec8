"""The `expiring` queue: live memories whose lifetime ends within the page's `days`."""

from __future__ import annotations

from typing import Any

from memory.engine import AgentMemory
from memory.queries.review.base import Queue, expiry_horizon, scope


class Expiring(Queue):
    name = "expiring"
    label = "Expiring soon"

    def count(self, agent_memory: AgentMemory, user_id: str | None, days: int) -> int:
        return agent_memory.count_memories(expires_before=expiry_horizon(days), **scope(user_id))

    def page(
        self, agent_memory: AgentMemory, *, user_id: str | None, days: int, limit: int, cursor: str | None
    ) -> tuple[list[Any], str | None]:
        """The memories of an engine page, soonest to expire first."""
        page = agent_memory.list_memories(
            expires_before=expiry_horizon(days), limit=limit, cursor=cursor, **scope(user_id)
        )
        return sorted(page, key=lambda record: record.expires_at or ""), page.next_cursor


QUEUE = Expiring()
