"""Decisions on the secrets and personal data the engine found (the `sensitive` review queue):
redact a finding, or judge it not sensitive.

Redact replaces the value in the record's text by `[REDACTED:<kind>]` through the record's own
recorded edit (so the history has it, and the engine embeds the record again), then removes the
value from the places that kept copies: the history's entries of the record, the activity log's
events, the record's line in kept import uploads, and the files of the store and of Django's
database (as an erasure does). "Not
sensitive" is remembered for that record and that value (a digest, never the value), so that a
rescan does not bring it back.
"""

from __future__ import annotations

import hashlib

from memory.curation.erasure import replace_in_history, replace_in_uploads, scrub_django_database
from memory.curation.recording import CurationError, Recorder
from memory.engine import MEMORY_TYPES, SensitiveFinding
from memory.models import CurationEntry, ObjectKind, SensitiveDismissal

REDACTION = "[REDACTED:{kind}]"


class SensitiveWrites(Recorder):
    """Redacting and dismissing findings of secrets and personal data."""

    def redact_finding(self, finding_id: str) -> CurationEntry | None:
        """Replace a finding's value (every occurrence of it in the record's text) with
        `[REDACTED:<kind>]`, recorded as an edit of the record, and remove it from the record's
        history, from the activity log, from its line in kept import uploads and from the files.
        KeyError when the finding is gone; CurationError when the record's text no longer holds
        the value."""
        finding = self.agent_memory.get_finding(finding_id)
        record = self._record_of(finding)
        text = record.content or ""
        value = text[finding.start : finding.end]
        if not value or _digest(value) != finding.digest:
            raise CurationError("the record's text changed since this was found: look at the queue again")
        marker = REDACTION.format(kind=finding.kind)
        entry = self._write_text(finding, record, text.replace(value, marker))
        # the record's entries, and its thread's (a deleted thread's snapshot holds its messages)
        replace_in_history([finding.record_id, *([finding.thread_id] if finding.thread_id else [])], value, marker)
        self.agent_memory.redact_activity(value, marker)
        replace_in_uploads(finding.record_id, value, marker)
        self.agent_memory.scrub_files()
        scrub_django_database()
        return entry

    def dismiss_finding(self, finding_id: str) -> SensitiveDismissal:
        """Judge a finding not sensitive: it leaves the queue, and stays out of it for this record
        and this value whatever rescans find. KeyError when the finding is gone."""
        finding = self.agent_memory.get_finding(finding_id)
        dismissal, _ = SensitiveDismissal.objects.get_or_create(
            record_id=finding.record_id,
            digest=finding.digest,
            defaults={**self.actor.authorship(), "kind": finding.kind, "preview": finding.preview},
        )
        return dismissal

    def _record_of(self, finding: SensitiveFinding):
        memory = self.agent_memory
        if finding.record_type in MEMORY_TYPES:
            return memory.get_memory(finding.record_id)
        if finding.record_type == "message":
            return memory.get_message_record(finding.thread_id or "", finding.record_id)
        if finding.record_type == "image":
            return memory.get_image(finding.record_id)
        if finding.record_type == "user_profile":
            return memory.get_user(finding.record_id)
        return memory.get_agent(finding.record_id)

    def _write_text(self, finding: SensitiveFinding, record, text: str) -> CurationEntry | None:
        """The record's recorded edit with its new text (each noun's own write)."""
        if finding.record_type in MEMORY_TYPES:
            return self.update_memory(finding.record_id, version=record.version, content=text)
        if finding.record_type == "message":
            return self.update_message(finding.thread_id, finding.record_id, version=record.version, content=text)
        if finding.record_type == "image":
            return self.update_image(finding.record_id, version=record.version, description=text)
        kind = ObjectKind.USER if finding.record_type == "user_profile" else ObjectKind.AGENT
        return self.save_profile(kind, finding.record_id, information=text, version=record.version)


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
