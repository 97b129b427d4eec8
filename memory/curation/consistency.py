"""The consistency check as the dashboard runs it: the engine's check (AgentMemory.check) plus a
probe only Django can make, since the curation history is Django's: records deleted through the
dashboard (or the API) must be gone from search.

Used by `manage.py oam_check` and the overview's panel, which also purge the activity log of
calls older than its retention.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta

from memory.curation.recording import RECONCILE_AFTER, Reconciled, reconcile_pending
from memory.engine import (
    SEARCHABLE_TYPES,
    ActivityConfig,
    AgentMemory,
    CheckFinding,
    CheckReport,
    Snapshot,
    unrecorded,
)
from memory.models import Action, CheckRun, CurationEntry

PROBE_RECORDS = 200
"""How many of the most recently deleted records the probe searches for (one search each)."""
PROBE_DEPTH = 20


@dataclass(frozen=True)
class ActivityPurge:
    """The recorded calls a check purged for being older than the retention (`retention_days`;
    0: the log is kept forever, and nothing is purged)."""

    purged: int
    retention_days: int


@dataclass(frozen=True)
class ConsistencyResult:
    """The engine's report and the probe's finding, in one list for printing; and the activity
    log's purge, which is housekeeping rather than a finding."""

    report: CheckReport
    probe: CheckFinding
    history: CheckFinding | None = None
    activity: ActivityPurge = ActivityPurge(0, 0)

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
            with unrecorded():  # the check's own probe, not a retrieval anyone was served
                hits = store.search(
                    text, k=PROBE_DEPTH, record_types=[record.record_type], include_invalid_results=True
                )
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


def purge_old_activity(agent_memory: AgentMemory, now: datetime | None = None) -> ActivityPurge:
    """Delete the recorded calls older than the retention (OAM_ACTIVITY_RETENTION_DAYS). Also when
    this process records nothing (OAM_ACTIVITY=off): agents' own processes may fill the log."""
    config = agent_memory.activity.config if agent_memory.activity is not None else ActivityConfig.from_env()
    if not config.retention_days:
        return ActivityPurge(0, 0)
    before = (now or datetime.now(UTC)) - timedelta(days=config.retention_days)
    return ActivityPurge(agent_memory.purge_activity(before=before.isoformat()), config.retention_days)


def run_check(
    agent_memory: AgentMemory, *, repair: bool = False, examples: int = 5, pending_after: timedelta = RECONCILE_AFTER
) -> ConsistencyResult:
    """Settle the history entries pending for `pending_after` or more (memory.curation), then the
    engine's check (repairing when asked), then the probe (after the repairs: a rebuilt index must
    not bring a deleted record back); and purge the activity log of calls past its retention."""
    settled = reconcile_pending(agent_memory, older_than=pending_after)
    report = agent_memory.check(repair=repair, examples=examples)
    probe = deleted_still_searchable(agent_memory, examples=examples)
    return ConsistencyResult(report, probe, pending_finding(settled), purge_old_activity(agent_memory))


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
