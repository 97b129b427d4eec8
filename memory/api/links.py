"""/api/v1/links/: links between memories, listed by memory or by scope, made, retyped and deleted.
Every change says which memories it made valid or invalid (`status_changes`): a supersedes, refines
or duplicates link retires its target."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from memory.api.base import PRECONDITION, EngineView, expected_version, form_parameters, query_form, with_etag
from memory.api.paging import page_response
from memory.api.responses import errors_of
from memory.api.serializers.common import page_of
from memory.api.serializers.links import (
    LinkChangeSerializer,
    LinkCreateSerializer,
    LinkDeletedSerializer,
    LinkSerializer,
    LinkUpdateSerializer,
)
from memory.curation import StatusChange
from memory.web.filters import LinkFilters

LinkPage = page_of(LinkSerializer, "LinkPage")
RELATION_TYPES = OpenApiParameter(
    "relation_type",
    OpenApiTypes.STR,
    OpenApiParameter.QUERY,
    many=True,
    description="Repeatable: links of any of these types, built-in (supersedes, refines, duplicates, supports, "
    "contradicts) or your own, as stored (source to target).",
)


def changed(relation: Any, effects: list[StatusChange], status_code: int = status.HTTP_200_OK) -> Response:
    """The link as it is now, with the status changes its change made."""
    data = LinkChangeSerializer({**vars(relation), "status_changes": effects}).data
    return with_etag(Response(data, status=status_code), relation.version)


class LinkList(EngineView):
    @extend_schema(
        operation_id="links_list",
        summary="List links",
        description="Links in creation order: of one memory (`record_id`, either end), and/or of a scope "
        "(either end in it), and/or of some relation types.",
        parameters=[
            *form_parameters(
                LinkFilters,
                exclude=("relation_type",),
                descriptions={"record_id": "A memory's id: only the links with it at either end."},
            ),
            RELATION_TYPES,
        ],
        responses={200: LinkPage, **errors_of(400)},
        tags=["links"],
    )
    def get(self, request: Request) -> Response:
        form = query_form(LinkFilters, request)
        page = self.agent_memory.list_relations(**form.engine_arguments())
        return page_response(request, LinkSerializer(page, many=True).data, page.next_cursor)

    @extend_schema(
        operation_id="links_create",
        summary="Link two memories",
        description="One link per pair of memories (either way). A built-in type has its fixed opposite; a "
        "built-in mistyped (`Supersedes`, `is_superseded_by`) is refused, as in the dashboard. The answer "
        "says which memories the link made invalid.",
        request=LinkCreateSerializer,
        responses={201: LinkChangeSerializer, **errors_of(400, 415)},
        examples=[
            OpenApiExample(
                "A newer fact supersedes an old one",
                value={
                    "source_record_id": "fact-vegetarian",
                    "target_record_id": "fact-old",
                    "relation_type": "supersedes",
                },
                request_only=True,
            )
        ],
        tags=["links"],
    )
    def post(self, request: Request) -> Response:
        fields = self.valid_body(LinkCreateSerializer)
        fields["opposite_relation_type"] = fields.get("opposite_relation_type") or None
        service = self.curation()
        effects = service.link_effects(add=(fields["target_record_id"], fields["relation_type"]))
        entry = service.create_link(**fields)  # checked first (Curation.check_link): refused, nothing is stored
        return self.created(
            changed(self.agent_memory.get_relation(entry.object_id), effects), "api:link", entry.object_id
        )


class LinkDetail(EngineView):
    @extend_schema(
        operation_id="links_retrieve",
        summary="Get a link",
        responses={200: LinkSerializer, **errors_of(404)},
        tags=["links"],
    )
    def get(self, request: Request, relation_id: str) -> Response:
        relation = self.agent_memory.get_relation(relation_id)
        return with_etag(Response(LinkSerializer(relation).data), relation.version)

    @extend_schema(
        operation_id="links_partial_update",
        summary="Retype or annotate a link",
        description="Writes the fields given. A retype to a lifecycle type retires the target; from one, "
        "makes it valid again: `status_changes` says so. With `If-Match`, only if the link is still at "
        "that ETag.",
        request=LinkUpdateSerializer,
        parameters=[PRECONDITION],
        responses={200: LinkChangeSerializer, **errors_of(400, 404, 412, 415)},
        examples=[OpenApiExample("Now it only supports", value={"relation_type": "supports"}, request_only=True)],
        tags=["links"],
    )
    def patch(self, request: Request, relation_id: str) -> Response:
        relation = self.agent_memory.get_relation(relation_id)
        fields = self.valid_body(LinkUpdateSerializer, context={"relation_type": relation.relation_type})
        version = expected_version(request, relation.version)
        service = self.curation()
        new_type = fields.get("relation_type", relation.relation_type)
        effects = []
        if new_type != relation.relation_type:
            effects = service.link_effects(add=(relation.target_record_id, new_type), remove=relation)
        service.update_link(relation_id, version=version, **fields)
        return changed(self.agent_memory.get_relation(relation_id), effects)

    @extend_schema(
        operation_id="links_destroy",
        summary="Delete a link",
        description="Deletes it (the history keeps it, to restore) and says which memories it had retired "
        "are valid again.",
        parameters=[PRECONDITION],
        responses={200: LinkDeletedSerializer, **errors_of(400, 404, 412)},
        tags=["links"],
    )
    def delete(self, request: Request, relation_id: str) -> Response:
        relation = self.agent_memory.get_relation(relation_id)
        version = expected_version(request, relation.version)
        service = self.curation()
        effects = service.link_effects(remove=relation)
        service.delete_link(relation_id, version=version)  # compared again inside the delete
        return Response(LinkDeletedSerializer({"id": relation_id, "status_changes": effects}).data)
