"""/api/v1/users/ and /api/v1/agents/: every id that owns a profile, thread or record, with what it
owns; one with its profile and counts; its profile written; and its deletion with all it owns.

Users and agents work alike: each view class is made once per kind (`owner_views`), so that each
operation has its own operationId and tag."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from memory.api.base import PRECONDITION, EngineView, expected_version, form_parameters, query_form, with_etag
from memory.api.paging import page_response
from memory.api.responses import errors_of
from memory.api.serializers.common import page_of
from memory.api.serializers.people import OwnerDetailSerializer, OwnerSerializer, ProfileWriteSerializer
from memory.engine import MEMORY_TYPES, StoreStats
from memory.models import ObjectKind
from memory.queries.people import owns_anything, profile_of
from memory.web.audit import viewed
from memory.web.filters import ListingForm

NOTHING_OWNED = {"threads": 0, "messages": 0, "memories": 0}


class OwnerView(EngineView):
    kind: str = "user"

    @property
    def scope(self) -> str:
        return f"{self.kind}_id"

    def profile(self, owner_id: str) -> Any:
        return profile_of(self.agent_memory, self.kind, owner_id)

    def stats(self, owner_id: str) -> StoreStats:
        return self.agent_memory.stats(**{self.scope: owner_id})


class OwnerList(OwnerView):
    def get(self, request: Request) -> Response:
        form = query_form(ListingForm, request)
        listing = self.agent_memory.list_users if self.kind == "user" else self.agent_memory.list_agents
        page = listing(**form.engine_arguments())
        counts = self.agent_memory.owner_counts(self.kind, [owner.id for owner in page])
        rows = [
            {"id": owner.id, "profile": owner if owner.version else None, "counts": counts.get(owner.id, NOTHING_OWNED)}
            for owner in page
        ]
        return page_response(request, OwnerSerializer(rows, many=True).data, page.next_cursor)


class OwnerDetail(OwnerView):
    def answer(self, owner_id: str, stats: StoreStats, status_code: int = status.HTTP_200_OK) -> Response:
        profile = self.profile(owner_id)
        counts = {
            "threads": stats.threads,
            "messages": stats.messages,
            "memories": stats.memories,
            "images": stats.images,
            "links": stats.link_count,
            "expired": stats.expired,
            "memory_types": {
                name: stats.records[name]["valid"] + stats.records[name]["invalid"] for name in MEMORY_TYPES
            },
        }
        data = OwnerDetailSerializer({"id": owner_id, "profile": profile, "counts": counts}).data
        return with_etag(Response(data, status=status_code), profile.version if profile else 0)

    def owned(self, owner_id: str) -> StoreStats:
        """What they own; 404 when they own nothing (no such user or agent, or no longer)."""
        stats = self.stats(owner_id)
        if not owns_anything(stats):
            raise KeyError(f"no {self.kind} {owner_id!r}: no profile, thread or record is theirs")
        return stats

    def get(self, request: Request, owner_id: str) -> Response:
        stats = self.owned(owner_id)
        viewed(request, **{self.scope: owner_id})
        return self.answer(owner_id, stats)

    def put(self, request: Request, owner_id: str) -> Response:
        fields = self.valid_body(ProfileWriteSerializer, partial=request.method == "PATCH")
        if "information" not in fields:
            raise serializers.ValidationError({"information": ["Give the profile text to write."]})
        stats = self.stats(owner_id)
        profile = self.profile(owner_id)
        version = expected_version(request, profile.version if profile else 0)
        self.curation().save_profile(self.kind, owner_id, information=fields["information"], version=version)
        if owns_anything(stats):
            return self.answer(owner_id, self.stats(owner_id))
        return self.created(self.answer(owner_id, self.stats(owner_id)), f"api:{self.kind}", owner_id)

    patch = put

    def delete(self, request: Request, owner_id: str) -> Response:
        self.owned(owner_id)
        profile = self.profile(owner_id)
        expected_version(request, profile.version if profile else 0)
        self.curation().delete_owner(ObjectKind(self.kind), owner_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


def owner_views(kind: str, plural: str) -> tuple[type[OwnerList], type[OwnerDetail]]:
    """The list and detail views of users (or agents), documented under their own names."""
    OwnerPage = page_of(OwnerSerializer, f"{kind.title()}Page")
    article = "An" if kind[0] in "aeiou" else "A"
    write = {
        "request": ProfileWriteSerializer,
        "parameters": [PRECONDITION],
        "examples": [
            OpenApiExample(
                "A profile",
                value={"information": f"{article} {kind} who prefers short answers, in French."},
                request_only=True,
            )
        ],
        "tags": [plural],
    }
    write_errors = errors_of(
        400, 404, 412, 415, meanings={404: f"No {kind} can have this id (over 512 bytes in UTF-8)."}
    )
    write_description = (
        f"Writes the {kind}'s profile text (searchable), making the profile, and so the {kind}, when there is "
        f"none: 201 then, 200 when the {kind} existed. `If-Match` is the profile's version "
        '(`"0"`: there must be no profile yet).'
    )
    listing = extend_schema_view(
        get=extend_schema(
            operation_id=f"{plural}_list",
            summary=f"List {plural}",
            description=f"Every {kind} id that owns a profile, a thread or a record, by id, with what it owns.",
            parameters=form_parameters(ListingForm),
            responses={200: OwnerPage, **errors_of(400)},
            tags=[plural],
        )
    )(type(f"{kind.title()}List", (OwnerList,), {"kind": kind}))
    detail = extend_schema_view(
        get=extend_schema(
            operation_id=f"{plural}_retrieve",
            summary=f"Get {article.lower()} {kind}",
            description=f"The {kind}'s profile and counts of what they own. The ETag is the profile's version "
            "(0: none).",
            responses={200: OwnerDetailSerializer, **errors_of(404)},
            tags=[plural],
        ),
        put=extend_schema(
            operation_id=f"{plural}_update",
            summary=f"Write {article.lower()} {kind}'s profile",
            description=write_description,
            responses={200: OwnerDetailSerializer, 201: OwnerDetailSerializer, **write_errors},
            **write,
        ),
        patch=extend_schema(
            operation_id=f"{plural}_partial_update",
            summary=f"Write {article.lower()} {kind}'s profile",
            description=write_description,
            responses={200: OwnerDetailSerializer, 201: OwnerDetailSerializer, **write_errors},
            **write,
        ),
        delete=extend_schema(
            operation_id=f"{plural}_destroy",
            summary=f"Delete {article.lower()} {kind} and all they own",
            description=f"Deletes the {kind}'s profile, threads (with their messages and images), memories and "
            "their links; the history keeps a snapshot to restore it all.",
            parameters=[PRECONDITION],
            responses={204: None, **errors_of(400, 404, 412)},
            tags=[plural],
        ),
    )(type(f"{kind.title()}Detail", (OwnerDetail,), {"kind": kind}))
    return listing, detail


UserList, UserDetail = owner_views("user", "users")
AgentList, AgentDetail = owner_views("agent", "agents")
