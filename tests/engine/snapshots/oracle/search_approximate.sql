-- snapshot: search_approximate
-- statements: 2

-- [1] execute
SELECT r.pk, VECTOR_DISTANCE(r.embedding, :query_vector, COSINE) AS distance FROM "OAM_RECORDS" r WHERE r.embedding IS NOT NULL AND r.record_type IN (:type0, :type1, :type2, :type3, :type4, :type5, :type6, :type7) AND (r.expires_at IS NULL OR r.expires_at > :now) ORDER BY distance FETCH APPROX FIRST :depth ROWS ONLY WITH TARGET ACCURACY 90
-- binds: {"query_vector": "<vector f[8]>", "depth": 100, "now": "<timestamp>", "type0": "message", "type1": "memory", "type2": "fact", "type3": "guideline", "type4": "preference", "type5": "image", "type6": "user_profile", "type7": "agent_profile"}
-- options: fetch_lobs=False

-- [2] execute
SELECT r.pk, r.id, r.kind, r.record_type, r.content, r.index_text, r.index_text_empty, JSON_SERIALIZE(r.parts RETURNING CLOB) AS parts, r.thread_id, r.user_id, r.agent_id, r.role, r.role_empty, r.seq_no, r.event_at, r.created_at, r.expires_at, CASE WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END AS status, JSON_SERIALIZE(r.metadata RETURNING CLOB) AS metadata, r.message_id, r.mime_type, r.version FROM "OAM_RECORDS" r WHERE r.pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt)
-- binds: {"pks": "[1]"}
-- options: fetch_lobs=False
