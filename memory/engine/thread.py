"""Thread: one conversation's messages and memories, with the thread layer's rules (spec §4).

A thread acts only on records whose stored thread_id is its own (§4.4): reads and updates of
anything else raise KeyError, deletes return 0. Every public method has an `_async` twin that
runs it in a worker thread.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import logging
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .activity import given, recorded_retrieval
from .background import LlmWorkRunner
from .cards import ContextCard, Summary, build_context_card, build_summary
from .extraction import (
    COMMAND_CHUNK_MESSAGES,
    DEFAULT_CONTEXT_CARD_TOKEN_LIMIT,
    DEFAULT_MAX_MESSAGE_TOKEN_LENGTH,
    DEFAULT_MESSAGE_SHORTENING_INPUT_TOKEN_LIMIT,
    STATE_KEY,
    LlmMemoryWork,
)
from .limits import check_int_range
from .llm import Llm
from .messages import StoredContent, content_from, message_from_record, stored_content, to_message
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
from .scope import check_scope_value, resolve_thread_scope, search_scope_from_args
from .search import SearchResult, search_records
from .stores.arguments import expected_version_of
from .stores.base import MemoryStore
from .types import (
    IMAGE_TYPE,
    MESSAGE_TYPE,
    NOT_SET,
    ImageInputLimitConfig,
    ImageRecord,
    MemoryExtractionConfig,
    MemoryExtractionMode,
    MemoryLinkExtractionMode,
    MemoryRecord,
    MemorySearchConfig,
    Message,
    MessageRecord,
    check_bool,
    new_id,
)

log = logging.getLogger(__name__)

DEFAULT_MESSAGE_WINDOW = 50
DELETE_BARRIER_SECONDS = 300
DEFAULT_CONTEXT_CARD_TYPE_SEARCH_CONCURRENCY = 5


def async_twin(method: Callable) -> Callable:
    """The `_async` variant of a blocking method: same arguments, run off the event loop."""

    async def twin(self: Any, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(method, self, *args, **kwargs)

    twin.__name__ = f"{method.__name__}_async"
    twin.__qualname__ = f"{method.__qualname__}_async"
    twin.__doc__ = f"Async twin of `{method.__name__}`: same parameters, result and errors."
    twin.__signature__ = inspect.signature(method)  # type: ignore[attr-defined]
    return twin


def llm_from(value: Any) -> Llm | None:
    if value is None or isinstance(value, Llm):
        return value
    raise ValueError(f"llm must provide the Llm protocol (complete, complete_json, name), not {type(value).__name__}")


def extraction_config_from(config: Any, deprecated: dict[str, Any]) -> MemoryExtractionConfig | None:
    """The thread's own extraction config, from the grouped object or the deprecated parameters (§8.3)."""
    given = {name: value for name, value in deprecated.items() if value is not NOT_SET}
    if given and config is not NOT_SET:
        raise ValueError(f"pass memory_extraction_config or the deprecated parameters {sorted(given)}, not both")
    if given:
        warnings.warn(
            f"{', '.join(sorted(given))}: deprecated, pass memory_extraction_config=MemoryExtractionConfig(...)",
            DeprecationWarning,
            # Attributed to the caller's line, whether it called create_thread or Thread directly.
            skip_file_prefixes=(os.path.dirname(__file__) + os.sep,),
        )
        return MemoryExtractionConfig(**given)
    if config is NOT_SET or config is None:
        return None
    if not isinstance(config, MemoryExtractionConfig):
        raise ValueError(f"memory_extraction_config must be a MemoryExtractionConfig, not {type(config).__name__}")
    return config


def _int_option(name: str, value: Any, *, positive: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or (positive and value < 1):
        kind = "a positive integer" if positive else "an integer (<= 0 turns the limit off)"
        raise ValueError(f"{name} must be {kind}, not {value!r}")
    check_int_range(name, value)
    return value


def search_config_from(value: Any) -> MemorySearchConfig:
    if value is NOT_SET or value is None:
        return MemorySearchConfig()
    if not isinstance(value, MemorySearchConfig):
        raise ValueError(f"search_config must be a MemorySearchConfig, not {type(value).__name__}")
    return value


class Thread:
    """A handle on one thread of a store. Creating a handle creates the thread if it is new.

    Omitted ids are generated (UUIDs) for a new thread and read from the store for an existing
    one; an explicit user or agent id that contradicts the stored thread is a ValueError.
    """

    def __init__(
        self,
        store: MemoryStore,
        thread_id: Any = NOT_SET,
        user_id: Any = NOT_SET,
        agent_id: Any = NOT_SET,
        metadata: Any = NOT_SET,
        search_config: Any = NOT_SET,
        image_input_limit_config: Any = NOT_SET,
        client: Any = None,
        *,
        llm: Any = NOT_SET,
        memory_extraction_config: Any = NOT_SET,
        context_card_token_limit: int = DEFAULT_CONTEXT_CARD_TOKEN_LIMIT,
        context_card_type_search_concurrency: int = DEFAULT_CONTEXT_CARD_TYPE_SEARCH_CONCURRENCY,
        max_message_token_length: int = DEFAULT_MAX_MESSAGE_TOKEN_LENGTH,
        message_shortening_input_token_limit: int = DEFAULT_MESSAGE_SHORTENING_INPUT_TOKEN_LIMIT,
        memory_extraction_window: Any = NOT_SET,
        context_summary_update_frequency: Any = NOT_SET,
        memory_extraction_frequency: Any = NOT_SET,
        memory_extraction_token_limit: Any = NOT_SET,
        enable_context_summary: Any = NOT_SET,
        memory_extraction_custom_instructions: Any = NOT_SET,
        memory_extraction_inherit_message_metadata: Any = NOT_SET,
    ) -> None:
        """`llm` and `memory_extraction_config` default to the client's; the thread's config
        overrides the client's field by field. A new thread stores its own config, which later
        handles use unless they are given one. The deprecated inline extraction parameters still
        work, with a DeprecationWarning, but not together with `memory_extraction_config`.
        """
        for name, value in (("thread_id", thread_id), ("user_id", user_id), ("agent_id", agent_id)):
            check_scope_value(name, value)
        if thread_id is None:
            raise ValueError("thread_id must be a string (omit it to generate one)")
        own_config = extraction_config_from(
            memory_extraction_config,
            {
                "memory_extraction_window": memory_extraction_window,
                "context_summary_update_frequency": context_summary_update_frequency,
                "memory_extraction_frequency": memory_extraction_frequency,
                "memory_extraction_token_limit": memory_extraction_token_limit,
                "enable_context_summary": enable_context_summary,
                "memory_extraction_custom_instructions": memory_extraction_custom_instructions,
                "memory_extraction_inherit_message_metadata": memory_extraction_inherit_message_metadata,
            },
        )
        self.llm = llm_from(getattr(client, "llm", None) if llm is NOT_SET else llm)
        self.context_card_type_search_concurrency = _int_option(
            "context_card_type_search_concurrency", context_card_type_search_concurrency, positive=True
        )
        knobs = {
            "context_card_token_limit": _int_option("context_card_token_limit", context_card_token_limit),
            "max_message_token_length": _int_option("max_message_token_length", max_message_token_length),
            "message_shortening_input_token_limit": _int_option(
                "message_shortening_input_token_limit", message_shortening_input_token_limit
            ),
        }
        self.store, self.client = store, client
        # The component whose waits cover this handle's background work (spec §4.3.19).
        self._runner: LlmWorkRunner = client.llm_work_runner if client is not None else LlmWorkRunner()
        if image_input_limit_config is NOT_SET:
            image_input_limit_config = getattr(client, "image_input_limit_config", None) or ImageInputLimitConfig()
        if not isinstance(image_input_limit_config, ImageInputLimitConfig):
            raise ValueError("image_input_limit_config must be an ImageInputLimitConfig")
        self.image_input_limit_config = image_input_limit_config
        existing = store.get_thread(thread_id) if thread_id is not NOT_SET else None
        if existing is not None:
            for name, value in (("user_id", user_id), ("agent_id", agent_id)):
                if value is not NOT_SET and value != getattr(existing, name):
                    raise ValueError(
                        f"thread {thread_id!r} exists with {name}={getattr(existing, name)!r}, not {value!r}"
                    )
            record = existing
        else:
            settings = {}
            config = search_config_from(search_config)
            if config != MemorySearchConfig():
                settings["search_config"] = {
                    "token_budget": config.token_budget,
                    "soft_token_budget": config.soft_token_budget,
                }
            if own_config is not None:
                settings["memory_extraction_config"] = own_config.to_settings()
            record = store.save_thread(
                new_id() if thread_id is NOT_SET else thread_id,
                new_id() if user_id is NOT_SET else user_id,
                new_id() if agent_id is NOT_SET else agent_id,
                None if metadata is NOT_SET else metadata,
                settings,
            )
        self.thread_id: str = record.id
        self.user_id: str | None = record.user_id
        self.agent_id: str | None = record.agent_id
        self.metadata = record.metadata
        stored_config = record.settings.get("search_config")
        self.search_config = (
            search_config_from(search_config)
            if search_config is not NOT_SET
            else MemorySearchConfig(**stored_config)
            if stored_config
            else MemorySearchConfig()
        )
        stored_extraction = record.settings.get("memory_extraction_config")
        if own_config is None and stored_extraction:
            own_config = MemoryExtractionConfig(**stored_extraction)
        client_config = getattr(client, "memory_extraction_config", None)
        self.memory_extraction_config = (
            own_config.over(client_config) if own_config else client_config or MemoryExtractionConfig()
        )
        self.llm_work = (
            None
            if self.llm is None
            else LlmMemoryWork(
                store,
                self.llm,
                self.memory_extraction_config,
                thread_id=self.thread_id,
                user_id=self.user_id,
                agent_id=self.agent_id,
                image_limits=self.image_input_limit_config,
                state_lock=self._runner.state_lock(self.thread_id),
                **knobs,
            )
        )

    def __repr__(self) -> str:
        return f"Thread(thread_id={self.thread_id!r}, user_id={self.user_id!r}, agent_id={self.agent_id!r})"

    # --- messages ---------------------------------------------------------------------------

    def add_messages(
        self,
        messages: Sequence[Any],
        metadata: Any = NOT_SET,
        ttl_days: Any = NOT_SET,
        ttl_anchor: Any = NOT_SET,
        **store_kwargs: Any,
    ) -> list[str]:
        """Append messages to the thread; returns their ids in input order.

        `metadata` given (a dict or None for all, or a list with one entry per message) replaces
        each message's own metadata; omitted, each message keeps its own.
        """
        if isinstance(messages, (str, Mapping, Message)) or not isinstance(messages, Sequence):
            raise ValueError("messages must be a list of Message objects or mappings")
        parsed = [to_message(m, i) for i, m in enumerate(messages)]
        if not parsed:
            return []
        if metadata is NOT_SET:
            metadatas = [m.metadata for m in parsed]
        elif isinstance(metadata, list):
            if len(metadata) != len(parsed):
                raise ValueError(f"metadata has {len(metadata)} entries for {len(parsed)} messages")
            metadatas = metadata
        else:
            metadatas = [metadata] * len(parsed)
        # Every image is checked before anything is written.
        stored = [stored_content(m.content, self.image_input_limit_config) for m in parsed]
        self._check_free_image_ids(stored)
        with self.store.transaction():  # the messages and their images, or nothing
            ids = self.store.add(
                [content.text for content in stored],
                MESSAGE_TYPE,
                record_ids=[m.id if m.id is not None else new_id() for m in parsed],
                thread_ids=self.thread_id,
                user_ids=self.user_id,
                agent_ids=self.agent_id,
                roles=[m.role for m in parsed],
                timestamps=[m.timestamp for m in parsed],
                metadata=metadatas,
                ttl_days=ttl_days,
                ttl_anchor=ttl_anchor,
                content_parts=[content.parts for content in stored],
                **store_kwargs,
            )
            uncaptioned = self._add_message_images(list(zip(ids, stored, strict=True)))
        self._after_new_messages(uncaptioned)
        return ids

    def _add_message_images(self, messages: list[tuple[str, StoredContent]]) -> list[str]:
        """Store the new images of these messages, with their messages' scope and expiry.

        Returns the ids of those that came without a description, for the LLM to caption.
        """
        pairs = [
            (message_id, part, checked) for message_id, content in messages for part, checked in content.new_images
        ]
        if not pairs:
            return []
        self.store.add(
            [part.description or "" for _, part, _ in pairs],
            IMAGE_TYPE,
            record_ids=[part.id for _, part, _ in pairs],
            thread_ids=self.thread_id,
            user_ids=self.user_id,
            agent_ids=self.agent_id,
            timestamps=[part.timestamp for _, part, _ in pairs],
            images=[checked for _, _, checked in pairs],
            message_ids=[message_id for message_id, _, _ in pairs],
        )
        self.store.align_image_expiry([message_id for message_id, _ in messages])
        return [part.id for _, part, _ in pairs if part.description is None]

    # --- LLM work ---------------------------------------------------------------------------

    def _schedule(self, work: Callable[[], object], what: str) -> bool:
        return schedule_llm_work(self._runner, self.memory_extraction_config, self.thread_id, work, what)

    def _schedule_extraction(
        self, work: LlmMemoryWork, run: Callable[[], object], targets: Sequence[MessageRecord]
    ) -> None:
        """Schedule `run`; if the queue drops it (or refuses it with TimeoutError), its target
        messages are remembered as not extracted, for `run_memory_extraction` to pick up."""
        queued = False
        try:
            queued = self._schedule(run, f"memory extraction of thread {self.thread_id!r}")
        finally:
            if not queued and targets:
                work.remember_unextracted(targets)

    def _after_new_messages(self, uncaptioned: list[str]) -> None:
        """After add_messages: captions, then extraction if due, then the summary if due (spec §8.4)."""
        work = self.llm_work
        if work is None:
            return
        # Planned and queued under one lock: concurrent writers' work queues in the order planned.
        with self._runner.planning_lock(self.thread_id):
            targets = work.plan_after_add() or []
            # With extraction on, the summary is checked when an extraction is due (§7.3).
            check_summary = work.config.enable_context_summary and (bool(targets) or not work.config.extract_memories)
            if not (targets or uncaptioned or check_summary):
                return

            def run() -> None:
                if uncaptioned:
                    work.caption(uncaptioned)
                if targets:
                    work.extract_or_remember(targets)
                if check_summary and work.messages_due_for_summary():
                    work.refresh_summary()

            self._schedule_extraction(work, run, targets)

    def _after_edit(self, message_id: str, uncaptioned: list[str]) -> None:
        """After update_message: caption new images, re-extract from the edited message (§4.3.11).

        Memories extracted before stay; the regular extraction counter is not touched.
        """
        work = self.llm_work
        if work is None or not (uncaptioned or work.config.extract_memories):
            return

        def run() -> None:
            if uncaptioned:
                work.caption(uncaptioned)
            edited = self.store.get(MESSAGE_TYPE, message_id)
            if work.config.extract_memories and edited is not None:
                work.extract_or_remember([edited])

        edited = self.store.get(MESSAGE_TYPE, message_id) if work.config.extract_memories else None
        self._schedule_extraction(work, run, [edited] if edited is not None else [])

    def _caption_later(self, image_id: str) -> None:
        work = self.llm_work
        if work is not None:
            self._schedule(lambda: work.caption([image_id]), f"captioning image {image_id!r}")

    def wait_for_memory_extraction(self, timeout: float | None = DELETE_BARRIER_SECONDS) -> None:
        """Wait for the background LLM work this thread's component accepted before the call.

        Failed work counts as finished. `timeout=None` waits without limit; TimeoutError when
        the work is still running after `timeout` seconds.
        """
        self._runner.wait(self.thread_id, timeout)

    def run_memory_extraction(self, include_extracted: bool = False) -> list[str]:
        """Extract memories now from the messages no extraction has covered (never planned, or whose
        extraction failed), or from all of them.

        This is the on-demand path (the dashboard's "extract memories", the `extract_memories`
        command): it runs in the caller, whatever the extraction mode, works through the thread
        in chunks of 20 messages, refreshes the summary, and raises what the LLM raises. Returns
        the new memories' ids.
        """
        work = self.llm_work
        if work is None:
            raise ValueError("memory extraction needs an LLM: pass llm= to the thread or the client")
        if not isinstance(include_extracted, bool):
            raise ValueError("include_extracted must be True or False")
        with self._runner.planning_lock(self.thread_id), self._runner.thread_lock(self.thread_id):
            messages = work.messages_to_extract(include_extracted)
            created: list[str] = []
            for first in range(0, len(messages), COMMAND_CHUNK_MESSAGES):
                chunk = messages[first : first + COMMAND_CHUNK_MESSAGES]
                created += work.extract(chunk)
                through = max(chunk[-1].seq_no, work.state()["extracted_through"])
                self.store.save_thread_state(self.thread_id, STATE_KEY, {"extracted_through": through})
            self.store.save_thread_state(self.thread_id, STATE_KEY, {"failed_ranges": []})
            if work.config.enable_context_summary:
                work.refresh_summary()
        return created

    def refresh_summary(self) -> Summary | None:
        """Fold the messages stored since the last summary into the thread's summary and topics
        now, by asking the LLM, even when context_summary_update_frequency says no refresh is due
        yet or enable_context_summary is off (a person's "refresh the summary"). Returns the new
        summary, or None when no message came since the last summary: then the LLM is not asked
        and nothing is written. ValueError without an LLM; raises what the LLM raises."""
        work = self.llm_work
        if work is None:
            raise ValueError("refreshing a summary needs an LLM: pass llm= to the thread or the client")
        with self._runner.thread_lock(self.thread_id):
            if not work.refresh_summary():
                return None
        return Summary(self.store.get_thread(self.thread_id).summary or "")

    def set_summary(
        self, summary: Any, topics: Any = None, *, summarized_through: Any = NOT_SET, expected_version: Any = NOT_SET
    ) -> None:
        """Beyond the SDK: store the thread's summary and topics as a person gives them (None
        clears them), e.g. to put back those a refresh replaced; no LLM is needed or asked.

        `summarized_through` is the seq_no of the last message they cover (-1: none), the progress
        the thread's settings keep under "llm" → "summarized_through": the next refresh folds in
        the messages after it. Omitted, the progress stays. The thread's version moves by one;
        `expected_version` makes the write a compare-and-set (StaleVersionError, writing nothing,
        when the thread is at another version). KeyError when the thread no longer exists.
        """
        if summarized_through is not NOT_SET:
            through = summarized_through
            if isinstance(through, bool) or not isinstance(through, int) or through < -1:
                raise ValueError(f"summarized_through must be a message's seq_no or -1, not {through!r}")
            check_int_range("summarized_through", through)
        with self._runner.thread_lock(self.thread_id), self.store.transaction():  # both, or neither
            if not self.store.save_thread_summary(self.thread_id, summary, topics, expected_version=expected_version):
                raise KeyError(f"no thread {self.thread_id!r}")
            if summarized_through is not NOT_SET:
                self.store.save_thread_state(self.thread_id, STATE_KEY, {"summarized_through": summarized_through})

    def messages_due_for_summary(self) -> int:
        """Beyond the SDK: how many messages the next get_context_card or get_summary of the whole
        thread will first fold into the stored summary by asking the LLM (spec §7.3): those stored
        since the last summary, when context_summary_update_frequency says a refresh is due; 0
        when none is (no LLM, summaries off, too few new messages). A read: it writes nothing."""
        work = self.llm_work
        return 0 if work is None else work.messages_due_for_summary()

    def refresh_summary_if_due(self) -> None:
        """Bring the persisted summary up to date when its update frequency says so (spec §7.3)."""
        work = self.llm_work
        if work is None or not work.config.enable_context_summary:
            return
        with self._runner.thread_lock(self.thread_id):
            try:
                if work.messages_due_for_summary():
                    work.refresh_summary()
            except (RuntimeError, ValueError):
                log.exception("could not refresh the summary of thread %r", self.thread_id)

    def _owned_message(self, message_id: Any) -> MessageRecord:
        record = self.store.get(MESSAGE_TYPE, message_id) if isinstance(message_id, str) else None
        if record is None or record.thread_id != self.thread_id:
            raise KeyError(f"no message {message_id!r} in thread {self.thread_id!r}")
        return record

    def _messages(self, records: list[MessageRecord], load: Callable[[str], bool]) -> list[Message]:
        """Messages with their image parts; `load` says whose bytes to read."""
        image_ids = [part["id"] for r in records for part in r.parts or () if part["type"] == "image"]
        images = {}
        if image_ids:
            images = {image.id: image for image in self.store.list(IMAGE_TYPE, limit=None, record_id=image_ids)}
        loaded = self.store.image_bytes([i for i in images if load(i)]) if images else {}
        return [message_from_record(record, images, loaded) for record in records]

    def get_message(self, message_id: str, included_image_ids: Any = NOT_SET) -> Message:
        """One message of this thread; KeyError when it is missing, expired or another thread's.

        Image parts carry their id, type and description; bytes only for `included_image_ids`.
        """
        if included_image_ids is NOT_SET or included_image_ids is None:
            wanted: set[str] = set()
        elif isinstance(included_image_ids, (list, tuple, set, frozenset)) and all(
            isinstance(image_id, str) for image_id in included_image_ids
        ):
            wanted = set(included_image_ids)
        else:
            raise ValueError(f"included_image_ids must be a list of image ids or None, not {included_image_ids!r}")
        return self._messages([self._owned_message(message_id)], wanted.__contains__)[0]

    def get_messages(
        self, start: Any = NOT_SET, end: Any = NOT_SET, include_image_bytes: bool = False
    ) -> list[Message]:
        """Messages in chronological order, by 0-based position.

        Neither bound: the latest 50. `start` alone: the latest 50 of those from `start` on (the
        page's "bounded window of the most recent messages"). `end=None` or -1: all from `start`.
        A negative `start` counts from the end, as in Python slicing. Image bytes are read only
        with `include_image_bytes`.
        """
        check_bool("include_image_bytes", include_image_bytes)
        for name, value in (("start", start), ("end", end)):
            if value is not NOT_SET and value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(f"{name} must be an integer or None, not {value!r}")
            if isinstance(value, int):
                check_int_range(name, value)
        if end is not NOT_SET and end is not None and end < -1:
            raise ValueError(f"end must be >= 0, or None/-1 for all messages, not {end}")
        total = self.store.count_thread_messages(self.thread_id)
        first = 0 if start is NOT_SET or start is None else start
        if first < 0:
            first = max(0, total + first)
        if end is NOT_SET:
            first = max(first, total - DEFAULT_MESSAGE_WINDOW)
            limit = None
        elif end is None or end == -1:
            limit = None
        else:
            limit = max(0, end - first)
        records = self.store.thread_message_window(self.thread_id, first, limit)
        return self._messages(records, lambda _: include_image_bytes)

    def update_message(
        self,
        message_id: str,
        content: Any = NOT_SET,
        metadata: Any = NOT_SET,
        ttl_days: Any = NOT_SET,
        ttl_anchor: Any = NOT_SET,
        *,
        role: Any = NOT_SET,
        timestamp: Any = NOT_SET,
        expires_at: Any = NOT_SET,
        expected_version: Any = NOT_SET,
    ) -> str:
        """Replace a message's content, metadata, role or timestamp, or set its expiry (a lifetime,
        `ttl_days`/`ttl_anchor`, or an instant, `expires_at`; its images share it).

        New content replaces the parts: its images are added, images it no longer names are
        deleted, and an image part without bytes keeps one the message already has. With
        `expected_version`, a message changed since that version was read is refused
        (StaleVersionError) and nothing is written.
        """
        record = self._owned_message(message_id)
        changes: dict[str, Any] = {
            "metadata": metadata,
            "ttl_days": ttl_days,
            "ttl_anchor": ttl_anchor,
            "role": role,
            "timestamp": timestamp,
            "expires_at": expires_at,
            "expected_version": expected_version,
        }
        before = {part["id"] for part in record.parts or () if part["type"] == "image"}
        new = None
        if content is not NOT_SET:
            new = stored_content(content_from(content, "content"), self.image_input_limit_config, frozenset(before))
            self._check_free_image_ids([new])
            changes.update(text=new.text, content_parts=new.parts)
        with self.store.transaction():  # the content and its images, or nothing
            if self.store.update(MESSAGE_TYPE, message_id, **changes) == 0:
                raise KeyError(f"no message {message_id!r} in thread {self.thread_id!r}")
            if new is not None:
                uncaptioned = self._add_message_images([(message_id, new)])
                for image_id in before - set(new.image_ids):
                    self.store.delete(IMAGE_TYPE, image_id)
        if new is not None:
            self._after_edit(message_id, uncaptioned)
        return message_id

    def _check_free_image_ids(self, contents: list[StoredContent]) -> None:
        """Refuse, before any write, new image parts whose ids another image already has."""
        ids = [part.id for content in contents for part, _ in content.new_images]
        if len(set(ids)) != len(ids):
            raise ValueError("two image parts have the same id")
        taken = self.store.list(IMAGE_TYPE, limit=1, record_id=ids, include_expired=True) if ids else []
        if taken:
            raise ValueError(f"an image with id {taken[0].id!r} already exists")

    def delete_message(self, message_id: str, *, expected_version: Any = NOT_SET) -> int:
        """Delete one raw message of this thread (memories derived from it stay); returns 0 or 1.

        First waits for the background work already accepted for this thread (TimeoutError after
        300 s, deleting nothing). `expected_version`: a message changed since that version was
        read is not deleted (StaleVersionError), compared inside the delete's transaction.
        """
        expected_version_of(expected_version)
        self._runner.wait(self.thread_id, DELETE_BARRIER_SECONDS)
        try:
            self._owned_message(message_id)
        except KeyError:
            return 0
        return self.store.delete(MESSAGE_TYPE, message_id, expected_version=expected_version)

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
        """Store a memory; omitted scope values are the thread's. Returns the memory id.

        With `memory_id_to_link` and `link_type`, the new memory is also linked to that memory of
        this thread (new → existing) and takes its scope where the caller gives none.
        `autonomous_linking` (default: on when there is an LLM and the link mode is not DISABLED)
        lets the LLM link it to related memories afterwards; that never undoes the write.
        """
        linking = autonomous_linking_from(autonomous_linking, self.llm, self.memory_extraction_config)
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
            default_scope={"user_id": self.user_id, "agent_id": self.agent_id, "thread_id": self.thread_id},
            link=MemoryLink(memory_id_to_link, link_type, link_id, link_timestamp, link_metadata),
            link_thread_id=self.thread_id,
            **store_kwargs,
        )
        work = self.llm_work
        if linking and work is not None:
            self._schedule(lambda: link_memory(work, memory_id), f"linking memory {memory_id!r}")
        return memory_id

    def _owned_memory(self, memory_id: Any) -> MemoryRecord:
        record = find_memory(self.store, memory_id)
        if record is None or record.thread_id != self.thread_id:
            raise KeyError(f"no memory {memory_id!r} in thread {self.thread_id!r}")
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
        expires_at: Any = NOT_SET,
        expected_version: Any = NOT_SET,
    ) -> str:
        """Update a memory of this thread; KeyError when it is missing, expired or another thread's.
        `expires_at` and `expected_version` as in AgentMemory.update_memory."""
        return update_memory_record(
            self.store,
            self._owned_memory(memory_id),
            content=content,
            metadata=metadata,
            timestamp=timestamp,
            ttl_days=ttl_days,
            ttl_anchor=ttl_anchor,
            status=status,
            expires_at=expires_at,
            expected_version=expected_version,
        )

    def delete_memory(self, memory_id: str, *, expected_version: Any = NOT_SET) -> int:
        """Delete a memory of this thread; returns 0 when it is missing or another thread's.

        Waits for accepted background work first, as delete_message does. `expected_version` as
        in AgentMemory.delete_memory.
        """
        expected_version_of(expected_version)
        self._runner.wait(self.thread_id, DELETE_BARRIER_SECONDS)
        try:
            record = self._owned_memory(memory_id)
        except KeyError:
            return 0
        return self.store.delete(record.record_type, record.id, expected_version=expected_version)

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
        """Store an image of this thread; its description is its searchable text. Returns its id.

        The scope arguments assert the thread's own values (a different value is a ValueError).
        An omitted description is written by the LLM when there is one, else stays empty.
        """
        for name, value in (("user_id", user_id), ("agent_id", agent_id), ("thread_id", thread_id)):
            if value is not NOT_SET and value != getattr(self, name):
                raise ValueError(f"{name}={value!r} does not match this thread's {name} {getattr(self, name)!r}")
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
            scope={"thread_id": self.thread_id, "user_id": self.user_id, "agent_id": self.agent_id},
            **store_kwargs,
        )
        if description is NOT_SET or description is None:
            self._caption_later(image_id)
        return image_id

    def _owned_image(self, image_id: Any) -> ImageRecord:
        record = self.store.get(IMAGE_TYPE, image_id) if isinstance(image_id, str) else None
        if record is None or record.thread_id != self.thread_id:
            raise KeyError(f"no image {image_id!r} in thread {self.thread_id!r}")
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
        """Replace an image's bytes, description, metadata, timestamp or lifetime; KeyError if not this thread's.

        `description=None` clears the description, and the LLM, when there is one, writes a new one.
        `expected_version`: StaleVersionError when the image changed since that version was read.
        """
        update_image_record(
            self.store,
            self._owned_image(image_id),
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
        """Delete an image of this thread; 0 when there is none. A message's image goes with the message.
        `expected_version` as in AgentMemory.delete_image."""
        expected_version_of(expected_version)
        try:
            record = self._owned_image(image_id)
        except KeyError:
            return 0
        return delete_image_record(self.store, record, expected_version=expected_version)

    def list_images(
        self, image_id: Any = NOT_SET, metadata_filter: Any = NOT_SET, include_bytes: bool = False, limit: Any = NOT_SET
    ) -> list[ImageRecord]:
        """This thread's images in store order; bytes only with `include_bytes` and an `image_id`."""
        return list_image_records(self.store, image_id, metadata_filter, include_bytes, limit, thread_id=self.thread_id)

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
        """Link two memories of this thread (source → target); returns the relation id."""
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
        return self.store.add_relations([spec], thread_id=self.thread_id)[0]

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
        """Retype or annotate a link between memories of this thread; returns 1, or 0 if there is none
        (StaleVersionError when `expected_version` is given and the link changed since)."""
        return self.store.update_relations(
            relation_id,
            relation_type,
            opposite_relation_type,
            timestamp,
            metadata,
            thread_id=self.thread_id,
            expected_version=expected_version,
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
        """Delete a link of this thread, by id or by its complete stored-direction tuple; returns 0 or 1
        (StaleVersionError, deleting nothing, when `expected_version` is given and the link changed since)."""
        return self.store.delete_relations(
            relation_id,
            source_record_id,
            source_record_type,
            target_record_id,
            target_record_type,
            relation_type,
            thread_id=self.thread_id,
            expected_version=expected_version,
        )

    # --- context ----------------------------------------------------------------------------

    def get_context_card(
        self,
        fallback_message_count: int = 5,
        max_relevant_results: Any = NOT_SET,
        token_budget: Any = NOT_SET,
        soft_token_budget: Any = NOT_SET,
        max_recent_messages: int = 0,
        except_last_messages: int = 0,
        min_relevant_results_by_type: Any = NOT_SET,
        metadata_filter: Any = None,
        include_invalid_results: bool = True,
        *,
        as_of_message_id: Any = NOT_SET,
        refresh_summary_if_due: bool = True,
    ) -> ContextCard:
        """What an agent puts in its prompt about this thread: summary, topics, relevant memories,
        recent messages (spec §7.1; cards.py). Beyond the SDK: `as_of_message_id`, a message of
        this thread, gives the card as it was right after that message was stored (its messages
        end there, only records created by then are found; the summary and topics stored now);
        KeyError when the message is missing, expired or another thread's.
        `refresh_summary_if_due=False` builds the card from the stored summary even when a
        refresh is due, asking the LLM nothing and writing nothing (a preview of the card; see
        messages_due_for_summary). `card.results` lists the records the card chose, in card order."""
        request = given(
            fallback_message_count=fallback_message_count,
            max_relevant_results=max_relevant_results,
            token_budget=token_budget,
            soft_token_budget=soft_token_budget,
            max_recent_messages=max_recent_messages,
            except_last_messages=except_last_messages,
            min_relevant_results_by_type=min_relevant_results_by_type,
            metadata_filter=metadata_filter,
            include_invalid_results=include_invalid_results,
            as_of_message_id=as_of_message_id,
            refresh_summary_if_due=refresh_summary_if_due,
        )
        with recorded_retrieval(self.store, "card", "Thread.get_context_card", self._scope(), request) as capture:
            card = build_context_card(self, **request)
            capture.done(card)
        return card

    def get_summary(self, except_last: Any = NOT_SET, token_budget: Any = NOT_SET) -> Summary:
        """The thread's summary: the one its LLM keeps (refreshed when due), else a transcript (§7.2)."""
        request = given(except_last=except_last, token_budget=token_budget)
        with recorded_retrieval(self.store, "summary", "Thread.get_summary", self._scope(), request) as capture:
            summary = build_summary(self, except_last, token_budget)
            capture.done(summary)
        return summary

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
        """Records relevant to `query`, best first; by default this thread's user and agent exactly.
        `strategy` as in AgentMemory.search."""
        requested = search_scope_from_args(
            scope,
            user_id=user_id,
            agent_id=agent_id,
            thread_id=thread_id,
            exact_user_match=exact_user_match,
            exact_agent_match=exact_agent_match,
            exact_thread_match=exact_thread_match,
        )
        resolved = resolve_thread_scope(requested, self.user_id, self.agent_id, self.thread_id)
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
        with recorded_retrieval(self.store, "search", "Thread.search", self._scope(), request) as capture:
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

    def _scope(self) -> dict[str, str | None]:
        """The thread's scope, as its activity events record it."""
        return {"user_id": self.user_id, "agent_id": self.agent_id, "thread_id": self.thread_id}

    add_messages_async = async_twin(add_messages)
    get_message_async = async_twin(get_message)
    get_messages_async = async_twin(get_messages)
    update_message_async = async_twin(update_message)
    delete_message_async = async_twin(delete_message)
    add_memory_async = async_twin(add_memory)
    update_memory_async = async_twin(update_memory)
    delete_memory_async = async_twin(delete_memory)
    search_async = async_twin(search)
    add_image_async = async_twin(add_image)
    update_image_async = async_twin(update_image)
    delete_image_async = async_twin(delete_image)
    list_images_async = async_twin(list_images)
    get_context_card_async = async_twin(get_context_card)
    get_summary_async = async_twin(get_summary)
    link_records_async = async_twin(link_records)
    update_record_link_async = async_twin(update_record_link)
    delete_record_link_async = async_twin(delete_record_link)
    wait_for_memory_extraction_async = async_twin(wait_for_memory_extraction)
    run_memory_extraction_async = async_twin(run_memory_extraction)


def schedule_llm_work(
    runner: LlmWorkRunner, config: MemoryExtractionConfig, key: str, work: Callable[[], object], what: str
) -> bool:
    """Run LLM work now (INLINE) or queue it (BACKGROUND); the raw write is already stored.

    False when a full queue dropped the work.
    `key` groups work that must not interleave and that waits cover: a thread id.
    """
    if config.extraction_mode is MemoryExtractionMode.BACKGROUND:
        # The work runs on a worker thread in the caller's context, so that the activity log
        # records its writes under the caller who caused them (activity.acting_as).
        return runner.submit(
            key,
            functools.partial(contextvars.copy_context().run, work),
            what,
            config.background_extraction_queue_full_behavior,
            config.background_extraction_queue_put_timeout_seconds,
        )
    runner.run_inline(key, work, what)
    return True


def autonomous_linking_from(value: Any, llm: Llm | None, config: MemoryExtractionConfig) -> bool:
    """Whether add_memory links the new memory by LLM: on by default when it can (spec §6.6)."""
    if value is NOT_SET:
        return llm is not None and config.memory_link_extraction_mode is not MemoryLinkExtractionMode.DISABLED
    if not isinstance(value, bool):
        raise ValueError(f"autonomous_linking must be True or False, not {value!r}")
    if value and llm is None:
        raise ValueError("autonomous_linking=True needs an LLM: pass llm= to the thread or the client")
    return value


def link_memory(work: LlmMemoryWork, memory_id: str) -> None:
    """Autonomous linking of one manual memory (if it is still there when the work runs).

    Candidates come from the memory's own user and agent, which a thread's add_memory may override.
    """
    memory = find_memory(work.store, memory_id)
    if memory is not None:
        work.in_scope_of(memory).link_new_memories([memory])
