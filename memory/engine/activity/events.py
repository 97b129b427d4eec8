"""What the activity log keeps of one call: ActivityEvent, and its results as the caller got them.

An event is built in the caller's thread from what the call returned (the ranked results with
their score parts, the text handed back) and written later by the recorder; nothing in it refers
to live objects, so that what an agent received stays as it was whatever happens to the records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

from ..search import SearchResult, estimate_tokens

RETRIEVAL_KINDS = ("search", "card", "summary")
"""The kinds of event that record what a caller read; "write" records what it changed."""
AUDIT_KINDS = ("view", "export")
"""The kinds of event that record a whole read for the audit: a record's page or its GET by id
("view"), a download of an export ("export"). They hold ids, scope and counts, never text."""
KINDS = (*RETRIEVAL_KINDS, "write", *AUDIT_KINDS)
CALLER_KINDS = ("agent", "person")
"""Who made a call: a program (an agent, a script, an API token) or a person at the dashboard."""
WRITE_OPERATIONS = ("add", "update", "delete", "link", "relink", "unlink", "restore", "purge", "summary")
"""What a write event did, in `request["operation"]`."""


_NO_SCORES: Mapping[str, float | int] = MappingProxyType({})


class ActivityResult(NamedTuple):
    """One record a call returned (in rank order) or changed, as it was at that moment.

    `rank` is the position the caller saw (1 = first; None for a write); a record reached through
    links has `hop` > 0 and `path`, the ids and link types from the ranked result that led to it.
    `scores` are the ranking's parts (vector_distance, vector_rank, keyword_score, keyword_rank,
    fused score, distance) and `tokens` the engine's estimate for the text it contributed.
    A named tuple: a search's event holds one per result, built on the recorder's thread, where
    each microsecond competes with the searches themselves.
    """

    record_id: str
    record_type: str
    rank: int | None = None
    status: str | None = None
    version: int | None = None
    scores: Mapping[str, float | int] = _NO_SCORES
    tokens: int = 0
    hop: int = 0
    path: Sequence[str] = ()

    def to_json(self) -> dict[str, Any]:
        """Every field, as the API shows it."""
        return {**self._asdict(), "scores": dict(self.scores), "path": list(self.path)}

    def stored(self) -> dict[str, Any]:
        """The fields that differ from their defaults: the log's form (from_json reads both)."""
        return {
            name: value
            for name, value, default in zip(self._fields, self, _DEFAULTS, strict=True)
            if value != default and value is not None
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> ActivityResult:
        return cls(
            record_id=str(value["record_id"]),
            record_type=str(value["record_type"]),
            rank=value.get("rank"),
            status=value.get("status"),
            version=value.get("version"),
            scores=dict(value.get("scores") or {}),
            tokens=int(value.get("tokens") or 0),
            hop=int(value.get("hop") or 0),
            path=tuple(value.get("path") or ()),
        )


_DEFAULTS = (None, None, *ActivityResult._field_defaults.values())
"""Each field's default in order (the two ids have none: they are always stored)."""


@dataclass(frozen=True)
class ActivityEvent:
    """One call of the engine, as its caller saw it.

    `kind` is one of KINDS; `call` names the entry point ("AgentMemory.search", "Thread.get_context_card",
    "MemoryStore.update", …); `scope` holds user_id, agent_id and thread_id as the call resolved them;
    `request` every parameter as passed (JSON-safe); `results` the records in the order returned;
    `content` the text handed back, cut at the configured cap (`content_chars` is its whole length);
    `cause` why the engine did it on its own (LLM extraction from messages, an automatic link, a
    summary refresh, a caption); `history_ref` the curation-history change a person's write belongs to.
    """

    id: str
    kind: str
    call: str
    time: str
    caller: str
    caller_kind: str = "agent"
    on_behalf_of: str | None = None
    scope: Mapping[str, str | None] = field(default_factory=dict)
    request: Mapping[str, Any] = field(default_factory=dict)
    results: Sequence[ActivityResult] = ()
    result_count: int = 0
    content: str = ""
    content_chars: int = 0
    tokens: int = 0
    duration_ms: float = 0.0
    cause: Mapping[str, Any] | None = None
    history_ref: str | None = None

    @property
    def query(self) -> str:
        """The query text of a search (or a card's, which searches by the thread's recent messages)."""
        value = self.request.get("query")
        return value if isinstance(value, str) else ""

    @property
    def retrieval(self) -> bool:
        """Whether the call was an agent's kind of read (a search, a card, a summary), with
        results ranked and text handed back; a write and an audit event have neither."""
        return self.kind in RETRIEVAL_KINDS

    @property
    def truncated(self) -> bool:
        """Whether `content` was cut at the configured cap."""
        return self.content_chars > len(self.content)


def search_results(results: Iterable[SearchResult], texts: Sequence[str] | None = None) -> list[ActivityResult]:
    """The results of a search in the order the caller got them, each linked record after the
    result that reached it (hop 1, 2, … with the link path). `texts`, the results' formatted_content
    when the caller has it already, spares formatting them again (most of an event's cost)."""
    flat: list[ActivityResult] = []
    for rank, result in enumerate(results, start=1):
        text = result.formatted_content if texts is None else texts[rank - 1]
        flat.append(_result(result, rank, 0, (), estimate_tokens(text)))
        _linked(result, rank, 1, (result.id or result.record.id,), flat)
    return flat


def _linked(parent: SearchResult, rank: int, hop: int, path: tuple[str, ...], flat: list[ActivityResult]) -> None:
    for relation, child in parent.linked_results:
        label = relation.label_from(parent.record.id)
        child_path = (*path, label, child.id or child.record.id)
        flat.append(_result(child, rank, hop, child_path, 0))
        _linked(child, rank, hop + 1, child_path, flat)


def _result(result: SearchResult, rank: int, hop: int, path: tuple[str, ...], tokens: int) -> ActivityResult:
    record = result.record
    return ActivityResult(
        record.id,
        record.record_type,
        rank,
        getattr(record, "status", None),
        getattr(record, "version", None),
        {"distance": float(result.distance), **result.scores},
        tokens,
        hop,
        path,
    )


def written_records(records: Iterable[tuple[str, str]], status: str | None = None) -> list[ActivityResult]:
    """The records a write touched, as (record_type, record_id) pairs."""
    return [
        ActivityResult(record_id=record_id, record_type=record_type, status=status)
        for record_type, record_id in records
    ]


def json_safe(value: Any, depth: int = 0) -> Any:
    """A parameter as JSON can hold it: containers walked (to a depth of 8), enums by value, other
    objects by their repr (a SearchScope, a strategy), so that a request is always storable."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if depth >= 8:
        return repr(value)
    if isinstance(value, Mapping):
        return {str(key): json_safe(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_safe(item, depth + 1) for item in value]
    enum_value = getattr(value, "value", None)
    if isinstance(enum_value, str | int):
        return enum_value
    return repr(value)


def tokens_of(results: Sequence[ActivityResult]) -> int:
    return sum(result.tokens for result in results)


@dataclass(frozen=True)
class ActivityCounts:
    """How many events a filtered log holds: per (caller, caller_kind), per kind, and per UTC day
    and caller (the timeline's chart), each sorted by count then name (days by day)."""

    total: int
    by_caller: Sequence[tuple[str, str, int]]
    by_kind: Mapping[str, int]
    by_day: Sequence[tuple[str, str, int]]


@dataclass(frozen=True)
class ServedRecord:
    """A record as retrievals served it since some time: how often (calls), by whom, and when last."""

    record_id: str
    record_type: str
    calls: int
    last_served: str
    by_caller: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ActivityHygiene:
    """What the log says about a store's memories since a day: the most served, those never
    served (created before that day), invalid ones still being served, and the slowest calls."""

    since: str
    most_served: Sequence[ServedRecord]
    never_served: Sequence[tuple[str, str, str]]
    """(record_id, record_type, created_at), oldest first."""
    never_served_total: int
    invalid_served: Sequence[ServedRecord]
    slowest: Sequence[ActivityEvent]
