"""The review queues (/review/): what a curator should look at, read from the engine and from the
review marks in Django's database.

Five queues, each filterable by user and paged with the engine's cursors:

- `llm`: memories an automatic (LLM) lifecycle link retired and nobody reviewed yet. The engine
  marks the links the LLM makes (`RecordRelation.made_by_llm`, metadata `origin: "llm"`); a link
  leaves the queue when a curator accepts it (a `ReviewMark`) or reverts it (the link is deleted
  through `memory.curation`, so the memory is valid again).
- `expiring`: live memories whose lifetime ends within N days.
- `expired`: records past their expiry, awaiting `purge_expired` (messages, memories, images).
- `invalid`: every invalid memory, with the lifecycle links that retire it (or its own flag).
- `contradictions`: `contradicts` pairs nobody resolved or dismissed.

Queues read only; decisions that change the store go through `memory.curation`, and those that do
not (accept, dismiss) are `ReviewMark`s written here, with who made them and when.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django import forms

from memory.curation import Actor
from memory.engine import LIFECYCLE_RELATIONS, AgentMemory, Page, RecordRelation
from memory.models import ReviewKind, ReviewMark
from memory.web.filters import DEFAULT_PAGE_SIZE, FILTER_SELECT, ListingForm, id_filter, number_filter

QUEUES = {
    "llm": "Retired by the LLM",
    "expiring": "Expiring soon",
    "expired": "Expired, awaiting purge",
    "invalid": "Invalid",
    "contradictions": "Contradictions",
}
"""The queues in the order the page shows them, with their tab labels."""

DEFAULT_DAYS = 7
MAX_SCAN_ROUNDS = 50
"""A filtered queue reads the engine's pages until its own page is full; past this many reads it
stops there and offers the next page (a store of links the filter mostly rejects)."""


@dataclass(frozen=True)
class LinkRow:
    """A link of a queue with the memories at its two ends (None for one that expired or went)."""

    link: RecordRelation
    source: Any
    target: Any


@dataclass(frozen=True)
class InvalidRow:
    """An invalid memory and the lifecycle links that retire it, each with the memory it comes
    from; no link: the memory's own status flag is invalid (set by hand or by an agent)."""

    memory: Any
    retired_by: list[LinkRow]


def scope(user_id: str | None) -> dict[str, Any]:
    return {"user_id": user_id} if user_id else {}


def find_memory(memory: AgentMemory, memory_id: str) -> Any:
    try:
        return memory.get_memory(memory_id)
    except KeyError:
        return None


def with_ends(memory: AgentMemory, links: Iterable[RecordRelation]) -> list[LinkRow]:
    return [
        LinkRow(link, find_memory(memory, link.source_record_id), find_memory(memory, link.target_record_id))
        for link in links
    ]


def marked(kind: str) -> set[str]:
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


def llm_retirements(memory: AgentMemory, user_id: str | None) -> tuple[Callable[..., Page], Callable[[Any], bool]]:
    """The listing and filter of the `llm` queue: lifecycle links the LLM made, not accepted."""
    accepted = marked(ReviewKind.ACCEPTED)

    def fetch(**paging: Any) -> Page:
        return memory.list_relations(relation_types=list(LIFECYCLE_RELATIONS), **scope(user_id), **paging)

    return fetch, lambda link: link.made_by_llm and link.id not in accepted


def contradictions(memory: AgentMemory, user_id: str | None) -> tuple[Callable[..., Page], Callable[[Any], bool]]:
    """The listing and filter of the `contradictions` queue: contradicts links not dismissed."""
    dismissed = marked(ReviewKind.DISMISSED)

    def fetch(**paging: Any) -> Page:
        return memory.list_relations(relation_types="contradicts", **scope(user_id), **paging)

    return fetch, lambda link: link.id not in dismissed


def expiry_horizon(days: int, now: datetime | None = None) -> datetime:
    return (now or datetime.now(UTC)) + timedelta(days=days)


def counts(memory: AgentMemory, user_id: str | None, days: int) -> dict[str, int]:
    """How many items each queue holds (the tabs' counts)."""
    everything = {"limit": None, "cursor": None}
    result = {}
    for name, (fetch, keep) in (
        ("llm", llm_retirements(memory, user_id)),
        ("contradictions", contradictions(memory, user_id)),
    ):
        result[name] = sum(1 for link in fetch(**everything) if keep(link))
    result["expiring"] = len(memory.list_memories(expires_before=expiry_horizon(days), limit=None, **scope(user_id)))
    result["expired"] = len(memory.list_expired(limit=None, **scope(user_id)))
    result["invalid"] = len(memory.list_memories(status="invalid", limit=None, **scope(user_id)))
    return {name: result[name] for name in QUEUES}


def queue_page(
    memory: AgentMemory, queue: str, *, user_id: str | None, days: int, limit: int, cursor: str | None
) -> tuple[list[Any], str | None]:
    """One page of a queue's rows (LinkRow, InvalidRow or records), and the cursor of the next."""
    if queue in ("llm", "contradictions"):
        fetch, keep = (llm_retirements if queue == "llm" else contradictions)(memory, user_id)
        links, next_cursor = filtered_page(fetch, keep, limit, cursor)
        return with_ends(memory, links), next_cursor
    paging = {"limit": limit, "cursor": cursor, **scope(user_id)}
    if queue == "expiring":
        page = memory.list_memories(expires_before=expiry_horizon(days), **paging)
        return sorted(page, key=lambda record: record.expires_at or ""), page.next_cursor
    if queue == "expired":
        page = memory.list_expired(**paging)
        return list(page), page.next_cursor
    page = memory.list_memories(status="invalid", **paging)
    return invalid_rows(memory, page), page.next_cursor


def invalid_rows(memory: AgentMemory, records: list[Any]) -> list[InvalidRow]:
    """Each invalid memory with the links that retire it (Lifecycle.retired_by), in one lifecycle
    read for the page."""
    states = memory.lifecycle([record.id for record in records])
    rows = []
    for record in records:
        state = states.get(record.id)
        links = []
        for relation_id in state.retired_by if state is not None else ():
            try:
                links.append(memory.get_relation(relation_id))
            except KeyError:  # deleted since the lifecycle read
                continue
        rows.append(InvalidRow(record, with_ends(memory, links)))
    return rows


def mark(actor: Actor, kind: str, link: RecordRelation) -> ReviewMark:
    """Record a decision about a link that changes nothing in the store (accept, dismiss); a second
    one of the same kind for the same link keeps the first."""
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


def recent_marks(limit: int = 10) -> list[ReviewMark]:
    return list(ReviewMark.objects.all()[:limit])


class ReviewFilters(ListingForm):
    """The review page's query string: which queue, whose records, the expiring queue's window
    in days, and the engine's cursor and page size."""

    queue = forms.ChoiceField(
        label="Queue", required=False, choices=list(QUEUES.items()), widget=forms.Select(attrs=FILTER_SELECT)
    )
    user_id = id_filter("User")
    days = number_filter("Days", 1, 3650, "Expiring within this many days.")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["days"].widget.attrs["placeholder"] = str(DEFAULT_DAYS)

    def review_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "queue": data.get("queue") or "llm",
            "user_id": data.get("user_id") or None,
            "days": data.get("days") or DEFAULT_DAYS,
            "limit": data.get("limit") or DEFAULT_PAGE_SIZE,
            "cursor": data.get("cursor") or None,
        }


class KeepForm(forms.Form):
    """Resolving a contradiction: the id of the memory to keep (the other is superseded)."""

    keep = forms.CharField(label="Memory to keep", max_length=512)
