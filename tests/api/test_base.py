"""What every API view shares (memory/api/base.py): the dashboard's filter forms as documented query
parameters, one value per parameter, JSON bodies."""

from __future__ import annotations

import pytest
from django import forms
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request

from memory.api.base import form_parameters, query_form
from memory.web.filters import MemoryFilters


class Filters(forms.Form):
    count = forms.IntegerField(label="Count", required=False, min_value=2, max_value=9, help_text="How many.")
    share = forms.FloatField(label="Share", required=False, max_value=1.0)
    name = forms.CharField(label="Name", required=False, min_length=3, max_length=40)
    query = forms.CharField(label="Query", max_length=100)
    colour = forms.ChoiceField(label="Colour", required=False, choices=[("", "any"), ("red", "warm"), ("blue", "blue")])
    sizes = forms.MultipleChoiceField(label="Sizes", required=False, choices=[("s", "s"), ("m", "m")])


class AnyLabel(forms.MultipleChoiceField):
    def valid_value(self, value: str) -> bool:
        return True


class Tags(forms.Form):
    tag = AnyLabel(label="Tag", required=False, choices=[("one", "one"), ("two", "two")])


class Flags(forms.Form):
    loud = forms.BooleanField(label="Loud", required=False)


@pytest.mark.parametrize(("value", "valid"), [("true", True), ("false", True), ("0", True), ("", True), ("yes", False)])
def test_a_flag_is_true_or_false_not_any_text(rf, value, valid):
    request = Request(rf.get("/", {"loud": value}))
    if valid:
        assert query_form(Flags, request).is_valid()
    else:
        with pytest.raises(ValidationError) as refused:
            query_form(Flags, request)
        assert refused.value.detail == {"loud": ["Give true or false."]}


def by_name(parameters: list[OpenApiParameter]) -> dict[str, OpenApiParameter]:
    return {parameter.name: parameter for parameter in parameters}


def test_numbers_and_text_carry_the_limits_of_their_validators():
    parameters = by_name(form_parameters(Filters))

    assert parameters["count"].type == {"type": "integer", "minimum": 2, "maximum": 9}
    assert parameters["share"].type == {"type": "number", "maximum": 1.0}
    assert parameters["name"].type == {"type": "string", "minLength": 3, "maxLength": 40}


def test_a_required_field_is_a_required_non_empty_parameter_and_the_others_may_be_empty():
    parameters = by_name(form_parameters(Filters))

    assert parameters["query"].required is True
    assert parameters["query"].type == {"type": "string", "maxLength": 100, "minLength": 1}
    assert parameters["query"].extensions is None
    assert parameters["count"].required is False
    assert parameters["count"].extensions == {"x-empty-is-unset": True}


def test_choices_are_an_enum_without_the_empty_choice_and_repeatable_fields_an_array():
    parameters = by_name(form_parameters(Filters))

    assert parameters["colour"].type == {"type": "string", "enum": ["red", "blue"]}
    assert parameters["sizes"].type == {"type": "array", "items": {"type": "string", "enum": ["s", "m"]}}
    assert parameters["sizes"].extensions is None  # `sizes=` is no size: a 400, not "not given"


def test_a_choice_field_that_takes_any_label_has_examples_not_an_enum():
    tag = by_name(form_parameters(Tags))["tag"]

    assert tag.type == {"type": "array", "items": {"type": "string"}}
    assert "Built-in: `one`, `two`." in tag.description


def test_descriptions_say_what_a_parameter_does_then_the_fields_help_and_its_choices_labels():
    parameters = by_name(form_parameters(Filters, descriptions={"colour": "Only things of this colour"}))

    assert parameters["count"].description == "Count. How many."  # no description known: the label
    assert parameters["colour"].description == "Only things of this colour. `red`: warm."
    memory = by_name(form_parameters(MemoryFilters))
    assert memory["agent_id"].description == "An agent's id: only records of this agent."
    assert memory["q"].description == "Text to find. In the content, id or metadata; any case."
    assert memory["limit"].description == "How many records a page holds (default 50)."
    assert "`expired`: expired, awaiting purge." in memory["status"].description


def test_excluded_fields_are_left_out():
    assert "cursor" not in by_name(form_parameters(MemoryFilters, exclude=("cursor",)))


# --- through the memory list ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["user_id", "limit", "order"])
def test_a_parameter_given_twice_is_a_400_not_the_last_value(viewer_api, agent_memory, name):
    values = {"user_id": ["alice", "bob"], "limit": ["1", "2"], "order": ["newest", "oldest"]}[name]

    response = viewer_api.get("/api/v1/memories/", {name: values})

    assert response.status_code == 400
    assert response.json()["errors"] == {name: ["Give this parameter once."]}


def test_a_repeatable_parameter_may_be_repeated(viewer_api, agent_memory):
    agent_memory.add_memory("A fact.", memory_type="fact", memory_id="f")
    agent_memory.add_memory("A guideline.", memory_type="guideline", memory_id="g")
    agent_memory.add_memory("A memory.", memory_id="m")

    response = viewer_api.get("/api/v1/memories/", {"memory_type": ["fact", "guideline"]})

    assert response.status_code == 200
    assert sorted(item["id"] for item in response.json()["results"]) == ["f", "g"]


def test_empty_parameters_are_not_given(viewer_api, agent_memory):
    agent_memory.add_memory("A fact.", memory_id="f")

    response = viewer_api.get("/api/v1/memories/?limit=&order=&user_id=&status=")

    assert response.status_code == 200
    assert [item["id"] for item in response.json()["results"]] == ["f"]
