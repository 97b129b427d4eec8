"""The near-duplicate finder's reads: whose groups to show first, which other users have groups at
the same distance, and a group's memories side by side with a word diff against its centre."""

from __future__ import annotations

from typing import Any

from memory.engine import AgentMemory, DuplicateGroup
from memory.queries.diffs import word_diff

GROUPS_SHOWN = 50
"""The groups one page shows."""
USERS_CONSIDERED = 200
"""The default user is the one with the most memories among the first this many users."""
USERS_SCANNED = 20
"""How many users (those with the most memories) are searched for groups of their own."""


def ranked_users(agent_memory: AgentMemory) -> list[str]:
    """The users (among the first listed) with memories, the one with the most first."""
    users = [profile.id for profile in agent_memory.list_users(limit=USERS_CONSIDERED)]
    counts = agent_memory.owner_counts("user", users) if users else {}
    ranked = sorted(users, key=lambda user_id: -counts.get(user_id, {}).get("memories", 0))
    return [user_id for user_id in ranked if counts.get(user_id, {}).get("memories", 0)]


def default_user(agent_memory: AgentMemory) -> str | None:
    """The user with the most memories (among the first users listed), or None without users."""
    ranked = ranked_users(agent_memory)
    return ranked[0] if ranked else None


def users_with_groups(agent_memory: AgentMemory, arguments: dict[str, Any]) -> list[tuple[str, int]]:
    """(user, number of groups) of the USERS_SCANNED users with the most memories who have groups
    with these arguments (the distance and types of the page), most memories first: counted for
    them all in one engine read (duplicate_group_counts), not a search per user. A user with too
    many near pairs at this distance is not listed."""
    users = ranked_users(agent_memory)[:USERS_SCANNED]
    if not users:
        return []
    counts = agent_memory.duplicate_group_counts(
        users, max_distance=arguments["max_distance"], memory_types=arguments.get("memory_types")
    )
    return [(user_id, counts[user_id]) for user_id in users if counts.get(user_id)]


def group_view(group: DuplicateGroup) -> list[dict[str, Any]]:
    """A group's memories as the page shows them: each with its distance to the centre and its
    text as a word diff from the centre's (the centre's own text as it is)."""
    centre = group.centre.content or ""
    return [
        {
            "memory": record,
            "distance": distance,
            "diff": None if i == 0 else word_diff(centre, record.content or ""),
        }
        for i, (record, distance) in enumerate(zip(group.memories, group.distances, strict=True))
    ]
