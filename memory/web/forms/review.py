"""The review queues' decision forms (/review/): the one a decision posts more than its link with.
The queues themselves, and their query string's form, are memory.queries.review and
memory.web.filters.ReviewFilters."""

from __future__ import annotations

from django import forms

from memory.web.fields import ID_MAX_LENGTH


class KeepForm(forms.Form):
    """Resolving a contradiction: the id of the memory to keep (the other is superseded)."""

    keep = forms.CharField(label="Memory to keep", max_length=ID_MAX_LENGTH)
