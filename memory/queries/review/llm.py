"""The `llm` queue: memories an automatic (LLM) lifecycle link retired and nobody reviewed yet.

The engine marks the links the LLM makes (`RecordRelation.made_by_llm`, metadata `origin: "llm"`);
a link leaves the queue when a curator accepts it (a `ReviewMark`) or reverts it (the link is
deleted through memory.curation, so the memory is valid again).
"""

from __future__ import annotations

from memory.engine import LIFECYCLE_RELATIONS
from memory.models import ReviewKind
from memory.queries.review.base import LinkQueue


class LlmRetirements(LinkQueue):
    """Lifecycle links the LLM made, not accepted."""

    name = "llm"
    label = "Retired by the LLM"
    relation_types = tuple(LIFECYCLE_RELATIONS)
    mark_kind = ReviewKind.ACCEPTED
    llm_only = True


QUEUE = LlmRetirements()
