"""A restricted AgentMemory (scoped logins): every read sees only the visible users and agents,
in SQL, with counts and pages right; a record outside is missing; writes outside are refused."""

from __future__ import annotations

import pytest

from memory.engine import AgentMemory, OutsideVisibilityError, Visibility

SECRET = "bobsecret"


@pytest.fixture
def world(memory: AgentMemory) -> dict[str, str]:
    """alice and carol (seen) and bob and no one (not), with agents atlas (seen) and zeus (not)."""
    ids = {}
    for user, agent in (("alice", "atlas"), ("carol", "atlas"), ("bob", "atlas"), (None, "atlas"), ("alice", "zeus")):
        name = f"{user or 'nobody'}-{agent}"
        seen = user in ("alice", "carol") and agent == "atlas"
        text = f"note {name}" if seen else f"{SECRET} note of {name}"
        ids[name] = memory.add_memory(text, user_id=user, agent_id=agent, metadata={"tags": [name]})
    for user in ("alice", "bob"):
        memory.add_user(user, f"profile of {user}" if user == "alice" else f"{SECRET} profile")
        thread = memory.create_thread(thread_id=f"t-{user}", user_id=user, agent_id="atlas")
        thread.add_messages([{"role": "user", "content": f"hello from {user}" + (SECRET if user == "bob" else "")}])
    ids["link-in"] = memory.link_records(ids["alice-atlas"], "memory", ids["carol-atlas"], "memory", "relates_to")
    ids["link-out"] = memory.link_records(ids["alice-atlas"], "memory", ids["bob-atlas"], "memory", "relates_to")
    return ids


@pytest.fixture
def view(memory, world) -> AgentMemory:
    return memory.restricted(Visibility(users=["alice", "carol"], agents=["atlas"]))


def visible_texts(records) -> list[str]:
    return [record.content for record in records]


def test_an_unrestricted_visibility_is_the_client_itself(memory):
    assert memory.restricted(Visibility()) is memory
    with pytest.raises(TypeError):
        memory.restricted({"users": ["alice"]})
    with pytest.raises(ValueError):
        Visibility(users=[])
    with pytest.raises(TypeError):
        Visibility(users="alice")


def test_listings_counts_and_facets_see_only_the_two_users_of_the_agent(view, world):
    page = view.list_memories(limit=None)
    assert sorted(visible_texts(page)) == ["note alice-atlas", "note carol-atlas"]
    assert view.count_memories() == 2
    first = view.list_memories(limit=1)
    assert len(first) == 1 and first.next_cursor
    second = view.list_memories(limit=1, cursor=first.next_cursor)
    assert len(second) == 1 and second.next_cursor is None
    facets = view.memory_facets(["user_id", "agent_id", "tag"])
    flat = repr(facets)
    assert "bob" not in flat and "zeus" not in flat and "nobody" not in flat
    assert view.list_memories(user_id="bob", limit=None) == []
    assert view.count_memories(user_id="bob") == 0


def test_reads_by_id_outside_are_missing(view, world):
    for name in ("bob-atlas", "nobody-atlas", "alice-zeus"):
        with pytest.raises(KeyError):
            view.get_memory(world[name])
    assert view.get_memory(world["alice-atlas"]).content == "note alice-atlas"
    with pytest.raises(KeyError):
        view.get_thread("t-bob")
    with pytest.raises(KeyError):
        view.get_thread_record("t-bob")
    assert view.list_thread_messages("t-bob") == []
    assert view.count_thread_messages("t-bob") == 0
    with pytest.raises(KeyError):
        view.get_user("bob")
    assert view.get_user("alice").content == "profile of alice"
    with pytest.raises(KeyError):
        view.get_relation(world["link-out"])
    assert view.get_relation(world["link-in"]).target_record_id == world["carol-atlas"]


def test_search_graph_and_relations_see_nothing_outside(view, world):
    results = view.search(SECRET + " note", user_id=None, max_results=20)
    assert all(SECRET not in result.content for result in results)
    results = view.search("note", user_id="bob", max_results=20)
    assert results == []
    graph = view.memory_graph(user_id="alice")
    assert {node.id for node in graph.nodes} <= {world["alice-atlas"], world["carol-atlas"]}
    assert [link.id for link in graph.edges] == [world["link-in"]]
    relations = view.list_relations(world["alice-atlas"])
    assert [relation.id for relation in relations] == [world["link-in"]]
    assert view.count_relations(world["alice-atlas"]) == 1


def test_threads_users_agents_stats_and_activity_see_nothing_outside(view, world):
    assert [thread.id for thread in view.list_threads()] == ["t-alice"]
    assert "alice" in repr(view.list_users())
    assert "bob" not in repr(view.list_users()) and "zeus" not in repr(view.list_agents())
    stats = view.stats()
    assert SECRET not in repr(stats)
    memories = [counts["valid"] for kind, counts in stats.records.items() if kind not in ("message", "user_profile")]
    assert sum(memories) == 2
    assert (stats.threads, stats.users, stats.agents) == (1, 2, 1)
    view.activity.flush()
    events = view.list_activity(limit=None, include_content=True)
    assert events and all(event.scope.get("user_id") in ("alice", "carol") for event in events)
    assert all(event.scope.get("agent_id") == "atlas" for event in events)
    assert SECRET not in repr(events)
    snapshot = view.snapshot()
    assert SECRET not in repr(snapshot)
    assert {record.user_id for record in snapshot.records if record.record_type != "user_profile"} <= {"alice", "carol"}


def test_writes_outside_are_refused_and_change_nothing(memory, view, world):
    before = memory.get_memory(world["bob-atlas"]).content
    with pytest.raises(KeyError):
        view.update_memory(world["bob-atlas"], content="changed")
    assert view.delete_memory(world["bob-atlas"]) == 0
    with pytest.raises(OutsideVisibilityError, match=r"^user_id"):
        view.add_memory("new for bob", user_id="bob", agent_id="atlas")
    with pytest.raises(OutsideVisibilityError, match=r"^user_id"):
        view.add_memory("new for no one", agent_id="atlas")
    with pytest.raises(OutsideVisibilityError, match=r"^agent_id"):
        view.add_memory("new for zeus", user_id="alice", agent_id="zeus")
    with pytest.raises(ValueError, match=r"^no memory"):
        view.link_records(world["alice-atlas"], "memory", world["nobody-atlas"], "memory", "relates_to")
    assert view.delete_record_link(relation_id=world["link-out"]) == 0
    with pytest.raises(KeyError):
        view.get_thread("t-bob")
    with pytest.raises(OutsideVisibilityError):
        view.create_thread(thread_id="t-new", user_id="bob", agent_id="atlas")
    with pytest.raises(OutsideVisibilityError):
        view.add_user("bob", "taken over")
    with pytest.raises(OutsideVisibilityError):
        view.check()
    assert view.delete_user("bob") == 0
    assert memory.get_memory(world["bob-atlas"]).content == before
    assert memory.get_relation(world["link-out"]) is not None
    assert memory.get_user("bob").content == f"{SECRET} profile"


def test_writes_inside_go_through(memory, view, world):
    new_id = view.add_memory("new for carol", user_id="carol", agent_id="atlas")
    assert memory.get_memory(new_id).user_id == "carol"
    view.update_memory(world["alice-atlas"], content="edited")
    assert memory.get_memory(world["alice-atlas"]).content == "edited"
    thread = view.get_thread("t-alice")
    thread.add_messages([{"role": "user", "content": "more"}])
    assert view.count_thread_messages("t-alice") == 2
    assert view.delete_record_link(relation_id=world["link-in"]) == 1


def test_an_agents_only_view_sees_every_user_of_its_agent(memory, world):
    view = memory.restricted(Visibility(agents=["zeus"]))
    assert visible_texts(view.list_memories(limit=None)) == [f"{SECRET} note of alice-zeus"]
    assert view.count_memories() == 1


def test_a_client_keeps_one_view_per_visibility(memory):
    first = memory.restricted(Visibility(users=["alice", "bob"]))
    assert memory.restricted(Visibility(users=["bob", "alice"])) is first
    narrower = memory.restricted(Visibility(users=["alice", "bob"], agents=["atlas"]))
    assert first.restricted(Visibility(agents=["atlas"])) is narrower  # never wider than the view
    assert first.restricted(Visibility(users=["bob", "carol"])).visibility == Visibility(users=["bob"])
    with pytest.raises(ValueError):
        first.restricted(Visibility(users=["carol"]))
    assert first.restricted(Visibility()) is first  # nothing more restricted: the view itself


def test_a_store_view_restricted_again_is_never_wider(memory, world):
    view = memory.store.restricted(Visibility(users=["alice"]))
    again = view.restricted(Visibility(agents=["zeus"]))
    assert again.visibility == Visibility(users=["alice"], agents=["zeus"])
    assert [record.content for record in again.list("memory", limit=None)] == [f"{SECRET} note of alice-zeus"]


def test_an_event_that_served_a_record_outside_is_outside(memory, view, world):
    """alice's search through agent atlas that did not hold to the agent served alice's note with
    zeus: its text is in the event, so the event is not the view's to see."""
    memory.search("note", user_id="alice", agent_id="atlas", exact_agent_match=False, max_results=20)
    memory.search("note", user_id="alice", agent_id="atlas", exact_agent_match=True, max_results=20)
    memory.activity.flush()
    searches = [event for event in memory.list_activity(kind="search", limit=None, include_content=True)]
    assert len(searches) == 2
    wide = [event for event in searches if SECRET in repr(memory.get_activity(event.id))]
    assert len(wide) == 1
    seen = view.list_activity(kind="search", limit=None, include_content=True)
    assert [event.id for event in seen] == [event.id for event in searches if event not in wide]
    assert SECRET not in repr(seen)
    with pytest.raises(KeyError):
        view.get_activity(wide[0].id)


def test_a_redaction_through_a_view_leaves_the_events_outside_as_they_were(memory, view, world):
    """A scoped curator's Redact takes the value out of the events it sees, not out of every
    event of the store: the events of bob's searches are outside its scope, and so theirs to keep."""
    value = "pizza-4111"
    memory.search(value, user_id="alice", agent_id="atlas", exact_agent_match=True)
    memory.search(value, user_id="bob", agent_id="atlas", exact_agent_match=True)
    memory.activity.flush()
    assert view.redact_activity(value, "[REDACTED:card]") == 1
    held = [
        event.scope.get("user_id")
        for event in memory.list_activity(kind="search", limit=None, include_content=True)
        if value in repr(memory.get_activity(event.id))
    ]
    assert held == ["bob"]


def test_a_view_moves_a_record_only_inside(memory, view, world):
    """Moving a record it sees to a user or agent outside would write into a scope the view cannot
    see (a memory planted in bob's data, which his agents would then retrieve): refused, and the
    record stays where it was."""
    memory_id = world["alice-atlas"]
    for moved in ({"user_id": "bob"}, {"agent_id": "zeus"}, {"user_id": None}):
        with pytest.raises(OutsideVisibilityError):
            view.update_memory(memory_id, **moved)
        record = memory.get_memory(memory_id)
        assert (record.user_id, record.agent_id) == ("alice", "atlas")
    view.update_memory(memory_id, user_id="carol")
    assert memory.get_memory(memory_id).user_id == "carol"
