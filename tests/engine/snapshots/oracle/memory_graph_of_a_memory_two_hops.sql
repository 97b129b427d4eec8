-- snapshot: memory_graph_of_a_memory_two_hops
-- statements: 5

-- [1] execute
SELECT r.id FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.id = :centre AND (r.expires_at IS NULL OR r.expires_at > :now) ORDER BY r.pk
-- binds: {"centre": "m1", "now": "<timestamp>"}
-- options: fetch_lobs=False

-- [2] execute
SELECT rel.pos, rel.id, rel.source_id, rel.source_type, rel.target_id, rel.target_type, rel.relation_type, rel.opposite_type, rel.event_at, JSON_SERIALIZE(rel.metadata RETURNING CLOB) AS metadata, rel.created_at, rel.version, CASE WHEN s.pk IS NULL THEN 0 ELSE 1 END AS source_ok, CASE WHEN t.pk IS NULL THEN 0 ELSE 1 END AS target_ok FROM "OAM_RELATIONS" rel LEFT JOIN "OAM_RECORDS" s ON s.id = rel.source_id AND s.kind = 'memory' AND s.record_type IN (:type0, :type1, :type2, :type3) AND (s.expires_at IS NULL OR s.expires_at > :now) AND (s.status <> 'valid' OR s.lifecycle_links <> 0) LEFT JOIN "OAM_RECORDS" t ON t.id = rel.target_id AND t.kind = 'memory' AND t.record_type IN (:type0, :type1, :type2, :type3) AND (t.expires_at IS NULL OR t.expires_at > :now) AND (t.status <> 'valid' OR t.lifecycle_links <> 0) WHERE (rel.source_id IN (SELECT jt.v FROM JSON_TABLE(:frontier, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) OR rel.target_id IN (SELECT jt.v FROM JSON_TABLE(:frontier, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt))
-- binds: {"frontier": "[\"m1\"]", "now": "<timestamp>", "type0": "memory", "type1": "fact", "type2": "guideline", "type3": "preference"}
-- options: fetch_lobs=False

-- [3] execute
SELECT rel.pos, rel.id, rel.source_id, rel.source_type, rel.target_id, rel.target_type, rel.relation_type, rel.opposite_type, rel.event_at, JSON_SERIALIZE(rel.metadata RETURNING CLOB) AS metadata, rel.created_at, rel.version, CASE WHEN s.pk IS NULL THEN 0 ELSE 1 END AS source_ok, CASE WHEN t.pk IS NULL THEN 0 ELSE 1 END AS target_ok FROM "OAM_RELATIONS" rel LEFT JOIN "OAM_RECORDS" s ON s.id = rel.source_id AND s.kind = 'memory' AND s.record_type IN (:type0, :type1, :type2, :type3) AND (s.expires_at IS NULL OR s.expires_at > :now) AND (s.status <> 'valid' OR s.lifecycle_links <> 0) LEFT JOIN "OAM_RECORDS" t ON t.id = rel.target_id AND t.kind = 'memory' AND t.record_type IN (:type0, :type1, :type2, :type3) AND (t.expires_at IS NULL OR t.expires_at > :now) AND (t.status <> 'valid' OR t.lifecycle_links <> 0) WHERE (rel.source_id IN (SELECT jt.v FROM JSON_TABLE(:frontier, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) OR rel.target_id IN (SELECT jt.v FROM JSON_TABLE(:frontier, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt))
-- binds: {"frontier": "[\"m2\"]", "now": "<timestamp>", "type0": "memory", "type1": "fact", "type2": "guideline", "type3": "preference"}
-- options: fetch_lobs=False

-- [4] execute
SELECT rel.pos, rel.id, rel.source_id, rel.source_type, rel.target_id, rel.target_type, rel.relation_type, rel.opposite_type, rel.event_at, JSON_SERIALIZE(rel.metadata RETURNING CLOB) AS metadata, rel.created_at, rel.version, CASE WHEN s.pk IS NULL THEN 0 ELSE 1 END AS source_ok, CASE WHEN t.pk IS NULL THEN 0 ELSE 1 END AS target_ok FROM "OAM_RELATIONS" rel LEFT JOIN "OAM_RECORDS" s ON s.id = rel.source_id AND s.kind = 'memory' AND s.record_type IN (:type0, :type1, :type2, :type3) AND (s.expires_at IS NULL OR s.expires_at > :now) AND (s.status <> 'valid' OR s.lifecycle_links <> 0) LEFT JOIN "OAM_RECORDS" t ON t.id = rel.target_id AND t.kind = 'memory' AND t.record_type IN (:type0, :type1, :type2, :type3) AND (t.expires_at IS NULL OR t.expires_at > :now) AND (t.status <> 'valid' OR t.lifecycle_links <> 0) WHERE (rel.source_id IN (SELECT jt.v FROM JSON_TABLE(:frontier, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) OR rel.target_id IN (SELECT jt.v FROM JSON_TABLE(:frontier, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt))
-- binds: {"frontier": "[\"m3\"]", "now": "<timestamp>", "type0": "memory", "type1": "fact", "type2": "guideline", "type3": "preference"}
-- options: fetch_lobs=False

-- [5] execute
SELECT r.pk, r.id, r.kind, r.record_type, r.content, r.index_text, r.index_text_empty, JSON_SERIALIZE(r.parts RETURNING CLOB) AS parts, r.thread_id, r.user_id, r.agent_id, r.role, r.role_empty, r.seq_no, r.event_at, r.created_at, r.expires_at, CASE WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END AS status, JSON_SERIALIZE(r.metadata RETURNING CLOB) AS metadata, r.message_id, r.mime_type, r.version FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"m1\", \"m2\"]"}
-- options: fetch_lobs=False
