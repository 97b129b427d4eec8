"""Context cards and summaries: what a thread hands an LLM about itself (spec §7, DECISIONS D7).

A thread's summary is the one its LLM keeps (refreshed here when its update frequency says so),
otherwise a transcript of its latest messages. The card's relevant information comes from the thread's own
search, so it follows the same scope, filter and budget rules as `Thread.search`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol
from xml.sax.saxutils import escape

from .extraction import LlmMemoryWork
from .limits import check_int_range
from .scope import SearchScope, resolve_thread_scope
from .search import CHARS_PER_TOKEN, SearchResult, apply_token_budgets, check_budget, search_records
from .stores.base import MemoryStore
from .types import MEMORY_TYPES, MESSAGE_TYPE, NOT_SET, MemorySearchConfig, Message, MessageRecord

log = logging.getLogger(__name__)


class CardThread(Protocol):
    """What a card or a summary reads of its thread (thread.Thread is one): the thread's store
    and ids, its search configuration and LLM work, and its own reads of its messages."""

    store: MemoryStore
    thread_id: str
    user_id: str | None
    agent_id: str | None
    search_config: MemorySearchConfig
    llm_work: LlmMemoryWork | None
    context_card_type_search_concurrency: int

    def refresh_summary_if_due(self) -> None:
        """Bring the stored summary up to date when its update frequency says so."""

    def get_messages(
        self, start: Any = NOT_SET, end: Any = NOT_SET, include_image_bytes: bool = False
    ) -> list[Message]:
        """The thread's messages in chronological order, by 0-based position."""

    def _owned_message(self, message_id: Any) -> MessageRecord:
        """One message of this thread; KeyError when it is missing, expired or another thread's."""


DEFAULT_MESSAGE_FORMAT = (
    "<message><timestamp>{timestamp}</timestamp><role>{role}</role><content>{content}</content></message>"
)
"""How a card renders each recent message; the placeholders receive XML-escaped text."""

TRANSCRIPT_CHAR_LIMIT = 4000
"""A transcript summary keeps at most this many characters, the most recent ones (spec §7.2)."""


CARD_RECORD_TYPES = (MESSAGE_TYPE, *MEMORY_TYPES)
"""The types `min_relevant_results_by_type` may name."""

_TRANSCRIPT_PAGE = 50


@dataclass
class Summary:
    """A thread summary; `content`, `formatted_content` and `str()` are all the text itself."""

    content: str

    def __post_init__(self) -> None:
        if not isinstance(self.content, str):
            raise ValueError(f"Summary content must be a string, not {type(self.content).__name__}")

    def __str__(self) -> str:
        return self.content

    @property
    def formatted_content(self) -> str:
        return self.content


@dataclass
class ContextCard:
    """A thread's context for a prompt: summary, topics, relevant records and recent messages.

    `content` (and its alias `formatted_content`) renders each non-empty part as an XML-like
    section, in that order, one section per line; a card with nothing in it renders as ''.
    """

    summary: str = ""
    topics: Sequence[str] | None = None
    relevant_results: Sequence[SearchResult] | None = None
    recent_messages: Sequence[Message] | None = None
    message_format: str = DEFAULT_MESSAGE_FORMAT

    @property
    def results(self) -> list[SearchResult]:
        """The records the card chose, in card order (rank in the card = index + 1), as the
        relevant-information section shows them: each with its id, record (type), distance and
        score parts. The same objects as `relevant_results`."""
        return list(self.relevant_results or ())

    @property
    def content(self) -> str:
        sections = []
        if self.summary:
            sections.append(f"<summary>{escape(self.summary)}</summary>")
        topics = [topic for topic in self.topics or () if topic]
        if topics:
            sections.append(f"<topics>{''.join(f'<topic>{escape(topic)}</topic>' for topic in topics)}</topics>")
        if self.relevant_results:
            results = "\n".join(result.formatted_content for result in self.relevant_results)
            sections.append(f"<relevant_information>\n{results}\n</relevant_information>")
        if self.recent_messages:
            messages = "\n".join(self._render_message(message) for message in self.recent_messages)
            sections.append(f"<recent_messages>\n{messages}\n</recent_messages>")
        return "\n".join(sections)

    @property
    def formatted_content(self) -> str:
        return self.content

    def _render_message(self, message: Message) -> str:
        return self.message_format.format(
            timestamp=escape(message.timestamp or ""), role=escape(message.role), content=escape(message.text)
        )


def build_summary(thread: CardThread, except_last: Any = NOT_SET, token_budget: Any = NOT_SET) -> Summary:
    """The thread's summary: its stored one, or a transcript of its latest messages.

    The stored summary serves whole-thread requests (`except_last` omitted or 0). Otherwise, or
    when none is stored, the summary is a "role: text" transcript of the messages before the last
    `except_last`, oldest first, keeping whole messages from the most recent back within 4,000
    characters. A positive `token_budget` caps the text at int(budget * 3.5) characters: a
    transcript keeps its end (the latest messages), a stored summary its start (a synthesis
    opens with its gist). A budget that is omitted, None or <= 0 sets no cap.
    """
    except_last = _non_negative_int("except_last", 0 if except_last is NOT_SET else except_last)
    if token_budget is not NOT_SET:
        check_budget("token_budget", token_budget)
    cap = int(token_budget * CHARS_PER_TOKEN) if isinstance(token_budget, int) and token_budget > 0 else None
    if except_last == 0:
        thread.refresh_summary_if_due()
        stored = _stored_summary(thread)
        if stored:
            return Summary(stored if cap is None else stored[:cap])
    end = max(0, thread.store.count_thread_messages(thread.thread_id) - except_last)
    if except_last and end > 0 and thread.llm_work is not None:  # nothing before the tail: nothing to summarise
        # A summary that stops earlier is written for this call only, never persisted (§7.3).
        try:
            summary, _ = thread.llm_work.summarise(thread.store.thread_message_window(thread.thread_id, 0, end))
            return Summary(summary if cap is None else summary[:cap])
        except (RuntimeError, ValueError):
            log.exception("could not summarise thread %r with the LLM; using a transcript", thread.thread_id)
    limit = TRANSCRIPT_CHAR_LIMIT if cap is None else min(cap, TRANSCRIPT_CHAR_LIMIT)
    return Summary(_transcript(thread, end, limit))


def build_context_card(
    thread: CardThread,
    *,
    fallback_message_count: int = 5,
    max_relevant_results: Any = NOT_SET,
    token_budget: Any = NOT_SET,
    soft_token_budget: Any = NOT_SET,
    max_recent_messages: int = 0,
    except_last_messages: int = 0,
    min_relevant_results_by_type: Any = NOT_SET,
    metadata_filter: Any = None,
    include_invalid_results: bool = True,
    as_of_message_id: Any = NOT_SET,
    refresh_summary_if_due: bool = True,
) -> ContextCard:
    """The thread's context card (spec §7.1).

    The summary is the stored thread summary, else a transcript of the last
    `fallback_message_count` messages before the recent messages and the excluded tail, so that
    no message is in the card twice (none before them: no summary section). Relevant records
    are searched with a transcript of the last `fallback_message_count` messages before the
    excluded tail (or, without one, the stored summary): each type of
    `min_relevant_results_by_type` first (messages from this thread only), then the remaining
    slots from every memory-like type. The per-type results come first, in the mapping's order,
    then the rest, each in rank order; the token budgets then trim that list. The last
    `except_last_messages` messages are left out of the summary and the search.

    `as_of_message_id` (a message of this thread) gives the card as it would have been right
    after that message was stored: the thread's messages end there (recent messages, the
    transcript and the search query built from it, `except_last_messages` counting back from
    it), and only records stored (created) at or before that message are found, with their
    content as it is now. The stored summary and topics are the current ones; the LLM is not
    asked to refresh them. KeyError when the message is missing, expired or another thread's.

    A whole-thread card first refreshes the stored summary when a refresh is due, unless
    `refresh_summary_if_due` is False: then it is built from the summary as stored, and nothing
    is written (what a person previewing the card needs: looking must not change the store).
    """
    _non_negative_int("fallback_message_count", fallback_message_count)
    _non_negative_int("max_recent_messages", max_recent_messages)
    _non_negative_int("except_last_messages", except_last_messages)
    if except_last_messages and max_recent_messages not in (0, except_last_messages):
        raise ValueError(
            f"with except_last_messages={except_last_messages}, max_recent_messages must be 0 "
            f"or {except_last_messages}, not {max_recent_messages}"
        )
    minimums = _minimums(min_relevant_results_by_type)
    if max_relevant_results is NOT_SET:
        max_relevant_results = 5
    else:
        _non_negative_int("max_relevant_results", max_relevant_results)
    limit = max(max_relevant_results, sum(minimums.values()))
    token_budget = thread.search_config.token_budget if token_budget is NOT_SET else token_budget
    soft_token_budget = thread.search_config.soft_token_budget if soft_token_budget is NOT_SET else soft_token_budget
    check_budget("token_budget", token_budget)
    check_budget("soft_token_budget", soft_token_budget)
    if metadata_filter is not None and not isinstance(metadata_filter, dict):
        raise ValueError(f"metadata_filter must be a dict or None, not {type(metadata_filter).__name__}")
    if not isinstance(include_invalid_results, bool):
        raise ValueError(f"include_invalid_results must be True or False, not {include_invalid_results!r}")
    if not isinstance(refresh_summary_if_due, bool):
        raise ValueError(f"refresh_summary_if_due must be True or False, not {refresh_summary_if_due!r}")

    as_of = None if as_of_message_id is NOT_SET else thread._owned_message(as_of_message_id)
    if refresh_summary_if_due and not except_last_messages and as_of is None:
        thread.refresh_summary_if_due()
    stored = thread.store.get_thread(thread.thread_id)
    stored_summary = stored.summary if stored is not None and stored.summary else ""
    if as_of is None:
        total, cutoff = thread.store.count_thread_messages(thread.thread_id), None
    else:
        total = thread.store.count_thread_messages(thread.thread_id, through_seq_no=as_of.seq_no)
        cutoff = as_of.created_at
    end = max(0, total - except_last_messages)
    fallback = _transcript(thread, end, TRANSCRIPT_CHAR_LIMIT, fallback_message_count)
    query = fallback or stored_summary
    # The summary shown covers only the messages before the recent ones (their own section):
    # the agent would otherwise be handed the same messages twice. The search reads the latest.
    recent_start = max(0, total - max_recent_messages)
    shown = fallback
    if not stored_summary and recent_start < end:
        shown = _transcript(thread, recent_start, TRANSCRIPT_CHAR_LIMIT, fallback_message_count)
    relevant: list[SearchResult] = []
    if query and limit:
        excluded: set[str] = set()
        if minimums.get(MESSAGE_TYPE):
            excluded = {m.id for m in thread.get_messages(start=end, end=total)}
            if cutoff is not None:
                excluded |= _stored_with(thread, total, cutoff)
        searcher = _RelevantSearch(thread, query, metadata_filter, include_invalid_results, excluded, cutoff)
        relevant = apply_token_budgets(searcher.run(limit, minimums), token_budget, soft_token_budget)
    recent = thread.get_messages(start=recent_start, end=total) if max_recent_messages else []
    return ContextCard(
        summary=stored_summary or shown,
        topics=list(stored.topics) if stored is not None and stored.topics else None,
        relevant_results=relevant,
        recent_messages=recent,
    )


@dataclass
class _RelevantSearch:
    thread: CardThread
    query: str
    metadata_filter: dict | None
    include_invalid_results: bool
    excluded_message_ids: set[str]
    created_at_or_before: str | None = None

    def run(self, limit: int, minimums: dict[str, int]) -> list[SearchResult]:
        wanted = [(record_type, count) for record_type, count in minimums.items() if count > 0]
        chosen: list[SearchResult] = []
        if wanted:
            # The pool preserves input order in map(), so results stay deterministic.
            with ThreadPoolExecutor(
                max_workers=min(self.thread.context_card_type_search_concurrency, len(wanted))
            ) as pool:
                for results in pool.map(lambda item: self._search_type(*item), wanted):
                    chosen.extend(results)
        remaining = limit - len(chosen)
        if remaining > 0:
            seen = {(result.record.record_type, result.id) for result in chosen}
            already = sum(1 for result in chosen if result.record.record_type in MEMORY_TYPES)
            for result in self._search(list(MEMORY_TYPES), remaining + already):
                if remaining == 0:
                    break
                if (result.record.record_type, result.id) not in seen:
                    chosen.append(result)
                    remaining -= 1
        return chosen

    def _search_type(self, record_type: str, count: int) -> list[SearchResult]:
        if record_type != MESSAGE_TYPE:
            return self._search([record_type], count)
        # Over-fetch by the excluded tail so that dropping it still leaves `count` results.
        results = self._search([MESSAGE_TYPE], count + len(self.excluded_message_ids), exact_thread_match=True)
        return [result for result in results if result.id not in self.excluded_message_ids][:count]

    def _search(self, record_types: list[str], count: int, **scope: Any) -> list[SearchResult]:
        """The thread's search (Thread.search's scope), with the card's cutoff; budgets are off
        here: they apply once, to the card's final list."""
        thread = self.thread
        return search_records(
            thread.store,
            self.query,
            resolve_thread_scope(SearchScope(**scope), thread.user_id, thread.agent_id, thread.thread_id),
            max_results=count,
            token_budget=0,
            soft_token_budget=0,
            record_types=record_types,
            metadata_filter=self.metadata_filter,
            include_invalid_results=self.include_invalid_results,
            num_hops=0,
            max_linked_results=100,
            search_config=thread.search_config,
            created_at_or_before=NOT_SET if self.created_at_or_before is None else self.created_at_or_before,
        )


def _non_negative_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, not {value!r}")
    check_int_range(name, value)
    return value


def _minimums(value: Any) -> dict[str, int]:
    if value is NOT_SET or value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"min_relevant_results_by_type must be a mapping or None, not {type(value).__name__}")
    minimums = {}
    for record_type, count in value.items():
        if record_type not in CARD_RECORD_TYPES:
            allowed = ", ".join(repr(t) for t in CARD_RECORD_TYPES)
            raise ValueError(f"min_relevant_results_by_type: unknown type {record_type!r}; use {allowed}")
        minimums[record_type] = _non_negative_int(f"min_relevant_results_by_type[{record_type!r}]", count)
    return minimums


def _stored_with(thread: CardThread, position: int, cutoff: str) -> set[str]:
    """The ids of the messages from `position` on that were stored at `cutoff` or before: those
    written in the same call as the message at `position - 1`, which a creation-time cutoff
    cannot tell from it (they come in order, so the first one stored later ends the walk)."""
    found: set[str] = set()
    while True:
        page = thread.store.thread_message_window(thread.thread_id, position, _TRANSCRIPT_PAGE)
        for record in page:
            if record.created_at is not None and record.created_at > cutoff:
                return found
            found.add(record.id)
        if len(page) < _TRANSCRIPT_PAGE:
            return found
        position += _TRANSCRIPT_PAGE


def _stored_summary(thread: CardThread) -> str:
    stored = thread.store.get_thread(thread.thread_id)
    return stored.summary if stored is not None and stored.summary else ""


def _transcript(thread: CardThread, end: int, char_limit: int, max_messages: int | None = None) -> str:
    """The latest messages before position `end` as "role: text" lines, oldest first.

    Whole messages are kept from the most recent back while they fit in `char_limit`; when even
    the latest one does not fit, its end is kept after a "role: …" prefix.
    """
    first = 0 if max_messages is None else max(0, end - max_messages)
    newest_first: list[tuple[str, str]] = []
    size = 0
    while end > first and size <= char_limit:
        start = max(first, end - _TRANSCRIPT_PAGE)
        for message in reversed(thread.get_messages(start=start, end=end)):
            newest_first.append((message.role, message.text))
            size += len(message.role) + len(message.text) + 3
        end = start
    kept: list[str] = []
    size = 0
    for role, text in newest_first:
        line = f"{role}: {text}"
        added = len(line) + (1 if kept else 0)
        if size + added > char_limit:
            break
        kept.append(line)
        size += added
    if not kept and newest_first:
        role, text = newest_first[0]
        prefix = f"{role}: …"
        room = char_limit - len(prefix)
        return prefix + text[-room:] if room > 0 else f"{role}: {text}"[-char_limit:]
    return "\n".join(reversed(kept))
