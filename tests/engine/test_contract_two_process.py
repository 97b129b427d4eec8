"""Graph search in one process while another writes and deletes linked memories (spec §6.5, D3, D5).

A writer process adds memories linked to existing ones, links and unlinks pairs and deletes
memories, as fast as it can, for TWO_PROCESS_SECONDS (properties.py; longer under
HYPOTHESIS_PROFILE=long). Meanwhile this process searches with num_hops 1 and 2 through the client
and a thread, from several threads at once. The searches have valid arguments, so any exception at
all is an escape (D3 gives search no KeyError: a memory deleted under a search is simply not
found). Every result must be consistent with itself: each linked record arrives through a
relation that joins it to its parent, and no memory appears twice in one tree (D5).
"""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import time
import traceback

import pytest

from memory.engine import AgentMemory

from .conftest import make_store
from .properties import ROOT, SQLITE_BACKENDS, TWO_PROCESS_SECONDS

READER_THREADS = 3
"""Searches run from several threads of the reading process at once, as a web server's do."""

WRITER = r"""
import random, sys, time, traceback
sys.path.insert(0, sys.argv[4])
from memory.engine import AgentMemory, HashingEmbedder, SQLiteMemoryStore

path, seconds, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
memory = AgentMemory(SQLiteMemoryStore(path, embedder=HashingEmbedder(64), search_index=False))
thread = memory.get_thread("t1")
rng = random.Random(seed)
alive = [record.id for record in memory.list_memories(limit=None)]
owned = {record.id for record in memory.list_memories(thread_id="t1", limit=None)}
types = ["supersedes", "refines", "supports", "contradicts", "duplicates", "custom"]
count, operations = 0, 0
print("ready", flush=True)
stop = time.monotonic() + seconds
try:
    while time.monotonic() < stop:
        operations += 1
        roll = rng.random()
        if roll < 0.45 or len(alive) < 4:
            count += 1
            new_id = f"w{count}"
            target = rng.choice(alive) if alive else None
            owner = thread if target in owned and rng.random() < 0.5 else memory
            if target is None:
                memory.add_memory(f"pizza note {count} about crust", memory_id=new_id, user_id="u1", agent_id="a1")
            else:  # the new memory takes the target's scope
                owner.add_memory(
                    f"pizza note {count} about crust and ovens",
                    memory_id=new_id,
                    memory_id_to_link=target,
                    link_type=rng.choice(types[:5]),
                )
                if target in owned:
                    owned.add(new_id)
            alive.append(new_id)
        elif roll < 0.75:
            victim = alive.pop(rng.randrange(len(alive)))
            owned.discard(victim)
            assert memory.delete_memory(victim) == 1
        elif roll < 0.9:
            a, b = rng.sample(alive, 2)
            try:
                kinds = [memory.get_memory(a).record_type, memory.get_memory(b).record_type]
                memory.link_records(a, kinds[0], b, kinds[1], rng.choice(types))
            except ValueError:
                pass  # already linked, one way or the other (D3)
        else:
            relations = memory.list_relations(limit=20)
            if relations:
                memory.delete_record_link(relation_id=rng.choice(relations).id)
except BaseException:
    traceback.print_exc()
    sys.exit(1)
print(f"done {operations}", flush=True)
"""


def seed_chain(memory: AgentMemory, thread) -> None:
    """Chains of linked memories, in thread t1 and user-level, for the searches to walk."""
    previous = None
    for i in range(30):
        owner, memory_id = (thread, f"t1-{i}") if i % 2 else (memory, f"u-{i}")
        link = {"memory_id_to_link": previous, "link_type": "supports"} if previous and owner is memory else {}
        if owner is memory:
            owner.add_memory(f"pizza chain {i} crust", memory_id=memory_id, user_id="u1", agent_id="a1", **link)
        else:
            owner.add_memory(f"pizza chain {i} oven", memory_id=memory_id)
        if previous and owner is thread:
            memory.link_records(memory_id, "memory", previous, "memory", "refines")
        previous = memory_id


def check_tree(result, seen: set[str]) -> None:
    for relation, child in result.linked_results:
        ends = {relation.source_record_id, relation.target_record_id}
        assert ends == {result.record.id, child.record.id}, (
            f"{child.record.id} came linked to {result.record.id} through {relation.id} ({sorted(ends)})"
        )
        assert child.record.id not in seen, f"{child.record.id} appears twice in the tree of one result (D5)"
        seen.add(child.record.id)
        check_tree(child, seen)


@pytest.mark.parametrize("backend", SQLITE_BACKENDS)
def test_graph_search_while_another_process_deletes_linked_memories(backend: str, tmp_path):
    path = tmp_path / "shared.sqlite3"
    store = make_store(backend, path)
    memory = AgentMemory(store)
    thread = memory.create_thread(thread_id="t1", user_id="u1", agent_id="a1")
    seed_chain(memory, thread)
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(TWO_PROCESS_SECONDS), "7", str(ROOT)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    failures: list[str] = []
    searches = [0] * READER_THREADS
    guard = threading.Lock()

    def reader(number: int, stop: float) -> None:
        rng = random.Random(number)
        while time.monotonic() < stop and len(failures) < 3:
            num_hops = rng.choice([1, 2])
            query = rng.choice(["pizza crust", "pizza oven", "chain note", "ovens"])
            options = {"num_hops": num_hops, "max_linked_results": rng.choice([5, 100])}
            options["include_invalid_results"] = rng.random() < 0.7
            try:
                if rng.random() < 0.5:
                    results = memory.search(query, user_id="u1", **options)
                else:
                    results = thread.search(query, exact_thread_match=rng.random() < 0.5, **options)
                for result in results:
                    check_tree(result, {result.record.id})
            except Exception as error:  # valid arguments: no exception is in the contract
                with guard:
                    failures.append(
                        f"search({query!r}, {options}) raised {type(error).__name__}: {error}\n"
                        + "".join(traceback.format_exception(error)[-8:])
                    )
            searches[number] += 1

    try:
        assert writer.stdout.readline().strip() == "ready", writer.stderr.read()
        stop = time.monotonic() + TWO_PROCESS_SECONDS
        readers = [threading.Thread(target=reader, args=(n, stop)) for n in range(READER_THREADS)]
        for started in readers:
            started.start()
        for started in readers:
            started.join()
    finally:
        out, err = writer.communicate(timeout=60)
        store.close()
    assert writer.returncode == 0, f"the writer failed:\n{err}"
    assert "done" in out, out
    assert sum(searches) > 10, f"only {sum(searches)} searches ran"
    assert not failures, f"{len(failures)} of {sum(searches)} searches failed; first:\n{failures[0]}"
