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
