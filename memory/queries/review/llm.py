"""The `llm` queue: memories an automatic (LLM) lifecycle link retired and nobody reviewed yet.

The engine marks the links the LLM makes (`RecordRelation.made_by_llm`, metadata `origin: "llm"`);
a link leaves the queue when a curator accepts it (a `ReviewMark`) or reverts it (the link is
deleted through memory.curation, so the memory is valid again).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory.engine import LIFECYCLE_RELATIONS, AgentMemory, Page
from memory.models import ReviewKind
from memory.queries.review.base import LinkQueue, marked, scope


class LlmRetirements(LinkQueue):
    name = "llm"
    label = "Retired by the LLM"

    def listing(
        self, agent_memory: AgentMemory, user_id: str | None
    ) -> tuple[Callable[..., Page], Callable[[Any], bool]]:
        """Lifecycle links the LLM made, not accepted."""
        accepted = marked(ReviewKind.ACCEPTED)

        def fetch(**paging: Any) -> Page:
            return agent_memory.list_relations(relation_types=list(LIFECYCLE_RELATIONS), **scope(user_id), **paging)

        return fetch, lambda link: link.made_by_llm and link.id not in accepted


QUEUE = LlmRetirements()
