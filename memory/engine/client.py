"""AgentMemory: the client over one store — threads, memories, users, agents and search."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from .activity import (
    ActivityConfig,
    ActivityCounts,
    ActivityEvent,
    ActivityHygiene,
    ActivityRecorder,
    ServedRecord,
    given,
    recorded_retrieval,
    unrecorded,
)
from .activity.audit import view_parts
from .background import DEFAULT_QUEUE_CAPACITY, DEFAULT_WORKERS, LlmWorkRunner
from .embedders import Embedder
from .extraction import LlmMemoryWork
from .limits import check_id, check_int_range
from .records import (
    MemoryLink,
    add_image_record,
    add_memory_record,
    delete_image_record,
    find_memory,
    link_spec,
    list_image_records,
    update_image_record,
    update_memory_record,
)
from .scope import resolve_client_scope, search_scope_from_args
from .search import SearchResult, search_records
from .sensitive import KINDS as SENSITIVE_KINDS
from .sensitive import SensitiveFinding, policy_from
from .snapshot import Snapshot
from .stores.arguments import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_DUPLICATE_DISTANCE,
    DEFAULT_DUPLICATE_GROUPS,
    DEFAULT_GRAPH_NODES,
    DEFAULT_LINKED_OWNERS,
    DEFAULT_LIST_LIMIT,
    check_positive_int,
    check_record_types,
    expected_version_of,
)
from .stores.base import MemoryStore
from .thread import (
    DELETE_BARRIER_SECONDS,
    Thread,
    async_twin,
    autonomous_linking_from,
    extraction_config_from,
    link_memory,
    llm_from,
    schedule_llm_work,
    search_config_from,
)
from .types import (
    AGENT_PROFILE_TYPE,
    IMAGE_TYPE,
    MEMORY_TYPES,
    MESSAGE_TYPE,
    NOT_SET,
    SOURCE_MESSAGES_KEY,
    USER_PROFILE_TYPE,
    AgentProfileRecord,
    CheckReport,
    Duplicates,
    ErasureReport,
    ImageInputLimitConfig,
    ImageRecord,
    Lifecycle,
    LinkedOwner,
    MemoryExtractionConfig,
    MemoryGraph,
    MemoryRecord,
    MemoryVectors,
    MessageRecord,
    Page,
    RecordRelation,
    ReembedReport,
    RestoreReport,
    ScrubReport,
    StoreHealth,
    StoreStats,
    ThreadRecord,
    UserProfileRecord,
    VectorState,
    check_bool,
)
from .visibility import Visibility

EXPIRING_TYPES = (MESSAGE_TYPE, *MEMORY_TYPES, IMAGE_TYPE)
MAX_VIEWS = 256
"""How many restricted() views a client keeps (one per scope in use), before it starts afresh."""
"""The record types that can have a lifetime (profiles and threads have none)."""

DEFAULT_MAP_MEMORIES = 2_000
"""memory_vectors' default limit: what a 2-D map of one user's memories can show legibly."""


class AgentMemory:
    """The entry point of the engine: open threads, manage memories and search across them.

    With an `llm`, threads extract memories from their messages, keep a summary, link new
    memories and caption images, as `memory_extraction_config` says (threads may override it).
    Background work runs on this client's bounded queue (`extraction_queue_capacity` jobs,
    `extraction_workers` threads); `close()` lets queued work finish first.

    Every call made through this client (and through the store it holds) is recorded in the
    store's activity log under `caller` (default: OAM_CALLER, else the program's name), as
    `activity_config` says (default: the OAM_ACTIVITY* variables); `record_activity=False`
    records nothing from this process (engine/activity/).

    Every write's text is screened for secrets and personal data: `sensitive_policy` ("flag",
    "redact" or "refuse"; default: OAM_SENSITIVE_POLICY, else flag) says what a write does with
    what it finds (engine/sensitive.py).
    """

    def __init__(
        self,
        store: MemoryStore,
        *,
        llm: Any = None,
        memory_extraction_config: Any = NOT_SET,
        image_input_limit_config: Any = NOT_SET,
        search_config: Any = NOT_SET,
        extraction_queue_capacity: int = DEFAULT_QUEUE_CAPACITY,
        extraction_workers: int = DEFAULT_WORKERS,
        caller: str | None = None,
        record_activity: bool = True,
        activity_config: ActivityConfig | None = None,
        sensitive_policy: Any = None,
    ) -> None:
        if not isinstance(store, MemoryStore):
            raise ValueError(f"store must be a MemoryStore, not {type(store).__name__}")
        if image_input_limit_config is NOT_SET:
            image_input_limit_config = ImageInputLimitConfig()
        if not isinstance(image_input_limit_config, ImageInputLimitConfig):
            raise ValueError("image_input_limit_config must be an ImageInputLimitConfig")
        self.store = store
        if sensitive_policy is not None:  # else the store's own (OAM_SENSITIVE_POLICY, else flag)
            store.sensitive_policy = policy_from(sensitive_policy)
        self.llm = llm_from(llm)
        self.memory_extraction_config = extraction_config_from(memory_extraction_config, {})
        self.image_input_limit_config = image_input_limit_config
        self.search_config = search_config_from(search_config)
        self.llm_work_runner = LlmWorkRunner(extraction_queue_capacity, extraction_workers)
        check_bool("record_activity", record_activity)
        if activity_config is not None and not isinstance(activity_config, ActivityConfig):
            raise ValueError("activity_config must be an ActivityConfig")
        config = activity_config or ActivityConfig.from_env()
        # The store records what every caller of it does, through one recorder: this client's,
        # which names the caller (a store handed to a second client records as that one says).
        recording = record_activity and config.enabled and hasattr(store, "append_activity")
        self.activity: ActivityRecorder | None = ActivityRecorder(store, config, caller) if recording else None
        previous = getattr(store, "activity", None)
        if previous is not None:
            previous.close()
        if hasattr(store, "append_activity"):
            store.activity = self.activity

    def close(self) -> None:
        """Finish the queued background work, then close the store (which writes the queued activity first)."""
        self.llm_work_runner.close()
        self.store.close()

    def transaction(self) -> AbstractContextManager[None]:
        """A block whose writes are one: all committed when it ends, none if it raises
        (MemoryStore.transaction). For callers that change many records at once in batches, so
        that a batch is stored whole or not at all, and costs one commit."""
        return self.store.transaction()

    def restricted(self, visibility: Visibility) -> AgentMemory:
        """This client seeing only the records `visibility` lets it see: a view sharing the store,
        its background work and its activity recorder, whose every read (listings, counts,
        facets, search, graph, duplicates, activity, stats, snapshots, by id) applies the
        restriction in SQL, where a record outside is missing (None, KeyError, 0) as one that
        does not exist, and whose writes outside it are refused (engine/visibility.py). The
        client itself when `visibility` restricts nothing; a view restricted again sees what both
        let it see (never more)."""
        if not isinstance(visibility, Visibility):
            raise TypeError(f"visibility must be a Visibility, not {type(visibility).__name__}")
        if self.visibility is not None:
            visibility = self.visibility.narrowed(visibility)
        if visibility.unrestricted:
            return self
        base = self._unrestricted or self
        views = base.__dict__.setdefault("_views", {})  # one per visibility: its stats memo is kept
        view = views.get(visibility)
        if view is None:
            view = copy.copy(base)
            view.store = base.store.restricted(visibility)
            view.visibility, view._unrestricted, view._views = visibility, base, {}
            if len(views) >= MAX_VIEWS:
                views.clear()
            views[visibility] = view
        return view

    visibility: Visibility | None = None
    """What this client sees when it is a restricted() view of another; None: everything."""
    _unrestricted: AgentMemory | None = None

    def extraction_stats(self) -> dict[str, int]:
        """How this client's LLM work went: "queued", "completed", "failed" and "dropped" counts."""
        return self.llm_work_runner.stats()

    def _schedule_for(self, record: Any, job: Callable[[LlmMemoryWork], object], what: str) -> None:
        """Run LLM work about a record written through the client, in the record's scope."""
        if self.llm is None:
            return
        config = self.memory_extraction_config or MemoryExtractionConfig()
        work = LlmMemoryWork(
            self.store,
            self.llm,
            config,
            thread_id=record.thread_id,
            user_id=record.user_id,
            agent_id=record.agent_id,
            image_limits=self.image_input_limit_config,
        )
        schedule_llm_work(self.llm_work_runner, config, record.thread_id or "", lambda: job(work), what)

    # --- threads ----------------------------------------------------------------------------

    def create_thread(
        self,
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata: Any = NOT_SET,
        search_config: Any = NOT_SET,
        llm: Any = NOT_SET,
        memory_extraction_config: Any = NOT_SET,
        **thread_options: Any,
    ) -> Thread:
        """A new thread, or a handle on the existing one when `thread_id` is already stored.

        `llm` and `memory_extraction_config` override the client's (a new thread stores its config
        for later handles); `thread_options` are Thread's other keyword options (context_card_token_limit,
        max_message_token_length, ..., and the deprecated inline extraction parameters).
        """
        return Thread(
            self.store,
            thread_id=thread_id,
            user_id=user_id,
            agent_id=agent_id,
            metadata=metadata,
            search_config=search_config,
            client=self,
            llm=llm,
            memory_extraction_config=memory_extraction_config,
            **thread_options,
        )

    def get_thread(self, thread_id: str) -> Thread:
        """A handle on a stored thread; KeyError when there is none."""
        if not isinstance(thread_id, str) or self.store.get_thread(thread_id) is None:
            raise KeyError(f"no thread {thread_id!r}")
        return Thread(self.store, thread_id=thread_id, client=self)

    def get_thread_record(self, thread_id: str) -> ThreadRecord:
        """A stored thread as a record (scope, metadata, times, message count, summary, version),
        for readers that show a thread rather than write to it; KeyError when there is none."""
        record = self.store.get_thread(thread_id) if isinstance(thread_id, str) and thread_id else None
        if record is None:
            raise KeyError(f"no thread {thread_id!r}")
        return record

    def list_thread_messages(self, thread_id: str, start: int = 0, limit: int | None = 50) -> list[MessageRecord]:
        """A thread's live messages as records, in order, from position `start` (0 = oldest):
        a page of its timeline. Empty when the thread has no messages there (or does not exist)."""
        check_id("thread_id", thread_id)
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise ValueError(f"start must be a non-negative integer, not {start!r}")
        check_int_range("start", start)
        check_positive_int("limit", limit, allow_none=True)
        return self.store.thread_message_window(thread_id, start, limit)

    def list_thread_messages_by_seq_no(
        self,
        thread_id: str,
        *,
        last_n: int | None = None,
        range_start_seq_no: int | None = None,
        range_end_seq_no: int | None = None,
    ) -> list[MessageRecord]:
        """A thread's live messages as records in seq_no order, within [range_start_seq_no,
        range_end_seq_no) when given, the last `last_n` of them when given: the window
        Thread.get_messages reads, for readers that show records (the REST API's messages)."""
        check_id("thread_id", thread_id)
        check_positive_int("last_n", last_n, allow_none=True)
        _check_seq_no("range_start_seq_no", range_start_seq_no)
        _check_seq_no("range_end_seq_no", range_end_seq_no)
        return self.store.list_thread_messages(
            thread_id, last_n=last_n, range_start_seq_no=range_start_seq_no, range_end_seq_no=range_end_seq_no
        )

    def count_thread_messages(self, thread_id: str, *, through_seq_no: int | None = None) -> int:
        """How many live messages a thread holds; with `through_seq_no`, how many of them have a
        sequence number up to it (a message's position in the thread is that count minus one)."""
        check_id("thread_id", thread_id)
        _check_seq_no("through_seq_no", through_seq_no)
        return self.store.count_thread_messages(thread_id, through_seq_no=through_seq_no)

    def get_message_record(self, thread_id: str, message_id: str) -> MessageRecord:
        """One live message of a thread as a record (role, parts, seq_no, version…); KeyError when
        it is missing, expired or another thread's."""
        record = self.store.get(MESSAGE_TYPE, message_id) if isinstance(message_id, str) else None
        if record is None or record.thread_id != thread_id:
            raise KeyError(f"no message {message_id!r} in thread {thread_id!r}")
        return record

    def memories_from_message(
        self, thread_id: str, message_id: str, *, limit: int | None = DEFAULT_LIST_LIMIT, cursor: str | None = None
    ) -> Page:
        """The live memories extracted from a message: those of its thread whose provenance
        (metadata SOURCE_MESSAGES_KEY) names it, in insertion order. One filtered listing, in SQL."""
        check_id("thread_id", thread_id)
        check_id("message_id", message_id)
        return self.store.list(
            MEMORY_TYPES,
            limit=limit,
            thread_id=thread_id,
            metadata_filter={SOURCE_MESSAGES_KEY: {"$array_contains": message_id}},
            cursor=cursor,
        )

    def update_thread(self, thread_id: str, metadata: Any = NOT_SET, *, expected_version: Any = NOT_SET) -> Thread:
        """Replace a thread's metadata; KeyError when there is no such thread, StaleVersionError
        when `expected_version` is given and the thread is no longer at it."""
        if self.store.update_thread(thread_id, metadata=metadata, expected_version=expected_version) == 0:
            raise KeyError(f"no thread {thread_id!r}")
        return Thread(self.store, thread_id=thread_id, client=self)

    def delete_thread(self, thread_id: str, *, expected_version: Any = NOT_SET) -> int:
        """Delete a thread with all its messages and memories; returns 1, or 0 when there is none.

        First waits for the thread's accepted background work (TimeoutError after 300 s, deleting
        nothing): memories extracted after the delete would bring the thread back.
        `expected_version` refuses the delete (StaleVersionError, deleting nothing) when the
        thread's own version (its metadata and summary) moved since it was read; the compare is
        made inside the delete's transaction.
        """
        expected_version_of(expected_version)
        if isinstance(thread_id, str):
            self.llm_work_runner.wait(thread_id, DELETE_BARRIER_SECONDS)
        return self.store.delete_thread(thread_id, expected_version=expected_version)

    def list_threads(
        self,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata_filter: Any = NOT_SET,
        limit: int | None = DEFAULT_LIST_LIMIT,
        cursor: str | None = None,
        *,
        text: Any = NOT_SET,
    ) -> Page:
        """Threads, latest activity first; pass `page.next_cursor` back as `cursor` for the next page.
        `text`: a case-insensitive substring of the thread id or its metadata as JSON text."""
        return self.store.list_threads(
            user_id=user_id, agent_id=agent_id, metadata_filter=metadata_filter, limit=limit, cursor=cursor, text=text
        )

    def thread_facets(
        self,
        facets: Sequence[str],
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata_filter: Any = NOT_SET,
        *,
        text: Any = NOT_SET,
    ) -> dict[str, list[tuple[Any, int]]]:
        """For each facet ("user_id", "agent_id", "tag"), the counts of its values among the
        threads list_threads lists with these filters, most first (MemoryStore.thread_facet_counts,
        one grouping query a facet). Every thread has one user value (None too): the user
        facet's counts add up to how many threads the listing lists."""
        return {
            facet: self.store.thread_facet_counts(
                facet, user_id=user_id, agent_id=agent_id, metadata_filter=metadata_filter, text=text
            )
            for facet in facets
        }

    # --- memories ---------------------------------------------------------------------------

    def add_memory(
        self,
        content: str,
        memory_type: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        thread_id: Any = NOT_SET,
        memory_id: Any = NOT_SET,
        metadata: Any = NOT_SET,
        timestamp: Any = NOT_SET,
        ttl_days: Any = NOT_SET,
        ttl_anchor: Any = NOT_SET,
        status: Any = NOT_SET,
        autonomous_linking: Any = NOT_SET,
        memory_id_to_link: Any = NOT_SET,
        link_type: Any = NOT_SET,
        link_id: Any = NOT_SET,
        link_timestamp: Any = NOT_SET,
        link_metadata: Any = NOT_SET,
        **store_kwargs: Any,
    ) -> str:
        """Store a memory; omitted scope values leave it unscoped on that dimension.

        With `memory_id_to_link` and `link_type`, it is also linked to that memory (new → existing)
        and takes the linked memory's scope where the caller gives none. `autonomous_linking`
        (default: on with an LLM) lets the LLM link it to related memories of its user and agent.
        """
        config = self.memory_extraction_config or MemoryExtractionConfig()
        linking = autonomous_linking_from(autonomous_linking, self.llm, config)
        memory_id = add_memory_record(
            self.store,
            content,
            memory_type=memory_type,
            memory_id=memory_id,
            metadata=metadata,
            timestamp=timestamp,
            ttl_days=ttl_days,
            ttl_anchor=ttl_anchor,
            status=status,
            scope={"user_id": user_id, "agent_id": agent_id, "thread_id": thread_id},
            default_scope=dict.fromkeys(("user_id", "agent_id", "thread_id")),
            link=MemoryLink(memory_id_to_link, link_type, link_id, link_timestamp, link_metadata),
            **store_kwargs,
        )
        memory = find_memory(self.store, memory_id) if linking else None
        if memory is not None:
            self._schedule_for(memory, lambda work: link_memory(work, memory_id), f"linking memory {memory_id!r}")
        return memory_id

    def get_memory(self, memory_id: str) -> MemoryRecord:
        """A live memory by id, whatever its type; KeyError when there is none."""
        record = find_memory(self.store, memory_id)
        if record is None:
            raise KeyError(f"no memory {memory_id!r}")
        return record

    def update_memory(
        self,
        memory_id: str,
        content: Any = NOT_SET,
        metadata: Any = NOT_SET,
        timestamp: Any = NOT_SET,
        ttl_days: Any = NOT_SET,
        ttl_anchor: Any = NOT_SET,
        status: Any = NOT_SET,
        *,
        memory_type: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        expires_at: Any = NOT_SET,
        expected_version: Any = NOT_SET,
    ) -> str:
        """Update a memory; KeyError when it does not exist or has expired. Beyond the SDK: a new
        `memory_type` (its links follow), `user_id` or `agent_id` (None: unscoped), `expires_at`
        for an absolute expiry (None: never) instead of a lifetime, and `expected_version`, which
        refuses the update (StaleVersionError) when the memory changed since that version was read."""
        return update_memory_record(
            self.store,
            self.get_memory(memory_id),
            content=content,
            metadata=metadata,
            timestamp=timestamp,
            ttl_days=ttl_days,
            ttl_anchor=ttl_anchor,
            status=status,
            memory_type=memory_type,
            user_id=user_id,
            agent_id=agent_id,
            expires_at=expires_at,
            expected_version=expected_version,
        )

    def delete_memory(self, memory_id: str, *, expected_version: Any = NOT_SET) -> int:
        """Delete a memory; returns 1, or 0 when there is none. With `expected_version`, a memory
        changed since that version was read is not deleted (StaleVersionError): the compare is
        made inside the delete's transaction, so a change made after the caller's read is never
        deleted unseen."""
        expected_version_of(expected_version)
        record = find_memory(self.store, memory_id)
        if record is None:
            return 0
        return self.store.delete(record.record_type, record.id, expected_version=expected_version)

    def list_memories(
        self,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        thread_id: Any = NOT_SET,
        memory_types: Any = None,
        metadata_filter: Any = NOT_SET,
        limit: int | None = DEFAULT_LIST_LIMIT,
        cursor: str | None = None,
        *,
        status: Any = NOT_SET,
        newest_first: bool = False,
        text: Any = NOT_SET,
        expires_before: Any = NOT_SET,
    ) -> Page:
        """Memory-like records in insertion order (or `newest_first`), with exact scope filters
        (None = unscoped); `status`, `text` and `expires_before` filter as in MemoryStore.list."""
        types = MEMORY_TYPES if memory_types is None else check_record_types(memory_types, MEMORY_TYPES)
        return self.store.list(
            types,
            limit=limit,
            thread_id=thread_id,
            user_id=user_id,
            agent_id=agent_id,
            metadata_filter=metadata_filter,
            cursor=cursor,
            status=status,
            newest_first=newest_first,
            text=text,
            expires_before=expires_before,
        )

    def list_expired(
        self,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        thread_id: Any = NOT_SET,
        limit: int | None = DEFAULT_LIST_LIMIT,
        cursor: str | None = None,
    ) -> Page:
        """Records past their expiry that purge_expired would delete (messages, memories and
        images, in insertion order), with exact scope filters: what a purge removes, listed
        before it does (every read API hides them, D10)."""
        return self.store.list(
            EXPIRING_TYPES,
            limit=limit,
            thread_id=thread_id,
            user_id=user_id,
            agent_id=agent_id,
            cursor=cursor,
            status="expired",
        )

    def count_memories(
        self,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        thread_id: Any = NOT_SET,
        memory_types: Any = None,
        metadata_filter: Any = NOT_SET,
        *,
        status: Any = NOT_SET,
        text: Any = NOT_SET,
        expires_before: Any = NOT_SET,
    ) -> int:
        """How many memories list_memories lists with the same filters (MemoryStore.count): one
        count query, no record read."""
        types = MEMORY_TYPES if memory_types is None else check_record_types(memory_types, MEMORY_TYPES)
        return self.store.count(
            types,
            thread_id=thread_id,
            user_id=user_id,
            agent_id=agent_id,
            metadata_filter=metadata_filter,
            status=status,
            text=text,
            expires_before=expires_before,
        )

    def memory_facets(
        self,
        facets: Sequence[str],
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        thread_id: Any = NOT_SET,
        memory_types: Any = None,
        metadata_filter: Any = NOT_SET,
        *,
        status: Any = NOT_SET,
        text: Any = NOT_SET,
    ) -> dict[str, list[tuple[Any, int]]]:
        """For each facet ("memory_type", "status", "user_id", "agent_id", "tag"), the counts of
        its values among the memories list_memories lists with these filters, most first
        (MemoryStore.facet_counts, one grouping query a facet). What a listing shows beside each
        filter value, as Datasette's facets do."""
        types = MEMORY_TYPES if memory_types is None else check_record_types(memory_types, MEMORY_TYPES)
        counted = {}
        for facet in facets:
            counted[facet] = self.store.facet_counts(
                types,
                "record_type" if facet == "memory_type" else facet,
                thread_id=thread_id,
                user_id=user_id,
                agent_id=agent_id,
                metadata_filter=metadata_filter,
                status=status,
                text=text,
            )
        return counted

    def count_expired(self, user_id: Any = NOT_SET, agent_id: Any = NOT_SET, thread_id: Any = NOT_SET) -> int:
        """How many records list_expired lists (what purge_expired would delete, of this scope):
        one count query."""
        return self.store.count(
            EXPIRING_TYPES, thread_id=thread_id, user_id=user_id, agent_id=agent_id, status="expired"
        )

    def purge_expired(self) -> int:
        """Delete every expired record with what depends on it (MemoryStore.purge_expired);
        returns how many records went."""
        return self.store.purge_expired()

    def list_messages(
        self,
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata_filter: Any = NOT_SET,
        limit: int | None = DEFAULT_LIST_LIMIT,
        cursor: str | None = None,
        *,
        status: Any = NOT_SET,
        newest_first: bool = False,
        text: Any = NOT_SET,
    ) -> Page:
        """Messages in insertion order (or `newest_first`), with exact scope filters (None =
        unscoped); `status` and `text` filter as in MemoryStore.list."""
        return self.store.list(
            MESSAGE_TYPE,
            limit=limit,
            thread_id=thread_id,
            user_id=user_id,
            agent_id=agent_id,
            metadata_filter=metadata_filter,
            cursor=cursor,
            status=status,
            newest_first=newest_first,
            text=text,
        )

    # --- images -----------------------------------------------------------------------------

    def add_image(
        self,
        image: bytes,
        description: Any = NOT_SET,
        mime_type: Any = NOT_SET,
        image_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        thread_id: Any = NOT_SET,
        metadata: Any = NOT_SET,
        timestamp: Any = NOT_SET,
        ttl_days: Any = NOT_SET,
        ttl_anchor: Any = NOT_SET,
        **store_kwargs: Any,
    ) -> str:
        """Store an image; omitted scope values leave it unscoped on that dimension. Returns its id.

        An omitted description is written by the LLM when there is one.
        """
        scope = {"user_id": user_id, "agent_id": agent_id, "thread_id": thread_id}
        image_id = add_image_record(
            self.store,
            image,
            self.image_input_limit_config,
            description=description,
            mime_type=mime_type,
            image_id=image_id,
            metadata=metadata,
            timestamp=timestamp,
            ttl_days=ttl_days,
            ttl_anchor=ttl_anchor,
            scope={key: None if value is NOT_SET else value for key, value in scope.items()},
            **store_kwargs,
        )
        if description is NOT_SET or description is None:
            self._caption_later(image_id)
        return image_id

    def _caption_later(self, image_id: str) -> None:
        record = self.store.get(IMAGE_TYPE, image_id)
        if record is not None:
            self._schedule_for(record, lambda work: work.caption([image_id]), f"captioning image {image_id!r}")

    def _image(self, image_id: Any) -> ImageRecord:
        record = self.store.get(IMAGE_TYPE, image_id) if isinstance(image_id, str) else None
        if record is None:
            raise KeyError(f"no image {image_id!r}")
        return record

    def get_image(self, image_id: str, include_bytes: bool = False) -> ImageRecord:
        """A live image record, with its bytes when asked; KeyError when there is none."""
        check_bool("include_bytes", include_bytes)
        record = (
            self.store.get(IMAGE_TYPE, image_id, include_bytes=include_bytes) if isinstance(image_id, str) else None
        )
        if record is None:
            raise KeyError(f"no image {image_id!r}")
        return record

    def update_image(
        self,
        image_id: str,
        image: Any = NOT_SET,
        description: Any = NOT_SET,
        mime_type: Any = NOT_SET,
        metadata: Any = NOT_SET,
        timestamp: Any = NOT_SET,
        ttl_days: Any = NOT_SET,
        ttl_anchor: Any = NOT_SET,
        *,
        expected_version: Any = NOT_SET,
    ) -> str:
        """Replace an image's bytes, description, metadata, timestamp or lifetime; KeyError if there is none.

        `description=None` clears the description, and the LLM, when there is one, writes a new one.
        `expected_version`: StaleVersionError when the image changed since that version was read.
        """
        update_image_record(
            self.store,
            self._image(image_id),
            self.image_input_limit_config,
            image=image,
            description=description,
            mime_type=mime_type,
            metadata=metadata,
            timestamp=timestamp,
            ttl_days=ttl_days,
            ttl_anchor=ttl_anchor,
            expected_version=expected_version,
        )
        if description is None:
            self._caption_later(image_id)
        return image_id

    def delete_image(self, image_id: str, *, expected_version: Any = NOT_SET) -> int:
        """Delete an image; 0 when there is none. A message's image goes with the message (ValueError).
        `expected_version`: StaleVersionError, deleting nothing, when the image changed since."""
        expected_version_of(expected_version)
        try:
            record = self._image(image_id)
        except KeyError:
            return 0
        return delete_image_record(self.store, record, expected_version=expected_version)

    def list_images(
        self,
        image_id: Any = NOT_SET,
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata_filter: Any = NOT_SET,
        include_bytes: bool = False,
        limit: Any = NOT_SET,
        cursor: str | None = None,
    ) -> list[ImageRecord]:
        """Images in store order, with exact scope filters; bytes only with `include_bytes` and an `image_id`.
        Beyond the SDK: the list is a Page whose `next_cursor`, passed as `cursor`, gives the next page."""
        scope = {"thread_id": thread_id, "user_id": user_id, "agent_id": agent_id}
        return list_image_records(
            self.store,
            image_id,
            metadata_filter,
            include_bytes,
            limit,
            cursor=cursor,
            **{key: value for key, value in scope.items() if value is not NOT_SET},
        )

    # --- links ------------------------------------------------------------------------------

    def link_records(
        self,
        source_record_id: str,
        source_record_type: str,
        target_record_id: str,
        target_record_type: str,
        relation_type: str,
        opposite_relation_type: Any = NOT_SET,
        relation_id: Any = NOT_SET,
        timestamp: Any = NOT_SET,
        metadata: Any = NOT_SET,
    ) -> str:
        """Link two memories (source → target); returns the relation id."""
        spec = link_spec(
            source_record_id,
            source_record_type,
            target_record_id,
            target_record_type,
            relation_type,
            opposite_relation_type,
            relation_id,
            timestamp,
            metadata,
        )
        return self.store.add_relations([spec])[0]

    def update_record_link(
        self,
        relation_id: str,
        relation_type: Any = NOT_SET,
        opposite_relation_type: Any = NOT_SET,
        timestamp: Any = NOT_SET,
        metadata: Any = NOT_SET,
        *,
        expected_version: Any = NOT_SET,
    ) -> int:
        """Retype or annotate a link; returns 1, or 0 when there is none (StaleVersionError when
        `expected_version` is given and the link changed since)."""
        return self.store.update_relations(
            relation_id, relation_type, opposite_relation_type, timestamp, metadata, expected_version=expected_version
        )

    def delete_record_link(
        self,
        source_record_id: Any = NOT_SET,
        source_record_type: Any = NOT_SET,
        target_record_id: Any = NOT_SET,
        target_record_type: Any = NOT_SET,
        relation_type: Any = NOT_SET,
        relation_id: Any = NOT_SET,
        *,
        expected_version: Any = NOT_SET,
    ) -> int:
        """Delete a link, by id or by its complete stored-direction tuple; returns 0 or 1
        (StaleVersionError, deleting nothing, when `expected_version` is given and the link
        changed since)."""
        return self.store.delete_relations(
            relation_id,
            source_record_id,
            source_record_type,
            target_record_id,
            target_record_type,
            relation_type,
            expected_version=expected_version,
        )

    def get_relation(self, relation_id: str) -> RecordRelation:
        """A link by id; KeyError when there is none."""
        relation = self.store.get_relation(relation_id)
        if relation is None:
            raise KeyError(f"no relation {relation_id!r}")
        return relation

    def memory_graph(
        self,
        *,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        thread_id: Any = NOT_SET,
        memory_id: Any = NOT_SET,
        hops: int = 1,
        relation_types: Any = NOT_SET,
        memory_types: Any = NOT_SET,
        statuses: Any = NOT_SET,
        max_nodes: int = DEFAULT_GRAPH_NODES,
    ) -> MemoryGraph:
        """Memories and the links among them, for drawing (MemoryStore.memory_graph), around
        exactly one of: a user, agent or thread (its linked memories and those up to `hops`
        links from them, whatever their scope) or a memory (`memory_id`: its neighbourhood up to
        `hops` links away, both ways). `relation_types`, `memory_types` and `statuses` filter
        links and nodes; past `max_nodes` the most linked nodes are kept (`truncated`).
        ValueError for bad arguments; KeyError when `memory_id` is missing or expired."""
        graph = self.store.memory_graph(
            user_id=user_id,
            agent_id=agent_id,
            thread_id=thread_id,
            memory_id=memory_id,
            hops=hops,
            relation_types=relation_types,
            memory_types=memory_types,
            statuses=statuses,
            max_nodes=max_nodes,
        )
        if memory_id is not NOT_SET and not graph.nodes:
            raise KeyError(f"no memory {memory_id!r}")
        return graph

    def find_duplicates(
        self,
        user_id: str,
        *,
        max_distance: float = DEFAULT_DUPLICATE_DISTANCE,
        memory_types: Any = None,
        statuses: Any = "valid",
        limit: int = DEFAULT_DUPLICATE_GROUPS,
    ) -> Duplicates:
        """Groups of one user's near-duplicate memories, tightest first (MemoryStore.find_duplicates).

        `user_id` (required) is matched exactly; `max_distance` (0-0.5, default 0.25) is the
        cosine distance within which two memories count as near-duplicates, and a group is a
        chain of such pairs; `memory_types` (a type or a list; None: all) and `statuses`
        (effective: "valid" by default, None for valid and invalid) choose the candidates, live
        memories with a vector only; `limit` (1-1,000, default 100) caps the groups returned
        (`total_groups` counts them all). Each group lists its centre first, with every
        member's distance to it. ValueError for bad arguments; a user without memories has no
        groups."""
        return self.store.find_duplicates(
            user_id, max_distance=max_distance, memory_types=memory_types, statuses=statuses, limit=limit
        )

    def duplicate_group_counts(
        self,
        user_ids: Sequence[str],
        *,
        max_distance: float = DEFAULT_DUPLICATE_DISTANCE,
        memory_types: Any = None,
        statuses: Any = "valid",
    ) -> dict[str, int]:
        """For each of these users, how many groups find_duplicates finds with these arguments
        (its `total_groups`), in one read for them all, no record read
        (MemoryStore.duplicate_group_counts). A user whose memories make more near pairs than
        find_duplicates takes is left out."""
        return self.store.duplicate_group_counts(
            user_ids, max_distance=max_distance, memory_types=memory_types, statuses=statuses
        )

    def memory_vectors(
        self,
        user_id: str,
        *,
        memory_types: Any = None,
        status: Any = NOT_SET,
        limit: int = DEFAULT_MAP_MEMORIES,
    ) -> MemoryVectors:
        """A user's newest live memories (`limit` at most; `memory_types`, `status` as in
        list_memories) with their stored vectors, for projections such as the dashboard's
        embedding map. Memories without a vector (no text) are left out. Two queries: the
        listing, then the vectors of what it found."""
        check_id("user_id", user_id)
        check_positive_int("limit", limit)
        page = self.list_memories(
            user_id=user_id, memory_types=memory_types, status=status, limit=limit, newest_first=True
        )
        vectors = self.store.memory_vectors([record.id for record in page])
        records = [record for record in page if record.id in vectors]
        matrix = np.zeros((len(records), self.store.vector_dim), dtype=np.float32)
        for row, record in enumerate(records):
            matrix[row] = vectors[record.id]
        return MemoryVectors(records, matrix, more=page.next_cursor is not None)

    def lifecycle(self, memory_ids: Sequence[str]) -> dict[str, Lifecycle]:
        """For each live memory among `memory_ids` (missing ones are left out), its Lifecycle: its
        own status flag (what `update_memory(status=...)` sets; `Record.status` is the effective
        one) and the ids of the lifecycle links (supersedes, refines, duplicates) pointing at it.
        One query whatever the number of ids: what a link's creation, retyping or deletion would
        make valid or invalid can be told before it is made."""
        return self.store.lifecycle(memory_ids)

    def list_relations(
        self,
        record_id: Any = NOT_SET,
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        limit: int | None = DEFAULT_LIST_LIMIT,
        cursor: str | None = None,
        relation_types: Any = NOT_SET,
    ) -> Page:
        """Links in creation order: of one memory, and/or of a scope (either end in it), and/or of
        some relation types (a type or a list of them, as stored: source → target)."""
        return self.store.list_relations(
            record_id=record_id,
            thread_id=thread_id,
            user_id=user_id,
            agent_id=agent_id,
            limit=limit,
            cursor=cursor,
            relation_types=relation_types,
        )

    def count_relations(
        self,
        record_id: Any = NOT_SET,
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        relation_types: Any = NOT_SET,
        *,
        relation_ids: Any = NOT_SET,
        metadata_filter: Any = NOT_SET,
    ) -> int:
        """How many links list_relations lists with the same filters, further only those among
        `relation_ids` and whose metadata passes `metadata_filter` (MemoryStore.count_relations):
        one count query."""
        return self.store.count_relations(
            record_id=record_id,
            thread_id=thread_id,
            user_id=user_id,
            agent_id=agent_id,
            relation_types=relation_types,
            relation_ids=relation_ids,
            metadata_filter=metadata_filter,
        )

    def linked_owners(self, owner: str, *, limit: int = DEFAULT_LINKED_OWNERS) -> list[LinkedOwner]:
        """The users (`owner` "user") or agents ("agent") with the most links, most first, the
        first `limit`: each with how many links touch its live memories and how many of those
        memories have one (MemoryStore.linked_owners), in one grouped query: where a link graph
        can start."""
        return self.store.linked_owners(owner, limit=limit)

    # --- users and agents -------------------------------------------------------------------

    def add_user(self, user_id: str, information: str, *, expected_version: Any = NOT_SET) -> str:
        """Store (or replace) a user's profile; with `expected_version` the profile must be at that
        version, 0 meaning it must not exist yet (StaleVersionError otherwise)."""
        return self.store.add_user(user_id, information, expected_version=expected_version)

    def add_agent(self, agent_id: str, information: str, *, expected_version: Any = NOT_SET) -> str:
        """Store (or replace) an agent's profile; `expected_version` as for add_user."""
        return self.store.add_agent(agent_id, information, expected_version=expected_version)

    def get_user(self, user_id: str) -> UserProfileRecord:
        """A user's stored profile; KeyError when there is none."""
        return self._profile(USER_PROFILE_TYPE, "user_id", user_id)

    def get_agent(self, agent_id: str) -> AgentProfileRecord:
        """An agent's stored profile; KeyError when there is none."""
        return self._profile(AGENT_PROFILE_TYPE, "agent_id", agent_id)

    def _profile(self, record_type: str, name: str, owner_id: Any) -> Any:
        check_id(name, owner_id)
        record = self.store.get(record_type, owner_id)
        if record is None:
            raise KeyError(f"no {record_type.replace('_', ' ')} for {owner_id!r}")
        return record

    def delete_user(self, user_id: str, cascade: bool = True) -> int:
        """Delete a user's profile and, with `cascade`, their threads, messages and memories."""
        return self.store.delete_user(user_id, cascade=cascade)

    def delete_agent(self, agent_id: str, cascade: bool = True) -> int:
        """Delete an agent's profile and, with `cascade`, its threads, messages and memories."""
        return self.store.delete_agent(agent_id, cascade=cascade)

    def erase_user(self, user_id: str, *, dry_run: bool = False, scrub: bool = True) -> ErasureReport:
        """Erase a person from the store and its activity log in one transaction (MemoryStore.erase_user),
        then, with `scrub`, make it unrecoverable from the store's files (scrub_files). Calls
        queued for the activity log are written first, so that none lands after the erasure
        naming what it removed. `dry_run` says what would go and changes nothing. Not undoable:
        nothing is kept to restore."""
        if not isinstance(scrub, bool):
            raise TypeError(f"scrub must be True or False, not {scrub!r}")
        if dry_run is True:
            return self.store.erase_user(user_id, dry_run=True)
        if self.activity is not None:
            self.activity.flush()
        with unrecorded():
            report = self.store.erase_user(user_id, dry_run=dry_run)
        if scrub:
            self.store.scrub_files()
        return report

    def scrub_files(self, *, vacuum: bool | None = None) -> ScrubReport:
        """Make deleted content unrecoverable from the store's files (MemoryStore.scrub_files):
        after an erasure, or a redaction that replaced a record's text."""
        return self.store.scrub_files(vacuum=vacuum)

    def stats(self, *, thread_id: Any = NOT_SET, user_id: Any = NOT_SET, agent_id: Any = NOT_SET) -> StoreStats:
        """Counts of the store, or of what delete_thread/delete_user/delete_agent would remove
        (MemoryStore.stats)."""
        return self.store.stats(thread_id=thread_id, user_id=user_id, agent_id=agent_id)

    def settle_outcome(self, token: str, outcome: str) -> str:
        """Record a change's outcome in the store unless one is there; the one that stands
        (MemoryStore.settle_outcome: the store judges whether a change recorded elsewhere happened)."""
        return self.store.settle_outcome(token, outcome)

    def outcomes(self, tokens: Sequence[str]) -> dict[str, str]:
        """The outcomes recorded under these tokens (MemoryStore.outcomes)."""
        return self.store.outcomes(tokens)

    def forget_outcomes(self, tokens: Sequence[str]) -> None:
        """Delete outcomes nothing will ask for again (MemoryStore.forget_outcomes)."""
        self.store.forget_outcomes(tokens)

    def check(self, *, repair: bool = False, examples: int = 5) -> CheckReport:
        """The store's consistency check (MemoryStore.check): what is out of step, repaired when
        `repair` (only what is safe: no record is ever deleted)."""
        return self.store.check(repair=repair, examples=examples)

    def reembed(
        self,
        embedder: Embedder,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: Callable[[int, int], None] | None = None,
    ) -> ReembedReport:
        """Move the store to another embedder, a new dimension included, in batches, resumable,
        the store unchanged if it fails (MemoryStore.reembed); this client embeds with it after."""
        return self.store.reembed(embedder, batch_size=batch_size, progress=progress)

    def health(self) -> StoreHealth:
        """The store's schema version and whether its search index is in step (MemoryStore.health):
        cheap enough for a health check; raises when the database cannot be reached."""
        return self.store.health()

    def vector_state(self) -> VectorState:
        """The embedder the store records for its vectors beside this client's (MemoryStore.vector_state)."""
        return self.store.vector_state()

    def owner_counts(self, owner: str, ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """Threads, live messages and live memories per user ("user") or agent ("agent") id."""
        return self.store.owner_counts(owner, ids)

    def snapshot(
        self,
        *,
        record_ids: Sequence[tuple[str, str]] = (),
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
    ) -> Snapshot:
        """Everything the matching delete would remove, for a later restore (MemoryStore.snapshot)."""
        return self.store.snapshot(record_ids=record_ids, thread_id=thread_id, user_id=user_id, agent_id=agent_id)

    def restore(self, snapshot: Snapshot, *, skip_existing: bool = False, keep_versions: bool = False) -> RestoreReport:
        """Write a snapshot back with its ids, links and times (MemoryStore.restore)."""
        return self.store.restore(snapshot, skip_existing=skip_existing, keep_versions=keep_versions)

    def list_users(self, limit: int | None = DEFAULT_LIST_LIMIT, cursor: str | None = None) -> Page:
        return self.store.list_users(limit=limit, cursor=cursor)

    def list_agents(self, limit: int | None = DEFAULT_LIST_LIMIT, cursor: str | None = None) -> Page:
        return self.store.list_agents(limit=limit, cursor=cursor)

    # --- activity ---------------------------------------------------------------------------

    def list_activity(
        self,
        *,
        kind: Any = None,
        caller: Any = None,
        caller_kind: Any = None,
        user_id: Any = None,
        agent_id: Any = None,
        thread_id: Any = None,
        record_id: Any = None,
        q: Any = None,
        since: Any = None,
        until: Any = None,
        limit: int | None = DEFAULT_LIST_LIMIT,
        cursor: str | None = None,
        include_content: bool = True,
    ) -> Page:
        """Recorded calls (ActivityEvent), newest first: `kind` ("search", "card", "summary",
        "write", "view", "export", or a list of them), `caller`, `user_id`, `agent_id`, `thread_id` exactly,
        `caller_kind` ("agent" or "person"), `record_id` (calls that returned or changed it), `q`
        (a case-insensitive substring of the query, at most 1,000 characters), `since`
        (inclusive) and `until` (exclusive) ISO-8601 times; pass `page.next_cursor` back as
        `cursor`. `include_content=False` leaves out the texts and results. ValueError for a bad filter."""
        check_bool("include_content", include_content)
        return self.store.list_activity(
            **self._activity_filters(
                kind, caller, caller_kind, user_id, agent_id, thread_id, record_id, q, since, until
            ),
            limit=limit,
            cursor=cursor,
            include_content=include_content,
        )

    @staticmethod
    def _activity_filters(*values: Any) -> dict[str, Any]:
        names = (
            "kind",
            "caller",
            "caller_kind",
            "user_id",
            "agent_id",
            "thread_id",
            "record_id",
            "q",
            "since",
            "until",
        )
        return dict(zip(names, values, strict=True))

    def get_activity(self, event_id: str) -> ActivityEvent:
        """One recorded call with its results and text; KeyError when there is none (or it was purged)."""
        event = self.store.get_activity(event_id)
        if event is None:
            raise KeyError(f"no activity event {event_id!r}")
        return event

    def activity_counts(
        self,
        *,
        kind: Any = None,
        caller: Any = None,
        caller_kind: Any = None,
        user_id: Any = None,
        agent_id: Any = None,
        thread_id: Any = None,
        record_id: Any = None,
        q: Any = None,
        since: Any = None,
        until: Any = None,
    ) -> ActivityCounts:
        """Counts per caller, kind and UTC day of the calls list_activity lists with these filters."""
        return self.store.activity_counts(
            **self._activity_filters(
                kind, caller, caller_kind, user_id, agent_id, thread_id, record_id, q, since, until
            )
        )

    def served_records(
        self, record_ids: Sequence[str], *, since: Any = None, caller_kind: Any = None
    ) -> dict[str, ServedRecord]:
        """How often retrievals served each of these records since `since` (to callers of
        `caller_kind`, "agent" or "person"; None: any), by whom, and when last."""
        return self.store.served_records(record_ids, since=since, caller_kind=caller_kind)

    def activity_hygiene(self, *, since: Any, limit: int = 10, caller_kind: Any = None) -> ActivityHygiene:
        """Most served, never served, invalid-but-served memories and the slowest calls since
        `since`, counting the calls of `caller_kind` (None: any)."""
        return self.store.activity_hygiene(since=since, limit=limit, caller_kind=caller_kind)

    def record_view(
        self,
        call: str,
        records: Sequence[Any] = (),
        *,
        user_id: Any = None,
        agent_id: Any = None,
        thread_id: Any = None,
    ) -> None:
        """Note in the activity log that the caller of this block (acting_as: a person at the
        dashboard, an API token) read these records whole: `call` names where ("GET
        /memories/{memory_id}/"), `records` are the engine's records it showed (a ThreadRecord
        too), the scope the user, agent and thread whose data it was (by default the first
        record's). An event of kind "view" with the records' ids and types, never their text;
        queued like every event, so the caller does not wait. ValueError for a bad argument."""
        check_id("call", call)
        results, scope = view_parts(records, {"user_id": user_id, "agent_id": agent_id, "thread_id": thread_id})
        if self.activity is not None:
            # The page's own record in the request too: a timeline lists events without their results.
            main = {"record_type": results[0].record_type, "record_id": results[0].record_id} if results else {}
            self.activity.audit("view", call, results, scope, main, len(results))

    def purge_activity(self, before: Any = None) -> int:
        """Delete recorded calls older than `before`, or than this client's retention when None;
        returns how many went."""
        if before is None:
            return self.activity.purge() if self.activity is not None else 0
        return self.store.purge_activity(before)

    # --- search -----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        thread_id: Any = NOT_SET,
        exact_user_match: Any = NOT_SET,
        exact_agent_match: Any = NOT_SET,
        exact_thread_match: Any = NOT_SET,
        max_results: int = 10,
        token_budget: Any = NOT_SET,
        soft_token_budget: Any = NOT_SET,
        record_types: Any = NOT_SET,
        metadata_filter: Any = None,
        include_invalid_results: bool = True,
        num_hops: int = 0,
        max_linked_results: int = 100,
        scope: Any = NOT_SET,
        *,
        strategy: Any = NOT_SET,
    ) -> list[SearchResult]:
        """Records relevant to `query` for one user (required, matched exactly), best first.
        Beyond the SDK: `strategy` ("vector", "keyword", "hybrid" or a SearchStrategy) ranks this
        search as a store opened with that strategy would; omitted, the store's own."""
        requested = search_scope_from_args(
            scope,
            user_id=user_id,
            agent_id=agent_id,
            thread_id=thread_id,
            exact_user_match=exact_user_match,
            exact_agent_match=exact_agent_match,
            exact_thread_match=exact_thread_match,
        )
        resolved = resolve_client_scope(requested)
        request = given(
            query=query,
            user_id=user_id,
            agent_id=agent_id,
            thread_id=thread_id,
            exact_user_match=exact_user_match,
            exact_agent_match=exact_agent_match,
            exact_thread_match=exact_thread_match,
            max_results=max_results,
            token_budget=token_budget,
            soft_token_budget=soft_token_budget,
            record_types=record_types,
            metadata_filter=metadata_filter,
            include_invalid_results=include_invalid_results,
            num_hops=num_hops,
            max_linked_results=max_linked_results,
            scope=scope,
            strategy=strategy,
        )
        with recorded_retrieval(self.store, "search", "AgentMemory.search", resolved.exact, request) as capture:
            results = search_records(
                self.store,
                query,
                resolved,
                max_results=max_results,
                token_budget=token_budget,
                soft_token_budget=soft_token_budget,
                record_types=record_types,
                metadata_filter=metadata_filter,
                include_invalid_results=include_invalid_results,
                num_hops=num_hops,
                max_linked_results=max_linked_results,
                search_config=self.search_config,
                strategy=strategy,
            )
            capture.done(results)
        return results

    # --- secrets and personal data (engine/sensitive.py, stores/sql/findings.py) ----------------

    def list_findings(
        self,
        *,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        kinds: Any = NOT_SET,
        record_id: Any = NOT_SET,
        exclude: Any = NOT_SET,
        limit: int | None = DEFAULT_LIST_LIMIT,
        cursor: str | None = None,
    ) -> Page:
        """The secrets and personal data found in stored records (SensitiveFinding), newest first:
        of a user, an agent or a record, of some kinds (sensitive.KINDS), less those `exclude`
        names as "<record id> <digest>" (values a curator judged not sensitive)."""
        _check_finding_filters(kinds, exclude, user_id=user_id, agent_id=agent_id, record_id=record_id)
        return self.store.list_findings(
            user_id=user_id,
            agent_id=agent_id,
            kinds=kinds,
            record_id=record_id,
            exclude=exclude,
            limit=limit,
            cursor=cursor,
        )

    def count_findings(
        self,
        *,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        kinds: Any = NOT_SET,
        record_id: Any = NOT_SET,
        exclude: Any = NOT_SET,
    ) -> int:
        """How many findings list_findings lists with these filters (counted in the store)."""
        _check_finding_filters(kinds, exclude, user_id=user_id, agent_id=agent_id, record_id=record_id)
        return self.store.count_findings(
            user_id=user_id, agent_id=agent_id, kinds=kinds, record_id=record_id, exclude=exclude
        )

    def get_finding(self, finding_id: str) -> SensitiveFinding:
        """One finding by id; KeyError when there is none (its record's text changed, or it went)."""
        if not isinstance(finding_id, str) or not finding_id.isdigit() or len(finding_id) > 18:
            raise KeyError(f"no finding {finding_id!r}")
        found = self.store.list_findings(finding_ids=[int(finding_id)], limit=1)
        if not found:
            raise KeyError(f"no finding {finding_id!r}")
        return found[0]

    def rescan_findings(self, after: int = 0, batch: int = 500) -> tuple[int, int, int]:
        """Scan stored records again, `batch` at a time in key order from after key `after`, and
        keep their findings (what is stored is not changed, whatever the policy). Returns the
        key to go on from (0: done), the records read and the findings kept; `count_texts()` is
        how many records a whole scan reads."""
        check_int_range("after", after)
        check_positive_int("batch", batch)
        return self.store.rescan_findings(after, batch)

    def count_texts(self) -> int:
        """How many stored records hold text: what a whole rescan_findings reads."""
        return self.store.stored_records_with_text()

    def redact_activity(self, value: str, replacement: str) -> int:
        """Replace a text in every event of the activity log that holds it (its query, request,
        results, content and cause): a redacted value leaves the log too. A restricted() view
        changes only the events it sees. Returns the events changed."""
        if not isinstance(value, str) or not value.strip() or not isinstance(replacement, str):
            raise ValueError("value must be a non-empty string, and replacement a string")
        return self.store.redact_activity(value, replacement)

    search_async = async_twin(search)
    add_image_async = async_twin(add_image)
    update_image_async = async_twin(update_image)
    delete_image_async = async_twin(delete_image)
    list_images_async = async_twin(list_images)
    link_records_async = async_twin(link_records)
    update_record_link_async = async_twin(update_record_link)
    delete_record_link_async = async_twin(delete_record_link)
    add_memory_async = async_twin(add_memory)
    update_memory_async = async_twin(update_memory)
    delete_memory_async = async_twin(delete_memory)


def _check_finding_filters(kinds: Any, exclude: Any, **ids: Any) -> None:
    for name, value in ids.items():
        if value is not NOT_SET and value is not None:
            check_id(name, value)
    listed = kinds is not NOT_SET and kinds is not None
    if listed and (isinstance(kinds, str) or not all(isinstance(k, str) and k in SENSITIVE_KINDS for k in kinds)):
        raise ValueError(f"kinds must be a list of: {', '.join(SENSITIVE_KINDS)}")
    listed = exclude is not NOT_SET and exclude is not None
    if listed and (isinstance(exclude, str) or not all(isinstance(key, str) for key in exclude)):
        raise ValueError('exclude must be a list of "<record id> <digest>" strings')


def _check_seq_no(name: str, value: Any) -> None:
    """A message sequence number argument: None, or a non-negative integer of 64 bits."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer or None, not {value!r}")
    check_int_range(name, value)
