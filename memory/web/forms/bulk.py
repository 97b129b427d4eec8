"""The bulk action form: the action chosen and its parameters, and the selection it acts on (ids
ticked in a listing or an area of the embedding map, a confirmation's posted ids and versions, or
everything the memory browser's filters match: `all=1` with the listing's parameters). What the
action would change is planned by memory.curation.bulk_plan; the change is made by memory.curation.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.http import QueryDict

from memory.engine import MAX_JSON_DEPTH, MEMORY_TYPES, check_id_text, check_json_tree
from memory.web.fields import ID_MAX_LENGTH, ID_WIDGET, MAX_SELECTION

ACTIONS = {
    "set_status": "Set the status",
    "delete": "Delete",
    "set_metadata": "Set a metadata key",
    "remove_metadata": "Remove a metadata key",
    "set_type": "Change the memory type",
    "mark_duplicates": "Mark as duplicates of one kept memory",
}


NEEDS = {
    "set_status": ("status",),
    "set_metadata": ("key", "value"),
    "remove_metadata": ("key",),
    "set_type": ("memory_type",),
    "mark_duplicates": ("keep",),
}
"""The parameters each action needs."""


URL_SELECTION_BYTES = 2_000
"""Ids that take more than this in a URL travel in a POST body instead (the chooser's form then
posts): gunicorn refuses a request line over 4,094 bytes (its --limit-request-line), path and
action included, and its answer is a bare 400."""


LINE_BREAK = re.compile(r"\r\n|\n|\r")
"""What separates the ids of one field (`ids`, a confirmation's `selection`): the engine refuses
line breaks in ids (memory.engine.limits.check_id_text), and a browser sends a field's line
breaks as CRLF. Nothing else splits: spaces and other characters inside an id are its own."""


MAX_VALUE_LENGTH = 10_000


FILTER_PARAMETERS = ("q", "memory_type", "status", "user_id", "agent_id", "thread_id", "unscoped", "metadata_filter")
"""The memory browser's parameters that choose records (not their order or page)."""


class IdListField(forms.Field):
    """Record ids, as a repeated parameter (`ids=a&ids=b`: a link, ticked boxes) or one value of
    ids a line (what the map's script and a large chooser send, one field however many: Django
    reads at most 1,000 fields of a request), in the order given, without repeats. An id the
    engine would refuse is a form error, not changed (no trimming: it would name another record)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: Any) -> list[str]:
        values = [value] if isinstance(value, str) else list(value or ())
        ids = [item for text in values for item in LINE_BREAK.split(text) if item]
        for item in ids:
            try:
                check_id_text("An id", item)
            except ValueError as error:
                raise ValidationError(f"{error}: {item[:60]!r}.", code="id") from None
        return list(dict.fromkeys(ids))


class JSONValueField(forms.CharField):
    """Any JSON value typed as text: "chat" (a string, in quotes), 3, true, null, [..] or {..}."""

    def to_python(self, value: Any) -> Any:
        text = super().to_python(value)
        if text in (None, ""):
            return None
        if len(text) > MAX_VALUE_LENGTH:
            raise ValidationError(f"At most {MAX_VALUE_LENGTH:,} characters.", code="max_length")
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, RecursionError, ValueError):
            raise ValidationError(
                f"Not valid JSON. A text goes in double quotes: {json.dumps(text)}; numbers, true, false, "
                "null, lists and objects as they are.",
                code="json",
            ) from None
        try:  # what the engine refuses in metadata, refused here before any memory is touched
            json.dumps(value, allow_nan=False)
            check_json_tree(value, "The value", MAX_JSON_DEPTH - 1)
        except ValueError as error:
            message = str(error) if str(error).startswith("The value") else "NaN and Infinity are not JSON numbers."
            raise ValidationError(message, code="json") from None
        return value


class BulkForm(forms.Form):
    """A bulk action and its parameters, and the selection it acts on (the listing's filters are
    read by MemoryFilters from the same query)."""

    action = forms.ChoiceField(
        label="Action",
        required=False,
        choices=[("", "Choose an action…"), *ACTIONS.items()],
        widget=forms.Select(attrs={"class": "form-select"}),
    )
    status = forms.ChoiceField(
        label="New status",
        required=False,
        choices=[("", "—"), ("valid", "valid"), ("invalid", "invalid")],
        widget=forms.Select(attrs={"class": "form-select"}),
        help_text="For “Set the status”.",
    )
    key = forms.CharField(
        label="Metadata key",
        required=False,
        max_length=200,
        widget=forms.TextInput(attrs=ID_WIDGET),
        help_text="For the metadata actions: a top-level key, e.g. review.",
    )
    value = JSONValueField(
        label="Value (JSON)",
        required=False,
        widget=forms.TextInput(attrs=ID_WIDGET),
        help_text='For “Set a metadata key”: "chat" (text in quotes), 3, true, ["a", "b"] or {"status": "done"}.',
    )
    memory_type = forms.ChoiceField(
        label="New type",
        required=False,
        choices=[("", "—"), *((name, name) for name in MEMORY_TYPES)],
        widget=forms.Select(attrs={"class": "form-select"}),
        help_text="For “Change the memory type”.",
    )
    keep = forms.CharField(
        label="Memory to keep",
        required=False,
        max_length=ID_MAX_LENGTH,
        widget=forms.TextInput(attrs={**ID_WIDGET, "list": "memory-picks"}),
        help_text="For “Mark as duplicates”: its id (type to find it). It stays valid; the others become invalid.",
    )
    ids = IdListField(required=False)
    all = forms.BooleanField(required=False, widget=forms.HiddenInput)
    whole_page = forms.BooleanField(required=False, widget=forms.HiddenInput)
    page_ids = IdListField(required=False)
    selection = forms.CharField(required=False, widget=forms.HiddenInput, strip=False)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        action = data.get("action")
        for name in NEEDS.get(action, ()):
            if name == "value" and "value" in self.errors:
                continue
            if name == "value" and self.data.get("value", "").strip() == "":
                self.add_error("value", 'Give the value to set, as JSON (e.g. "chat" or 3).')
            elif name != "value" and not data.get(name):
                self.add_error(name, f"{ACTIONS[action]} needs this.")
        if data.get("whole_page"):
            data["ids"] = list(dict.fromkeys([*data.get("ids", []), *data.get("page_ids", [])]))
        if not data.get("all") and not data.get("ids") and not data.get("selection"):
            raise ValidationError(
                "No memories selected: tick some in the memory list, or act on everything its filters match.",
                code="empty",
            )
        return data

    def parameters(self) -> dict[str, Any]:
        """The cleaned parameters of the chosen action."""
        return {name: self.cleaned_data.get(name) for name in NEEDS.get(self.cleaned_data.get("action"), ())}


SHARED_NAMES = {"status": "set_status", "memory_type": "set_type"}
"""Parameters both a listing filter and an action's parameter are named (the URL contract uses the
engine's names for both): with `all=1`, the last non-empty value is the action's."""


def action_query(query: QueryDict, action: str) -> QueryDict:
    """A bulk query as the action's form reads it: without a shared name the action does not use,
    whose values are the filters' (so that "New type" is not pre-filled with the filter's type
    and sent again as a second `memory_type`)."""
    data = query.copy()
    for name, used_by in SHARED_NAMES.items():
        if action != used_by:
            data.pop(name, None)
    return data


def listing_query(query: QueryDict, action: str) -> QueryDict:
    """The listing's filters in a bulk query: for a name shared with the action's parameter
    (`status`, `memory_type`), its non-empty values less the last one when the action uses it
    (the chooser sends the action's fields after the filters it carries)."""
    data = query.copy()
    for name, used_by in SHARED_NAMES.items():
        values = [value for value in data.getlist(name) if value]
        data.setlist(name, values[:-1] if action == used_by else values)
    return data


def filter_query(query: Any) -> list[tuple[str, str]]:
    """The listing parameters of `query` that choose records, as pairs (for links and hidden inputs)."""
    return [(name, value) for name in FILTER_PARAMETERS for value in query.getlist(name) if value]


def parse_selection(text: str) -> dict[str, int]:
    """The "id version" lines a preview posted: {id: version}; ValueError for anything else.
    Split at line breaks only (LINE_BREAK), and the version is after the last space, so that any
    id the engine takes comes back as it was."""
    chosen: dict[str, int] = {}
    for line in LINE_BREAK.split(text):
        if not line:
            continue
        record_id, _, version = line.rpartition(" ")
        if not record_id or not version.isdigit():
            raise ValueError("the confirmation's selection is damaged; preview the change again")
        chosen[record_id] = int(version)
    if len(chosen) > MAX_SELECTION:
        raise ValueError(f"a bulk change acts on at most {MAX_SELECTION:,} memories")
    return chosen
