"""The dashboard writes inputs and selects itself (for speed): exactly as Django's widget
templates would, attribute for attribute, escaping included."""

from __future__ import annotations

import re

import pytest
from django import forms
from django.forms.widgets import Input

from memory.templatetags.oam import choice_group, choice_input, field_group, render_widget
from memory.web.filters import MemoryFilters
from memory.web.forms.records import MemoryEditForm
from memory.web.forms.search import SearchForm

HOSTILE = '"><script>alert(1)</script>'


def between_tags(html: str) -> str:
    """Django's select template puts line breaks between its options; nothing else differs."""
    return re.sub(r">\s+<", "><", html)


@pytest.mark.parametrize(
    ("form", "names"),
    [
        (
            SearchForm({"q": HOSTILE, "user_id": "u", "max_results": "5", "strategy": "keyword", "show_role": "on"}),
            ["q", "user_id", "max_results", "strategy", "exact_user_match", "formatted", "show_role", "show_user_id"],
        ),
        (
            MemoryEditForm(
                initial={
                    "memory_type": "fact",
                    "timestamp": "2026-01-02T03:04:05+00:00",
                    "version": 3,
                    "user_id": HOSTILE,
                }
            ),
            ["memory_type", "timestamp", "version", "user_id", "ttl_days", "never_expires", "status"],
        ),
        (MemoryFilters({"status": "invalid", "q": "x<y", "limit": "7"}), ["status", "q", "order", "limit", "user_id"]),
    ],
)
def test_inputs_and_selects_are_written_as_django_writes_them(form, names):
    for name in names:
        field = form[name]
        assert isinstance(field.field.widget, (Input, forms.Select))
        for attrs in ({}, {"class": "x is-invalid", "aria-invalid": "true"}):
            assert render_widget(field, attrs) == between_tags(field.as_widget(attrs=attrs)), name


def test_choices_are_written_as_django_writes_them():
    form = MemoryFilters({"memory_type": ["fact", "memory"], "unscoped": "thread_id"})
    for name in ("memory_type", "unscoped"):
        for choice in form[name]:
            assert choice_input(choice) == choice.tag()


def test_a_field_is_written_labelled_with_its_errors_and_help_escaped():
    class Hostile(forms.Form):
        name = forms.CharField(label="<b>Name</b>", help_text="<i>help</i>")

    form = Hostile({"name": "x"})
    form.add_error("name", HOSTILE)
    html = field_group(form["name"])

    assert '<label class="form-label fw-semibold small mb-1" for="id_name">&lt;b&gt;Name&lt;/b&gt;</label>' in html
    assert '<div class="invalid-feedback d-block" id="id_name_error">&quot;&gt;&lt;script&gt;' in html
    assert '<div class="form-text" id="id_name_helptext">&lt;i&gt;help&lt;/i&gt;</div>' in html
    assert 'aria-invalid="true"' in html and 'aria-describedby="id_name_error"' in html
    assert "<script>" not in html


def test_a_choice_group_is_written_with_its_legend_and_errors_escaped():
    class Hostile(forms.Form):
        kinds = forms.MultipleChoiceField(
            label="<b>Kinds</b>", choices=[("a", "<i>A</i>"), ("b", "B")], widget=forms.CheckboxSelectMultiple
        )

    form = Hostile({"kinds": ["a"]})
    form.add_error("kinds", HOSTILE)
    form.add_error("kinds", "second")
    html = choice_group(form["kinds"])

    assert '<fieldset class="mb-3" aria-describedby="id_kinds_error">' in html
    assert '<legend class="form-label fw-semibold small mb-1">&lt;b&gt;Kinds&lt;/b&gt;</legend>' in html
    assert 'for="id_kinds_0">&lt;i&gt;A&lt;/i&gt;</label>' in html and 'value="a"' in html and "checked" in html
    assert html.count('id="id_kinds_error"') == 1 and "second" in html and "<script>" not in html
