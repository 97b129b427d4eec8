-- snapshot: list_relations
-- statements: 1

-- [1] execute
SELECT rel.pos, rel.id, rel.source_id, rel.source_type, rel.target_id, rel.target_type, rel.relation_type, rel.opposite_type, rel.event_at, JSON_SERIALIZE(rel.metadata RETURNING CLOB) AS metadata, rel.created_at, rel.version FROM "OAM_RELATIONS" rel JOIN "OAM_RECORDS" s ON s.kind = 'memory' AND s.id = rel.source_id JOIN "OAM_RECORDS" t ON t.kind = 'memory' AND t.id = rel.target_id WHERE (rel.source_id = :record_id OR rel.target_id = :record_id) AND ((s.user_id = :scope_user_id AND s.agent_id IS NULL) OR (t.user_id = :scope_user_id AND t.agent_id IS NULL)) AND rel.pos > :after ORDER BY rel.pos FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"record_id": "m1", "scope_user_id": "u1", "after": 4, "fetch_limit": 11}
-- options: fetch_lobs=False
