"""The form that makes a personal API token (/settings/tokens/)."""

from __future__ import annotations

from typing import Any

from django import forms

from memory.models import TokenRole
from memory.web.tokens import MAX_EXPIRY_DAYS, NAME_LENGTH, allowed_roles


class ApiTokenForm(forms.Form):
    """A new personal API token (/settings/tokens/): its name, a role up to the owner's, and an
    optional lifetime; `memory.web.tokens.create_token` decides the rest (a name already in use)."""

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
