"""Forms that write records: threads, messages, memories, images, profiles and links. Field
names are the engine's parameter names, so that a form's cleaned data is the keyword arguments of
one curation call (memory.curation).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from memory.engine import MEMORY_TYPES, ImageMimeType, RecordStatus
from memory.web.fields import (
    ID_MAX_LENGTH,
    MAX_TTL_DAYS,
    MESSAGE_ROLES,
    JSONObjectField,
    MessageRoleField,
    TimestampField,
    check_relation_label,
    id_field,
)


class VersionedForm(forms.Form):
    """An edit form carrying the version of the record it was opened on, so that the curation
    service refuses to overwrite a change made meanwhile."""

    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)


class ThreadMetadataForm(VersionedForm):
    metadata = JSONObjectField(label="Metadata", help_text="A JSON object; empty for none.")


class MessageForm(VersionedForm):
    """Edit a message. `stored_role`: the message's role; one that is none of MESSAGE_ROLES stays
    a choice (shown as it is), so that an edit of anything else keeps it."""

    content = forms.CharField(
        label="Content", strip=False, required=False, widget=forms.Textarea(attrs={"rows": 5, "class": "form-control"})
    )
    role = MessageRoleField()
    metadata = JSONObjectField(label="Metadata", help_text="A JSON object; empty for none.")
    timestamp = TimestampField(label="Timestamp", help_text="When it was said, UTC; empty: when it was stored.")

    def __init__(self, *args: Any, stored_role: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if stored_role is not None and stored_role not in MESSAGE_ROLES:
            self.fields["role"] = MessageRoleField(
                stored=stored_role,
                help_text=f"\u201c{stored_role}\u201d is not one of the roles: choose one to correct it, "
                "or keep it as it is.",
            )


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
        max_value=MAX_TTL_DAYS,
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
        label="Remove the expiry (never expire)",
        required=False,
        widget=forms.CheckboxInput(attrs={"class": "form-check-input"}),
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
    role = MessageRoleField(label="Message role", initial="user")
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


def relation_type_field() -> forms.CharField:
    return forms.CharField(
        label="Relation",
        max_length=ID_MAX_LENGTH,
        widget=forms.TextInput(attrs={"class": "form-control", "list": "relation-types", "autocomplete": "off"}),
        help_text="A built-in type (supersedes, refines, duplicates, supports, contradicts) or a label of your own.",
    )


def opposite_type_field() -> forms.CharField:
    return forms.CharField(
        label="Read backwards as",
        required=False,
        max_length=ID_MAX_LENGTH,
        widget=forms.TextInput(attrs={"class": "form-control", "autocomplete": "off"}),
        help_text="For a label of your own: how the link reads from the target (empty: the same label).",
    )


class PreviewedForm(forms.Form):
    """A change shown before it is made. `confirm` carries a digest of the values the person saw
    in the preview: a change of any of them after it shows the preview again instead of making
    a change nobody saw the effect of."""

    confirm = forms.CharField(required=False, widget=forms.HiddenInput)

    def preview_digest(self) -> str:
        values = {name: self.cleaned_data.get(name) for name in self.fields if name != "confirm"}
        return hashlib.sha256(json.dumps(values, sort_keys=True, default=str).encode()).hexdigest()[:20]

    def confirmed(self) -> bool:
        """Confirmed after a preview of exactly these values."""
        return self.cleaned_data.get("confirm") == self.preview_digest()


class LinkForm(PreviewedForm):
    """A new link between two memories, with the engine's names."""

    source_record_id = id_field("Source memory", help_text="The memory the link goes from: type to find one.")
    target_record_id = id_field(
        "Target memory", help_text="The memory it goes to (a supersedes, refines or duplicates link retires it)."
    )
    relation_type = relation_type_field()
    opposite_relation_type = opposite_type_field()
    metadata = JSONObjectField(label="Metadata", help_text="A JSON object; empty for none.", rows=3)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in ("source_record_id", "target_record_id"):
            self.fields[name].required = True
            self.fields[name].widget.attrs["list"] = "memory-picks"

    def clean_relation_type(self) -> str:
        return check_relation_label(self.cleaned_data["relation_type"])

    def link_arguments(self) -> dict[str, Any]:
        return {name: value for name, value in self.cleaned_data.items() if name != "confirm"}


class LinkEditForm(PreviewedForm, VersionedForm):
    relation_type = relation_type_field()
    opposite_relation_type = opposite_type_field()
    metadata = JSONObjectField(label="Metadata", help_text="A JSON object; empty for none.", rows=3)

    def clean_relation_type(self) -> str:
        label = self.cleaned_data["relation_type"]
        return label if label == self.initial.get("relation_type") else check_relation_label(label)  # kept as it is
