"""The plan of a bulk action on memories (chosen with memory.web.forms.bulk.BulkForm): before
anything changes, exactly which records change and what that does to memories' status.

A selection is either ids (`ids`, repeated, or one value of ids a line: rows ticked in a listing, an
area of the embedding map) or everything the memory browser's filters match (`all=1` with the
listing's parameters). The plan is computed from the store as it is (read-only, a few queries per
500 records): the records that change, those already in the wanted state (they are left alone and
not counted), those skipped with a reason, and the memories whose effective status would flip.
The confirmation posts back the ids and versions of exactly the records the preview showed;
`memory.curation` then makes the change in batches, recorded as one bulk change.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.curation.values import StatusChange
from memory.engine import LIFECYCLE_RELATIONS, AgentMemory, MemoryRecord, RecordStatus
from memory.text import plural, quoted
from memory.web.fields import MAX_SELECTION
from memory.web.filters import MemoryFilters

BATCH = 500


SAMPLE = 20


def matching_ids(agent_memory: AgentMemory, filters: MemoryFilters, limit: int = MAX_SELECTION + 1) -> list[str]:
    """The ids of every memory a valid listing form matches, in its order, up to `limit`: the
    engine's cursor pages, 500 at a time."""
    arguments = filters.engine_arguments()
    arguments.pop("cursor", None)
    arguments.pop("limit", None)
    ids: list[str] = []
    cursor = None
    while len(ids) < limit:
        page = agent_memory.list_memories(**arguments, limit=min(BATCH, limit - len(ids)), cursor=cursor)
        ids += [record.id for record in page]
        cursor = page.next_cursor
        if cursor is None:
            break
    return ids


@dataclass
class BulkPlan:
    """What a bulk action would do, read from the store as it is now."""

    action: str
    parameters: dict[str, Any]
    selected: int
    changes: list[tuple[MemoryRecord, dict[str, Any]]] = field(default_factory=list)
    """The records that change, as read, each with the update's fields (empty for a delete or a link)."""
    unchanged: int = 0
    missing: list[str] = field(default_factory=list)
    skipped: list[tuple[MemoryRecord, str]] = field(default_factory=list)
    effects: list[StatusChange] = field(default_factory=list)
    keep: MemoryRecord | None = None

    @property
    def count(self) -> int:
        return len(self.changes)

    @property
    def effects_are_the_changes(self) -> bool:
        """Whether every memory that changes flips status, and no other (a status change, or
        duplicates of valid memories): then the preview says so once instead of listing them."""
        return bool(self.effects) and [c.memory.id for c in self.effects] == [r.id for r, _ in self.changes]

    @property
    def sample(self) -> list[tuple[MemoryRecord, str]]:
        """The first records that change, each with what changes in it, as the preview says it."""
        return [(record, self.change_of(record, fields)) for record, fields in self.changes[:SAMPLE]]

    def change_of(self, record: MemoryRecord, fields: dict[str, Any]) -> str:
        """ "source: "chat" → "import"": what the action changes in one record."""
        key = self.parameters.get("key")
        metadata = record.metadata or {}
        old = json.dumps(metadata[key], ensure_ascii=False)[:60] if key in metadata else "(none)"
        return {
            "set_status": lambda: f"{record.status} → {self.parameters.get('status')}",
            "delete": lambda: "deleted, with its links",
            "set_metadata": lambda: (
                f"{key}: {old} → {json.dumps(self.parameters.get('value'), ensure_ascii=False)[:60]}"
            ),
            "remove_metadata": lambda: f"{key}: {old} → (removed)",
            "set_type": lambda: f"{record.record_type} → {fields.get('memory_type')}",
            "mark_duplicates": lambda: "a duplicate of the kept memory",
        }[self.action]()

    def selection(self) -> str:
        """The ids and versions of the records that change ("id version" a line): what the
        confirmation posts back, so that it acts on exactly these as they were seen."""
        return "\n".join(f"{record.id} {record.version}" for record, _ in self.changes)

    def describe(self) -> str:
        """ "Set the status invalid on 12 memories": the bulk change's summary in the history (what was done)."""
        p, n = self.parameters, plural(self.count, "memory", grouped=True)
        return {
            "set_status": lambda: f"Set the status {p.get('status')} on {n}",
            "delete": lambda: f"Deleted {n}",
            "set_metadata": lambda: f"Set metadata {p.get('key')} = {json.dumps(p.get('value'))[:60]} on {n}",
            "remove_metadata": lambda: f"Removed the metadata key {p.get('key')} from {n}",
            "set_type": lambda: f"Changed {n} into {self.new_types()}",
            "mark_duplicates": lambda: f"Marked {n} as duplicates of {self.kept()}",
        }[self.action]()

    def proposal(self) -> str:
        """ "Remove the metadata key review from 8 memories": what the preview asks and its
        button says (what will be done); with nothing to change, that there is nothing to do."""
        p, n = self.parameters, plural(self.count, "memory", grouped=True)
        if not self.count:
            return "Nothing to do: no memory would change"
        return {
            "set_status": lambda: f"Set the status {p.get('status')} on {n}",
            "delete": lambda: f"Delete {n}",
            "set_metadata": lambda: f"Set the metadata key {p.get('key')} to {json.dumps(p.get('value'))[:60]} on {n}",
            "remove_metadata": lambda: f"Remove the metadata key {p.get('key')} from {n}",
            "set_type": lambda: f"Change {n} into {self.new_types()}",
            "mark_duplicates": lambda: f"Mark {n} as duplicates of {self.kept()}",
        }[self.action]()

    def new_types(self) -> str:
        """The new type as the sentence needs it: "preferences", or "a preference" for one memory."""
        memory_type = str(self.parameters.get("memory_type"))
        return f"a {memory_type}" if self.count == 1 else plural(2, memory_type).removeprefix("2 ")

    def kept(self) -> str:
        """The kept memory of mark_duplicates, by its text."""
        return quoted(self.keep.content) if self.keep else str(self.parameters.get("keep"))


def batches(items: Sequence[Any], size: int = BATCH) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def plan(agent_memory: AgentMemory, action: str, parameters: dict[str, Any], ids: Sequence[str]) -> BulkPlan:
    """What `action` with `parameters` would do to the memories `ids` (read in batches of 500:
    one lifecycle query and one read per record). ValueError for a kept memory that does not exist."""
    result = BulkPlan(action, parameters, len(ids))
    if action == "mark_duplicates":
        try:
            result.keep = agent_memory.get_memory(parameters["keep"])
        except KeyError:
            raise ValueError(f"keep names no memory: {parameters['keep']!r}") from None
        linked = {
            link.target_record_id if link.source_record_id == result.keep.id else link.source_record_id: link
            for link in agent_memory.list_relations(record_id=result.keep.id, limit=None)
        }
    for chunk in batches(ids):
        states = agent_memory.lifecycle(chunk)
        for memory_id in chunk:
            state = states.get(memory_id)
            if state is None:  # gone, expired (awaiting purge) or not a memory
                result.missing.append(memory_id)
                continue
            record = agent_memory.get_memory(memory_id)
            if action == "set_status":
                plan_status(result, record, state, parameters["status"])
            elif action == "delete":
                result.changes.append((record, {}))
            elif action == "set_metadata":
                metadata = record.metadata or {}
                key, value = parameters["key"], parameters["value"]
                if key in metadata and metadata[key] == value:
                    result.unchanged += 1
                else:
                    result.changes.append((record, {"metadata": {**metadata, key: value}}))
            elif action == "remove_metadata":
                metadata = record.metadata or {}
                if parameters["key"] not in metadata:
                    result.unchanged += 1
                else:
                    rest = {k: v for k, v in metadata.items() if k != parameters["key"]}
                    result.changes.append((record, {"metadata": rest}))
            elif action == "set_type":
                if record.record_type == parameters["memory_type"]:
                    result.unchanged += 1
                else:
                    result.changes.append((record, {"memory_type": parameters["memory_type"]}))
            else:
                plan_duplicate(result, record, state, linked.get(memory_id))
    if action == "delete":
        result.effects = revived_by_deleting(agent_memory, [record for record, _ in result.changes])
    return result


def plan_status(result: BulkPlan, record: MemoryRecord, state: Any, wanted: str) -> None:
    """A memory's effective status is its own flag unless a link retires it. Setting `invalid`
    changes the valid ones; setting `valid` changes those invalid by their flag alone. One that a
    link retires stays invalid whatever its flag: it is skipped, with the reason."""
    if state.status.value == wanted:
        result.unchanged += 1
    elif wanted == "valid" and state.retired_by:
        result.skipped.append((record, "a link retires it: delete or retype that link to make it valid"))
    else:
        result.changes.append((record, {"status": RecordStatus(wanted)}))
        result.effects.append(StatusChange(record, state.status.value, wanted))


def plan_duplicate(result: BulkPlan, record: MemoryRecord, state: Any, link: Any) -> None:
    """The kept memory is the source of each `duplicates` link and stays as it is; each other
    memory is the link's target and becomes invalid (if it was valid)."""
    assert result.keep is not None
    if record.id == result.keep.id:
        return  # the kept memory may be in the selection: it is not its own duplicate
    if link is not None and link.relation_type == "duplicates" and link.source_record_id == result.keep.id:
        result.unchanged += 1
    elif link is not None:
        result.skipped.append((record, f"already linked to the kept memory ({link.label_from(record.id)})"))
    else:
        result.changes.append((record, {}))
        if state.status is RecordStatus.VALID:
            result.effects.append(StatusChange(record, "valid", "invalid"))


def revived_by_deleting(agent_memory: AgentMemory, records: Sequence[MemoryRecord]) -> list[StatusChange]:
    """The memories (not deleted with them) that become valid again when `records` go: those
    retired only by lifecycle links from the deleted ones."""
    deleted = {record.id for record in records}
    retiring: dict[str, set[str]] = {}
    for record in records:
        for link in agent_memory.list_relations(
            record_id=record.id, relation_types=list(LIFECYCLE_RELATIONS), limit=None
        ):
            if link.source_record_id == record.id and link.target_record_id not in deleted:
                retiring.setdefault(link.target_record_id, set()).add(link.id)
    effects = []
    for chunk in batches(list(retiring)):
        for target_id, state in agent_memory.lifecycle(chunk).items():
            if state.own_status is RecordStatus.VALID and set(state.retired_by) <= retiring[target_id]:
                effects.append(StatusChange(agent_memory.get_memory(target_id), "invalid", "valid"))
    return effects
