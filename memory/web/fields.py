"""The rules of the fields that the dashboard's forms and the API's serializers both take in, so
that a value is accepted or refused the same way through either front door.

Forms and serializers check what a client can get wrong (JSON that does not parse, a number that is
not one, a lifetime past the cap); the engine decides the rest, and its ValueErrors come back as
errors on the field they name (`memory.web.engine_errors.field_errors`).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from memory.engine import BUILTIN_RELATIONS, normalize_timestamp, parse_filter

ID_MAX_LENGTH = 512
"""The longest id a field takes, in characters (the engine's own rule, in bytes, is checked after);
a message role and a link's label are ids to the engine (limits.check_id_text), so the same."""

MAX_TTL_DAYS = 36_500
"""The longest lifetime a memory can be given, in days (a hundred years): `ttl_days` of the memory
forms and of the API's memory bodies alike."""

MAX_SELECTION = 20_000
"""Most memories one bulk change acts on: the confirmation carries each id and version, and a
preview of more would be read by nobody. Narrower filters, or several changes, do more. Here, the
field rules' module, because both the bulk form (memory.web.forms.bulk) and the plan it confirms
(memory.curation.bulk_plan, a layer above) hold a selection to it."""

MESSAGE_ROLES = ("user", "assistant", "system", "tool")
"""The roles a message is given through the dashboard and the API: the chat roles agents and LLM
APIs use. The engine takes any role (spec §9.1: threads accept custom role names), so records
with another one may exist (an import, an agent): they show and keep it, and an edit that changes
a role changes it to one of these."""

MESSAGE_ROLE_LABELS = {
    "user": "user: the person",
    "assistant": "assistant: the agent",
    "system": "system: instructions to the agent",
    "tool": "tool: a tool's result",
}


def message_role_choices(stored: str | None = None) -> list[tuple[str, str]]:
    """The choices of a role field: MESSAGE_ROLES, and a stored role that is none of them (an
    edit keeps it unless it is changed)."""
    choices = [(role, MESSAGE_ROLE_LABELS[role]) for role in MESSAGE_ROLES]
    if stored is not None and stored not in MESSAGE_ROLES:
        choices.append((stored, f"{stored} (as stored; not one of the roles)"))
    return choices


def message_role_error(role: Any) -> str:
    """Why a role is refused, in the same words through either front door; the role is quoted
    when it is short printable text (not, e.g., a lone surrogate no page or JSON body can carry)."""
    roles = ", ".join(MESSAGE_ROLES[:-1]) + f" or {MESSAGE_ROLES[-1]}"
    if isinstance(role, str) and 0 < len(role) <= 40 and role.isprintable():
        return f"\u201c{role}\u201d is not a message role: use {roles}."
    return f"Not a message role: use {roles}."


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


def id_field(label: str, *, small: bool = False, **kwargs: Any) -> forms.CharField:
    attrs = {**ID_WIDGET, "class": ID_WIDGET["class"] + " form-control-sm"} if small else ID_WIDGET
    return forms.CharField(
        label=label, required=False, max_length=ID_MAX_LENGTH, strip=True, widget=forms.TextInput(attrs=attrs), **kwargs
    )


class MessageRoleField(forms.ChoiceField):
    """A message's role, chosen from MESSAGE_ROLES (a <select>); `stored`, a message's role that
    is none of them, is a choice too, so that an edit of anything else keeps it."""

    def __init__(self, *, stored: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("label", "Role")
        kwargs.setdefault("widget", forms.Select(attrs={"class": "form-select"}))
        super().__init__(choices=message_role_choices(stored), **kwargs)

    def validate(self, value: Any) -> None:
        if value in self.empty_values or self.valid_value(value):
            super().validate(value)
        else:
            raise ValidationError(message_role_error(value), code="invalid_choice")


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
