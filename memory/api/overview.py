"""/api/v1/stats/ (store counts, of the whole store or of one scope) and /api/v1/graph/ (memories and
their links around a scope, laid out as the dashboard's graph draws them)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response

from memory.api.base import EngineView, form_errors, form_parameters, query_form
from memory.api.responses import errors_of
from memory.api.serializers.overview import GraphSerializer, StatsSerializer
from memory.queries.graph import graph_json, load
from memory.web.filters import MISSING_MEMORY, GraphFilters, StatsFilters


class Stats(EngineView):
    @extend_schema(
        operation_id="stats_retrieve",
        summary="Count the store",
        description="Records by type and status, links by type, threads, users and agents, and messages and "
        "memories per day: of the whole store, or of one thread, user or agent (what deleting it would "
        "remove).",
        parameters=form_parameters(StatsFilters),
        responses={200: StatsSerializer, **errors_of(400)},
        tags=["stats"],
    )
    def get(self, request: Request) -> Response:
        form = query_form(StatsFilters, request)
        stats = self.agent_memory.stats(**form.engine_arguments())
        data = {
            **vars(stats),
            "by_day": [{"day": day, "kind": kind, "count": count} for day, kind, count in stats.by_day],
            **{name: getattr(stats, name) for name in ("messages", "memories", "images", "expired", "link_count")},
        }
        return Response(StatsSerializer(data).data)


GRAPH_RELATION_TYPES = OpenApiParameter(
    "relation_type",
    OpenApiTypes.STR,
    OpenApiParameter.QUERY,
    many=True,
    description="Repeatable: only links of these types, built-in or your own.",
)


class Graph(EngineView):
    @extend_schema(
        operation_id="graph_retrieve",
        summary="Get the link graph around a scope",
        description="Memories (nodes, with their degree and a position laid out on the server) and the links "
        "among them (edges, source → target), around exactly one of a user, an agent, a thread (its memories "
        "and those up to `hops` links from them) or a memory (its neighbourhood). Past `max_nodes` the most "
        "linked nodes are kept (`truncated`). The dashboard's graph page draws the same data.",
        parameters=[*form_parameters(GraphFilters, exclude=("relation_type",)), GRAPH_RELATION_TYPES],
        responses={200: GraphSerializer, **errors_of(400, 404)},
        tags=["graph"],
    )
    def get(self, request: Request) -> Response:
        form = query_form(GraphFilters, request)
        try:
            graph = load(self.agent_memory, form)
        except KeyError:
            raise exceptions.NotFound(MISSING_MEMORY) from None
        except ValueError:
            raise exceptions.ValidationError(form_errors(form)) from None
        return Response(graph_json(graph, form.engine_arguments()["max_nodes"]))
