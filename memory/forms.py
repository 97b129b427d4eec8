"""Forms whose field names are the engine's parameter names, so that a form's cleaned data is the
keyword arguments of one engine call.

Forms check what the browser can get wrong (JSON that does not parse, a number that is not one);
the engine decides the rest, and the curation service turns its ValueErrors back into errors on
the field they name (`memory.curation.field_errors`).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from memory.engine import ImageMimeType, RecordStatus
from memory.engine.ttl import normalize_timestamp
from memory.engine.types import MEMORY_TYPES

ID_WIDGET = {"spellcheck": "false", "autocomplete": "off", "class": "form-control font-monospace"}


class JSONObjectField(forms.CharField):
    """A JSON object typed as text. Blank means None (no metadata)."""

    widget = forms.Textarea(attrs={"rows": 6, "spellcheck": "false", "class": "form-control font-monospace"})

    def __init__(self, *, example: str = '{"source": "chat"}', **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("strip", True)
        self.example = example
        super().__init__(**kwargs)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, dict):
            return json.dumps(value, indent=2, ensure_ascii=False)
        return value

    def to_python(self, value: Any) -> dict | None:
        text = super().to_python(value)
        if not text:
            return None
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValidationError(
                f"Not valid JSON: {error.msg} (line {error.lineno}, column {error.colno}).", code="json"
            ) from None
        except RecursionError:
            raise ValidationError("Not valid JSON: it is nested too deeply.", code="json") from None
        except ValueError as error:  # e.g. an integer of more digits than Python converts
            raise ValidationError(f"Not valid JSON: {error}", code="json") from None
        if not isinstance(parsed, dict):
            raise ValidationError(f"Must be a JSON object, like {self.example}.", code="object")
        return parsed


class TimestampField(forms.CharField):
    """An ISO-8601 time (a browser's datetime-local value, or typed); without a zone it is UTC.

    Cleaned to the engine's canonical UTC text, with the engine's own message when it refuses.
    """

    widget = forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1", "class": "form-control"})

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("help_text", "UTC.")
        super().__init__(**kwargs)

    def prepare_value(self, value: Any) -> Any:
        """Stored UTC text as the datetime-local input shows it: without zone and microseconds."""
        if isinstance(value, str) and value:
            try:
                moment = datetime.fromisoformat(value)
            except ValueError:
                return value
            return moment.replace(tzinfo=None, microsecond=0).isoformat()
        return value

    def to_python(self, value: Any) -> str | None:
        text = super().to_python(value)
        if not text:
            return None
        try:
            return normalize_timestamp(text, self.label or "timestamp")
        except ValueError as error:
            raise ValidationError(str(error), code="timestamp") from None


class VersionedForm(forms.Form):
    """An edit form carrying the version of the record it was opened on, so that the curation
    service refuses to overwrite a change made meanwhile."""

    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)


def id_field(label: str, **kwargs: Any) -> forms.CharField:
    return forms.CharField(
        label=label, required=False, max_length=512, strip=True, widget=forms.TextInput(attrs=ID_WIDGET), **kwargs
    )


class ThreadMetadataForm(VersionedForm):
    metadata = JSONObjectField(label="Metadata", help_text="A JSON object; empty for none.")


class MessageForm(VersionedForm):
    content = forms.CharField(
        label="Content", strip=False, required=False, widget=forms.Textarea(attrs={"rows": 5, "class": "form-control"})
    )
    role = forms.CharField(
        label="Role", max_length=512, widget=forms.TextInput(attrs={"class": "form-control", "list": "message-roles"})
    )
    metadata = JSONObjectField(label="Metadata", help_text="A JSON object; empty for none.")
    timestamp = TimestampField(label="Timestamp", help_text="When it was said, UTC; empty: when it was stored.")


class MemoryForm(forms.Form):
    """Create a memory; MemoryEditForm below edits one (its thread is fixed at creation)."""

    content = forms.CharField(
        label="Content", strip=False, widget=forms.Textarea(attrs={"rows": 5, "class": "form-control"})
    )
    memory_type = forms.ChoiceField(
        label="Type",
        choices=[(t, t) for t in MEMORY_TYPES],
        initial="fact",
        widget=forms.Select(attrs={"class": "form-select"}),
    )
    user_id = id_field("User", help_text="Empty: not tied to a user.")
    agent_id = id_field("Agent", help_text="Empty: not tied to an agent.")
    thread_id = id_field("Thread", help_text="Empty: not tied to a thread.")
    metadata = JSONObjectField(label="Metadata", help_text="A JSON object; empty for none.")
    status = forms.ChoiceField(
        label="Status",
        choices=[(s.value, s.value) for s in RecordStatus],
        initial=RecordStatus.VALID.value,
        widget=forms.Select(attrs={"class": "form-select"}),
        help_text="Invalid memories are kept as history and left out of context cards.",
    )
    ttl_days = forms.IntegerField(
        label="Lifetime (days)",
        required=False,
        min_value=1,
        max_value=36_500,
        widget=forms.NumberInput(attrs={"class": "form-control", "min": "1"}),
        help_text="Expires this many days after it was created; empty: never.",
    )
    timestamp = TimestampField(label="Timestamp", help_text="When it happened, UTC; empty: when it was stored.")

    def clean_content(self) -> str:
        content = self.cleaned_data["content"]
        if not content.strip():
            raise ValidationError("Write what the memory says.", code="blank")
        return content

    def clean_user_id(self) -> str | None:
        return self.cleaned_data["user_id"] or None

    def clean_agent_id(self) -> str | None:
        return self.cleaned_data["agent_id"] or None

    def clean_thread_id(self) -> str | None:
        return self.cleaned_data["thread_id"] or None


class MemoryEditForm(MemoryForm, VersionedForm):
    thread_id = None  # a memory keeps the thread it was made in
    never_expires = forms.BooleanField(
        label="Never expires", required=False, widget=forms.CheckboxInput(attrs={"class": "form-check-input"})
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["ttl_days"].help_text = "Set a new lifetime, counted from creation; empty: keep the current expiry."

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if cleaned.get("never_expires") and cleaned.get("ttl_days"):
            self.add_error("ttl_days", "Give a lifetime or tick \u201cnever expires\u201d, not both.")
        return cleaned


class ImageForm(VersionedForm):
    description = forms.CharField(
        label="Description",
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 3, "class": "form-control"}),
        help_text="The image's searchable text.",
    )
    metadata = JSONObjectField(label="Metadata", help_text="A JSON object; empty for none.")


class ImageUploadForm(forms.Form):
    AS_MESSAGE, AS_RECORD = "message", "image"

    image = forms.FileField(
        label="Image file",
        widget=forms.ClearableFileInput(attrs={"class": "form-control", "accept": "image/png,image/jpeg,image/webp"}),
        help_text="PNG, JPEG or WebP.",
    )
    description = forms.CharField(
        label="Description", required=False, widget=forms.Textarea(attrs={"rows": 2, "class": "form-control"})
    )
    add_as = forms.ChoiceField(
        label="Add as",
        choices=[(AS_MESSAGE, "a new message with this image"), (AS_RECORD, "a standalone image record")],
        initial=AS_MESSAGE,
        widget=forms.RadioSelect(attrs={"class": "form-check-input"}),
    )
    role = forms.CharField(
        label="Message role", initial="user", max_length=512, widget=forms.TextInput(attrs={"class": "form-control"})
    )
    text = forms.CharField(
        label="Message text",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "class": "form-control"}),
        help_text="Optional text sent with the image.",
    )

    def clean_image(self) -> Any:
        upload = self.cleaned_data["image"]
        declared = (upload.content_type or "").lower()
        if declared and declared not in {m.value.lower() for m in ImageMimeType}:
            raise ValidationError(f"{declared} is not an image type the store keeps (PNG, JPEG or WebP).")
        return upload


class ProfileForm(forms.Form):
    information = forms.CharField(
        label="Profile",
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 6, "class": "form-control"}),
        help_text="What the agent should know about them; searchable.",
    )
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=0)  # 0: the profile is new
