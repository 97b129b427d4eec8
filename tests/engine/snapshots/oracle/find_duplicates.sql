-- snapshot: find_duplicates
-- statements: 4

-- [1] execute
SELECT a.pk AS first_pk, b.pk AS second_pk FROM "OAM_RECORDS" a JOIN "OAM_RECORDS" b ON b.user_id = a.user_id AND b.pk > a.pk WHERE a.user_id = :user_id AND a.embedding IS NOT NULL AND a.kind = 'memory' AND a.record_type IN (:type0, :type1) AND (a.expires_at IS NULL OR a.expires_at > :now) AND a.status = 'valid' AND a.lifecycle_links = 0 AND b.user_id = :user_id AND b.embedding IS NOT NULL AND b.kind = 'memory' AND b.record_type IN (:type0, :type1) AND (b.expires_at IS NULL OR b.expires_at > :now) AND b.status = 'valid' AND b.lifecycle_links = 0 AND VECTOR_DISTANCE(a.embedding, b.embedding, COSINE) <= :max_distance FETCH FIRST :max_pairs ROWS ONLY
-- binds: {"max_distance": 0.100001, "max_pairs": 2000001, "user_id": "u1", "now": "<timestamp>", "type0": "fact", "type1": "memory"}
-- options: fetch_lobs=False

-- [2] execute
SELECT count(*) AS n FROM "OAM_RECORDS" r WHERE r.user_id = :user_id AND r.embedding IS NOT NULL AND r.kind = 'memory' AND r.record_type IN (:type0, :type1) AND (r.expires_at IS NULL OR r.expires_at > :now) AND r.status = 'valid' AND r.lifecycle_links = 0
-- binds: {"user_id": "u1", "now": "<timestamp>", "type0": "fact", "type1": "memory"}
-- options: fetch_lobs=False

-- [3] execute
SELECT r.pk, r.embedding FROM "OAM_RECORDS" r WHERE r.pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt) ORDER BY r.pk
-- binds: {"pks": "[1, 2, 5]"}
-- options: fetch_lobs=False

-- [4] execute
SELECT r.pk, r.id, r.kind, r.record_type, r.content, r.index_text, r.index_text_empty, JSON_SERIALIZE(r.parts RETURNING CLOB) AS parts, r.thread_id, r.user_id, r.agent_id, r.role, r.role_empty, r.seq_no, r.event_at, r.created_at, r.expires_at, CASE WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END AS status, JSON_SERIALIZE(r.metadata RETURNING CLOB) AS metadata, r.message_id, r.mime_type, r.version FROM "OAM_RECORDS" r WHERE r.pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt)
-- binds: {"pks": "[2, 5, 1]"}
-- options: fetch_lobs=False
