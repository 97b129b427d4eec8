-- snapshot: get
-- statements: 1

-- [1] execute
SELECT r.pk, r.id, r.kind, r.record_type, r.content, r.index_text, r.index_text_empty, JSON_SERIALIZE(r.parts RETURNING CLOB) AS parts, r.thread_id, r.user_id, r.agent_id, r.role, r.role_empty, r.seq_no, r.event_at, r.created_at, r.expires_at, CASE WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END AS status, JSON_SERIALIZE(r.metadata RETURNING CLOB) AS metadata, r.message_id, r.mime_type, r.version FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id AND r.record_type = :record_type AND (r.expires_at IS NULL OR r.expires_at > :now)
-- binds: {"kind": "memory", "id": "m1", "record_type": "fact", "now": "<timestamp>"}
-- options: fetch_lobs=False
