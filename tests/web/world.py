"""A small store with one of everything, for the dashboard's tests: a thread with messages (one
with an image part), a standalone image, memories with a link, a user and an agent profile."""

from __future__ import annotations

import io
from dataclasses import dataclass

from PIL import Image

from memory.engine import AgentMemory, ImageContent, TextContent


def png_bytes(color: str = "green", size: tuple[int, int] = (24, 16)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


@dataclass(frozen=True)
class World:
    thread_id: str = "trip-42"
    user_id: str = "alice"
    agent_id: str = "atlas"
    message_ids: tuple[str, ...] = ()
    photo_id: str = "photo-1"  # an image part of the second message
    image_id: str = "map-1"  # a standalone image of the thread
    fact_id: str = "fact-vegetarian"
    old_fact_id: str = "fact-old"
    link_id: str = ""


def build_world(memory: AgentMemory) -> World:
    memory.add_user("alice", "Alice, a vegetarian who travels by train.")
    memory.add_agent("atlas", "Atlas, a travel assistant.")
    thread = memory.create_thread(
        thread_id="trip-42", user_id="alice", agent_id="atlas", metadata={"topic": "travel", "tags": ["lisbon"]}
    )
    message_ids = thread.add_messages(
        [
            {
                "role": "user",
                "content": "I'm vegetarian. Find me a quiet hotel in Lisbon.",
                "metadata": {"channel": "web"},
            },
            {
                "role": "user",
                "content": [
                    TextContent(text="Here is the street I liked."),
                    ImageContent(id="photo-1", bytes=png_bytes("blue"), description="A tiled street in Alfama"),
                ],
            },
            {"role": "assistant", "content": "Príncipe Real is calm at night."},
        ]
    )
    thread.add_image(png_bytes("red"), image_id="map-1", description="A hand-drawn map of Lisbon")
    memory.add_memory(
        "Alice used to eat fish.",
        memory_type="fact",
        memory_id="fact-old",
        user_id="alice",
        agent_id="atlas",
        thread_id="trip-42",
        autonomous_linking=False,
    )
    memory.add_memory(
        "Alice is vegetarian.",
        memory_type="fact",
        memory_id="fact-vegetarian",
        user_id="alice",
        agent_id="atlas",
        thread_id="trip-42",
        metadata={"source": "chat", "tags": ["diet"]},
        autonomous_linking=False,
    )
    link_id = memory.link_records("fact-vegetarian", "fact", "fact-old", "fact", "supersedes")
    return World(message_ids=tuple(message_ids), link_id=link_id)


def build_graph_world(memory: AgentMemory) -> World:
    """The world plus a preference of alice's that supports the vegetarian fact, and an agent
    guideline contradicting it: a small graph around alice, for the graph's tests."""
    world = build_world(memory)
    memory.add_memory("Alice prefers quiet hotels.", memory_type="preference", memory_id="pref-quiet", user_id="alice")
    memory.add_memory("Ask about diets.", memory_type="guideline", memory_id="guide-diet", agent_id="atlas")
    memory.link_records("pref-quiet", "preference", "fact-vegetarian", "fact", "supports")
    memory.link_records("guide-diet", "guideline", "fact-vegetarian", "fact", "contradicts")
    return world


GRAPH_RELATIONS = ("supports", "supports", "supports", "contradicts", "refines", "supersedes")


def build_link_graph(
    memory: AgentMemory, nodes: int, links: int, *, user_id: str = "graph-user", seed: int = 7
) -> list[str]:
    """A user's memory graph at scale, for the graph page's browser test and bench: `nodes`
    memories (the four types in turn, a batch of 500 each, random unit embeddings so that nothing
    is embedded) linked by `links` distinct pairs, most inside topics of about 50 memories, in
    random directions, mostly `supports`, one in six a lifecycle link that makes its target
    invalid. Written through the store in batches; returns the memory ids."""
    import numpy as np

    rng = np.random.default_rng(seed)
    store = memory.store
    dimension = store.embedder.dim
    ids = [f"{user_id}-{n}" for n in range(nodes)]
    types: list[str] = []
    for first in range(0, nodes, 500):
        chunk = range(first, min(first + 500, nodes))
        memory_type = ("fact", "preference", "guideline", "memory")[(first // 500) % 4]
        vectors = rng.standard_normal((len(chunk), dimension)).astype(np.float32)
        store.add(
            [f"memory {n} about topic {n // 50}: note {n % 97}" for n in chunk],
            memory_type,
            embeddings=vectors / np.linalg.norm(vectors, axis=1, keepdims=True),
            record_ids=[ids[n] for n in chunk],
            user_ids=[user_id] * len(chunk),
        )
        types += [memory_type] * len(chunk)
    pairs: dict[tuple[int, int], None] = {}
    while len(pairs) < links:
        source = int(rng.integers(nodes))
        near = rng.random() < 0.85
        target = int((source // 50) * 50 + rng.integers(50)) % nodes if near else int(rng.integers(nodes))
        if source != target and (target, source) not in pairs:
            pairs[(source, target)] = None
    labels = rng.integers(len(GRAPH_RELATIONS), size=links)
    relations = [
        {
            "source_record_id": ids[source],
            "source_record_type": types[source],
            "target_record_id": ids[target],
            "target_record_type": types[target],
            "relation_type": GRAPH_RELATIONS[label],
        }
        for (source, target), label in zip(pairs, labels.tolist(), strict=True)
    ]
    for first in range(0, links, 5000):
        store.add_relations(relations[first : first + 5000])
    return ids


def confirm_delete(client, url: str, data: dict | None = None, **extra):
    """Post a delete confirmation as its page does: with the version of the record it shows."""
    version = client.get(url).context["version"]
    return client.post(url, {**(data or {}), "version": version}, **extra)


def present(read) -> bool:
    """Whether `read()` finds its record (False: KeyError)."""
    try:
        read()
    except KeyError:
        return False
    return True


STILL_THERE = {
    "memory": lambda memory, world: present(lambda: memory.get_memory(world.fact_id)),
    "thread": lambda memory, world: present(lambda: memory.get_thread_record(world.thread_id)),
    "message": lambda memory, world: present(lambda: memory.get_message_record(world.thread_id, world.message_ids[0])),
    "image": lambda memory, world: present(lambda: memory.get_image(world.image_id)),
    "link": lambda memory, world: present(lambda: memory.get_relation(world.link_id)),
}
"""Whether each kind of deletable record of the world is still stored."""
