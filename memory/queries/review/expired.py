"""The `expired` queue: records past their expiry (messages, memories, images), awaiting
`purge_expired` (Curation.purge_expired, one bulk change that can be undone)."""

from __future__ import annotations

from typing import Any

from memory.engine import AgentMemory
from memory.queries.review.base import Queue, scope


class Expired(Queue):
    name = "expired"
    label = "Expired, awaiting purge"

    def count(self, agent_memory: AgentMemory, user_id: str | None, days: int) -> int:
        return agent_memory.count_expired(**scope(user_id))

    def page(
        self, agent_memory: AgentMemory, *, user_id: str | None, days: int, limit: int, cursor: str | None
    ) -> tuple[list[Any], str | None]:
        page = agent_memory.list_expired(limit=limit, cursor=cursor, **scope(user_id))
        return list(page), page.next_cursor


QUEUE = Expired()
