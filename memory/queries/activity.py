"""Agent activity as the dashboard shows it: the timeline with its counts and chart, one recorded
call beside what has become of each record it returned, and Replay: the same call made today,
compared with the recorded one.

Why a read model of its own: the event page and Replay set two states of the store side by side,
the one the log froze when the agent called and today's, and explain every difference from what
the engine and the curation history know: a record's current version against the one served,
the lifecycle links that retire it now, the log's own writes since, and the history's deletes
(where a deleted record can be restored). That explanation is the same whichever page or front
door shows it, so it lives here, not in a view; the re-run is unrecorded, so that looking at a
call never adds one to the log.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from memory.engine import (
    MEMORY_TYPES,
    ActivityCounts,
    ActivityEvent,
    ActivityResult,
    AgentMemory,
    Record,
    RecordRelation,
    estimate_tokens,
    unrecorded,
)
from memory.models import Action, CurationEntry
from memory.text import plural, quoted, short_id
from memory.web.forms.activity import ActivityFilters

# --- the timeline ---------------------------------------------------------------------------------

CHART_DAYS = 60
"""The most days the chart draws: the latest ones of the filtered log."""
CHART_CALLERS = 5
"""Callers drawn in a colour of their own, the busiest first; the rest are drawn together."""
OTHER_CALLERS = "other callers"
CHART_WIDTH, CHART_HEIGHT = 600, 120


@dataclass(frozen=True)
class Segment:
    """One caller's calls of one day: a piece of the day's bar (`slot`: its colour, the legend's)."""

    caller: str
    slot: int
    count: int
    y: float
    height: float


@dataclass(frozen=True)
class DayBar:
    day: date
    x: float
    width: float
    total: int
    segments: tuple[Segment, ...]

    @property
    def breakdown(self) -> str:
        """The day's numbers in words (the bar's title, and the table under the chart)."""
        return ", ".join(f"{segment.caller} {segment.count}" for segment in self.segments)


@dataclass(frozen=True)
class CallsChart:
    """Calls per UTC day, stacked by caller, in SVG user units; `callers` is the legend
    ((slot, name), the busiest first); `days_left_out` counts the older days not drawn."""

    bars: tuple[DayBar, ...]
    callers: tuple[tuple[int, str], ...]
    peak: int
    days_left_out: int
    width: int = CHART_WIDTH
    height: int = CHART_HEIGHT

    @property
    def first(self) -> date:
        return self.bars[0].day

    @property
    def last(self) -> date:
        return self.bars[-1].day


def calls_chart(by_day: Sequence[tuple[str, str, int]], days: int = CHART_DAYS) -> CallsChart | None:
    """The chart of `ActivityCounts.by_day`: every day from the first with calls to the last
    (days without calls too, so that gaps show), at most the latest `days`. None with no calls."""
    if not by_day:
        return None
    per_caller: dict[str, int] = {}
    for _, caller, count in by_day:
        per_caller[caller] = per_caller.get(caller, 0) + count
    busiest = sorted(per_caller, key=lambda caller: (-per_caller[caller], caller))
    slots = {caller: slot for slot, caller in enumerate(busiest[:CHART_CALLERS])}
    counts: dict[date, dict[int, int]] = {}
    for day, caller, count in by_day:
        slot = slots.get(caller, CHART_CALLERS)
        day_counts = counts.setdefault(date.fromisoformat(day), {})
        day_counts[slot] = day_counts.get(slot, 0) + count
    first, last = min(counts), max(counts)
    span = (last - first).days + 1
    start = last - timedelta(days=min(span, days) - 1)
    window = [start + timedelta(days=i) for i in range(min(span, days))]
    peak = max(sum(counts.get(day, {}).values()) for day in window) or 1
    names = {**{slot: caller for caller, slot in slots.items()}, CHART_CALLERS: OTHER_CALLERS}
    slot_width = CHART_WIDTH / len(window)
    bars = []
    for i, day in enumerate(window):
        day_counts, top, segments = counts.get(day, {}), float(CHART_HEIGHT), []
        for slot in sorted(day_counts):
            height = round(day_counts[slot] / peak * CHART_HEIGHT, 2)
            top -= height
            segments.append(Segment(names[slot], slot, day_counts[slot], round(top, 2), height))
        gap = min(2.0, slot_width / 4)
        bars.append(
            DayBar(
                day,
                round(i * slot_width + gap / 2, 2),
                round(slot_width - gap, 2),
                sum(day_counts.values()),
                tuple(segments),
            )
        )
    legend = [(slot, caller) for caller, slot in slots.items()]
    if len(busiest) > CHART_CALLERS:
        legend.append((CHART_CALLERS, f"{OTHER_CALLERS} ({len(busiest) - CHART_CALLERS})"))
    return CallsChart(tuple(bars), tuple(legend), peak, span - len(window))


@dataclass(frozen=True)
class Timeline:
    """A page of the filtered log, newest first (without the calls' texts and results, which a
    list does not show), and the counts and chart of the whole filtered log."""

    events: Sequence[ActivityEvent]
    next_cursor: str | None
    counts: ActivityCounts
    chart: CallsChart | None


def timeline(agent_memory: AgentMemory, filters: ActivityFilters) -> Timeline:
    """The timeline the valid filters ask for; the engine's ValueError (a forged cursor) passes
    through, for the form."""
    page = agent_memory.list_activity(**filters.engine_arguments(), include_content=False)
    counts = agent_memory.activity_counts(**filters.filter_arguments())
    return Timeline(list(page), page.next_cursor, counts, calls_chart(counts.by_day))


# --- a record then and now ------------------------------------------------------------------------

SCORE_PARTS = (
    ("distance", "ranking distance", "What the results were ordered by, 0 best.", "{:.4f}"),
    ("vector_distance", "vector distance", "Cosine distance between the query's and the record's vectors.", "{:.4f}"),
    ("vector_rank", "vector rank", "Its place in the vector ranking.", "#{}"),
    ("keyword_score", "BM25", "The keyword ranking's score: higher matches the query's words better.", "{:.3f}"),
    ("keyword_rank", "keyword rank", "Its place in the keyword ranking.", "#{}"),
    ("score", "fused", "The hybrid score of the two rankings: higher is better.", "{:.4f}"),
)


@dataclass(frozen=True)
class ScorePart:
    label: str
    meaning: str
    value: str


def score_parts(scores: Mapping[str, Any]) -> list[ScorePart]:
    """A result's score parts in one order, as text ("—" for a distance it had none of: a result
    only the keyword ranking found)."""
    parts = []
    for key, label, meaning, shape in SCORE_PARTS:
        value = scores.get(key)
        if value is None:
            continue
        shown = "—" if isinstance(value, float) and value != value else shape.format(value)
        parts.append(ScorePart(label, meaning, shown))
    return parts


RETIRED_AS = {"supersedes": "superseded by", "refines": "refined by", "duplicates": "a duplicate of"}


@dataclass(frozen=True)
class Retirement:
    """A lifecycle link that makes a memory invalid, and the memory at its other end (None: gone)."""

    link: RecordRelation
    by: Record | None

    @property
    def words(self) -> str:
        """How the link reads from the memory it retires: "superseded by"."""
        return RETIRED_AS.get(self.link.relation_type, self.link.relation_type)


@dataclass(frozen=True)
class Now:
    """A record a call returned or changed, as it is today: `record` (None when it is gone:
    deleted, or expired), the version the call saw, the lifecycle links that retire it now, and
    for one deleted through the dashboard or the API the history entry it can be restored from."""

    record_id: str
    record_type: str
    record: Record | None
    version_then: int | None = None
    status_then: str | None = None
    retired_by: tuple[Retirement, ...] = ()
    deleted_in: CurationEntry | None = None

    @property
    def gone(self) -> bool:
        return self.record is None

    @property
    def edited(self) -> bool:
        """Edited since the call: its version is past the one the call saw."""
        return self.record is not None and self.version_then is not None and self.record.version > self.version_then

    @property
    def invalid(self) -> bool:
        return self.record is not None and str(getattr(self.record, "status", "valid")) == "invalid"

    @property
    def last_text(self) -> str:
        """Its text today, or for a deleted record the text it had when the history deleted it."""
        if self.record is not None:
            return self.record.content
        snapshot = self.deleted_in.before if self.deleted_in is not None else None
        for record in (snapshot or {}).get("records", ()) if isinstance(snapshot, dict) else ():
            if isinstance(record, dict) and record.get("id") == self.record_id:
                return str(record.get("content") or "")
        return ""

    @property
    def words(self) -> str:
        """The record as a reason names it: its text, quoted and shortened; its short id when gone
        without a text the history kept."""
        return quoted(self.last_text) if self.last_text else short_id(self.record_id)


def current_states(agent_memory: AgentMemory, results: Iterable[ActivityResult]) -> dict[str, Now]:
    """Each record among `results` as it is today, by id: one read per record, one lifecycle
    query for the invalid memories (then each retiring link), one history query for the gone."""
    then: dict[str, ActivityResult] = {}
    for result in results:
        then.setdefault(result.record_id, result)
    found = {record_id: read_record(agent_memory, result.record_type, record_id) for record_id, result in then.items()}
    invalid = [
        record_id
        for record_id, record in found.items()
        if record is not None and record.record_type in MEMORY_TYPES and str(record.status) == "invalid"
    ]
    lifecycles = agent_memory.lifecycle(invalid) if invalid else {}
    links: dict[str, Retirement] = {}
    for lifecycle in lifecycles.values():
        for relation_id in lifecycle.retired_by:
            if relation_id not in links:
                try:
                    link = agent_memory.get_relation(relation_id)
                except KeyError:  # removed between the two reads: it retires nothing now
                    continue
                links[relation_id] = Retirement(
                    link, read_record(agent_memory, link.source_record_type, link.source_record_id)
                )
    deletes = deletions([record_id for record_id, record in found.items() if record is None])
    states = {}
    for record_id, result in then.items():
        lifecycle = lifecycles.get(record_id)
        retired_by = tuple(links[i] for i in lifecycle.retired_by if i in links) if lifecycle else ()
        states[record_id] = Now(
            record_id,
            result.record_type,
            found[record_id],
            result.version,
            result.status,
            retired_by,
            deletes.get(record_id),
        )
    return states


def read_record(agent_memory: AgentMemory, record_type: str, record_id: str) -> Record | None:
    """The live record, or None. A memory is read by id alone: its type may have changed since."""
    if record_type in MEMORY_TYPES:
        try:
            return agent_memory.get_memory(record_id)
        except (KeyError, ValueError):
            return None
    try:
        return agent_memory.store.get(record_type, record_id)
    except ValueError:  # a type the store does not read by id (the log keeps what it was given)
        return None


def deletions(record_ids: Sequence[str]) -> dict[str, CurationEntry]:
    """The curation history's latest delete of each of these records not undone since: the entry
    whose page restores it."""
    if not record_ids:
        return {}
    entries = CurationEntry.objects.filter(
        object_id__in=record_ids, action=Action.DELETE, reverted_by__isnull=True
    ).order_by("at", "id")
    return {entry.object_id: entry for entry in entries}


def history_change(history_ref: str | None) -> list[CurationEntry]:
    """The curation-history entries of the change a person's write belongs to (the log's
    `history_ref` is the change's token, kept on its entries), in the order they were made."""
    if not history_ref:
        return []
    return list(CurationEntry.objects.filter(change_token=history_ref).select_related("bulk").order_by("id"))


@dataclass(frozen=True)
class RecordedResult:
    """One result of a recorded call, as the caller got it, beside the record today."""

    result: ActivityResult
    now: Now

    @property
    def scores(self) -> list[ScorePart]:
        return score_parts(self.result.scores)

    @property
    def steps(self) -> list[tuple[str, str]]:
        """A linked result's path from its ranked result: (link label, record id) per hop."""
        path = list(self.result.path)
        return [(path[i], path[i + 1]) for i in range(1, len(path) - 1, 2)]

    @property
    def origin(self) -> str:
        """The ranked result a linked one was reached from."""
        return self.result.path[0] if self.result.path else ""


def recorded_results(agent_memory: AgentMemory, event: ActivityEvent) -> list[RecordedResult]:
    """The event's results in the order the caller got them, each with its record today."""
    states = current_states(agent_memory, event.results)
    return [RecordedResult(result, states[result.record_id]) for result in event.results]


# --- Replay ---------------------------------------------------------------------------------------

REPLAYED_CALLS = ("AgentMemory.search", "Thread.search", "Thread.get_context_card", "Thread.get_summary")
"""The calls Replay makes again (a search on the store itself is the store's: the log keeps no query
vector of it; writes are not replayed)."""


@dataclass(frozen=True)
class Reason:
    """Why a record entered, left or moved: words, and the records they name (linked on the page),
    or the history entry a deleted record can be restored from."""

    text: str
    records: tuple[Now, ...] = ()
    entry: CurationEntry | None = None


@dataclass(frozen=True)
class ReplayRow:
    """A ranked result of the call then, now, or both: `change` is "entered", "left", "moved" or
    "same"; ranks are 1-based, None where it is not a result."""

    now: Now
    change: str
    rank_then: int | None
    rank_now: int | None
    scores_then: Mapping[str, Any]
    scores_now: Mapping[str, Any]
    reasons: tuple[Reason, ...] = ()

    @property
    def places_up(self) -> int:
        """How many places it moved up (negative: down); 0 unless it moved."""
        if self.rank_then is None or self.rank_now is None:
            return 0
        return self.rank_then - self.rank_now

    @property
    def places_down(self) -> int:
        return -self.places_up

    @property
    def score_changes(self) -> list[tuple[str, str, str, str]]:
        """(label, meaning, then, now) of each score part either side had."""
        then = {part.label: part for part in score_parts(self.scores_then)}
        now = {part.label: part for part in score_parts(self.scores_now)}
        rows = []
        for _, label, meaning, _ in SCORE_PARTS:
            if label in then or label in now:
                rows.append(
                    (
                        label,
                        meaning,
                        then[label].value if label in then else "—",
                        now[label].value if label in now else "—",
                    )
                )
        return rows


@dataclass(frozen=True)
class Replay:
    """A recorded retrieval made again today (unrecorded), beside the recorded one. `refusal` says
    why it could not be made (then nothing else is set); `rows` are today's ranked results in their
    order, then those that left, in their order then; linked records (reached through links, not
    ranked) are compared as sets."""

    event: ActivityEvent
    refusal: str = ""
    rows: tuple[ReplayRow, ...] = ()
    linked_entered: tuple[Now, ...] = ()
    linked_left: tuple[Now, ...] = ()
    content: str = ""
    tokens: int = 0

    @property
    def result_count(self) -> int:
        """Today's ranked results."""
        return sum(1 for row in self.rows if row.rank_now is not None)

    def of(self, change: str) -> list[ReplayRow]:
        return [row for row in self.rows if row.change == change]

    @property
    def entered(self) -> list[ReplayRow]:
        return self.of("entered")

    @property
    def left(self) -> list[ReplayRow]:
        return self.of("left")

    @property
    def moved(self) -> list[ReplayRow]:
        return self.of("moved")

    @property
    def same_text(self) -> bool:
        """Whether the text handed back today is the text recorded (as far as the log kept it)."""
        kept = self.event.content
        return self.content[: len(kept)] == kept and (self.event.truncated or len(self.content) == len(kept))

    @property
    def unchanged(self) -> bool:
        return (
            not (self.entered or self.left or self.moved or self.linked_entered or self.linked_left) and self.same_text
        )


@dataclass(frozen=True)
class Ranked:
    """A result of today's call, reduced to what the comparison needs."""

    record_id: str
    record_type: str
    scores: Mapping[str, Any]
    version: int


def replay(agent_memory: AgentMemory, event: ActivityEvent) -> Replay:
    """Make the recorded call again with its recorded parameters, unrecorded, and compare."""
    if event.call not in REPLAYED_CALLS:
        what = "a write" if event.kind == "write" else f"{event.call}"
        return Replay(event, refusal=f"Replay makes searches, context cards and summaries again; this call is {what}.")
    try:
        with unrecorded():
            answer = call_again(agent_memory, event)
    except LookupError as error:
        return Replay(event, refusal=str(error.args[0]) if error.args else "What this call names is gone.")
    except (ValueError, TypeError) as error:
        return Replay(event, refusal=f"The engine refuses these parameters today: {error}")
    if event.kind == "summary":
        return Replay(event, content=answer.formatted_content, tokens=estimate_tokens(answer.formatted_content))
    results = answer if isinstance(answer, list) else list(answer.results)
    if isinstance(answer, list):
        content = "\n".join(result.formatted_content for result in results)
        tokens = sum(estimate_tokens(result.formatted_content) for result in results)
    else:
        content, tokens = answer.formatted_content, estimate_tokens(answer.formatted_content)
    ranked_now = [
        Ranked(
            result.record.id,
            result.record.record_type,
            {"distance": float(result.distance), **result.scores},
            result.record.version,
        )
        for result in results
    ]
    linked_now = dict(pair for result in results for pair in linked_records(result))
    return compare(agent_memory, event, ranked_now, linked_now, content, tokens)


class ThreadGone(LookupError):
    pass


def call_again(agent_memory: AgentMemory, event: ActivityEvent) -> Any:
    """The recorded call made again with its recorded parameters: search results, a ContextCard or
    a Summary. ThreadGone when the thread it was made on is deleted."""
    request = dict(event.request)
    if event.call == "AgentMemory.search":
        return agent_memory.search(**request)
    thread_id = event.scope.get("thread_id")
    try:
        thread = agent_memory.get_thread(str(thread_id))
    except KeyError:
        raise ThreadGone(f"The thread {thread_id} was deleted since: this call cannot be made today.") from None
    if event.call == "Thread.search":
        return thread.search(**request)
    if event.call == "Thread.get_context_card":
        # A preview: the recorded call may have refreshed the summary; this one asks the LLM nothing.
        return thread.get_context_card(**{**request, "refresh_summary_if_due": False})
    return thread.get_summary(**request)


def linked_records(result: Any) -> Iterable[tuple[str, str]]:
    """(id, record type) of each record reached through a result's links, depth first."""
    for _, child in result.linked_results:
        yield child.record.id, child.record.record_type
        yield from linked_records(child)


def compare(
    agent_memory: AgentMemory,
    event: ActivityEvent,
    ranked_now: list[Ranked],
    linked_now: dict[str, str],
    content: str,
    tokens: int,
) -> Replay:
    ranked_then = [result for result in event.results if result.hop == 0]
    then_rank = {result.record_id: result.rank or i for i, result in enumerate(ranked_then, 1)}
    then_by_id = {result.record_id: result for result in ranked_then}
    now_rank = {item.record_id: rank for rank, item in enumerate(ranked_now, 1)}
    linked_then = list(dict.fromkeys(result.record_id for result in event.results if result.hop > 0))
    everything = [
        *event.results,
        *(ActivityResult(item.record_id, item.record_type) for item in ranked_now if item.record_id not in then_by_id),
        *(ActivityResult(record_id, kind) for record_id, kind in linked_now.items() if record_id not in linked_then),
    ]
    states = current_states(agent_memory, everything)
    entered_ids = [item.record_id for item in ranked_now if item.record_id not in then_rank]
    left_ids = [result.record_id for result in ranked_then if result.record_id not in now_rank]
    since = parse_time(event.time)
    rows = []
    for item in ranked_now:
        then = then_by_id.get(item.record_id)
        now = states[item.record_id]
        if then is None:
            reasons = entered_because(agent_memory, now, since, [states[i] for i in left_ids])
            rows.append(ReplayRow(now, "entered", None, now_rank[item.record_id], {}, item.scores, reasons))
            continue
        change = "same" if then_rank[item.record_id] == now_rank[item.record_id] else "moved"
        rows.append(
            ReplayRow(
                now,
                change,
                then_rank[item.record_id],
                now_rank[item.record_id],
                then.scores,
                item.scores,
                kept_because(
                    now,
                    then,
                    item.scores,
                    (then_rank[item.record_id], now_rank[item.record_id]),
                    entered_above=[states[i] for i in entered_ids if now_rank[i] < now_rank[item.record_id]],
                    left_above=[states[i] for i in left_ids if then_rank[i] < then_rank[item.record_id]],
                ),
            )
        )
    for record_id in left_ids:
        then, now = then_by_id[record_id], states[record_id]
        reasons = left_because(now, then, [states[i] for i in entered_ids], event)
        rows.append(ReplayRow(now, "left", then_rank[record_id], None, then.scores, {}, reasons))
    return Replay(
        event,
        rows=tuple(rows),
        linked_entered=tuple(states[i] for i in linked_now if i not in linked_then),
        linked_left=tuple(states[i] for i in linked_then if i not in linked_now),
        content=content,
        tokens=tokens,
    )


def parse_time(value: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if value else None
    except ValueError:
        return None


def invalid_because(now: Now) -> Reason:
    """Why a memory is invalid today: the links that retire it (naming the memories at their
    other end), or its own status."""
    if now.retired_by:
        words = " and ".join(dict.fromkeys(retirement.words for retirement in now.retired_by))
        ends = tuple(Now(item.link.source_record_id, item.link.source_record_type, item.by) for item in now.retired_by)
        return Reason(f"now invalid: {words}", records=ends)
    return Reason("now invalid: its own status was set to invalid")


def edited_words(now: Now) -> str:
    return f"edited since (version {now.version_then} → {now.record.version})"


def left_because(now: Now, then: ActivityResult, entered: list[Now], event: ActivityEvent) -> tuple[Reason, ...]:
    """Why a record the call returned is not returned today."""
    if now.gone:
        return (Reason("deleted since", entry=now.deleted_in),)
    reasons = []
    if now.invalid and (then.status != "invalid" or now.retired_by):
        reasons.append(invalid_because(now))
        if event.request.get("include_invalid_results") is False:
            return tuple(reasons)  # the call leaves invalid results out: that alone is why
    if now.edited:
        reasons.append(Reason(edited_words(now) + ": its score changed"))
    if entered:
        reasons.append(Reason("outranked by what entered", records=tuple(entered)))
    elif not reasons:
        reasons.append(Reason("ranks below the last result now: the records above it changed"))
    return tuple(reasons)


def entered_because(agent_memory: AgentMemory, now: Now, since: datetime | None, left: list[Now]) -> tuple[Reason, ...]:
    """Why a record the call did not return is returned today: new, written since (the log's own
    writes), or taking the place of what left."""
    record = now.record
    created = parse_time(getattr(record, "created_at", None)) if record is not None else None
    if created is not None and since is not None and created > since:
        return (Reason("new since: created after the call"),)
    reasons = []
    if since is not None:
        writes = agent_memory.list_activity(
            kind="write", record_id=now.record_id, since=since.isoformat(), limit=20, include_content=False
        )
        operations = list(dict.fromkeys(str(event.request.get("operation", "")) for event in writes))
        if "update" in operations:
            reasons.append(Reason("edited since the call"))
        if {"link", "relink", "unlink"} & set(operations):
            reasons.append(Reason("its links changed since the call"))
        if "restore" in operations:
            reasons.append(Reason("restored since the call"))
    if not reasons:
        if left:
            reasons.append(Reason("took the place of what left", records=tuple(left)))
        else:
            reasons.append(Reason("ranks higher now: the records around it changed"))
    return tuple(reasons)


def kept_because(
    now: Now,
    then: ActivityResult,
    scores_now: Mapping[str, Any],
    ranks: tuple[int, int],
    *,
    entered_above: list[Now],
    left_above: list[Now],
) -> tuple[Reason, ...]:
    """Why a record returned both then and now moved (`ranks`: then, now), and what changed
    about it: edited, invalid since; its score parts beside say the rest."""
    reasons = []
    if now.edited:
        reasons.append(Reason(edited_words(now)))
    if now.invalid and then.status != "invalid":
        reasons.append(invalid_because(now))
    rank_then, rank_now = ranks
    if rank_now > rank_then and entered_above:
        reasons.append(Reason("pushed down by what entered above it", records=tuple(entered_above)))
    elif rank_now < rank_then and left_above:
        reasons.append(Reason("moved up: what ranked above it left", records=tuple(left_above)))
    elif rank_now != rank_then and not reasons:
        own = score_parts(then.scores) != score_parts(scores_now)
        reasons.append(Reason("its scores changed" if own else "the records around it changed"))
    return tuple(reasons)


@dataclass(frozen=True)
class WriteSummary:
    """What a write event did, in words: its operation, and how many records (the log keeps up to
    a thousand of a bulk write, `result_count` the whole number)."""

    operation: str
    detail: dict[str, Any] = field(default_factory=dict)
    count_words: str = ""


def write_summary(event: ActivityEvent) -> WriteSummary:
    request = dict(event.request)
    operation = str(request.pop("operation", ""))
    return WriteSummary(operation, request, plural(event.result_count, "record"))
