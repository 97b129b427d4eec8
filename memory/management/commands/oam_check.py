"""Check the memory store's consistency: `manage.py oam_check [--repair]`.

Prints each kind of inconsistency with its count and a few example ids: records with text but no
vector or with a vector of the wrong dimension, orphan links, orphan images and image bytes, the
in-memory index out of step with the database, and records deleted through the dashboard that
search still returns. `--repair` fixes what is safe (re-embeds, deletes orphan links, rebuilds
the index; never a record) and checks again. First, curation history entries an interrupted
change left pending (`--pending-after` seconds ago or more, default 300) are settled against the
store: confirmed when it holds their change, dropped when not (memory.curation). Last, the activity
log's calls older than its retention (OAM_ACTIVITY_RETENTION_DAYS) are purged, and counted.
Exit status 0 when nothing remains, 1 otherwise.
Each run is kept in Django's database (CheckRun): the overview shows the latest.

`--sensitive` instead scans every stored record's text for secrets and personal data (what was
stored before detection, or under another version of the detectors), with a progress bar on
standard error, and keeps the findings for the review queue (/review/sensitive/); values judged
not sensitive stay off the queue. It changes no record, whatever OAM_SENSITIVE_POLICY says.
"""

from __future__ import annotations

from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.curation.consistency import ActivityPurge, check_and_record
from memory.management.progress import progress_bar
from memory.services import get_agent_memory


class Command(BaseCommand):
    help = "Check the memory store for inconsistencies (exit status 1 when some remain); --repair fixes the safe ones."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--repair", action="store_true", help="fix what is safe, then check again")
        parser.add_argument("--examples", type=int, default=5, help="example ids shown per finding (default 5)")
        parser.add_argument(
            "--pending-after",
            type=float,
            default=300,
            help="settle history entries pending this many seconds or more (default 300; 0 after a crash, "
            "with no server running)",
        )
        parser.add_argument(
            "--sensitive",
            action="store_true",
            help="scan every stored record's text for secrets and personal data, keeping the findings for "
            "/review/sensitive/, instead of checking consistency",
        )
        parser.add_argument("--batch-size", type=int, default=500, help="records read per batch by --sensitive")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar on standard error")

    def handle(self, *args, repair: bool, examples: int, pending_after: float, sensitive: bool, **options) -> None:
        if sensitive:
            self.scan_sensitive(options["batch_size"], options["no_progress"])
            return
        if examples < 1:
            raise CommandError("--examples must be at least 1")
        if pending_after < 0:
            raise CommandError("--pending-after must be 0 or more")
        result, _ = check_and_record(
            get_agent_memory(),
            repair=repair,
            examples=examples,
            via="command",
            pending_after=timedelta(seconds=pending_after),
        )
        for finding in result.findings:
            if not finding.found:
                self.stdout.write(f"ok    {finding.name}: none ({finding.description})")
                continue
            counts = f"{finding.found} found"
            if repair and finding.repairable:
                counts += f", {finding.repaired} repaired, {finding.remaining} remaining"
            elif not finding.repairable:
                counts += " (reported only: not repaired)"
            status = "FIXED" if not finding.remaining else "FOUND"
            self.stdout.write(f"{status} {finding.name}: {counts} ({finding.description})")
            self.stdout.write(f"      e.g. {', '.join(finding.examples)}")
        self.stdout.write(purge_line(result.activity))
        if not result.ok:
            remaining = sum(finding.remaining for finding in result.findings)
            hint = "" if repair else "; `manage.py oam_check --repair` fixes the safe ones"
            raise CommandError(f"{remaining} inconsistenc{'y remains' if remaining == 1 else 'ies remain'}{hint}")
        self.stdout.write("The memory store is consistent.")

    def scan_sensitive(self, batch_size: int, no_progress: bool) -> None:
        """Rescan every stored record's text, a batch at a time, drawing the progress."""
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1")
        agent_memory = get_agent_memory()
        total = agent_memory.count_texts()
        after, read, found = 0, 0, 0
        with progress_bar("scan", " records", disable=no_progress) as progress:
            while True:
                after, batch_read, batch_found = agent_memory.rescan_findings(after, batch_size)
                read, found = read + batch_read, found + batch_found
                if batch_read:
                    progress(read, max(total, read))
                if not after:
                    break
        records = f"{read} record{'' if read == 1 else 's'}"
        self.stdout.write(
            f"scanned {records}: {found} finding{'' if found == 1 else 's'} of secrets or personal data"
            + (" (review them on /review/sensitive/)" if found else "")
        )


def purge_line(purge: ActivityPurge) -> str:
    if not purge.retention_days:
        return "keep  activity: the log is kept forever (OAM_ACTIVITY_RETENTION_DAYS=0), nothing purged"
    calls = f"{purge.purged} recorded call{'' if purge.purged == 1 else 's'}"
    return f"purge activity: {calls} older than {purge.retention_days} days deleted"
