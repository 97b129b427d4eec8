"""The store page's examples, C-S1 … C-S15 of API_SPEC §10.2, exactly as written, each on a fresh store."""

from __future__ import annotations


def test_c_s1_add_with_a_single_string_id_returns_that_id(store):
    assert store.add(["Abstract memory"], record_type="memory", record_ids="mem-abstract-docs") == ["mem-abstract-docs"]


def test_c_s2_a_search_finds_the_added_memory(store):
    assert store.add(["Searchable abstract memory"], record_type="memory", record_ids="mem-search-abstract-docs") == [
        "mem-search-abstract-docs"
    ]
    assert store.search("Searchable", 1, record_types={"memory"})[0][0].id == "mem-search-abstract-docs"


def test_c_s3_a_scalar_metadata_filter_finds_the_record(store):
    assert store.add(
        ["pizza release"], record_type="memory", record_ids="mem-search-meta-source-docs", metadata={"source": "slack"}
    ) == ["mem-search-meta-source-docs"]
    assert any(
        record.id == "mem-search-meta-source-docs"
        for record, _ in store.search("pizza", k=3, metadata_filter={"source": "slack"})
    )


def test_c_s4_a_nested_metadata_filter_finds_the_record(store):
    assert store.add(
        ["pizza review"],
        record_type="memory",
        record_ids="mem-search-meta-review-docs",
        metadata={"review": {"status": "open"}},
    ) == ["mem-search-meta-review-docs"]
    assert any(
        record.id == "mem-search-meta-review-docs"
        for record, _ in store.search("pizza", k=3, metadata_filter={"review": {"status": "open"}})
    )


def test_c_s5_a_list_metadata_filter_finds_the_record(store):
    assert store.add(
        ["pizza tags"],
        record_type="memory",
        record_ids="mem-search-meta-tags-docs",
        metadata={"tags": ["prod", "urgent"]},
    ) == ["mem-search-meta-tags-docs"]
    assert any(
        record.id == "mem-search-meta-tags-docs"
        for record, _ in store.search("pizza", k=3, metadata_filter={"tags": ["prod", "urgent"]})
    )


def test_c_s6_add_a_message_with_scalar_thread_and_role(store):
    assert store.add(
        ["Hello from docs"], record_type="message", record_ids="msg-docs-add", thread_ids="c-docs-add", roles="user"
    ) == ["msg-docs-add"]


def test_c_s7_add_agent_returns_the_agent_id(store):
    assert store.add_agent("a-docs-agent", "Support assistant") == "a-docs-agent"


def test_c_s8_add_user_returns_the_user_id(store):
    assert store.add_user("u-docs-profile", "Prefers concise answers.") == "u-docs-profile"


def test_c_s9_delete_an_added_memory_returns_one(store):
    assert store.add(["Delete me"], record_type="memory", record_ids="mem-delete-docs") == ["mem-delete-docs"]
    assert store.delete("memory", "mem-delete-docs") == 1


def test_c_s10_delete_thread_of_an_unknown_thread_returns_zero(store):
    assert store.delete_thread("c1") == 0


def test_c_s11_get_returns_the_added_memory(store):
    assert store.add(["Remember this"], record_type="memory", record_ids="mem-get-docs") == ["mem-get-docs"]
    assert store.get("memory", "mem-get-docs").id == "mem-get-docs"


def test_c_s12_list_returns_records_in_insertion_order(store):
    assert store.add(
        ["First listed", "Second listed"], record_type="memory", record_ids=["mem-list-docs-1", "mem-list-docs-2"]
    ) == ["mem-list-docs-1", "mem-list-docs-2"]
    assert [record.id for record in store.list("memory", limit=2)] == ["mem-list-docs-1", "mem-list-docs-2"]


def test_c_s13_list_thread_messages_of_an_empty_thread_is_empty(store):
    assert store.list_thread_messages("c1") == []


def test_c_s14_search_with_an_exact_thread_finds_the_thread_memory(store):
    assert store.add(
        ["pizza preference"], record_type="memory", record_ids="mem-search-docs", thread_ids="c-search-docs"
    ) == ["mem-search-docs"]
    assert (
        store.search("pizza", 1, thread_id="c-search-docs", exact_thread_match=True, record_types={"memory"})[0][0].id
        == "mem-search-docs"
    )


def test_c_s15_update_replaces_the_text(store):
    assert store.add(["Original note"], record_type="memory", record_ids="mem-update-docs") == ["mem-update-docs"]
    assert store.update("memory", "mem-update-docs", text="Updated note") == 1
    assert store.get("memory", "mem-update-docs").content == "Updated note"
