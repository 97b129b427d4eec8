"""Rendering search results and their linked-memory trees (spec §6.7, DECISIONS D6)."""

from __future__ import annotations

import pytest

from memory.engine import NOT_SET
from memory.engine.formatting import SearchResultFormatConfig, format_result
from memory.engine.search import SearchResult
from memory.engine.types import (
    MemoryRecord,
    MessageRecord,
    RecordRelation,
    RecordStatus,
    UserProfileRecord,
)

VALID, INVALID = RecordStatus.VALID, RecordStatus.INVALID
WHEN = "2024-05-01T12:00:00+00:00"


def memory_record(record_id: str, content: str, status=VALID, **fields) -> MemoryRecord:
    fields.setdefault("record_type", "preference")
    fields.setdefault("timestamp", WHEN)
    return MemoryRecord(id=record_id, content=content, status=status, **fields)


def result(record, distance: float = 0.25, links=(), include_invalid_results: bool = True) -> SearchResult:
    found = SearchResult(distance=distance, record=record, include_invalid_results=include_invalid_results)
    found.linked_results = list(links)
    return found


def link(parent, relation_type: str, child, opposite: str, *, parent_is_source: bool = True):
    """A (relation, child result) pair; the relation is stored parent→child or child→parent."""
    source, target = (parent, child.record) if parent_is_source else (child.record, parent)
    relation = RecordRelation(
        id=f"rel-{source.id}-{target.id}",
        source_record_id=source.id,
        source_record_type=source.record_type,
        target_record_id=target.id,
        target_record_type=target.record_type,
        relation_type=relation_type,
        opposite_relation_type=opposite,
    )
    return relation, child


def pizza_tree(include_invalid_results: bool) -> SearchResult:
    """C-G11: Neapolitan refines sourdough (invalid), which supersedes thin crust (invalid)."""
    neapolitan = memory_record("neapolitan", "Prefers Neapolitan sourdough.")
    sourdough = memory_record("sourdough", "Prefers sourdough.", INVALID)
    thin = memory_record("thin", "Prefers thin crust.", INVALID)
    thin_result = result(thin, float("nan"))
    sourdough_result = result(sourdough, float("nan"), [link(sourdough, "supersedes", thin_result, "is_superseded_by")])
    return result(
        neapolitan,
        links=[link(neapolitan, "refines", sourdough_result, "is_refined_by")],
        include_invalid_results=include_invalid_results,
    )


def flat(record_id="m", content="x", status="valid", record_type="preference") -> str:
    return (
        f'<record type="{record_type}"><timestamp>{WHEN}</timestamp><status>{status}</status>'
        f"<content>{content}</content></record>"
    )


# --- the config ---------------------------------------------------------------------------


def test_every_config_option_starts_unset():
    config = SearchResultFormatConfig()
    for name in (
        "include_invalid_results",
        "show_thread_id",
        "show_distance",
        "show_timestamp",
        "show_role",
        "show_user_id",
        "show_agent_id",
        "show_status",
        "show_metadata",
    ):
        assert getattr(config, name) is NOT_SET


@pytest.mark.parametrize("value", [1, 0, "yes", None])
def test_a_config_option_must_be_a_bool(value):
    with pytest.raises(ValueError, match="show_status"):
        SearchResultFormatConfig(show_status=value)


def test_format_result_rejects_a_config_of_another_type():
    with pytest.raises(ValueError, match="SearchResultFormatConfig"):
        format_result(result(memory_record("m", "x")), {"show_status": False})


# --- a single record ----------------------------------------------------------------------


def test_a_result_without_links_renders_timestamp_status_and_content():
    assert format_result(result(memory_record("m", "Likes tea", record_type="fact"))) == flat(
        content="Likes tea", record_type="fact"
    )


def test_a_result_without_links_renders_like_its_formatted_content():
    found = result(memory_record("m", "Likes <b>tea</b> & cake"))
    assert format_result(found) == found.formatted_content


def test_a_message_shows_its_role_by_default():
    message = MessageRecord(id="m", record_type="message", content="Hi", role="user", timestamp=WHEN)
    assert format_result(result(message)) == (
        f'<record type="message"><timestamp>{WHEN}</timestamp><role>user</role>'
        "<status>valid</status><content>Hi</content></record>"
    )


def test_show_role_false_hides_a_messages_role():
    message = MessageRecord(id="m", record_type="message", content="Hi", role="user", timestamp=WHEN)
    assert "<role>" not in format_result(result(message), SearchResultFormatConfig(show_role=False))


def test_show_timestamp_false_hides_the_timestamp():
    text = format_result(result(memory_record("m", "x")), SearchResultFormatConfig(show_timestamp=False))
    assert text == '<record type="preference"><status>valid</status><content>x</content></record>'


def test_a_record_without_timestamp_renders_no_timestamp_element():
    assert "<timestamp>" not in format_result(result(memory_record("m", "x", timestamp=None)))


def test_show_status_false_hides_the_status():
    text = format_result(result(memory_record("m", "x")), SearchResultFormatConfig(show_status=False))
    assert text == f'<record type="preference"><timestamp>{WHEN}</timestamp><content>x</content></record>'


def test_the_compact_config_of_the_graph_guide_keeps_only_content():
    config = SearchResultFormatConfig(
        include_invalid_results=True, show_timestamp=False, show_role=False, show_status=False
    )
    assert (
        format_result(result(memory_record("m", "x")), config)
        == '<record type="preference"><content>x</content></record>'
    )


def test_ids_are_hidden_by_default():
    text = format_result(result(memory_record("m", "x", thread_id="t1", user_id="u1", agent_id="a1")))
    assert "t1" not in text and "u1" not in text and "a1" not in text


def test_show_thread_user_and_agent_ids_render_each_id():
    record = memory_record("m", "x", thread_id="t1", user_id="u1", agent_id="a1")
    config = SearchResultFormatConfig(show_thread_id=True, show_user_id=True, show_agent_id=True)
    assert format_result(result(record), config) == (
        f'<record type="preference"><timestamp>{WHEN}</timestamp><thread_id>t1</thread_id>'
        "<user_id>u1</user_id><agent_id>a1</agent_id><status>valid</status><content>x</content></record>"
    )


def test_each_id_option_shows_only_its_own_id():
    record = memory_record("m", "x", thread_id="t1", user_id="u1", agent_id="a1")
    text = format_result(result(record), SearchResultFormatConfig(show_user_id=True))
    assert "<user_id>u1</user_id>" in text
    assert "<thread_id>" not in text and "<agent_id>" not in text


def test_an_unscoped_dimension_renders_no_id_element():
    record = memory_record("m", "x", thread_id=None, user_id="u1")
    config = SearchResultFormatConfig(show_thread_id=True, show_user_id=True, show_agent_id=True)
    text = format_result(result(record), config)
    assert "<user_id>u1</user_id>" in text
    assert "<thread_id>" not in text and "<agent_id>" not in text


def test_a_profile_record_has_no_ids_to_show():
    profile = UserProfileRecord(id="u1", content="Prefers short answers.")
    config = SearchResultFormatConfig(show_thread_id=True, show_user_id=True, show_agent_id=True)
    assert "_id>" not in format_result(result(profile), config)


def test_the_distance_is_hidden_by_default():
    assert "<distance>" not in format_result(result(memory_record("m", "x"), 0.123456))


def test_show_distance_renders_it_with_four_decimals():
    text = format_result(result(memory_record("m", "x"), 0.123456), SearchResultFormatConfig(show_distance=True))
    assert "<distance>0.1235</distance>" in text


def test_show_distance_omits_an_unknown_distance():
    text = format_result(result(memory_record("m", "x"), float("nan")), SearchResultFormatConfig(show_distance=True))
    assert "<distance>" not in text


def test_metadata_is_hidden_by_default():
    assert "<metadata>" not in format_result(result(memory_record("m", "x", metadata={"source": "chat"})))


def test_show_metadata_renders_compact_escaped_json():
    record = memory_record("m", "x", metadata={"source": "<chat>", "tags": ["a & b"], "n": 1})
    text = format_result(result(record), SearchResultFormatConfig(show_metadata=True))
    assert '<metadata>{"source":"&lt;chat&gt;","tags":["a &amp; b"],"n":1}</metadata>' in text


def test_show_metadata_renders_nothing_for_a_record_without_metadata():
    text = format_result(result(memory_record("m", "x", metadata=None)), SearchResultFormatConfig(show_metadata=True))
    assert "<metadata>" not in text


def test_a_config_overrides_only_the_options_it_sets():
    text = format_result(result(memory_record("m", "x"), 0.5), SearchResultFormatConfig(show_distance=True))
    assert f"<timestamp>{WHEN}</timestamp>" in text and "<status>valid</status>" in text
    assert "<distance>0.5000</distance>" in text


# --- escaping -----------------------------------------------------------------------------


def test_record_text_is_xml_escaped():
    text = format_result(result(memory_record("m", "</content><x>& more")))
    assert "<content>&lt;/content&gt;&lt;x&gt;&amp; more</content>" in text


def test_a_role_is_xml_escaped():
    message = MessageRecord(id="m", record_type="message", content="Hi", role="<tool>", timestamp=WHEN)
    assert "<role>&lt;tool&gt;</role>" in format_result(result(message))


def test_ids_are_xml_escaped():
    record = memory_record("m", "x", user_id="a<b>&c")
    text = format_result(result(record), SearchResultFormatConfig(show_user_id=True))
    assert "<user_id>a&lt;b&gt;&amp;c</user_id>" in text


def test_a_relation_label_is_a_quoted_escaped_attribute():
    parent, child = memory_record("p", "parent"), memory_record("c", "child")
    tree = result(parent, links=[link(parent, 'cites "the" <source>', result(child), "is cited")])
    assert "<linked_memory relation='cites \"the\" &lt;source&gt;'>" in format_result(tree)


# --- linked memories ----------------------------------------------------------------------


def test_linked_memories_nest_inside_the_parent_after_its_content():
    parent, child = memory_record("p", "parent"), memory_record("c", "child")
    tree = result(parent, links=[link(parent, "supports", result(child), "is_supported_by")])
    assert format_result(tree) == (
        f'<record type="preference"><timestamp>{WHEN}</timestamp><status>valid</status><content>parent</content>'
        '<linked_memories><linked_memory relation="supports">'
        f'<record type="preference"><timestamp>{WHEN}</timestamp><status>valid</status><content>child</content>'
        "</record></linked_memory></linked_memories></record>"
    )


def test_a_link_stored_towards_the_parent_shows_its_opposite_label():
    parent, child = memory_record("p", "old"), memory_record("c", "new")
    tree = result(parent, links=[link(parent, "supersedes", result(child), "is_superseded_by", parent_is_source=False)])
    text = format_result(tree)
    assert '<linked_memory relation="is_superseded_by">' in text
    assert 'relation="supersedes"' not in text


def test_the_whole_tree_renders_in_parent_to_child_order_when_invalid_results_are_included():
    text = format_result(pizza_tree(include_invalid_results=True))
    assert text == (
        f'<record type="preference"><timestamp>{WHEN}</timestamp><status>valid</status>'
        "<content>Prefers Neapolitan sourdough.</content><linked_memories>"
        f'<linked_memory relation="refines"><record type="preference"><timestamp>{WHEN}</timestamp>'
        "<status>invalid</status><content>Prefers sourdough.</content><linked_memories>"
        f'<linked_memory relation="supersedes"><record type="preference"><timestamp>{WHEN}</timestamp>'
        "<status>invalid</status><content>Prefers thin crust.</content></record></linked_memory>"
        "</linked_memories></record></linked_memory></linked_memories></record>"
    )


def test_siblings_render_in_the_order_of_the_tree():
    parent = memory_record("p", "parent")
    links = [
        link(parent, "supports", result(memory_record("a", "first")), "is_supported_by"),
        link(parent, "contradicts", result(memory_record("b", "second")), "contradicts"),
    ]
    text = format_result(result(parent, links=links))
    assert text.index("first") < text.index("second")
    assert text.count("<linked_memories>") == 1


def test_a_branch_of_only_invalid_memories_is_omitted_when_the_search_excluded_invalid_results():
    # C-D1: both linked memories are invalid and lead to no valid one; only the direct result shows.
    text = format_result(pizza_tree(include_invalid_results=False))
    assert text == flat(content="Prefers Neapolitan sourdough.")


def test_the_config_can_include_what_the_search_excluded():
    config = SearchResultFormatConfig(include_invalid_results=True)
    assert format_result(pizza_tree(False), config) == format_result(pizza_tree(True))


def test_the_config_can_exclude_what_the_search_included():
    config = SearchResultFormatConfig(include_invalid_results=False)
    assert format_result(pizza_tree(True), config) == flat(content="Prefers Neapolitan sourdough.")


def test_an_invalid_memory_on_the_way_to_a_valid_one_stays_as_a_connector_without_content():
    top, old, current = (
        memory_record("top", "top"),
        memory_record("old", "old secret", INVALID),
        memory_record("cur", "current"),
    )
    old_result = result(old, links=[link(old, "is_supported_by", result(current), "supports")])
    tree = result(top, links=[link(top, "refines", old_result, "is_refined_by")], include_invalid_results=False)
    assert format_result(tree) == (
        f'<record type="preference"><timestamp>{WHEN}</timestamp><status>valid</status><content>top</content>'
        '<linked_memories><linked_memory relation="refines">'
        f'<record type="preference"><timestamp>{WHEN}</timestamp><status>invalid</status><linked_memories>'
        '<linked_memory relation="is_supported_by">'
        f'<record type="preference"><timestamp>{WHEN}</timestamp><status>valid</status><content>current</content>'
        "</record></linked_memory></linked_memories></record></linked_memory></linked_memories></record>"
    )


def test_a_connector_keeps_its_status_even_when_status_is_hidden():
    top, old, current = (
        memory_record("top", "top"),
        memory_record("old", "old secret", INVALID),
        memory_record("cur", "current"),
    )
    old_result = result(old, links=[link(old, "supports", result(current), "is_supported_by")])
    tree = result(top, links=[link(top, "refines", old_result, "is_refined_by")], include_invalid_results=False)
    text = format_result(tree, SearchResultFormatConfig(show_status=False))
    assert text.count("<status>") == 1
    assert "<status>invalid</status>" in text
    assert "old secret" not in text


def test_a_valid_memory_keeps_its_place_when_its_invalid_children_are_omitted():
    top, child, stale = (
        memory_record("top", "top"),
        memory_record("child", "child"),
        memory_record("stale", "stale", INVALID),
    )
    child_result = result(child, links=[link(child, "supersedes", result(stale), "is_superseded_by")])
    tree = result(top, links=[link(top, "supports", child_result, "is_supported_by")], include_invalid_results=False)
    text = format_result(tree)
    assert "<content>child</content></record></linked_memory>" in text
    assert "stale" not in text
    assert text.count("<linked_memories>") == 1


def test_only_the_invalid_branch_is_dropped_among_siblings():
    top = memory_record("top", "top")
    links = [
        link(top, "supersedes", result(memory_record("gone", "gone", INVALID)), "is_superseded_by"),
        link(top, "supports", result(memory_record("kept", "kept")), "is_supported_by"),
    ]
    text = format_result(result(top, links=links, include_invalid_results=False))
    assert "gone" not in text and 'relation="supersedes"' not in text
    assert '<linked_memory relation="supports">' in text


def test_an_invalid_top_level_result_is_always_rendered_with_its_content():
    tree = result(memory_record("m", "historic", INVALID), include_invalid_results=False)
    assert format_result(tree) == flat(content="historic", status="invalid")


def test_config_options_apply_to_every_node_of_the_tree():
    text = format_result(pizza_tree(True), SearchResultFormatConfig(show_timestamp=False, show_distance=True))
    assert "<timestamp>" not in text
    # The direct result has a distance; the linked ones have none (NaN).
    assert text.count("<distance>") == 1


# --- end to end: a real graph search --------------------------------------------------------


@pytest.fixture
def pizza_memory(memory):
    """The graph guide's C-G3..C-G5 memories, linked as in C-G11."""
    user = "graph-demo-user"
    for memory_id, content in (
        ("pizza-thin-crust", "The user's preferred pizza style is thin crust."),
        ("pizza-sourdough", "The user now prefers sourdough pizza."),
        (
            "pizza-neapolitan-sourdough",
            "The user's preferred pizza style is sourdough, especially Neapolitan sourdough.",
        ),
    ):
        memory.add_memory(content, memory_id=memory_id, memory_type="preference", user_id=user)
    memory.link_records("pizza-sourdough", "preference", "pizza-thin-crust", "preference", "supersedes")
    memory.link_records("pizza-neapolitan-sourdough", "preference", "pizza-sourdough", "preference", "refines")
    return memory


def graph_search(memory, **options):
    return memory.search(
        "What pizza should I recommend?",
        user_id="graph-demo-user",
        max_results=5,
        num_hops=2,
        max_linked_results=20,
        **options,
    )


def test_a_graph_search_result_hides_its_invalid_history_by_default(pizza_memory):
    (neapolitan,) = graph_search(pizza_memory, include_invalid_results=False)
    text = format_result(neapolitan)
    assert "Neapolitan sourdough" in text
    assert "thin crust" not in text and "<linked_memories>" not in text


def test_the_graph_guides_compact_config_shows_the_linked_history(pizza_memory):
    (neapolitan,) = graph_search(pizza_memory, include_invalid_results=False)
    config = SearchResultFormatConfig(
        include_invalid_results=True, show_timestamp=False, show_role=False, show_status=False
    )
    text = format_result(neapolitan, config)
    assert '<linked_memory relation="refines">' in text and '<linked_memory relation="supersedes">' in text
    assert text.index("Neapolitan") < text.index("now prefers sourdough") < text.index("thin crust")
    assert "<timestamp>" not in text and "<status>" not in text


def test_reverse_traversal_renders_the_reverse_labels(pizza_memory):
    results = graph_search(pizza_memory, include_invalid_results=True)
    thin = next(r for r in results if r.id == "pizza-thin-crust")
    text = format_result(thin)
    assert '<linked_memory relation="is_superseded_by">' in text
    assert '<linked_memory relation="is_refined_by">' in text
