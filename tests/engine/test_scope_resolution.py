"""Scope resolution of thread and client search (API_SPEC §2, derived checks C-D8, C-D9, C-D12 to C-D14).

The `scoped` fixture stores one memory per scope combination, all about the same topic, so that a
search's result set shows exactly which scope filter was applied. Thread "t1" belongs to u1/a1.
"""

from __future__ import annotations

import pytest

from memory.engine import SearchScope

QUERY = "kickoff agenda"

# id: (user_id, agent_id, thread_id)
SCOPES = {
    "t1": ("u1", "a1", "t1"),
    "t2": ("u1", "a1", "t2"),
    "u1-no-thread": ("u1", "a1", None),
    "no-agent": ("u1", None, "t1"),
    "a2": ("u1", "a2", "t4"),
    "u2": ("u2", "a1", "t3"),
    "no-user": (None, "a1", None),
    "no-user-a2": (None, "a2", None),
    "unscoped": (None, None, None),
}

THREAD_DEFAULT = {"t1", "t2", "u1-no-thread"}
USER_U1 = {"t1", "t2", "u1-no-thread", "no-agent", "a2"}
NO_USER = {"no-user", "no-user-a2", "unscoped"}


@pytest.fixture
def scoped(memory, thread):
    for memory_id, (user_id, agent_id, thread_id) in SCOPES.items():
        memory.add_memory(
            f"{QUERY} notes ({memory_id})", memory_id=memory_id, user_id=user_id, agent_id=agent_id, thread_id=thread_id
        )
    for memory_id, scope in SCOPES.items():
        record = memory.get_memory(memory_id)
        assert (record.user_id, record.agent_id, record.thread_id) == scope, "precondition: scopes stored as given"
    return thread


def found(results) -> set[str]:
    ids = [r.id for r in results]
    assert len(ids) == len(set(ids)), f"duplicate results: {ids}"
    return set(ids)


def thread_search(thread, **kwargs) -> set[str]:
    return found(thread.search(QUERY, max_results=50, **kwargs))


def client_search(memory, **kwargs) -> set[str]:
    return found(memory.search(QUERY, max_results=50, **kwargs))


# --- thread search defaults ----------------------------------------------------------------


def test_c_d8_default_thread_search_includes_other_threads_of_the_same_user_and_agent(scoped):
    assert thread_search(scoped) == THREAD_DEFAULT


def test_c_d9_thread_search_with_exact_thread_match_keeps_only_this_thread(scoped):
    assert thread_search(scoped, exact_thread_match=True) == {"t1"}


def test_default_thread_search_never_returns_another_users_or_agents_records(scoped):
    results = scoped.search(QUERY, max_results=50)
    assert results
    for result in results:
        assert (result.record.user_id, result.record.agent_id) == ("u1", "a1")


def test_default_thread_search_includes_messages_of_other_threads_of_the_same_user_and_agent(memory):
    mine = memory.create_thread(thread_id="m1", user_id="u1", agent_id="a1")
    sibling = memory.create_thread(thread_id="m2", user_id="u1", agent_id="a1")
    stranger = memory.create_thread(thread_id="m3", user_id="u2", agent_id="a1")
    [own] = mine.add_messages([{"role": "user", "content": "lunch plans in the mine thread"}])
    [sib] = sibling.add_messages([{"role": "user", "content": "lunch plans in the sibling thread"}])
    stranger.add_messages([{"role": "user", "content": "lunch plans in the stranger thread"}])
    assert found(mine.search("lunch plans", max_results=50)) == {own, sib}
    assert found(mine.search("lunch plans", max_results=50, exact_thread_match=True)) == {own}


# --- thread search with explicit values ----------------------------------------------------


def test_thread_search_user_id_none_returns_only_user_unscoped_records_of_the_agent(scoped):
    assert thread_search(scoped, user_id=None) == {"no-user"}


def test_thread_search_agent_id_none_returns_only_agent_unscoped_records_of_the_user(scoped):
    assert thread_search(scoped, agent_id=None) == {"no-agent"}


def test_thread_search_explicit_user_id_is_matched_exactly_by_default(scoped):
    assert thread_search(scoped, user_id="u2") == {"u2"}


def test_thread_search_explicit_agent_id_is_matched_exactly_by_default(scoped):
    assert thread_search(scoped, agent_id="a2") == {"a2"}


def test_thread_search_explicit_thread_id_without_exact_flag_leaves_threads_unfiltered(scoped):
    assert thread_search(scoped, thread_id="t2") == THREAD_DEFAULT


def test_thread_search_explicit_thread_id_with_exact_flag_keeps_only_that_thread(scoped):
    assert thread_search(scoped, thread_id="t2", exact_thread_match=True) == {"t2"}


def test_thread_search_thread_id_none_with_exact_flag_keeps_only_thread_less_records(scoped):
    assert thread_search(scoped, thread_id=None, exact_thread_match=True) == {"u1-no-thread"}


def test_thread_search_exact_user_match_false_leaves_users_unfiltered(scoped):
    assert thread_search(scoped, exact_user_match=False) == THREAD_DEFAULT | {"u2", "no-user"}


def test_thread_search_exact_agent_match_false_leaves_agents_unfiltered(scoped):
    assert thread_search(scoped, exact_agent_match=False) == THREAD_DEFAULT | {"no-agent", "a2"}


def test_thread_search_explicit_none_without_exact_match_leaves_the_dimension_unfiltered(scoped):
    assert thread_search(scoped, agent_id=None, exact_agent_match=False) == THREAD_DEFAULT | {"no-agent", "a2"}


def test_thread_search_with_every_dimension_open_sees_every_record(scoped):
    assert thread_search(scoped, exact_user_match=False, exact_agent_match=False) == set(SCOPES)


# --- SearchScope objects (§2.6, §2.7) ------------------------------------------------------


def test_an_empty_search_scope_resolves_to_the_thread_defaults(scoped):
    assert thread_search(scoped, scope=SearchScope()) == THREAD_DEFAULT


def test_search_scope_exact_thread_match_keeps_only_this_thread(scoped):
    assert thread_search(scoped, scope=SearchScope(exact_thread_match=True)) == {"t1"}


def test_search_scope_user_none_keeps_only_user_unscoped_records(scoped):
    assert thread_search(scoped, scope=SearchScope(user_id=None)) == {"no-user"}


def test_search_scope_values_replace_the_thread_defaults(scoped):
    assert thread_search(scoped, scope=SearchScope(user_id="u2", agent_id="a1")) == {"u2"}
    assert thread_search(scoped, scope=SearchScope(agent_id="a2")) == {"a2"}


def test_search_scope_exact_flags_false_open_their_dimensions(scoped):
    assert thread_search(scoped, scope=SearchScope(exact_user_match=False, exact_agent_match=False)) == set(SCOPES)


def test_search_scope_thread_id_and_exact_flag_keep_only_that_thread(scoped):
    assert thread_search(scoped, scope=SearchScope(thread_id="t2", exact_thread_match=True)) == {"t2"}


# --- client search (§2.3, §2.4) ------------------------------------------------------------


def test_c_d12_client_search_without_user_id_raises_value_error(scoped, memory):
    with pytest.raises(ValueError):
        memory.search(QUERY)
    with pytest.raises(ValueError):
        memory.search(QUERY, agent_id="a1", exact_agent_match=True)


@pytest.mark.parametrize("user_id", ["u1", None])
def test_c_d13_client_search_with_exact_user_match_false_raises_value_error(scoped, memory, user_id):
    with pytest.raises(ValueError):
        memory.search(QUERY, user_id=user_id, exact_user_match=False)


def test_c_d14_client_search_for_user_none_returns_only_user_unscoped_records(scoped, memory):
    assert client_search(memory, user_id=None, exact_user_match=True) == NO_USER
    assert client_search(memory, user_id=None) == NO_USER


def test_client_search_matches_the_user_exactly_and_leaves_agent_and_thread_broad(scoped, memory):
    assert client_search(memory, user_id="u1") == USER_U1
    assert client_search(memory, user_id="u2") == {"u2"}


def test_client_search_explicit_agent_or_thread_without_exact_flag_stays_broad(scoped, memory):
    assert client_search(memory, user_id="u1", agent_id="a2") == USER_U1
    assert client_search(memory, user_id="u1", thread_id="t2") == USER_U1


def test_client_search_exact_agent_match_keeps_only_that_agent(scoped, memory):
    assert client_search(memory, user_id="u1", agent_id="a2", exact_agent_match=True) == {"a2"}
    assert client_search(memory, user_id="u1", agent_id=None, exact_agent_match=True) == {"no-agent"}


def test_client_search_exact_thread_match_keeps_only_that_thread(scoped, memory):
    assert client_search(memory, user_id="u1", thread_id="t2", exact_thread_match=True) == {"t2"}
    assert client_search(memory, user_id="u1", thread_id=None, exact_thread_match=True) == {"u1-no-thread"}


def test_client_search_accepts_a_search_scope(scoped, memory):
    assert client_search(memory, scope=SearchScope(user_id="u1", agent_id="a2", exact_agent_match=True)) == {"a2"}
    with pytest.raises(ValueError):
        memory.search(QUERY, scope=SearchScope(agent_id="a1"))
    with pytest.raises(ValueError):
        memory.search(QUERY, scope=SearchScope(user_id="u1"), user_id="u1")


# --- invalid scope values ------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs", [{"user_id": 5}, {"agent_id": ["a1"]}, {"thread_id": 1.5}, {"user_id": b"u1"}, {"agent_id": {"id": "a1"}}]
)
def test_thread_search_with_a_non_string_scope_value_raises_value_error(scoped, kwargs):
    with pytest.raises(ValueError):
        scoped.search(QUERY, **kwargs)


@pytest.mark.parametrize(
    "kwargs", [{"user_id": 123}, {"user_id": "u1", "agent_id": 7}, {"user_id": "u1", "thread_id": ["t"]}]
)
def test_client_search_with_a_non_string_scope_value_raises_value_error(scoped, memory, kwargs):
    with pytest.raises(ValueError):
        memory.search(QUERY, **kwargs)


def test_a_search_scope_with_a_non_string_value_raises_value_error(scoped):
    with pytest.raises(ValueError):
        scoped.search(QUERY, scope=SearchScope(user_id=42))
