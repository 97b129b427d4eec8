"""The agent activity timeline's filters (/activity/): the query string of AgentMemory.list_activity
and activity_counts, so that a filtered timeline is a URL to share.

The names are the engine's (`caller`, `user_id`, `agent_id`, `thread_id`, `record_id` (the calls
that returned or changed a record), `kind`, `q`, `since`, `until`), plus `who`, which people's own
dashboard calls are: hidden unless asked for, since a person searching the dashboard is not what
an agent did; but everyone's by default when `kind` asks for the audit's reads (views, exports),
which people make: "who saw alice's data" is `?kind=view&user_id=alice`.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from django import forms

from memory.engine import AUDIT_KINDS, KINDS, MAX_SEARCH_TEXT_CHARS
from memory.web.engine_errors import field_errors
from memory.web.filters import FILTER_INPUT, FILTER_SELECT, ListingForm, id_filter

MAX_QUERY_FILTER = MAX_SEARCH_TEXT_CHARS
"""The longest `q` the engine takes (a substring of a recorded query)."""

WHO = {"agents": "agents", "people": "people at the dashboard", "all": "everyone"}
"""Whose calls the timeline shows (`who`), the first by default."""
CALLER_KIND_OF = {"agents": "agent", "people": "person", "all": None}
"""`who` as the engine's caller_kind."""

KIND_LABELS = {
    "search": "searches",
    "card": "context cards",
    "summary": "summaries",
    "write": "writes",
    "view": "records read",
    "export": "exports",
}
"""Each kind of call as the page names it (the engine's KINDS, in its order)."""

DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")


class MomentField(forms.DateTimeField):
    """A date or a date and time, read as UTC. A date alone means the start of that day, or with
    `through_the_day` (the `until` of a range), the start of the next: "until 2026-11-20" takes
    in the 20th, as a person means it."""

    def __init__(self, *, through_the_day: bool = False, **kwargs: Any) -> None:
        self.through_the_day = through_the_day
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> datetime | None:
        moment = super().to_python(value)
        if moment is None:
            return None
        moment = moment.astimezone(UTC)
        if self.through_the_day and isinstance(value, str) and DATE_ONLY.fullmatch(value.strip()):
            moment += timedelta(days=1)
        return moment


def moment_filter(label: str, *, through_the_day: bool = False) -> MomentField:
    return MomentField(
        label=label,
        required=False,
        through_the_day=through_the_day,
        widget=forms.DateTimeInput(attrs={**FILTER_INPUT, "type": "datetime-local"}),
        error_messages={"invalid": "Enter a date (2026-11-20) or a date and time (2026-11-20T14:30), in UTC."},
    )


class ActivityFilters(ListingForm):
    """The timeline's filters, checked here before the engine checks them again: a kind that is
    not one, a date that does not parse, a `q` or an id past its length is a field error. The
    engine's `cursor` is opaque: a forged one is refused by the engine (the view puts its message
    on the form)."""

    who = forms.ChoiceField(
        label="Whose calls",
        required=False,
        choices=list(WHO.items()),
        widget=forms.Select(attrs=FILTER_SELECT),
    )
    kind = forms.ChoiceField(
        label="Kind",
        required=False,
        choices=[("", "any"), *((kind, KIND_LABELS[kind]) for kind in KINDS)],
        widget=forms.Select(attrs=FILTER_SELECT),
    )
    caller = id_filter("Caller")
    user_id = id_filter("User")
    agent_id = id_filter("Agent")
    thread_id = id_filter("Thread")
    record_id = id_filter("Record")
    q = forms.CharField(
        label="Query text",
        required=False,
        max_length=MAX_QUERY_FILTER,
        widget=forms.TextInput(attrs={**FILTER_INPUT, "type": "search", "data-shortcut": "search"}),
    )
    since = moment_filter("Since (UTC)")
    until = moment_filter("Until (UTC)", through_the_day=True)

    def __init__(self, data: Any = None, *args: Any, **kwargs: Any) -> None:
        if data is not None and not data.get("who") and data.get("kind") in AUDIT_KINDS:
            data = data.copy()  # the audit's reads are people's: everyone's unless `who` says otherwise
            data["who"] = "all"
        super().__init__(data, *args, **kwargs)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        since, until = data.get("since"), data.get("until")
        if since and until and until <= since:
            self.add_error("until", "Until must be after since.")
        return data

    def refuse(self, error: ValueError) -> None:
        """The engine's refusal of the filters, as the form's error: a page cursor it did not
        make (a link edited by hand, or from another store) on the cursor, else on the field it names."""
        if str(error).startswith("invalid cursor"):
            self.add_error("cursor", "This page link is not one the timeline made: start again from the first page.")
        else:
            field, message = field_errors(error, self.fields)
            self.add_error(field, message)

    def whose(self) -> str:
        return self.cleaned_data.get("who") or next(iter(WHO))

    def filter_arguments(self) -> dict[str, Any]:
        """The filters as activity_counts' (and list_activity's) keyword arguments: only those given."""
        data = self.cleaned_data
        arguments: dict[str, Any] = {"caller_kind": CALLER_KIND_OF[self.whose()]}
        for name in ("kind", "caller", "user_id", "agent_id", "thread_id", "record_id", "q"):
            if data.get(name):
                arguments[name] = data[name]
        for name in ("since", "until"):
            if data.get(name):
                arguments[name] = data[name].isoformat()
        return arguments

    def engine_arguments(self) -> dict[str, Any]:
        """list_activity's keyword arguments: the filters and the page."""
        return {**self.filter_arguments(), **super().engine_arguments()}
