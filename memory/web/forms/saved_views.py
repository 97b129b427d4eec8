"""The form that saves a listing's filters under a name (the memory and thread lists)."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

from django import forms
from django.core.exceptions import ValidationError

from memory.models import SavedView

NOT_SAVED = ("cursor", "facets")
"""Parameters of a listing's URL that are where one is in it, not what it lists."""


class SavedViewForm(forms.Form):
    name = forms.CharField(
        label="Name",
        max_length=80,
        error_messages={"required": "Give the view a name."},
        widget=forms.TextInput(attrs={"class": "form-control form-control-sm", "autocomplete": "off"}),
    )
    listing = forms.ChoiceField(choices=SavedView.Listing.choices, widget=forms.HiddenInput)
    query = forms.CharField(max_length=4000, widget=forms.HiddenInput)

    def clean_name(self) -> str:
        name = " ".join(self.cleaned_data["name"].split())
        if not name:
            raise ValidationError("Give the view a name.", code="blank")
        return name

    def clean_query(self) -> str:
        """The filters alone, in a stable order: paging and facets are left out."""
        pairs = [(key, value) for key, value in parse_qsl(self.cleaned_data["query"]) if key not in NOT_SAVED and value]
        if not pairs:
            raise ValidationError("Choose some filters first: a view of everything is the list itself.", code="empty")
        return urlencode(pairs)
