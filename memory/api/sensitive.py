"""/api/v1/findings/: the secrets and personal data found in stored records, as the dashboard's
review queue lists them (less the values judged not sensitive), and the two decisions on one:
redact it, or judge it not sensitive (memory.curation.sensitive)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response

from memory.api.base import EngineView
from memory.api.errors import Conflict
from memory.api.paging import page_response
from memory.api.responses import errors_of
from memory.api.serializers.common import page_of
from memory.api.serializers.sensitive import FindingFiltersSerializer, FindingSerializer
from memory.curation import CurationError
from memory.engine import SENSITIVE_KINDS
from memory.queries.review.sensitive import dismissed_keys

FindingPage = page_of(FindingSerializer, "FindingPage")


def finding_json(finding: Any) -> dict[str, Any]:
    return FindingSerializer({**vars(finding), "label": SENSITIVE_KINDS.get(finding.kind, finding.kind)}).data


class FindingList(EngineView):
    @extend_schema(
        operation_id="findings_list",
        summary="List the secrets and personal data found",
        description="What the engine found in stored records (API keys and tokens, private keys, passwords in "
        "assignments, high-entropy strings, email addresses, phone numbers, payment cards, IBANs), newest first, "
        "masked, less the values judged not sensitive: the dashboard's /review/sensitive/ queue.",
        parameters=[
            OpenApiParameter("user_id", str, description="Only the findings in this user's records."),
            OpenApiParameter("agent_id", str, description="Only the findings in this agent's records."),
            OpenApiParameter("kind", str, many=True, enum=sorted(SENSITIVE_KINDS), description="Only these kinds."),
            OpenApiParameter("limit", int, description="Findings per page (1-500, default 50)."),
            OpenApiParameter("cursor", str, description="The `next` page's cursor."),
        ],
        responses={200: FindingPage, **errors_of(400)},
        tags=["findings"],
    )
    def get(self, request: Request) -> Response:
        filters = FindingFiltersSerializer(data=request.query_params)
        if not filters.is_valid():
            raise exceptions.ValidationError(filters.errors)
        given = filters.validated_data
        scope = {key: given[key] for key in ("user_id", "agent_id") if key in given}
        if given.get("kind"):
            scope["kinds"] = sorted(given["kind"])
        try:
            page = self.agent_memory.list_findings(
                exclude=dismissed_keys(), limit=given["limit"], cursor=given.get("cursor"), **scope
            )
        except ValueError as error:  # a damaged cursor, an id beyond the engine's limits
            raise exceptions.ValidationError(
                {"cursor" if "cursor" in str(error) else "user_id": [str(error)]}
            ) from None
        return page_response(request, [finding_json(finding) for finding in page], page.next_cursor)


class FindingRedact(EngineView):
    @extend_schema(
        operation_id="findings_redact",
        summary="Redact a finding",
        description="Replaces the value in the record's text with `[REDACTED:<kind>]` (an edit recorded in the "
        "history, the record embedded again), and removes it from the record's history, the activity log and "
        "the files. Cannot be undone. 404 when the finding is gone (its record changed or went: list again); "
        "409 when the record's text no longer holds the value.",
        request=None,
        responses={204: None, **errors_of(404, 409)},
        tags=["findings"],
    )
    def post(self, request: Request, finding_id: int) -> Response:
        try:
            self.curation().redact_finding(str(finding_id))
        except KeyError:
            raise exceptions.NotFound(f"No finding {finding_id}.") from None
        except (CurationError, ValueError) as error:
            raise Conflict(str(error)) from None
        return Response(status=204)


class FindingDismiss(EngineView):
    @extend_schema(
        operation_id="findings_dismiss",
        summary="Judge a finding not sensitive",
        description="Leaves the record as it is and takes this value of this record off the list for good "
        "(rescans included). 404 when the finding is gone.",
        request=None,
        responses={204: None, **errors_of(404)},
        tags=["findings"],
    )
    def post(self, request: Request, finding_id: int) -> Response:
        try:
            self.curation().dismiss_finding(str(finding_id))
        except KeyError:
            raise exceptions.NotFound(f"No finding {finding_id}.") from None
        return Response(status=204)
