-- snapshot: search_hybrid_created_at_or_before
-- statements: 4

-- [1] execute
SELECT count(*) AS n, count(CASE WHEN domidx_opstatus = 'FAILED' THEN 1 END) AS failed FROM user_indexes WHERE index_name = :name AND index_type = 'DOMAIN'
-- binds: {"name": "OAM_RECORDS_TEXT"}
-- options: fetch_lobs=False

-- [2] execute
SELECT r.pk, VECTOR_DISTANCE(r.embedding, :query_vector, COSINE) AS distance FROM "OAM_RECORDS" r WHERE r.embedding IS NOT NULL AND r.record_type IN (:type0, :type1) AND (r.expires_at IS NULL OR r.expires_at > :now) AND r.created_at <= :created_cutoff AND r.user_id = :scope_user_id AND r.agent_id IS NULL AND r.status = 'valid' AND r.lifecycle_links = 0 AND JSON_EQUAL(JSON_QUERY(r.metadata, '$."source"' RETURNING JSON), JSON(:r_mf0)) ORDER BY distance, r.pk FETCH EXACT FIRST :depth ROWS ONLY
-- binds: {"query_vector": "<vector f[8]>", "depth": 100, "now": "<timestamp>", "type0": "fact", "type1": "message", "created_cutoff": "<timestamp>", "scope_user_id": "u1", "r_mf0": "\"chat\""}
-- options: fetch_lobs=False

-- [3] execute
SELECT r.pk, SCORE(1) AS score FROM "OAM_RECORDS" r WHERE CONTAINS(r.search_text, :keywords, 1) > 0 AND r.record_type IN (:type0, :type1) AND (r.expires_at IS NULL OR r.expires_at > :now) AND r.created_at <= :created_cutoff AND r.user_id = :scope_user_id AND r.agent_id IS NULL AND r.status = 'valid' AND r.lifecycle_links = 0 AND JSON_EQUAL(JSON_QUERY(r.metadata, '$."source"' RETURNING JSON), JSON(:r_mf0)) ORDER BY score DESC, r.pk FETCH FIRST :depth ROWS ONLY
-- binds: {"keywords": "{morning} ACCUM {tea}", "depth": 100, "now": "<timestamp>", "type0": "fact", "type1": "message", "created_cutoff": "<timestamp>", "scope_user_id": "u1", "r_mf0": "\"chat\""}
-- options: fetch_lobs=False

-- [4] execute
SELECT r.pk, r.id, r.kind, r.record_type, r.content, r.index_text, r.index_text_empty, JSON_SERIALIZE(r.parts RETURNING CLOB) AS parts, r.thread_id, r.user_id, r.agent_id, r.role, r.role_empty, r.seq_no, r.event_at, r.created_at, r.expires_at, CASE WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END AS status, JSON_SERIALIZE(r.metadata RETURNING CLOB) AS metadata, r.message_id, r.mime_type, r.version FROM "OAM_RECORDS" r WHERE r.pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt)
-- binds: {"pks": "[2, 1]"}
-- options: fetch_lobs=False
