"""The search workbench's form and the context card's: every parameter of the engine's search and
get_context_card calls, named as the engine names them. The rules of a search's parameters taken
together are shared with the API (memory.web.fields)."""

from __future__ import annotations

from typing import Any

from django import forms

from memory.engine import SEARCHABLE_TYPES, SearchResultFormatConfig, SearchStrategy
from memory.web.fields import (
    SCOPES,
    JSONObjectField,
    MetadataFilterField,
    given_values,
    id_field,
    search_arguments,
    search_problems,
)

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
