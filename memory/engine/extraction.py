"""LLM-backed memory: extraction, automatic links, summaries, captions (spec §4.3.1, §6.6, §7.3, §8).

A thread with an LLM turns its messages into typed memories, links them to what it already
knows, keeps a running summary with topics, and captions images that come without a
description. Everything here runs after the raw data is stored; `LlmMemoryWork` decides what is
due (under the thread's lock, so counting is exact) and hands a unit of work to the thread's
runner, which runs it inline or in the background.

Progress is persisted in the thread's settings under "llm": `extracted_through` and
`summarized_through` are the seq_no of the last message each has covered, so a new handle, or
another process, continues where the last one stopped.
"""

from __future__ import annotations

import base64
import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .activity.context import caused_by, current_cause
from .search import CHARS_PER_TOKEN, estimate_tokens
from .types import (
    BUILTIN_RELATIONS,
    IMAGE_TYPE,
    MEMORY_TYPES,
    SOURCE_MESSAGES_KEY,
    ImageInputLimitConfig,
    MemoryExtractionConfig,
    MemoryExtractionImageContext,
    MemoryLinkExtractionMode,
    MessageRecord,
    Record,
    llm_link_metadata,
)

if TYPE_CHECKING:
    from .llm import Llm
    from .stores.base import MemoryStore

log = logging.getLogger(__name__)

STATE_KEY = "llm"
EXTRACTION_SEARCH_RESULTS = 10
"""Existing memories shown to the extraction LLM, so that it does not repeat them (and can link them)."""
LINK_CANDIDATES_PER_MEMORY = 5
"""Existing memories considered as link targets for each new memory (POST_EXTRACTION)."""
COMMAND_CHUNK_MESSAGES = 20
"""Messages per extraction request when a whole thread is (re-)extracted on demand."""
CAPTION_MAX_TOKENS = 300
MAX_CAUSE_IDS = 50
"""The ids a write's recorded cause names at most (the messages an extraction read, …)."""
SHORTENED_TRUNCATION_MARK = " […]"

_RELATION_TYPES = sorted(BUILTIN_RELATIONS)

_EXTRACTION_PROMPT = """\
You maintain the long-term memory of an AI agent. Read the NEW messages of a conversation and \
extract what is worth remembering in later conversations: facts about the user and their world, \
their preferences, instructions on how the agent should behave, and notable events.

Memory types:
- fact: objective information (names, places, relationships, plans, possessions).
- preference: likes, dislikes and choices.
- guideline: instructions or rules for the agent's behaviour.
- memory: anything else worth keeping, such as events and experiences.

Rules:
- Each memory is one self-contained sentence that makes sense without the conversation, naming \
who it is about ("The user ...").
- Extract only from the NEW messages; earlier messages and the summary are context.
- Do not repeat what an EXISTING memory already says; an empty list is a good answer when there \
is nothing new.
- "source_messages" lists the numbers of the NEW messages each memory comes from."""

_DURING_LINKS_PROMPT = """
Also link new memories to EXISTING ones where one clearly relates to the other. "memory" is the \
index of the new memory in your "memories" list (from 0) and "target_id" is the existing \
memory's id. Relation types: supersedes (replaces it as the current information), refines (adds \
detail or precision to it), duplicates (says the same thing), supports (is evidence for it), \
contradicts (conflicts with it, and it is unclear which is right)."""

_MEMORY_IMAGES_PROMPT = """
Images in the messages are described in brackets; remember what they show when it matters."""

_LINK_PROMPT = """\
You maintain the links between the long-term memories of an AI agent. For each NEW memory, \
decide whether it relates to any of the EXISTING memories, and how:
- supersedes: the new memory replaces the existing one as the current information \
(for example a changed preference);
- refines: it keeps the existing information and adds detail or precision;
- duplicates: it says the same thing;
- supports: it is evidence for the existing memory;
- contradicts: it conflicts with it, and it is unclear which is right.
Link only when the relation is clear; most pairs are unrelated and an empty list is a good \
answer. "new_memory" is the NEW memory's number, "target_id" the EXISTING memory's id."""

_SUMMARY_PROMPT = """\
You keep a running summary of a conversation between a user and an AI agent. Update the \
PREVIOUS SUMMARY with the NEW messages into one compact summary, in prose, that keeps every \
fact, decision, preference and open question an agent would need to continue the conversation. \
Also list up to 8 short topics (a few words each) that the conversation is about."""

_SHORTEN_PROMPT = """\
Shorten the following message to at most {tokens} tokens (about {chars} characters). Keep every \
fact, name, number, decision and request; drop repetition and filler. Write it as the message \
itself, in the same voice."""

_CAPTION_PROMPT = """\
Describe this image for an AI agent's long-term memory in one to three sentences: what it \
shows, any readable text, and anything a later conversation might refer to."""


def _object_schema(title: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "title": title,
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _array_of(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": item}


_NEW_MEMORY = _object_schema(
    "memory",
    {
        "content": {"type": "string"},
        "memory_type": {"type": "string", "enum": list(MEMORY_TYPES)},
        "source_messages": _array_of({"type": "integer"}),
    },
)
_DURING_LINK = _object_schema(
    "link",
    {"memory": {"type": "integer"}, "target_id": {"type": "string"}, "relation_type": {"enum": _RELATION_TYPES}},
)
EXTRACTION_SCHEMA = _object_schema("memory_extraction", {"memories": _array_of(_NEW_MEMORY)})
EXTRACTION_WITH_LINKS_SCHEMA = _object_schema(
    "memory_extraction", {"memories": _array_of(_NEW_MEMORY), "links": _array_of(_DURING_LINK)}
)
LINK_SCHEMA = _object_schema(
    "memory_links",
    {
        "links": _array_of(
            _object_schema(
                "link",
                {
                    "new_memory": {"type": "integer"},
                    "target_id": {"type": "string"},
                    "relation_type": {"enum": _RELATION_TYPES},
                },
            )
        )
    },
)
SUMMARY_SCHEMA = _object_schema(
    "thread_summary", {"summary": {"type": "string"}, "topics": _array_of({"type": "string"})}
)
SHORTEN_SCHEMA = _object_schema("shortened_message", {"text": {"type": "string"}})
CAPTION_SCHEMA = _object_schema("image_caption", {"description": {"type": "string"}})


def _char_cap(tokens: int) -> int | None:
    """The character cap of a token limit; None when the limit is off (<= 0)."""
    return int(tokens * CHARS_PER_TOKEN) if tokens > 0 else None


def _clip(text: str, chars: int | None) -> str:
    if chars is None or len(text) <= chars:
        return text
    return text[: max(0, chars - len(SHORTENED_TRUNCATION_MARK))] + SHORTENED_TRUNCATION_MARK


def _answer_list(answer: Any, key: str) -> list[Any]:
    """The list under `key` of a JSON object answer; anything else is a malformed answer."""
    items = answer.get(key) if isinstance(answer, dict) else None
    if not isinstance(items, list):
        raise ValueError(f'the model\'s answer has no "{key}" list')
    return items


DEFAULT_MAX_MESSAGE_TOKEN_LENGTH = 15_000
DEFAULT_MESSAGE_SHORTENING_INPUT_TOKEN_LIMIT = 30_000
DEFAULT_CONTEXT_CARD_TOKEN_LIMIT = 100_000


class LlmMemoryWork:
    """The LLM work of one scope (a thread, or a manual memory's user and agent): what is due
    after a write, and doing it.

    Related memories are searched in the scope's user and agent, exactly, across threads: the
    same default scope as a thread's own searches.
    """

    def __init__(
        self,
        store: MemoryStore,
        llm: Llm,
        config: MemoryExtractionConfig,
        *,
        thread_id: str | None,
        user_id: str | None,
        agent_id: str | None,
        image_limits: ImageInputLimitConfig,
        state_lock: threading.Lock | None = None,
        max_message_token_length: int = DEFAULT_MAX_MESSAGE_TOKEN_LENGTH,
        message_shortening_input_token_limit: int = DEFAULT_MESSAGE_SHORTENING_INPUT_TOKEN_LIMIT,
        context_card_token_limit: int = DEFAULT_CONTEXT_CARD_TOKEN_LIMIT,
    ) -> None:
        self.store = store
        self.llm = llm
        self.config = config
        self.thread_id, self.user_id, self.agent_id = thread_id, user_id, agent_id
        self.image_limits = image_limits
        self._state_lock = state_lock or threading.Lock()
        self.max_message_token_length = max_message_token_length
        self.message_shortening_input_token_limit = message_shortening_input_token_limit
        self.context_card_token_limit = context_card_token_limit
        self._shortened: dict[tuple[str, str], str] = {}

    def in_scope_of(self, record: Record) -> LlmMemoryWork:
        """This work for a record of another user or agent (a thread may write memories for others)."""
        if (record.user_id, record.agent_id) == (self.user_id, self.agent_id):
            return self
        return LlmMemoryWork(
            self.store,
            self.llm,
            self.config,
            thread_id=record.thread_id,
            user_id=record.user_id,
            agent_id=record.agent_id,
            image_limits=self.image_limits,
        )

    def _related(self, query: str, k: int) -> list[Record]:
        """Live memories related to `query` in this scope's user and agent."""
        hits = self.store.search(
            query,
            k,
            record_types=list(MEMORY_TYPES),
            include_invalid_results=False,
            user_id=self.user_id,
            exact_user_match=True,
            agent_id=self.agent_id,
            exact_agent_match=True,
        )
        return [record for record, _ in hits]

    # --- planning (runs in the writer, under the thread's planning lock) -----------------------

    def state(self) -> dict[str, int]:
        stored = self.store.get_thread(self.thread_id)
        state = stored.settings.get(STATE_KEY, {}) if stored is not None else {}
        return {"extracted_through": -1, "summarized_through": -1, **state}

    def plan_after_add(self) -> list[MessageRecord] | None:
        """The messages an extraction should cover now, advancing the counter; None when none is due.

        Frequency -1: every add_messages call extracts over what it added. N > 0: once N messages
        have arrived since the last extraction, over all of them.
        """
        if not self.config.extract_memories:
            return None
        state = self.state()
        pending = self.store.list_thread_messages(self.thread_id, range_start_seq_no=state["extracted_through"] + 1)
        frequency = self.config.memory_extraction_frequency
        if not pending or (frequency > 0 and len(pending) < frequency):
            return None
        self.store.save_thread_state(self.thread_id, STATE_KEY, {"extracted_through": pending[-1].seq_no})
        return pending

    def extract_or_remember(self, targets: Sequence[MessageRecord]) -> list[str]:
        """`extract`, remembering the messages of a failed attempt for `messages_to_extract`."""
        try:
            return self.extract(targets)
        except Exception:
            self.remember_unextracted(targets)
            raise

    def remember_unextracted(self, targets: Sequence[MessageRecord]) -> None:
        """Note messages whose planned extraction failed or was dropped (the latest 100 such runs)."""
        if targets:
            with self._state_lock:
                failed = self.state().get("failed_ranges", [])
                failed.append([targets[0].seq_no, targets[-1].seq_no])
                self.store.save_thread_state(self.thread_id, STATE_KEY, {"failed_ranges": failed[-100:]})

    def messages_to_extract(self, include_extracted: bool) -> list[MessageRecord]:
        """All messages, or those no extraction has covered: never planned, or whose extraction failed
        or was dropped from a full queue."""
        state = self.state()
        if include_extracted:
            return self.store.list_thread_messages(self.thread_id)
        messages = {
            m.seq_no: m
            for m in self.store.list_thread_messages(self.thread_id, range_start_seq_no=state["extracted_through"] + 1)
        }
        for first, last in state.get("failed_ranges", []):
            for message in self.store.list_thread_messages(
                self.thread_id, range_start_seq_no=first, range_end_seq_no=last + 1
            ):
                messages[message.seq_no] = message
        return [messages[seq_no] for seq_no in sorted(messages)]

    def messages_due_for_summary(self) -> int:
        """How many messages a due summary refresh would fold in now: those since the last summary,
        when enough arrived for a refresh (spec §7.3); 0 when none is due. Counted, not read: pages
        ask it on every view."""
        if not self.config.enable_context_summary:
            return 0
        through = self.state()["summarized_through"]
        uncovered = self.store.count_thread_messages(self.thread_id)
        if through >= 0:
            uncovered -= self.store.count_thread_messages(self.thread_id, through_seq_no=through)
        frequency = self.config.context_summary_update_frequency
        return uncovered if uncovered and (frequency <= 0 or uncovered >= frequency) else 0

    # --- extraction -----------------------------------------------------------------------------

    def extract(self, targets: Sequence[MessageRecord]) -> list[str]:
        """Extract memories from `targets` (with their window of context), store and link them;
        the activity log records the writes as caused by extraction from these messages."""
        targets = list(targets)
        if not targets:
            return []
        cause = {
            "what": "extraction",
            "thread_id": self.thread_id,
            "message_ids": [message.id for message in targets[:MAX_CAUSE_IDS]],
            "seq_nos": [targets[0].seq_no, targets[-1].seq_no],
        }
        with caused_by(cause):
            return self._extract(targets)

    def _extract(self, targets: list[MessageRecord]) -> list[str]:
        link_mode = self.config.memory_link_extraction_mode
        existing = self._extraction_search(targets)
        numbered: dict[int, MessageRecord] = {}
        prompt = self._extraction_prompt(targets, existing, numbered)
        during = link_mode is MemoryLinkExtractionMode.DURING_EXTRACTION
        schema = EXTRACTION_WITH_LINKS_SCHEMA if during else EXTRACTION_SCHEMA
        answer = self.llm.complete_json(prompt, schema)
        candidates = _answer_list(answer, "memories")
        new_memories: list[Record] = []
        index_of_answer: dict[int, Record] = {}
        for position, item in enumerate(candidates):
            memory = self._store_extracted(item, numbered, targets)
            if memory is not None:
                new_memories.append(memory)
                index_of_answer[position] = memory
        if during and isinstance(answer, dict):
            links = answer.get("links")
            known = {record.id: record for record in existing}
            for link in links if isinstance(links, list) else ():
                if isinstance(link, dict):
                    self._add_link(index_of_answer.get(link.get("memory")), link, known)
        elif link_mode is MemoryLinkExtractionMode.POST_EXTRACTION and new_memories:
            self.link_new_memories(new_memories)
        return [memory.id for memory in new_memories]

    def _extraction_search(self, targets: list[MessageRecord]) -> list[Record]:
        """Existing memories related to the new messages, in this thread's default search scope."""
        query = " ".join(message.content or "" for message in targets)[-4000:].strip()
        if not query:
            return []
        return self._related(query, EXTRACTION_SEARCH_RESULTS)

    def _extraction_prompt(
        self, targets: list[MessageRecord], existing: list[Record], numbered: dict[int, MessageRecord]
    ) -> list[dict[str, Any]]:
        config = self.config
        system = _EXTRACTION_PROMPT
        if config.memory_link_extraction_mode is MemoryLinkExtractionMode.DURING_EXTRACTION:
            system += "\n" + _DURING_LINKS_PROMPT
        if config.memory_extraction_image_context is MemoryExtractionImageContext.MEMORY:
            system += "\n" + _MEMORY_IMAGES_PROMPT
        if config.memory_extraction_custom_instructions:
            system += "\n\nAdditional instructions:\n" + config.memory_extraction_custom_instructions

        window = config.memory_extraction_window
        context: list[MessageRecord] = []
        if window > len(targets):
            context = self.store.list_thread_messages(
                self.thread_id, last_n=window - len(targets), range_end_seq_no=targets[0].seq_no
            )
        summary = self._stored_summary()
        memories_text = "\n".join(f"[{m.id}] ({m.record_type}) {m.content}" for m in existing)

        budget = _char_cap(config.memory_extraction_token_limit)
        fixed = len(system) + len(memories_text) + 200
        if budget is not None:
            summary = _clip(summary, max(0, (budget - fixed) // 4))
            budget = max(0, budget - fixed - len(summary))
        # Newest first within the budget: the new messages, then earlier context.
        kept_targets, budget = self._fit("extraction prompt", self._message_lines(targets, numbered), budget)
        context_lines, _ = _newest_within(self._message_lines(context), budget)

        sections = []
        if summary:
            sections.append(f"SUMMARY OF THE CONVERSATION SO FAR:\n{summary}")
        if memories_text:
            sections.append(f"EXISTING MEMORIES:\n{memories_text}")
        if context_lines:
            sections.append("EARLIER MESSAGES (context only):\n" + "\n".join(context_lines))
        sections.append("NEW MESSAGES:\n" + "\n".join(kept_targets))
        user: str | list[dict[str, Any]] = "\n\n".join(sections)
        if config.memory_extraction_image_context is MemoryExtractionImageContext.IMAGE:
            user = [{"type": "text", "text": user}, *self._image_parts(targets)]
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def _fit(self, prompt: str, lines: list[str], budget: int | None) -> tuple[list[str], int | None]:
        """`_newest_within`, with a warning when messages the prompt is about had to be left out."""
        kept, left = _newest_within(lines, budget)
        if len(kept) < len(lines):
            log.warning(
                "%s of thread %r is over its token limit: %d of %d messages left out",
                prompt,
                self.thread_id,
                len(lines) - len(kept),
                len(lines),
            )
        return kept, left

    def _message_lines(
        self, messages: list[MessageRecord], numbered: dict[int, MessageRecord] | None = None
    ) -> list[str]:
        """One prompt line per message; with `numbered`, lines are numbered from 1 and recorded there."""
        lines = []
        for number, message in enumerate(messages, 1):
            stamp = f" ({message.timestamp})" if message.timestamp else ""
            line = f"{message.role}{stamp}: {self.prompt_copy(message)}"
            if numbered is not None:
                numbered[number] = message
                line = f"[{number}] {line}"
            lines.append(line)
        return lines

    def prompt_copy(self, message: MessageRecord) -> str:
        """The message as prompts show it: image parts per the image context, oversized text shortened."""
        text = message.content or ""
        images = [part for part in message.parts or () if part.get("type") == "image"]
        if images and self.config.memory_extraction_image_context is not MemoryExtractionImageContext.DISABLED:
            descriptions = self._image_descriptions([part["id"] for part in images])
            notes = [f"[image: {descriptions.get(part['id']) or 'no description'}]" for part in images]
            text = "\n".join(filter(None, [text, *notes]))
        elif images:
            text = "\n".join(filter(None, [text, *["[image]"] * len(images)]))
        return self.shorten(message.id, text)

    def _image_descriptions(self, image_ids: list[str]) -> dict[str, str]:
        return {image.id: image.content for image in self.store.list(IMAGE_TYPE, limit=None, record_id=image_ids)}

    def _image_parts(self, messages: list[MessageRecord]) -> list[dict[str, Any]]:
        """The images of these messages as vision content parts, within the per-request limits."""
        limits = self.image_limits
        ids = [part["id"] for m in messages for part in m.parts or () if part.get("type") == "image"]
        if not ids:
            return []
        records = {image.id: image for image in self.store.list(IMAGE_TYPE, limit=None, record_id=ids)}
        payloads = self.store.image_bytes(list(records))
        parts, total = [], 0
        for image_id in ids:
            data = payloads.get(image_id)
            if data is None or image_id not in records:
                continue
            if len(parts) >= limits.max_images_per_llm_request:
                break
            if total + len(data) > limits.max_total_raw_image_bytes_per_llm_request:
                continue  # too big for this request; its caption stays in the text
            total += len(data)
            parts.append(_image_part(data, records[image_id].mime_type))
        return parts

    def shorten(self, key: str, text: str) -> str:
        """A prompt-time copy within max_message_token_length: summarised by the LLM, else truncated."""
        limit = self.max_message_token_length
        if limit <= 0 or estimate_tokens(text) <= limit:
            return text
        cached = self._shortened.get((key, text))
        if cached is not None:
            return cached
        chars = int(limit * CHARS_PER_TOKEN)
        excerpt = _clip(text, _char_cap(self.message_shortening_input_token_limit))
        prompt = [
            {"role": "system", "content": _SHORTEN_PROMPT.format(tokens=limit, chars=chars)},
            {"role": "user", "content": excerpt},
        ]
        try:
            answer = self.llm.complete_json(prompt, SHORTEN_SCHEMA)
            shortened = answer.get("text") if isinstance(answer, dict) else None
            if not isinstance(shortened, str) or not shortened.strip():
                raise ValueError('the model\'s answer has no "text"')
        except (RuntimeError, ValueError) as exc:
            log.warning("could not shorten message %r with the LLM (%s); truncating it", key, exc)
            shortened = text
        shortened = _clip(shortened, chars)
        self._shortened[(key, text)] = shortened
        return shortened

    def _store_extracted(
        self, item: Any, numbered: dict[int, MessageRecord], targets: list[MessageRecord]
    ) -> Record | None:
        if not isinstance(item, dict) or not isinstance(item.get("content"), str) or not item["content"].strip():
            log.warning("ignoring a malformed extracted memory: %.200r", item)
            return None
        memory_type = item.get("memory_type")
        if memory_type not in MEMORY_TYPES:
            memory_type = "memory"
        named = item.get("source_messages")
        numbers = sorted({n for n in named if isinstance(n, int) and n in numbered}) if isinstance(named, list) else []
        sources = [numbered[n] for n in numbers] or targets
        # Provenance: the ids of the messages it came from, whatever the inheritance setting.
        metadata = {**(self._inherited_metadata(sources) or {}), SOURCE_MESSAGES_KEY: [m.id for m in sources]}
        timestamps = [message.timestamp for message in sources if message.timestamp]
        [memory_id] = self.store.add(
            [item["content"].strip()],
            memory_type,
            thread_ids=self.thread_id,
            user_ids=self.user_id,
            agent_ids=self.agent_id,
            timestamps=max(timestamps) if timestamps else None,
            metadata=metadata,
        )
        return self.store.get(memory_type, memory_id)

    def _inherited_metadata(self, sources: list[MessageRecord]) -> dict[str, Any] | None:
        """Metadata from the source messages per §8.2; a key whose sources disagree is left out."""
        inherit = self.config.memory_extraction_inherit_message_metadata
        if inherit is False:
            return None
        merged: dict[str, Any] = {}
        conflicts: set[str] = set()
        for message in sources:
            for key, value in (message.metadata or {}).items():
                if inherit is not True and key not in inherit:
                    continue
                if key in merged and merged[key] != value:
                    conflicts.add(key)
                merged.setdefault(key, value)
        for key in conflicts:
            del merged[key]
        return merged or None

    # --- links ----------------------------------------------------------------------------------

    def link_new_memories(self, new_memories: list[Record]) -> int:
        """POST_EXTRACTION: one LLM request decides links from these memories to related ones."""
        cause = {"what": "link", "memory_ids": [memory.id for memory in new_memories[:MAX_CAUSE_IDS]]}
        with caused_by(current_cause() or cause):  # links made during an extraction keep its cause
            return self._link_new_memories(new_memories)

    def _link_new_memories(self, new_memories: list[Record]) -> int:
        new_ids = {memory.id for memory in new_memories}
        candidates: dict[str, Record] = {}
        for memory in new_memories:
            related = self._related(memory.content, LINK_CANDIDATES_PER_MEMORY + len(new_ids))
            found = [record for record in related if record.id not in new_ids]
            for record in found[:LINK_CANDIDATES_PER_MEMORY]:
                candidates.setdefault(record.id, record)
        if not candidates:
            return 0
        system = _LINK_PROMPT
        if self.config.memory_link_extraction_custom_instructions:
            system += "\n\nAdditional instructions:\n" + self.config.memory_link_extraction_custom_instructions
        new_text = "\n".join(f"[{n}] ({m.record_type}) {m.content}" for n, m in enumerate(new_memories, 1))
        existing_lines = [f"[{m.id}] ({m.record_type}) {m.content}" for m in candidates.values()]
        budget = _char_cap(self.config.memory_link_extraction_token_limit)
        if budget is not None:
            existing_lines, _ = _newest_within(existing_lines[::-1], max(0, budget - len(system) - len(new_text)))
            existing_lines.reverse()
        user = f"NEW MEMORIES:\n{new_text}\n\nEXISTING MEMORIES:\n" + "\n".join(existing_lines)
        answer = self.llm.complete_json(
            [{"role": "system", "content": system}, {"role": "user", "content": user}], LINK_SCHEMA
        )
        by_number = dict(enumerate(new_memories, 1))
        created = 0
        for link in _answer_list(answer, "links"):
            if isinstance(link, dict):
                created += self._add_link(by_number.get(link.get("new_memory")), link, candidates)
        return created

    def _add_link(self, source: Record | None, link: dict[str, Any], targets: dict[str, Record]) -> int:
        """Create one LLM-proposed link if it names a shown memory and a known type; returns 0 or 1.
        Its metadata marks it as the LLM's (types.LLM_LINK_ORIGIN), so that people can review what
        automatic links retired."""
        target = targets.get(link.get("target_id"))
        relation_type = link.get("relation_type")
        if source is None or target is None or relation_type not in BUILTIN_RELATIONS or source.id == target.id:
            log.info("ignoring a proposed link that names no shown memory or an unknown type: %.200r", link)
            return 0
        try:
            self.store.add_relations(
                [
                    {
                        "source_record_id": source.id,
                        "source_record_type": source.record_type,
                        "target_record_id": target.id,
                        "target_record_type": target.record_type,
                        "relation_type": relation_type,
                        "metadata": llm_link_metadata(self.llm.name),
                    }
                ]
            )
        except ValueError as exc:  # e.g. the two are linked already
            log.info("proposed link %s → %s not created: %s", source.id, target.id, exc)
            return 0
        return 1

    # --- summaries ------------------------------------------------------------------------------

    def _stored_summary(self) -> str:
        stored = self.store.get_thread(self.thread_id)
        return stored.summary or "" if stored is not None else ""

    def refresh_summary(self) -> bool:
        """Fold the messages since the last summary into it, with new topics; False if none came."""
        state = self.state()
        messages = self.store.list_thread_messages(self.thread_id, range_start_seq_no=state["summarized_through"] + 1)
        if not messages:
            return False
        summary, topics = self.summarise(messages, self._stored_summary())
        cause = {"what": "summary", "thread_id": self.thread_id, "seq_nos": [messages[0].seq_no, messages[-1].seq_no]}
        with caused_by(cause):
            self.store.save_thread_summary(self.thread_id, summary, topics)
        self.store.save_thread_state(self.thread_id, STATE_KEY, {"summarized_through": messages[-1].seq_no})
        return True

    def summarise(self, messages: list[MessageRecord], previous: str = "") -> tuple[str, list[str]]:
        """A summary and topics of `messages` following `previous`, within context_card_token_limit."""
        budget = _char_cap(self.context_card_token_limit)
        if budget is not None:
            previous = _clip(previous, budget // 3)
            budget = max(0, budget - len(_SUMMARY_PROMPT) - len(previous))
        lines, _ = self._fit("summary prompt", self._message_lines(messages), budget)
        user = f"PREVIOUS SUMMARY:\n{previous or '(none)'}\n\nNEW MESSAGES:\n" + "\n".join(lines)
        answer = self.llm.complete_json(
            [{"role": "system", "content": _SUMMARY_PROMPT}, {"role": "user", "content": user}], SUMMARY_SCHEMA
        )
        summary = answer.get("summary") if isinstance(answer, dict) else None
        if not isinstance(summary, str) or not summary.strip():
            raise ValueError('the model\'s answer has no "summary" text')
        topics = answer.get("topics")
        topics = [t.strip() for t in topics if isinstance(t, str) and t.strip()] if isinstance(topics, list) else []
        return summary.strip(), topics

    # --- captions -------------------------------------------------------------------------------

    def caption(self, image_ids: Sequence[str]) -> int:
        """Describe the images that still have no description; returns how many were captioned."""
        with caused_by({"what": "caption", "image_ids": list(image_ids)[:MAX_CAUSE_IDS]}):
            return self._caption(image_ids)

    def _caption(self, image_ids: Sequence[str]) -> int:
        records = [image for image in self.store.list(IMAGE_TYPE, limit=None, record_id=list(image_ids))]
        missing = [image for image in records if not image.content]
        payloads = self.store.image_bytes([image.id for image in missing]) if missing else {}
        captioned = 0
        for image in missing:
            data = payloads.get(image.id)
            if data is None:
                continue
            prompt = [
                {"role": "system", "content": _CAPTION_PROMPT},
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "Describe this image."}, _image_part(data, image.mime_type)],
                },
            ]
            try:
                answer = self.llm.complete_json(prompt, CAPTION_SCHEMA, max_tokens=CAPTION_MAX_TOKENS)
                description = answer.get("description") if isinstance(answer, dict) else None
                if not isinstance(description, str) or not description.strip():
                    raise ValueError('the model\'s answer has no "description"')
            except (RuntimeError, ValueError) as exc:
                log.warning("could not caption image %r: %s", image.id, exc)
                continue
            captioned += self.store.update(IMAGE_TYPE, image.id, text=description.strip())
        return captioned


MIN_LINE_CHARS = 200
"""The newest line is kept, cut to at least this many characters, even when the budget is smaller."""


def _newest_within(lines: list[str], budget: int | None) -> tuple[list[str], int | None]:
    """The latest lines whose total length fits `budget` characters (None: all), in order, and what is left.

    The newest line is always kept, cut to the budget when it is too long on its own, so that a
    prompt never goes out without the message it is about.
    """
    if budget is None:
        return lines, None
    kept: list[str] = []
    for line in reversed(lines):
        if len(line) + 1 > budget:
            if not kept:
                kept.append(_clip(line, max(budget - 1, MIN_LINE_CHARS)))
                budget = max(0, budget - len(kept[0]) - 1)
            break
        kept.append(line)
        budget -= len(line) + 1
    return kept[::-1], budget


def _image_part(data: bytes, mime_type: Any) -> dict[str, Any]:
    media_type = str(mime_type or "image/png").lower()
    encoded = base64.b64encode(data).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{media_type};base64,{encoded}"}}
