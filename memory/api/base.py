"""What every API view shares: authentication and roles, the curation service for the caller,
the dashboard's filter forms as query parameters, and ETags from record versions."""

from __future__ import annotations

import re
from contextlib import ExitStack
from decimal import Decimal
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_not_required
from django.core import validators
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import Http404
from django.urls import reverse
from drf_spectacular.plumbing import build_basic_type, get_lib_doc_excludes
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import exceptions, serializers, status
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.api.errors import NON_FIELD, PreconditionFailed
from memory.api.parsers import JSONParser
from memory.api.serializers.common import BodySerializer
from memory.curation import Actor, Curation
from memory.engine import AgentMemory, acting_as, continued_trace
from memory.models import ApiToken
from memory.services import get_agent_memory
from memory.web.filters import DEFAULT_PAGE_SIZE


class AnyAccept(DefaultContentNegotiation):
    """JSON when `Accept` (or `?format=`) asks for a type the API does not make, rather than a 406
    (or DRF's 404 for an unknown format): RFC 9110 §12.5.1 lets a server disregard Accept, and a
    client that asks for XML reads a JSON body better than no answer at all."""

    def select_renderer(self, request: Request, renderers: list, format_suffix: str | None = None) -> tuple:
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except (exceptions.NotAcceptable, Http404):
            return renderers[0], renderers[0].media_type


class EngineView(APIView):
    """An API view over the engine. Login is the API's business (a token or a session, 401
    otherwise), not the dashboard's redirect to the login page. Roles: ReadOrCurate, the
    default permission (settings.REST_FRAMEWORK). Bodies are JSON (memory.api.parsers: a body
    nested too deeply is a 400 too), 415 otherwise: a form's fields would be read leniently (DRF
    reads a dict field of a form as {}). A view that takes an upload names its own parsers
    (MultiPartParser)."""

    parser_classes = (JSONParser,)
    content_negotiation_class = AnyAccept

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        return login_not_required(super().as_view(**initkwargs))

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        """After authentication, until the response is made: a request made with a token is
        recorded in the activity log as the token's (an agent or a script), on behalf of its
        owner; a caller's W3C `traceparent` is continued, so that the spans of its retrievals
        (OAM_OTLP_ENDPOINT) join its own trace."""
        super().initial(request, *args, **kwargs)
        self._caller = ExitStack()
        self._caller.enter_context(
            continued_trace(request.headers.get("traceparent"), request.headers.get("tracestate"))
        )
        if isinstance(request.auth, ApiToken):
            self._caller.enter_context(
                acting_as(request.auth.name, caller_kind="agent", on_behalf_of=request.user.get_username())
            )

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Any:
        caller = getattr(self, "_caller", None)
        if caller is not None:
            caller.close()
        return super().finalize_response(request, response, *args, **kwargs)

    @property
    def agent_memory(self) -> AgentMemory:
        """The process's AgentMemory (memory.services)."""
        return get_agent_memory()

    def curation(self) -> Curation:
        """The curation service acting for the caller: the history records the user, "api", and
        the token's name when a token was used."""
        token = self.request.auth if isinstance(self.request.auth, ApiToken) else None
        return Curation(get_agent_memory(), Actor(self.request.user, via="api", token_name=token.name if token else ""))

    def valid_body(
        self, serializer_class: type[serializers.Serializer], *, id_as: str = "", **kwargs: Any
    ) -> dict[str, Any]:
        """The request's body as the serializer checks it, or a 400 with its messages by field
        (check it before If-Match: expected_version). `id_as`: the engine's name for the body's
        `id` (memory_id, thread_id…)."""
        body = serializer_class(data=self.request.data, **kwargs)
        body.is_valid(raise_exception=True)
        fields = dict(body.validated_data)
        if id_as and "id" in fields:
            fields[id_as] = fields.pop("id")
        return fields

    @staticmethod
    def created(response: Response, url_name: str, record_id: Any) -> Response:
        """A creation's answer: 201, with the URL of what was made as `Location`."""
        response.status_code = status.HTTP_201_CREATED
        response["Location"] = reverse(url_name, args=[record_id])
        return response


def lib_doc_excludes() -> list[type]:
    """drf-spectacular's GET_LIB_DOC_EXCLUDES: an operation or a body without a description of its
    own does not get EngineView's or BodySerializer's docstring (notes for developers) instead."""
    return [EngineView, BodySerializer, *get_lib_doc_excludes()]


FLAGS = ("true", "false", "1", "0", "")


def query_form(form_class: type[forms.Form], request: Request) -> forms.Form:
    """The dashboard's filter form over the query string, valid, or a 400 with its field messages
    (the same names and messages as the dashboard's filter bar)."""
    form = form_class(request.query_params)
    # What the schema says and a form would let pass: a second value (the form takes the last),
    # a flag that is neither true nor false (a form's BooleanField takes any text as true).
    errors = {}
    for name, values in request.query_params.lists():
        field = form.fields.get(name)
        if len(values) > 1 and field is not None and not isinstance(field, forms.MultipleChoiceField):
            errors[name] = ["Give this parameter once."]
        elif isinstance(field, forms.BooleanField) and values[-1].lower() not in FLAGS:
            errors[name] = ["Give true or false."]
    if errors:
        raise exceptions.ValidationError(errors)
    if not form.is_valid():
        raise exceptions.ValidationError(form_errors(form))
    return form


def form_errors(form: forms.Form) -> dict[str, list[str]]:
    """A form's errors by field, those of the form as a whole under `non_field_errors`."""
    return {
        NON_FIELD if name == NON_FIELD_ERRORS else name: [str(message) for message in messages]
        for name, messages in form.errors.items()
    }


FORM_TYPES = {  # the first that matches: FloatField is an IntegerField to Django
    forms.FloatField: OpenApiTypes.NUMBER,
    forms.DecimalField: OpenApiTypes.NUMBER,
    forms.IntegerField: OpenApiTypes.INT,
    forms.BooleanField: OpenApiTypes.BOOL,
    forms.DateTimeField: OpenApiTypes.DATETIME,
}

PARAMETER_DESCRIPTIONS = {
    "cursor": "The `next` link's cursor: the page after the previous one.",
    "limit": f"How many records a page holds (default {DEFAULT_PAGE_SIZE}).",
    "q": "Text to find.",
    "user_id": "A user's id: only records of this user.",
    "agent_id": "An agent's id: only records of this agent.",
    "thread_id": "A thread's id: only records of this thread.",
    "memory_id": "A memory's id.",
    "memory_type": "Only memories of this type; repeat the parameter for several "
    "(`memory_type=fact&memory_type=preference`).",
    "record_types": "Only records of this type; repeat the parameter for several.",
    "status": "Only records with this status.",
    "unscoped": "Only records tied to no user, agent or thread (repeatable); not with a value for the same scope.",
    "order": "The order of the records (default `newest`).",
    "metadata_filter": "Only records whose metadata match this filter.",
    "relation_type": "Only links of this type; repeat the parameter for several. Custom types are taken as given.",
    "object_kind": "Only changes of this kind of record.",
    "object_id": "Only changes of the record with this id.",
    "actor": "Only changes made by this user (their username).",
    "action": "Only changes of this kind.",
    "since": "Only changes made at or after this time (ISO 8601).",
    "until": "Only changes made before this time (ISO 8601).",
}
"""What each filter parameter does, for the schema: the forms' labels ("Agent", "Type") are written
for a filter bar, where the page says the rest. A field's help_text follows, when it has one."""


def sentence(text: str) -> str:
    text = str(text).strip()
    return text if not text or text.endswith((".", "?", "!", ")")) else f"{text}."


def bound(field: forms.Field, validator_class: type[validators.BaseValidator]) -> Any:
    """The limit of the field's validator of this class (min/max value or length), or None."""
    for validator in field.validators:
        if isinstance(validator, validator_class):
            limit = validator.limit_value
            return limit() if callable(limit) else limit
    return None


def field_schema(field: forms.Field) -> dict[str, Any]:
    """The JSON schema of one value of a form field, with the limits its validators enforce (a
    parameter outside them is a 400, so the schema says so)."""
    kind = next((api for form_type, api in FORM_TYPES.items() if isinstance(field, form_type)), OpenApiTypes.STR)
    schema = dict(build_basic_type(kind))
    if kind in (OpenApiTypes.INT, OpenApiTypes.NUMBER):
        limits = {"minimum": validators.MinValueValidator, "maximum": validators.MaxValueValidator}
    elif kind == OpenApiTypes.STR:
        limits = {"minLength": validators.MinLengthValidator, "maxLength": validators.MaxLengthValidator}
    else:
        limits = {}
    for keyword, validator_class in limits.items():
        limit = bound(field, validator_class)
        if limit is not None:
            schema[keyword] = float(limit) if isinstance(limit, Decimal) else limit
    return schema


def choices_of(field: forms.Field) -> list[tuple[str, str]]:
    """The values a choice field takes (the empty "any" choice left out), as (value, label)."""
    return [(str(value), str(label)) for value, label in getattr(field, "choices", ()) if value != ""]


def takes_any_value(field: forms.Field) -> bool:
    """A choice field that also takes values beyond its choices (custom relation types): its
    choices are examples, not an enum."""
    return type(field).valid_value is not forms.ChoiceField.valid_value


def parameter_description(name: str, field: forms.Field, descriptions: dict[str, str]) -> str:
    parts = [sentence(descriptions.get(name) or PARAMETER_DESCRIPTIONS.get(name) or field.label or name)]
    if field.help_text and name != "cursor":
        parts.append(sentence(field.help_text))
    choices = choices_of(field)
    if choices and takes_any_value(field):
        parts.append("Built-in: " + ", ".join(f"`{value}`" for value, _ in choices) + ".")
    else:
        parts.extend(sentence(f"`{value}`: {label}") for value, label in choices if label != value)
    return " ".join(parts)


def form_parameters(
    form_class: type[forms.Form], *, exclude: tuple[str, ...] = (), descriptions: dict[str, str] | None = None
) -> list[OpenApiParameter]:
    """A filter form's fields as the OpenAPI query parameters they are (one definition for both):
    their types, their limits (min/max, length), their choices, and what each does (from
    PARAMETER_DESCRIPTIONS, or `descriptions` for this form's own meaning of a name)."""
    parameters = []
    for name, field in form_class.base_fields.items():
        if name in exclude:
            continue
        schema = field_schema(field)
        choices = [value for value, _ in choices_of(field)]
        if choices and not takes_any_value(field):
            schema["enum"] = choices
        repeatable = isinstance(field, forms.MultipleChoiceField)
        if repeatable:
            schema = {"type": "array", "items": schema}
        elif field.required and schema["type"] == "string":
            schema.setdefault("minLength", 1)
        parameters.append(
            OpenApiParameter(
                name,
                schema,
                OpenApiParameter.QUERY,
                required=field.required,
                description=parameter_description(name, field, descriptions or {}),
                # `?order=&limit=` is the form's "not given" (the dashboard's filter bar sends it).
                extensions={EMPTY_IS_UNSET: True} if not (field.required or repeatable) else None,
            )
        )
    return parameters


EMPTY_IS_UNSET = "x-empty-is-unset"


def complete_parameters(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """drf-spectacular postprocessing hook, over every operation: a form's optional parameter
    takes an empty value as "not given" (`allowEmptyValue`, which OpenApiParameter cannot say),
    and a path's `<kind>_id` without a description gets one."""
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            for parameter in operation.get("parameters", ()) if isinstance(operation, dict) else ():
                if parameter.pop(EMPTY_IS_UNSET, False):
                    parameter["allowEmptyValue"] = True
                name = parameter.get("name", "")
                if parameter.get("in") == "path" and name.endswith("_id") and not parameter.get("description"):
                    kind = name.removesuffix("_id").replace("_", " ")
                    parameter["description"] = (
                        f"The {kind}'s id, with `/` written `~2F` and `~` written `~7E` in the path."
                    )
    return result


def etag(version: int) -> str:
    return f'"{version}"'


def with_etag(response: Response, version: int) -> Response:
    response["ETag"] = etag(version)
    return response


ENTITY_TAG = r'(?:W/)?"[\x21\x23-\x7E\x80-\xFF]*"'
"""RFC 9110 §8.8.3: an opaque tag in double quotes, weak with `W/`."""
IF_MATCH = rf"[ \t]*(?:\*|(?:,[ \t]*)*{ENTITY_TAG}(?:[ \t]*,(?:[ \t]*{ENTITY_TAG})?)*)[ \t]*"
"""RFC 9110 §13.1.1: `*`, or a list of entity tags (empty list elements allowed, §5.6.1), at least one."""


def expected_version(request: Request, current: int) -> int:
    """The version a write is made against. RFC 9110 §13.2.1 evaluates preconditions after the
    request's normal checks, just before the action: here the body's validation counts among
    those checks (a body that could never be written is a 400 whatever the record's version, and
    a client fixes it before anything else), so call this after validating the body.

    Without If-Match (or with `*`: the record exists), the current version: the engine still
    refuses the write if someone else writes between this read and it. With a list of ETags, the
    current version if one of them is the record's ETag, compared strongly (RFC 9110 §13.1.1: a
    weak tag, `W/"3"`, never matches): a 412 otherwise. An If-Match that names no ETag (empty,
    or not `*` nor quoted tags: `3`, `"3`) is the client's mistake, not a changed record: a 400
    under `If-Match`, where a 412 would send the client to read the record again for nothing."""
    header = request.headers.get("If-Match")
    if header is None:
        return current
    if not re.fullmatch(IF_MATCH, header):
        raise exceptions.ValidationError(
            {
                "If-Match": [
                    'Give the ETag the record was read at, in double quotes ("3"), several separated by commas, or *.'
                ]
            }
        )
    if header.strip() == "*":
        return current
    tags = re.findall(ENTITY_TAG, header)
    if etag(current) not in tags:
        raise PreconditionFailed(f"The record is at ETag {etag(current)}, not {header.strip()}: read it again.")
    return current


PRECONDITION = OpenApiParameter(
    "If-Match",
    {"type": "string", "pattern": f"^{IF_MATCH}$"},
    OpenApiParameter.HEADER,
    description='The ETag the record was read at (`"3"`; several: any of them; `*`: any version): the write '
    'is refused (412) if the record has changed since. Compared strongly: a weak tag (`W/"3"`) never matches. '
    "Checked after the body: an invalid body is a 400 whatever If-Match says. Empty or not an ETag: a 400.",
)
