"""The store interface every backend implements (spec §3; DECISIONS D3, D4).

Backends implement the storage; `add` and `search` are written here once, over the argument rules
every backend shares (stores/arguments.py, and stores/plans.py for writes), so that every backend
refuses the same bad input with the same message.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from ..embedders import Embedder
from ..scope import SearchScope
from ..snapshot import Snapshot
from ..ttl import expiry, utc_now
from ..types import (
    NOT_SET,
    CheckReport,
    Duplicates,
    ErasureReport,
    ImageRecord,
    Lifecycle,
    LinkedOwner,
    MemoryGraph,
    MemoryRetentionConfig,
    MessageRecord,
    Page,
    Record,
    RecordRelation,
    ReembedReport,
    RestoreReport,
    ScrubReport,
    SearchStrategy,
    StoreHealth,
    StoreStats,
    ThreadRecord,
    VectorState,
    coerce_enum,
)
from .arguments import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_DUPLICATE_DISTANCE,
    DEFAULT_DUPLICATE_GROUPS,
    DEFAULT_GRAPH_NODES,
    DEFAULT_LINKED_OWNERS,
    DEFAULT_LIST_LIMIT,
    SearchRequest,
    check_positive_int,
    check_search,
    normalize_rows,
    to_matrix,
)
from .plans import AddPlan, NewRecord, image_column, prepare_add


class SchemaError(RuntimeError):
    """The database does not hold the managed schema the store's policy requires."""


class EmbedderMismatchError(SchemaError):
    """The store's vectors were made by another embedder (or at another dimension) than the one it
    is opened with: searching them with this one would compare unrelated vectors, and writing would
    mix them. Open it with the embedder it records, or move it to this one (reembed). A setup
    error, not bad input: not a ValueError, which callers turn into a form error."""

    def __init__(self, stored_embedder: str, stored_dim: int, embedder: str, dim: int) -> None:
        self.stored_embedder, self.stored_dim, self.embedder, self.dim = stored_embedder, stored_dim, embedder, dim
        if stored_dim != dim:
            problem = f"the store holds {stored_dim}-dimensional vectors but the embedder produces {dim}"
        else:
            problem = f"the store was built with embedder {stored_embedder!r}, not {embedder!r}"
        super().__init__(
            f"{problem}; open it with the embedder it was built with ({stored_embedder!r}, {stored_dim} "
            f"dimensions), or move it to {embedder!r} with reembed: vectors of different embedders cannot "
            "be compared"
        )


class MemoryStore(ABC):
    """Persistence and similarity search for records, threads and profiles: the whole contract
    the engine relies on, so a new backend knows what to implement.

    Implementation: SQLMemoryStore (stores/sql/) with a dialect per database, as
    SQLiteMemoryStore (embedded, the default) and OracleDBMemoryStore. `add` and `search` are
    written here once (argument checks, broadcasting, embedding); a backend supplies `_insert`
    and `_search`. The async entry points run the sync ones in a worker thread.
    """

    embedder: Embedder
    vector_dim: int
    retention: MemoryRetentionConfig
    search_strategy: SearchStrategy

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.vector_dim), dtype=np.float32)
        vectors = np.asarray(self.embedder.embed(texts), dtype=np.float32)
        if vectors.shape != (len(texts), self.vector_dim):
            raise ValueError(f"the embedder returned shape {vectors.shape}; expected ({len(texts)}, {self.vector_dim})")
        return vectors

    def _vectors_for(self, rows: list[NewRecord], embeddings: Any) -> list[np.ndarray | None]:
        """Unit vectors per row: the given ones, else embeddings of the non-empty index payloads."""
        if embeddings is not NOT_SET and embeddings is not None:
            return list(normalize_rows(to_matrix(embeddings, len(rows), self.vector_dim))) if rows else []
        payloads = [row.index_text if row.index_text is not None else row.content for row in rows]
        wanted = [i for i, text in enumerate(payloads) if text]
        vectors: list[np.ndarray | None] = [None] * len(rows)
        if wanted:
            for i, vector in zip(wanted, normalize_rows(self._embed([payloads[i] for i in wanted])), strict=True):
                vectors[i] = vector
        return vectors

    def add(
        self,
        contents: Sequence[str | None],
        record_type: str,
        index_texts: Any = NOT_SET,
        embeddings: Any = NOT_SET,
        record_ids: Any = NOT_SET,
        thread_ids: Any = NOT_SET,
        user_ids: Any = NOT_SET,
        agent_ids: Any = NOT_SET,
        roles: Any = NOT_SET,
        timestamps: Any = NOT_SET,
        metadata: Any = NOT_SET,
        *,
        ttl_days: Any = NOT_SET,
        ttl_anchor: Any = NOT_SET,
        statuses: Any = NOT_SET,
        content_parts: Any = NOT_SET,
        images: Any = NOT_SET,
        message_ids: Any = NOT_SET,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> list[str]:
        """Add records (spec §3.3.1); returns their ids in input order. A failing batch stores nothing.

        `content_parts` (messages only) keeps, per record, the JSON description of a message's
        ordered content parts; `contents` then holds their text, which is what gets indexed.
        Images (record_type "image") need `images`, one checked image (images.check_image) per
        record, whose `contents` are their descriptions; `message_ids` attaches them to messages.
        `batch_size` bounds each executemany. Everything is checked, and embedded, before the
        backend writes (`_insert`).
        """
        check_positive_int("batch_size", batch_size)
        checked = image_column(record_type, images, message_ids, len(contents) if isinstance(contents, list) else 0)
        rows = prepare_add(
            contents,
            record_type,
            index_texts,
            record_ids,
            thread_ids,
            user_ids,
            agent_ids,
            roles,
            timestamps,
            metadata,
            statuses,
            content_parts,
        )
        flagged = self._screen_rows(rows)  # refused, redacted or flagged before anything is embedded
        vectors = self._vectors_for(rows, embeddings)
        count = len(rows)
        ttl_list = ttl_days if isinstance(ttl_days, (list, tuple)) else [ttl_days] * count
        anchor_list = ttl_anchor if isinstance(ttl_anchor, (list, tuple)) else [ttl_anchor] * count
        if len(ttl_list) != count or len(anchor_list) != count:
            raise ValueError(f"ttl_days and ttl_anchor must be scalars or lists of {count} entries")
        now = utc_now()
        if isinstance(ttl_days, (list, tuple)) or isinstance(ttl_anchor, (list, tuple)):
            expiries = [
                expiry(
                    ttl_list[i], anchor_list[i], created_at=now, timestamp=rows[i].timestamp, retention=self.retention
                )
                for i in range(count)
            ]
        else:  # batch-wide ttl arguments: an expiry then depends only on the event time, computed once each
            by_time = {
                timestamp: expiry(ttl_days, ttl_anchor, created_at=now, timestamp=timestamp, retention=self.retention)
                for timestamp in dict.fromkeys(row.timestamp for row in rows)
            }
            expiries = [by_time[row.timestamp] for row in rows]
        if not rows:
            return []
        given_ids = record_ids is not NOT_SET and record_ids is not None
        plan = AddPlan(rows, vectors, checked, expiries, now)
        if not flagged:
            return self._insert(plan, given_ids, batch_size)
        with self.transaction():  # the records and their findings, stored together
            ids = self._insert(plan, given_ids, batch_size)
            self._record_findings(record_type, {ids[i]: detections for i, detections in flagged.items()})
        return ids

    def _screen_rows(self, rows: list[NewRecord]) -> dict[int, list[Any]]:
        """Screen an `add`'s rows for sensitive data by the store's policy (stores/sql/findings.py):
        refuse (raises), redact (rewrites the rows), flag (returns the detections per row index)."""
        return {}

    def _record_findings(self, record_type: str, by_id: dict[str, list[Any]]) -> None:
        """Keep the flagged detections of freshly added records, in the add's transaction."""
        raise NotImplementedError(f"{type(self).__name__} keeps no findings")

    # --- sensitive-data findings (stores/sql/findings.py) ---------------------------------------

    def list_findings(
        self,
        *,
        limit: int | None = DEFAULT_LIST_LIMIT,
        cursor: str | None = None,
        finding_ids: Any = NOT_SET,
        **filters: Any,
    ) -> Page:
        """The findings of secrets and personal data in stored records (SensitiveFinding), newest
        first, filtered by `user_id`, `agent_id`, `record_id`, `kinds`, less `exclude` ("<record
        id> <digest>" pairs); cursor-paged."""
        raise NotImplementedError(f"{type(self).__name__} keeps no findings")

    def count_findings(self, **filters: Any) -> int:
        """How many findings list_findings lists with these filters."""
        raise NotImplementedError(f"{type(self).__name__} keeps no findings")

    def rescan_findings(self, after_pk: int = 0, batch: int = 500) -> tuple[int, int, int]:
        """Scan `batch` stored records after key `after_pk` again and keep their findings;
        returns (the key to go on from, 0 when done; records read; findings kept)."""
        raise NotImplementedError(f"{type(self).__name__} keeps no findings")

    def stored_records_with_text(self) -> int:
        """How many stored records hold text (what a whole rescan reads)."""
        raise NotImplementedError(f"{type(self).__name__} keeps no findings")

    def redact_activity(self, value: str, replacement: str) -> int:
        """Replace a text in every activity event holding it; returns how many events held it."""
        raise NotImplementedError(f"{type(self).__name__} keeps no activity log")

    def _with_bytes(self, records: list[Record], include_bytes: bool) -> list[Record]:
        """The records, with their bytes loaded into the images among them when asked."""
        images = [record for record in records if isinstance(record, ImageRecord)]
        if include_bytes and images:
            data = self.image_bytes([image.id for image in images])
            for image in images:
                image.bytes = data.get(image.id)
        return records

    @abstractmethod
    def image_bytes(self, image_ids: Sequence[str]) -> dict[str, bytes]:
        """The stored bytes of these images (live or not), by id."""

    @abstractmethod
    def _insert(self, plan: AddPlan, check_ids: bool, batch_size: int) -> list[str]:
        """Write a checked, non-empty `add` batch in one transaction; `check_ids`: refuse taken ids."""

    def search(
        self,
        query: str | None = None,
        k: int = 10,
        query_vector: Any = None,
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        exact_user_match: Any = NOT_SET,
        exact_agent_match: Any = NOT_SET,
        exact_thread_match: Any = NOT_SET,
        record_types: Any = None,
        metadata_filter: Any = None,
        num_hops: int = 0,
        max_linked_results: int = 100,
        include_invalid_results: bool = True,
        *,
        strategy: Any = NOT_SET,
        created_at_or_before: Any = NOT_SET,
    ) -> list[tuple[Record, float]]:
        """The k records closest to the query, as (record, distance) pairs, closest first (§3.3.9).

        Every filter (scope, type, status, expiry, metadata) is applied before ranking, so a
        search returns k results whenever k matching records exist. Ties keep insertion order.
        Under the hybrid strategy the distance is 1 minus the normalised fused score.
        `strategy` (a SearchStrategy or its value) ranks this search as a store opened with it
        would; omitted, the store's own `search_strategy`. `created_at_or_before` (an ISO-8601
        instant or datetime) keeps only records stored (`created_at`) at or before it, direct
        results and linked ones alike: a search as of that moment, over today's content.
        """
        request = check_search(
            query,
            k,
            query_vector,
            SearchScope(
                user_id=user_id,
                agent_id=agent_id,
                thread_id=thread_id,
                exact_user_match=exact_user_match,
                exact_agent_match=exact_agent_match,
                exact_thread_match=exact_thread_match,
            ),
            record_types,
            metadata_filter,
            num_hops,
            max_linked_results,
            include_invalid_results,
            self.vector_dim,
            self.search_strategy if strategy is NOT_SET else coerce_enum(SearchStrategy, strategy, "strategy"),
            created_at_or_before,
        )
        return self._search(request, k, num_hops, max_linked_results, include_invalid_results)

    @abstractmethod
    def _search(
        self, request: SearchRequest, k: int, num_hops: int, max_linked_results: int, include_invalid_results: bool
    ) -> list[tuple[Record, float]]:
        """Run a checked search."""

    # --- the rest of the contract: what the engine (client.py, thread.py, cards, extraction) calls
    #
    # Every method validates its arguments (ValueError; KeyError never), reads only live records
    # (unexpired) unless it says otherwise, and writes atomically: a call that raises stored nothing.

    @abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """A block whose writes, from this thread, are one: all committed when it ends, none if
        it raises. The engine's calls that write several times (a message with its images, a
        memory with its link) run in one, so that a call which fails stores nothing, not even a
        thread's activity time or sequence number.

        Blocks nest (an inner one is part of the outer). A write inside that raises undoes only
        itself. Other threads and processes see the block's writes when it commits; its own
        reads and searches see them at once.
        """

    @abstractmethod
    def schema_sql(self) -> list[str]:
        """The DDL of the managed schema, in creation order (shown by `oam_schema --print-sql`)."""

    @abstractmethod
    def add_user(
        self, user_id: str, information: str, metadata: dict | None = None, *, expected_version: Any = NOT_SET
    ) -> str:
        """Store (or replace) a user's profile text, embedded for search; returns the user id.

        With `expected_version` the profile must be at that version, 0 meaning that it must not
        exist yet (StaleVersionError otherwise, nothing written); a replaced profile's version
        moves by one."""

    @abstractmethod
    def add_agent(
        self, agent_id: str, information: str, metadata: dict | None = None, *, expected_version: Any = NOT_SET
    ) -> str:
        """Store (or replace) an agent's profile text, embedded for search; returns the agent id.
        `expected_version` as for add_user."""

    @abstractmethod
    def get(self, record_type: str, record_id: str, include_bytes: bool = False) -> Record | None:
        """One live record by type and id ("thread" gives a ThreadRecord), or None. Images carry
        their bytes with `include_bytes`. Memory types share ids: ("fact", id) finds only a fact."""

    @abstractmethod
    def list(
        self,
        record_type: str | Sequence[str],
        limit: int | None = DEFAULT_LIST_LIMIT,
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata_filter: Any = NOT_SET,
        include_bytes: bool = False,
        record_id: Any = NOT_SET,
        *,
        cursor: str | None = None,
        include_expired: bool = False,
        status: Any = NOT_SET,
        newest_first: bool = False,
        text: Any = NOT_SET,
        expires_before: Any = NOT_SET,
    ) -> Page:
        """Records of these types in insertion order, filtered exactly by scope (None matches
        unscoped), id (one or a list) and metadata (`None`: records without metadata); a Page
        whose `next_cursor` continues it, stable while records are added.

        `expires_before`: an ISO-8601 instant or datetime; only records with an expiry at or
        before it (a review queue's "expiring within N days": live ones unless `include_expired`
        or `status="expired"`).

        `status`: "valid" or "invalid" (the effective status, D2; RecordStatus members too), or
        "expired" (only records past their expiry, awaiting purge_expired). `newest_first`: key
        descending; a cursor continues in the order it was made in (the other order's cursor is
        a ValueError). `text`: a case-insensitive (Unicode lower case) substring of the content,
        the id or the metadata as JSON text, LIKE wildcards in it matching only themselves; ''
        means no filter."""

    @abstractmethod
    def count(
        self,
        record_type: str | Sequence[str],
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata_filter: Any = NOT_SET,
        record_id: Any = NOT_SET,
        *,
        include_expired: bool = False,
        status: Any = NOT_SET,
        text: Any = NOT_SET,
        expires_before: Any = NOT_SET,
    ) -> int:
        """How many records list() lists with the same filters (every filter of list() but its
        paging, order and bytes), counted in the database: one query, whatever the number. A
        review queue's or a page's total, without reading the records."""

    @abstractmethod
    def facet_counts(
        self,
        record_type: str | Sequence[str],
        facet: str,
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata_filter: Any = NOT_SET,
        *,
        status: Any = NOT_SET,
        text: Any = NOT_SET,
    ) -> list[tuple[Any, int]]:
        """How many of the records list() lists with these filters have each value of `facet`
        (FACETS: "record_type", "status" (effective), "user_id", "agent_id", or "tag", an item of
        the metadata's "tags" list), most first, then by value; None stands for no user or agent.
        One grouping query, no record read: a listing's counts beside each filter value."""

    @abstractmethod
    def list_thread_messages(
        self,
        thread_id: str,
        last_n: int | None = None,
        range_start_seq_no: int | None = None,
        range_end_seq_no: int | None = None,
        include_bytes: bool = False,
    ) -> list[MessageRecord]:
        """A thread's live messages by sequence number; `last_n` keeps the newest n, the range is
        [start, end)."""

    @abstractmethod
    def thread_message_window(self, thread_id: str, offset: int, limit: int | None) -> list[MessageRecord]:
        """A slice of a thread's live messages by position (0 = oldest), for Thread.get_messages."""

    @abstractmethod
    def count_thread_messages(self, thread_id: str, *, through_seq_no: int | None = None) -> int:
        """How many live messages a thread holds; with `through_seq_no`, how many of them have a
        sequence number up to it (a message's position in the thread is that count minus one)."""

    @abstractmethod
    def update(
        self,
        record_type: str,
        record_id: str,
        text: Any = NOT_SET,
        index_text: Any = NOT_SET,
        embedding: Any = NOT_SET,
        metadata: Any = NOT_SET,
        *,
        content: Any = NOT_SET,
        timestamp: Any = NOT_SET,
        ttl_days: Any = NOT_SET,
        ttl_anchor: Any = NOT_SET,
        status: Any = NOT_SET,
        content_parts: Any = NOT_SET,
        image: Any = NOT_SET,
        role: Any = NOT_SET,
        expires_at: Any = NOT_SET,
        memory_type: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        expected_version: Any = NOT_SET,
    ) -> int:
        """Change one live record (§3.3.7: a changed payload is embedded again unless `embedding`
        is given; None clears it); returns 1, or 0 when there is no such live record. A message's
        new expiry passes to its images; the thread's activity time moves.

        `role` (messages only) is a non-empty string; `expires_at` an ISO-8601 instant or
        datetime (None: never), not together with `ttl_days`/`ttl_anchor`. A memory takes a new
        `memory_type` (one of the memory types: its links follow) and a new `user_id` or
        `agent_id` (None: unscoped on that dimension). The record's version
        moves by one (its images' too when a message's expiry changes). With `expected_version`
        the stored version is compared inside the write: a different one raises
        StaleVersionError and nothing is written."""

    @abstractmethod
    def delete(
        self, record_type: str, record_id: str, cascade: bool = False, *, expected_version: Any = NOT_SET
    ) -> int:
        """Delete one record, expired or not, with what depends on it (a memory's links, a
        message's images and their bytes); returns 0 or 1. With `expected_version` the stored
        version is compared inside the delete's transaction: a record at another version (a
        memory retyped meanwhile included) raises StaleVersionError and nothing is deleted; a
        record that is gone is still 0."""

    @abstractmethod
    def delete_thread(self, thread_id: str, *, expected_version: Any = NOT_SET) -> int:
        """Delete a thread and every record in it; returns the number of threads deleted (0 or 1).
        `expected_version` as for delete: it is the thread's own version (its metadata and
        summary), which messages and memories added to it do not move."""

    @abstractmethod
    def delete_user(self, user_id: str, cascade: bool = True) -> int:
        """Delete a user's profile and, with `cascade`, their threads and records; returns rows deleted."""

    @abstractmethod
    def delete_agent(self, agent_id: str, cascade: bool = True) -> int:
        """Delete an agent's profile and, with `cascade`, its threads and records; returns rows deleted."""

    @abstractmethod
    def erase_user(self, user_id: str, *, dry_run: bool = False) -> ErasureReport:
        """Erase a person: in one transaction, their profile, threads, messages, memories and
        images, every link touching their memories, their activity events (those of kind view
        or export kept without any request or text) and, in other callers' events, the results
        and text that served their records. Returns the counts per kind and the ids that went
        (ErasureReport); with `dry_run`, what would go, changing nothing. The files may still
        hold copies of the deleted rows until scrub_files."""

    @abstractmethod
    def scrub_files(self, *, vacuum: bool | None = None) -> ScrubReport:
        """Make deleted content unrecoverable from the files that hold the store: the keyword
        index rid of deleted words, the write-ahead log emptied into the file, the file rewritten
        without free pages (`vacuum`: None when it has any, or was never rewritten so), and the
        search index written again from the rows alone with every earlier generation removed.
        For an erasure or a redaction; costs a rewrite of the file and of the index."""

    @abstractmethod
    def purge_expired(self) -> int:
        """Delete every expired record (with its dependants); returns how many records went."""

    @abstractmethod
    def align_image_expiry(self, message_ids: Sequence[str]) -> None:
        """Give the images of these messages their message's expiry: they live and go together."""

    @abstractmethod
    def save_thread(
        self, thread_id: str, user_id: str | None, agent_id: str | None, metadata: Any, settings: dict
    ) -> ThreadRecord:
        """Create the thread unless it exists (a concurrent creator wins quietly); returns it as stored."""

    @abstractmethod
    def get_thread(self, thread_id: str) -> ThreadRecord | None:
        """A thread with its live message count, summary and settings, or None."""

    @abstractmethod
    def update_thread(
        self, thread_id: str, metadata: Any = NOT_SET, settings: Any = NOT_SET, *, expected_version: Any = NOT_SET
    ) -> int:
        """Replace a thread's metadata and/or settings and mark activity; returns 1, or 0 for no thread.
        The thread's version moves by one; `expected_version` as for update."""

    @abstractmethod
    def save_thread_summary(
        self,
        thread_id: str,
        summary: str | None,
        topics: list[str] | None = None,
        *,
        expected_version: Any = NOT_SET,
    ) -> int:
        """Store a thread's summary and topics (None clears them); returns 1, or 0 for no thread.
        The thread's version moves by one; `expected_version` as for update_thread."""

    @abstractmethod
    def save_thread_state(self, thread_id: str, key: str, state: dict[str, Any]) -> int:
        """Merge `state` into the thread's settings under `key` (extraction progress), leaving its
        activity time and version alone; returns 1, or 0 for no thread."""

    @abstractmethod
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
        """Threads, latest activity first, filtered exactly by owner and metadata, and by `text`
        (a case-insensitive substring of the thread id or its metadata as JSON text); cursor-paged."""

    @abstractmethod
    def thread_facet_counts(
        self,
        facet: str,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata_filter: Any = NOT_SET,
        *,
        text: Any = NOT_SET,
    ) -> list[tuple[Any, int]]:
        """How many of the threads list_threads lists with these filters have each value of
        `facet` ("user_id", "agent_id", or "tag", an item of the metadata's "tags" list), most
        first; None stands for no user or agent. One grouping query, no thread read."""

    @abstractmethod
    def list_users(self, limit: int | None = DEFAULT_LIST_LIMIT, cursor: str | None = None) -> Page:
        """Every user id that owns a profile, thread or record, by id, with its profile if any."""

    @abstractmethod
    def list_agents(self, limit: int | None = DEFAULT_LIST_LIMIT, cursor: str | None = None) -> Page:
        """Every agent id that owns a profile, thread or record, by id, with its profile if any."""

    @abstractmethod
    def add_relations(self, relations: Sequence[Mapping[str, Any]], *, thread_id: Any = NOT_SET) -> list[str]:
        """Link live memories (one link per pair, either direction; `thread_id`: both ends must be
        that thread's); lifecycle links (D2) make their target invalid. Returns the relation ids."""

    @abstractmethod
    def get_relation(self, relation_id: str, *, thread_id: Any = NOT_SET) -> RecordRelation | None:
        """One relation by id, or None (also when `thread_id` is given and it is not that thread's)."""

    @abstractmethod
    def update_relations(
        self,
        relation_id: str,
        relation_type: Any = NOT_SET,
        opposite_relation_type: Any = NOT_SET,
        timestamp: Any = NOT_SET,
        metadata: Any = NOT_SET,
        *,
        thread_id: Any = NOT_SET,
        expected_version: Any = NOT_SET,
    ) -> int:
        """Change a relation's labels, timestamp or metadata, recounting its target's lifecycle;
        returns 1, or 0 when there is none. The relation's version moves by one; `expected_version`
        as for update."""

    @abstractmethod
    def delete_relations(
        self,
        relation_id: Any = NOT_SET,
        source_record_id: Any = NOT_SET,
        source_record_type: Any = NOT_SET,
        target_record_id: Any = NOT_SET,
        target_record_type: Any = NOT_SET,
        relation_type: Any = NOT_SET,
        *,
        thread_id: Any = NOT_SET,
        expected_version: Any = NOT_SET,
    ) -> int:
        """Delete one relation, by id alone or by its complete tuple in the stored direction; returns 0 or 1.
        `expected_version` as for delete: StaleVersionError, deleting nothing, when the relation
        is at another version."""

    @abstractmethod
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
        """Relations in creation order: of one memory (either end) and/or of a scope, and/or of
        these relation types (one label or a non-empty list; the stored `relation_type`); cursor-paged."""

    @abstractmethod
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
        """How many relations list_relations() lists with the same filters, and further only
        those among `relation_ids` (a list of ids; empty: none) and whose metadata passes
        `metadata_filter` (the filter language of list(); None: links without metadata); one
        count query."""

    @abstractmethod
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
        """Live memories and the links among them (a MemoryGraph), around exactly one of:
        a scope (`user_id`, `agent_id` or `thread_id`, matched exactly): the scope's memories
        that have a link, and the memories up to `hops` links from them (scope or not); or a
        memory (`memory_id`, always a node): its breadth-first neighbourhood up to `hops`
        (0-5) links away. Links are followed both ways; every link among the nodes is an edge.
        `relation_types` keeps only links of those types; `memory_types` and `statuses`
        ("valid"/"invalid", effective) keep only such nodes (each a value or a list; omitted or
        None: no such filter), a memory outside them being neither
        shown nor crossed. Expired memories are never nodes. Beyond `max_nodes` (1-10,000), the
        nodes with the most links are kept (the centre first), with the links among them, and
        `truncated` is set. Nodes come centre first, then most linked first, then by id; edges
        in creation order (as list_relations lists them). ValueError for bad arguments; an empty
        graph for a missing or expired `memory_id` (AgentMemory.memory_graph: KeyError). One
        consistent read: a query per hop, or the in-memory indexes."""

    @abstractmethod
    def linked_owners(self, owner: str, *, limit: int = DEFAULT_LINKED_OWNERS) -> list[LinkedOwner]:
        """The users (`owner` "user") or agents ("agent") with the most links, most first (then
        the most linked memories, then by id), the first `limit` (a positive integer): each a
        LinkedOwner with its links (those whose both ends are live memories, at least one of
        them the owner's, by the memory's `user_id` or `agent_id`: the edges of
        memory_graph(user_id=...)'s first hop that touch the owner's memories) and how many of
        its live memories have one (that graph's own nodes). Owners without such a link are left
        out; memories without an owner count for nobody. One grouped query over the links,
        no record read; memoised as stats() is. ValueError for bad arguments."""

    @abstractmethod
    def find_duplicates(
        self,
        user_id: str,
        *,
        max_distance: float = DEFAULT_DUPLICATE_DISTANCE,
        memory_types: Any = None,
        statuses: Any = "valid",
        limit: int = DEFAULT_DUPLICATE_GROUPS,
    ) -> Duplicates:
        """Groups of one user's near-duplicate memories (Duplicates): the live (unexpired)
        memories whose `user_id` is exactly `user_id`, of `memory_types` (a type or a list;
        None: all four) and effective `statuses` ("valid" by default, so that memories already
        retired as duplicates do not come back; None: valid and invalid), that have a vector.
        Two are near-duplicates when the cosine distance of their vectors is at most
        `max_distance` (0-0.5, inclusive to float32 precision); a group is a connected
        component of that relation, of two memories or more. Groups come tightest first, the
        first `limit` (1-1,000) of `total_groups`. Vector math over all the candidates at
        once: a blocked matrix product on the in-memory index or on the vectors read in one
        query, or, on Oracle without the index, a VECTOR_DISTANCE self-join in the database;
        never a loop over pairs. ValueError for bad arguments; an unknown user has no groups."""

    @abstractmethod
    def duplicate_group_counts(
        self,
        user_ids: Sequence[str],
        *,
        max_distance: float = DEFAULT_DUPLICATE_DISTANCE,
        memory_types: Any = None,
        statuses: Any = "valid",
    ) -> dict[str, int]:
        """For each of these users (a list of ids), find_duplicates(user_id, ...)'s
        `total_groups` with these arguments: how many groups of near-duplicates they have, in one
        read for them all, the pairs found as find_duplicates finds them and only counted (no
        record read, no centres). A user whose memories make more near pairs than
        find_duplicates takes (which it refuses with a ValueError) is left out; an unknown user
        counts 0. ValueError for bad arguments."""

    @abstractmethod
    def lifecycle(self, memory_ids: Sequence[str]) -> dict[str, Lifecycle]:
        """For each live memory among `memory_ids`, its Lifecycle: its own status flag and the ids
        of the lifecycle links (supersedes, refines, duplicates) pointing at it, in link order.
        Missing, expired and non-memory ids are left out. One query whatever the number of ids."""

    @abstractmethod
    def memory_vectors(self, memory_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored unit vector (float32, the store's dimension) of each live memory among
        `memory_ids`. Missing, expired and non-memory ids, and memories without a vector, are left
        out. One query whatever the number of ids."""

    @abstractmethod
    def stats(self, *, thread_id: Any = NOT_SET, user_id: Any = NOT_SET, agent_id: Any = NOT_SET) -> StoreStats:
        """Counts (StoreStats) of the whole store, or, with one of the arguments, of exactly what
        delete_thread(thread_id), delete_user(user_id, cascade=True) or delete_agent(agent_id,
        cascade=True) would delete: the thread or the owner's profile, their records, their
        threads and those threads' records, a message's images, and the links touching the
        memories among them. Records by type as valid/invalid (live, effective status) and
        expired (awaiting purge_expired); links by relation_type; threads; distinct users and
        agents owning a profile, thread or record; live messages and memories by UTC day of
        their event time (else creation time). A few aggregate queries; a repeated call costs
        one look at the change log until something changes or a record expires."""

    @abstractmethod
    def owner_counts(self, owner: str, ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """For each user (owner "user") or agent ("agent") id: {"threads": n, "messages": n,
        "memories": n}, the threads it owns and its live messages and memories, in one grouped
        query for the whole list (an id with nothing has zeros)."""

    @abstractmethod
    def snapshot(
        self,
        *,
        record_ids: Sequence[tuple[str, str]] = (),
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
    ) -> Snapshot:
        """Everything the matching delete would remove, as stored (expired records included):
        `record_ids`, (record_type, id) pairs, those records with what delete() removes with
        them (a message's images, a memory's links); `thread_id`, the thread (metadata,
        settings, summary, topics, times, version) with all its records and the links touching
        its memories; `user_id`/`agent_id`, what the cascading delete removes (stats' scope).
        No argument: the whole store (an export). Images carry their bytes; `Snapshot.stored`
        keeps each record's explicit status, event time and index text. One consistent read."""

    @abstractmethod
    def restore(self, snapshot: Snapshot, *, skip_existing: bool = False, keep_versions: bool = False) -> RestoreReport:
        """Write a snapshot back exactly, in one transaction: ids, types, content, parts, index
        text, scope, role, sequence numbers, times, expiry, explicit status, metadata, image
        bytes; absent threads as they were (present ones are kept, and reported), each thread's
        next sequence number kept above its restored messages'; relations with their ids,
        labels, times and metadata. Texts are embedded again, lifecycle statuses recounted, and
        every restored row takes its snapshot version + 1 (an edit read before the delete is
        refused). A taken record or relation id (or linked pair) is a ValueError naming it, and
        nothing is written, unless `skip_existing`, which skips and reports it; a relation whose
        end is missing after the restore is skipped and reported. A malformed snapshot is a
        ValueError before anything is written. `keep_versions` (an import, memory.engine.transfer)
        keeps the snapshot's versions instead: nothing read before can be in flight."""

    def settle_outcome(self, token: str, outcome: str) -> str:
        """Record `outcome` ("committed" or "aborted") under `token` unless one is recorded already,
        and return the outcome that stands. Inside transaction() the record is part of the block,
        so it commits with the block's writes or not at all.

        This makes the store the judge of a change recorded elsewhere (the dashboard's curation
        history, in another database): the writer settles "committed" in the transaction of its
        change, and whoever finds the change's record left unconfirmed after a crash settles
        "aborted". The first to settle wins; a writer that finds "aborted" must roll back."""
        raise NotImplementedError(f"{type(self).__name__} keeps no outcomes")

    def outcomes(self, tokens: Sequence[str]) -> dict[str, str]:
        """The outcomes recorded under these tokens (settle_outcome); a token with none is absent."""
        raise NotImplementedError(f"{type(self).__name__} keeps no outcomes")

    def forget_outcomes(self, tokens: Sequence[str]) -> None:
        """Delete the outcomes recorded under these tokens, once nothing will ask for them again."""
        raise NotImplementedError(f"{type(self).__name__} keeps no outcomes")

    def check(self, *, repair: bool = False, examples: int = 5) -> CheckReport:
        """Look for inconsistencies between what the store holds and what it should (CheckReport,
        one CheckFinding per kind): records with text but no vector, or a vector of another
        dimension than the store's; links with an end that no longer exists; images whose
        message or thread is gone, or whose bytes are missing; the in-memory index (if any)
        holding other records or links, or other vectors or versions, than the database.
        `repair=True` fixes what is safe, then checks again: re-embeds records missing a vector
        (or with one of the wrong dimension), deletes orphan links, rebuilds the in-memory index
        from the database. It never deletes a record. `examples` caps the ids per finding."""
        raise NotImplementedError(f"{type(self).__name__} has no consistency check")

    def reembed(
        self,
        embedder: Embedder,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: Callable[[int, int], None] | None = None,
    ) -> ReembedReport:
        """Move the store to another embedder, a new vector dimension included: every record's
        indexed text (messages, memories, image descriptions, user and agent profiles) is embedded
        again by `embedder`, `batch_size` texts at a time.

        The new vectors go to a staging area first, committed batch by batch, while the store keeps
        serving with its old vectors; an error (the embedder failing, an interruption) leaves the
        store as it was, and a later call with the same embedder resumes after the last committed
        batch. Once every record is staged, the vectors, the recorded embedder and dimension are
        swapped (in one transaction where the database allows DDL in one), the in-memory index is
        rebuilt, and this store object embeds with `embedder` from then on; other processes must
        reopen the store with it (opening with the old one is refused). `progress(staged, total)`
        is called after each batch. Records changed meanwhile are embedded again before the swap.
        Vectors without text (given by the caller) cannot be re-embedded: they are dropped and
        counted. A store already using `embedder` is left alone (`changed=False`)."""
        raise NotImplementedError(f"{type(self).__name__} cannot re-embed")

    # --- the activity log (engine/activity/; the SQL store's: stores/sql/activity.py) ---------

    def append_activity(self, events: Sequence[Any]) -> None:
        """Store a batch of ActivityEvents (the recorder's) in one transaction, with a row per result."""
        raise NotImplementedError(f"{type(self).__name__} keeps no activity log")

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
        """Recorded calls newest first, filtered (AgentMemory.list_activity); ValueError for a bad filter."""
        raise NotImplementedError(f"{type(self).__name__} keeps no activity log")

    def get_activity(self, event_id: str) -> Any:
        """One recorded call with its text and results, or None."""
        raise NotImplementedError(f"{type(self).__name__} keeps no activity log")

    def activity_counts(self, **filters: Any) -> Any:
        """ActivityCounts of the calls list_activity(**filters) lists: per caller, kind and UTC day."""
        raise NotImplementedError(f"{type(self).__name__} keeps no activity log")

    def served_records(self, record_ids: Sequence[str], *, since: Any = None, caller_kind: Any = None) -> dict:
        """ServedRecords of these records: the retrievals that returned them since `since`, by caller."""
        raise NotImplementedError(f"{type(self).__name__} keeps no activity log")

    def activity_hygiene(self, *, since: Any, limit: int = 10, caller_kind: Any = None) -> Any:
        """ActivityHygiene since `since`: most served, never served, invalid but served, slowest calls."""
        raise NotImplementedError(f"{type(self).__name__} keeps no activity log")

    def purge_activity(self, before: str) -> int:
        """Delete the calls recorded before `before` (ISO 8601); returns how many went."""
        raise NotImplementedError(f"{type(self).__name__} keeps no activity log")

    def vector_state(self) -> VectorState:
        """The embedder and dimension the store records for its vectors, beside this object's,
        and a re-embedding begun and not finished, if any."""
        raise NotImplementedError(f"{type(self).__name__} does not record its embedder")

    def health(self) -> StoreHealth:
        """The schema version, the change log's newest entry and whether the in-memory index is
        in step with it: a few single-row reads, never a scan, for a health check to call often.
        Raises whatever the database raises when it cannot be reached."""
        raise NotImplementedError(f"{type(self).__name__} does not report its health")

    def restricted(self, visibility: Any) -> MemoryStore:
        """A view of this store that sees only the records `visibility` (a Visibility) lets it
        see, with writes outside it refused; a store that cannot restrict refuses."""
        raise NotImplementedError(f"{type(self).__name__} cannot restrict what it shows")

    @abstractmethod
    def close(self) -> None:
        """Release connections (and save what an in-memory index keeps for the next start)."""

    async def add_async(self, *args: Any, **kwargs: Any) -> list[str]:
        return await asyncio.to_thread(self.add, *args, **kwargs)

    async def search_async(self, *args: Any, **kwargs: Any) -> list[tuple[Record, float]]:
        return await asyncio.to_thread(self.search, *args, **kwargs)
