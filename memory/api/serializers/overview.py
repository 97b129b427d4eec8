"""Store counts and the link graph."""

from __future__ import annotations

from rest_framework import serializers

from memory.api.serializers.common import STATUSES
from memory.engine import (
    MEMORY_TYPES,
)


class DayCountSerializer(serializers.Serializer):
    day = serializers.CharField(help_text="A UTC day, YYYY-MM-DD.")
    kind = serializers.ChoiceField(choices=("message", "memory"))
    count = serializers.IntegerField()


class StatusCountsSerializer(serializers.Serializer):
    valid = serializers.IntegerField()
    invalid = serializers.IntegerField()
    expired = serializers.IntegerField(help_text="Past their expiry, awaiting purge (whatever their status).")


class StatsSerializer(serializers.Serializer):
    """Counts of the store, or of what one thread, user or agent holds."""

    records = serializers.DictField(child=StatusCountsSerializer(), help_text="Per record type.")
    links = serializers.DictField(child=serializers.IntegerField(), help_text="Links per relation type.")
    threads = serializers.IntegerField()
    users = serializers.IntegerField()
    agents = serializers.IntegerField()
    messages = serializers.IntegerField(help_text="Live messages.")
    memories = serializers.IntegerField(help_text="Live memories of the four memory types.")
    images = serializers.IntegerField(help_text="Live images.")
    expired = serializers.IntegerField(help_text="Records past their expiry, awaiting purge.")
    link_count = serializers.IntegerField(help_text="Links in all.")
    by_day = DayCountSerializer(many=True, help_text="Live messages and memories per UTC day of their event time.")
    backend = serializers.CharField()
    embedder = serializers.CharField()
    vector_dim = serializers.IntegerField()
    schema_version = serializers.IntegerField()


class GraphNodeSerializer(serializers.Serializer):
    id = serializers.CharField()
    memory_type = serializers.ChoiceField(choices=MEMORY_TYPES)
    status = serializers.ChoiceField(choices=STATUSES)
    content = serializers.CharField(allow_blank=True, help_text="Its text, cut to 200 characters.")
    user_id = serializers.CharField(allow_null=True)
    agent_id = serializers.CharField(allow_null=True)
    thread_id = serializers.CharField(allow_null=True)
    degree = serializers.IntegerField(help_text="Its edges in this graph.")
    x = serializers.FloatField(help_text="Its position, laid out on the server.")
    y = serializers.FloatField()


class GraphEdgeSerializer(serializers.Serializer):
    id = serializers.CharField()
    source = serializers.CharField(help_text="The source memory's id.")
    target = serializers.CharField(help_text="The target memory's id.")
    relation_type = serializers.CharField()
    opposite_relation_type = serializers.CharField()


class GraphSerializer(serializers.Serializer):
    """Memories (nodes) and the links among them (edges, source → target)."""

    nodes = GraphNodeSerializer(many=True)
    edges = GraphEdgeSerializer(many=True)
    truncated = serializers.BooleanField(help_text="Whether max_nodes cut it (the most linked nodes are kept).")
    total_nodes = serializers.IntegerField(help_text="Nodes of the whole graph.")
    total_edges = serializers.IntegerField(help_text="Edges of the whole graph.")
    max_nodes = serializers.IntegerField()
    ideal_length = serializers.FloatField(help_text="The length a link settles near in the layout.")
