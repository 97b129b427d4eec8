-- snapshot: list_status_newest_first_text
-- statements: 2

-- [1] execute
SELECT r.pk, r.id, r.kind, r.record_type, r.content, r.index_text, r.index_text_empty, JSON_SERIALIZE(r.parts RETURNING CLOB) AS parts, r.thread_id, r.user_id, r.agent_id, r.role, r.role_empty, r.seq_no, r.event_at, r.created_at, r.expires_at, CASE WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END AS status, JSON_SERIALIZE(r.metadata RETURNING CLOB) AS metadata, r.message_id, r.mime_type, r.version FROM "OAM_RECORDS" r WHERE r.record_type IN (:type0, :type1) AND r.user_id = :scope_user_id AND (r.expires_at IS NULL OR r.expires_at > :now) AND (r.status <> 'valid' OR r.lifecycle_links <> 0) AND (LOWER(r.content) LIKE :text_pattern ESCAPE '\' OR LOWER(r.id) LIKE :text_pattern ESCAPE '\' OR LOWER(JSON_SERIALIZE(r.metadata RETURNING CLOB)) LIKE :text_pattern ESCAPE '\') AND r.pk < :after ORDER BY r.pk DESC FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"type0": "fact", "type1": "memory", "scope_user_id": "u1", "now": "<timestamp>", "text_pattern": "%50\\%\\_off\\\\é%", "after": 7, "fetch_limit": 2}
-- options: fetch_lobs=False

-- [2] execute
SELECT r.pk, r.id, r.kind, r.record_type, r.content, r.index_text, r.index_text_empty, JSON_SERIALIZE(r.parts RETURNING CLOB) AS parts, r.thread_id, r.user_id, r.agent_id, r.role, r.role_empty, r.seq_no, r.event_at, r.created_at, r.expires_at, CASE WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END AS status, JSON_SERIALIZE(r.metadata RETURNING CLOB) AS metadata, r.message_id, r.mime_type, r.version FROM "OAM_RECORDS" r WHERE r.record_type IN (:type0) AND (r.expires_at IS NULL OR r.expires_at > :now) AND r.status = 'valid' AND r.lifecycle_links = 0 ORDER BY r.pk FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"type0": "message", "now": "<timestamp>", "fetch_limit": 101}
-- options: fetch_lobs=False
