"""Fill an empty memory store with the demo world of memory/management/demo_data.py.

Everything goes through the engine's public API (AgentMemory and Thread), as an agent would write it.
The same --seed (and --end-date) always writes the same ids, timestamps, metadata and links.
"""

from __future__ import annotations

import random
import uuid
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.engine import (
    LIFECYCLE_RELATIONS,
    SOURCE_MESSAGES_KEY,
    AgentMemory,
    ImageContent,
    MemoryExtractionConfig,
    TextContent,
    TimeToLiveAnchor,
    acting_as,
    llm_link_metadata,
)
from memory.management.demo_data import (
    AGENT_GUIDELINES,
    AGENTS,
    DEMO_LINKS,
    NEAR_DUPLICATES,
    THREADS,
    USER_MEMORIES,
    USERS,
    DemoMemory,
    DemoThread,
)
from memory.management.demo_images import DEMO_IMAGES, DemoImage
from memory.services import get_agent_memory

CHANNELS = ("web", "mobile", "slack")
REVIEWERS = ("moderator-1", "moderator-2")
NO_LLM_WORK = MemoryExtractionConfig(extract_memories=False, enable_context_summary=False)
LINK_METADATA = {"created_by": "demo"}
LLM_NAME = "demo-llm"
"""The LLM named in the metadata of the demo links automatic linking made (no LLM is called)."""
RETIRED_BECAUSE = {"supersedes": "superseded", "refines": "refined", "duplicates": "duplicate"}
"""Why a memory that a lifecycle link points at was rejected in review."""


def iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")


class DemoSeeder:
    """Writes the demo world; `rng` decides ids, timing and review metadata, never the content."""

    def __init__(self, agent_memory: AgentMemory, rng: random.Random, end: datetime) -> None:
        self.agent_memory = agent_memory
        self.rng = rng
        self.end = end
        self.counts = {"messages": 0, "memories": 0, "images": 0, "expired": 0, "invalid": 0, "links": 0}
        # key -> (memory id, memory type, event time) of the memories DEMO_LINKS names
        self.keyed: dict[str, tuple[str, str, datetime]] = {}
        self.retired = {link.target: link for link in DEMO_LINKS if link.relation_type in LIFECYCLE_RELATIONS}

    def new_id(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def seed(self) -> dict[str, int]:
        for user_id, information in USERS.items():
            self.agent_memory.add_user(user_id, information)
        for agent_id, information in AGENTS.items():
            self.agent_memory.add_agent(agent_id, information)
        # Agent guidelines predate the conversations; user profile memories were gathered along the way.
        for agent_id, guidelines in AGENT_GUIDELINES.items():
            for demo in guidelines:
                when = self.end - timedelta(days=self.rng.randint(60, 90), minutes=self.rng.randint(0, 1440))
                self.add_memory(demo, when, agent_id=agent_id, source="policy")
        for user_id, memories in USER_MEMORIES.items():
            for demo in memories:
                when = self.end - timedelta(days=self.rng.randint(7, 50), minutes=self.rng.randint(0, 1440))
                self.add_memory(demo, when, user_id=user_id, source="profile")
        # Threads are written in the order their conversations ended, so that the store's notion of
        # latest activity (write time) agrees with the messages' own timestamps.
        timelines = [(demo, self.conversation_times(len(demo.exchanges))) for demo in THREADS]
        for demo, times in sorted(timelines, key=lambda timeline: timeline[1][-1][1]):
            self.seed_thread(demo, times)
        self.link_memories()
        # Last, so that the ids and times of everything above stay what they were before these.
        for user_id, memories in NEAR_DUPLICATES.items():
            for demo in memories:
                when = self.end - timedelta(days=self.rng.randint(1, 6), minutes=self.rng.randint(0, 1440))
                self.add_memory(demo, when, user_id=user_id, source="profile")
        return {"users": len(USERS), "agents": len(AGENTS), "threads": len(THREADS), **self.counts}

    def link_memories(self) -> None:
        """DEMO_LINKS, in order, each a little after the later of its two memories. A supersedes,
        refines or duplicates link is what makes its target invalid (no status flag is set)."""
        for link in DEMO_LINKS:
            (source_id, source_type, source_when), (target_id, target_type, target_when) = (
                self.keyed[link.source],
                self.keyed[link.target],
            )
            options = {} if link.opposite is None else {"opposite_relation_type": link.opposite}
            self.agent_memory.link_records(
                source_id,
                source_type,
                target_id,
                target_type,
                link.relation_type,
                relation_id=self.new_id(),
                timestamp=iso(max(source_when, target_when) + timedelta(minutes=self.rng.randint(1, 60))),
                metadata=llm_link_metadata(LLM_NAME) if link.by_llm else dict(LINK_METADATA),
                **options,
            )
            self.counts["links"] += 1

    def seed_thread(self, demo: DemoThread, times: list[tuple[datetime, datetime]]) -> None:
        channel = self.rng.choice(CHANNELS)
        thread = self.agent_memory.create_thread(
            thread_id=f"demo-{demo.slug}",
            user_id=demo.user_id,
            agent_id=demo.agent_id,
            metadata={"title": demo.title, "topic": demo.topic, "tags": list(demo.tags), "channel": channel},
            # The demo world is written as it is: an LLM, if one is configured, adds nothing to it.
            memory_extraction_config=NO_LLM_WORK,
        )
        messages: list[dict[str, Any]] = []
        for (question, answer), (asked, answered) in zip(demo.exchanges, times, strict=True):
            messages.append(self.message("user", question, asked, {"channel": channel}))
            latency = self.rng.randint(400, 4000)
            messages.append(self.message("assistant", answer, answered, {"channel": channel, "latency_ms": latency}))
        thread.add_messages(messages)
        self.counts["messages"] += len(messages)
        for remembered in demo.memories:
            # Each memory points back to the exchanges it was drawn from (question and reply), as an
            # extracted memory does (its provenance: the engine's SOURCE_MESSAGES_KEY), and was
            # written a little after the last of them.
            sources = [messages[2 * exchange + side] for exchange in remembered.said_in for side in (0, 1)]
            said = datetime.fromisoformat(sources[-1]["timestamp"] if sources else messages[-1]["timestamp"])
            self.add_memory(
                remembered,
                said + timedelta(seconds=self.rng.randint(5, 120)),
                user_id=demo.user_id,
                agent_id=demo.agent_id,
                thread_id=thread.thread_id,
                source="chat",
                source_message_ids=[source["id"] for source in sources],
            )
        for image in DEMO_IMAGES:
            if image.thread_slug == demo.slug:
                self.add_image(thread, image, after=datetime.fromisoformat(messages[-1]["timestamp"]), channel=channel)

    def add_image(self, thread: Any, image: DemoImage, *, after: datetime, channel: str) -> None:
        """A photo the user sends after the conversation, or a picture kept with the thread."""
        when = iso(after + timedelta(minutes=self.rng.randint(2, 30)))
        if image.in_message is None:
            thread.add_image(image.png(), description=image.description, image_id=self.new_id(), timestamp=when)
            self.counts["images"] += 1
            return
        parts = [
            TextContent(text=image.in_message),
            ImageContent(id=self.new_id(), bytes=image.png(), description=image.description),
        ]
        thread.add_messages(
            [{**self.message("user", "", after, {"channel": channel}), "content": parts, "timestamp": when}]
        )
        self.counts["messages"] += 1
        self.counts["images"] += 1

    def message(self, role: str, content: str, moment: datetime, metadata: dict[str, Any]) -> dict[str, Any]:
        return {"id": self.new_id(), "role": role, "content": content, "timestamp": iso(moment), "metadata": metadata}

    def conversation_times(self, exchanges: int) -> list[tuple[datetime, datetime]]:
        """(asked, answered) per exchange: sessions of 2 to 4 exchanges a few days apart, ending before `end`."""
        times = []
        moment = datetime(2000, 1, 1, self.rng.randint(7, 20), self.rng.randint(0, 59), tzinfo=UTC)
        left_in_session = self.rng.randint(2, 4)
        for _ in range(exchanges):
            if left_in_session == 0:
                next_day = moment.date() + timedelta(days=self.rng.randint(1, 5))
                moment = datetime.combine(next_day, time(self.rng.randint(7, 21), self.rng.randint(0, 59)), UTC)
                left_in_session = self.rng.randint(2, 4)
            answered = moment + timedelta(seconds=self.rng.randint(4, 90))
            times.append((moment, answered))
            moment = answered + timedelta(minutes=self.rng.randint(1, 20))
            left_in_session -= 1
        # Shift the whole conversation so that it ends between a few hours and three weeks ago.
        shift = self.end - timedelta(hours=self.rng.randint(2, 21 * 24)) - times[-1][1]
        return [(asked + shift, answered + shift) for asked, answered in times]

    def add_memory(
        self,
        demo: DemoMemory,
        when: datetime,
        *,
        source: str,
        source_message_ids: list[str] | None = None,
        **scope: str,
    ) -> None:
        review: dict[str, Any] = {"status": self.rng.choice(("open", "approved", "approved"))}
        if review["status"] == "approved":
            review["by"] = self.rng.choice(REVIEWERS)
        metadata: dict[str, Any] = {"source": source, "tags": list(demo.tags), "review": review}
        if source_message_ids:
            metadata[SOURCE_MESSAGES_KEY] = source_message_ids
        options: dict[str, Any] = {}
        if demo.expired:
            # The event happened weeks ago and was only relevant for a few days after it.
            when = self.end - timedelta(days=self.rng.randint(21, 49))
            options.update(ttl_days=self.rng.randint(3, 7), ttl_anchor=TimeToLiveAnchor.TIMESTAMP)
            self.counts["expired"] += 1
        elif demo.ttl_days is not None:
            options.update(ttl_days=demo.ttl_days, ttl_anchor=TimeToLiveAnchor.CREATED_AT)
        retired = self.retired.get(demo.key or "")
        if retired is not None:  # a later link makes it invalid: reviewers rejected it for that reason
            reason = RETIRED_BECAUSE[retired.relation_type]
            metadata["review"] = {"status": "rejected", "by": self.rng.choice(REVIEWERS), "reason": reason}
            self.counts["invalid"] += 1
        else:
            metadata["confidence"] = round(self.rng.uniform(0.6, 0.99), 2)
        when = self.after_what_it_replaces(demo, when)
        memory_id = self.new_id()
        self.agent_memory.add_memory(
            demo.content,
            memory_type=demo.memory_type,
            memory_id=memory_id,
            metadata=metadata,
            timestamp=iso(when),
            autonomous_linking=False,
            **scope,
            **options,
        )
        self.counts["memories"] += 1
        if demo.key is not None:
            self.keyed[demo.key] = (memory_id, demo.memory_type, when)

    def after_what_it_replaces(self, demo: DemoMemory, when: datetime) -> datetime:
        """A memory that supersedes, refines or duplicates one written before it happens after it."""
        for link in DEMO_LINKS:
            if link.source == demo.key and link.relation_type in LIFECYCLE_RELATIONS and link.target in self.keyed:
                replaced = self.keyed[link.target][2]
                if when <= replaced:
                    when = replaced + timedelta(minutes=self.rng.randint(1, 60))
        return when


class Command(BaseCommand):
    help = (
        "Write demo users, agents, threads, messages and memories into the memory store (OAM_STORE_URL) "
        "through the engine API. The store must have no threads yet, unless --if-empty is given, in which "
        "case a store that already has threads is left alone."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--if-empty", action="store_true", help="Do nothing (successfully) when the store already has threads."
        )
        parser.add_argument("--seed", type=int, default=1, help="Random seed for ids, timing and metadata (default 1).")
        parser.add_argument(
            "--end-date",
            type=date.fromisoformat,
            help="The day the demo timeline ends, YYYY-MM-DD (default: today, UTC). Fix it for byte-identical runs.",
        )

    def handle(self, *args: Any, if_empty: bool, seed: int, end_date: date | None, **options: Any) -> None:
        agent_memory = get_agent_memory()
        if agent_memory.list_threads(limit=1):
            if if_empty:
                self.stdout.write("The memory store already has threads; demo data not seeded.")
                return
            raise CommandError(
                "The memory store already has threads. Seed an empty store (see OAM_STORE_URL), "
                "or pass --if-empty to skip seeding when data exists."
            )
        end = datetime.combine(end_date or datetime.now(UTC).date(), time(), UTC)
        counts = DemoSeeder(agent_memory, random.Random(seed), end).seed()
        calls = agent_calls(agent_memory)
        self.stdout.write(
            self.style.SUCCESS(
                "Seeded {users} users, {agents} agents, {threads} threads, {messages} messages, {images} images "
                "and {memories} memories ({expired} already expired, {invalid} invalid) with {links} links, "
                "and {calls} agent calls.".format(**counts, calls=calls)
            )
        )


def agent_calls(agent_memory: AgentMemory, threads: int = 3) -> int:
    """A few calls of the demo's agents: in each of the latest threads, a search for its last
    message and the context card, as its agent ("<agent>-bot"), so that Activity shows what an
    agent retrieved and why from the first visit. Returns how many calls were made."""
    made = 0
    for record in agent_memory.list_threads(limit=threads):
        [last] = agent_memory.list_thread_messages_by_seq_no(record.id, last_n=1) or [None]
        if last is None or not last.content:
            continue
        thread = agent_memory.get_thread(record.id)
        with acting_as(f"{record.agent_id or 'demo'}-bot"):
            thread.search(last.content[:200])
            thread.get_context_card(refresh_summary_if_due=False)
        made += 2
    if agent_memory.activity is not None:
        agent_memory.activity.flush()
    return made
