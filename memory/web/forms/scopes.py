"""The form that sets a login's scope (/settings/logins/): the users and agents it sees."""

from __future__ import annotations

from django import forms

from memory.web.scopes import ScopeError, parse_ids


class ScopeForm(forms.Form):
    """A login's users and agents, each a comma-separated list of ids; both empty: it sees everything."""

    users = forms.CharField(
        label="Users it sees",
        required=False,
        max_length=4000,
        widget=forms.TextInput(attrs={"class": "form-control", "autocomplete": "off", "spellcheck": "false"}),
        help_text="User ids, comma-separated (alice, bob). Empty: every user.",
    )
    agents = forms.CharField(
        label="Agents it sees",
        required=False,
        max_length=4000,
        widget=forms.TextInput(attrs={"class": "form-control", "autocomplete": "off", "spellcheck": "false"}),
        help_text="Agent ids, comma-separated (atlas). Empty: every agent.",
    )

    def __init__(self, *args, prefix_id: int | None = None, **kwargs) -> None:
        super().__init__(*args, prefix=None if prefix_id is None else f"login{prefix_id}", **kwargs)

    def clean_users(self) -> list[str]:
        return self._ids("users")

    def clean_agents(self) -> list[str]:
        return self._ids("agents")

    def _ids(self, field: str) -> list[str]:
        try:
            return parse_ids(field, self.cleaned_data.get(field) or "")
        except ScopeError as error:
            raise forms.ValidationError(str(error).replace(f"{field} ", "An id ", 1)) from None
