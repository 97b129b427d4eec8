"""One parser for list filters, ordering and cursors, shared by the dashboard's listings (and the API).

A listing's state is its query string (Datasette's "the URL is the state"): the parameter names are
the engine's (`memory_type`, `status`, `user_id`, `agent_id`, `thread_id`, `metadata_filter`) plus
`q` for text, `order`, `cursor` and `limit`, so that a filtered listing is a URL to share. Each
listing is a Django form over `request.GET`: its errors are field messages (shown in the filter bar,
or a 400 in the API), and `engine_arguments()` turns its cleaned data into the keyword arguments of
the one engine call that lists.

The review page's and the link graph's query strings are forms of the same kind, here too: the
queries that read them (memory.queries.review, memory.queries.graph) sit a layer above.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.http import QueryDict

from memory.engine import (
    BUILTIN_RELATIONS,
    DEFAULT_GRAPH_NODES,
    MAX_GRAPH_NODES,
    MAX_HOPS,
    MAX_SEARCH_TEXT_CHARS,
    MEMORY_TYPES,
    NOT_SET,
    graph_request,
)
from memory.models import Action, ObjectKind
from memory.web.engine_errors import field_errors
from memory.web.fields import ID_MAX_LENGTH, ID_WIDGET, SCOPES, MetadataFilterField

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
STATUSES = {"valid": "valid", "invalid": "invalid", "expired": "expired, awaiting purge"}
ORDERS = {"newest": "newest stored first", "oldest": "oldest stored first"}
FILTER_INPUT = {"class": "form-control form-control-sm"}
FILTER_ID_INPUT = {**ID_WIDGET, "class": "form-control form-control-sm font-monospace"}
FILTER_SELECT = {"class": "form-select form-select-sm"}
FILTER_CHECKBOX = {"class": "form-check-input"}


def id_filter(label: str) -> forms.CharField:
    return forms.CharField(
        label=label, required=False, max_length=ID_MAX_LENGTH, widget=forms.TextInput(attrs=FILTER_ID_INPUT)
    )


def memory_type_filter() -> forms.MultipleChoiceField:
    """Repeatable `memory_type`, a box to tick per type."""
    return forms.MultipleChoiceField(
        label="Type",
        required=False,
        choices=[(t, t) for t in MEMORY_TYPES],
        widget=forms.CheckboxSelectMultiple(attrs=FILTER_CHECKBOX),
    )


def status_filter(statuses: dict[str, str]) -> forms.ChoiceField:
    return forms.ChoiceField(
        label="Status",
        required=False,
        choices=[("", "any"), *statuses.items()],
        widget=forms.Select(attrs=FILTER_SELECT),
    )


def number_filter(label: str, low: int, high: int, help_text: str) -> forms.IntegerField:
    return forms.IntegerField(
        label=label,
        required=False,
        min_value=low,
        max_value=high,
        widget=forms.NumberInput(attrs=FILTER_INPUT),
        help_text=help_text,
    )


class ListingForm(forms.Form):
    """Paging, common to every listing: an opaque cursor (the engine's, which checks it; the
    history's is an entry id) and a page size."""

    cursor = forms.CharField(label="Page cursor", required=False, widget=forms.HiddenInput)
    limit = forms.IntegerField(
        label="Page size", required=False, min_value=1, max_value=MAX_PAGE_SIZE, widget=forms.HiddenInput
    )

    def engine_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {"cursor": data.get("cursor") or None, "limit": data.get("limit") or DEFAULT_PAGE_SIZE}


def text_filter(where: str) -> forms.CharField:
    return forms.CharField(
        label="Text",
        required=False,
        max_length=MAX_SEARCH_TEXT_CHARS,
        widget=forms.TextInput(attrs={**FILTER_INPUT, "type": "search", "data-shortcut": "search"}),  # "/" focuses it
        help_text=f"In the {where}; any case.",
    )


class UnscopedFilters(forms.Form):
    """Repeatable `unscoped`: only records with no user (or agent, or thread); a value for the
    same scope as well is refused."""

    unscoped = forms.MultipleChoiceField(
        label="Unscoped",
        required=False,
        choices=list(SCOPES.items()),
        widget=forms.CheckboxSelectMultiple(attrs=FILTER_CHECKBOX),
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        for name in data.get("unscoped") or ():
            if data.get(name):
                self.add_error(name, f"Give a value or tick \u201c{SCOPES[name]}\u201d, not both.")
        return data

    def unscoped_arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        for name in self.cleaned_data.get("unscoped") or ():
            arguments[name] = None  # the engine's "unscoped on this dimension"
        return arguments


class ThreadFilters(ListingForm):
    q = text_filter("thread id or metadata")
    user_id = id_filter("User")
    agent_id = id_filter("Agent")
    metadata_filter = MetadataFilterField()

    def engine_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        arguments = super().engine_arguments()
        for name in ("user_id", "agent_id", "metadata_filter"):
            if data.get(name):
                arguments[name] = data[name]
        if data.get("q"):
            arguments["text"] = data["q"]
        return arguments


class MemoryFilters(ThreadFilters, UnscopedFilters):
    q = text_filter("content, id or metadata")
    memory_type = memory_type_filter()
    status = status_filter(STATUSES)
    thread_id = id_filter("Thread")
    order = forms.ChoiceField(
        label="Order",
        required=False,
        choices=list(ORDERS.items()),
        widget=forms.Select(attrs=FILTER_SELECT),
    )

    field_order = ("q", "memory_type", "status", "user_id", "agent_id", "thread_id", "unscoped", "metadata_filter")

    def engine_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        arguments = self.unscoped_arguments(super().engine_arguments())
        if data.get("thread_id"):
            arguments["thread_id"] = data["thread_id"]
        if data.get("memory_type"):
            arguments["memory_types"] = data["memory_type"]
        if data.get("status"):
            arguments["status"] = data["status"]
        arguments["newest_first"] = data.get("order") != "oldest"
        return arguments


@dataclass(frozen=True)
class ActiveFilter:
    """One filter in force, with the query string that drops it (for the chips above a listing)."""

    label: str
    value: str
    remove_query: str


def active_filters(form: ListingForm, query: QueryDict) -> list[ActiveFilter]:
    """The filters `query` applies, each with a link back to the same listing without it."""
    active = []
    for name, field in form.fields.items():
        if name in ("cursor", "limit", "order"):
            continue
        for value in query.getlist(name):
            if not value:
                continue
            shown = dict(getattr(field, "choices", ())).get(value, value) if name in ("status", "unscoped") else value
            active.append(ActiveFilter(str(field.label), str(shown), query_without(query, name, value)))
    return active


def query_without(query: QueryDict, name: str, value: str) -> str:
    """`query` less one value of one parameter, and from the first page again."""
    pairs = [
        (key, item)
        for key, items in query.lists()
        for item in items
        if key != "cursor" and not (key == name and item == value)
    ]
    return "?" + urlencode(pairs) if pairs else "?"


class HistoryFilters(ListingForm):
    """The curation history's filters: by object (or record, with the links that join it), thread,
    owner (everything a user or agent owns), actor, action and time; keyset-paged by `cursor` (the
    id of the last entry shown), newest first."""

    object_kind = forms.ChoiceField(
        label="Kind",
        required=False,
        choices=[("", "any"), *ObjectKind.choices],
        widget=forms.Select(attrs=FILTER_SELECT),
    )
    object_id = id_filter("Object id")
    record_id = forms.CharField(
        label="Record",
        required=False,
        max_length=ID_MAX_LENGTH,
        widget=forms.TextInput(attrs=FILTER_ID_INPUT),
        help_text="The changes of this record and of the links that join it.",
    )
    thread_id = id_filter("Thread")
    user_id = id_filter("User")  # the changes to anything the user owns (CurationEntryQuerySet.of_owner)
    agent_id = id_filter("Agent")
    actor = forms.CharField(label="Who", required=False, max_length=150, widget=forms.TextInput(attrs=FILTER_ID_INPUT))
    action = forms.ChoiceField(
        label="Action",
        required=False,
        choices=[("", "any"), *Action.choices],
        widget=forms.Select(attrs=FILTER_SELECT),
    )
    since = forms.DateTimeField(
        label="Since",
        required=False,
        widget=forms.DateTimeInput(attrs={**FILTER_INPUT, "type": "datetime-local"}),
    )
    until = forms.DateTimeField(
        label="Until",
        required=False,
        widget=forms.DateTimeInput(attrs={**FILTER_INPUT, "type": "datetime-local"}),
    )
    cursor = forms.IntegerField(label="Page cursor", required=False, min_value=1, widget=forms.HiddenInput)

    def bulk_changes_as_one(self) -> bool:
        """Whether a bulk change is listed as one row: unless the filters ask for some objects'
        own changes (then each entry is a row, marked as part of its bulk change)."""
        narrowing = ("object_kind", "object_id", "record_id", "thread_id", "action")
        return not any(self.cleaned_data.get(name) for name in narrowing)


# --- images, links, users and agents, store counts (the API's listings) ------------------------


class RelationTypesField(forms.MultipleChoiceField):
    """Repeatable `relation_type`: the built-in types are offered as boxes to tick, any other
    label is taken as it is (a store may hold custom relation types) and checked by the engine.
    The form's box for typing a custom type sends `relation_type=` when left empty: that asks
    for nothing, so empty values are dropped."""

    def to_python(self, value: Any) -> list[str]:
        return [item for item in super().to_python(value) if item != ""]

    def valid_value(self, value: str) -> bool:
        return True


class ScopedListing(ListingForm, UnscopedFilters):
    """A listing filtered exactly by scope: a user, agent and thread each, or (`unscoped`) none."""

    user_id = id_filter("User")
    agent_id = id_filter("Agent")
    thread_id = id_filter("Thread")

    def engine_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        arguments = self.unscoped_arguments(super().engine_arguments())
        for name in ("user_id", "agent_id", "thread_id"):
            if data.get(name):
                arguments[name] = data[name]
        return arguments


class ImageFilters(ScopedListing):
    """AgentMemory.list_images: images in store order, by scope and metadata."""

    metadata_filter = MetadataFilterField()

    def engine_arguments(self) -> dict[str, Any]:
        arguments = super().engine_arguments()
        if self.cleaned_data.get("metadata_filter"):
            arguments["metadata_filter"] = self.cleaned_data["metadata_filter"]
        return arguments


class LinkFilters(ScopedListing):
    """AgentMemory.list_relations: links in creation order, of one memory (`record_id`, either
    end) and/or of a scope (either end in it), of some relation types."""

    record_id = id_filter("Memory")
    relation_type = RelationTypesField(
        label="Relation",
        required=False,
        choices=[(name, name) for name in BUILTIN_RELATIONS],
        widget=forms.CheckboxSelectMultiple(attrs=FILTER_CHECKBOX),
        help_text="Repeatable: links of any of these types (built-in or your own), as stored (source to target).",
    )

    field_order = ("record_id", "relation_type", "user_id", "agent_id", "thread_id", "unscoped")

    def engine_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        arguments = super().engine_arguments()
        if data.get("record_id"):
            arguments["record_id"] = data["record_id"]
        if data.get("relation_type"):
            arguments["relation_types"] = data["relation_type"]
        return arguments


class StatsFilters(forms.Form):
    """AgentMemory.stats: the whole store, or what one thread, user or agent holds (what deleting
    it would remove)."""

    user_id = id_filter("User")
    agent_id = id_filter("Agent")
    thread_id = id_filter("Thread")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        given = [name for name in ("user_id", "agent_id", "thread_id") if data.get(name)]
        if len(given) > 1:
            raise forms.ValidationError(
                f"Give at most one of user_id, agent_id and thread_id, not {' and '.join(given)}."
            )
        return data

    def engine_arguments(self) -> dict[str, Any]:
        return {name: value for name, value in self.cleaned_data.items() if value}


# --- the review queues (memory.queries.review) --------------------------------------------------

DEFAULT_DAYS = 7
"""The expiring queue's window when the query string gives none."""


class ReviewFilters(ListingForm):
    """The review page's query string: which queue, whose records, the expiring queue's window in
    days, and the engine's cursor and page size. The queues are memory.queries.review's, a layer
    above: the page gives them (`queues`, name → tab label; the first is the default)."""

    queue = forms.ChoiceField(label="Queue", required=False, choices=(), widget=forms.Select(attrs=FILTER_SELECT))
    user_id = id_filter("User")
    days = number_filter("Days", 1, 3650, "Expiring within this many days.")

    def __init__(self, *args: Any, queues: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["queue"].choices = list(queues.items())
        self.default_queue = next(iter(queues))
        self.fields["days"].widget.attrs["placeholder"] = str(DEFAULT_DAYS)

    def review_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "queue": data.get("queue") or self.default_queue,
            "user_id": data.get("user_id") or None,
            "days": data.get("days") or DEFAULT_DAYS,
            "limit": data.get("limit") or DEFAULT_PAGE_SIZE,
            "cursor": data.get("cursor") or None,
        }


# --- the link graph (memory.queries.graph) ------------------------------------------------------

GRAPH_SCOPES = ("user_id", "agent_id", "thread_id", "memory_id")
"""What a graph is drawn around: exactly one of them."""
GRAPH_STATUSES = {"valid": "valid", "invalid": "invalid"}
MISSING_MEMORY = "No such memory: it does not exist, or it has expired."


class GraphFilters(forms.Form):
    """The graph's query string: one scope (a user, agent, thread or memory), how many hops, and
    filters on links and nodes. Checked with the engine's own argument checks, so that its
    messages are the form's errors without a call to the store."""

    user_id = id_filter("User")
    agent_id = id_filter("Agent")
    thread_id = id_filter("Thread")
    memory_id = id_filter("Memory")
    hops = number_filter("Hops", 0, MAX_HOPS, "Links away, 0 to 5.")
    relation_type = RelationTypesField(
        label="Relation",
        required=False,
        choices=[(name, name) for name in BUILTIN_RELATIONS],
        widget=forms.CheckboxSelectMultiple(attrs=FILTER_CHECKBOX),
    )
    memory_type = memory_type_filter()
    status = status_filter(GRAPH_STATUSES)
    max_nodes = number_filter(
        "At most", 1, MAX_GRAPH_NODES, f"Nodes drawn (up to {MAX_GRAPH_NODES:,}); the most linked are kept."
    )

    def __init__(self, data: QueryDict | None, *args: Any, **kwargs: Any) -> None:
        super().__init__(data, *args, **kwargs)
        # Relation types given beyond the built-in ones get a box of their own, ticked.
        self.offer_relation_types(data.getlist("relation_type") if data is not None else [])

    def offer_relation_types(self, names: Iterable[str]) -> None:
        """A box for each relation type among `names` that has none yet (custom types: the
        engine lists no store's types, but a graph drawn shows those of its links)."""
        field = self.fields["relation_type"]
        offered = {value for value, _ in field.choices}
        fresh = [name for name in dict.fromkeys(names) if name and name not in offered]
        field.choices = [*field.choices, *((name, name) for name in fresh)]

    def scope(self) -> tuple[str, str] | None:
        """The (parameter, id) the graph is drawn around, when the form is valid and names one."""
        data = self.cleaned_data
        given = [(name, data[name]) for name in GRAPH_SCOPES if data.get(name)]
        return given[0] if len(given) == 1 else None

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        given = [name for name in GRAPH_SCOPES if data.get(name)]
        if len(given) != 1:
            # The engine's message names its arguments ("pass exactly one of user_id, …"): say it
            # in the form's words instead.
            self.add_error(None, scope_message(given))
            return data
        try:
            graph_request(**self.engine_arguments(data))
        except ValueError as error:
            field, message = field_errors(error, self.fields)
            self.add_error(field, message)
        return data

    def refuse(self, error: KeyError | ValueError) -> None:
        """The engine's refusal of the graph asked for, as the form's error: a memory_id that names
        no memory (KeyError), or an argument it refuses (ValueError, on the field it names)."""
        if isinstance(error, KeyError):
            self.add_error("memory_id", MISSING_MEMORY)
        else:
            field, message = field_errors(error, self.fields)
            self.add_error(field, message)

    def engine_arguments(self, data: dict[str, Any] | None = None) -> dict[str, Any]:
        """memory_graph's keyword arguments (the form's names are the query string's)."""
        data = self.cleaned_data if data is None else data
        arguments: dict[str, Any] = {name: data.get(name) or NOT_SET for name in GRAPH_SCOPES}
        arguments["hops"] = 1 if data.get("hops") is None else data["hops"]
        arguments["max_nodes"] = data.get("max_nodes") or DEFAULT_GRAPH_NODES
        arguments["relation_types"] = data.get("relation_type") or NOT_SET
        arguments["memory_types"] = data.get("memory_type") or NOT_SET
        arguments["statuses"] = data.get("status") or NOT_SET
        return arguments


SCOPE_NOUNS = {"user_id": "a user", "agent_id": "an agent", "thread_id": "a thread", "memory_id": "a memory"}


def scope_message(given: list[str]) -> str:
    """What to fix when the query names no scope, or several (`given`, in GRAPH_SCOPES order)."""
    message = "Choose one scope: a user, an agent, a thread or a memory"
    if not given:
        return message + "."
    nouns = [SCOPE_NOUNS[name] for name in given]
    if len(nouns) == 2:
        return f"{message} — not both {nouns[0]} and {nouns[1]}."
    return f"{message} — not {', '.join(nouns[:-1])} and {nouns[-1]} at once."
