"""The export and import forms (/settings/transfer/): what part of the store to export, and an oam-export
file to import, its header checked before anything is kept."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from memory.engine import ExportFormatError, ExportReader
from memory.web.fields import id_field


class ExportForm(forms.Form):
    """What to export: the whole store, or at most one of a user's, an agent's or a thread's part
    (the names of `manage.py oam_export`'s options and of AgentMemory.snapshot's arguments)."""

    user_id = id_field("User id", help_text="Everything deleting this user would remove.")
    agent_id = id_field("Agent id", help_text="Everything deleting this agent would remove.")
    thread_id = id_field("Thread id", help_text="The thread, its messages, images and memories.")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        given = [name for name in ("user_id", "agent_id", "thread_id") if data.get(name)]
        if len(given) > 1:
            raise ValidationError("Give at most one of user id, agent id and thread id (none: the whole store).")
        return data

    def scope(self) -> dict[str, str]:
        """The scope argument of the export: {} for the whole store."""
        return {name: value for name, value in self.cleaned_data.items() if value}


EXPORT_HEADER_BYTES = 64 * 1024
"""The most of an upload's first line read to check its header (an oam-export header is short)."""


class ImportForm(forms.Form):
    """An oam-export file to import. Its header (format and version) is checked here, before the
    upload is kept or any job starts: a file of another version is a form error."""

    file = forms.FileField(
        label="Export file",
        widget=forms.ClearableFileInput(attrs={"class": "form-control", "accept": ".jsonl,.json,.txt"}),
        help_text="An oam-export file (JSON Lines, format version 1), as the download or oam_export writes it.",
    )

    def __init__(self, *args: Any, max_bytes: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_bytes = max_bytes

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        if upload.size > self.max_bytes:
            raise ValidationError(
                f"The file is {upload.size:,} bytes; the dashboard takes files up to {self.max_bytes:,} bytes "
                "(OAM_IMPORT_MAX_BYTES). Import bigger ones with manage.py oam_import."
            )
        upload.seek(0)
        try:
            # The header line is short: read at most HEADER_BYTES of it, so that a file without
            # line breaks (a minified JSON) is refused without being read whole into memory.
            reader = ExportReader(upload.readline(EXPORT_HEADER_BYTES) for _ in range(1))
        except ExportFormatError as error:
            raise ValidationError(f"{upload.name}: {error}") from None
        finally:
            upload.seek(0)
        upload.header = reader.header
        return upload
