"""A thread's agent calls as its pages show them: the calls agents made in it (the thread page
lists the latest, and marks after each message the calls made before the next one came), and the
context cards actually served in it, each at the message it was served at, beside which the card
page rebuilds today's card with the same parameters."""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from memory.engine import RETRIEVAL_KINDS, ActivityEvent, AgentMemory, ContextCard, MessageRecord
from memory.web.forms.search import ContextCardForm

THREAD_CALLS = 20
"""The latest agent calls the thread page lists; the activity timeline has them all."""
CALLS_MARKED = 200
"""The most calls marked between the messages of one page of the thread."""
SERVED_CARDS = 10
MESSAGES_WALKED = 2_000
"""How far back (newest first) the thread's messages are read to find the one a card was served
at: a card served before the latest MESSAGES_WALKED messages is shown without its message."""
MESSAGES_PAGE = 200


@dataclass(frozen=True)
class ThreadCalls:
    """The agent calls of a thread: the latest, how many in all, and those made after each shown
    message (before the next one), oldest first, by message id; `all_marked` is False when the
    page's messages saw more than CALLS_MARKED calls (the latest are marked)."""

    latest: list[ActivityEvent]
    total: int
    after_message: dict[str, list[ActivityEvent]]
    all_marked: bool


def thread_calls(
    agent_memory: AgentMemory, thread_id: str, messages: list[MessageRecord], later: int | None
) -> ThreadCalls:
    """The calls agents made in the thread; `messages` are a page of its messages (oldest first)
    and `later` the position of the message after them, if any, which closes the page's window:
    a call belongs after the newest message stored before it was made."""
    latest = agent_memory.list_activity(
        thread_id=thread_id, caller_kind="agent", limit=THREAD_CALLS, include_content=False
    )
    total = len(latest)
    if latest.next_cursor is not None:
        total = agent_memory.activity_counts(thread_id=thread_id, caller_kind="agent").total
    after: dict[str, list[ActivityEvent]] = {}
    all_marked = True
    stamped = [message for message in messages if message.created_at]
    if stamped:
        following = agent_memory.list_thread_messages(thread_id, start=later, limit=1) if later is not None else []
        next_message = following[0] if following else None
        window = agent_memory.list_activity(
            thread_id=thread_id,
            kind=list(RETRIEVAL_KINDS),
            caller_kind="agent",
            since=stamped[0].created_at,
            until=next_message.created_at if next_message is not None and next_message.created_at else None,
            limit=CALLS_MARKED,
            include_content=False,
        )
        all_marked = window.next_cursor is None
        times = [message.created_at for message in stamped]
        for event in reversed(window):
            position = bisect_right(times, event.time) - 1
            if position >= 0:
                after.setdefault(stamped[position].id, []).append(event)
    return ThreadCalls(list(latest), total, after, all_marked)


@dataclass(frozen=True)
class CardResult:
    """A record a served card held, in card order: named as records are (`id`, `record_type`,
    `thread_id`), for the pages' links, with its status when served."""

    id: str
    record_type: str
    thread_id: str
    rank: int | None
    status: str | None


@dataclass(frozen=True)
class ServedCard:
    """A context card as an agent got it: the event (its text, tokens, caller, time), the message
    it was served at (`message_id`; `message` None when it is gone or was not found), whether
    the call named that message itself (as_of_message_id), its ranked results in card order and
    how many records links added, and the card page's query that rebuilds it today: with the
    call's parameters, as of that message when the call named it or messages came since
    (`rebuilt_as_of`)."""

    event: ActivityEvent
    message_id: str | None
    message: MessageRecord | None
    named: bool
    results: list[CardResult]
    linked: int
    rebuilt_as_of: bool
    rebuild_query: str


def served_cards(agent_memory: AgentMemory, thread_id: str, limit: int = SERVED_CARDS) -> tuple[list[ServedCard], int]:
    """The latest cards served in the thread (newest first) with the message each was served at,
    and how many were served in all."""
    events = agent_memory.list_activity(thread_id=thread_id, kind="card", limit=limit)
    total = len(events)
    if events.next_cursor is not None:
        total = agent_memory.activity_counts(thread_id=thread_id, kind="card").total
    return served_as(agent_memory, thread_id, list(events)), total


def served_card(agent_memory: AgentMemory, thread_id: str, event_id: str) -> ServedCard | None:
    """One card served in the thread, by its event's id; None when the log has no such card of
    this thread (purged, or the id of another call)."""
    try:
        event = agent_memory.get_activity(event_id)
    except (KeyError, ValueError):
        return None
    if event.kind != "card" or event.scope.get("thread_id") != thread_id:
        return None
    [card] = served_as(agent_memory, thread_id, [event])
    return card


def served_as(agent_memory: AgentMemory, thread_id: str, events: list[ActivityEvent]) -> list[ServedCard]:
    """Card events as served cards: each at the message its call named (as_of_message_id), else
    at the newest message stored before it."""
    found, newest = messages_before(agent_memory, thread_id, [event.time for event in events])
    cards = []
    for event, before in zip(events, found, strict=True):
        named = event.request.get("as_of_message_id")
        message: MessageRecord | None = before
        if isinstance(named, str):
            try:
                message = agent_memory.get_message_record(thread_id, named)
            except (KeyError, ValueError):  # deleted since, or never a message of this thread
                message = None
        message_id = named if isinstance(named, str) else (message.id if message else None)
        # The thread as it was: as of its message, unless no message came since (then the card
        # today is the same call, memories stored after that message and before the call included).
        as_of = message_id if isinstance(named, str) or (newest is not None and message_id != newest.id) else None
        cards.append(
            ServedCard(
                event=event,
                message_id=message_id,
                message=message,
                named=isinstance(named, str),
                results=[
                    CardResult(result.record_id, result.record_type, thread_id, result.rank, result.status)
                    for result in event.results
                    if result.hop == 0
                ],
                linked=sum(1 for result in event.results if result.hop),
                rebuilt_as_of=as_of is not None,
                rebuild_query=rebuild_query(event.request, as_of),
            )
        )
    return cards


def messages_before(
    agent_memory: AgentMemory, thread_id: str, times: list[str]
) -> tuple[list[MessageRecord | None], MessageRecord | None]:
    """For each time, the newest message of the thread stored at or before it, and the thread's
    newest message now: one walk down the thread's messages, newest first (MESSAGES_WALKED at
    most), the times taken newest first."""
    found: list[MessageRecord | None] = [None] * len(times)
    messages = newest_messages(agent_memory, thread_id)
    current = newest = next(messages, None)
    for index in sorted(range(len(times)), key=lambda index: times[index], reverse=True):
        while current is not None and (current.created_at or "") > times[index]:
            current = next(messages, None)
        found[index] = current
    return found, newest


def newest_messages(agent_memory: AgentMemory, thread_id: str) -> Iterator[MessageRecord]:
    cursor = None
    for _ in range(MESSAGES_WALKED // MESSAGES_PAGE):
        page = agent_memory.list_messages(thread_id=thread_id, newest_first=True, limit=MESSAGES_PAGE, cursor=cursor)
        yield from page
        if page.next_cursor is None:
            return
        cursor = page.next_cursor


def rebuild_query(request: dict[str, Any], message_id: str | None) -> str:
    """The card page's query string for a recorded card's parameters, as of its message: the
    parameters the page's form takes, written as the form reads them."""
    values: dict[str, str] = {}
    for name in ContextCardForm.base_fields:
        value = request.get(name)
        if value is None or name == "as_of_message_id":
            continue
        if isinstance(value, bool):
            values[name] = "true" if value else "false"
        elif isinstance(value, dict | list):
            values[name] = json.dumps(value)
        else:
            values[name] = str(value)
    if message_id:
        values["as_of_message_id"] = message_id
    return urlencode(values)


@dataclass(frozen=True)
class Beside:
    """A served card beside today's rebuild of it: each side's records in card order, each with
    whether the other side holds it too."""

    served: ServedCard
    then: list[tuple[CardResult, bool]]
    today: list[tuple[Any, bool]]


def beside(served: ServedCard, card: ContextCard) -> Beside:
    """The served card's records and the rebuilt card's (SearchResults), each marked as kept in the other."""
    then_ids = {result.id for result in served.results}
    today_ids = {result.record.id for result in card.results}
    return Beside(
        served,
        [(result, result.id in today_ids) for result in served.results],
        [(result, result.record.id in then_ids) for result in card.results],
    )
