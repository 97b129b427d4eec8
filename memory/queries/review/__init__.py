"""The review queues (/review/): what a curator should look at, read from the engine and from the
review marks in Django's database. The registry of queues is QUEUES, one module per queue:

- `llm`: memories an automatic (LLM) lifecycle link retired and nobody reviewed yet;
- `expiring`: live memories whose lifetime ends within N days;
- `expired`: records past their expiry, awaiting `purge_expired`;
- `invalid`: every invalid memory, with the lifecycle links that retire it (or its own flag);
- `contradictions`: `contradicts` pairs nobody resolved or dismissed;
- `sensitive`: secrets and personal data found in stored records, not yet redacted or judged not sensitive.

A new queue is a module here (a `Queue`, named QUEUE), its line in QUEUES, and its rows'
template (templates/review/queue_<name>.html). Queues read only; decisions that change the store go
through memory.curation, and those that do not (accept, dismiss) are `ReviewMark`s
(memory.curation.review_marks). The page's query string and decision forms are HTTP, a layer below:
memory.web.filters.ReviewFilters (given QUEUES' names and labels) and memory.web.forms.review.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Any

from memory.engine import AgentMemory
from memory.models import ReviewMark
from memory.queries.review import contradictions, expired, expiring, invalid, llm, sensitive
from memory.queries.review.base import Queue
from memory.web.filters import DEFAULT_DAYS

QUEUES: dict[str, Queue] = {
    queue.name: queue
    for queue in (llm.QUEUE, expiring.QUEUE, expired.QUEUE, invalid.QUEUE, contradictions.QUEUE, sensitive.QUEUE)
}
"""The queues in the order the page shows them as tabs."""


def counts(agent_memory: AgentMemory, user_id: str | None, days: int) -> dict[str, int]:
    """How many items each queue holds (the tabs' counts)."""
    return {name: queue.count(agent_memory, user_id, days) for name, queue in QUEUES.items()}


PENDING_SECONDS = 5.0
"""How long a process keeps the navigation's pending counts (`pending`) before counting again."""

_pending: weakref.WeakKeyDictionary[AgentMemory, tuple[float, dict[str, int]]] = weakref.WeakKeyDictionary()
_pending_lock = threading.Lock()


def pending(agent_memory: AgentMemory) -> dict[str, int]:
    """How many items wait for a curator in each queue that awaits decisions (every user, the
    default horizon of `expiring`), for the navigation's Review badge on every page: counted,
    never listed (Queue.count), and kept PENDING_SECONDS per process and store, so that a page
    seldom counts at all."""
    now = time.monotonic()
    with _pending_lock:
        kept = _pending.get(agent_memory)
    if kept is not None and now - kept[0] < PENDING_SECONDS:
        return dict(kept[1])
    counted = {
        name: queue.count(agent_memory, None, DEFAULT_DAYS) for name, queue in QUEUES.items() if queue.awaits_decision
    }
    with _pending_lock:
        _pending[agent_memory] = (now, counted)
    return dict(counted)


def queue_page(
    agent_memory: AgentMemory, queue: str, *, user_id: str | None, days: int, limit: int, cursor: str | None
) -> tuple[list[Any], str | None]:
    """One page of a queue's rows, and the cursor of the next."""
    return QUEUES[queue].page(agent_memory, user_id=user_id, days=days, limit=limit, cursor=cursor)


def recent_marks(agent_memory: AgentMemory | None = None, limit: int = 10) -> list[ReviewMark]:
    """The latest decisions; for a scoped login's view, those whose memories it sees both of."""
    marks = list(ReviewMark.objects.all()[: limit if agent_memory is None else MARKS_LOOKED_AT])
    if agent_memory is None or agent_memory.visibility is None:
        return marks[:limit]
    return [mark for mark in marks if sees_mark(agent_memory, mark)][:limit]


MARKS_LOOKED_AT = 200
"""How many of the latest decisions a scoped login's review page looks through for its own."""


def sees_mark(agent_memory: AgentMemory, mark: ReviewMark) -> bool:
    """Whether this view sees both memories of a decision (a restricted view sees only its scope's)."""
    if agent_memory.visibility is None:
        return True
    ends = [mark.source_record_id, mark.target_record_id]
    return set(agent_memory.lifecycle(ends)) == set(ends)
