"""The `contradictions` queue: `contradicts` pairs nobody resolved or dismissed (a dismissal is a
`ReviewMark`; resolving one supersedes a memory through memory.curation)."""

from __future__ import annotations

from memory.models import ReviewKind
from memory.queries.review.base import LinkQueue


class Contradictions(LinkQueue):
    """Contradicts links not dismissed."""

    name = "contradictions"
    label = "Contradictions"
    relation_types = "contradicts"
    mark_kind = ReviewKind.DISMISSED


QUEUE = Contradictions()
