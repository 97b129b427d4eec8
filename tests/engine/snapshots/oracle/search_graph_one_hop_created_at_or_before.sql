-- snapshot: search_graph_one_hop_created_at_or_before
-- statements: 4

-- [1] execute
SELECT r.pk, VECTOR_DISTANCE(r.embedding, :query_vector, COSINE) AS distance FROM "OAM_RECORDS" r WHERE r.embedding IS NOT NULL AND r.record_type IN (:type0, :type1, :type2, :type3, :type4, :type5, :type6, :type7) AND (r.expires_at IS NULL OR r.expires_at > :now) AND r.created_at <= :created_cutoff ORDER BY distance, r.pk FETCH EXACT FIRST :depth ROWS ONLY
-- binds: {"query_vector": "<vector f[8]>", "depth": 100, "now": "<timestamp>", "type0": "message", "type1": "memory", "type2": "fact", "type3": "guideline", "type4": "preference", "type5": "image", "type6": "user_profile", "type7": "agent_profile", "created_cutoff": "<timestamp>"}
-- options: fetch_lobs=False

-- [2] execute
SELECT r.pk, r.id, r.kind, r.record_type, r.content, r.index_text, r.index_text_empty, JSON_SERIALIZE(r.parts RETURNING CLOB) AS parts, r.thread_id, r.user_id, r.agent_id, r.role, r.role_empty, r.seq_no, r.event_at, r.created_at, r.expires_at, CASE WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END AS status, JSON_SERIALIZE(r.metadata RETURNING CLOB) AS metadata, r.message_id, r.mime_type, r.version FROM "OAM_RECORDS" r WHERE r.pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt)
-- binds: {"pks": "[1]"}
-- options: fetch_lobs=False

-- [3] execute
SELECT f.v AS node, rel.pos, rel.id, rel.source_id, rel.source_type, rel.target_id, rel.target_type, rel.relation_type, rel.opposite_type, rel.event_at, JSON_SERIALIZE(rel.metadata RETURNING CLOB) AS metadata, rel.created_at, rel.version, CASE WHEN m.pk IS NULL THEN 0 ELSE 1 END AS admitted FROM "OAM_RELATIONS" rel JOIN JSON_TABLE(:frontier, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) f ON f.v IN (rel.source_id, rel.target_id) LEFT JOIN "OAM_RECORDS" m ON m.kind = 'memory' AND m.id = CASE WHEN rel.source_id = f.v THEN rel.target_id ELSE rel.source_id END AND m.record_type IN (:type0, :type1, :type2, :type3, :type4, :type5, :type6, :type7) AND (m.expires_at IS NULL OR m.expires_at > :now) AND m.created_at <= :created_cutoff ORDER BY rel.created_at, rel.id
-- binds: {"frontier": "[\"m1\"]", "now": "<timestamp>", "type0": "message", "type1": "memory", "type2": "fact", "type3": "guideline", "type4": "preference", "type5": "image", "type6": "user_profile", "type7": "agent_profile", "created_cutoff": "<timestamp>"}
-- options: fetch_lobs=False

-- [4] execute
SELECT r.pk, r.id, r.kind, r.record_type, r.content, r.index_text, r.index_text_empty, JSON_SERIALIZE(r.parts RETURNING CLOB) AS parts, r.thread_id, r.user_id, r.agent_id, r.role, r.role_empty, r.seq_no, r.event_at, r.created_at, r.expires_at, CASE WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END AS status, JSON_SERIALIZE(r.metadata RETURNING CLOB) AS metadata, r.message_id, r.mime_type, r.version, VECTOR_DISTANCE(r.embedding, :query_vector, COSINE) AS distance FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"m2\"]", "query_vector": "<vector f[8]>"}
-- options: fetch_lobs=False
