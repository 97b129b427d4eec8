"""A stateful test of the store against a simple model: memories, links, messages (DECISIONS D2, D3, D5).

Hypothesis runs random sequences of adds, updates, deletes, links and searches through the client
and two thread handles (t1 and t2, same user and agent), including writes that must fail (a link
whose id is taken, a message whose image part is bad). The model predicts, before each call,
whether it succeeds or which contract error it raises, and what it returns; after every step the
invariants compare every listing with the model, so a failed write that left anything behind, or
a search that returned something the store does not hold, shows as a difference.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from memory.engine import AgentMemory, RecordStatus
from memory.engine.types import BUILTIN_RELATIONS, LIFECYCLE_RELATIONS, MEMORY_TYPES

from .conftest import make_store
from .properties import EXTREME_DATETIMES, SQLITE_BACKENDS, image_part

WORDS = ["pizza", "crust", "sourdough", "oven", "naples", "basil", "tomato"]
phrase = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
small_metadata = st.one_of(
    st.none(), st.fixed_dictionaries({}, optional={"n": st.integers(0, 3), "tag": st.sampled_from(["a", "b"])})
)
OWNERS = ["client", "t1", "t2"]
BAD_IMAGE_PARTS = [
    image_part(description=5),
    image_part(timestamp=EXTREME_DATETIMES[0]),
    image_part(timestamp="0001-01-01T00:00:00+05:00"),
    image_part(id=""),
    image_part(bytes=b"not an image"),
]


@dataclass
class Mem:
    content: str
    record_type: str
    metadata: dict | None
    thread_id: str | None
    explicit_invalid: bool = False


@dataclass
class Link:
    source: str
    target: str
    relation_type: str


@dataclass
class Model:
    memories: dict[str, Mem] = field(default_factory=dict)
    links: dict[str, Link] = field(default_factory=dict)
    messages: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: {"t1": [], "t2": []})

    def status(self, memory_id: str) -> RecordStatus:
        targeted = any(
            link.target == memory_id and link.relation_type in LIFECYCLE_RELATIONS for link in self.links.values()
        )
        return RecordStatus.INVALID if self.memories[memory_id].explicit_invalid or targeted else RecordStatus.VALID

    def linked(self, a: str, b: str) -> bool:
        return any({link.source, link.target} == {a, b} for link in self.links.values())

    def owned(self, owner: str, memory_id: str) -> bool:
        return memory_id in self.memories and (owner == "client" or self.memories[memory_id].thread_id == owner)

    def link_owned(self, owner: str, relation_id: str) -> bool:
        link = self.links.get(relation_id)
        return link is not None and (
            owner == "client" or (self.owned(owner, link.source) and self.owned(owner, link.target))
        )

    def drop_memory(self, memory_id: str) -> None:
        del self.memories[memory_id]
        self.links = {i: link for i, link in self.links.items() if memory_id not in (link.source, link.target)}


class StoreMachine(RuleBasedStateMachine):
    backend = "sqlite"
    parent: Path = Path(tempfile.gettempdir())

    def __init__(self) -> None:
        super().__init__()
        self.directory = Path(tempfile.mkdtemp(dir=self.parent))
        self.store = make_store(self.backend, self.directory / "store.sqlite3")
        self.client = AgentMemory(self.store)
        self.threads = {
            "t1": self.client.create_thread(thread_id="t1", user_id="u1", agent_id="a1"),
            "t2": self.client.create_thread(thread_id="t2", user_id="u1", agent_id="a1"),
        }
        self.model = Model()
        self.counter = 0

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}-{self.counter}"

    def api(self, owner: str) -> Any:
        return self.client if owner == "client" else self.threads[owner]

    def pick_memory(self, data: Any, label: str) -> str:
        return data.draw(st.sampled_from([*sorted(self.model.memories), "ghost"]), label=label)

    def pick_link(self, data: Any) -> str:
        return data.draw(st.sampled_from([*sorted(self.model.links), "ghost-link"]), label="relation id")

    # --- memories ---------------------------------------------------------------------------

    @rule(
        data=st.data(),
        owner=st.sampled_from(OWNERS),
        content=phrase,
        memory_type=st.sampled_from(MEMORY_TYPES),
        metadata=small_metadata,
        invalid=st.booleans(),
    )
    def add_memory(self, data, owner, content, memory_type, metadata, invalid):
        model = self.model
        reuse = model.memories and data.draw(st.integers(0, 7), label="7: reuse a memory id") == 7
        memory_id = data.draw(st.sampled_from(sorted(model.memories)), label="taken id") if reuse else self.fresh("m")
        kwargs: dict[str, Any] = {"memory_id": memory_id, "memory_type": memory_type, "metadata": metadata}
        if invalid:
            kwargs["status"] = RecordStatus.INVALID
        if owner == "client":
            kwargs["user_id"] = "u1"
        target = None
        if data.draw(st.booleans(), label="with a link"):
            target = self.pick_memory(data, "link target")
            link_type = data.draw(st.sampled_from(list(BUILTIN_RELATIONS)), label="link type")
            reuse_link = model.links and data.draw(st.integers(0, 3), label="3: reuse a link id") == 3
            link_id = (
                data.draw(st.sampled_from(sorted(model.links)), label="taken link id")
                if reuse_link
                else self.fresh("l")
            )
            kwargs.update(memory_id_to_link=target, link_type=link_type, link_id=link_id)
            if owner == "client":
                del kwargs["user_id"]  # the link target's scope is inherited
        fails = (
            memory_id in model.memories
            or (target is not None and not model.owned(owner, target))
            or (target is not None and kwargs["link_id"] in model.links)
        )
        if fails:
            with pytest.raises(ValueError):
                self.api(owner).add_memory(content, **kwargs)
            return
        assert self.api(owner).add_memory(content, **kwargs) == memory_id
        thread_id = owner if owner != "client" else (model.memories[target].thread_id if target else None)
        model.memories[memory_id] = Mem(content, memory_type, metadata, thread_id, invalid)
        if target is not None:
            model.links[kwargs["link_id"]] = Link(memory_id, target, kwargs["link_type"])

    @rule(data=st.data(), owner=st.sampled_from(OWNERS))
    def update_memory(self, data, owner):
        memory_id = self.pick_memory(data, "memory id")
        changes = data.draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "content": phrase,
                    "metadata": small_metadata,
                    "status": st.sampled_from([RecordStatus.VALID, RecordStatus.INVALID]),
                },
            ).filter(bool),
            label="changes",
        )
        if not self.model.owned(owner, memory_id):
            with pytest.raises(KeyError):
                self.api(owner).update_memory(memory_id, **changes)
            return
        assert self.api(owner).update_memory(memory_id, **changes) == memory_id
        memory = self.model.memories[memory_id]
        memory.content = changes.get("content", memory.content)
        memory.metadata = changes.get("metadata", memory.metadata)
        if "status" in changes:
            memory.explicit_invalid = changes["status"] is RecordStatus.INVALID

    @rule(data=st.data(), owner=st.sampled_from(OWNERS))
    def delete_memory(self, data, owner):
        memory_id = self.pick_memory(data, "memory id")
        expected = int(self.model.owned(owner, memory_id))
        assert self.api(owner).delete_memory(memory_id) == expected
        if expected:
            self.model.drop_memory(memory_id)

    # --- links ------------------------------------------------------------------------------

    @rule(data=st.data(), owner=st.sampled_from(OWNERS), relation_type=st.sampled_from([*BUILTIN_RELATIONS, "custom"]))
    def link_records(self, data, owner, relation_type):
        model = self.model
        source, target = self.pick_memory(data, "source"), self.pick_memory(data, "target")
        reuse = model.links and data.draw(st.integers(0, 5), label="5: reuse a link id") == 5
        relation_id = (
            data.draw(st.sampled_from(sorted(model.links)), label="taken link id") if reuse else self.fresh("l")
        )
        types = [model.memories[m].record_type if m in model.memories else "memory" for m in (source, target)]
        fails = (
            not (model.owned(owner, source) and model.owned(owner, target))
            or source == target
            or model.linked(source, target)
            or relation_id in model.links
        )
        call = lambda: self.api(owner).link_records(  # noqa: E731
            source, types[0], target, types[1], relation_type, relation_id=relation_id
        )
        if fails:
            with pytest.raises(ValueError):
                call()
            return
        assert call() == relation_id
        model.links[relation_id] = Link(source, target, relation_type)

    @rule(data=st.data(), owner=st.sampled_from(OWNERS), relation_type=st.sampled_from([*BUILTIN_RELATIONS, "custom"]))
    def update_record_link(self, data, owner, relation_type):
        relation_id = self.pick_link(data)
        expected = int(self.model.link_owned(owner, relation_id))
        assert self.api(owner).update_record_link(relation_id, relation_type=relation_type) == expected
        if expected:
            self.model.links[relation_id].relation_type = relation_type

    @rule(data=st.data(), owner=st.sampled_from(OWNERS))
    def delete_record_link(self, data, owner):
        relation_id = self.pick_link(data)
        expected = int(self.model.link_owned(owner, relation_id))
        assert self.api(owner).delete_record_link(relation_id=relation_id) == expected
        if expected:
            del self.model.links[relation_id]

    # --- messages ---------------------------------------------------------------------------

    @rule(
        thread=st.sampled_from(["t1", "t2"]),
        texts=st.lists(phrase, min_size=1, max_size=3),
        bad=st.one_of(st.none(), st.sampled_from(BAD_IMAGE_PARTS)),
    )
    def add_messages(self, thread, texts, bad):
        ids = [self.fresh("msg") for _ in texts]
        messages = [{"role": "user", "content": text, "id": i} for text, i in zip(texts, ids, strict=True)]
        if bad is not None:  # the last message carries a broken image: the whole call must store nothing
            messages[-1]["content"] = [
                {"type": "text", "text": texts[-1]},
                dict(bad, id=bad.get("id", self.fresh("img"))),
            ]
            with pytest.raises((ValueError, TypeError)):
                self.threads[thread].add_messages(messages)
            return
        assert self.threads[thread].add_messages(messages) == ids
        self.model.messages[thread] += list(zip(ids, texts, strict=True))

    @rule(
        data=st.data(),
        thread=st.sampled_from(["t1", "t2"]),
        text=phrase,
        bad=st.one_of(st.none(), st.sampled_from(BAD_IMAGE_PARTS)),
    )
    def update_message(self, data, thread, text, bad):
        known = sorted(i for messages in self.model.messages.values() for i, _ in messages)
        message_id = data.draw(st.sampled_from([*known, "ghost-msg"]), label="message id")
        owned = any(i == message_id for i, _ in self.model.messages[thread])
        content: Any = (
            text if bad is None else [{"type": "text", "text": text}, dict(bad, id=bad.get("id", self.fresh("img")))]
        )
        if not owned:
            with pytest.raises(KeyError):
                self.threads[thread].update_message(message_id, content=content)
            return
        if bad is not None:
            with pytest.raises((ValueError, TypeError)):
                self.threads[thread].update_message(message_id, content=content)
            return
        assert self.threads[thread].update_message(message_id, content=content) == message_id
        self.model.messages[thread] = [(i, text if i == message_id else t) for i, t in self.model.messages[thread]]

    @rule(data=st.data(), thread=st.sampled_from(["t1", "t2"]))
    def delete_message(self, data, thread):
        known = sorted(i for messages in self.model.messages.values() for i, _ in messages)
        message_id = data.draw(st.sampled_from([*known, "ghost-msg"]), label="message id")
        owned = any(i == message_id for i, _ in self.model.messages[thread])
        assert self.threads[thread].delete_message(message_id) == int(owned)
        if owned:
            self.model.messages[thread] = [(i, t) for i, t in self.model.messages[thread] if i != message_id]

    # --- searches ---------------------------------------------------------------------------

    @precondition(lambda self: bool(self.model.memories))
    @rule(owner=st.sampled_from(OWNERS), query=phrase, num_hops=st.integers(0, 2), include_invalid=st.booleans())
    def search(self, owner, query, num_hops, include_invalid):
        options = {"num_hops": num_hops, "include_invalid_results": include_invalid, "max_results": 10}
        if owner == "client":
            results = self.client.search(query, user_id="u1", **options)
        else:
            results = self.threads[owner].search(query, **options)
        messages = {i: t for thread in self.model.messages.values() for i, t in thread}
        for result in results:
            record = result.record
            if record.record_type == "message":
                assert messages.get(record.id) == record.content, f"message {record.id} is not as stored"
                continue
            self.check_memory(record)
            if not include_invalid:
                assert self.model.status(record.id) is RecordStatus.VALID, f"invalid {record.id} at top level"
            self.check_tree(result, {result.record.id})

    def check_memory(self, record: Any) -> None:
        memory = self.model.memories.get(record.id)
        assert memory is not None, f"search returned {record.id!r}, which the store should not hold"
        assert (record.content, record.record_type) == (memory.content, memory.record_type), record.id
        assert record.status is self.model.status(record.id), f"{record.id}: status {record.status}"

    def check_tree(self, parent: Any, seen: set[str]) -> None:
        for relation, child in parent.linked_results:
            link = self.model.links.get(relation.id)
            assert link is not None, f"linked through {relation.id!r}, which the store should not hold"
            assert {relation.source_record_id, relation.target_record_id} == {parent.record.id, child.record.id}
            assert (link.source, link.target) == (relation.source_record_id, relation.target_record_id)
            self.check_memory(child.record)
            assert child.record.id not in seen, f"{child.record.id} appears twice in one linked tree (D5)"
            seen.add(child.record.id)
            self.check_tree(child, seen)

    # --- invariants -------------------------------------------------------------------------

    @invariant()
    def memories_are_the_models(self) -> None:
        stored = {record.id: record for record in self.client.list_memories(limit=None)}
        assert set(stored) == set(self.model.memories)
        for memory_id, memory in self.model.memories.items():
            record = stored[memory_id]
            assert (record.content, record.record_type, record.thread_id) == (
                memory.content,
                memory.record_type,
                memory.thread_id,
            ), memory_id
            assert (record.metadata or None) == (memory.metadata or None), memory_id
            assert record.status is self.model.status(memory_id), memory_id

    @invariant()
    def links_are_the_models(self) -> None:
        stored = {
            r.id: (r.source_record_id, r.target_record_id, r.relation_type)
            for r in self.client.list_relations(limit=None)
        }
        assert stored == {i: (link.source, link.target, link.relation_type) for i, link in self.model.links.items()}

    @invariant()
    def messages_and_images_are_the_models(self) -> None:
        for thread_id, thread in self.threads.items():
            stored = [(m.id, m.text) for m in thread.get_messages(start=0, end=None)]
            assert stored == self.model.messages[thread_id], thread_id
        assert self.client.list_images(limit=None) == []  # the only images ever offered were broken


@pytest.mark.parametrize("backend", SQLITE_BACKENDS)
def test_the_store_agrees_with_a_simple_model(backend: str, tmp_path):
    machine = type(
        f"StoreMachine_{backend.replace('-', '_')}", (StoreMachine,), {"backend": backend, "parent": tmp_path}
    )
    run_state_machine_as_test(machine)
