"""The consistency check as the dashboard runs it: the engine's check (AgentMemory.check) plus a
probe only Django can make, since the curation history is Django's: records deleted through the
dashboard (or the API) must be gone from search.

Used by `manage.py oam_check` and the overview's panel.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from datetime import timedelta

from memory.curation.recording import RECONCILE_AFTER, Reconciled, reconcile_pending
from memory.engine import SEARCHABLE_TYPES, AgentMemory, CheckFinding, CheckReport, Snapshot
from memory.models import Action, CheckRun, CurationEntry

PROBE_RECORDS = 200
"""How many of the most recently deleted records the probe searches for (one search each)."""
PROBE_DEPTH = 20


@dataclass(frozen=True)
class ConsistencyResult:
    """The engine's report and the probe's finding, in one list for printing."""

    report: CheckReport
    probe: CheckFinding
    history: CheckFinding | None = None

    @property
    def findings(self) -> tuple[CheckFinding, ...]:
        return (*self.report.findings, self.probe, *([self.history] if self.history else []))

    @property
    def ok(self) -> bool:
        return not any(finding.remaining for finding in self.findings)


def deleted_still_searchable(
    agent_memory: AgentMemory, *, limit: int = PROBE_RECORDS, examples: int = 5
) -> CheckFinding:
    """Search for each record the history's delete entries removed (newest first, `limit` at
    most), by its own text, and report those a search still returns. A record that exists again
    (restored, or re-created with its id) is not probed."""
    store = agent_memory.store
    probed, found = 0, []
    entries = CurationEntry.objects.filter(action=Action.DELETE).exclude(before=None).only("before")
    for entry in entries.iterator():
        try:
            records = Snapshot.from_json(entry.before).records
        except ValueError:
            continue  # not a snapshot (a link's delete entry keeps the relation alone)
        for record in records:
            text = record.content
            if probed >= limit:
                break
            if record.record_type not in SEARCHABLE_TYPES or not text:
                continue
            if store.get(record.record_type, record.id) is not None:
                continue
            probed += 1
            hits = store.search(text, k=PROBE_DEPTH, record_types=[record.record_type], include_invalid_results=True)
            if any(hit.id == record.id for hit, _ in hits):
                found.append(record.id)
        if probed >= limit:
            break
    return CheckFinding(
        name="deleted_still_searchable",
        description=f"records deleted through the dashboard that search still returns ({probed} probed)",
        found=len(found),
        remaining=len(found),
        examples=tuple(found[:examples]),
    )


def pending_finding(settled: Reconciled) -> CheckFinding:
    """What reconciling the history found: entries an interrupted change left pending, all settled."""
    found = settled.confirmed + settled.dropped
    return CheckFinding(
        name="history_pending",
        description=(
            "curation history entries left pending by an interrupted change, settled against the store: "
            f"{settled.confirmed} confirmed (the store holds their change), {settled.dropped} dropped (it does not)"
        ),
        found=found,
        remaining=0,
        repairable=True,
    )


def run_check(
    agent_memory: AgentMemory, *, repair: bool = False, examples: int = 5, pending_after: timedelta = RECONCILE_AFTER
) -> ConsistencyResult:
    """Settle the history entries pending for `pending_after` or more (memory.curation), then the
    engine's check (repairing when asked), then the probe (after the repairs: a rebuilt index must
    not bring a deleted record back)."""
    settled = reconcile_pending(agent_memory, older_than=pending_after)
    report = agent_memory.check(repair=repair, examples=examples)
    probe = deleted_still_searchable(agent_memory, examples=examples)
    return ConsistencyResult(report, probe, pending_finding(settled))


def check_and_record(
    agent_memory: AgentMemory,
    *,
    repair: bool = False,
    examples: int = 5,
    user=None,
    via: str = "dashboard",
    pending_after: timedelta = RECONCILE_AFTER,
) -> tuple[ConsistencyResult, CheckRun]:
    """run_check, and keep its result as a CheckRun (the overview shows the latest): by `user`
    (None: the command line) through `via` ("dashboard" or "command")."""
    started = time.perf_counter()
    result = run_check(agent_memory, repair=repair, examples=examples, pending_after=pending_after)
    run = CheckRun.objects.create(
        actor=user,
        actor_name=user.get_username() if user is not None else "manage.py oam_check",
        via=via,
        repaired=repair,
        ok=result.ok,
        findings=[{**asdict(finding), "examples": list(finding.examples)} for finding in result.findings],
        seconds=round(time.perf_counter() - started, 3),
    )
    return result, run
