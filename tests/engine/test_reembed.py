"""MemoryStore.reembed: a store moves to another embedder (a new dimension included) in batches,
resumes after an interruption without redoing committed batches, and stays exactly as it was,
usable with its old embedder, when the move fails part way."""

from __future__ import annotations

import pytest

from memory.engine import AgentMemory, EmbedderMismatchError, HashingEmbedder, SchemaPolicy

from .helpers import CountingEmbedder
from .test_image_messages import add_look_message

OLD_DIM, NEW_DIM = 64, 96


class FailingEmbedder(CountingEmbedder):
    """Embeds `batches` batches, then fails as a dead embedding server would."""

    def __init__(self, dim: int, batches: int) -> None:
        super().__init__(dim)
        self.batches = batches

    def embed(self, texts):
        if len(self.calls) >= self.batches:
            raise RuntimeError("embedding server unreachable")
        return super().embed(texts)


@pytest.fixture
def world(store_factory):
    """A store at OLD_DIM holding every kind of record that has a vector: messages (one with an
    image and its description), memories, a user and an agent profile."""
    store = store_factory("world", embedder=HashingEmbedder(OLD_DIM))
    memory = AgentMemory(store)
    thread = memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    thread.add_messages([{"role": "user", "content": f"message {n} about the harbour"} for n in range(20)])
    add_look_message(thread, description="a lighthouse at dusk")
    for n in range(10):
        thread.add_memory(f"fact {n}: the user sails on weekends", memory_id=f"m{n}")
    thread.add_memory("The user bakes sourdough bread every Sunday", memory_id="bread")
    memory.add_user("u1", "A sailor who bakes")
    memory.add_agent("a1", "A helpful harbour assistant")
    return memory


def _count_texts(memory: AgentMemory) -> int:
    store = memory.store
    [row] = store._fetch(f"SELECT COUNT(*) AS n FROM {store._records} r WHERE r.search_text IS NOT NULL")
    return int(row["n"])


def stored_vectors(memory: AgentMemory) -> dict[int, bytes | None]:
    store = memory.store
    return {row["pk"]: row["embedding"] for row in store._fetch(f"SELECT pk, embedding FROM {store._records}")}


def top_ids(memory: AgentMemory, query: str = "sourdough bread") -> list[str]:
    return [result.id for result in memory.search(query, user_id="u1", max_results=3)]


def test_a_store_moves_to_an_embedder_of_another_dimension_and_searches_with_it(world, store_factory):
    texts = _count_texts(world)
    report = world.reembed(HashingEmbedder(NEW_DIM), batch_size=7)
    assert (report.previous_embedder, report.previous_dim) == (f"hashing-{OLD_DIM}", OLD_DIM)
    assert (report.embedder, report.vector_dim) == (f"hashing-{NEW_DIM}", NEW_DIM)
    assert report.changed and report.records == report.embedded == texts and report.resumed == 0
    assert world.store.embedder.dim == NEW_DIM
    assert top_ids(world)[0] == "bread"
    assert world.check().ok
    state = world.vector_state()
    assert state.matches and state.stored_vector_dim == NEW_DIM and state.pending_embedder is None

    reopened = AgentMemory(store_factory("world", embedder=HashingEmbedder(NEW_DIM)))
    assert top_ids(reopened)[0] == "bread"
    assert reopened.check().ok


def test_every_record_with_text_gets_a_vector_of_the_new_dimension(world):
    world.reembed(HashingEmbedder(NEW_DIM), batch_size=5)
    vectors = stored_vectors(world)
    with_text = {
        row["pk"] for row in world.store._fetch(f"SELECT pk FROM {world.store._records} WHERE search_text IS NOT NULL")
    }
    assert {pk for pk, vector in vectors.items() if vector is not None} == with_text
    if world.store.dialect.name == "sqlite":
        assert {len(vectors[pk]) for pk in with_text} == {NEW_DIM * 4}
    kinds = {
        row["kind"]
        for row in world.store._fetch(f"SELECT kind FROM {world.store._records} WHERE embedding IS NOT NULL")
    }
    assert kinds == {"message", "memory", "image", "user_profile", "agent_profile"}


def test_opening_a_re_embedded_store_with_the_old_embedder_is_a_clear_error(world, store_factory):
    world.reembed(HashingEmbedder(NEW_DIM))
    with pytest.raises(EmbedderMismatchError, match=f"{NEW_DIM}-dimensional") as caught:
        store_factory("world", embedder=HashingEmbedder(OLD_DIM), schema_policy=SchemaPolicy.REQUIRE_EXISTING)
    assert (caught.value.stored_embedder, caught.value.stored_dim) == (f"hashing-{NEW_DIM}", NEW_DIM)


def test_a_failure_part_way_leaves_the_store_as_it_was_and_usable_with_the_old_embedder(world, store_factory):
    before_vectors, before_hits = stored_vectors(world), top_ids(world)
    with pytest.raises(RuntimeError, match="unreachable"):
        world.reembed(FailingEmbedder(NEW_DIM, batches=2), batch_size=6)
    assert stored_vectors(world) == before_vectors
    assert world.store.embedder.dim == OLD_DIM and top_ids(world) == before_hits
    state = world.vector_state()
    assert state.stored_vector_dim == OLD_DIM and state.matches
    assert (state.pending_embedder, state.pending_vector_dim, state.pending_staged) == (
        f"hashing-{NEW_DIM}",
        NEW_DIM,
        12,
    )

    reopened = AgentMemory(store_factory("world", embedder=HashingEmbedder(OLD_DIM)))
    assert top_ids(reopened) == before_hits
    reopened.add_memory("The user keeps bees", user_id="u1")  # writes still work with the old embedder
    assert reopened.check().ok


def test_a_rerun_resumes_after_the_committed_batches(world):
    texts = _count_texts(world)
    with pytest.raises(RuntimeError):
        world.reembed(FailingEmbedder(NEW_DIM, batches=3), batch_size=5)
    counting = CountingEmbedder(NEW_DIM)
    seen: list[tuple[int, int]] = []
    report = world.reembed(counting, batch_size=5, progress=lambda staged, total: seen.append((staged, total)))
    assert len(counting.texts) == texts - 15 == report.embedded
    assert report.resumed == 15 and report.records == texts
    assert seen[0] == (15, texts) and seen[-1] == (texts, texts)
    assert top_ids(world)[0] == "bread"


def test_a_rerun_for_another_embedder_starts_over(world):
    with pytest.raises(RuntimeError):
        world.reembed(FailingEmbedder(NEW_DIM, batches=2), batch_size=5)
    counting = CountingEmbedder(128)
    report = world.reembed(counting, batch_size=5)
    assert report.resumed == 0 and len(counting.texts) == _count_texts(world)
    assert world.vector_state().stored_vector_dim == 128


def test_a_record_changed_while_re_embedding_is_embedded_again_before_the_swap(world):
    edited = []

    def edit_once(staged: int, total: int) -> None:
        if staged and not edited:  # after the first batch: change a record it staged
            world.update_memory("bread", content="The user bakes rye bread on Sundays")
            edited.append(staged)

    counting = CountingEmbedder(NEW_DIM)
    world.reembed(counting, batch_size=100, progress=edit_once)
    assert counting.texts.count("The user bakes rye bread on Sundays") == 1
    assert top_ids(world, "rye bread")[0] == "bread"
    assert world.check().ok


def test_the_same_embedder_changes_nothing(world):
    counting = CountingEmbedder(OLD_DIM)
    report = world.reembed(counting)
    assert not report.changed and counting.calls == []
    assert (report.embedder, report.vector_dim) == (f"hashing-{OLD_DIM}", OLD_DIM)


def test_arguments_are_checked_before_anything_is_written(world):
    before = stored_vectors(world)
    with pytest.raises(ValueError, match="batch_size"):
        world.reembed(HashingEmbedder(NEW_DIM), batch_size=0)
    with pytest.raises(ValueError, match="Embedder"):
        world.reembed("hashing:96")
    assert stored_vectors(world) == before and world.vector_state().pending_embedder is None


def test_an_embedder_returning_the_wrong_shape_fails_without_changing_the_store(world):
    class Liar(CountingEmbedder):
        def embed(self, texts):
            return super().embed(texts)[:, :10]

    before = stored_vectors(world)
    with pytest.raises(ValueError, match="shape"):
        world.reembed(Liar(NEW_DIM))
    assert stored_vectors(world) == before
