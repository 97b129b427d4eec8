"""The near-duplicate finder (/review/duplicates/) and Curation.merge_duplicates, per persona."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.curation import Actor, Curation, CurationError
from memory.engine import AgentMemory
from memory.models import BulkChange, CurationEntry

URL = reverse("memory:review_duplicates")


@pytest.fixture
def dupes(agent_memory: AgentMemory) -> AgentMemory:
    """alice: three rewordings of being vegetarian (v1 the plainest), two of a window seat, and
    an unrelated fact; v2 supports the seat memory s1, v3 refines the unrelated one, and v1
    and v2 are linked (v1 supports v2). bob has v1's very words."""
    add = agent_memory.add_memory
    add("Alice is vegetarian.", memory_type="fact", user_id="alice", memory_id="v1")
    add("Alice is a vegetarian.", memory_type="fact", user_id="alice", memory_id="v2", metadata={"source": "chat"})
    add("Alice is vegetarian now.", memory_type="fact", user_id="alice", memory_id="v3")
    add("Alice prefers window seats on flights.", memory_type="preference", user_id="alice", memory_id="s1")
    add("Alice prefers window seats on long flights.", memory_type="preference", user_id="alice", memory_id="s2")
    add("The emergency fund target is 450 a month.", memory_type="fact", user_id="alice", memory_id="fund")
    add("Alice is vegetarian.", memory_type="fact", user_id="bob", memory_id="bob-v")
    link = agent_memory.link_records
    link("v2", "fact", "s1", "preference", "supports", relation_id="v2-s1")
    link("v3", "fact", "fund", "fact", "refines", relation_id="v3-fund")
    link("v1", "fact", "v2", "fact", "supports", relation_id="v1-v2")
    return agent_memory


def group_ids(memory: AgentMemory, user_id: str = "alice") -> list[set[str]]:
    return [{record.id for record in group.memories} for group in memory.find_duplicates(user_id).groups]


def links_of(memory: AgentMemory, memory_id: str) -> set[tuple[str, str, str]]:
    return {
        (link.source_record_id, link.relation_type, link.target_record_id)
        for link in memory.list_relations(record_id=memory_id, limit=None)
    }


def test_the_fixture_has_the_groups_it_says(dupes):
    assert group_ids(dupes) == [{"s1", "s2"}, {"v1", "v2", "v3"}]


# --- the page -------------------------------------------------------------------------------------


def test_a_viewer_sees_the_groups_side_by_side_with_a_diff_and_no_buttons(viewer_client, dupes):
    response = viewer_client.get(URL, {"user_id": "alice"})
    assert response.status_code == 200
    page = response.content.decode()
    assert "Alice is vegetarian." in page and "Alice prefers window seats on flights." in page  # the centres
    assert "<ins>a </ins>" in page and "<ins>long </ins>" in page  # v2 beside v1, s2 beside s1: the words they add
    assert "bob-v" not in page
    assert 'name="keep"' not in page and "delete the others" not in page


def test_a_curator_gets_a_radio_per_memory_and_both_buttons(curator_client, dupes):
    page = curator_client.get(URL, {"user_id": "alice"}).content.decode()
    assert page.count('name="keep"') == 5
    assert "link the others as its duplicates" in page and "delete the others" in page


def test_the_user_defaults_to_the_one_with_the_most_memories(viewer_client, dupes):
    dupes.add_user("alice", "Alice")
    dupes.add_user("bob", "Bob")
    response = viewer_client.get(URL)
    assert response.status_code == 200 and response.context["form"].cleaned_data["user_id"] == "alice"


def test_the_distance_is_adjustable(viewer_client, dupes):
    assert len(viewer_client.get(URL, {"user_id": "alice", "max_distance": "0"}).context["groups"]) == 0
    assert len(viewer_client.get(URL, {"user_id": "alice", "max_distance": "0.5"}).context["groups"]) >= 2


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ({"max_distance": "-0.1"}, "max_distance", "greater than or equal to 0"),
        ({"max_distance": "7"}, "max_distance", "less than or equal to 0.5"),
        ({"max_distance": "1e400"}, "max_distance", ""),
        ({"max_distance": "nan"}, "max_distance", ""),
        ({"max_distance": "near"}, "max_distance", "Enter a number"),
        ({"user_id": "nobody"}, "user_id", "No user 'nobody' with memories"),
        ({"memory_type": "message"}, "memory_type", "Select a valid choice"),
    ],
)
def test_bad_input_is_a_form_error_not_a_500(viewer_client, dupes, query, field, message):
    response = viewer_client.get(URL, {"user_id": "alice", **query})
    assert response.status_code == 400
    errors = response.context["form"].errors[field]
    assert errors and message in " ".join(errors)


def test_an_empty_store_says_there_is_nobody_yet(viewer_client, agent_memory):
    response = viewer_client.get(URL)
    assert response.status_code == 400 and "user_id" in response.context["form"].errors


# --- merging: curators only -----------------------------------------------------------------------


def merge(client, keep: str, members: list[str], how: str = "link", **headers):
    data = {"action": "merge", "keep": keep, "members": members, "how": how, "state_user_id": "alice"}
    if how == "delete":
        data["confirmed"] = "yes"  # as the confirmation's form sends it
    return client.post(URL, data, **headers)


def test_a_viewer_cannot_merge_or_undo(viewer_client, dupes):
    assert merge(viewer_client, "v1", ["v1", "v2", "v3"]).status_code == 403
    assert viewer_client.post(URL, {"action": "undo", "change": "1"}).status_code == 403
    assert group_ids(dupes)  # nothing changed
    assert not CurationEntry.objects.exists()


def test_linking_retires_the_others_and_moves_their_links_in_one_bulk_change(curator_client, dupes):
    response = merge(curator_client, "v1", ["v1", "v2", "v3"])
    change = BulkChange.objects.get()
    assert response.status_code == 302 and response["Location"].endswith(f"&merged={change.pk}")
    assert {dupes.get_memory(i).status for i in ("v2", "v3")} == {"invalid"}
    assert dupes.get_memory("v1").status == "valid"
    assert links_of(dupes, "v1") == {
        ("v1", "duplicates", "v2"),
        ("v1", "duplicates", "v3"),
        ("v1", "supports", "s1"),  # was v2's
        ("v1", "refines", "fund"),  # was v3's
    }
    assert links_of(dupes, "v2") == {("v1", "duplicates", "v2")}  # v1-v2 (supports) replaced
    assert set(change.entries.values_list("bulk", flat=True)) == {change.pk}
    assert (
        change.summary
        == "Merged near-duplicates into “Alice is vegetarian.”: 2 linked as its duplicates; moved 2 links"
    )
    assert {"v1", "v2", "v3"} not in group_ids(dupes)
    page = curator_client.get(response["Location"]).content.decode()
    assert "Undo this merge" in page and change.summary in page


def test_deleting_removes_the_others_and_keeps_their_links_on_the_kept_one(curator_client, dupes):
    assert merge(curator_client, "v2", ["v1", "v2", "v3"], how="delete").status_code == 302
    for gone in ("v1", "v3"):
        with pytest.raises(KeyError):
            dupes.get_memory(gone)
    assert links_of(dupes, "v2") == {("v2", "supports", "s1"), ("v2", "refines", "fund")}


def test_one_undo_restores_everything(curator_client, dupes):
    before = {memory_id: links_of(dupes, memory_id) for memory_id in ("v1", "v2", "v3", "s1", "fund")}
    merge(curator_client, "v1", ["v1", "v2", "v3"], how="delete")
    change = BulkChange.objects.get()
    response = curator_client.post(URL, {"action": "undo", "change": change.pk, "state_user_id": "alice"})
    assert response.status_code == 302
    assert {memory_id: links_of(dupes, memory_id) for memory_id in before} == before
    assert {dupes.get_memory(i).status for i in ("v1", "v2", "v3")} == {"valid"}
    assert {"v1", "v2", "v3"} in group_ids(dupes)
    again = curator_client.post(URL, {"action": "undo", "change": change.pk, "state_user_id": "alice"})
    assert again.status_code == 400 and "already undone" in again.content.decode()


def test_links_that_would_repeat_or_loop_are_not_moved_and_said(agent_memory, curator):
    """s2 and v2 both support s1: the kept v1 takes the first, the second stays (one link per pair)."""
    add = agent_memory.add_memory
    for memory_id, text in (("v1", "Alice is vegetarian."), ("v2", "Alice is a vegetarian."), ("v3", "Alice: veg")):
        add(text, memory_type="fact", user_id="alice", memory_id=memory_id)
    add("Alice likes tofu.", memory_type="fact", user_id="alice", memory_id="tofu")
    agent_memory.link_records("v1", "fact", "tofu", "fact", "supports", relation_id="v1-tofu")
    agent_memory.link_records("v2", "fact", "tofu", "fact", "supports", relation_id="v2-tofu")
    agent_memory.link_records("v2", "fact", "v3", "fact", "supports", relation_id="v2-v3")
    merged = Curation(agent_memory, Actor(curator)).merge_duplicates("v1", ["v2", "v3"])
    assert merged.moved == 0
    reasons = {link.id: reason for link, reason in merged.skipped}
    assert reasons == {
        "v2-tofu": "the kept memory is already linked with its other end",
        "v2-v3": "it joins two of the retired memories",
    }
    assert links_of(agent_memory, "v1") == {
        ("v1", "supports", "tofu"),
        ("v1", "duplicates", "v2"),
        ("v1", "duplicates", "v3"),
    }


@pytest.mark.parametrize(
    ("keep", "retired", "how", "message"),
    [
        ("v1", [], "link", "retired_ids is empty"),
        ("v1", ["v1", "v2"], "link", "keep is among"),
        ("gone", ["v2"], "link", "keep names no memory"),
        ("v1", ["gone"], "link", "retired_ids names no memory"),
        ("v1", ["v2"], "merge", "how must be"),
    ],
)
def test_the_service_refuses_what_it_cannot_do_and_records_nothing(
    agent_memory, curator, dupes, keep, retired, how, message
):
    with pytest.raises(CurationError, match=message):
        Curation(agent_memory, Actor(curator)).merge_duplicates(keep, retired, how=how)
    assert not BulkChange.objects.exists() and not CurationEntry.objects.exists()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"keep": "bob-v", "members": ["v1", "v2"]}, "Choose the memory to keep among"),
        ({"keep": "", "members": ["v1", "v2"]}, "Choose the memory to keep."),
        ({"keep": "v1", "members": ["v1", "gone"]}, "names no memory"),
        ({"keep": "v1", "members": ["v1", "v2"], "how": "shred"}, "Select a valid choice"),
        ({"keep": "v1", "members": ["v1"]}, "retired_ids is empty"),
    ],
)
def test_a_bad_merge_is_a_400_that_says_why(curator_client, dupes, data, message):
    response = curator_client.post(URL, {"action": "merge", "how": "link", "state_user_id": "alice", **data})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not CurationEntry.objects.exists()


def test_with_htmx_the_resolved_group_comes_back_in_place(curator_client, dupes):
    response = curator_client.post(
        URL,
        {"action": "merge", "keep": "s1", "members": ["s1", "s2"], "how": "link", "state_user_id": "alice"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "Resolved:" in page and "Undo this merge" in page and "<html" not in page
    assert dupes.get_memory("s2").status == "invalid"


def test_hostile_content_is_escaped_in_the_groups_and_their_diff(viewer_client, agent_memory):
    agent_memory.add_memory("<script>alert(1)</script> Alice is vegetarian.", user_id="alice", memory_id="x1")
    agent_memory.add_memory("<script>alert(1)</script> Alice is a vegetarian.", user_id="alice", memory_id="x2")
    page = viewer_client.get(URL, {"user_id": "alice"}).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page


# --- the other users, the summary after an in-place merge, the question before deleting -----------


@pytest.fixture
def bob_dupes(dupes: AgentMemory) -> AgentMemory:
    dupes.add_memory("Alice is a vegetarian.", memory_type="fact", user_id="bob", memory_id="bob-v2")
    for user_id in ("alice", "bob", "carol"):
        dupes.add_user(user_id, user_id.title())
    dupes.add_memory("Carol likes tea.", memory_type="fact", user_id="carol", memory_id="carol-1")
    return dupes


def test_the_users_with_groups_are_listed_with_their_counts_and_links(viewer_client, bob_dupes):
    page = viewer_client.get(URL, {"user_id": "alice"}).content.decode()
    assert "Users with near-duplicates" in page and "among the 20 users with the most memories" in page
    assert "?user_id=bob&amp;max_distance=0.25" in page and "1 group<" in page and "2 groups<" in page
    assert "user_id=carol" not in page  # no groups


def test_an_empty_result_points_to_the_next_user_with_groups(viewer_client, bob_dupes):
    response = viewer_client.get(URL, {"user_id": "carol"})
    page = response.content.decode()
    assert response.context["next_user"]["user_id"] == "alice"
    assert "No near-duplicates of" in page and "Next: alice, 2 groups" in page
    assert "only in this one" not in page  # no diff to explain


def test_with_htmx_a_merge_updates_the_summary_out_of_band(curator_client, bob_dupes):
    response = merge(curator_client, "s1", ["s1", "s2"], HTTP_HX_REQUEST="true")
    page = response.content.decode()
    assert 'id="duplicates-summary" hx-swap-oob="true"' in page and 'id="duplicates-users" hx-swap-oob="true"' in page
    assert "1 group within a distance" in page and "2 groups" not in page


def test_deleting_asks_first_and_deletes_nothing_until_confirmed(curator_client, dupes):
    data = {"action": "merge", "keep": "v1", "members": ["v1", "v2", "v3"], "how": "delete", "state_user_id": "alice"}
    response = curator_client.post(URL, data)
    page = response.content.decode()
    assert response.status_code == 200 and "Delete 2 memories and keep one?" in page
    assert 'name="confirmed" value="yes"' in page and "Cancel" in page
    assert {dupes.get_memory(i).status for i in ("v1", "v2", "v3")} == {"valid"}
    assert not CurationEntry.objects.exists()
    inline = curator_client.post(URL, data, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="group-2").content.decode()
    assert inline.startswith('<section class="card border-danger') and 'id="group-2"' in inline
    assert "<html" not in inline
