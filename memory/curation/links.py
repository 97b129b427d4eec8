"""Writes of links between memories: make (checked first, so a preview never promises what the
store refuses), retype, delete, and what each does to the status of its target memory."""

from __future__ import annotations

from typing import Any

from memory.curation.recording import CurationError, Recorder, recorded
from memory.curation.values import StatusChange, differences, expecting, unchanged_since
from memory.engine import (
    BUILTIN_RELATIONS,
    LIFECYCLE_RELATIONS,
    NOT_SET,
    RecordRelation,
    RecordStatus,
    Snapshot,
    relation_labels,
    relation_to_json,
)
from memory.models import Action, CurationEntry, ObjectKind
from memory.text import short_id


class LinkWrites(Recorder):
    """Links' writes."""

    @recorded
    def create_link(
        self,
        *,
        source_record_id: str,
        target_record_id: str,
        relation_type: str,
        opposite_relation_type: str | None = None,
        metadata: dict | None = None,
    ) -> CurationEntry:
        """Link two memories, source → target (a lifecycle type retires the target)."""
        source, target = self.check_link(
            source_record_id=source_record_id,
            target_record_id=target_record_id,
            relation_type=relation_type,
            opposite_relation_type=opposite_relation_type,
        )
        relation_id = self.agent_memory.link_records(
            source_record_id,
            source.record_type,
            target_record_id,
            target.record_type,
            relation_type,
            **({"opposite_relation_type": opposite_relation_type} if opposite_relation_type else {}),
            **({"metadata": metadata} if metadata is not None else {}),
        )
        return self._linked(relation_id)

    def _linked(self, relation_id: str) -> CurationEntry:
        """Record a link just made."""
        relation = self.agent_memory.get_relation(relation_id)
        return self._record(
            ObjectKind.LINK,
            relation_id,
            Action.LINK,
            f"Linked {link_words(relation)}",
            after=relation_to_json(relation),
        )

    def check_link(
        self,
        *,
        source_record_id: str,
        target_record_id: str,
        relation_type: str,
        opposite_relation_type: str | None = None,
    ) -> tuple[Any, Any]:
        """The two memories of a link the store would make, or the reason it would not (a missing
        end, a memory linked to itself, labels the engine refuses, a pair already linked: one link
        per pair, either way), so that a preview never promises a link its confirmation refuses."""
        source = self._memory_end("source_record_id", source_record_id)
        target = self._memory_end("target_record_id", target_record_id)
        if source_record_id == target_record_id:
            raise CurationError("target_record_id is the source: a memory cannot be linked to itself")
        relation_labels(relation_type, opposite_relation_type or NOT_SET)
        for link in self.agent_memory.list_relations(record_id=source_record_id, limit=None):
            if target_record_id in (link.source_record_id, link.target_record_id):
                raise CurationError(
                    f"target_record_id is already linked to the source ({link.label_from(source_record_id)}): "
                    "one link per pair of memories; edit that link instead"
                )
        return source, target

    def _memory_end(self, name: str, memory_id: str) -> Any:
        try:
            return self.agent_memory.get_memory(memory_id)
        except KeyError:
            raise CurationError(f"{name} names no memory: {memory_id!r}") from None

    @recorded
    def update_link(self, relation_id: str, *, version: int, **fields: Any) -> CurationEntry | None:
        """Retype a link (`relation_type`, `opposite_relation_type`) or change its `metadata`."""
        before = self.agent_memory.get_relation(relation_id)
        relation_type = fields.get("relation_type", before.relation_type)
        if relation_type in BUILTIN_RELATIONS:
            fields.pop("opposite_relation_type", None)  # a built-in type has its fixed opposite
        elif "opposite_relation_type" in fields and not fields["opposite_relation_type"]:
            fields["opposite_relation_type"] = relation_type  # left empty: it reads the same both ways
        changes = differences(before, fields)
        if not changes:
            unchanged_since(before, version)
            return None
        self.agent_memory.update_record_link(relation_id, expected_version=version, **changes)
        after = self.agent_memory.get_relation(relation_id)
        return self._record(
            ObjectKind.LINK,
            relation_id,
            Action.UPDATE,
            f"Changed the link {link_words(after)}",
            relation_to_json(before),
            relation_to_json(after),
        )

    @recorded
    def delete_link(self, relation_id: str, *, version: int | None = None) -> CurationEntry:
        """Unlink; `version` as in delete_memory."""
        relation = self.agent_memory.get_relation(relation_id)
        if not self.agent_memory.delete_record_link(relation_id=relation_id, **expecting(version)):
            raise KeyError(f"no relation {relation_id!r}")
        return self._record(
            ObjectKind.LINK,
            relation_id,
            Action.UNLINK,
            f"Unlinked {link_words(relation)}",
            before=Snapshot(relations=[relation]).to_json(),
        )

    def link_effects(self, *, add: tuple[str, str] | None = None, remove: Any = None) -> list[StatusChange]:
        """What a link change does to the status of its target memory, before it is made:
        `add` is (target id, relation type) of a link to create, `remove` a relation to delete.
        A retype is both (its old type removed, its new type added)."""
        target = add[0] if add else remove.target_record_id
        state = self.agent_memory.lifecycle([target]).get(target)
        if state is None:
            return []
        retired_by = set(state.retired_by)
        if remove is not None:
            retired_by.discard(remove.id)
        if add is not None and add[1] in LIFECYCLE_RELATIONS:
            retired_by.add("the new link")
        valid_after = state.own_status == RecordStatus.VALID and not retired_by
        before, after = state.status.value, "valid" if valid_after else "invalid"
        if before == after:
            return []
        memory = self.agent_memory.get_memory(target)
        return [StatusChange(memory, before, after)]


def link_words(relation: RecordRelation) -> str:
    """A link as its history summary names it: "1a2b3c4d… supersedes 5e6f7a8b…", its ends
    written by memory.text.short_id, the one rule the pages show ids by."""
    return f"{short_id(relation.source_record_id)} {relation.relation_type} {short_id(relation.target_record_id)}"
