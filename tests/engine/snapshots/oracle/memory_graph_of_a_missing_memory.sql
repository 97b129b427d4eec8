-- snapshot: memory_graph_of_a_missing_memory
-- statements: 1

-- [1] execute
SELECT r.id FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.id = :centre AND (r.expires_at IS NULL OR r.expires_at > :now) ORDER BY r.pk
-- binds: {"centre": "gone", "now": "<timestamp>"}
-- options: fetch_lobs=False
