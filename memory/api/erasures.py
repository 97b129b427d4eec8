"""POST /api/v1/users/{id}/erase/: erase a person for good (staff tokens and accounts only), or
with {"dry_run": true} say what would go; memory.curation.erasure does it."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import permissions, status
from rest_framework.request import Request
from rest_framework.response import Response

from memory.api.base import EngineView
from memory.api.permissions import request_role
from memory.api.responses import errors_of
from memory.api.serializers.erasures import (
    EraseRequestSerializer,
    ErasurePreviewSerializer,
    ErasureReceiptSerializer,
)
from memory.curation.erasure import erase, preview
from memory.web.access import role_of
from memory.web.tokens import RANKS


class StaffWrites(permissions.BasePermission):
    """Staff only: a staff account's session, or a token of a staff account that may write (a
    curator token; a token is never above its owner, and a viewer token of staff only reads)."""

    message = "Only staff can erase a person: a staff account, or a curator token of one."

    def has_permission(self, request: Request, view: Any) -> bool:
        if role_of(request.user) != "admin":
            return False
        return RANKS[request_role(request)] >= RANKS["curator"]


class UserErase(EngineView):
    permission_classes = (StaffWrites,)

    @extend_schema(
        operation_id="users_erase",
        summary="Erase a user for good",
        description="Removes the user's threads, messages, memories, images, profile and every link touching "
        "them from the store, their part of the activity log, the content of their curation history entries "
        "(kept as tombstones) and their lines in kept import uploads, and scrubs the files that held them. "
        'It cannot be undone. {"dry_run": true} answers what would go, per kind, and changes nothing. An '
        "interrupted erasure is finished by asking again. 404 for an id with nothing to erase.",
        request=EraseRequestSerializer,
        examples=[
            OpenApiExample("A preview", value={"dry_run": True}, request_only=True),
            OpenApiExample("The erasure", value={}, request_only=True),
        ],
        responses={200: ErasurePreviewSerializer, 201: ErasureReceiptSerializer, **errors_of(400, 403, 404, 415)},
        tags=["users"],
    )
    def post(self, request: Request, owner_id: str) -> Response:
        body = self.valid_body(EraseRequestSerializer)
        plan = preview(self.agent_memory, owner_id)
        if plan.empty:
            raise KeyError(f"no user {owner_id!r} to erase: no profile, thread, record or activity is theirs")
        if body["dry_run"]:
            data = {
                "user_id": owner_id,
                "dry_run": True,
                "counts": plan.counts,
                "not_reached": [download.as_json() for download in plan.downloads],
                "resuming": plan.resuming.pk if plan.resuming else None,
            }
            return Response(ErasurePreviewSerializer(data).data)
        receipt = erase(self.agent_memory, self.curation().actor, owner_id)
        return Response(ErasureReceiptSerializer(receipt.as_json()).data, status=status.HTTP_201_CREATED)
