"""Every count on the overview adds up, or says what it leaves out: the cards count live records
and say how many more are expired, awaiting purge; the memories' table says its total (issue 29)."""

from __future__ import annotations

import re

from django.urls import reverse

from memory.engine import TimeToLiveAnchor

from .world import build_world, png_bytes

OVERVIEW = reverse("memory:overview")
EXPIRED = {"timestamp": "2000-01-01T00:00:00Z", "ttl_days": 1, "ttl_anchor": TimeToLiveAnchor.TIMESTAMP}


def with_expired_records(agent_memory) -> None:
    """The world (3 messages, 2 live memories, 2 images), and then 2 expired memories, an expired
    message and an expired image."""
    build_world(agent_memory)
    for n in range(2):
        agent_memory.add_memory(
            f"Alice's old plan {n}.", memory_type="fact", user_id="alice", autonomous_linking=False, **EXPIRED
        )
    thread = agent_memory.get_thread("trip-42")
    thread.add_messages(
        [{"role": "user", "content": "An old question.", "timestamp": EXPIRED["timestamp"]}],
        ttl_days=1,
        ttl_anchor=TimeToLiveAnchor.TIMESTAMP,
    )
    image_id = thread.add_image(png_bytes("gray"), description="An old photo")
    agent_memory.update_image(image_id, **EXPIRED)


def card(html: str, label: str) -> str:
    """The text of the count card whose label is `label`."""
    match = re.search(rf"</i> {label}</div>(.*?)</div></(?:a|div)></div>", html, re.S)
    assert match, label
    return re.sub(r"<[^>]+>", " ", match.group(1))


def test_each_card_says_how_many_expired_records_it_leaves_out(viewer_client, agent_memory):
    with_expired_records(agent_memory)

    html = viewer_client.get(OVERVIEW).content.decode()

    assert card(html, "Memories").split() == ["2", "live", "·", "2", "expired"]
    assert card(html, "Messages").split() == ["3", "live", "·", "1", "expired"]
    assert card(html, "Images").split() == ["2", "live", "·", "1", "expired"]


def test_the_memories_table_total_is_the_cards_live_memories_and_the_expired_ones(viewer_client, agent_memory):
    with_expired_records(agent_memory)

    response = viewer_client.get(OVERVIEW)

    totals = response.context["memory_totals"]
    assert totals["valid"] + totals["invalid"] == response.context["stats"].memories == 2
    assert totals["all"] == 4
    assert "4 memories stored: 2 live (1 valid, 1 invalid) and 2 expired, awaiting purge." in response.content.decode()


def test_without_expired_records_the_cards_say_nothing_more(viewer_client, agent_memory):
    build_world(agent_memory)

    html = viewer_client.get(OVERVIEW).content.decode()

    assert card(html, "Memories").split() == ["2"]
    assert "data-expired" not in html
