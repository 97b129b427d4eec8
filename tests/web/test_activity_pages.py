"""The agent activity pages: the timeline (/activity/) with its filters, counts, chart and paging;
one recorded call (/activity/<id>/) with what became of each record it returned; and Replay
(/activity/<id>/replay/), the same call made today beside it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.urls import reverse
from django.utils.html import escape

from memory.curation import Actor, Curation
from memory.engine import AgentMemory, acting_as, caused_by, unrecorded

from .world import World, build_world

ACTIVITY = reverse("memory:activity")


def event_url(event_id: str) -> str:
    return reverse("memory:activity_event", args=[event_id])


def replay_url(event_id: str) -> str:
    return reverse("memory:activity_replay", args=[event_id])


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


@pytest.fixture
def curation(agent_memory, curator) -> Curation:
    return Curation(agent_memory, Actor(curator))


def flushed(agent_memory: AgentMemory) -> None:
    assert agent_memory.activity.flush()


def last_event(agent_memory: AgentMemory, **filters):
    flushed(agent_memory)
    [event] = agent_memory.list_activity(limit=1, **filters)
    return event


@pytest.fixture
def calls(agent_memory, world) -> dict[str, str]:
    """Calls by two agents and a person, on two users' scopes: their event ids by name."""
    agent_memory.add_memory("Bob drinks green tea.", memory_type="fact", memory_id="fact-bob", user_id="bob")
    thread = agent_memory.get_thread(world.thread_id)
    flushed(agent_memory)
    agent_memory.purge_activity(before=datetime.now(UTC).isoformat())  # the world's writes: only these calls
    with acting_as("support-bot"):
        agent_memory.search("vegetarian food", user_id="alice")
    with acting_as("support-bot", on_behalf_of="dana"):
        agent_memory.search("green tea", user_id="bob")
    with acting_as("travel-planner"):
        thread.get_context_card()
        thread.search("quiet hotel")
    with acting_as("vera", caller_kind="person"):
        agent_memory.search("what the person searched", user_id="alice")
    flushed(agent_memory)
    ids = {}
    for event in agent_memory.list_activity(kind=["search", "card"], limit=None):
        ids[event.query or event.kind] = event.id
    return ids


def listed(response) -> list[str]:
    return [event.id for event in response.context["timeline"].events]


# --- the timeline ---------------------------------------------------------------------------------


def test_the_timeline_lists_agent_calls_newest_first_and_hides_people_by_default(viewer_client, calls):
    response = viewer_client.get(ACTIVITY, {"kind": "search"})

    assert response.status_code == 200
    assert listed(response) == [calls["quiet hotel"], calls["green tea"], calls["vegetarian food"]]
    page = response.content.decode()
    assert "what the person searched" not in page
    assert "support-bot" in page and "for dana" in page


@pytest.mark.parametrize(
    ("who", "expected"),
    [("people", ["what the person searched"]), ("all", ["what the person searched", "quiet hotel", "green tea"])],
)
def test_who_asks_for_peoples_calls(viewer_client, calls, who, expected):
    response = viewer_client.get(ACTIVITY, {"kind": "search", "who": who})

    assert listed(response)[: len(expected)] == [calls[name] for name in expected]
    if who == "people":
        assert len(listed(response)) == 1


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"caller": "travel-planner"}, ["quiet hotel", "card"]),
        ({"user_id": "bob"}, ["green tea"]),
        ({"agent_id": "atlas", "kind": "search"}, ["quiet hotel"]),
        ({"thread_id": "trip-42"}, ["quiet hotel", "card"]),
        ({"kind": "card"}, ["card"]),
        ({"q": "VEGETARIAN"}, ["vegetarian food"]),
        ({"q": "tea", "caller": "support-bot"}, ["green tea"]),
    ],
)
def test_each_filter_narrows_the_list(viewer_client, calls, filters, expected):
    response = viewer_client.get(ACTIVITY, filters)

    assert response.status_code == 200
    assert listed(response) == [calls[name] for name in expected]
    assert response.context["timeline"].counts.total == len(expected)


def test_since_and_until_take_dates_and_times(viewer_client, calls, agent_memory):
    event = agent_memory.get_activity(calls["green tea"])
    day = event.time[:10]

    same_day = viewer_client.get(ACTIVITY, {"since": day, "until": day, "kind": "search"})
    from_the_event_on = viewer_client.get(ACTIVITY, {"since": event.time[:26], "kind": "search"})
    before_the_day = viewer_client.get(ACTIVITY, {"until": f"{day}T00:00", "kind": "search"})

    assert calls["green tea"] in listed(same_day)  # a date alone as `until` takes in that day
    assert listed(from_the_event_on) == [calls["quiet hotel"], calls["green tea"]]
    assert listed(before_the_day) == []


def test_counts_per_caller_and_kind_follow_the_filters_and_filter_when_clicked(viewer_client, calls):
    response = viewer_client.get(ACTIVITY, {"who": "all", "kind": "search"})

    counts = response.context["timeline"].counts
    assert counts.by_kind == {"search": 4}
    assert [(caller, n) for caller, _, n in counts.by_caller] == [
        ("support-bot", 2),
        ("travel-planner", 1),
        ("vera", 1),
    ]
    page = response.content.decode()
    assert "?who=all&amp;kind=search&amp;caller=travel-planner" in page  # a caller's count filters by it
    assert "?who=all&amp;kind=search" in page and "(person)" in page


def test_the_chart_draws_calls_per_day_by_caller_with_its_numbers_as_text(viewer_client, calls, agent_memory):
    response = viewer_client.get(ACTIVITY, {"caller": "support-bot"})

    chart = response.context["timeline"].chart
    day = agent_memory.get_activity(calls["green tea"]).time[:10]
    assert [(str(bar.day), bar.total, bar.breakdown) for bar in chart.bars] == [(day, 2, "support-bot 2")]
    page = response.content.decode()
    assert '<svg class="oam-chart"' in page and '<title id="calls-chart-title">' in page
    assert "support-bot 2</td>" in page  # the numbers, readable without the colours


def test_the_chart_draws_the_busiest_callers_and_the_rest_together(viewer_client, agent_memory, world):
    for n in range(8):
        with acting_as(f"bot-{n}"):
            for _ in range(n + 1):
                agent_memory.search("vegetarian", user_id="alice")
    flushed(agent_memory)

    chart = viewer_client.get(ACTIVITY, {"kind": "search"}).context["timeline"].chart

    assert [name for _, name in chart.callers] == ["bot-7", "bot-6", "bot-5", "bot-4", "bot-3", "other callers (3)"]
    [bar] = chart.bars
    assert bar.total == 36 and bar.segments[-1].caller == "other callers" and bar.segments[-1].count == 6


def test_paging_follows_the_cursor_to_every_call_once(viewer_client, calls):
    seen, query = [], {"limit": "2"}
    for _ in range(10):
        response = viewer_client.get(ACTIVITY, query)
        seen += listed(response)
        cursor = response.context["timeline"].next_cursor
        if cursor is None:
            break
        assert f"cursor={cursor}" in response.content.decode()  # the pager's link
        query = {"limit": "2", "cursor": cursor}

    everything = viewer_client.get(ACTIVITY, {"limit": "200"})
    assert len(seen) == len(set(seen)) == len(listed(everything)) > 2


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"kind": "reading"}, "kind"),
        ({"who": "robots"}, "who"),
        ({"since": "yesterday"}, "since"),
        ({"until": "2026-13-45"}, "until"),
        ({"since": "2026-11-20", "until": "2026-11-19"}, "until"),
        ({"q": "x" * 501}, "q"),
        ({"caller": "c" * 600}, "caller"),
        ({"thread_id": "t" * 600}, "thread_id"),
        ({"cursor": "forged-cursor"}, "cursor"),
        ({"limit": "0"}, "limit"),
    ],
)
def test_bad_filters_are_form_errors_not_server_errors(viewer_client, calls, query, field):
    response = viewer_client.get(ACTIVITY, query)

    assert response.status_code == 400
    assert field in response.context["form"].errors
    assert 'class="alert alert-danger' in response.content.decode() or "invalid-feedback" in response.content.decode()


def test_a_forged_cursor_says_to_start_again(viewer_client, calls):
    page = viewer_client.get(ACTIVITY, {"cursor": "eyJub3QiOiAiYSBjdXJzb3IifQ"}).content.decode()

    assert "This page link is not one the timeline made" in page


def test_an_empty_log_says_what_the_page_is_and_how_agents_get_recorded(viewer_client, agent_memory):
    page = viewer_client.get(ACTIVITY).content.decode()

    assert "No agent activity recorded yet" in page
    assert 'connect(url, caller="support-bot")' in page.replace("&quot;", '"')


def test_viewers_read_and_anonymous_visitors_are_sent_to_log_in(client, viewer, calls):
    event_id = calls["green tea"]
    for url in (ACTIVITY, event_url(event_id), replay_url(event_id)):
        client.force_login(viewer)
        assert client.get(url).status_code == 200, url
        client.logout()
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), url


def test_the_navigation_links_to_the_activity(viewer_client, calls):
    page = viewer_client.get(ACTIVITY).content.decode()

    assert f'aria-current="page" href="{ACTIVITY}">Activity</a>' in page


# --- one call -------------------------------------------------------------------------------------


@pytest.fixture
def tea(agent_memory) -> list[str]:
    """Three of alice's memories about tea, the first the best match for "green tea"."""
    return [
        agent_memory.add_memory(text, memory_type="fact", memory_id=memory_id, user_id="alice")
        for memory_id, text in (
            ("tea-green", "Alice drinks green tea with green leaves every morning."),
            ("tea-black", "Alice drinks black tea in the afternoon."),
            ("tea-shop", "The tea shop near the hotel sells tea."),
        )
    ]


def search_tea(agent_memory: AgentMemory, **parameters):
    with acting_as("support-bot"):
        found = agent_memory.search("green tea", user_id="alice", strategy="keyword", **parameters)
    return last_event(agent_memory, caller="support-bot"), found


def test_a_call_shows_its_results_in_recorded_order_with_scores_after_edits_and_deletes(
    viewer_client, agent_memory, curation, tea
):
    event, found = search_tea(agent_memory, max_results=3)
    recorded = [result.record_id for result in event.results]
    assert recorded == [result.record.id for result in found]
    edited, deleted, retired = recorded
    curation.update_memory(edited, version=1, content="Alice drinks green tea.")
    entry = curation.delete_memory(deleted)
    agent_memory.add_memory("Alice gave up tea.", memory_type="fact", memory_id="no-tea", user_id="alice")
    agent_memory.link_records("no-tea", "fact", retired, "fact", "supersedes")

    response = viewer_client.get(event_url(event.id))

    assert response.status_code == 200
    rows = response.context["results"]
    assert [row.result.record_id for row in rows] == recorded
    assert [row.result.rank for row in rows] == [1, 2, 3]
    assert rows[0].now.edited and not rows[0].now.gone
    assert rows[1].now.gone and rows[1].now.deleted_in == entry
    assert rows[2].now.invalid and rows[2].now.retired_by[0].link.source_record_id == "no-tea"
    page = response.content.decode()
    assert (
        page.index(f"/memories/{edited}/") < page.index(f"/memories/{deleted}/") < page.index(f"/memories/{retired}/")
    )
    assert "version 1 → 2" in page
    assert reverse("memory:history_entry", args=[entry.pk]) in page and "restore it from the history" in page
    assert "superseded by" in page and "Alice gave up tea." in page
    bm25 = f"{event.results[0].scores['keyword_score']:.3f}"
    assert (
        f"<abbr title=\"The keyword ranking's score: higher matches the query's words better.\">BM25</abbr> {bm25}"
        in (page.replace("&#x27;", "'"))
    )


def test_a_call_shows_its_parameters_text_and_tokens(viewer_client, agent_memory, tea):
    event, _ = search_tea(agent_memory, max_results=2)

    page = viewer_client.get(event_url(event.id)).content.decode()

    value = '</dt><dd><code class="oam-value oam-param" tabindex="0">'
    assert f"<code>max_results</code>{value}2</code>" in page
    assert f"<code>strategy</code>{value}&quot;keyword&quot;</code>" in page
    assert f"{event.tokens} tokens, {event.content_chars} characters" in page
    assert "Alice drinks green tea with green leaves every morning." in page
    assert "The log kept the first" not in page


def test_a_call_cut_at_the_cap_says_so(viewer_client, agent_memory, tea, monkeypatch):
    from dataclasses import replace

    monkeypatch.setattr(agent_memory.activity, "config", replace(agent_memory.activity.config, content_chars=40))
    event, _ = search_tea(agent_memory)

    page = viewer_client.get(event_url(event.id)).content.decode()

    assert event.truncated
    assert f"The log kept the first 40 of its {event.content_chars} characters" in page


def test_a_write_shows_its_operation_records_and_cause(viewer_client, agent_memory, world):
    with acting_as("extractor"), caused_by({"what": "extraction", "message_ids": [world.message_ids[0]]}):
        memory_id = agent_memory.add_memory(
            "Alice likes quiet hotels.", memory_type="preference", user_id="alice", thread_id=world.thread_id
        )
    event = last_event(agent_memory, caller="extractor")

    page = viewer_client.get(event_url(event.id)).content.decode()

    assert "Add: 1 record changed" in page
    assert f"/memories/{memory_id}/" in page and "Alice likes quiet hotels." in page
    assert "extraction" in page
    assert reverse("memory:message_detail", args=[world.thread_id, world.message_ids[0]]) in page
    assert "Replay now" not in page  # writes are not replayed


def test_a_call_no_longer_in_the_log_is_a_404(viewer_client, agent_memory):
    response = viewer_client.get(event_url("no-such-event"))

    assert response.status_code == 404
    assert "No recorded call" in response.content.decode()


def test_user_content_is_escaped_everywhere(viewer_client, agent_memory, world):
    hostile = "<script>alert('x')</script>"
    with acting_as("<b>bot</b>", on_behalf_of="<i>dana</i>"):
        agent_memory.search(hostile, user_id="alice")
    event = last_event(agent_memory, kind="search")

    for url in (ACTIVITY, event_url(event.id), replay_url(event.id)):
        page = viewer_client.get(url).content.decode()
        assert "<script>alert" not in page and "<b>bot</b>" not in page and "<i>dana</i>" not in page, url
        assert "&lt;script&gt;alert(" in page and "&lt;b&gt;bot&lt;/b&gt;" in page, url


# --- Replay ---------------------------------------------------------------------------------------


def test_replay_shows_what_entered_left_and_moved_and_why(viewer_client, agent_memory, tea):
    event, found = search_tea(agent_memory, max_results=2)
    then = [result.record.id for result in found]
    assert then[0] == "tea-green"
    agent_memory.add_memory(
        "Green tea, green tea, green tea.", memory_type="fact", memory_id="tea-new", user_id="alice"
    )

    response = viewer_client.get(replay_url(event.id))

    replay = response.context["replay"]
    assert not replay.refusal
    [entered] = replay.entered
    assert (
        entered.now.record_id == "tea-new"
        and entered.rank_now == 1
        and [reason.text for reason in entered.reasons] == ["new since: created after the call"]
    )
    [moved] = replay.moved
    assert (moved.now.record_id, moved.rank_then, moved.rank_now, moved.places_down) == ("tea-green", 1, 2, 1)
    [left] = replay.left
    assert left.now.record_id == then[1]
    assert left.reasons[0].text == "outranked by what entered"
    assert [now.record_id for now in left.reasons[0].records] == ["tea-new"]
    page = response.content.decode()
    assert "1 entered, 1 left, 1 moved" in page
    assert "▼ down 1" in page and "new since: created after the call" in page


def test_replay_says_why_a_result_left(viewer_client, agent_memory, curation, tea):
    event, found = search_tea(agent_memory, max_results=3, include_invalid_results=False)
    first, second, third = (result.record.id for result in found)
    entry = curation.delete_memory(first)
    agent_memory.add_memory("Alice gave up tea.", memory_type="fact", memory_id="no-tea", user_id="alice")
    agent_memory.link_records("no-tea", "fact", third, "fact", "supersedes")
    curation.update_memory(second, version=1, content="Alice drinks green tea and black tea.")

    replay = viewer_client.get(replay_url(event.id)).context["replay"]

    reasons = {row.now.record_id: row for row in replay.rows}
    assert reasons[first].change == "left" and reasons[first].reasons[0].text == "deleted since"
    assert reasons[first].reasons[0].entry == entry
    assert reasons[third].change == "left" and reasons[third].reasons[0].text == "now invalid: superseded by"
    assert [now.record_id for now in reasons[third].reasons[0].records] == ["no-tea"]
    assert reasons[second].change == "moved" and (reasons[second].rank_then, reasons[second].rank_now) == (2, 1)
    assert reasons[second].reasons[0].text == "edited since (version 1 → 2)"
    assert any(then != now for _, _, then, now in reasons[second].score_changes)


def test_replay_of_an_unchanged_store_says_nothing_changed(viewer_client, agent_memory, tea):
    event, _ = search_tea(agent_memory, max_results=3)

    response = viewer_client.get(replay_url(event.id))

    assert response.context["replay"].unchanged
    assert "The same results in the same order, and the same text." in response.content.decode()


def test_replay_is_not_recorded(viewer_client, agent_memory, tea):
    event, _ = search_tea(agent_memory)
    before = agent_memory.activity_counts().total

    viewer_client.get(replay_url(event.id))
    flushed(agent_memory)

    assert agent_memory.activity_counts().total == before


def test_replay_of_a_card_and_of_a_thread_search_runs_on_the_thread(viewer_client, agent_memory, world):
    thread = agent_memory.get_thread(world.thread_id)
    with acting_as("travel-planner"):
        thread.get_context_card(max_recent_messages=2)
    card = last_event(agent_memory, kind="card")
    with acting_as("travel-planner"):
        thread.search("vegetarian")
    search = last_event(agent_memory, kind="search")

    for event in (card, search):
        response = viewer_client.get(replay_url(event.id))
        assert response.status_code == 200
        assert not response.context["replay"].refusal and response.context["replay"].unchanged, event.call


def test_replay_of_a_call_on_a_deleted_thread_says_it_cannot_be_made(viewer_client, agent_memory, curation, world):
    with acting_as("travel-planner"):
        agent_memory.get_thread(world.thread_id).search("vegetarian")
    event = last_event(agent_memory, kind="search")
    curation.delete_thread(world.thread_id)

    response = viewer_client.get(replay_url(event.id))

    assert response.status_code == 200
    assert f"The thread {world.thread_id} was deleted since" in response.content.decode()


def test_replay_of_parameters_the_engine_refuses_today_says_so(viewer_client, agent_memory, tea, monkeypatch):
    event, _ = search_tea(agent_memory)
    forged = type(event)(**{**event.__dict__, "request": {**event.request, "max_results": -1}})
    monkeypatch.setattr(AgentMemory, "get_activity", lambda self, event_id: forged)

    response = viewer_client.get(replay_url(event.id))

    assert response.status_code == 200
    assert "The engine refuses these parameters today: max_results" in response.content.decode()


def test_replay_with_htmx_answers_only_its_section(viewer_client, agent_memory, tea):
    event, _ = search_tea(agent_memory)

    page = viewer_client.get(replay_url(event.id), headers={"HX-Request": "true"}).content.decode()

    assert page.lstrip().startswith('<section id="replay"') and "<html" not in page
    assert "Replay again" in page


def test_a_persons_write_links_to_its_curation_history_change(viewer_client, agent_memory, curation, world):
    entry = curation.update_memory(world.fact_id, version=1, content="Alice is vegan.")
    event = last_event(agent_memory, kind="write", record_id=world.fact_id)
    assert event.history_ref

    page = viewer_client.get(event_url(event.id)).content.decode()

    assert (
        f'<a href="{reverse("memory:history_entry", args=[entry.pk])}">#{entry.pk} {escape(entry.summary)}</a>' in page
    )


def test_the_timeline_filters_by_record_and_the_memory_page_links_there(viewer_client, agent_memory):
    with unrecorded():
        tea = agent_memory.add_memory("The user likes green tea", user_id="u1")
        agent_memory.add_memory("The user likes black coffee", user_id="u1")
    with acting_as("support-bot"):
        agent_memory.search("green tea", user_id="u1", max_results=1)
        agent_memory.search("black coffee", user_id="u1", max_results=1)
    agent_memory.activity.flush()
    page = viewer_client.get("/activity/", {"record_id": tea})
    assert page.status_code == 200
    assert [event.query for event in page.context["timeline"].events] == ["green tea"]
    memory_page = viewer_client.get(f"/memories/{tea}/").content.decode()
    assert f"/activity/?record_id={tea}" in memory_page
