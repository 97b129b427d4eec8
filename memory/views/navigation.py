"""What the navigation of every dashboard page shows beside its sections (a context processor):
the Review item's badge, the items waiting for a curator in the review queues.

The badge is counted only when a page draws the navigation (a fragment htmx swaps in does not),
from counting queries kept a few seconds per process (memory.queries.review.pending), and never
fails a page: a store that cannot answer leaves the badge out, and the log says why.
"""

from __future__ import annotations

import logging
from functools import cached_property
from typing import Any

from django.http import HttpRequest

from memory.queries.review import QUEUES, pending
from memory.services import get_agent_memory
from memory.text import plural

logger = logging.getLogger(__name__)


class ReviewBadge:
    """The Review item's badge, counted when a template first asks for it."""

    @cached_property
    def counts(self) -> dict[str, int] | None:
        """The items waiting in each queue that awaits decisions, or None when the store failed."""
        try:
            return pending(get_agent_memory())
        except Exception:  # a page is more important than its badge
            logger.warning("the review queues could not be counted for the navigation", exc_info=True)
            return None

    @property
    def total(self) -> int:
        return sum((self.counts or {}).values())

    @property
    def title(self) -> str:
        """ "4 items waiting for review (Retired by the LLM: 1 · Expired, awaiting purge: 3)", the
        queues with none left out."""
        waiting = [f"{QUEUES[name].label}: {count}" for name, count in (self.counts or {}).items() if count]
        return f"{plural(self.total, 'item')} waiting for review ({' · '.join(waiting)})"


def review_badge(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"review_badge": ReviewBadge()}
