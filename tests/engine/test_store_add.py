"""Store `add`, `add_user` and `add_agent` (API_SPEC §3.3.1-§3.3.3, §1.7, §10.3 C-D23..C-D25; DECISIONS D3)."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from memory.engine import RecordStatus

from .helpers import CountingEmbedder

DIM = 64


def as_utc(text: str) -> datetime:
    """Parse a stored ISO timestamp; a naive one is UTC (§1.4)."""
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def ids_listed(store, record_type="memory", **filters) -> list[str]:
    return [r.id for r in store.list(record_type, limit=None, **filters)]


# --- ids -------------------------------------------------------------------------------------


def test_add_returns_the_given_ids_in_input_order(store):
    ids = ["m-3", "m-1", "m-2"]
    assert store.add(["three", "one", "two"], record_type="memory", record_ids=ids) == ids
    assert [store.get("memory", i).content for i in ids] == ["three", "one", "two"]


def test_add_without_ids_returns_one_unique_generated_id_per_content_in_input_order(store):
    contents = [f"content {i}" for i in range(20)]
    ids = store.add(contents, record_type="memory")
    assert len(ids) == 20
    assert len(set(ids)) == 20
    assert all(isinstance(i, str) and i for i in ids)
    assert [store.get("memory", i).content for i in ids] == contents
    assert ids_listed(store) == ids


def test_generated_ids_are_unique_across_calls(store):
    first = store.add(["same"], record_type="memory")
    second = store.add(["same"], record_type="memory")
    assert first != second


def test_add_with_a_list_of_none_ids_generates_them(store):
    ids = store.add(["a", "b"], record_type="memory", record_ids=[None, None])
    assert len(ids) == 2 and None not in ids and ids[0] != ids[1]
    assert [store.get("memory", i).content for i in ids] == ["a", "b"]


def test_add_of_no_contents_returns_no_ids(store):
    assert store.add([], record_type="memory") == []
    assert ids_listed(store) == []


# --- broadcasting and per-record values ------------------------------------------------------


def test_scalar_scope_role_timestamp_and_metadata_apply_to_every_record(store):
    ids = store.add(
        ["one", "two", "three"],
        record_type="message",
        thread_ids="t-b",
        user_ids="u-b",
        agent_ids="a-b",
        roles="assistant",
        timestamps="2024-01-02T03:04:05+00:00",
        metadata={"source": "chat", "n": [1, 2]},
    )
    for record_id in ids:
        record = store.get("message", record_id)
        assert (record.thread_id, record.user_id, record.agent_id, record.role) == ("t-b", "u-b", "a-b", "assistant")
        assert as_utc(record.timestamp) == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
        assert record.metadata == {"source": "chat", "n": [1, 2]}


def test_a_shared_metadata_dict_is_stored_per_record_not_aliased(store):
    ids = store.add(["one", "two"], record_type="memory", metadata={"k": "v"})
    store.update("memory", ids[0], metadata={"k": "changed"})
    assert store.get("memory", ids[1]).metadata == {"k": "v"}


def test_per_record_lists_give_each_record_its_own_values(store):
    ids = store.add(
        ["one", "two"],
        record_type="message",
        thread_ids=["t-1", None],
        user_ids=[None, "u-2"],
        agent_ids=["a-1", "a-2"],
        roles=["user", "assistant"],
        timestamps=["2024-01-01T00:00:00+00:00", None],
        metadata=[{"i": 1}, None],
    )
    first, second = (store.get("message", i) for i in ids)
    assert (first.thread_id, first.user_id, first.agent_id, first.role) == ("t-1", None, "a-1", "user")
    assert (second.thread_id, second.user_id, second.agent_id, second.role) == (None, "u-2", "a-2", "assistant")
    assert as_utc(first.timestamp) == datetime(2024, 1, 1, tzinfo=UTC)
    assert (first.metadata, second.metadata) == ({"i": 1}, None)


def test_scalar_none_scope_leaves_every_record_unscoped(store):
    ids = store.add(["one", "two"], record_type="memory", thread_ids=None, user_ids=None, agent_ids=None)
    for record_id in ids:
        record = store.get("memory", record_id)
        assert (record.thread_id, record.user_id, record.agent_id) == (None, None, None)


@pytest.mark.parametrize("record_type", ["message", "memory", "fact", "guideline", "preference"])
def test_every_documented_record_type_can_be_added_and_read_back(store, record_type):
    [record_id] = store.add(["typed"], record_type=record_type, roles="user" if record_type == "message" else None)
    record = store.get(record_type, record_id)
    assert (record.id, record.record_type, record.content) == (record_id, record_type, "typed")


# --- content resolution and embedding --------------------------------------------------------


def test_a_none_content_is_taken_from_metadata_content(store):
    # C-D24
    [record_id] = store.add([None], record_type="memory", metadata={"content": "from-meta"})
    assert store.get("memory", record_id).content == "from-meta"


def test_a_none_content_without_metadata_content_is_empty(store):
    # C-D25
    [record_id] = store.add([None], record_type="memory")
    assert store.get("memory", record_id).content == ""


def test_none_contents_resolve_per_record(store):
    ids = store.add(
        [None, "given", None], record_type="memory", metadata=[{"content": "meta one"}, {"content": "ignored"}, None]
    )
    assert [store.get("memory", i).content for i in ids] == ["meta one", "given", ""]


def test_the_embedder_is_called_only_for_non_empty_payloads(counted_store, embedder):
    # C-D23
    ids = counted_store.add(["", "x"], record_type="memory")
    assert len(ids) == 2
    assert embedder.texts == ["x"]
    assert counted_store.get("memory", ids[0]).content == ""


def test_a_content_resolved_from_metadata_is_embedded(counted_store, embedder):
    counted_store.add([None, None], record_type="memory", metadata=[{"content": "from-meta"}, None])
    assert embedder.texts == ["from-meta"]


def test_index_texts_are_embedded_instead_of_contents_which_stay_unchanged(counted_store, embedder):
    ids = counted_store.add(["shown one", "shown two"], record_type="memory", index_texts=["indexed one", ""])
    assert sorted(embedder.texts) == ["indexed one"]
    assert [counted_store.get("memory", i).content for i in ids] == ["shown one", "shown two"]
    vector = embedder.inner.embed(["indexed one"])[0]
    hits = counted_store.search(query_vector=[float(x) for x in vector], k=5)
    assert hits[0][0].id == ids[0]
    assert ids[1] not in [r.id for r, _ in hits]


@pytest.mark.parametrize("as_numpy", [False, True], ids=["lists", "ndarrays"])
def test_given_embeddings_are_stored_without_calling_the_embedder(counted_store, embedder, as_numpy):
    vectors = embedder.inner.embed(["alpha words", "beta words"])
    given = list(vectors) if as_numpy else [[float(x) for x in v] for v in vectors]
    ids = counted_store.add(["shown a", "shown b"], record_type="memory", embeddings=given)
    assert embedder.calls == []
    hits = counted_store.search(query_vector=[float(x) for x in vectors[1]], k=2)
    assert hits[0][0].id == ids[1]


# --- errors: ValueError naming the problem; the batch stores nothing -------------------------


def test_add_with_a_partial_list_of_ids_is_a_value_error(store):
    with pytest.raises(ValueError, match="record_ids"):
        store.add(["a", "b"], record_type="memory", record_ids=["id-a", None])
    assert ids_listed(store) == []


def test_add_with_a_scalar_id_and_several_contents_is_a_value_error(store):
    with pytest.raises(ValueError, match="record_ids"):
        store.add(["a", "b"], record_type="memory", record_ids="only-one")
    assert ids_listed(store) == []


def _vector(dim: int = DIM) -> list[float]:
    return [1.0] + [0.0] * (dim - 1)


PER_RECORD_LISTS = {
    "index_texts": lambda n: ["x"] * n,
    "embeddings": lambda n: [_vector()] * n,
    "record_ids": lambda n: [f"id-{i}" for i in range(n)],
    "thread_ids": lambda n: ["t"] * n,
    "user_ids": lambda n: ["u"] * n,
    "agent_ids": lambda n: ["a"] * n,
    "roles": lambda n: ["user"] * n,
    "timestamps": lambda n: ["2024-01-01T00:00:00+00:00"] * n,
    "metadata": lambda n: [{"k": 1}] * n,
    "statuses": lambda n: [RecordStatus.VALID] * n,
}


@pytest.mark.parametrize("length", [1, 3], ids=["shorter", "longer"])
@pytest.mark.parametrize("name", list(PER_RECORD_LISTS))
def test_add_with_a_per_record_list_of_the_wrong_length_is_a_value_error(store, name, length):
    with pytest.raises(ValueError, match=name):
        store.add(["a", "b"], record_type="memory", **{name: PER_RECORD_LISTS[name](length)})
    assert ids_listed(store) == []


def test_add_with_an_unknown_record_type_is_a_value_error(store):
    with pytest.raises(ValueError, match=r"(?i)record.?type|memos"):
        store.add(["a"], record_type="memos")


def test_add_with_an_embedding_of_the_wrong_dimension_is_a_value_error(store):
    with pytest.raises(ValueError, match=r"(?i)dim"):
        store.add(["a", "b"], record_type="memory", embeddings=[_vector(), _vector(DIM - 1)])
    assert ids_listed(store) == []


def test_add_with_an_already_stored_id_is_a_value_error_and_stores_nothing(store):
    store.add(["original"], record_type="memory", record_ids="dup")
    with pytest.raises(ValueError, match=r"(?i)dup|exist"):
        store.add(["new", "again"], record_type="memory", record_ids=["fresh", "dup"])
    assert ids_listed(store) == ["dup"]
    assert store.get("memory", "dup").content == "original"
    assert store.get("memory", "fresh") is None


def test_add_with_the_same_id_twice_in_one_batch_is_a_value_error_and_stores_nothing(store):
    with pytest.raises(ValueError, match=r"(?i)twice|dup|repeat|more than once"):
        store.add(["a", "b", "c"], record_type="memory", record_ids=["x", "twice", "twice"])
    assert ids_listed(store) == []


@pytest.mark.parametrize("bad", ["yesterday", "2024-13-01T00:00:00", "01/02/2024", ""])
def test_add_with_a_non_iso_timestamp_is_a_value_error_and_stores_nothing(store, bad):
    with pytest.raises(ValueError, match=r"(?i)timestamp"):
        store.add(["a", "b"], record_type="memory", timestamps=["2024-01-01T00:00:00", bad])
    assert ids_listed(store) == []


def test_a_rejected_batch_leaves_nothing_searchable(store):
    with pytest.raises(ValueError):
        store.add(["a", "b"], record_type="memory", thread_ids=["t"])
    assert ids_listed(store) == []
    assert store.search("a", 10) == []


def test_a_failed_batch_spanning_several_write_batches_stores_nothing(store):
    contents = [f"c{i}" for i in range(7)]
    timestamps = ["2024-01-01T00:00:00"] * 6 + ["not a time"]
    with pytest.raises(ValueError):
        store.add(contents, record_type="memory", timestamps=timestamps, batch_size=2)
    assert ids_listed(store) == []


class FailingEmbedder(CountingEmbedder):
    """Embeds nothing: every call fails, as a remote model that is down would."""

    def embed(self, texts):
        super().embed(texts)
        raise RuntimeError("embedding service unavailable")


def test_an_embedder_failure_stores_nothing(store_factory):
    embedder = FailingEmbedder()
    store = store_factory(embedder=embedder)
    with pytest.raises(RuntimeError, match="unavailable"):
        store.add(["a", "b"], record_type="memory", record_ids=["x", "y"])
    assert embedder.calls
    assert ids_listed(store) == []
    assert store.add(["a", ""], record_type="memory", record_ids=["x", "y"], embeddings=[_vector(), _vector()]) == [
        "x",
        "y",
    ]


def test_batch_size_does_not_change_what_is_stored(store):
    contents = [f"c{i}" for i in range(7)]
    ids = store.add(contents, record_type="memory", batch_size=2)
    assert ids_listed(store) == ids
    assert [r.content for r in store.list("memory")] == contents


def test_add_with_an_unknown_keyword_is_a_type_error(store):
    with pytest.raises(TypeError):
        store.add(["a"], record_type="memory", colour="blue")
    assert ids_listed(store) == []


# --- profiles --------------------------------------------------------------------------------


def test_add_user_returns_the_id_and_the_profile_is_retrievable(store):
    assert store.add_user("u-profile", "Prefers concise answers.") == "u-profile"
    profile = store.get("user_profile", "u-profile")
    assert (profile.id, profile.content) == ("u-profile", "Prefers concise answers.")


def test_add_agent_returns_the_id_and_the_profile_is_retrievable(store):
    assert store.add_agent("a-profile", "Support assistant") == "a-profile"
    profile = store.get("agent_profile", "a-profile")
    assert (profile.id, profile.content) == ("a-profile", "Support assistant")


def test_user_and_agent_profiles_are_kept_apart(store):
    store.add_user("same-id", "a user")
    store.add_agent("same-id", "an agent")
    assert store.get("user_profile", "same-id").content == "a user"
    assert store.get("agent_profile", "same-id").content == "an agent"


def test_a_profile_is_not_a_memory(store):
    store.add_user("u-profile", "text")
    assert store.get("memory", "u-profile") is None
    assert ids_listed(store) == []


def test_the_embedding_is_usable_with_float32_vectors(counted_store, embedder):
    vector = np.asarray(embedder.inner.embed(["float32 payload"])[0], dtype=np.float32)
    [record_id] = counted_store.add(["payload"], record_type="memory", embeddings=[vector])
    assert counted_store.search(query_vector=vector, k=1)[0][0].id == record_id
