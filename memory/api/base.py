"""What every API view shares: authentication and roles, the curation service for the caller,
the dashboard's filter forms as query parameters, and ETags from record versions."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import NON_FIELD_ERRORS
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.api.errors import NON_FIELD, PreconditionFailed
from memory.curation import Actor, Curation
from memory.engine import AgentMemory
from memory.models import ApiToken
from memory.services import get_agent_memory


class EngineView(APIView):
    """An API view over the engine. Login is the API's business (a token or a session, 401
    otherwise), not the dashboard's redirect to the login page. Roles: ReadOrCurate, the
    default permission (settings.REST_FRAMEWORK)."""

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        return login_not_required(super().as_view(**initkwargs))

    @property
    def engine(self) -> AgentMemory:
        return get_agent_memory()

    def curation(self) -> Curation:
        """The curation service acting for the caller: the history records the user, "api", and
        the token's name when a token was used."""
        token = self.request.auth if isinstance(self.request.auth, ApiToken) else None
        return Curation(get_agent_memory(), Actor(self.request.user, via="api", token_name=token.name if token else ""))


def query_form(form_class: type[forms.Form], request: Request) -> forms.Form:
    """The dashboard's filter form over the query string, valid, or a 400 with its field messages
    (the same names and messages as the dashboard's filter bar)."""
    form = form_class(request.query_params)
    if not form.is_valid():
        raise exceptions.ValidationError(form_errors(form))
    return form


def form_errors(form: forms.Form) -> dict[str, list[str]]:
    """A form's errors by field, those of the form as a whole under `non_field_errors`."""
    return {
        NON_FIELD if name == NON_FIELD_ERRORS else name: [str(message) for message in messages]
        for name, messages in form.errors.items()
    }


FORM_TYPES = {
    forms.IntegerField: OpenApiTypes.INT,
    forms.FloatField: OpenApiTypes.FLOAT,
    forms.BooleanField: OpenApiTypes.BOOL,
    forms.DateTimeField: OpenApiTypes.DATETIME,
}


def form_parameters(form_class: type[forms.Form], *, exclude: tuple[str, ...] = ()) -> list[OpenApiParameter]:
    """A filter form's fields as the OpenAPI query parameters they are (one definition for both)."""
    parameters = []
    for name, field in form_class.base_fields.items():
        if name in exclude:
            continue
        kind = next((api for form_type, api in FORM_TYPES.items() if isinstance(field, form_type)), OpenApiTypes.STR)
        choices = [value for value, _ in getattr(field, "choices", ()) if value != ""] or None
        many = isinstance(field, forms.MultipleChoiceField)
        description = str(field.help_text or field.label or name)
        if name == "cursor":
            description = "The `next` link's cursor: the page after the previous one."
        parameters.append(
            OpenApiParameter(
                name, kind, OpenApiParameter.QUERY, description=description, enum=choices, many=many or None
            )
        )
    return parameters


def etag(version: int) -> str:
    return f'"{version}"'


def with_etag(response: Response, version: int) -> Response:
    response["ETag"] = etag(version)
    return response


def expected_version(request: Request, current: int) -> int:
    """The version a write is made against: the one `If-Match` names (412 when the record is no
    longer at it), or, without If-Match, the current one (the engine still refuses the write if
    someone else writes between this read and it)."""
    header = request.headers.get("If-Match")
    if header is None or header.strip() == "*":
        return current
    tags = [tag.strip().removeprefix("W/") for tag in header.split(",")]
    if etag(current) not in tags:
        raise PreconditionFailed(f"The record is at ETag {etag(current)}, not {header.strip()}: read it again.")
    return current


PRECONDITION = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description="The ETag the record was read at: the write is refused (412) if it has changed since.",
)
