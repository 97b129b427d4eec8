"""Records, messages, content parts, enumerations and configuration objects.

These are plain dataclasses with no behaviour beyond validation, so that every layer (stores,
threads, the client, the web app) can pass them around freely. Names follow DECISIONS.md D1/D12.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any

import numpy as np

from .limits import check_int_range

MEMORY_TYPES = ("memory", "fact", "guideline", "preference")
"""The memory-like record types: the only ones that links connect and extraction writes."""

MESSAGE_TYPE = "message"
IMAGE_TYPE = "image"
USER_PROFILE_TYPE = "user_profile"
AGENT_PROFILE_TYPE = "agent_profile"
PROFILE_TYPES = (USER_PROFILE_TYPE, AGENT_PROFILE_TYPE)
SEARCHABLE_TYPES = (MESSAGE_TYPE, *MEMORY_TYPES, IMAGE_TYPE, *PROFILE_TYPES)

SOURCE_MESSAGES_KEY = "source_message_ids"
"""The metadata key under which an extracted memory keeps the ids of the messages it came from
(a list, in thread order), in its own thread. Metadata rather than a column: it travels with the
memory through snapshots, export and import, and the metadata filter language finds the memories
of a message (`{"source_message_ids": {"$array_contains": id}}`) in SQL on every backend."""


class _NotSet:
    """The type of NOT_SET: "argument omitted", which many APIs treat differently from None."""

    _instance: _NotSet | None = None

    def __new__(cls) -> _NotSet:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NOT_SET"

    def __bool__(self) -> bool:
        # An omitted argument must never pass for a real value in a truth test.
        raise TypeError("NOT_SET has no truth value; compare with `is NOT_SET`")

    def __reduce__(self) -> str:
        return "NOT_SET"

    def __copy__(self) -> _NotSet:
        return self

    def __deepcopy__(self, memo: dict) -> _NotSet:
        return self


NOT_SET: Any = _NotSet()


class RecordStatus(StrEnum):
    VALID = "valid"
    INVALID = "invalid"


class StaleVersionError(ValueError):
    """The record changed since the version the caller read (`expected_version`): nothing was written."""

    def __init__(self, what: str, expected: int, actual: int | None) -> None:
        if actual is None:
            message = f"{what} no longer exists (expected version {expected})"
        else:
            message = f"{what} is at version {actual}, not {expected}: it changed since it was read"
        super().__init__(message)
        self.expected, self.actual = expected, actual


class SchemaPolicy(StrEnum):
    REQUIRE_EXISTING = "require_existing"
    CREATE_IF_EMPTY = "create_if_empty"
    CREATE_IF_NECESSARY = "create_if_necessary"
    RECREATE = "recreate"
    NO_CHECK = "no_check"


class TimeToLiveAnchor(StrEnum):
    CREATED_AT = "created_at"
    TIMESTAMP = "timestamp"


class SearchStrategy(StrEnum):
    VECTOR = "vector"
    HYBRID = "hybrid"
    KEYWORD = "keyword"


class ImageMimeType(StrEnum):
    """Values as the vendor page prints them; lookup ignores case, as MIME types do."""

    JPEG = "image/JPEG"
    PNG = "image/PNG"
    WEBP = "image/WEBP"

    @classmethod
    def _missing_(cls, value: object) -> ImageMimeType | None:
        if isinstance(value, str):
            for member in cls:
                if member.value.lower() == value.lower():
                    return member
        return None


class MemoryExtractionMode(StrEnum):
    """When a thread's LLM work runs: before `add_messages` returns, or on a background queue."""

    INLINE = "inline"
    BACKGROUND = "background"


class MemoryLinkExtractionMode(StrEnum):
    """How extracted memories get linked to existing ones (spec §6.6)."""

    DISABLED = "disabled"
    DURING_EXTRACTION = "during_extraction"
    POST_EXTRACTION = "post_extraction"


class BackgroundExtractionQueueFullBehavior(StrEnum):
    """What a write does when its background work finds the queue full (spec §4.3.1).

    DROP skips the work at once; WAIT_THEN_DROP waits up to the put timeout, then skips it;
    WAIT_THEN_RAISE waits, then raises TimeoutError. The raw write is kept in every case.
    """

    DROP = "drop"
    WAIT_THEN_DROP = "wait_then_drop"
    WAIT_THEN_RAISE = "wait_then_raise"


class MemoryExtractionImageContext(StrEnum):
    """What the extraction LLM sees of a message's images.

    DISABLED: a placeholder only; CAPTION: each image's description; IMAGE: the images themselves,
    within ImageInputLimitConfig's per-request limits (the rest as captions); MEMORY: captions,
    and the LLM is asked to remember what the images show.
    """

    DISABLED = "disabled"
    IMAGE = "image"
    CAPTION = "caption"
    MEMORY = "memory"


def check_bool(name: str, value: Any) -> bool:
    """A flag argument: True or False, nothing else (not even NOT_SET, which has no truth value)."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, not {value!r}")
    return value


def coerce_enum(enum_type: type[Enum], value: Any, name: str) -> Any:
    """Accept an enum member or its value (the SDK takes `SchemaPolicy | str`); else ValueError."""
    try:
        return enum_type(value)
    except ValueError:
        allowed = ", ".join(repr(m.value) for m in enum_type)  # type: ignore[attr-defined]
        raise ValueError(f"{name} must be one of {allowed}, not {value!r}") from None


@dataclass(frozen=True)
class MemoryRetentionConfig:
    """Store-wide lifetime rules (spec §1.4).

    `default_ttl_days` is the lifetime of a record whose `ttl_days` is omitted; `max_ttl_days`
    caps every lifetime and is what an explicit `ttl_days=None` means when it is set.
    """

    default_ttl_days: int | None = None
    max_ttl_days: int | None = None

    def __post_init__(self) -> None:
        for name in ("default_ttl_days", "max_ttl_days"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive integer or None, not {value!r}")


MIB = 1024 * 1024


@dataclass(frozen=True)
class ImageInputLimitConfig:
    """Limits on images (D9). Validation is always on; only the limits can be changed.

    `max_raw_image_bytes` and `max_image_pixels` (our addition: width times height, which guards
    against images that are small on disk but huge once decoded) apply to every stored image;
    the per-request limits bound what an LLM request may carry.
    """

    max_raw_image_bytes: int = 10 * MIB
    max_images_per_llm_request: int = 100
    max_total_raw_image_bytes_per_llm_request: int = 100 * MIB
    max_image_pixels: int = 40_000_000

    def __post_init__(self) -> None:
        for name in (
            "max_raw_image_bytes",
            "max_images_per_llm_request",
            "max_total_raw_image_bytes_per_llm_request",
            "max_image_pixels",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        for name in ("max_raw_image_bytes", "max_total_raw_image_bytes_per_llm_request"):
            if getattr(self, name) > 256 * MIB:
                raise ValueError(f"{name} may be at most 256 MiB")


@dataclass(frozen=True)
class MemorySearchConfig:
    """Default token budgets of searches and context cards (spec §7.4); None or <= 0 disables."""

    token_budget: int | None = None
    soft_token_budget: int | None = None


_EXTRACTION_DEFAULTS: dict[str, Any] = {
    "extract_memories": True,
    "extraction_mode": MemoryExtractionMode.INLINE,
    "memory_extraction_frequency": -1,
    "memory_extraction_window": -1,
    "memory_extraction_token_limit": 30_000,
    "enable_context_summary": True,
    "context_summary_update_frequency": -1,
    "memory_extraction_custom_instructions": None,
    "memory_extraction_inherit_message_metadata": True,
    "memory_extraction_image_context": MemoryExtractionImageContext.DISABLED,
    "memory_link_extraction_mode": MemoryLinkExtractionMode.POST_EXTRACTION,
    "memory_link_extraction_custom_instructions": None,
    "memory_link_extraction_token_limit": 30_000,
    "background_extraction_queue_full_behavior": BackgroundExtractionQueueFullBehavior.WAIT_THEN_DROP,
    "background_extraction_queue_put_timeout_seconds": 300.0,
}

_EXTRACTION_ENUMS: dict[str, type[Enum]] = {
    "extraction_mode": MemoryExtractionMode,
    "memory_extraction_image_context": MemoryExtractionImageContext,
    "memory_link_extraction_mode": MemoryLinkExtractionMode,
    "background_extraction_queue_full_behavior": BackgroundExtractionQueueFullBehavior,
}


@dataclass(frozen=True, kw_only=True)
class MemoryExtractionConfig:
    """How a thread turns its messages into memories, a summary and links (spec §8, D9).

    Omitted fields take the defaults below, and a thread-level config overrides only the fields it
    sets: `AgentMemory(memory_extraction_config=MemoryExtractionConfig(extract_memories=False))`
    with `create_thread(memory_extraction_config=MemoryExtractionConfig(extract_memories=True))`
    extracts in that thread only, keeping the client's other choices. Frequencies and windows
    count messages, -1 meaning "once per add_messages call, over its whole batch"; token limits
    <= 0 disable truncation. Everything here needs an LLM, on the thread or on the client.
    """

    extract_memories: bool = NOT_SET  # type: ignore[assignment]
    extraction_mode: MemoryExtractionMode = NOT_SET  # type: ignore[assignment]
    memory_extraction_frequency: int = NOT_SET  # type: ignore[assignment]
    memory_extraction_window: int = NOT_SET  # type: ignore[assignment]
    memory_extraction_token_limit: int = NOT_SET  # type: ignore[assignment]
    enable_context_summary: bool = NOT_SET  # type: ignore[assignment]
    context_summary_update_frequency: int = NOT_SET  # type: ignore[assignment]
    memory_extraction_custom_instructions: str | None = NOT_SET  # type: ignore[assignment]
    memory_extraction_inherit_message_metadata: bool | Sequence[str] = NOT_SET  # type: ignore[assignment]
    memory_extraction_image_context: MemoryExtractionImageContext = NOT_SET  # type: ignore[assignment]
    memory_link_extraction_mode: MemoryLinkExtractionMode = NOT_SET  # type: ignore[assignment]
    memory_link_extraction_custom_instructions: str | None = NOT_SET  # type: ignore[assignment]
    memory_link_extraction_token_limit: int = NOT_SET  # type: ignore[assignment]
    background_extraction_queue_full_behavior: BackgroundExtractionQueueFullBehavior = NOT_SET  # type: ignore[assignment]
    background_extraction_queue_put_timeout_seconds: float = NOT_SET  # type: ignore[assignment]
    given: frozenset[str] = field(default=frozenset(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        given = set()
        for name, default in _EXTRACTION_DEFAULTS.items():
            value = getattr(self, name)
            if value is NOT_SET:
                value = default
            else:
                given.add(name)
                value = _check_extraction_field(name, value)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "given", frozenset(given))

    def to_settings(self) -> dict[str, Any]:
        """The explicitly set fields as JSON values; `MemoryExtractionConfig(**settings)` reads them back."""
        settings = {}
        for name in sorted(self.given):
            value = getattr(self, name)
            settings[name] = (
                value.value if isinstance(value, Enum) else list(value) if isinstance(value, tuple) else value
            )
        return settings

    def over(self, base: MemoryExtractionConfig | None) -> MemoryExtractionConfig:
        """This config's explicit fields laid over `base` (a client-level config)."""
        if base is None:
            return self
        fields = {name: getattr(base, name) for name in base.given}
        fields.update({name: getattr(self, name) for name in self.given})
        return MemoryExtractionConfig(**fields)


def _check_extraction_field(name: str, value: Any) -> Any:
    if name in _EXTRACTION_ENUMS:
        return coerce_enum(_EXTRACTION_ENUMS[name], value, name)
    if name in ("extract_memories", "enable_context_summary"):
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be True or False, not {value!r}")
    elif name.endswith(("_frequency", "_window", "_token_limit")):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be an integer, not {value!r}")
        check_int_range(name, value)
        if name in ("memory_extraction_frequency", "memory_extraction_window") and value == 0:
            raise ValueError(f"{name} must be a positive number of messages or -1, not 0")
    elif name.endswith("_instructions"):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{name} must be a string or None, not {type(value).__name__}")
    elif name == "memory_extraction_inherit_message_metadata":
        if isinstance(value, str) or not (
            isinstance(value, bool) or (isinstance(value, Sequence) and all(isinstance(k, str) for k in value))
        ):
            raise ValueError(f"{name} must be True, False or a list of metadata keys, not {value!r}")
        if not isinstance(value, bool):
            value = tuple(value)
    elif name == "background_extraction_queue_put_timeout_seconds":
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ValueError(f"{name} must be a non-negative number of seconds, not {value!r}")
        value = float(value)
    return value


# --- messages and content parts ------------------------------------------------------------


def new_id() -> str:
    return str(uuid.uuid4())


_HEX_DIGITS = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_UUID_DIGITS = np.array([i for i in range(36) if i not in (8, 13, 18, 23)])
"""Where a UUID string's 32 hex digits go; the dashes sit between bytes, so each byte's two
digits are _UUID_DIGITS[2k] and [2k + 1]."""


def new_ids(count: int) -> list[str]:
    """`count` random (version 4) UUID strings, built in bulk with NumPy: uuid4() per id, or
    formatting each id in Python, is a tenth of an ingest batch's Python time."""
    raw = np.frombuffer(os.urandom(16 * count), dtype=np.uint8).reshape(count, 16).copy()
    raw[:, 6] = (raw[:, 6] & 0x0F) | 0x40  # version 4
    raw[:, 8] = (raw[:, 8] & 0x3F) | 0x80  # RFC 4122 variant
    text = np.full((count, 36), ord("-"), dtype=np.uint8)
    text[:, _UUID_DIGITS[0::2]] = _HEX_DIGITS[raw >> 4]
    text[:, _UUID_DIGITS[1::2]] = _HEX_DIGITS[raw & 0x0F]
    joined = text.tobytes().decode("ascii")
    return [joined[start : start + 36] for start in range(0, 36 * count, 36)]


@dataclass(kw_only=True)
class MessageContent:
    id: str = field(default_factory=new_id)
    timestamp: str | None = None


@dataclass
class TextContent(MessageContent):
    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"TextContent.text must be a str, not {type(self.text).__name__}")


@dataclass
class ImageContent(MessageContent):
    bytes: bytes | None = None
    mime_type: ImageMimeType | None = None
    description: str | None = None


@dataclass
class Message:
    """A message as threads and LLM adapters exchange it (spec §9.1)."""

    role: str
    content: str | tuple[MessageContent, ...]
    timestamp: str | None = None
    metadata: dict[str, Any] | None = None
    id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.role, str) or not self.role:
            raise ValueError(f"Message.role must be a non-empty string, not {self.role!r}")
        if isinstance(self.content, str):
            return
        if not isinstance(self.content, Sequence) or isinstance(self.content, (bytes, bytearray)):
            raise TypeError("Message.content must be a str or a sequence of TextContent/ImageContent")
        parts = tuple(self.content)
        if not parts:
            raise ValueError("Message.content must not be an empty sequence")
        for part in parts:
            if not isinstance(part, (TextContent, ImageContent)):
                raise TypeError(f"Message.content parts must be TextContent or ImageContent, not {part!r}")
        self.content = parts

    @property
    def text(self) -> str:
        """The message's text: the string itself, or its text parts joined by newlines."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text for p in self.content if isinstance(p, TextContent))


# --- records --------------------------------------------------------------------------------


@dataclass(kw_only=True)
class Record:
    """A stored record. `timestamp` is the event time, or the creation time when none was given.

    `version` starts at 1 and grows by one whenever the stored row changes (an update, a change
    of the record's lifecycle-link count; for a thread: its metadata, settings, summary or topics),
    so that a writer can pass the version it read as `expected_version` and be refused
    (StaleVersionError) if someone changed the record meanwhile.
    """

    id: str
    record_type: str
    content: str = ""
    timestamp: str | None = None
    metadata: dict[str, Any] | None = None
    status: RecordStatus = RecordStatus.VALID
    created_at: str | None = None
    expires_at: str | None = None
    version: int = 1
    linked_results: list = field(default_factory=list)


@dataclass(kw_only=True)
class ScopedRecord(Record):
    thread_id: str | None = None
    user_id: str | None = None
    agent_id: str | None = None


@dataclass(kw_only=True)
class MemoryRecord(ScopedRecord):
    pass


@dataclass(kw_only=True)
class MessageRecord(ScopedRecord):
    """A stored message. `parts` describes structured content (text parts with their ids)."""

    role: str | None = None
    seq_no: int | None = None
    parts: list[dict[str, Any]] | None = None


@dataclass(kw_only=True)
class ImageRecord(ScopedRecord):
    """An image: `content` is its description (the searchable text), `bytes` None unless loaded."""

    record_type: str = IMAGE_TYPE
    message_id: str | None = None
    mime_type: ImageMimeType | None = None
    bytes: bytes | None = None


@dataclass(kw_only=True)
class ThreadRecord(ScopedRecord):
    """A thread: its scope, metadata, settings and activity. `updated_at` is its latest activity."""

    record_type: str = "thread"
    settings: dict[str, Any] = field(default_factory=dict)
    updated_at: str | None = None
    message_count: int = 0
    summary: str | None = None
    topics: list[str] | None = None


@dataclass(kw_only=True)
class UserProfileRecord(Record):
    record_type: str = USER_PROFILE_TYPE


@dataclass(kw_only=True)
class AgentProfileRecord(Record):
    record_type: str = AGENT_PROFILE_TYPE


@dataclass(kw_only=True)
class RecordRelation:
    """A typed link between two memories, kept in its stored direction (source → target).

    `relation_type` reads from source to target ("B supersedes A"); `opposite_relation_type` reads
    back from target to source ("A is_superseded_by B").
    """

    id: str
    source_record_id: str
    source_record_type: str
    target_record_id: str
    target_record_type: str
    relation_type: str
    opposite_relation_type: str
    timestamp: str | None = None
    metadata: dict[str, Any] | None = None
    created_at: str | None = None
    version: int = 1

    def label_from(self, record_id: str) -> str:
        """The label as read from `record_id`'s side of the link."""
        return self.relation_type if record_id == self.source_record_id else self.opposite_relation_type

    @property
    def made_by_llm(self) -> bool:
        """Whether the LLM made this link (automatic linking): its metadata says so (LLM_LINK_ORIGIN)."""
        return isinstance(self.metadata, dict) and self.metadata.get("origin") == LLM_LINK_ORIGIN


BUILTIN_RELATIONS = {
    "supersedes": "is_superseded_by",
    "refines": "is_refined_by",
    "duplicates": "duplicates",
    "supports": "is_supported_by",
    "contradicts": "contradicts",
}
"""Built-in relation types and their fixed inverse labels."""

LIFECYCLE_RELATIONS = ("supersedes", "refines", "duplicates")
"""Relations whose target becomes invalid: it is kept as history, not served as current."""

LLM_LINK_ORIGIN = "llm"
"""The `origin` in the metadata of a link the LLM made (automatic linking, during or after
extraction): `{"created_by": <the LLM's name>, "origin": "llm"}`. People's links carry no such
origin, so a dashboard can tell which memories an automatic link retired and have them reviewed."""


def llm_link_metadata(llm_name: str) -> dict[str, str]:
    """The metadata of a link the LLM made: which LLM, and that it was one (LLM_LINK_ORIGIN)."""
    return {"created_by": llm_name, "origin": LLM_LINK_ORIGIN}


@dataclass(frozen=True)
class Lifecycle:
    """What decides a memory's effective status (D2): `own_status`, its explicit flag (what
    `update_memory(status=...)` sets), and `retired_by`, the ids of the lifecycle links
    (supersedes, refines, duplicates) pointing at it, in link order. The memory is valid when
    its own status is valid and no such link points at it."""

    own_status: RecordStatus
    retired_by: tuple[str, ...] = ()

    @property
    def status(self) -> RecordStatus:
        """The effective status these make (what `Record.status` reads)."""
        valid = self.own_status is RecordStatus.VALID and not self.retired_by
        return RecordStatus.VALID if valid else RecordStatus.INVALID


@dataclass(frozen=True)
class LinkedOwner:
    """A user or an agent by its links (AgentMemory.linked_owners): `owner_id`; `links`, how many
    links touch its live memories (links whose both ends are live memories, one of them at least
    its own: the edges of its memory_graph that start or end at one of its memories); and
    `memories`, how many of its live memories have such a link (its memory_graph's own nodes)."""

    owner_id: str
    links: int
    memories: int


@dataclass
class MemoryGraph:
    """Memories and the links among them (AgentMemory.memory_graph): `nodes` (live memories, as
    records with their effective status and their own scope), `edges` (links in their stored
    direction, in creation order), and, when `max_nodes` cut it (`truncated`), how many nodes
    and links the whole graph has (`total_nodes`, `total_edges`)."""

    nodes: list[MemoryRecord] = field(default_factory=list)
    edges: list[RecordRelation] = field(default_factory=list)
    truncated: bool = False
    total_nodes: int = 0
    total_edges: int = 0


@dataclass
class DuplicateGroup:
    """Near-duplicate memories of one user (AgentMemory.find_duplicates): `memories`, the
    centre first (the member with the least total distance to the others, ties to the older),
    then the others nearest first; `distances`, each one's cosine distance to the centre (0.0
    for the centre itself), in the same order. Each member is within the search's
    `max_distance` of at least one other member, not necessarily of the centre."""

    memories: list[MemoryRecord] = field(default_factory=list)
    distances: list[float] = field(default_factory=list)

    @property
    def centre(self) -> MemoryRecord:
        return self.memories[0]

    @property
    def spread(self) -> float:
        """The largest distance of a member to the centre: how loose the group is."""
        return max(self.distances, default=0.0)


@dataclass
class Duplicates:
    """What AgentMemory.find_duplicates found: `groups`, tightest first (smallest spread, then
    larger, then the older centre), at most the call's `limit`; `total_groups`, how many there
    are in all; `compared`, how many memories were compared; `max_distance`, the threshold."""

    groups: list[DuplicateGroup] = field(default_factory=list)
    total_groups: int = 0
    compared: int = 0
    max_distance: float = 0.0


@dataclass
class MemoryVectors:
    """Memories with their stored vectors (AgentMemory.memory_vectors): `records` and `matrix`
    row for row (float32, one unit vector per row, the store's dimension), and whether more
    memories matched than the limit let in (`more`)."""

    records: list[MemoryRecord]
    matrix: np.ndarray
    more: bool = False


class Page(list):
    """A list of records plus the cursor that continues it (None on the last page).

    Listings stay plain lists for SDK compatibility; the cursor is our extension for stable
    pagination, which offsets cannot give while records are being added.
    """

    def __init__(self, items: Sequence = (), next_cursor: str | None = None) -> None:
        super().__init__(items)
        self.next_cursor = next_cursor


RECORD_TYPES = (MESSAGE_TYPE, *MEMORY_TYPES, IMAGE_TYPE, *PROFILE_TYPES)
"""Every stored record type, in the order StoreStats lists them."""


@dataclass
class StoreStats:
    """Counts of a store, or of what one delete would remove (MemoryStore.stats).

    `records[type]` holds "valid" and "invalid" (live records by effective status) and "expired"
    (past their expiry, awaiting purge_expired, whatever their status) for every record type;
    `links` counts links by relation_type (stored direction); `by_day` lists (UTC day of the
    record's event time, else its creation time; "message" or "memory"; live records) sorted
    by day.
    """

    records: dict[str, dict[str, int]]
    links: dict[str, int]
    threads: int
    users: int
    agents: int
    by_day: list[tuple[str, str, int]]
    backend: str
    embedder: str
    vector_dim: int
    schema_version: int

    def _live(self, record_types: Sequence[str]) -> int:
        return sum(self.records[t]["valid"] + self.records[t]["invalid"] for t in record_types)

    @property
    def messages(self) -> int:
        """Live messages."""
        return self._live((MESSAGE_TYPE,))

    @property
    def memories(self) -> int:
        """Live memories of the four memory types."""
        return self._live(MEMORY_TYPES)

    @property
    def images(self) -> int:
        """Live images."""
        return self._live((IMAGE_TYPE,))

    @property
    def expired(self) -> int:
        """Records past their expiry, awaiting purge_expired."""
        return sum(counts["expired"] for counts in self.records.values())

    @property
    def link_count(self) -> int:
        return sum(self.links.values())


@dataclass
class RestoreReport:
    """What MemoryStore.restore wrote: `restored` counts by kind ("threads", "records",
    "relations"); `skipped` lists (kind, id, reason) of what it left out."""

    restored: dict[str, int] = field(default_factory=lambda: {"threads": 0, "records": 0, "relations": 0})
    skipped: list[tuple[str, str, str]] = field(default_factory=list)


ERASURE_KINDS = ("profile", "threads", "messages", "memories", "images", "links", "activity_events", "activity_served")
"""What an erasure counts: the person's records by kind, the links touching their memories, the
activity events that were theirs (deleted, or kept without their text when they record who read or
exported something), and other callers' events that had served their records (those results and
that text cut out)."""


@dataclass(frozen=True)
class ErasureReport:
    """What MemoryStore.erase_user removed (or, previewed, would remove): `counts` per kind of
    ERASURE_KINDS, and `erased` the (kind, id) of every record, thread and link that went, sorted:
    ids only, so that a receipt can digest them without keeping any content."""

    user_id: str
    counts: dict[str, int]
    erased: tuple[tuple[str, str], ...] = ()

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class ScrubReport:
    """What MemoryStore.scrub_files did to the files that hold the store: the keyword index
    purged of deleted entries, the write-ahead log emptied into the file (`checkpointed`), the
    file rewritten (`vacuumed`: free pages may have held deleted rows), the search index written
    again from the rows alone and its earlier generations removed (`index_generations_removed`)."""

    keyword_index_purged: bool = False
    checkpointed: bool = False
    vacuumed: bool = False
    index_rewritten: bool = False
    index_generations_removed: int = 0


@dataclass(frozen=True)
class CheckFinding:
    """One kind of inconsistency MemoryStore.check looks for: `name` (a stable key), a sentence
    saying what it is, how many were `found`, how many `remain` after the check's repairs (as
    many as found when nothing was repaired), up to a few example ids, and whether `repair=True`
    fixes it (kinds that would delete user content are only reported)."""

    name: str
    description: str
    found: int
    remaining: int
    examples: tuple[str, ...] = ()
    repairable: bool = False

    @property
    def repaired(self) -> int:
        return self.found - self.remaining


@dataclass(frozen=True)
class CheckReport:
    """What MemoryStore.check found (and repaired), one CheckFinding per kind, in a fixed order."""

    findings: tuple[CheckFinding, ...]
    checked_at: str
    repaired: bool = False

    @property
    def ok(self) -> bool:
        """True when no problem remains."""
        return not any(finding.remaining for finding in self.findings)

    @property
    def problems(self) -> tuple[CheckFinding, ...]:
        return tuple(finding for finding in self.findings if finding.found or finding.remaining)

    def finding(self, name: str) -> CheckFinding:
        return next(finding for finding in self.findings if finding.name == name)


@dataclass(frozen=True)
class ReembedReport:
    """What MemoryStore.reembed did: the embedder (name, dimension) the store had and has now,
    how many records hold a vector of the new embedder, how many of them this call embedded and
    how many an interrupted earlier call had already staged (`resumed`), and how many vectors were
    dropped because their record has no text to embed (vectors given by the caller). `changed` is
    False when the store already used the embedder: nothing was done."""

    previous_embedder: str
    previous_dim: int
    embedder: str
    vector_dim: int
    records: int = 0
    embedded: int = 0
    resumed: int = 0
    cleared: int = 0
    changed: bool = True


@dataclass(frozen=True)
class VectorState:
    """The embedder a store's vectors were made by, as the store records it (`stored_*`), beside
    the one this process opened it with; and a re-embedding begun and not finished, if any (its
    target embedder and dimension, and how many records it has staged of how many)."""

    embedder: str
    vector_dim: int
    stored_embedder: str
    stored_vector_dim: int
    pending_embedder: str | None = None
    pending_vector_dim: int | None = None
    pending_staged: int = 0
    pending_total: int = 0

    @property
    def matches(self) -> bool:
        """Whether this process embeds as the stored vectors were embedded."""
        return (self.embedder, self.vector_dim) == (self.stored_embedder, self.stored_vector_dim)


@dataclass(frozen=True)
class StoreHealth:
    """What a health check needs to know of a store, read cheaply (MemoryStore.health): the
    schema version the database records, the newest entry of its change log, and where the
    in-memory search index stands against it. `index_in_step` is None when the store keeps no
    index or has not loaded it yet (it loads on the first search), else whether it has applied
    every change (it catches up on the next search; `index_behind` counts the entries it has not).
    """

    backend: str
    schema_version: int
    last_change: int
    index_in_step: bool | None = None
    index_behind: int = 0
