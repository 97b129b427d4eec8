"""Provenance on the pages: a memory's page links to the messages it was extracted from, and a
message's page lists the memories extracted from it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory import services
from memory.engine import SOURCE_MESSAGES_KEY, MemoryExtractionConfig, MemoryExtractionMode

from .world import World, build_world


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


def message_url(world: World, index: int) -> str:
    return reverse("memory:message_detail", args=[world.thread_id, world.message_ids[index]])


def extracted(agent_memory, world: World, content: str, source_ids: list[str], memory_id: str) -> str:
    """A memory as extraction writes it: in the thread, its provenance in the metadata."""
    return agent_memory.add_memory(
        content,
        memory_type="preference",
        memory_id=memory_id,
        user_id=world.user_id,
        thread_id=world.thread_id,
        metadata={SOURCE_MESSAGES_KEY: source_ids},
        autonomous_linking=False,
    )


def test_a_memory_page_links_to_each_source_message_and_names_a_deleted_one(viewer_client, agent_memory, world):
    extracted(agent_memory, world, "Alice wants quiet hotels.", [world.message_ids[0], "msg-gone"], "quiet")

    html = viewer_client.get(reverse("memory:memory_detail", args=["quiet"])).content.decode()

    assert "Extracted from 2 messages" in html
    assert f'href="{message_url(world, 0)}"' in html
    assert "I&#x27;m vegetarian. Find me a quiet hotel in Lisbon." in html
    assert "msg-gone" in html and "is no longer in the thread" in html
    assert f'href="{reverse("memory:history")}?object_id=msg-gone"' in html


def test_a_hand_written_memory_has_no_provenance_section(viewer_client, world):
    html = viewer_client.get(reverse("memory:memory_detail", args=[world.fact_id])).content.decode()

    assert "Extracted from" not in html


def test_a_message_page_lists_the_memories_extracted_from_it_and_only_those(viewer_client, agent_memory, world):
    extracted(agent_memory, world, "Alice wants quiet hotels.", [world.message_ids[0]], "quiet")
    extracted(
        agent_memory, world, "Alice likes <b>calm</b> streets.", [world.message_ids[1], world.message_ids[0]], "calm"
    )
    extracted(agent_memory, world, "Alice likes Príncipe Real.", [world.message_ids[2]], "principe")

    html = viewer_client.get(message_url(world, 0)).content.decode()

    assert "Memories extracted from it (2)" in html
    assert f'href="{reverse("memory:memory_detail", args=["quiet"])}"' in html
    assert f'href="{reverse("memory:memory_detail", args=["calm"])}"' in html
    assert "Alice likes &lt;b&gt;calm&lt;/b&gt; streets." in html  # escaped
    assert "Príncipe Real" not in html.split("Memories extracted from it")[1]


def test_a_message_nothing_was_extracted_from_says_so(viewer_client, world):
    html = viewer_client.get(message_url(world, 2)).content.decode()

    assert "Memories extracted from it (0)" in html and "No memory names this message" in html


def test_memories_the_llm_extracts_link_back_to_their_messages_and_the_messages_to_them(fake_llm, client, viewer):
    fake_llm.answers["memory_extraction"] = lambda request: {
        "memories": [{"content": "The user drinks green tea.", "memory_type": "preference", "source_messages": [2]}]
    }
    agent_memory = services.get_agent_memory()
    thread = agent_memory.create_thread(
        thread_id="t1",
        user_id="alice",
        memory_extraction_config=MemoryExtractionConfig(
            extract_memories=True, enable_context_summary=False, extraction_mode=MemoryExtractionMode.INLINE
        ),
    )
    ids = thread.add_messages(
        [{"role": "user", "content": "Hello."}, {"role": "user", "content": "I drink green tea."}]
    )
    [memory] = agent_memory.list_memories(thread_id="t1")
    client.force_login(viewer)

    memory_page = client.get(reverse("memory:memory_detail", args=[memory.id])).content.decode()
    tea_page = client.get(reverse("memory:message_detail", args=["t1", ids[1]])).content.decode()
    hello_page = client.get(reverse("memory:message_detail", args=["t1", ids[0]])).content.decode()

    assert f'href="{reverse("memory:message_detail", args=["t1", ids[1]])}"' in memory_page
    assert reverse("memory:message_detail", args=["t1", ids[0]]) not in memory_page
    assert "The user drinks green tea." in tea_page and "Memories extracted from it (1)" in tea_page
    assert "Memories extracted from it (0)" in hello_page
