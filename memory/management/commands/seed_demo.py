"""Fill an empty memory store with the demo world of memory/management/demo_data.py.

The world happens in time: the agents' guidelines months ago, the conversations over the last
weeks, each memory a moment after the messages it was drawn from, each link after both its
memories, and the agents' searches and context cards as the questions came. Every record, thread
and link is stored as of when it happened, so that a card as of an earlier message (the card
page's "as of") finds what existed then, and the thread list shows each thread's own activity.

A write is stored at the moment it is made, so the world is written through the engine's public
API (AgentMemory and Thread), as agents would write it and in the order it happened, into a
scratch store in memory. A snapshot of that store, every stored time set to when it happened, is
then restored into the target store (a restore keeps the times it is given), and the agents'
calls, which the scratch store recorded, go to the target's activity log at the times they were
made.

The same --seed (and --end-date) always writes the same ids, timestamps, metadata and links.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.curation import Actor, Curation
from memory.curation.bulk_plan import plan as bulk_plan
from memory.engine import (
    LIFECYCLE_RELATIONS,
    SOURCE_MESSAGES_KEY,
    ActivityEvent,
    AgentMemory,
    ImageContent,
    MemoryExtractionConfig,
    SchemaPolicy,
    Snapshot,
    SQLiteMemoryStore,
    TextContent,
    TimeToLiveAnchor,
    acting_as,
    llm_link_metadata,
    normalize_timestamp,
    unrecorded,
)
from memory.management.demo_data import (
    AGENT_GUIDELINES,
    AGENTS,
    CORRECTIONS,
    DEMO_LINKS,
    GUIDELINES_APPROVED,
    NEAR_DUPLICATES,
    THREADS,
    USER_MEMORIES,
    USERS,
    DemoMemory,
    DemoThread,
)
from memory.management.demo_images import DEMO_IMAGES, DemoImage
from memory.models import BulkChange, CurationEntry
from memory.services import get_agent_memory

CHANNELS = ("web", "mobile", "slack")
REVIEWERS = ("moderator-1", "moderator-2")
NO_LLM_WORK = MemoryExtractionConfig(extract_memories=False, enable_context_summary=False)
LINK_METADATA = {"created_by": "demo"}
LLM_NAME = "demo-llm"
"""The LLM named in the metadata of the demo links automatic linking made (no LLM is called)."""
RETIRED_BECAUSE = {"supersedes": "superseded", "refines": "refined", "duplicates": "duplicate"}
"""Why a memory that a lifecycle link points at was rejected in review."""
NEWEST_END = timedelta(hours=2)
OLDEST_END = timedelta(days=21)
"""A conversation's last message is between NEWEST_END and OLDEST_END old."""
MARGIN = timedelta(days=1)
"""An expired demo memory expired this long ago at the least; a live one with a lifetime lives this long at least."""
EXTRACTED_WITHIN = 120
"""A memory drawn from an exchange is written up to this many seconds after its reply."""

Step = Callable[[AgentMemory], object]


def iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")


def stored(moment: datetime) -> str:
    """A time as the store writes it."""
    return str(normalize_timestamp(moment))


@dataclass
class Conversation:
    """A demo thread as it happened: (asked, answered) per exchange, the exchanges that open a
    session, and per memory the exchange after which it was written and, for a memory that
    expired, the days it lasted."""

    demo: DemoThread
    channel: str
    message_ids: list[tuple[str, str]]  # (question's id, reply's id) per exchange
    written_after: list[int]
    expired_ttl_days: list[int | None]
    times: list[tuple[datetime, datetime]]
    session_starts: list[int]

    @property
    def thread_id(self) -> str:
        return f"demo-{self.demo.slug}"


class DemoSeeder:
    """Plans the demo world, writes it in time order into a scratch store and restores that into
    `agent_memory`'s store, as of when it happened. `rng` decides ids, timing and review
    metadata, never the content."""

    def __init__(self, agent_memory: AgentMemory, rng: random.Random, end: datetime) -> None:
        self.agent_memory = agent_memory
        self.rng = rng
        self.end = end
        self.counts = {"messages": 0, "memories": 0, "images": 0, "expired": 0, "invalid": 0, "links": 0}
        self.steps: list[tuple[datetime, int, Step, bool]] = []  # (when, order, step, recorded)
        self.created: dict[str, datetime] = {}  # record or link id -> when it was stored
        self.expires: dict[str, datetime] = {}  # memories whose lifetime counts from when they were stored
        self.thread_times: dict[str, list[datetime]] = {}  # thread id -> when each of its records was stored
        self.call_times: list[tuple[datetime, int]] = []  # when each agent call is made, and its step's order
        # key -> (memory id, memory type, when) of the memories DEMO_LINKS names
        self.keyed: dict[str, tuple[str, str, datetime]] = {}
        self.retired = {link.target: link for link in DEMO_LINKS if link.relation_type in LIFECYCLE_RELATIONS}
        activity = agent_memory.activity
        self.activity_config = activity.config if activity is not None else None

    def new_id(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def at(self, moment: datetime, step: Step, *, recorded: bool = False) -> None:
        """Run `step` on the scratch store at `moment` of the world's time (`recorded`: as a call
        the activity log keeps)."""
        self.steps.append((moment, len(self.steps), step, recorded))

    def seed(self) -> dict[str, int]:
        self.plan()
        snapshot, calls = self.write_in_time_order()
        with unrecorded():  # the world happened before now: seeding it is none of its calls
            self.agent_memory.restore(snapshot, keep_versions=True)
            if calls:
                self.agent_memory.store.append_activity(calls)
            changes = self.review()
        return {
            "users": len(USERS),
            "agents": len(AGENTS),
            "threads": len(THREADS),
            **self.counts,
            "calls": len(calls),
            "changes": changes,
        }

    def review(self) -> int:
        """The reviewers' pass at the dashboard the day before the demo ends, made through the
        curation service as the dashboard makes changes, so that the curation history lists them
        and can undo them: CORRECTIONS, then GUIDELINES_APPROVED in one bulk change. Each entry
        is stamped with when it was made and who made it (the reviewers have no login). Returns
        how many entries the history gained."""
        curation = Curation(self.agent_memory, Actor(None))
        when = self.end - timedelta(hours=self.rng.randint(20, 30), minutes=self.rng.randint(0, 59))
        memories = self.agent_memory.list_memories(limit=None)
        made = 0
        for correction in CORRECTIONS:
            [memory] = [memory for memory in memories if memory.content == correction.content]
            review = {"status": "approved", "by": correction.reviewer}
            entry = curation.update_memory(
                memory.id,
                version=memory.version,
                content=correction.corrected,
                metadata={**(memory.metadata or {}), "review": review},
            )
            assert entry is not None
            CurationEntry.with_pending.filter(pk=entry.pk).update(at=when, actor_name=correction.reviewer)
            made += 1
            when += timedelta(minutes=self.rng.randint(2, 15))
        reviewer, agent_id = GUIDELINES_APPROVED
        guidelines = self.agent_memory.list_memories(agent_id=agent_id, memory_types=["guideline"], limit=None)
        value = {"status": "approved", "by": reviewer}
        preview = bulk_plan(
            self.agent_memory, "set_metadata", {"key": "review", "value": value}, [m.id for m in guidelines]
        )
        change = curation.bulk_update_memories(preview.changes, preview.describe()).change
        if change is not None:
            BulkChange.objects.filter(pk=change.pk).update(at=when, actor_name=reviewer)
            made += CurationEntry.with_pending.filter(bulk=change).update(at=when, actor_name=reviewer)
        return made

    # --- the plan: what happens when --------------------------------------------------------

    def plan(self) -> None:
        # People and agents came first, and the agents' guidelines long before the conversations;
        # user profile memories were gathered along the way.
        for owners, add in ((USERS, "add_user"), (AGENTS, "add_agent")):
            for owner_id, information in owners.items():
                when = self.end - timedelta(days=100, minutes=self.rng.randint(0, 1440))
                self.created[owner_id] = when
                self.at(
                    when, lambda memory, add=add, owner=owner_id, text=information: getattr(memory, add)(owner, text)
                )
        for agent_id, guidelines in AGENT_GUIDELINES.items():
            for demo in guidelines:
                when = self.end - timedelta(days=self.rng.randint(60, 90), minutes=self.rng.randint(0, 1440))
                self.add_memory(demo, when, agent_id=agent_id, source="policy")
        for user_id, memories in USER_MEMORIES.items():
            for demo in memories:
                when = self.end - timedelta(days=self.rng.randint(7, 50), minutes=self.rng.randint(0, 1440))
                self.add_memory(demo, when, user_id=user_id, source="profile")
        for demo in in_link_order(THREADS):
            self.add_conversation(self.place(demo))
        # What agents keep writing again in other words, in the last days.
        for user_id, memories in NEAR_DUPLICATES.items():
            for demo in memories:
                when = self.end - timedelta(days=self.rng.randint(1, 6), minutes=self.rng.randint(0, 1440))
                self.add_memory(demo, when, user_id=user_id, source="profile")
        self.link_memories()

    def place(self, demo: DemoThread) -> Conversation:
        """The conversation's timeline, moved back a whole number of days (its sessions keep their
        times of day) to end between NEWEST_END and OLDEST_END ago, such that each of its
        memories with a lifetime has expired (those meant to) or is live, and each is written
        after the memories it retires."""
        channel = self.rng.choice(CHANNELS)
        message_ids = [(self.new_id(), self.new_id()) for _ in demo.exchanges]
        # A memory not drawn from an exchange was noted after one of them.
        written_after = [max(memory.said_in or (self.rng.randrange(len(demo.exchanges)),)) for memory in demo.memories]
        expired_ttl_days = [self.rng.randint(3, 7) if memory.expired else None for memory in demo.memories]
        for _ in range(1000):
            times, session_starts = self.conversation_times(len(demo.exchanges))
            last = times[-1][1]
            newest, oldest = NEWEST_END, OLDEST_END  # how long ago the conversation may end
            for memory, exchange, ttl_days in zip(demo.memories, written_after, expired_ttl_days, strict=True):
                # How long before the conversation's end the memory is written, at the most.
                ahead = last - times[exchange][1] - timedelta(seconds=EXTRACTED_WITHIN)
                if ttl_days is not None:
                    newest = max(newest, timedelta(days=ttl_days) + MARGIN - ahead)
                elif memory.ttl_days is not None:
                    oldest = min(oldest, timedelta(days=memory.ttl_days) - MARGIN - ahead)
                for replaced in self.replaced_by(memory):
                    oldest = min(oldest, self.end - replaced - timedelta(hours=1) - ahead)
            day = datetime.combine(last.date(), time(), UTC)
            shifts = [
                shift
                for days_ago in range(OLDEST_END.days + 2)
                if newest
                <= self.end
                - (last + (shift := datetime.combine(self.end.date(), time(), UTC) - timedelta(days=days_ago) - day))
                <= oldest
            ]
            if shifts:
                shift = self.rng.choice(shifts)
                moved = [(asked + shift, answered + shift) for asked, answered in times]
                return Conversation(demo, channel, message_ids, written_after, expired_ttl_days, moved, session_starts)
        raise CommandError(f"no timeline fits the lifetimes and links of the memories of {demo.slug!r}")

    def replaced_by(self, memory: DemoMemory) -> list[datetime]:
        """When the memories that `memory` supersedes, refines or duplicates were written, of those planned already."""
        return [
            self.keyed[link.target][2]
            for link in DEMO_LINKS
            if link.source == memory.key and link.relation_type in LIFECYCLE_RELATIONS and link.target in self.keyed
        ]

    def conversation_times(self, exchanges: int) -> tuple[list[tuple[datetime, datetime]], list[int]]:
        """(asked, answered) per exchange: sessions of 2 to 4 exchanges a few days apart, in the
        daytime, from an arbitrary day; and the exchanges that open a session."""
        times: list[tuple[datetime, datetime]] = []
        session_starts = [0]
        moment = datetime(2000, 1, 1, self.rng.randint(7, 20), self.rng.randint(0, 59), tzinfo=UTC)
        left_in_session = self.rng.randint(2, 4)
        for index in range(exchanges):
            if left_in_session == 0:
                next_day = moment.date() + timedelta(days=self.rng.randint(1, 5))
                moment = datetime.combine(next_day, time(self.rng.randint(7, 21), self.rng.randint(0, 59)), UTC)
                left_in_session = self.rng.randint(2, 4)
                session_starts.append(index)
            answered = moment + timedelta(seconds=self.rng.randint(4, 90))
            times.append((moment, answered))
            moment = answered + timedelta(minutes=self.rng.randint(1, 20), seconds=self.rng.randint(0, 59))
            left_in_session -= 1
        return times, session_starts

    def add_conversation(self, conversation: Conversation) -> None:
        demo, thread_id, channel = conversation.demo, conversation.thread_id, conversation.channel
        self.thread_times[thread_id] = []
        self.at(conversation.times[0][0], lambda memory: create_thread(memory, demo, channel))
        last_exchange = len(demo.exchanges) - 1
        last_question = max((i for i, (question, _) in enumerate(demo.exchanges) if "?" in question), default=0)
        for index, ((question, answer), (asked, answered)) in enumerate(
            zip(demo.exchanges, conversation.times, strict=True)
        ):
            question_id, answer_id = conversation.message_ids[index]
            self.add_message(thread_id, message(question_id, "user", question, asked, {"channel": channel}))
            reads = ["search"] if index == last_question else []
            if index in conversation.session_starts or index == last_exchange:
                reads.append("card")
            self.agent_reads(demo, thread_id, question, asked, reads)
            metadata = {"channel": channel, "latency_ms": self.rng.randint(400, 4000)}
            self.add_message(thread_id, message(answer_id, "assistant", answer, answered, metadata))
        for remembered, exchange, ttl_days in zip(
            demo.memories, conversation.written_after, conversation.expired_ttl_days, strict=True
        ):
            # Each memory points back to the exchanges it was drawn from (question and reply), as
            # an extracted memory does (the engine's SOURCE_MESSAGES_KEY), and was written a little
            # after the last of them.
            said = conversation.times[exchange][1]
            self.add_memory(
                remembered,
                said + timedelta(seconds=self.rng.randint(5, EXTRACTED_WITHIN)),
                user_id=demo.user_id,
                agent_id=demo.agent_id,
                thread_id=thread_id,
                source="chat",
                source_message_ids=[conversation.message_ids[i][side] for i in remembered.said_in for side in (0, 1)],
                expired_ttl_days=ttl_days,
            )
        after = conversation.times[-1][1]
        for image in DEMO_IMAGES:
            if image.thread_slug == demo.slug:
                after = self.add_image(thread_id, image, after=after, channel=channel)

    def agent_reads(self, demo: DemoThread, thread_id: str, question: str, asked: datetime, reads: list[str]) -> None:
        """The agent reading memory as a user message comes, before it answers (`reads`: "search"
        for the message, "card" for the context card): a search at the conversation's last
        question, the card at the start of each session and at the last message. None when the
        activity log is off, nor older than the log keeps calls."""
        config = self.activity_config
        if config is None or (config.retention_days and asked < self.end - timedelta(days=config.retention_days - 1)):
            return

        def read(memory: AgentMemory, what: str) -> None:
            thread = memory.get_thread(thread_id)
            with acting_as(f"{demo.agent_id}-bot", on_behalf_of=demo.user_id):
                if what == "search":
                    thread.search(question[:200])
                else:
                    thread.get_context_card(refresh_summary_if_due=False)

        moment = asked
        for what in reads:
            moment += timedelta(milliseconds=self.rng.randint(300, 1500))
            self.call_times.append((moment, len(self.steps)))
            self.at(moment, lambda memory, what=what: read(memory, what), recorded=True)

    def add_message(self, thread_id: str, message: dict[str, Any]) -> None:
        moment = datetime.fromisoformat(message["timestamp"])
        self.created[message["id"]] = moment
        self.thread_times[thread_id].append(moment)
        self.counts["messages"] += 1
        self.at(moment, lambda memory: memory.get_thread(thread_id).add_messages([message]))

    def add_image(self, thread_id: str, image: DemoImage, *, after: datetime, channel: str) -> datetime:
        """A photo the user sends after the conversation, or a picture kept with the thread; when it came."""
        when = after + timedelta(minutes=self.rng.randint(2, 30))
        image_id = self.new_id()
        self.created[image_id] = when
        self.counts["images"] += 1
        if image.in_message is not None:
            parts = [
                TextContent(text=image.in_message),
                ImageContent(id=image_id, bytes=image.png(), description=image.description),
            ]
            self.add_message(
                thread_id, {**message(self.new_id(), "user", "", when, {"channel": channel}), "content": parts}
            )
            return when
        self.thread_times[thread_id].append(when)
        self.at(
            when,
            lambda memory: memory.get_thread(thread_id).add_image(
                image.png(), description=image.description, image_id=image_id, timestamp=iso(when)
            ),
        )
        return when

    def add_memory(
        self,
        demo: DemoMemory,
        when: datetime,
        *,
        source: str,
        source_message_ids: list[str] | None = None,
        expired_ttl_days: int | None = None,
        **scope: str,
    ) -> None:
        review: dict[str, Any] = {"status": self.rng.choice(("open", "approved", "approved"))}
        if review["status"] == "approved":
            review["by"] = self.rng.choice(REVIEWERS)
        metadata: dict[str, Any] = {"source": source, "tags": list(demo.tags), "review": review}
        if source_message_ids:
            metadata[SOURCE_MESSAGES_KEY] = source_message_ids
        retired = self.retired.get(demo.key or "")
        if retired is not None:  # a later link makes it invalid: reviewers rejected it for that reason
            reason = RETIRED_BECAUSE[retired.relation_type]
            metadata["review"] = {"status": "rejected", "by": self.rng.choice(REVIEWERS), "reason": reason}
            self.counts["invalid"] += 1
        else:
            metadata["confidence"] = round(self.rng.uniform(0.6, 0.99), 2)
        when = self.after_what_it_replaces(demo, when)
        memory_id = self.new_id()
        options: dict[str, Any] = {}
        if demo.expired:
            # Relevant for a few days after it was said, and over since.
            if expired_ttl_days is None:
                when, expired_ttl_days = self.end - timedelta(days=self.rng.randint(21, 49)), self.rng.randint(3, 7)
            options.update(ttl_days=expired_ttl_days, ttl_anchor=TimeToLiveAnchor.TIMESTAMP)
            self.counts["expired"] += 1
        elif demo.ttl_days is not None:
            options.update(ttl_days=demo.ttl_days, ttl_anchor=TimeToLiveAnchor.CREATED_AT)
            self.expires[memory_id] = when + timedelta(days=demo.ttl_days)
        self.created[memory_id] = when
        if "thread_id" in scope:
            self.thread_times[scope["thread_id"]].append(when)
        self.counts["memories"] += 1
        if demo.key is not None:
            self.keyed[demo.key] = (memory_id, demo.memory_type, when)
        self.at(
            when,
            lambda memory: memory.add_memory(
                demo.content,
                memory_type=demo.memory_type,
                memory_id=memory_id,
                metadata=metadata,
                timestamp=iso(when),
                autonomous_linking=False,
                **scope,
                **options,
            ),
        )

    def after_what_it_replaces(self, demo: DemoMemory, when: datetime) -> datetime:
        """A memory that supersedes, refines or duplicates one written before it comes after it."""
        for replaced in self.replaced_by(demo):
            if when <= replaced:
                when = replaced + timedelta(minutes=self.rng.randint(1, 60))
        return when

    def link_memories(self) -> None:
        """DEMO_LINKS, in order, each a little after the later of its two memories. A supersedes,
        refines or duplicates link is what makes its target invalid (no status flag is set)."""
        for link in DEMO_LINKS:
            (source_id, source_type, source_when), (target_id, target_type, target_when) = (
                self.keyed[link.source],
                self.keyed[link.target],
            )
            relation_id = self.new_id()
            when = max(source_when, target_when) + timedelta(minutes=self.rng.randint(1, 60))
            options: dict[str, Any] = {
                "relation_id": relation_id,
                "timestamp": iso(when),
                "metadata": llm_link_metadata(LLM_NAME) if link.by_llm else dict(LINK_METADATA),
            }
            if link.opposite is not None:
                options["opposite_relation_type"] = link.opposite
            ends = (source_id, source_type, target_id, target_type, link.relation_type)
            self.created[relation_id] = when
            self.counts["links"] += 1
            self.at(when, lambda memory, ends=ends, options=options: memory.link_records(*ends, **options))

    # --- the writing: in time order, then as of then ----------------------------------------

    def write_in_time_order(self) -> tuple[Snapshot, list[ActivityEvent]]:
        """The planned steps run in time order on a scratch store in memory (with the target's
        embedder and search settings, so that the agents' calls rank as the target would); its
        snapshot with every time as planned, and the agents' calls at the times they were made."""
        target, config = self.agent_memory, self.activity_config
        scratch = AgentMemory(
            SQLiteMemoryStore(
                ":memory:", embedder=target.store.embedder, schema_policy=SchemaPolicy.CREATE_IF_NECESSARY
            ),
            search_config=target.search_config,
            caller="seed_demo",
            record_activity=config is not None,
            activity_config=None
            if config is None
            else replace(config, sample=1.0, retention_days=0, otlp_endpoint=None),
        )
        try:
            for _, _, step, recorded in sorted(self.steps, key=lambda planned: planned[:2]):
                with nullcontext() if recorded else unrecorded():
                    step(scratch)
            calls: list[ActivityEvent] = []
            if scratch.activity is not None:
                scratch.activity.flush()
                calls = list(reversed(scratch.list_activity(limit=None)))  # oldest first: in the order made
                if len(calls) != len(self.call_times):
                    raise CommandError(f"{len(self.call_times)} agent calls were made, but {len(calls)} recorded")
                calls = [  # the calls were made in time order, as the steps ran
                    replace(call, id=self.new_id(), time=stored(when))
                    for call, (when, _) in zip(calls, sorted(self.call_times), strict=True)
                ]
            snapshot = scratch.snapshot()
        finally:
            scratch.close()
        for record in snapshot.records:
            record.created_at = stored(self.created[record.id])
            if record.id in self.expires:
                record.expires_at = stored(self.expires[record.id])
        for thread in snapshot.threads:
            moments = self.thread_times[thread.id]
            thread.created_at, thread.updated_at = stored(min(moments)), stored(max(moments))
        for relation in snapshot.relations:
            relation.created_at = stored(self.created[relation.id])
        return snapshot, calls


def in_link_order(threads: tuple[DemoThread, ...]) -> list[DemoThread]:
    """The threads, each after those holding a memory that one of its memories supersedes,
    refines or duplicates (so that it is planned, and written, after it)."""
    thread_of = {memory.key: demo.slug for demo in threads for memory in demo.memories if memory.key}
    needs: dict[str, set[str]] = {demo.slug: set() for demo in threads}
    for link in DEMO_LINKS:
        source, target = thread_of.get(link.source), thread_of.get(link.target)
        if link.relation_type in LIFECYCLE_RELATIONS and source and target and source != target:
            needs[source].add(target)
    ordered: list[DemoThread] = []
    while len(ordered) < len(threads):
        placed = {demo.slug for demo in ordered}
        ordered += [demo for demo in threads if demo.slug not in placed and needs[demo.slug] <= placed]
    return ordered


def create_thread(memory: AgentMemory, demo: DemoThread, channel: str) -> None:
    memory.create_thread(
        thread_id=f"demo-{demo.slug}",
        user_id=demo.user_id,
        agent_id=demo.agent_id,
        metadata={"title": demo.title, "topic": demo.topic, "tags": list(demo.tags), "channel": channel},
        # The demo world is written as it is: an LLM, if one is configured, adds nothing to it.
        memory_extraction_config=NO_LLM_WORK,
    )


def message(message_id: str, role: str, content: str, moment: datetime, metadata: dict[str, Any]) -> dict[str, Any]:
    return {"id": message_id, "role": role, "content": content, "timestamp": iso(moment), "metadata": metadata}


class Command(BaseCommand):
    help = (
        "Write demo users, agents, threads, messages and memories into the memory store (OAM_STORE_URL) "
        "through the engine API, as of when each happened over the last weeks. The store must have no threads "
        "yet, unless --if-empty is given, in which case a store that already has threads is left alone."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--if-empty", action="store_true", help="Do nothing (successfully) when the store already has threads."
        )
        parser.add_argument("--seed", type=int, default=1, help="Random seed for ids, timing and metadata (default 1).")
        parser.add_argument(
            "--end-date",
            type=date.fromisoformat,
            help="The day the demo timeline ends (at 00:00 UTC), YYYY-MM-DD (default: it ends now). "
            "Fix it for byte-identical runs.",
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
        if end_date is None:
            end = datetime.now(UTC).replace(second=0, microsecond=0)
        else:
            end = datetime.combine(end_date, time(), UTC)
        counts = DemoSeeder(agent_memory, random.Random(seed), end).seed()
        self.stdout.write(
            self.style.SUCCESS(
                "Seeded {users} users, {agents} agents, {threads} threads, {messages} messages, {images} images "
                "and {memories} memories ({expired} already expired, {invalid} invalid) with {links} links, "
                "{calls} agent calls and {changes} reviewers' changes in the history.".format(**counts)
            )
        )
