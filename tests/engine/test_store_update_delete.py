"""Store `update`, `delete`, `delete_thread`, `get`, `list` and `list_thread_messages`.

API_SPEC §3.3.4-§3.3.8, §3.3.10, §2.8; §10.3 C-D16, C-D26..C-D28; DECISIONS D3, D4.
"""

from __future__ import annotations

import pytest

from memory.engine import AgentMemory, HashingEmbedder

DIM = 64


def vector_of(text: str) -> list[float]:
    return [float(x) for x in HashingEmbedder(DIM).embed([text])[0]]


def vector_hits(store, text: str, k: int = 10) -> list[str]:
    """Ids found by a pure vector search for `text` (no keyword component)."""
    return [record.id for record, _ in store.search(query_vector=vector_of(text), k=k)]


def nearest(store, text: str):
    """(id, distance) of the best vector hit for `text`."""
    record, distance = store.search(query_vector=vector_of(text), k=1)[0]
    return record.id, distance


def ids(records) -> list[str]:
    return [record.id for record in records]


# --- update: errors and counts ---------------------------------------------------------------


def test_update_with_text_none_and_an_embedding_is_a_value_error(store):
    # C-D26
    [record_id] = store.add(["Original note"], record_type="memory")
    with pytest.raises(ValueError):
        store.update("memory", record_id, text=None, embedding=vector_of("x"))
    assert store.get("memory", record_id).content == "Original note"


def test_update_with_text_none_and_an_index_text_is_a_value_error(store):
    [record_id] = store.add(["Original note"], record_type="memory")
    with pytest.raises(ValueError):
        store.update("memory", record_id, text=None, index_text="index me")
    assert store.get("memory", record_id).content == "Original note"


def test_update_without_any_payload_is_a_value_error(store):
    # C-D27
    [record_id] = store.add(["Original note"], record_type="memory")
    with pytest.raises(ValueError):
        store.update("memory", record_id)


def test_update_of_a_missing_record_returns_zero(store):
    # C-D28
    assert store.update("memory", "missing", text="x") == 0
    assert store.get("memory", "missing") is None


def test_update_of_a_record_under_another_type_returns_zero(store):
    [record_id] = store.add(["a fact"], record_type="fact")
    assert store.update("memory", record_id, text="changed") == 0
    assert store.get("fact", record_id).content == "a fact"


@pytest.mark.parametrize("record_type", ["bogus", ""])
def test_update_with_an_unsupported_record_type_is_a_value_error(store, record_type):
    [record_id] = store.add(["note"], record_type="memory")
    with pytest.raises(ValueError):
        store.update(record_type, record_id, text="x")


def test_update_with_an_unknown_keyword_is_a_type_error(store):
    [record_id] = store.add(["note"], record_type="memory")
    with pytest.raises(TypeError):
        store.update("memory", record_id, colour="blue")


def test_update_with_an_embedding_of_the_wrong_dimension_is_a_value_error(store):
    [record_id] = store.add(["note"], record_type="memory")
    with pytest.raises(ValueError):
        store.update("memory", record_id, embedding=[1.0] * (DIM - 1))
    assert nearest(store, "note") == (record_id, pytest.approx(0.0, abs=1e-4))


# --- update: text, index_text, embedding -----------------------------------------------------


def test_update_text_replaces_the_content_and_re_embeds_it(store):
    target, _ = store.add(["alpha beta gamma", "delta epsilon zeta"], record_type="memory")
    assert store.update("memory", target, text="omega psi chi") == 1
    assert store.get("memory", target).content == "omega psi chi"
    found, distance = nearest(store, "omega psi chi")
    assert found == target
    assert distance == pytest.approx(0.0, abs=1e-4)
    old = store.search(query_vector=vector_of("alpha beta gamma"), k=2)
    assert next(d for r, d in old if r.id == target) > 1e-3
    assert target in [r.id for r, _ in store.search("omega psi chi", 1)]


def test_update_text_to_empty_keeps_empty_content_and_drops_the_embedding(store):
    target, other = store.add(["alpha beta gamma", "delta epsilon zeta"], record_type="memory")
    assert store.update("memory", target, text="") == 1
    record = store.get("memory", target)
    assert record is not None and record.content == ""
    assert target not in vector_hits(store, "alpha beta gamma")
    assert other in vector_hits(store, "alpha beta gamma")


def test_update_text_none_clears_the_content_and_the_embedding(store):
    target, _other = store.add(["alpha beta gamma", "delta epsilon zeta"], record_type="memory")
    assert store.update("memory", target, text=None) == 1
    record = store.get("memory", target)
    assert record is not None and not record.content
    assert target not in vector_hits(store, "alpha beta gamma")
    assert target not in [r.id for r, _ in store.search("alpha beta gamma", 10)]


def test_update_text_of_an_empty_record_makes_it_searchable_again(store):
    [target] = store.add([""], record_type="memory")
    assert target not in vector_hits(store, "now searchable")
    store.update("memory", target, text="now searchable")
    assert nearest(store, "now searchable")[0] == target


def test_update_index_text_re_embeds_without_changing_the_content(counted_store, embedder):
    target, _ = counted_store.add(["shown content", "some other record"], record_type="memory")
    embedder.reset()
    assert counted_store.update("memory", target, index_text="hidden index words") == 1
    assert counted_store.get("memory", target).content == "shown content"
    assert [t for call in embedder.calls for t in call] == ["hidden index words"]
    found, distance = nearest(counted_store, "hidden index words")
    assert (found, distance) == (target, pytest.approx(0.0, abs=1e-4))


def test_update_text_embeds_the_new_text_rather_than_an_index_text_given_at_add(store):
    # §3.3.10: with index_text OMITTED in the update, `text` is what gets embedded.
    target, _ = store.add(["shown", "some other record"], record_type="memory", index_texts=["old index words", None])
    assert store.update("memory", target, text="brand new text") == 1
    assert store.get("memory", target).content == "brand new text"
    assert nearest(store, "brand new text") == (target, pytest.approx(0.0, abs=1e-4))


def test_update_text_to_empty_drops_the_embedding_of_a_record_added_with_an_index_text(store):
    # §3.3.10: text="" persists empty content and clears any chunk embedding for the record.
    target, other = store.add(["shown", "other record"], record_type="memory", index_texts=["index words", None])
    assert store.update("memory", target, text="") == 1
    assert store.get("memory", target).content == ""
    hits = vector_hits(store, "index words")
    assert other in hits
    assert target not in hits


def test_update_text_with_index_text_stores_the_text_and_embeds_the_index_text(counted_store, embedder):
    [target] = counted_store.add(["old"], record_type="memory")
    embedder.reset()
    counted_store.update("memory", target, text="new shown text", index_text="new index words")
    assert counted_store.get("memory", target).content == "new shown text"
    assert [t for call in embedder.calls for t in call] == ["new index words"]
    assert nearest(counted_store, "new index words") == (target, pytest.approx(0.0, abs=1e-4))


def test_update_with_an_embedding_uses_it_without_calling_the_embedder(counted_store, embedder):
    target, _ = counted_store.add(["shown content", "some other record"], record_type="memory")
    embedder.reset()
    assert counted_store.update("memory", target, embedding=vector_of("given vector words")) == 1
    assert embedder.calls == []
    assert counted_store.get("memory", target).content == "shown content"
    assert nearest(counted_store, "given vector words") == (target, pytest.approx(0.0, abs=1e-4))


def test_update_text_with_an_embedding_does_not_call_the_embedder(counted_store, embedder):
    [target] = counted_store.add(["old"], record_type="memory")
    embedder.reset()
    counted_store.update("memory", target, text="new text", embedding=vector_of("vector words"))
    assert embedder.calls == []
    assert counted_store.get("memory", target).content == "new text"
    assert nearest(counted_store, "vector words") == (target, pytest.approx(0.0, abs=1e-4))


def test_update_embedding_none_clears_the_embedding_but_keeps_the_content(store):
    target, _ = store.add(["alpha beta gamma", "delta epsilon zeta"], record_type="memory")
    assert store.update("memory", target, embedding=None) == 1
    assert store.get("memory", target).content == "alpha beta gamma"
    assert target not in vector_hits(store, "alpha beta gamma")


def test_update_metadata_replaces_it_without_merging(store):
    [target] = store.add(["note"], record_type="memory", metadata={"a": 1, "nested": {"b": 2, "c": 3}})
    assert store.update("memory", target, metadata={"nested": {"b": 5}}) == 1
    record = store.get("memory", target)
    assert record.metadata == {"nested": {"b": 5}}
    assert record.content == "note"
    assert [r.id for r in store.list("memory", metadata_filter={"a": 1})] == []
    assert [r.id for r in store.list("memory", metadata_filter={"nested": {"b": 5}})] == [target]


def test_update_metadata_only_does_not_re_embed(counted_store, embedder):
    [target] = counted_store.add(["note"], record_type="memory")
    embedder.reset()
    counted_store.update("memory", target, metadata={"k": "v"})
    assert embedder.calls == []
    assert nearest(counted_store, "note") == (target, pytest.approx(0.0, abs=1e-4))


def test_update_changes_only_the_addressed_record(store):
    first, second = store.add(["first note", "second note"], record_type="memory", metadata={"k": 0})
    store.update("memory", first, text="changed", metadata={"k": 1})
    other = store.get("memory", second)
    assert (other.content, other.metadata) == ("second note", {"k": 0})


# --- delete ----------------------------------------------------------------------------------


def test_delete_returns_one_then_zero(store):
    [target] = store.add(["Delete me"], record_type="memory")
    assert store.delete("memory", target) == 1
    assert store.get("memory", target) is None
    assert store.delete("memory", target) == 0


def test_delete_of_an_unknown_id_returns_zero(store):
    assert store.delete("memory", "never-stored") == 0


def test_delete_under_another_record_type_deletes_nothing(store):
    [target] = store.add(["a fact"], record_type="fact")
    assert store.delete("memory", target) == 0
    assert store.get("fact", target).content == "a fact"


def test_delete_removes_only_the_addressed_record(store):
    gone, kept = store.add(["gone", "kept"], record_type="memory")
    store.delete("memory", gone)
    assert ids(store.list("memory")) == [kept]


def test_delete_with_an_unsupported_record_type_is_a_value_error(store):
    with pytest.raises(ValueError):
        store.delete("bogus", "x")


def test_delete_thread_removes_the_thread_and_all_its_records(store):
    AgentMemory(store).create_thread(thread_id="t-del", user_id="u", agent_id="a")
    AgentMemory(store).create_thread(thread_id="t-keep", user_id="u", agent_id="a")
    store.add(["m1", "m2"], record_type="message", thread_ids="t-del", roles="user")
    store.add(["mem"], record_type="memory", thread_ids="t-del", user_ids="u")
    store.add(["fact"], record_type="fact", thread_ids="t-del")
    kept = store.add(["other"], record_type="message", thread_ids="t-keep", roles="user")
    kept += store.add(["loose"], record_type="memory", thread_ids=None, user_ids="u")

    assert store.delete_thread("t-del") == 1

    assert store.get("thread", "t-del") is None
    assert store.get("thread", "t-keep") is not None
    assert store.list_thread_messages("t-del") == []
    for record_type in ("message", "memory", "fact"):
        assert ids(store.list(record_type, thread_id="t-del", include_expired=True)) == []
    assert ids(store.list("message")) + ids(store.list("memory")) == kept
    assert store.search("m1 m2 mem fact", 10, thread_id="t-del", exact_thread_match=True) == []
    assert store.delete_thread("t-del") == 0


def test_delete_thread_of_an_unknown_thread_returns_zero_and_touches_nothing(store):
    # C-S10
    kept = store.add(["loose"], record_type="memory", thread_ids="other")
    assert store.delete_thread("c1") == 0
    assert ids(store.list("memory")) == kept


# --- get -------------------------------------------------------------------------------------


def test_get_returns_none_for_an_unknown_id(store):
    store.add(["something"], record_type="memory")
    assert store.get("memory", "unknown-id") is None


@pytest.mark.parametrize("other_type", ["fact", "message", "preference", "user_profile"])
def test_get_returns_none_for_the_wrong_record_type(store, other_type):
    [target] = store.add(["a memory"], record_type="memory")
    assert store.get(other_type, target) is None
    assert store.get("memory", target).id == target


def test_get_returns_decoded_metadata_and_the_record_fields(store):
    [target] = store.add(
        ["content"], record_type="preference", thread_ids="t", user_ids="u", agent_ids="a", metadata={"x": [1, "y"]}
    )
    record = store.get("preference", target)
    assert (record.id, record.record_type, record.content) == (target, "preference", "content")
    assert (record.thread_id, record.user_id, record.agent_id) == ("t", "u", "a")
    assert record.metadata == {"x": [1, "y"]}


# --- list ------------------------------------------------------------------------------------


def test_list_returns_records_in_insertion_order(store):
    first = store.add(["b", "a"], record_type="memory", record_ids=["z-id", "a-id"])
    second = store.add(["c"], record_type="memory", record_ids=["m-id"])
    assert ids(store.list("memory")) == first + second


def test_list_is_limited_and_keeps_the_oldest_first(store):
    added = store.add([f"r{i}" for i in range(5)], record_type="memory")
    assert ids(store.list("memory", limit=3)) == added[:3]
    assert ids(store.list("memory", limit=1)) == added[:1]


def test_list_defaults_to_a_hundred_records_and_none_means_no_cap(store):
    added = store.add([f"r{i}" for i in range(105)], record_type="memory")
    assert ids(store.list("memory")) == added[:100]
    assert ids(store.list("memory", limit=None)) == added


def test_list_returns_only_the_requested_record_types(store):
    memory_ids = store.add(["m"], record_type="memory")
    fact_ids = store.add(["f"], record_type="fact")
    store.add(["msg"], record_type="message", thread_ids="t", roles="user")
    assert ids(store.list("memory")) == memory_ids
    assert ids(store.list(["fact", "memory"])) == memory_ids + fact_ids


@pytest.fixture
def scoped(store):
    labels = ["u1-a1-t1", "u1-none-none", "none-a1-t2", "none-none-none"]

    def part(label, i):
        value = label.split("-")[i]
        return None if value == "none" else value

    added = store.add(
        labels,
        record_type="memory",
        user_ids=[part(label, 0) for label in labels],
        agent_ids=[part(label, 1) for label in labels],
        thread_ids=[part(label, 2) for label in labels],
    )
    return dict(zip(labels, added, strict=True))


def listed(store, scoped, **filters) -> list[str]:
    by_id = {v: k for k, v in scoped.items()}
    return [by_id[record.id] for record in store.list("memory", **filters)]


def test_list_with_thread_none_returns_only_thread_unscoped_records(store, scoped):
    # C-D16
    assert listed(store, scoped, thread_id=None) == ["u1-none-none", "none-none-none"]


def test_list_scope_filters_are_exact(store, scoped):
    assert listed(store, scoped) == list(scoped)
    assert listed(store, scoped, user_id="u1") == ["u1-a1-t1", "u1-none-none"]
    assert listed(store, scoped, user_id=None) == ["none-a1-t2", "none-none-none"]
    assert listed(store, scoped, agent_id="a1") == ["u1-a1-t1", "none-a1-t2"]
    assert listed(store, scoped, agent_id=None) == ["u1-none-none", "none-none-none"]
    assert listed(store, scoped, thread_id="t2") == ["none-a1-t2"]
    assert listed(store, scoped, user_id="u1", thread_id=None) == ["u1-none-none"]
    assert listed(store, scoped, user_id=None, agent_id=None, thread_id=None) == ["none-none-none"]
    assert listed(store, scoped, user_id="nobody") == []


def test_list_by_record_id_returns_that_record_only(store):
    _first, second = store.add(["one", "two"], record_type="memory")
    assert ids(store.list("memory", record_id=second)) == [second]
    assert ids(store.list("memory", record_id="unknown")) == []


def test_list_with_a_negative_limit_is_a_value_error(store):
    with pytest.raises(ValueError):
        store.list("memory", limit=-1)


def test_list_with_an_unknown_record_type_is_a_value_error(store):
    with pytest.raises(ValueError):
        store.list("bogus")


# --- cursor pagination -----------------------------------------------------------------------


def walk(store, record_type="memory", limit=2, between=None, **filters) -> list[str]:
    """Every id of every page, following next_cursor; `between(page_number)` runs after each page."""
    seen, cursor, pages = [], None, 0
    while True:
        page = store.list(record_type, limit=limit, cursor=cursor, **filters)
        assert len(page) <= limit
        seen += ids(page)
        pages += 1
        assert pages < 100, "pagination does not end"
        if between:
            between(pages)
        cursor = page.next_cursor
        if cursor is None:
            return seen


def test_a_page_is_a_list_with_a_next_cursor(store):
    store.add(["a", "b", "c"], record_type="memory")
    page = store.list("memory", limit=2)
    assert isinstance(page, list) and len(page) == 2
    assert page.next_cursor is not None
    assert store.list("memory", limit=5).next_cursor is None


@pytest.mark.parametrize("count", [0, 1, 6, 7])
def test_walking_all_pages_returns_every_record_once_in_order(store, count):
    added = store.add([f"r{i}" for i in range(count)], record_type="memory") if count else []
    assert walk(store) == added


def test_pages_continue_correctly_while_records_are_added(store):
    added = store.add([f"r{i}" for i in range(5)], record_type="memory")
    late = []

    def add_more(page_number):
        if page_number <= 2:
            late.extend(store.add([f"late{page_number}a", f"late{page_number}b"], record_type="memory"))

    assert walk(store, between=add_more) == added + late


def test_pages_continue_when_the_last_record_of_a_page_is_deleted(store):
    added = store.add([f"r{i}" for i in range(6)], record_type="memory")
    page = store.list("memory", limit=2)
    assert ids(page) == added[:2]
    store.delete("memory", added[1])
    rest = store.list("memory", limit=10, cursor=page.next_cursor)
    assert ids(rest) == added[2:]


def test_pagination_respects_scope_and_metadata_filters(store):
    added = store.add(
        [f"r{i}" for i in range(9)],
        record_type="memory",
        user_ids=["u1", "u2", "u1"] * 3,
        metadata=[{"k": i % 2} for i in range(9)],
    )
    expected = [added[i] for i in range(9) if i % 3 != 1]
    assert walk(store, user_id="u1") == expected
    assert walk(store, metadata_filter={"k": 0}) == [added[i] for i in range(9) if i % 2 == 0]


def test_a_malformed_cursor_is_a_value_error(store):
    store.add(["a"], record_type="memory")
    with pytest.raises(ValueError):
        store.list("memory", cursor="not-a-cursor")


# --- list_thread_messages --------------------------------------------------------------------


def test_list_thread_messages_returns_the_threads_messages_in_insertion_order(store):
    first = store.add(["one", "two"], record_type="message", thread_ids="t", roles=["user", "assistant"])
    store.add(["elsewhere"], record_type="message", thread_ids="other", roles="user")
    store.add(["a memory of t"], record_type="memory", thread_ids="t")
    second = store.add(["three"], record_type="message", thread_ids="t", roles="user")
    messages = store.list_thread_messages("t")
    assert ids(messages) == first + second
    assert [m.content for m in messages] == ["one", "two", "three"]
    assert [m.role for m in messages] == ["user", "assistant", "user"]


def test_list_thread_messages_last_n_returns_the_most_recent_in_insertion_order(store):
    added = store.add([f"m{i}" for i in range(5)], record_type="message", thread_ids="t", roles="user")
    assert ids(store.list_thread_messages("t", last_n=2)) == added[3:]
    assert ids(store.list_thread_messages("t", last_n=10)) == added
    assert ids(store.list_thread_messages("t", last_n=None)) == added


def test_list_thread_messages_of_an_unknown_thread_is_empty(store):
    # C-S13
    store.add(["elsewhere"], record_type="message", thread_ids="other", roles="user")
    assert store.list_thread_messages("c1") == []
