"""The `contradictions` queue: `contradicts` pairs nobody resolved or dismissed (a dismissal is a
`ReviewMark`; resolving one supersedes a memory through memory.curation)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory.engine import AgentMemory, Page
from memory.models import ReviewKind
from memory.queries.review.base import LinkQueue, marked, scope


class Contradictions(LinkQueue):
    name = "contradictions"
    label = "Contradictions"

    def listing(
        self, agent_memory: AgentMemory, user_id: str | None
    ) -> tuple[Callable[..., Page], Callable[[Any], bool]]:
        """Contradicts links not dismissed."""
        dismissed = marked(ReviewKind.DISMISSED)

        def fetch(**paging: Any) -> Page:
            return agent_memory.list_relations(relation_types="contradicts", **scope(user_id), **paging)

        return fetch, lambda link: link.id not in dismissed


QUEUE = Contradictions()
