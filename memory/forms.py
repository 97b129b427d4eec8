"""Forms whose field names are the engine's parameter names, so that a form's cleaned data is the
keyword arguments of one engine call.

Forms check what the browser can get wrong (JSON that does not parse, a number that is not one);
the engine decides the rest, and the curation service turns its ValueErrors back into errors on
the field they name (`memory.curation.field_errors`).
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from memory.engine import ImageMimeType, RecordStatus, SearchResultFormatConfig, SearchStrategy
from memory.engine.filters import parse_filter
from memory.engine.transfer import ExportFormatError, ExportReader
from memory.engine.ttl import normalize_timestamp
from memory.engine.types import BUILTIN_RELATIONS, MEMORY_TYPES, SEARCHABLE_TYPES
from memory.models import TokenRole
from memory.tokens import MAX_EXPIRY_DAYS, NAME_LENGTH, allowed_roles

SCOPES = {"user_id": "no user", "agent_id": "no agent", "thread_id": "no thread"}
"""The scope dimensions a record can have none of, as an `unscoped` choice reads."""

ID_WIDGET = {"spellcheck": "false", "autocomplete": "off", "class": "form-control font-monospace"}


class JSONObjectField(forms.CharField):
    """A JSON object typed as text. Blank means None (no metadata)."""

    widget = forms.Textarea(attrs={"rows": 6, "spellcheck": "false", "class": "form-control font-monospace"})

    def __init__(self, *, example: str = '{"source": "chat"}', rows: int = 6, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("strip", True)
        self.example = example
        super().__init__(**kwargs)
        self.widget.attrs["rows"] = rows

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


class MetadataFilterField(JSONObjectField):
    """A metadata filter in the engine's JSON filter language, checked by the engine's own parser."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("label", "Metadata filter")
        kwargs.setdefault("help_text", 'JSON, e.g. {"tags": {"$array_contains": "diet"}}')
        super().__init__(example='{"source": "chat"}', **kwargs)
        self.widget = forms.TextInput(attrs={**ID_WIDGET, "class": "form-control form-control-sm font-monospace"})

    def to_python(self, value: Any) -> dict | None:
        parsed = super().to_python(value)
        if parsed is not None:
            try:
                parse_filter(parsed)
            except ValueError as error:
                raise ValidationError(str(error), code="filter") from None
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


def id_field(label: str, *, small: bool = False, **kwargs: Any) -> forms.CharField:
    attrs = {**ID_WIDGET, "class": ID_WIDGET["class"] + " form-control-sm"} if small else ID_WIDGET
    return forms.CharField(
        label=label, required=False, max_length=512, strip=True, widget=forms.TextInput(attrs=attrs), **kwargs
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


YES_NO_DEFAULT = [("", "default"), ("true", "yes"), ("false", "no")]


def optional_flag(label: str, help_text: str) -> forms.TypedChoiceField:
    """A flag the engine defaults by itself: left empty, the argument is not passed at all."""
    return forms.TypedChoiceField(
        label=label,
        required=False,
        choices=YES_NO_DEFAULT,
        coerce=lambda value: value == "true",
        empty_value=None,
        widget=forms.Select(attrs={"class": "form-select form-select-sm"}),
        help_text=help_text,
    )


def optional_number(label: str, help_text: str, *, minimum: int = 1, maximum: int | None = None) -> forms.IntegerField:
    return forms.IntegerField(
        label=label,
        required=False,
        min_value=minimum,
        max_value=maximum,
        widget=forms.NumberInput(attrs={"class": "form-control form-control-sm", "min": str(minimum)}),
        help_text=help_text,
    )


FORMAT_OPTIONS = {
    "show_timestamp": True,
    "show_role": True,
    "show_status": True,
    "show_distance": False,
    "show_thread_id": False,
    "show_user_id": False,
    "show_agent_id": False,
    "show_metadata": False,
}
"""SearchResultFormatConfig's options and the engine's default of each."""


def format_toggle(label: str) -> forms.BooleanField:
    return forms.BooleanField(
        label=label, required=False, widget=forms.CheckboxInput(attrs={"class": "form-check-input"})
    )


SEARCH_OPTIONS = (
    "exact_user_match",
    "exact_agent_match",
    "exact_thread_match",
    "record_types",
    "metadata_filter",
    "max_results",
    "token_budget",
    "soft_token_budget",
    "num_hops",
    "max_linked_results",
    "include_invalid_results",
    "strategy",
)
"""The search call's keyword arguments besides the scope ids, named as the engine names them."""


def given_values(data: dict[str, Any]) -> dict[str, Any]:
    """A form's cleaned data less what was left empty (an empty field is an argument not passed)."""
    return {name: value for name, value in data.items() if value is not None and value != "" and value != []}


def search_problems(given: dict[str, Any], *, choose: str) -> list[tuple[str, str]]:
    """What is wrong with a search's parameters taken together, as (field, message): the rules of
    the dashboard's search form and of the API's search body alike. `given` holds the parameters
    given (None: the engine's "none", e.g. records without a user); `choose` is how the person
    asks for records without one ("tick" a box, or "ask for" them)."""
    problems = []
    thread_layer = given.get("layer") == "thread"
    if thread_layer and not given.get("thread_id"):
        problems.append(("thread_id", "A thread's search needs the thread."))
    for name in given.get("unscoped") or ():
        if thread_layer and name == "thread_id":
            problems.append(("unscoped", "A thread's search is within its thread."))
        elif given.get(name):
            problems.append((name, f"Give a value or {choose} \u201c{SCOPES[name]}\u201d, not both."))
        elif given.get(f"exact_{name.removesuffix('_id')}_match") is False:
            problems.append(("unscoped", f"Records with {SCOPES[name]} are found by an exact match only."))
    return problems


def search_arguments(given: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of the search call (the query is positional) from the parameters
    given: a thread's search takes its thread from `thread_id`, not as an argument; `unscoped`
    names the dimensions searched for records without one (the engine's None, matched exactly)."""
    arguments = {name: given[name] for name in SEARCH_OPTIONS if name in given}
    dimensions = ("user_id", "agent_id") if given.get("layer") == "thread" else tuple(SCOPES)
    arguments.update({name: given[name] for name in dimensions if name in given})
    for name in given.get("unscoped") or ():
        arguments[name] = None
        arguments[f"exact_{name.removesuffix('_id')}_match"] = True
    return arguments


class SearchForm(forms.Form):
    """The search workbench: every parameter of AgentMemory.search and Thread.search, named as the
    engine names them (`q` is the query), the strategy of this one search, and the
    SearchResultFormatConfig toggles of the formatted content."""

    q = forms.CharField(
        label="Query",
        max_length=10_000,
        widget=forms.TextInput(attrs={"class": "form-control", "type": "search", "data-shortcut": "search"}),
    )
    layer = forms.ChoiceField(
        label="Search as",
        required=False,
        choices=[("client", "the client (AgentMemory.search)"), ("thread", "a thread (Thread.search)")],
        widget=forms.Select(attrs={"class": "form-select form-select-sm"}),
        help_text="A thread's search defaults to its user and agent.",
    )
    user_id = id_field("User", small=True)
    agent_id = id_field("Agent", small=True)
    thread_id = id_field("Thread", small=True)
    exact_user_match = optional_flag("Only this user", "Client: always.")
    exact_agent_match = optional_flag("Only this agent", "Client: no; thread: yes.")
    exact_thread_match = optional_flag("Only this thread", "Default: no.")
    unscoped = forms.MultipleChoiceField(
        label="Only records with",
        required=False,
        choices=list(SCOPES.items()),
        widget=forms.CheckboxSelectMultiple(attrs={"class": "form-check-input"}),
        help_text="Only records that have no user (or agent, or thread).",
    )
    record_types = forms.MultipleChoiceField(
        label="Record types",
        required=False,
        choices=[(t, t) for t in SEARCHABLE_TYPES],
        widget=forms.CheckboxSelectMultiple(attrs={"class": "form-check-input"}),
        help_text="None ticked: every type.",
    )
    metadata_filter = MetadataFilterField(help_text="The engine's JSON filter.")
    max_results = optional_number("Max results", "Default 10.", maximum=1000)
    token_budget = optional_number("Token budget", "Hard: results past it are dropped.")
    soft_token_budget = optional_number("Soft token budget", "Stops after the result that reaches it.")
    num_hops = optional_number("Hops", "Linked memories up to 5 links away.", minimum=0, maximum=5)
    max_linked_results = optional_number("Max linked results", "Default 100.", minimum=0)
    include_invalid_results = optional_flag("Invalid results", "Default: yes, kept as history.")
    strategy = forms.ChoiceField(
        label="Strategy",
        required=False,
        choices=[("", "default (hybrid)"), *((s.value, s.value) for s in SearchStrategy)],
        widget=forms.Select(attrs={"class": "form-select form-select-sm"}),
    )
    formatted = forms.BooleanField(required=False, widget=forms.HiddenInput)  # the toggles below were sent
    show_timestamp = format_toggle("timestamp")
    show_role = format_toggle("role")
    show_status = format_toggle("status")
    show_distance = format_toggle("distance")
    show_thread_id = format_toggle("thread id")
    show_user_id = format_toggle("user id")
    show_agent_id = format_toggle("agent id")
    show_metadata = format_toggle("metadata")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        for field, message in search_problems(given_values(data), choose="tick"):
            self.add_error(field, message)
        return data

    def needs_user(self) -> bool:
        """A client search without its user: the engine's requirement, asked of the person instead."""
        data = self.cleaned_data
        return data.get("layer") != "thread" and not data.get("user_id") and "user_id" not in data.get("unscoped", ())

    def search_arguments(self) -> dict[str, Any]:
        """The keyword arguments of the search call (the query is positional)."""
        return search_arguments(given_values(self.cleaned_data))

    def format_config(self) -> SearchResultFormatConfig:
        """The formatted content's options: the toggles as sent, or the engine's defaults on a
        first visit (an unticked box is absent from a query string, like one never shown)."""
        if not self.cleaned_data.get("formatted"):
            return SearchResultFormatConfig()
        return SearchResultFormatConfig(**{name: bool(self.cleaned_data.get(name)) for name in FORMAT_OPTIONS})


class ContextCardForm(forms.Form):
    """Every parameter of Thread.get_context_card, named as the engine names them, and the
    message the card is taken as of (`as_of_message_id`, beyond the SDK)."""

    fallback_message_count = optional_number(
        "Fallback messages", "Default 5: searched when there is no summary.", minimum=0
    )
    max_relevant_results = optional_number("Max relevant results", "Default: the engine's.")
    token_budget = optional_number("Token budget", "Hard limit of the relevant results.")
    soft_token_budget = optional_number("Soft token budget", "Stops after the result that reaches it.")
    max_recent_messages = optional_number("Recent messages", "Default 0: none in the card.", minimum=0)
    except_last_messages = optional_number("Except the last", "Messages left out at the end; default 0.", minimum=0)
    min_relevant_results_by_type = JSONObjectField(
        label="Minimum results by type",
        example='{"fact": 2, "preference": 1}',
        help_text='JSON, e.g. {"fact": 2, "preference": 1}',
        rows=2,
    )
    metadata_filter = MetadataFilterField()
    include_invalid_results = optional_flag("Invalid results", "Default: yes.")
    as_of_message_id = id_field("As of message", small=True, help_text="The card right after this message was stored.")

    def card_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {name: value for name, value in data.items() if value not in (None, "")}


def check_relation_label(label: str) -> str:
    """A relation type as typed, refusing what looks like a built-in mistyped: a label of one's
    own retires nothing, so "Supersedes" or "is_superseded_by" would make a link that reads right
    and does not do what the person meant."""
    readings = {opposite: forward for forward, opposite in BUILTIN_RELATIONS.items() if opposite != forward}
    if label not in BUILTIN_RELATIONS and label.lower() in BUILTIN_RELATIONS:
        raise ValidationError(f"Built-in types are lower case: did you mean \u201c{label.lower()}\u201d?")
    if label.lower() in readings:
        forward = readings[label.lower()]
        raise ValidationError(
            f"\u201c{label}\u201d is how a {forward} link reads from its target: "
            f"make a {forward} link from the other memory."
        )
    return label


def relation_type_field() -> forms.CharField:
    return forms.CharField(
        label="Relation",
        max_length=512,
        widget=forms.TextInput(attrs={"class": "form-control", "list": "relation-types", "autocomplete": "off"}),
        help_text="A built-in type (supersedes, refines, duplicates, supports, contradicts) or a label of your own.",
    )


def opposite_type_field() -> forms.CharField:
    return forms.CharField(
        label="Read backwards as",
        required=False,
        max_length=512,
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


# --- API tokens ---------------------------------------------------------------------------------


class ApiTokenForm(forms.Form):
    """A new personal API token (/settings/tokens/): its name, a role up to the owner's, and an
    optional lifetime; `memory.tokens.create_token` decides the rest (a name already in use)."""

    name = forms.CharField(
        label="Name",
        max_length=NAME_LENGTH,
        widget=forms.TextInput(attrs={"class": "form-control", "autocomplete": "off", "spellcheck": "false"}),
        help_text="What will use it: a script, a machine, an agent. It names your changes in the history.",
    )
    role = forms.ChoiceField(label="Role", widget=forms.Select(attrs={"class": "form-select"}))
    expires_days = forms.IntegerField(
        label="Expires after (days)",
        required=False,
        min_value=1,
        max_value=MAX_EXPIRY_DAYS,
        widget=forms.NumberInput(attrs={"class": "form-control", "min": "1", "max": str(MAX_EXPIRY_DAYS)}),
        help_text="Empty: never expires.",
        error_messages={
            "min_value": f"A token expires in 1 to {MAX_EXPIRY_DAYS} days, or never (leave it empty).",
            "max_value": f"A token expires in 1 to {MAX_EXPIRY_DAYS} days, or never (leave it empty).",
        },
    )

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        roles = allowed_roles(user)
        role = self.fields["role"]
        role.choices = [(value, label) for value, label in TokenRole.choices if value in roles]
        role.initial = roles[0] if roles else None  # the least a token can do
        if roles == ["viewer"]:
            role.help_text = "As a viewer, you make viewer tokens: they read, and change nothing."
            role.error_messages["invalid_choice"] = (
                "A token's role is no higher than yours: as a viewer, you make viewer tokens only."
            )
        else:
            role.help_text = "Viewer tokens read; curator tokens also write."
            role.error_messages["invalid_choice"] = "Pick " + " or ".join(roles) + "."


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
