"""Review marks: a curator's decision about a link of a review queue (memory.queries.review) that
changes nothing in the store (accept an automatic retirement, dismiss a contradiction)."""

from __future__ import annotations

from memory.curation.recording import Actor
from memory.engine import RecordRelation
from memory.models import ReviewMark


def mark(actor: Actor, kind: str, link: RecordRelation) -> ReviewMark:
    """Record a review decision about a link that changes nothing in the store (accept, dismiss);
    a second one of the same kind for the same link keeps the first."""
    review_mark, _ = ReviewMark.objects.get_or_create(
        kind=kind,
        relation_id=link.id,
        defaults={
            **actor.authorship(),
            "relation_type": link.relation_type,
            "source_record_id": link.source_record_id,
            "target_record_id": link.target_record_id,
        },
    )
    return review_mark
