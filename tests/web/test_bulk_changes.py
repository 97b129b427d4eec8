"""Bulk changes in the curation service: many entries recorded as one change, undone in one step."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory.curation import Actor, Curation, CurationError, reconcile_pending, undone_by
from memory.engine import RecordStatus
from memory.models import BulkChange, CurationEntry

from .world import World, build_world


@pytest.fixture
def world(agent_memory) -> World:
    return build_world(agent_memory)


@pytest.fixture
def curation(agent_memory, curator) -> Curation:
    return Curation(agent_memory, Actor(curator))


def invalidate(curation: Curation, memory_id: str) -> CurationEntry:
    memory = curation.agent_memory.get_memory(memory_id)
    return curation.update_memory(memory_id, version=memory.version, status=RecordStatus.INVALID)


def test_the_entries_made_inside_a_bulk_change_belong_to_it_and_no_others(curation, world):
    outside = curation.create_memory(content="Alice likes trams.", memory_type="fact", user_id="alice")
    with curation.bulk("Invalidate and delete") as change:
        updated = invalidate(curation, world.fact_id)
        with curation.bulk("nested") as inner:  # nested: the outer change keeps everything
            deleted = curation.delete_image(world.image_id)

    assert inner == change
    assert BulkChange.objects.count() == 1
    assert {entry.pk for entry in change.entries.all()} == {updated.pk, deleted.pk}
    assert CurationEntry.objects.get(pk=outside.pk).bulk is None
    assert (change.actor_name, change.summary, change.via) == ("carl", "Invalidate and delete", "dashboard")


def test_undoing_a_bulk_change_restores_every_record_in_one_new_change(curation, world, agent_memory):
    with curation.bulk("Invalidate one, delete the other") as change:
        invalidate(curation, world.fact_id)
        curation.delete_memory(world.old_fact_id)

    undo = curation.revert_bulk(change)

    assert undo.failed == []
    assert undo.change.reverts == change
    assert undo.change.entries.count() == 2
    assert undone_by(change) == undo.change
    assert agent_memory.get_memory(world.fact_id).status == RecordStatus.VALID
    restored = agent_memory.get_memory(world.old_fact_id)
    assert restored.content == "Alice used to eat fish."
    assert agent_memory.get_relation(world.link_id).target_record_id == world.old_fact_id  # its link came back


def test_an_undo_is_itself_undone_in_one_step_and_a_change_is_undone_only_once(curation, world, agent_memory):
    with curation.bulk("Invalidate") as change:
        invalidate(curation, world.fact_id)
    undo = curation.revert_bulk(change)

    with pytest.raises(CurationError, match="already undone"):
        curation.revert_bulk(change)
    redo = curation.revert_bulk(undo.change)

    assert agent_memory.get_memory(world.fact_id).status == RecordStatus.INVALID
    assert undone_by(change) is None  # its undo was undone: the change stands again
    assert undone_by(undo.change) == redo.change


def test_entries_reverted_one_by_one_are_skipped_and_failures_do_not_stop_the_rest(curation, world, agent_memory):
    with curation.bulk("Invalidate one, edit the other") as change:
        first = invalidate(curation, world.fact_id)
        old = agent_memory.get_memory(world.old_fact_id)
        curation.update_memory(world.old_fact_id, version=old.version, content="Alice ate fish.")
    curation.revert(first)
    agent_memory.delete_memory(world.old_fact_id)  # gone since, outside the dashboard

    with pytest.raises(CurationError, match="none of its changes could be undone"):
        curation.revert_bulk(change)
    assert undone_by(change) is None  # no empty undo is left behind

    with curation.bulk("Invalidate again") as second:
        invalidate(curation, world.fact_id)
        curation.create_memory(content="Alice likes trams.", memory_type="fact", user_id="alice")
    agent_memory.delete_memory(world.fact_id)
    undo = curation.revert_bulk(second)

    assert [entry.object_id for entry, _ in undo.failed] == [world.fact_id]
    assert undo.change.entries.count() == 1  # the created memory was deleted again


def test_a_bulk_change_interrupted_part_way_keeps_what_was_done_and_says_so(curation, world):
    with pytest.raises(KeyError), curation.bulk("Delete three") as change:
        curation.delete_memory(world.fact_id)
        curation.delete_memory("no-such-memory")

    change.refresh_from_db()
    assert change.summary == "Delete three (interrupted: 1 change made)"
    assert change.entries.count() == 1

    with pytest.raises(KeyError), curation.bulk("Nothing done"):
        curation.delete_memory("no-such-memory")
    assert not BulkChange.objects.filter(summary="Nothing done").exists()


def test_reconciling_leaves_a_running_bulk_change_alone_even_without_entries_yet(curation, world, agent_memory):
    """An import that skips minutes of batches already in the store has no entries yet: the
    reconcile of pending entries (any process, any time) must not take its bulk change away."""
    with curation.bulk("Import") as change:
        BulkChange.objects.filter(pk=change.pk).update(at=timezone.now() - timedelta(hours=1))
        reconcile_pending(agent_memory, older_than=timedelta(0))
        curation.delete_memory(world.fact_id)

    assert BulkChange.objects.filter(pk=change.pk).exists()
    assert change.entries.count() == 1
