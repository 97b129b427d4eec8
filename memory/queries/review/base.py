"""What every review queue is (`Queue`: a name, a tab label, a template, a count and a page), the
rows link queues show, and the helpers queues read with."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from memory.engine import LLM_LINK_ORIGIN, AgentMemory, Page, RecordRelation
from memory.models import ReviewMark

MAX_SCAN_ROUNDS = 50
"""A filtered queue reads the engine's pages until its own page is full; past this many reads it
stops there and offers the next page (a store of links the filter mostly rejects)."""


class Queue:
    """One review queue: `name` (its `queue` parameter), `label` (its tab), `template` (its rows, in
    the queue page's `queue` fragment), the number of items it holds (`count`: counted in the
    store, never by listing the queue, since every page's navigation shows it) and one page of
    its rows. Queues read only: decisions on their rows go through memory.curation."""

    name: str
    label: str
    awaits_decision: bool = True
    """Whether its items wait for a curator (the navigation's Review badge counts them)."""

    @property
    def template(self) -> str:
        return f"review/queue_{self.name}.html"

    def count(self, agent_memory: AgentMemory, user_id: str | None, days: int) -> int:
        raise NotImplementedError

    def page(
        self, agent_memory: AgentMemory, *, user_id: str | None, days: int, limit: int, cursor: str | None
    ) -> tuple[list[Any], str | None]:
        """One page of rows, and the engine cursor of the next (None on the last page)."""
        raise NotImplementedError


class LinkQueue(Queue):
    """A queue of links (shown with the memories at their ends): the links of `relation_types`
    (only those the LLM made, with `llm_only`) that no review mark of `mark_kind` took off the
    queue. Its page reads the engine's listing of those types and keeps what the queue holds;
    its count is counted in the store (two count queries: the links, and the marked ones among
    them), never listed."""

    relation_types: str | tuple[str, ...]
    mark_kind: str
    llm_only: bool = False

    def holds(self, link: RecordRelation, taken_off: set[str]) -> bool:
        return (link.made_by_llm or not self.llm_only) and link.id not in taken_off

    def listing(
        self, agent_memory: AgentMemory, user_id: str | None
    ) -> tuple[Callable[..., Page], Callable[[Any], bool]]:
        """The engine listing the queue reads (`fetch(limit=, cursor=)`), and the filter of what it holds."""
        taken_off = marked(self.mark_kind)

        def fetch(**paging: Any) -> Page:
            return agent_memory.list_relations(relation_types=self.relation_types, **scope(user_id), **paging)

        return fetch, lambda link: self.holds(link, taken_off)

    def count(self, agent_memory: AgentMemory, user_id: str | None, days: int) -> int:
        filters: dict[str, Any] = {"relation_types": self.relation_types, **scope(user_id)}
        if self.llm_only:
            filters["metadata_filter"] = {"origin": LLM_LINK_ORIGIN}  # RecordRelation.made_by_llm
        held = agent_memory.count_relations(**filters)
        taken_off = marked(self.mark_kind) if held else set()
        if taken_off:
            held -= agent_memory.count_relations(**filters, relation_ids=sorted(taken_off))
        return held

    def page(
        self, agent_memory: AgentMemory, *, user_id: str | None, days: int, limit: int, cursor: str | None
    ) -> tuple[list[Any], str | None]:
        fetch, keep = self.listing(agent_memory, user_id)
        links, next_cursor = filtered_page(fetch, keep, limit, cursor)
        return with_ends(agent_memory, links), next_cursor


@dataclass(frozen=True)
class LinkRow:
    """A link of a queue with the memories at its two ends (None for one that expired or went)."""

    link: RecordRelation
    source: Any
    target: Any


def scope(user_id: str | None) -> dict[str, Any]:
    return {"user_id": user_id} if user_id else {}


def find_memory(agent_memory: AgentMemory, memory_id: str) -> Any:
    try:
        return agent_memory.get_memory(memory_id)
    except KeyError:
        return None


def with_ends(agent_memory: AgentMemory, links: Iterable[RecordRelation]) -> list[LinkRow]:
    return [
        LinkRow(
            link,
            find_memory(agent_memory, link.source_record_id),
            find_memory(agent_memory, link.target_record_id),
        )
        for link in links
    ]


def marked(kind: str) -> set[str]:
    """The links a review mark of this kind took off their queue."""
    return set(ReviewMark.objects.filter(kind=kind).values_list("relation_id", flat=True))


def filtered_page(
    fetch: Callable[..., Page], keep: Callable[[Any], bool], limit: int, cursor: str | None
) -> tuple[list[Any], str | None]:
    """A page of `limit` items that `keep` accepts, read through an engine listing (`fetch(limit=,
    cursor=)`) from `cursor`, and the engine cursor after the last item read. Each read asks for
    exactly as many items as are still wanted, so the next page starts right after the last one
    read, whatever the filter left out."""
    found: list[Any] = []
    for _ in range(MAX_SCAN_ROUNDS):
        page = fetch(limit=limit - len(found), cursor=cursor)
        found += [item for item in page if keep(item)]
        cursor = page.next_cursor
        if cursor is None or len(found) >= limit:
            break
    return found, cursor


def expiry_horizon(days: int, now: datetime | None = None) -> datetime:
    return (now or datetime.now(UTC)) + timedelta(days=days)
