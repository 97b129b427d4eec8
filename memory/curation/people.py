"""Writes of users and agents: their profile text, the profile alone deleted, or the owner with everything they own."""

from __future__ import annotations

from typing import Any

from memory.curation.recording import Recorder, recorded
from memory.curation.values import PROFILE_KINDS, describe_snapshot, unchanged_since
from memory.engine import record_to_json
from memory.models import Action, CurationEntry, ObjectKind


class PeopleWrites(Recorder):
    """Users' and agents' writes."""

    def profile(self, kind: str, owner_id: str) -> Any:
        """A user's or agent's stored profile, or None: what a write compares with and records.
        The pages' read of it is memory.queries.people.profile_of, a sibling layer this one does
        not import (the layers contract keeps curation and queries independent)."""
        get = self.agent_memory.get_user if kind == ObjectKind.USER else self.agent_memory.get_agent
        try:
            return get(owner_id)
        except KeyError:
            return None

    @recorded
    def save_profile(self, kind: str, owner_id: str, *, information: str, version: int) -> CurationEntry | None:
        """Write a user's or agent's profile text; `version` is the profile's as it was read, 0
        when it had none (then two people writing it at once cannot both succeed)."""
        before = self.profile(kind, owner_id)
        if before is not None and before.content == information:
            unchanged_since(before, version)
            return None
        add = self.agent_memory.add_user if kind == ObjectKind.USER else self.agent_memory.add_agent
        add(owner_id, information, expected_version=version)
        after = self.profile(kind, owner_id)
        return self._record(
            kind,
            owner_id,
            Action.UPDATE if before else Action.CREATE,
            f"{'Edited' if before else 'Wrote'} the {kind}'s profile",
            record_to_json(before) if before else None,
            record_to_json(after),
        )

    @recorded
    def delete_profile(self, kind: str, owner_id: str) -> CurationEntry:
        """Delete a user's or agent's profile alone; what they own stays."""
        if self.profile(kind, owner_id) is None:
            raise KeyError(f"no {kind} profile {owner_id!r}")
        profile_type = f"{kind}_profile"
        snapshot = self.agent_memory.snapshot(record_ids=[(profile_type, owner_id)])
        delete = self.agent_memory.delete_user if kind == ObjectKind.USER else self.agent_memory.delete_agent
        return self._delete(
            kind, owner_id, snapshot, lambda: delete(owner_id, cascade=False), f"Deleted the {kind}'s profile"
        )

    @recorded
    def delete_owner(self, kind: str, owner_id: str) -> CurationEntry:
        """Delete a user or agent with everything they own (profile, threads, records, links)."""
        snapshot = self.agent_memory.snapshot(**{PROFILE_KINDS[kind]: owner_id})
        if not snapshot.threads and not snapshot.records:
            raise KeyError(f"no {kind} {owner_id!r}")
        delete = self.agent_memory.delete_user if kind == ObjectKind.USER else self.agent_memory.delete_agent
        return self._delete(
            kind,
            owner_id,
            snapshot,
            lambda: delete(owner_id, cascade=True),
            f"Deleted the {kind} with {describe_snapshot(snapshot)}",
        )
