"""The in-memory copy of the links between memories, for graph search.

A graph search walks a few hundred links per query; reading them hop by hop from SQL costs more
than the walk itself. The index layer loads every link once, on the first graph search, and keeps
the copy in step with the change log link by link, whichever process wrote.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable, Sequence
from typing import Any

from ...types import RecordRelation


class LinkIndex:
    """Each memory's links, both ways, in (created_at, id) order, and each link's row by position.

    A row is (pos, id, source_id, source_type, target_id, target_type, relation_type,
    opposite_type, timestamp, metadata JSON text, created_at, version), times as canonical UTC text.
    """

    def __init__(self, rows: Iterable[Sequence[Any]]) -> None:
        self._rows: dict[int, tuple] = {}
        # memory id -> sorted [(created_at, relation id, position, other end)]
        self._links: dict[str, list[tuple[str, str, int, str]]] = {}
        for row in rows:
            self.add(row)

    def add(self, row: Sequence[Any]) -> None:
        position, relation_id, source, target, created_at = row[0], row[1], row[2], row[4], row[10]
        self._rows[position] = tuple(row)
        bisect.insort(self._links.setdefault(source, []), (created_at, relation_id, position, target))
        bisect.insort(self._links.setdefault(target, []), (created_at, relation_id, position, source))

    def remove(self, position: int) -> None:
        row = self._rows.pop(position, None)
        if row is None:
            return
        for end in (row[2], row[4]):
            links = self._links[end]
            links[:] = [link for link in links if link[2] != position]
            if not links:
                del self._links[end]

    def versions(self) -> dict[int, int]:
        """{position: version} of every link (for the consistency check)."""
        return {position: row[11] for position, row in self._rows.items()}

    def links_of(self, memory_ids: Sequence[str]) -> dict[str, list[tuple[int, str]]]:
        """Each memory's links as (position, other end), in link order."""
        return {
            memory_id: [(position, other) for _, _, position, other in self._links[memory_id]]
            for memory_id in memory_ids
            if memory_id in self._links
        }

    def ends(self, positions: Iterable[int], relation_types: Sequence[str] | None = None) -> list[tuple[int, str, str]]:
        """(position, source, target) of these links, of `relation_types` only when given."""
        rows = self._rows
        if relation_types is None:
            return [(position, rows[position][2], rows[position][4]) for position in positions]
        wanted = set(relation_types)
        return [(p, rows[p][2], rows[p][4]) for p in positions if rows[p][6] in wanted]

    def relation(self, position: int) -> RecordRelation:
        (_, relation_id, source, source_type, target, target_type, forward, opposite, timestamp, metadata, created) = (
            self._rows[position][:11]
        )
        return RecordRelation(
            id=relation_id,
            source_record_id=source,
            source_record_type=source_type,
            target_record_id=target,
            target_record_type=target_type,
            relation_type=forward,
            opposite_relation_type=opposite,
            timestamp=timestamp,
            metadata=json.loads(metadata) if metadata else None,
            created_at=created,
            version=self._rows[position][11],
        )
