"""The argument rules every store shares (spec §3; DECISIONS D3, D4): the checks and normal
forms of ids, record types, counts, versions, vectors, listing cursors and filters, and of the
requests of searches, graphs and duplicate scans, with their defaults and bounds.

They live here, not in a backend, so that every backend refuses the same bad input with the same
message. The writes' arguments become plans in stores/plans.py.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..filters import parse_filter
from ..graph import check_label
from ..limits import (
    MAX_INT,
    MAX_SEARCH_TEXT_CHARS,
    check_id,
    check_id_text,
    check_int_range,
    check_length,
)
from ..scope import SearchScope, check_scope_value, resolve_store_scope
from ..ttl import normalize_timestamp
from ..types import (
    MEMORY_TYPES,
    NOT_SET,
    SEARCHABLE_TYPES,
    USER_PROFILE_TYPE,
    RecordStatus,
    SearchStrategy,
    StaleVersionError,
    ThreadRecord,
)

DEFAULT_BATCH_SIZE = 500
DEFAULT_LIST_LIMIT = 100
MAX_HOPS = 5
DEFAULT_GRAPH_NODES = 2000
MAX_GRAPH_NODES = 10_000
DEFAULT_LINKED_OWNERS = 10
"""linked_owners' default limit: the starting points a graph page offers."""
DEFAULT_DUPLICATE_DISTANCE = 0.25
"""find_duplicates' default threshold (cosine distance): rewordings of one fact with the local
hashing embedder fall within it (0.1-0.21: "Alice is vegetarian." and "Alice is a vegetarian."),
different facts of one topic do not (0.45 and beyond)."""
MAX_DUPLICATE_DISTANCE = 0.5
"""Beyond it, "near-duplicate" means related at best, and the pairs grow towards all of them."""
DEFAULT_DUPLICATE_GROUPS = 100
MAX_DUPLICATE_GROUPS = 1000


def kind_of(record_type: str) -> str:
    """The id namespace of a record type: memory-like types share one, so an id names one memory."""
    return "memory" if record_type in MEMORY_TYPES else record_type


def check_record_type(record_type: Any, allowed: Sequence[str] = SEARCHABLE_TYPES) -> str:
    if not isinstance(record_type, str) or record_type not in allowed:
        raise ValueError(f"record_type must be one of {', '.join(allowed)}; got {record_type!r}")
    return record_type


def check_record_types(record_types: Any, allowed: Sequence[str] = SEARCHABLE_TYPES) -> tuple[str, ...]:
    """A type or a collection of types; an empty collection is refused rather than matching nothing."""
    if isinstance(record_types, str):
        return (check_record_type(record_types, allowed),)
    if not isinstance(record_types, (list, tuple, set, frozenset)) or not record_types:
        raise ValueError(f"record_types must be a non-empty collection of record types, not {record_types!r}")
    return tuple(sorted({check_record_type(t, allowed) for t in record_types}))


def check_positive_int(name: str, value: Any, *, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer{' or None' if allow_none else ''}, not {value!r}")
    check_int_range(name, value)


def expected_version_of(value: Any) -> int | None:
    """`expected_version`: NOT_SET (no check, None) or a non-negative integer, 0 standing for
    "no such row yet" (a profile that must not exist when it is written)."""
    if value is NOT_SET:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"expected_version must be a non-negative integer, not {value!r}")
    check_int_range("expected_version", value)
    return value


def check_version(what: str, expected: int | None, stored: Any) -> None:
    """The compare of a compare-and-set, inside the write: refuse (StaleVersionError) a row whose
    stored version (None: no row, which is version 0) is not the one the caller read."""
    if expected is not None and expected != (0 if stored is None else int(stored)):
        raise StaleVersionError(what, expected, None if stored is None else int(stored))


def check_hops(num_hops: Any, max_linked_results: Any) -> None:
    if isinstance(num_hops, bool) or not isinstance(num_hops, int) or not 0 <= num_hops <= MAX_HOPS:
        raise ValueError(f"num_hops must be an integer from 0 to {MAX_HOPS}, not {num_hops!r}")
    if isinstance(max_linked_results, bool) or not isinstance(max_linked_results, int) or max_linked_results < 0:
        raise ValueError(f"max_linked_results must be a non-negative integer, not {max_linked_results!r}")
    check_int_range("max_linked_results", max_linked_results)


def to_matrix(values: Any, count: int, dim: int, name: str = "embeddings") -> np.ndarray:
    """A (count, dim) float32 matrix from an array or a list of vectors, checked as a whole."""
    if not isinstance(values, np.ndarray) and (not isinstance(values, (list, tuple)) or len(values) != count):
        raise ValueError(f"{name} must be a list with one vector per content ({count})")
    try:
        matrix = np.asarray(values, dtype=np.float32)
    except (TypeError, ValueError):
        matrix = None
    if matrix is None or matrix.shape != (count, dim):
        # Name the first offending vector rather than report a shape the caller never wrote.
        for i, value in enumerate(values):
            to_vector(value, dim, f"{name}[{i}]")
        raise ValueError(f"{name} must hold {count} vectors of dimension {dim}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return matrix


def to_vector(value: Any, dim: int, name: str = "embedding") -> np.ndarray:
    try:
        vector = np.asarray(value, dtype=np.float32)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a sequence of numbers") from None
    if vector.ndim != 1 or vector.shape[0] != dim:
        raise ValueError(f"{name} has dimension {vector.shape[-1] if vector.ndim else 0}; the store holds {dim}")
    if not np.all(np.isfinite(vector)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return vector


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """Unit-length rows (zero rows stay zero), so cosine similarity is a dot product."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    positive = norms > 0
    if positive.all():  # no zero row: a plain division, in half the time of a masked one
        return (matrix / norms).astype(np.float32, copy=False)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=positive).astype(np.float32, copy=False)


def dump_parts(parts: Any, name: str = "content_parts") -> str | None:
    if parts is None:
        return None
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        raise ValueError(f"{name} must be a list of part dicts or None")
    return json.dumps(parts, ensure_ascii=False, separators=(",", ":"))


def encode_cursor(*values: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode().rstrip("=")


def decode_cursor(cursor: Any, types: tuple[type, ...]) -> list:
    """Decode a listing cursor holding the sort key of a row, one value of each of `types` (str, or
    int: 64-bit), which are bound as they are; a damaged or foreign one is a ValueError."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        values = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (TypeError, ValueError, AttributeError, RecursionError):
        raise ValueError(f"invalid cursor: {cursor!r}") from None
    if (
        not isinstance(values, list)
        or len(values) != len(types)
        or not all(
            type(value) is kind and (kind is not int or -MAX_INT - 1 <= value <= MAX_INT)
            for value, kind in zip(values, types, strict=False)
        )
    ):
        raise ValueError(f"invalid cursor: {cursor!r}")
    return values


@dataclass
class SearchRequest:
    """A store search's arguments, checked and resolved: what every backend searches with."""

    query: str | None
    scope: Any  # scope.ScopeFilter
    types: tuple[str, ...]
    tree: Any  # filters.Contains | None
    vector: np.ndarray | None
    strategy: SearchStrategy
    created_at_or_before: str | None = None
    """Canonical UTC text: only records created at or before it (None: no such filter)."""


def check_search(
    query: Any,
    k: Any,
    query_vector: Any,
    scope: SearchScope,
    record_types: Any,
    metadata_filter: Any,
    num_hops: Any,
    max_linked_results: Any,
    include_invalid_results: Any,
    vector_dim: int,
    strategy: SearchStrategy,
    created_at_or_before: Any = NOT_SET,
) -> SearchRequest:
    """The checks and resolution every store's `search` starts with (spec §3.3.9)."""
    check_positive_int("k", k)
    if (query is None) == (query_vector is None):
        raise ValueError("pass exactly one of query and query_vector")
    if query is not None and not isinstance(query, str):
        raise ValueError(f"query must be a string, not {type(query).__name__}")
    check_hops(num_hops, max_linked_results)
    if not isinstance(include_invalid_results, bool):
        raise ValueError("include_invalid_results must be True or False")
    return SearchRequest(
        query=query,
        scope=resolve_store_scope(scope),
        types=SEARCHABLE_TYPES if record_types is None else check_record_types(record_types),
        tree=parse_filter(metadata_filter),
        vector=to_vector(query_vector, vector_dim, "query_vector") if query_vector is not None else None,
        strategy=strategy if query is not None else SearchStrategy.VECTOR,
        created_at_or_before=(
            None
            if created_at_or_before is NOT_SET
            else normalize_timestamp(created_at_or_before, "created_at_or_before")
        ),
    )


def check_relation_selector(relation_id: Any, endpoint: tuple[Any, ...]) -> None:
    """delete_record_link selects by relation_id alone, or by the complete stored-direction tuple."""
    if relation_id is not NOT_SET:
        if any(value is not NOT_SET for value in endpoint):
            raise ValueError("select the link by relation_id alone, or by its complete tuple, not both")
    elif any(value is NOT_SET for value in endpoint):
        raise ValueError(
            "select the link by relation_id, or by source_record_id, source_record_type, target_record_id, "
            "target_record_type and relation_type together"
        )
    else:
        source_id, source_type, target_id, target_type, relation_type = endpoint
        check_link_end("source", source_id, source_type)
        check_link_end("target", target_id, target_type)
        check_label("relation_type", relation_type)


def check_profile(record_type: str, owner_id: Any, information: Any) -> str:
    """Check add_user/add_agent's arguments; returns the owner's scope column."""
    name = "user_id" if record_type == USER_PROFILE_TYPE else "agent_id"
    check_scope_value(name, owner_id)
    if not isinstance(owner_id, str):
        raise ValueError(f"{name} must be a string")
    if not isinstance(information, str):
        raise ValueError(f"information must be a string, not {type(information).__name__}")
    check_length("information", information)
    return name


def storable_id(record_id: str) -> bool:
    """Whether a record could have this id (within the id limits): a lookup of any other finds
    nothing without asking the database, which might refuse so long a bind (Oracle)."""
    try:
        check_id_text("record_id", record_id)
    except ValueError:
        return False
    return bool(record_id)


def check_link_end(name: str, record_id: Any, record_type: Any) -> None:
    """The arguments of one end of a new link, before the store looks the memory up."""
    check_record_type(record_type, MEMORY_TYPES)
    check_id(f"{name}_record_id", record_id)


def check_link_end_found(
    name: str, record_id: str, record_type: str, found: Mapping[str, Any] | None, thread_id: Any
) -> None:
    """One end of a new link as stored (`found`: its record_type and thread_id, or None)."""
    if found is None:
        raise ValueError(f"no memory {record_id!r} to link ({name})")
    if found["record_type"] != record_type:
        raise ValueError(f"memory {record_id!r} is a {found['record_type']}, not a {record_type}")
    if thread_id is not NOT_SET and found["thread_id"] != thread_id:
        raise ValueError(f"memory {record_id!r} does not belong to thread {thread_id!r}")


class ThreadSource(Protocol):
    """What thread_named reads: a store's get_thread (MemoryStore.get_thread)."""

    def get_thread(self, thread_id: str) -> ThreadRecord | None: ...


def thread_named(store: ThreadSource, thread_id: str, name: str = "thread_id") -> ThreadRecord:
    """The stored thread a new record names; a ValueError when there is none. add() itself makes
    a bare thread for an id it does not know (an agent's first message starts its thread), but
    what people and files bring — the dashboard's and the API's new memories and images, an
    import's records — must name a thread that exists, so that a mistyped or missing thread id is
    refused instead of becoming a new, empty thread. One rule for all of them, here."""
    thread = store.get_thread(thread_id)
    if thread is None:
        raise ValueError(f"{name} names no thread: {thread_id!r}")
    return thread


@dataclass(frozen=True)
class DeleteScope:
    """What one delete_thread, or cascading delete_user/delete_agent, would remove: the thread, or
    the owner's profile, records, threads and those threads' records (column: thread_id, user_id
    or agent_id)."""

    column: str
    owner_id: str


def delete_scope(thread_id: Any, user_id: Any, agent_id: Any) -> DeleteScope | None:
    """stats()/snapshot()'s scope arguments: at most one of them (None: the whole store)."""
    given = [(name, value) for name, value in (("thread_id", thread_id), ("user_id", user_id), ("agent_id", agent_id))]
    given = [(name, value) for name, value in given if value is not NOT_SET]
    if len(given) > 1:
        raise ValueError("pass at most one of thread_id, user_id and agent_id")
    if not given:
        return None
    name, value = given[0]
    return DeleteScope(name, check_id(name, value))


LIKE_ESCAPE = "\\"


def like_pattern(text: Any) -> str | None:
    """A listing's `text` filter as a LIKE pattern matching it as a substring, in lower case, with
    LIKE's wildcards escaped (a % or _ in the text matches only itself); None for no filter
    (NOT_SET or ''). Bound as a parameter: a text never reaches SQL."""
    if text is NOT_SET:
        return None
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, not {type(text).__name__}")
    check_length("text", text, MAX_SEARCH_TEXT_CHARS)
    if "\x00" in text:
        raise ValueError("text must not contain NUL characters")
    try:
        text.encode()
    except UnicodeEncodeError:
        raise ValueError("text is not valid Unicode text") from None
    if not text:
        return None
    escaped = "".join(LIKE_ESCAPE + char if char in ("%", "_", LIKE_ESCAPE) else char for char in text.lower())
    return f"%{escaped}%"


def listing_status(status: Any) -> str | None:
    """list()'s `status`: "valid", "invalid" (effective status; RecordStatus members too),
    "expired", or NOT_SET (None: no filter)."""
    if status is NOT_SET:
        return None
    if not isinstance(status, str) or status not in ("valid", "invalid", "expired"):
        raise ValueError(f"status must be 'valid', 'invalid' or 'expired', not {status!r}")
    return str(status.value if isinstance(status, RecordStatus) else status)


@dataclass(frozen=True)
class GraphRequest:
    """memory_graph's arguments, checked: the scope column and value, or the centre memory."""

    scope: tuple[str, str] | None
    centre: str | None
    hops: int
    relation_types: tuple[str, ...] | None
    memory_types: tuple[str, ...]
    statuses: frozenset[str]
    max_nodes: int


def relation_type_list(relation_types: Any) -> tuple[str, ...] | None:
    """A `relation_types` filter (one label, or a non-empty list of them) as sorted distinct
    labels; None when it is omitted (NOT_SET or None). ValueError naming it otherwise."""
    if relation_types is NOT_SET or relation_types is None:
        return None
    labels = (relation_types,) if isinstance(relation_types, str) else relation_types
    if not isinstance(labels, (list, tuple, set, frozenset)) or not labels:
        raise ValueError(f"relation_types must be a relation type or a non-empty list of them, not {relation_types!r}")
    for label in labels:
        check_label("relation_types", label)
    return tuple(sorted(set(labels)))


def graph_request(
    *,
    user_id: Any,
    agent_id: Any,
    thread_id: Any,
    memory_id: Any,
    hops: Any,
    relation_types: Any,
    memory_types: Any,
    statuses: Any,
    max_nodes: Any,
) -> GraphRequest:
    """Check memory_graph's arguments (ValueError naming the first bad one)."""
    given = {
        name: value
        for name, value in (
            ("user_id", user_id),
            ("agent_id", agent_id),
            ("thread_id", thread_id),
            ("memory_id", memory_id),
        )
        if value is not NOT_SET
    }
    if len(given) != 1:
        raise ValueError(
            f"pass exactly one of user_id, agent_id, thread_id and memory_id, not {sorted(given) or 'none'}"
        )
    [(name, value)] = given.items()
    check_id(name, value)
    if isinstance(hops, bool) or not isinstance(hops, int) or not 0 <= hops <= MAX_HOPS:
        raise ValueError(f"hops must be an integer from 0 to {MAX_HOPS}, not {hops!r}")
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or not 1 <= max_nodes <= MAX_GRAPH_NODES:
        raise ValueError(f"max_nodes must be an integer from 1 to {MAX_GRAPH_NODES:,}, not {max_nodes!r}")
    labels = relation_type_list(relation_types)
    centre = value if name == "memory_id" else None
    return GraphRequest(
        scope=None if centre is not None else (name, value),
        centre=centre,
        hops=hops,
        relation_types=labels,
        memory_types=memory_type_list(memory_types),
        statuses=status_set(statuses),
        max_nodes=max_nodes,
    )


def memory_type_list(memory_types: Any) -> tuple[str, ...]:
    """A `memory_types` filter (a type or a list of them) as sorted types; omitted (NOT_SET or
    None): every memory type."""
    if memory_types is NOT_SET or memory_types is None:
        return MEMORY_TYPES
    try:
        return check_record_types(memory_types, MEMORY_TYPES)
    except ValueError as error:  # said with this argument's name ("record_type must be…" names another)
        raise ValueError(f"memory_types: {error}") from None


def status_set(statuses: Any) -> frozenset[str]:
    """A `statuses` filter ("valid", "invalid" or a non-empty list of them: effective statuses)
    as a set; omitted (NOT_SET or None): both."""
    wanted = frozenset(("valid", "invalid"))
    if statuses is NOT_SET or statuses is None:
        return wanted
    values = (statuses,) if isinstance(statuses, str) else statuses
    if not isinstance(values, (list, tuple, set, frozenset)) or not values:
        raise ValueError(f"statuses must be 'valid', 'invalid' or a non-empty list of them, not {statuses!r}")
    for status in values:
        if not isinstance(status, str) or status not in wanted:
            raise ValueError(f"statuses must be 'valid', 'invalid' or a non-empty list of them, not {statuses!r}")
    return frozenset(str(RecordStatus(status).value) for status in values)


@dataclass(frozen=True)
class DuplicatesRequest:
    """find_duplicates' arguments, checked (memory_types and statuses as memory_graph's)."""

    user_id: str
    max_distance: float
    memory_types: tuple[str, ...]
    statuses: frozenset[str]
    limit: int


def duplicates_request(
    *, user_id: Any, max_distance: Any, memory_types: Any, statuses: Any, limit: Any
) -> DuplicatesRequest:
    """Check find_duplicates' arguments (ValueError naming the first bad one)."""
    check_id("user_id", user_id)
    if (
        isinstance(max_distance, bool)
        or not isinstance(max_distance, (int, float))
        or not 0 <= max_distance <= MAX_DUPLICATE_DISTANCE  # also refuses NaN
    ):
        raise ValueError(f"max_distance must be a number from 0 to {MAX_DUPLICATE_DISTANCE}, not {max_distance!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_DUPLICATE_GROUPS:
        raise ValueError(f"limit must be an integer from 1 to {MAX_DUPLICATE_GROUPS:,}, not {limit!r}")
    return DuplicatesRequest(
        user_id=user_id,
        max_distance=float(max_distance),
        memory_types=memory_type_list(memory_types),
        statuses=status_set(statuses),
        limit=limit,
    )


def owner_id_list(name: str, owner_ids: Any) -> list[str]:
    """A list of user (or agent) ids to look up: a sequence of ids, not one string, each checked
    (ValueError naming `name`), in order without repeats."""
    if isinstance(owner_ids, (str, bytes)) or not isinstance(owner_ids, Sequence):
        raise ValueError(f"{name} must be a list of ids, not {type(owner_ids).__name__}")
    return list(dict.fromkeys(check_id(f"{name}[{i}]", value) for i, value in enumerate(owner_ids)))


def memory_id_list(memory_ids: Any) -> list[str]:
    """A list of memory ids to look up (lifecycle): a sequence of strings, not one string; the
    ids no record could have (empty, or beyond the id limits) are dropped, as nothing has them."""
    if isinstance(memory_ids, (str, bytes)) or not isinstance(memory_ids, Sequence):
        raise ValueError(f"memory_ids must be a list of memory ids, not {type(memory_ids).__name__}")
    for i, memory_id in enumerate(memory_ids):
        if not isinstance(memory_id, str):
            raise ValueError(f"memory_ids[{i}] must be a string, not {type(memory_id).__name__}")
    return [memory_id for memory_id in dict.fromkeys(memory_ids) if storable_id(memory_id)]


def token_list(tokens: Any) -> list[str]:
    """The change tokens whose outcomes to read or forget: a sequence of ids, not one string."""
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Sequence):
        raise ValueError(f"tokens must be a list of tokens, not {type(tokens).__name__}")
    return [check_id(f"tokens[{i}]", token) for i, token in enumerate(tokens)]


def record_id_list(record_id: Any) -> list[str]:
    """list()'s `record_id`: one id or a list of them."""
    ids = [record_id] if isinstance(record_id, str) else record_id
    if not isinstance(ids, (list, tuple)) or not all(isinstance(i, str) for i in ids):
        raise ValueError(f"record_id must be a string or a list of strings, not {record_id!r}")
    return list(ids)


def check_owner_kind(owner: Any) -> str:
    """An owner kind, "user" or "agent", as its id column ("user_id", "agent_id")."""
    if not isinstance(owner, str) or owner not in ("user", "agent"):
        raise ValueError(f"owner must be 'user' or 'agent', not {owner!r}")
    return f"{owner}_id"
