"""The `sensitive` queue: secrets and personal data the engine found in stored records (engine/
sensitive.py), less the values a curator judged not sensitive (SensitiveDismissal)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory.engine import SENSITIVE_KINDS, AgentMemory, SensitiveFinding
from memory.models import SensitiveDismissal
from memory.queries.review.base import Queue, scope

EXCERPT_SIDE = 100
"""Characters of the record's text shown on each side of a finding."""


@dataclass(frozen=True)
class FindingRow:
    """A finding with its record's identity as record_url reads it (`id` is the record's)."""

    finding: SensitiveFinding

    @property
    def id(self) -> str:
        return self.finding.record_id

    @property
    def record_type(self) -> str:
        return self.finding.record_type

    @property
    def thread_id(self) -> str | None:
        return self.finding.thread_id

    @property
    def excerpt(self) -> str:
        """The record's masked text around this finding (a long text is cut to the part that holds it)."""
        text, preview = self.finding.masked_text, self.finding.preview
        at = text.find(preview)
        if len(text) <= 2 * EXCERPT_SIDE or at < 0:
            return text if len(text) <= 2 * EXCERPT_SIDE else text[: 2 * EXCERPT_SIDE] + "…"
        start, end = max(0, at - EXCERPT_SIDE), min(len(text), at + len(preview) + EXCERPT_SIDE)
        return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")

    @property
    def label(self) -> str:
        return SENSITIVE_KINDS.get(self.finding.kind, self.finding.kind)


def dismissed_keys() -> list[str]:
    """The values judged not sensitive, as the engine's listing leaves them out: "<record id> <digest>"."""
    return [
        f"{record_id} {digest}" for record_id, digest in SensitiveDismissal.objects.values_list("record_id", "digest")
    ]


class Sensitive(Queue):
    name = "sensitive"
    label = "Sensitive"

    def count(self, agent_memory: AgentMemory, user_id: str | None, days: int) -> int:
        # Most stores hold no finding: then Django's database is not asked for the dismissals.
        if not agent_memory.count_findings(**scope(user_id)):
            return 0
        return agent_memory.count_findings(exclude=dismissed_keys(), **scope(user_id))

    def page(
        self, agent_memory: AgentMemory, *, user_id: str | None, days: int, limit: int, cursor: str | None
    ) -> tuple[list[Any], str | None]:
        page = agent_memory.list_findings(exclude=dismissed_keys(), limit=limit, cursor=cursor, **scope(user_id))
        return [FindingRow(finding) for finding in page], page.next_cursor


QUEUE = Sensitive()
