-- snapshot: list_200_ids
-- statements: 1

-- [1] execute
SELECT r.pk, r.id, r.kind, r.record_type, r.content, r.index_text, r.index_text_empty, JSON_SERIALIZE(r.parts RETURNING CLOB) AS parts, r.thread_id, r.user_id, r.agent_id, r.role, r.role_empty, r.seq_no, r.event_at, r.created_at, r.expires_at, CASE WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END AS status, JSON_SERIALIZE(r.metadata RETURNING CLOB) AS metadata, r.message_id, r.mime_type, r.version FROM "OAM_RECORDS" r WHERE r.record_type IN (:type0) AND r.kind IN (:kind0) AND r.id IN (SELECT jt.v FROM JSON_TABLE(:record_ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND (r.expires_at IS NULL OR r.expires_at > :now) ORDER BY r.pk
-- binds: {"type0": "memory", "kind0": "memory", "record_ids": "<text: 5600 characters, 5600 bytes>", "now": "<timestamp>"}
-- CLOB binds: record_ids
-- options: fetch_lobs=False
