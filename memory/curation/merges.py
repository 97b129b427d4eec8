"""Merges: a contradiction resolved (one memory supersedes the other) and a group of
near-duplicates merged into one kept memory, each one bulk change undone in one step."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory.curation.recording import CurationError, Recorder, recorded
from memory.engine import BUILTIN_RELATIONS
from memory.models import BulkChange
from memory.text import plural, quoted


class MergeWrites(Recorder):
    """Merges of memories."""

    @recorded
    def resolve_contradiction(self, relation_id: str, keep_id: str) -> BulkChange:
        """Settle a `contradicts` pair: keep one memory and retire the other with a `supersedes`
        link from the kept one (D2: a supersedes link makes its target invalid). A pair has one
        link, so the contradicts link goes and the supersedes link takes its place, as one bulk
        change (one undo brings the contradiction back)."""
        relation = self.agent_memory.get_relation(relation_id)  # KeyError: gone meanwhile
        if relation.relation_type != "contradicts":
            raise CurationError(f"this link is a {relation.relation_type} link now, not a contradiction")
        ends = (relation.source_record_id, relation.target_record_id)
        if keep_id not in ends:
            raise CurationError("keep must be one of the two memories of the pair")
        retired_id = ends[1] if keep_id == ends[0] else ends[0]
        kept = self._memory_end("keep", keep_id)
        retired = self._memory_end("retired", retired_id)
        summary = f"Resolved a contradiction: {quoted(kept.content)} supersedes {quoted(retired.content)}"
        with self.bulk(summary) as change:
            self.delete_link(relation_id)
            self.create_link(
                source_record_id=keep_id,
                target_record_id=retired_id,
                relation_type="supersedes",
                metadata={"created_by": self.actor.name, "resolves": relation_id},
            )
        return change

    @recorded
    def merge_duplicates(self, keep_id: str, retired_ids: list[str], *, how: str = "link") -> Merge:
        """Resolve a group of near-duplicates (AgentMemory.find_duplicates) in one bulk change,
        undone in one step: keep `keep_id` and retire each of `retired_ids`, linked as a
        `duplicates` of the kept memory (`how="link"`: kept → duplicates → retired, which makes it
        invalid but keeps it) or deleted (`how="delete"`).

        The links of the retired memories move to the kept one first (same type, direction and
        metadata), so that nothing the group knew is lost. A link that would join the kept memory
        to itself (it joined the kept memory, or two retired ones) or to a memory it is already
        linked with (one link per pair) is not moved, and is reported: it stays with the retired
        memory (and goes with it when it is deleted; an undo brings it back).
        """
        if how not in ("link", "delete"):
            raise CurationError(f"how must be 'link' or 'delete', not {how!r}")
        retired_ids = list(dict.fromkeys(retired_ids))
        if not retired_ids:
            raise CurationError("retired_ids is empty: choose at least one memory to retire")
        if keep_id in retired_ids:
            raise CurationError("keep is among the memories to retire: keep one, retire the others")
        keep = self._memory_end("keep", keep_id)
        retired = [self._memory_end("retired_ids", memory_id) for memory_id in retired_ids]
        group = {keep_id, *retired_ids}
        partners = {
            other_end(link, keep_id) for link in self.agent_memory.list_relations(record_id=keep_id, limit=None)
        }
        done = "linked as its duplicates" if how == "link" else "deleted"
        merge = Merge(keep=keep, how=how)
        with self.bulk(f"Merged near-duplicates into {quoted(keep.content)}: {len(retired)} {done}") as change:
            merge.change = change
            for record in retired:
                for link in self.agent_memory.list_relations(record_id=record.id, limit=None):
                    other = other_end(link, record.id)
                    if other == keep_id:
                        if how == "delete":
                            merge.skipped.append((link, "it joins the kept memory: moved, it would link it to itself"))
                        elif not is_duplicate_of(link, keep_id):  # one link per pair: the duplicates link replaces it
                            self.delete_link(link.id)
                            partners.discard(record.id)
                            merge.skipped.append((link, "replaced by the duplicates link"))
                        continue
                    if other in group:
                        merge.skipped.append((link, "it joins two of the retired memories"))
                        continue
                    if other in partners:
                        merge.skipped.append((link, "the kept memory is already linked with its other end"))
                        continue
                    self._move_link(link, record.id, keep_id)
                    partners.add(other)
                    merge.moved += 1
                if how == "delete":
                    self.delete_memory(record.id)
                elif record.id not in partners:  # a "duplicates" link from the kept memory may be there already
                    self.create_link(source_record_id=keep_id, target_record_id=record.id, relation_type="duplicates")
            if merge.moved:
                change.summary = f"{change.summary}; moved {plural(merge.moved, 'link')}"[:300]
                change.save(update_fields=["summary"])
        return merge

    def _move_link(self, link: Any, from_id: str, to_id: str) -> None:
        """Make the same link on `to_id` in place of `from_id` (its direction, labels and
        metadata kept), then delete the old one: two entries of the open bulk change."""
        moved_source = link.source_record_id == from_id
        relation_type = link.relation_type
        self.create_link(
            source_record_id=to_id if moved_source else link.source_record_id,
            target_record_id=link.target_record_id if moved_source else to_id,
            relation_type=relation_type,
            opposite_relation_type=None if relation_type in BUILTIN_RELATIONS else link.opposite_relation_type,
            metadata=link.metadata,
        )
        self.delete_link(link.id)


@dataclass
class Merge:
    """What merge_duplicates did: the memory kept, how the others were retired, the bulk change
    that holds it all, how many links moved to the kept memory, and the links left where they
    were (or that went), each with why."""

    keep: Any
    how: str
    change: BulkChange | None = None
    moved: int = 0
    skipped: list[tuple[Any, str]] = field(default_factory=list)


def other_end(link: Any, memory_id: str) -> str:
    """The id at the other end of a link from `memory_id`."""
    return link.target_record_id if link.source_record_id == memory_id else link.source_record_id


def is_duplicate_of(link: Any, keep_id: str) -> bool:
    """Whether a link already retires its target as a duplicate of `keep_id`."""
    return link.source_record_id == keep_id and link.relation_type == "duplicates"
