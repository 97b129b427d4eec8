"""The `invalid` queue: every invalid memory, with the lifecycle links that retire it (or, with
none, its own status flag)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory.engine import AgentMemory
from memory.queries.review.base import LinkRow, Queue, scope, with_ends


@dataclass(frozen=True)
class InvalidRow:
    """An invalid memory and the lifecycle links that retire it, each with the memory it comes
    from; no link: the memory's own status flag is invalid (set by hand or by an agent)."""

    memory: Any
    retired_by: list[LinkRow]


class Invalid(Queue):
    name = "invalid"
    label = "Invalid"
    awaits_decision = False  # a memory retired for good stays as history: nothing to decide

    def count(self, agent_memory: AgentMemory, user_id: str | None, days: int) -> int:
        return agent_memory.count_memories(status="invalid", **scope(user_id))

    def page(
        self, agent_memory: AgentMemory, *, user_id: str | None, days: int, limit: int, cursor: str | None
    ) -> tuple[list[Any], str | None]:
        page = agent_memory.list_memories(status="invalid", limit=limit, cursor=cursor, **scope(user_id))
        return invalid_rows(agent_memory, page), page.next_cursor


def invalid_rows(agent_memory: AgentMemory, records: list[Any]) -> list[InvalidRow]:
    """Each invalid memory with the links that retire it (Lifecycle.retired_by), in one lifecycle
    read for the page."""
    states = agent_memory.lifecycle([record.id for record in records])
    rows = []
    for record in records:
        state = states.get(record.id)
        links = []
        for relation_id in state.retired_by if state is not None else ():
            try:
                links.append(agent_memory.get_relation(relation_id))
            except KeyError:  # deleted since the lifecycle read
                continue
        rows.append(InvalidRow(record, with_ends(agent_memory, links)))
    return rows


QUEUE = Invalid()
