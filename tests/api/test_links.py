"""/api/v1/links/: each persona, listing by memory, scope and type, creating (with the dashboard's
check of mistyped built-ins), retyping and deleting, each saying which memories changed status."""

from __future__ import annotations

import pytest

from memory.models import CurationEntry
from tests.web.world import World, build_world

LIST = "/api/v1/links/"


def one(relation_id: str) -> str:
    return f"{LIST}{relation_id}/"


@pytest.fixture
def world(agent_memory) -> World:
    """fact-vegetarian supersedes fact-old (so fact-old is invalid)."""
    return build_world(agent_memory)


@pytest.fixture
def tea(agent_memory) -> tuple[str, str]:
    """Two more memories of bob, not linked."""
    agent_memory.add_memory("Bob drinks green tea.", memory_type="fact", memory_id="tea-old", user_id="bob")
    agent_memory.add_memory("Bob now drinks oolong.", memory_type="fact", memory_id="tea-new", user_id="bob")
    return "tea-new", "tea-old"


def status_of(agent_memory, memory_id: str) -> str:
    return str(agent_memory.get_memory(memory_id).status)


# --- who may do what ------------------------------------------------------------------------


def test_without_credentials_or_with_a_dead_token_it_is_a_401(anonymous, revoked_api, expired_api, world):
    for client in (anonymous, revoked_api, expired_api):
        assert client.get(LIST).status_code == 401
        assert client.get(one(world.link_id)).status_code == 401
        assert client.delete(one(world.link_id)).status_code == 401


def test_viewers_read_links_and_cannot_change_them(viewer_api, curator_reading_api, agent_memory, world, tea):
    for client in (viewer_api, curator_reading_api):
        assert client.get(LIST).status_code == 200
        assert client.get(one(world.link_id)).status_code == 200
        made = {"source_record_id": "tea-new", "target_record_id": "tea-old", "relation_type": "supersedes"}
        assert client.post(LIST, made, format="json").status_code == 403
        assert client.patch(one(world.link_id), {"relation_type": "supports"}, format="json").status_code == 403
        assert client.delete(one(world.link_id)).status_code == 403
    assert [link.id for link in agent_memory.list_relations()] == [world.link_id]
    assert status_of(agent_memory, "tea-old") == "valid"
    assert CurationEntry.objects.count() == 0


def test_a_session_links_with_its_csrf_token(session_api, agent_memory, tea):
    session_api.get("/")
    made = session_api.post(
        LIST,
        {"source_record_id": "tea-new", "target_record_id": "tea-old", "relation_type": "supports"},
        format="json",
        HTTP_X_CSRFTOKEN=session_api.cookies["csrftoken"].value,
    )
    assert made.status_code == 201, made.content
    assert CurationEntry.objects.get().token_name == ""


# --- reading --------------------------------------------------------------------------------


def test_a_link_comes_with_its_version_as_etag(viewer_api, world):
    response = viewer_api.get(one(world.link_id))

    assert response.status_code == 200
    assert response["ETag"] == '"1"'
    body = response.json()
    assert (body["source_record_id"], body["target_record_id"]) == (world.fact_id, world.old_fact_id)
    assert (body["relation_type"], body["opposite_relation_type"]) == ("supersedes", "is_superseded_by")
    assert (body["source_record_type"], body["target_record_type"]) == ("fact", "fact")


def test_a_missing_link_is_a_404(viewer_api, curator_api, world):
    assert viewer_api.get(one("no-such-link")).status_code == 404
    assert curator_api.patch(one("no-such-link"), {"relation_type": "supports"}, format="json").status_code == 404
    assert curator_api.delete(one("no-such-link")).status_code == 404


def test_the_list_is_by_memory_by_scope_and_by_type_and_pages_by_cursor(viewer_api, agent_memory, world, tea):
    agent_memory.link_records("tea-new", "fact", "tea-old", "fact", "supports", relation_id="tea-link")
    agent_memory.link_records("tea-new", "fact", world.fact_id, "fact", "contradicts", relation_id="odd-link")

    def ids(**params) -> list[str]:
        return [link["id"] for link in viewer_api.get(LIST, params).json()["results"]]

    assert ids() == [world.link_id, "tea-link", "odd-link"]
    assert ids(record_id=world.fact_id) == [world.link_id, "odd-link"]
    assert ids(user_id="bob") == ["tea-link", "odd-link"]
    assert ids(thread_id=world.thread_id) == [world.link_id, "odd-link"]
    assert ids(unscoped="thread_id") == ["tea-link", "odd-link"]
    assert ids(relation_type="supports") == ["tea-link"]
    assert ids(relation_type=["supersedes", "contradicts"]) == [world.link_id, "odd-link"]
    assert ids(record_id="tea-new", relation_type="contradicts") == ["odd-link"]

    first = viewer_api.get(LIST, {"limit": 2}).json()
    assert [link["id"] for link in first["results"]] == [world.link_id, "tea-link"]
    last = viewer_api.get(first["next"]).json()
    assert [link["id"] for link in last["results"]] == ["odd-link"] and last["next"] is None


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"cursor": "forged"}, "cursor"),
        ({"limit": "1000"}, "limit"),
        ({"record_id": "x" * 600}, "record_id"),
        ({"relation_type": "x" * 600}, "relation_type"),
        ({"user_id": "bob", "unscoped": "user_id"}, "user_id"),
        ({"unscoped": "galaxy"}, "unscoped"),
    ],
)
def test_bad_filters_are_a_400_with_the_parameter(viewer_api, world, params, field):
    response = viewer_api.get(LIST, params)

    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()


# --- creating -------------------------------------------------------------------------------


def test_a_lifecycle_link_says_it_retired_its_target(curator_api, agent_memory, tea):
    response = curator_api.post(
        LIST,
        {
            "source_record_id": "tea-new",
            "target_record_id": "tea-old",
            "relation_type": "supersedes",
            "metadata": {"why": "asked"},
        },
        format="json",
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert response["Location"] == one(body["id"])
    assert response["ETag"] == '"1"'
    assert (body["relation_type"], body["opposite_relation_type"], body["metadata"]) == (
        "supersedes",
        "is_superseded_by",
        {"why": "asked"},
    )
    assert body["status_changes"] == [
        {
            "id": "tea-old",
            "memory_type": "fact",
            "content": "Bob drinks green tea.",
            "before": "valid",
            "after": "invalid",
        }
    ]
    assert status_of(agent_memory, "tea-old") == "invalid"
    entry = CurationEntry.objects.get()
    assert (entry.object_kind, entry.object_id, entry.action, entry.token_name) == (
        "link",
        body["id"],
        "link",
        "carl-script",
    )


def test_a_link_of_ones_own_reads_as_given_and_retires_nothing(curator_api, agent_memory, tea):
    response = curator_api.post(
        LIST,
        {
            "source_record_id": "tea-new",
            "target_record_id": "tea-old",
            "relation_type": "follows_from",
            "opposite_relation_type": "leads_to",
        },
        format="json",
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["relation_type"], body["opposite_relation_type"], body["status_changes"]) == (
        "follows_from",
        "leads_to",
        [],
    )
    assert status_of(agent_memory, "tea-old") == "valid"


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"relation_type": "Supersedes"}, "relation_type", "did you mean"),
        ({"relation_type": "is_superseded_by"}, "relation_type", "from its target"),
        ({"relation_type": ""}, "relation_type", "blank"),
        ({"relation_type": "x" * 600}, "relation_type", "512"),
        ({"relation_type": "supports", "opposite_relation_type": "backs"}, "opposite_relation_type", ""),
        ({"target_record_id": "tea-new"}, "target_record_id", "itself"),
        ({"target_record_id": "no-such-memory"}, "target_record_id", "names no memory"),
        ({"source_record_id": "no-such-memory"}, "source_record_id", "names no memory"),
        ({"source_record_id": None}, "source_record_id", ""),
        ({"metadata": "not an object"}, "metadata", ""),
        ({"relation_type": "cites\x00"}, "relation_type", ""),
    ],
)
def test_bad_links_are_a_400_under_their_field_and_store_nothing(curator_api, agent_memory, tea, body, field, message):
    fields = {"source_record_id": "tea-new", "target_record_id": "tea-old", "relation_type": "supersedes", **body}

    response = curator_api.post(LIST, fields, format="json")

    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert field in errors, errors
    assert message in " ".join(errors[field])
    assert list(agent_memory.list_relations()) == []
    assert status_of(agent_memory, "tea-old") == "valid"
    assert CurationEntry.objects.count() == 0


def test_a_second_link_between_the_same_memories_is_refused(curator_api, agent_memory, world):
    response = curator_api.post(
        LIST,
        {"source_record_id": world.old_fact_id, "target_record_id": world.fact_id, "relation_type": "supports"},
        format="json",
    )

    assert response.status_code == 400
    assert "one link per pair" in response.json()["errors"]["target_record_id"][0]
    assert [link.id for link in agent_memory.list_relations()] == [world.link_id]


# --- retyping and deleting ------------------------------------------------------------------


def test_a_retype_says_it_made_the_target_valid_again(curator_api, agent_memory, world):
    response = curator_api.patch(one(world.link_id), {"relation_type": "supports"}, format="json", HTTP_IF_MATCH='"1"')

    assert response.status_code == 200, response.content
    assert response["ETag"] == '"2"'
    body = response.json()
    assert (body["relation_type"], body["opposite_relation_type"]) == ("supports", "is_supported_by")
    assert [(change["id"], change["before"], change["after"]) for change in body["status_changes"]] == [
        (world.old_fact_id, "invalid", "valid")
    ]
    assert status_of(agent_memory, world.old_fact_id) == "valid"
    entry = CurationEntry.objects.get()
    assert (entry.action, entry.token_name, entry.before["relation_type"]) == ("update", "carl-script", "supersedes")


def test_metadata_alone_changes_no_status(curator_api, agent_memory, world):
    response = curator_api.patch(one(world.link_id), {"metadata": {"checked": True}}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["status_changes"] == []
    assert agent_memory.get_relation(world.link_id).metadata == {"checked": True}


def test_a_link_keeps_its_own_type_even_if_the_check_would_refuse_it_now(curator_api, agent_memory, tea):
    relation_id = agent_memory.link_records("tea-new", "fact", "tea-old", "fact", "Cites")

    response = curator_api.patch(one(relation_id), {"relation_type": "Cites", "metadata": {"a": 1}}, format="json")

    assert response.status_code == 200, response.content
    refused = curator_api.patch(one(relation_id), {"relation_type": "Refines"}, format="json")
    assert refused.status_code == 400 and "relation_type" in refused.json()["errors"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "non_field_errors"),
        ({"relation_type": "Supersedes"}, "relation_type"),
        ({"relation_type": "is_refined_by"}, "relation_type"),
        ({"metadata": [1]}, "metadata"),
        ({"relation_type": "supersedes", "opposite_relation_type": "x" * 600}, "opposite_relation_type"),
    ],
)
def test_bad_retypes_are_a_400_and_write_nothing(curator_api, agent_memory, world, body, field):
    response = curator_api.patch(one(world.link_id), body, format="json")

    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()
    assert agent_memory.get_relation(world.link_id).version == 1
    assert CurationEntry.objects.count() == 0


def test_a_retype_against_an_old_etag_is_a_412_and_writes_nothing(curator_api, agent_memory, world):
    agent_memory.update_record_link(world.link_id, metadata={"changed": "meanwhile"})

    response = curator_api.patch(one(world.link_id), {"relation_type": "supports"}, format="json", HTTP_IF_MATCH='"1"')

    assert response.status_code == 412
    assert agent_memory.get_relation(world.link_id).relation_type == "supersedes"
    assert curator_api.delete(one(world.link_id), HTTP_IF_MATCH='"1"').status_code == 412
    assert agent_memory.get_relation(world.link_id)
    assert CurationEntry.objects.count() == 0


def test_a_delete_says_which_memory_is_valid_again_and_can_be_undone(curator_api, agent_memory, world):
    response = curator_api.delete(one(world.link_id), HTTP_IF_MATCH='"1"')

    assert response.status_code == 200, response.content
    assert response.json() == {
        "id": world.link_id,
        "status_changes": [
            {
                "id": world.old_fact_id,
                "memory_type": "fact",
                "content": "Alice used to eat fish.",
                "before": "invalid",
                "after": "valid",
            }
        ],
    }
    assert status_of(agent_memory, world.old_fact_id) == "valid"
    with pytest.raises(KeyError):
        agent_memory.get_relation(world.link_id)
    entry = CurationEntry.objects.get()
    assert (entry.action, entry.token_name) == ("unlink", "carl-script")
    assert entry.before["relations"][0]["id"] == world.link_id
