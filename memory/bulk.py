"""Bulk actions on memories: the form that chooses one, the selection it acts on, and the plan that
says, before anything changes, exactly which records change and what that does to memories' status.

A selection is either ids (`ids`, repeated, or one value of ids a line: rows ticked in a listing, an
area of the embedding map) or everything the memory browser's filters match (`all=1` with the
listing's parameters). The plan is computed from the store as it is (read-only, a few queries per
500 records): the records that change, those already in the wanted state (they are left alone and
not counted), those skipped with a reason, and the memories whose effective status would flip.
The confirmation posts back the ids and versions of exactly the records the preview showed;
`memory.curation` then makes the change in batches, recorded as one bulk change.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.http import QueryDict

from memory.curation import StatusChange, plural, quoted
from memory.engine import (
    LIFECYCLE_RELATIONS,
    MAX_JSON_DEPTH,
    MEMORY_TYPES,
    AgentMemory,
    MemoryRecord,
    RecordStatus,
    check_id_text,
    check_json_tree,
)
from memory.web.fields import ID_WIDGET
from memory.web.filters import MemoryFilters

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

MAX_SELECTION = 20_000
"""Most memories one bulk change acts on: the confirmation carries each id and version, and a
preview of more would be read by nobody. Narrower filters, or several changes, do more."""

URL_SELECTION_BYTES = 2_000
"""Ids that take more than this in a URL travel in a POST body instead (the chooser's form then
posts): gunicorn refuses a request line over 4,094 bytes (its --limit-request-line), path and
action included, and its answer is a bare 400."""

LINE_BREAK = re.compile(r"\r\n|\n|\r")
"""What separates the ids of one field (`ids`, a confirmation's `selection`): the engine refuses
line breaks in ids (memory.engine.limits.check_id_text), and a browser sends a field's line
breaks as CRLF. Nothing else splits: spaces and other characters inside an id are its own."""

BATCH = 500
SAMPLE = 20
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
        max_length=512,
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


def matching_ids(memory: AgentMemory, filters: MemoryFilters, limit: int = MAX_SELECTION + 1) -> list[str]:
    """The ids of every memory a valid listing form matches, in its order, up to `limit`: the
    engine's cursor pages, 500 at a time."""
    arguments = filters.engine_arguments()
    arguments.pop("cursor", None)
    arguments.pop("limit", None)
    ids: list[str] = []
    cursor = None
    while len(ids) < limit:
        page = memory.list_memories(**arguments, limit=min(BATCH, limit - len(ids)), cursor=cursor)
        ids += [record.id for record in page]
        cursor = page.next_cursor
        if cursor is None:
            break
    return ids


@dataclass
class BulkPlan:
    """What a bulk action would do, read from the store as it is now."""

    action: str
    parameters: dict[str, Any]
    selected: int
    changes: list[tuple[MemoryRecord, dict[str, Any]]] = field(default_factory=list)
    """The records that change, as read, each with the update's fields (empty for a delete or a link)."""
    unchanged: int = 0
    missing: list[str] = field(default_factory=list)
    skipped: list[tuple[MemoryRecord, str]] = field(default_factory=list)
    effects: list[StatusChange] = field(default_factory=list)
    keep: MemoryRecord | None = None

    @property
    def count(self) -> int:
        return len(self.changes)

    @property
    def effects_are_the_changes(self) -> bool:
        """Whether every memory that changes flips status, and no other (a status change, or
        duplicates of valid memories): then the preview says so once instead of listing them."""
        return bool(self.effects) and [c.memory.id for c in self.effects] == [r.id for r, _ in self.changes]

    @property
    def sample(self) -> list[tuple[MemoryRecord, str]]:
        """The first records that change, each with what changes in it, as the preview says it."""
        return [(record, self.change_of(record, fields)) for record, fields in self.changes[:SAMPLE]]

    def change_of(self, record: MemoryRecord, fields: dict[str, Any]) -> str:
        """ "source: "chat" → "import"": what the action changes in one record."""
        key = self.parameters.get("key")
        metadata = record.metadata or {}
        old = json.dumps(metadata[key], ensure_ascii=False)[:60] if key in metadata else "(none)"
        return {
            "set_status": lambda: f"{record.status} → {self.parameters.get('status')}",
            "delete": lambda: "deleted, with its links",
            "set_metadata": lambda: (
                f"{key}: {old} → {json.dumps(self.parameters.get('value'), ensure_ascii=False)[:60]}"
            ),
            "remove_metadata": lambda: f"{key}: {old} → (removed)",
            "set_type": lambda: f"{record.record_type} → {fields.get('memory_type')}",
            "mark_duplicates": lambda: "a duplicate of the kept memory",
        }[self.action]()

    def selection(self) -> str:
        """The ids and versions of the records that change ("id version" a line): what the
        confirmation posts back, so that it acts on exactly these as they were seen."""
        return "\n".join(f"{record.id} {record.version}" for record, _ in self.changes)

    def describe(self) -> str:
        """ "Set the status invalid on 12 memories": the bulk change's summary in the history (what was done)."""
        p, n = self.parameters, plural_memories(self.count)
        return {
            "set_status": lambda: f"Set the status {p.get('status')} on {n}",
            "delete": lambda: f"Deleted {n}",
            "set_metadata": lambda: f"Set metadata {p.get('key')} = {json.dumps(p.get('value'))[:60]} on {n}",
            "remove_metadata": lambda: f"Removed the metadata key {p.get('key')} from {n}",
            "set_type": lambda: f"Changed {n} into {self.new_types()}",
            "mark_duplicates": lambda: f"Marked {n} as duplicates of {self.kept()}",
        }[self.action]()

    def proposal(self) -> str:
        """ "Remove the metadata key review from 8 memories": what the preview asks and its
        button says (what will be done); with nothing to change, that there is nothing to do."""
        p, n = self.parameters, plural_memories(self.count)
        if not self.count:
            return "Nothing to do: no memory would change"
        return {
            "set_status": lambda: f"Set the status {p.get('status')} on {n}",
            "delete": lambda: f"Delete {n}",
            "set_metadata": lambda: f"Set the metadata key {p.get('key')} to {json.dumps(p.get('value'))[:60]} on {n}",
            "remove_metadata": lambda: f"Remove the metadata key {p.get('key')} from {n}",
            "set_type": lambda: f"Change {n} into {self.new_types()}",
            "mark_duplicates": lambda: f"Mark {n} as duplicates of {self.kept()}",
        }[self.action]()

    def new_types(self) -> str:
        """The new type as the sentence needs it: "preferences", or "a preference" for one memory."""
        memory_type = str(self.parameters.get("memory_type"))
        return f"a {memory_type}" if self.count == 1 else plural(2, memory_type).removeprefix("2 ")

    def kept(self) -> str:
        """The kept memory of mark_duplicates, by its text."""
        return quoted(self.keep.content) if self.keep else str(self.parameters.get("keep"))


def plural_memories(count: int) -> str:
    return f"{count:,} {'memory' if count == 1 else 'memories'}"


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


def batches(items: Sequence[Any], size: int = BATCH) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def plan(memory: AgentMemory, action: str, parameters: dict[str, Any], ids: Sequence[str]) -> BulkPlan:
    """What `action` with `parameters` would do to the memories `ids` (read in batches of 500:
    one lifecycle query and one read per record). ValueError for a kept memory that does not exist."""
    result = BulkPlan(action, parameters, len(ids))
    if action == "mark_duplicates":
        try:
            result.keep = memory.get_memory(parameters["keep"])
        except KeyError:
            raise ValueError(f"keep names no memory: {parameters['keep']!r}") from None
        linked = {
            link.target_record_id if link.source_record_id == result.keep.id else link.source_record_id: link
            for link in memory.list_relations(record_id=result.keep.id, limit=None)
        }
    for chunk in batches(ids):
        states = memory.lifecycle(chunk)
        for memory_id in chunk:
            state = states.get(memory_id)
            if state is None:  # gone, expired (awaiting purge) or not a memory
                result.missing.append(memory_id)
                continue
            record = memory.get_memory(memory_id)
            if action == "set_status":
                plan_status(result, record, state, parameters["status"])
            elif action == "delete":
                result.changes.append((record, {}))
            elif action == "set_metadata":
                metadata = record.metadata or {}
                key, value = parameters["key"], parameters["value"]
                if key in metadata and metadata[key] == value:
                    result.unchanged += 1
                else:
                    result.changes.append((record, {"metadata": {**metadata, key: value}}))
            elif action == "remove_metadata":
                metadata = record.metadata or {}
                if parameters["key"] not in metadata:
                    result.unchanged += 1
                else:
                    rest = {k: v for k, v in metadata.items() if k != parameters["key"]}
                    result.changes.append((record, {"metadata": rest}))
            elif action == "set_type":
                if record.record_type == parameters["memory_type"]:
                    result.unchanged += 1
                else:
                    result.changes.append((record, {"memory_type": parameters["memory_type"]}))
            else:
                plan_duplicate(result, record, state, linked.get(memory_id))
    if action == "delete":
        result.effects = revived_by_deleting(memory, [record for record, _ in result.changes])
    return result


def plan_status(result: BulkPlan, record: MemoryRecord, state: Any, wanted: str) -> None:
    """A memory's effective status is its own flag unless a link retires it. Setting `invalid`
    changes the valid ones; setting `valid` changes those invalid by their flag alone. One that a
    link retires stays invalid whatever its flag: it is skipped, with the reason."""
    if state.status.value == wanted:
        result.unchanged += 1
    elif wanted == "valid" and state.retired_by:
        result.skipped.append((record, "a link retires it: delete or retype that link to make it valid"))
    else:
        result.changes.append((record, {"status": RecordStatus(wanted)}))
        result.effects.append(StatusChange(record, state.status.value, wanted))


def plan_duplicate(result: BulkPlan, record: MemoryRecord, state: Any, link: Any) -> None:
    """The kept memory is the source of each `duplicates` link and stays as it is; each other
    memory is the link's target and becomes invalid (if it was valid)."""
    assert result.keep is not None
    if record.id == result.keep.id:
        return  # the kept memory may be in the selection: it is not its own duplicate
    if link is not None and link.relation_type == "duplicates" and link.source_record_id == result.keep.id:
        result.unchanged += 1
    elif link is not None:
        result.skipped.append((record, f"already linked to the kept memory ({link.label_from(record.id)})"))
    else:
        result.changes.append((record, {}))
        if state.status is RecordStatus.VALID:
            result.effects.append(StatusChange(record, "valid", "invalid"))


def revived_by_deleting(memory: AgentMemory, records: Sequence[MemoryRecord]) -> list[StatusChange]:
    """The memories (not deleted with them) that become valid again when `records` go: those
    retired only by lifecycle links from the deleted ones."""
    deleted = {record.id for record in records}
    retiring: dict[str, set[str]] = {}
    for record in records:
        for link in memory.list_relations(record_id=record.id, relation_types=list(LIFECYCLE_RELATIONS), limit=None):
            if link.source_record_id == record.id and link.target_record_id not in deleted:
                retiring.setdefault(link.target_record_id, set()).add(link.id)
    effects = []
    for chunk in batches(list(retiring)):
        for target_id, state in memory.lifecycle(chunk).items():
            if state.own_status is RecordStatus.VALID and set(state.retired_by) <= retiring[target_id]:
                effects.append(StatusChange(memory.get_memory(target_id), "invalid", "valid"))
    return effects
