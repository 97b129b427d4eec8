-- snapshot: memory_graph_of_a_user
-- statements: 4

-- [1] execute
SELECT r.id FROM "OAM_RECORDS" r WHERE r.user_id = :scope_user_id AND r.kind = 'memory' AND r.record_type IN (:type0, :type1) AND (r.expires_at IS NULL OR r.expires_at > :now) AND r.status = 'valid' AND r.lifecycle_links = 0 ORDER BY r.pk
-- binds: {"scope_user_id": "u1", "now": "<timestamp>", "type0": "fact", "type1": "memory"}
-- options: fetch_lobs=False

-- [2] execute
SELECT rel.pos, rel.id, rel.source_id, rel.source_type, rel.target_id, rel.target_type, rel.relation_type, rel.opposite_type, rel.event_at, JSON_SERIALIZE(rel.metadata RETURNING CLOB) AS metadata, rel.created_at, rel.version, CASE WHEN s.pk IS NULL THEN 0 ELSE 1 END AS source_ok, CASE WHEN t.pk IS NULL THEN 0 ELSE 1 END AS target_ok FROM "OAM_RELATIONS" rel LEFT JOIN "OAM_RECORDS" s ON s.id = rel.source_id AND s.kind = 'memory' AND s.record_type IN (:type0, :type1) AND (s.expires_at IS NULL OR s.expires_at > :now) AND s.status = 'valid' AND s.lifecycle_links = 0 LEFT JOIN "OAM_RECORDS" t ON t.id = rel.target_id AND t.kind = 'memory' AND t.record_type IN (:type0, :type1) AND (t.expires_at IS NULL OR t.expires_at > :now) AND t.status = 'valid' AND t.lifecycle_links = 0 WHERE (rel.source_id IN (SELECT jt.v FROM JSON_TABLE(:frontier, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) OR rel.target_id IN (SELECT jt.v FROM JSON_TABLE(:frontier, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)) AND rel.relation_type IN (SELECT jt.v FROM JSON_TABLE(:relation_types, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"frontier": "[\"m1\", \"m2\"]", "relation_types": "[\"refines\", \"supports\"]", "now": "<timestamp>", "type0": "fact", "type1": "memory"}
-- options: fetch_lobs=False

-- [3] execute
SELECT rel.pos, rel.id, rel.source_id, rel.source_type, rel.target_id, rel.target_type, rel.relation_type, rel.opposite_type, rel.event_at, JSON_SERIALIZE(rel.metadata RETURNING CLOB) AS metadata, rel.created_at, rel.version, CASE WHEN s.pk IS NULL THEN 0 ELSE 1 END AS source_ok, CASE WHEN t.pk IS NULL THEN 0 ELSE 1 END AS target_ok FROM "OAM_RELATIONS" rel LEFT JOIN "OAM_RECORDS" s ON s.id = rel.source_id AND s.kind = 'memory' AND s.record_type IN (:type0, :type1) AND (s.expires_at IS NULL OR s.expires_at > :now) AND s.status = 'valid' AND s.lifecycle_links = 0 LEFT JOIN "OAM_RECORDS" t ON t.id = rel.target_id AND t.kind = 'memory' AND t.record_type IN (:type0, :type1) AND (t.expires_at IS NULL OR t.expires_at > :now) AND t.status = 'valid' AND t.lifecycle_links = 0 WHERE (rel.source_id IN (SELECT jt.v FROM JSON_TABLE(:frontier, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) OR rel.target_id IN (SELECT jt.v FROM JSON_TABLE(:frontier, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)) AND rel.relation_type IN (SELECT jt.v FROM JSON_TABLE(:relation_types, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"frontier": "[\"m3\"]", "relation_types": "[\"refines\", \"supports\"]", "now": "<timestamp>", "type0": "fact", "type1": "memory"}
-- options: fetch_lobs=False

-- [4] execute
SELECT r.pk, r.id, r.kind, r.record_type, r.content, r.index_text, r.index_text_empty, JSON_SERIALIZE(r.parts RETURNING CLOB) AS parts, r.thread_id, r.user_id, r.agent_id, r.role, r.role_empty, r.seq_no, r.event_at, r.created_at, r.expires_at, CASE WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END AS status, JSON_SERIALIZE(r.metadata RETURNING CLOB) AS metadata, r.message_id, r.mime_type, r.version FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"m2\", \"m1\", \"m3\"]"}
-- options: fetch_lobs=False
