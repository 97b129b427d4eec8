"""Memories: the browser with its filters, a memory's page, create, edit and delete."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.models import CurationEntry

from .world import World, build_world, confirm_delete

MEMORY_LIST = reverse("memory:memory_list")
CREATE = reverse("memory:memory_create")


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


@pytest.fixture
def many(agent_memory):
    """Memories of every type, scope and status."""
    add = agent_memory.add_memory
    add("Bob likes tea.", memory_type="preference", memory_id="p-tea", user_id="bob", autonomous_linking=False)
    add(
        "Always answer in French.",
        memory_type="guideline",
        memory_id="g-fr",
        agent_id="atlas",
        autonomous_linking=False,
    )
    add(
        "Bob met Ana in Porto.",
        memory_type="memory",
        memory_id="e-porto",
        user_id="bob",
        thread_id="t1",
        metadata={"source": "chat", "tags": ["trip"]},
        autonomous_linking=False,
    )
    add("Bob is 40.", memory_type="fact", memory_id="f-age", user_id="bob", status="invalid", autonomous_linking=False)
    add("Coupon code 50% OFF_NOW", memory_type="fact", memory_id="f-coupon", user_id="bob", autonomous_linking=False)
    return agent_memory


def listed(client, **query) -> list[str]:
    response = client.get(MEMORY_LIST, query)
    assert response.status_code == 200, response.content.decode()[:2000]
    return [memory.id for memory in response.context["memories"]]


def test_the_browser_lists_newest_first_by_default(viewer_client, many):
    assert listed(viewer_client) == ["f-coupon", "f-age", "e-porto", "g-fr", "p-tea"]
    assert listed(viewer_client, order="oldest") == ["p-tea", "g-fr", "e-porto", "f-age", "f-coupon"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"memory_type": ["fact", "preference"]}, ["f-coupon", "f-age", "p-tea"]),
        ({"status": "invalid"}, ["f-age"]),
        ({"status": "valid", "user_id": "bob"}, ["f-coupon", "e-porto", "p-tea"]),
        ({"agent_id": "atlas"}, ["g-fr"]),
        ({"thread_id": "t1"}, ["e-porto"]),
        ({"unscoped": "thread_id", "user_id": "bob"}, ["f-coupon", "f-age", "p-tea"]),
        ({"unscoped": ["user_id"]}, ["g-fr"]),
        ({"metadata_filter": '{"tags": {"$array_contains": "trip"}}'}, ["e-porto"]),
        ({"q": "PORTO"}, ["e-porto"]),
        ({"q": "50%"}, ["f-coupon"]),  # wildcards match only themselves
        ({"q": "_now"}, ["f-coupon"]),
        ({"q": "%"}, ["f-coupon"]),
    ],
)
def test_the_browser_filters_with_the_engines_parameter_names(viewer_client, many, query, expected):
    assert listed(viewer_client, **query) == expected


def test_expired_memories_are_listed_on_their_own(viewer_client, agent_memory):
    from datetime import UTC, datetime, timedelta

    agent_memory.add_memory(
        "An old event.",
        memory_type="memory",
        memory_id="gone-soon",
        ttl_days=1,
        timestamp=(datetime.now(UTC) - timedelta(days=5)).isoformat(),
        ttl_anchor="timestamp",
        autonomous_linking=False,
    )

    assert listed(viewer_client) == []
    assert listed(viewer_client, status="expired") == ["gone-soon"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"metadata_filter": '{"tags": {"$bogus": 1}}'}, "$bogus"),
        ({"metadata_filter": "nope"}, "Not valid JSON"),
        ({"memory_type": "note"}, "Select a valid choice"),
        ({"status": "archived"}, "Select a valid choice"),
        ({"order": "random"}, "Select a valid choice"),
        ({"cursor": "WyJ4Il0"}, "cursor"),
        ({"thread_id": "t1", "unscoped": "thread_id"}, "not both"),
    ],
)
def test_filters_the_engine_refuses_are_shown_inline_with_a_400(viewer_client, many, query, message):
    response = viewer_client.get(MEMORY_LIST, query)

    assert response.status_code == 400
    assert message in response.content.decode()


def test_text_matches_are_highlighted_and_escaped(viewer_client, agent_memory):
    agent_memory.add_memory("<b>Bob</b> likes tea", memory_type="fact", autonomous_linking=False)

    html = viewer_client.get(MEMORY_LIST, {"q": "likes"}).content.decode()

    assert "&lt;b&gt;Bob&lt;/b&gt; <mark>likes</mark> tea" in html


def test_the_cursor_pages_through_everything_once(viewer_client, agent_memory):
    for n in range(7):
        agent_memory.add_memory(f"memory {n}", memory_type="fact", memory_id=f"m{n}", autonomous_linking=False)

    seen, query = [], {"limit": "3"}
    while True:
        response = viewer_client.get(MEMORY_LIST, query)
        seen += [m.id for m in response.context["memories"]]
        if not response.context["next_cursor"]:
            break
        query = {"limit": "3", "cursor": response.context["next_cursor"]}

    assert seen == [f"m{n}" for n in reversed(range(7))]


def test_an_empty_result_offers_to_drop_each_filter(viewer_client, many):
    html = viewer_client.get(MEMORY_LIST, {"user_id": "nobody", "memory_type": "fact"}).content.decode()

    assert "No memories match these filters" in html
    assert "Drop “User: nobody”" in html


def test_the_global_search_box_lands_on_the_search_workbench(viewer_client, many):
    html = viewer_client.get(reverse("memory:overview")).content.decode()

    assert f'action="{reverse("memory:search")}"' in html
    assert 'name="q"' in html


# --- a memory's page ---------------------------------------------------------------------------


def test_the_memory_page_shows_content_scope_metadata_links_and_history(viewer_client, world):
    html = viewer_client.get(reverse("memory:memory_detail", args=[world.fact_id])).content.decode()

    assert "Alice is vegetarian." in html
    assert reverse("memory:user_detail", args=["alice"]) in html
    assert "&quot;diet&quot;" in html
    assert "<code>supersedes</code>" in html  # its link, as seen from this memory
    assert reverse("memory:memory_detail", args=[world.old_fact_id]) in html
    assert "Alice used to eat fish." in html  # the other end, by its content


def test_an_invalid_memory_says_which_link_retired_it(viewer_client, world):
    html = viewer_client.get(reverse("memory:memory_detail", args=[world.old_fact_id])).content.decode()

    source = reverse("memory:memory_detail", args=[world.fact_id])
    assert f'superseded by <a href="{source}">“Alice is vegetarian.”</a>' in html
    assert "<code>is_superseded_by</code>" in html  # the same link, seen from this side


# --- create ------------------------------------------------------------------------------------


def test_a_curator_creates_a_memory_with_every_field(curator_client, agent_memory):
    agent_memory.create_thread(thread_id="t9", user_id="carol", agent_id="atlas")
    response = curator_client.post(
        CREATE,
        {
            "content": "Carol prefers window seats.",
            "memory_type": "preference",
            "user_id": "carol",
            "agent_id": "atlas",
            "thread_id": "t9",
            "metadata": '{"source": "manual"}',
            "status": "valid",
            "ttl_days": "30",
            "timestamp": "2026-03-04T05:06:07",
        },
    )

    assert response.status_code == 302
    entry = CurationEntry.objects.get()
    memory = agent_memory.get_memory(entry.object_id)
    assert (memory.record_type, memory.user_id, memory.agent_id, memory.thread_id) == (
        "preference",
        "carol",
        "atlas",
        "t9",
    )
    assert memory.metadata == {"source": "manual"}
    assert memory.expires_at is not None
    assert memory.timestamp.startswith("2026-03-04T05:06:07")
    assert response["Location"] == reverse("memory:memory_detail", args=[memory.id])


def test_the_create_form_takes_its_scope_from_the_query(curator_client):
    form = curator_client.get(CREATE, {"thread_id": "t1", "user_id": "u1"}).context["form"]

    assert (form.initial["thread_id"], form.initial["user_id"]) == ("t1", "u1")


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"metadata": "{not json"}, "metadata", "Not valid JSON"),
        ({"metadata": "[1, 2]"}, "metadata", "Must be a JSON object"),
        ({"memory_type": "note"}, "memory_type", "Select a valid choice"),
        ({"timestamp": "31/12/2026"}, "timestamp", "ISO-8601"),
        ({"ttl_days": "0"}, "ttl_days", "greater than or equal to 1"),
        ({"ttl_days": "-3"}, "ttl_days", "greater than or equal to 1"),
        ({"content": ""}, "content", "required"),
        ({"user_id": "x" * 600}, "user_id", "at most 512"),
        ({"metadata": '{"n": ' + "9" * 40 + "}"}, "metadata", "38 digits"),
    ],
)
def test_bad_input_is_a_form_error_and_stores_nothing(curator_client, agent_memory, changes, field, message):
    data = {"content": "x", "memory_type": "fact", "status": "valid", **changes}

    response = curator_client.post(CREATE, data)

    assert response.status_code == 400
    assert field in response.context["form"].errors
    assert message in response.content.decode()
    assert not agent_memory.list_memories()
    assert not CurationEntry.objects.exists()


# --- edit --------------------------------------------------------------------------------------


def edit(client, agent_memory, memory_id, **changes):
    memory = agent_memory.get_memory(memory_id)
    data = {
        "content": memory.content,
        "memory_type": memory.record_type,
        "user_id": memory.user_id or "",
        "agent_id": memory.agent_id or "",
        "metadata": "",
        "status": memory.status,
        "timestamp": memory.timestamp,
        "version": memory.version,
        **changes,
    }
    return client.post(reverse("memory:memory_edit", args=[memory_id]), data)


def test_a_curator_edits_type_scope_status_metadata_and_lifetime(curator_client, world, agent_memory):
    response = edit(
        curator_client,
        agent_memory,
        world.fact_id,
        content="Alice is vegan.",
        memory_type="preference",
        user_id="alice2",
        agent_id="",
        metadata='{"reviewed": true}',
        status="invalid",
        ttl_days="10",
    )

    assert response.status_code == 302
    memory = agent_memory.get_memory(world.fact_id)
    assert (memory.content, memory.record_type, memory.user_id, memory.agent_id) == (
        "Alice is vegan.",
        "preference",
        "alice2",
        None,
    )
    assert memory.metadata == {"reviewed": True}
    assert memory.status == "invalid"
    assert memory.expires_at is not None
    entry = CurationEntry.objects.get()
    assert "content" in entry.summary and "type" in entry.summary
    hits = agent_memory.search("vegan", user_id="alice2", record_types=["preference"])
    assert hits and hits[0].record.id == world.fact_id


def test_never_expires_removes_the_lifetime(curator_client, agent_memory):
    agent_memory.add_memory("Temporary.", memory_type="fact", memory_id="tmp", ttl_days=3, autonomous_linking=False)

    edit(curator_client, agent_memory, "tmp", never_expires="on")

    assert agent_memory.get_memory("tmp").expires_at is None


def test_an_edit_of_a_memory_changed_meanwhile_is_refused(curator_client, world, agent_memory):
    opened = agent_memory.get_memory(world.fact_id).version
    agent_memory.update_memory(world.fact_id, content="Changed elsewhere.")

    response = edit(curator_client, agent_memory, world.fact_id, content="Mine.", version=opened)

    assert response.status_code == 409
    assert "Changed elsewhere." in response.content.decode()
    assert agent_memory.get_memory(world.fact_id).content == "Changed elsewhere."


def test_an_edit_of_a_memory_deleted_meanwhile_is_a_404_with_its_history(curator_client, world, agent_memory):
    memory = agent_memory.get_memory(world.fact_id)
    agent_memory.delete_memory(world.fact_id)

    response = curator_client.post(
        reverse("memory:memory_edit", args=[world.fact_id]),
        {"content": "x", "memory_type": "fact", "status": "valid", "version": memory.version},
    )

    assert response.status_code == 404
    assert "Its history" in response.content.decode()


# --- delete and restore ------------------------------------------------------------------------


def test_deleting_a_memory_says_what_it_takes_then_it_is_gone_everywhere(curator_client, world, agent_memory):
    confirmation = curator_client.get(reverse("memory:memory_delete", args=[world.fact_id])).content.decode()
    assert "1 link" in confirmation
    assert world.old_fact_id[:8] in confirmation  # the memory it no longer retires

    confirm_delete(curator_client, reverse("memory:memory_delete", args=[world.fact_id]))

    page = curator_client.get(reverse("memory:memory_detail", args=[world.fact_id]))
    assert page.status_code == 404
    assert f"object_id={world.fact_id}" in page.content.decode()
    assert world.fact_id not in [hit.record.id for hit in agent_memory.search("vegetarian", user_id="alice")]
    assert world.fact_id not in [m.id for m in agent_memory.list_memories()]
    assert agent_memory.get_memory(world.old_fact_id).status == "valid"


def test_a_deleted_memory_is_restored_with_its_id_and_links(curator_client, world, agent_memory):
    before = agent_memory.get_memory(world.fact_id)
    confirm_delete(curator_client, reverse("memory:memory_delete", args=[world.fact_id]))
    entry = CurationEntry.objects.get(action="delete")

    response = curator_client.post(reverse("memory:history_revert", args=[entry.pk]))

    assert response.status_code == 302
    restored = agent_memory.get_memory(world.fact_id)
    assert (restored.content, restored.metadata, restored.created_at) == (
        before.content,
        before.metadata,
        before.created_at,
    )
    assert [link.id for link in agent_memory.list_relations(record_id=world.fact_id)] == [world.link_id]
    assert agent_memory.get_memory(world.old_fact_id).status == "invalid"
    assert agent_memory.search("vegetarian", user_id="alice")[0].record.id == world.fact_id
    restore = CurationEntry.objects.get(action="restore")
    assert restore.reverts == entry


def test_saving_a_form_keeps_a_stored_time_finer_than_the_form_shows(curator_client, agent_memory):
    agent_memory.add_memory(
        "Precise.",
        memory_type="fact",
        memory_id="fine",
        timestamp="2026-01-02T03:04:05.678901+00:00",
        autonomous_linking=False,
    )
    shown = curator_client.get(reverse("memory:memory_edit", args=["fine"])).context["form"]["timestamp"].value()

    edit(curator_client, agent_memory, "fine", content="Precise, edited.", timestamp=shown)

    assert agent_memory.get_memory("fine").timestamp == "2026-01-02T03:04:05.678901+00:00"


def test_saving_a_memory_unchanged_writes_nothing_and_says_so(curator_client, world, agent_memory):
    memory = agent_memory.get_memory(world.fact_id)

    response = edit(curator_client, agent_memory, world.fact_id, metadata='{"source": "chat", "tags": ["diet"]}')

    assert response.status_code == 302
    assert agent_memory.get_memory(world.fact_id).version == memory.version
    assert not CurationEntry.objects.exists()
    assert "Nothing changed" in curator_client.get(response["Location"]).content.decode()


@pytest.mark.parametrize("url", [MEMORY_LIST, reverse("memory:thread_list"), CREATE])
def test_an_integer_too_long_for_python_is_a_json_error_not_a_500(curator_client, url):
    hostile = '{"a": ' + "1" * 5000 + "}"
    field = "metadata" if url == CREATE else "metadata_filter"

    response = (
        curator_client.post(url, {field: hostile}) if url == CREATE else curator_client.get(url, {field: hostile})
    )

    assert response.status_code == 400
    assert "Not valid JSON" in response.content.decode()


def test_filter_errors_reach_the_page_with_htmx_too(viewer_client, many):
    response = viewer_client.get(MEMORY_LIST, {"metadata_filter": '{"a": {"$bogus": 1}}'}, HTTP_HX_REQUEST="true")

    html = response.content.decode()
    assert response.status_code == 400
    assert 'id="filter-errors" role="alert" hx-swap-oob="true"' in html
    assert "$bogus" in html


def test_a_history_restore_gets_the_whole_page_not_a_fragment(viewer_client, many):
    response = viewer_client.get(MEMORY_LIST, HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true")

    assert "<html" in response.content.decode()


def test_a_new_memory_needs_an_existing_thread_and_takes_its_owners(curator_client, agent_memory):
    agent_memory.create_thread(thread_id="t1", user_id="ana", agent_id="atlas")

    refused = curator_client.post(
        CREATE, {"content": "x", "memory_type": "fact", "status": "valid", "thread_id": "nope"}
    )
    curator_client.post(
        CREATE, {"content": "Ana likes figs.", "memory_type": "fact", "status": "valid", "thread_id": "t1"}
    )

    assert refused.status_code == 400
    assert "names no thread" in refused.context["form"].errors["thread_id"][0]
    [memory] = agent_memory.list_memories()
    assert (memory.thread_id, memory.user_id, memory.agent_id) == ("t1", "ana", "atlas")


def test_a_memory_of_blank_content_is_refused(curator_client, agent_memory):
    response = curator_client.post(CREATE, {"content": "   ", "memory_type": "fact", "status": "valid"})

    assert response.status_code == 400
    assert "Write what the memory says" in response.content.decode()


def test_a_saved_edit_says_it_was_saved(curator_client, world, agent_memory):
    response = edit(curator_client, agent_memory, world.fact_id, content="Alice is vegan.")

    assert "Saved the memory." in curator_client.get(response["Location"]).content.decode()


@pytest.mark.parametrize(
    ("listing", "edit_route"),
    [
        ("memory:memory_list", "memory:memory_edit"),
        ("memory:thread_list", "memory:thread_edit"),
        ("memory:user_list", "memory:user_edit"),
        ("memory:agent_list", "memory:agent_edit"),
    ],
)
def test_listing_rows_name_their_edit_page_for_curators_only(
    client, curator, viewer, agent_memory, listing, edit_route
):
    """The `e` shortcut (static/js/shortcuts.js) opens a row's data-edit-href; a viewer's page has none,
    and its body is marked read-only so that the key says why nothing opens."""
    world = build_world(agent_memory)
    ids = {"memory:memory_edit": world.fact_id, "memory:thread_edit": world.thread_id}
    owner = {"memory:user_edit": "alice", "memory:agent_edit": "atlas"}
    record_id = ids.get(edit_route) or owner[edit_route]

    client.force_login(curator)
    curated = client.get(reverse(listing)).content.decode()
    client.force_login(viewer)
    viewed = client.get(reverse(listing)).content.decode()

    assert f'data-edit-href="{reverse(edit_route, args=[record_id])}"' in curated
    assert "data-edit-href" not in viewed
    assert "data-read-only" in viewed and "data-read-only" not in curated


@pytest.mark.parametrize("bad", ["bob\nsmith", "bob\r\nsmith", "bob\tsmith", "bob\x85smith"])
def test_an_id_with_a_line_break_or_a_control_character_is_a_form_error_on_its_field(curator_client, agent_memory, bad):
    """The engine's id rule (issue 25): such an id broke every bulk action whose selection held it."""
    before = agent_memory.stats()

    data = {"content": "Bob likes jazz.", "memory_type": "fact", "status": "valid", "user_id": bad}
    response = curator_client.post(CREATE, data)

    assert response.status_code == 400
    assert "must not contain control characters or line breaks" in response.context["form"].errors["user_id"][0]
    assert agent_memory.stats() == before


def test_the_edit_form_of_a_superseded_memory_says_which_link_makes_it_invalid(curator_client, world):
    page = curator_client.get(reverse("memory:memory_edit", args=[world.old_fact_id])).content.decode()

    assert "Its status comes from a link, not from this form" in page
    assert "“Alice is vegetarian.”</a> <code>supersedes</code> it" in page
    assert reverse("memory:link_edit", args=[world.link_id]) + "?next=" in page
    assert reverse("memory:link_delete", args=[world.link_id]) + "?next=" in page


def test_setting_a_superseded_memory_valid_is_refused_with_what_would_work(curator_client, world, agent_memory):
    before = agent_memory.get_memory(world.old_fact_id)

    response = edit(curator_client, agent_memory, world.old_fact_id, status="valid")

    assert response.status_code == 400
    errors = response.context["form"].errors["status"]
    assert errors == [
        "status stays invalid while a link retires this memory: “Alice is vegetarian.” supersedes it. Delete that "
        "link, or change its type to one that does not retire (supports, contradicts), and the memory is valid again."
    ]
    after = agent_memory.get_memory(world.old_fact_id)
    assert (after.version, after.status) == (before.version, before.status)
    assert not CurationEntry.objects.exists()


def test_a_memory_with_an_expiry_offers_to_remove_it_and_one_without_says_it_never_expires(curator_client, world):
    page = curator_client.get(reverse("memory:memory_edit", args=[world.fact_id])).content.decode()

    assert "It never expires now; give a lifetime to make it expire." in page
    assert 'name="never_expires"' not in page
