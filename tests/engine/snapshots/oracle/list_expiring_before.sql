-- snapshot: list_expiring_before
-- statements: 1

-- [1] execute
SELECT r.pk, r.id, r.kind, r.record_type, r.content, r.index_text, r.index_text_empty, JSON_SERIALIZE(r.parts RETURNING CLOB) AS parts, r.thread_id, r.user_id, r.agent_id, r.role, r.role_empty, r.seq_no, r.event_at, r.created_at, r.expires_at, CASE WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END AS status, JSON_SERIALIZE(r.metadata RETURNING CLOB) AS metadata, r.message_id, r.mime_type, r.version FROM "OAM_RECORDS" r WHERE r.record_type IN (:type0, :type1) AND r.user_id = :scope_user_id AND (r.expires_at IS NULL OR r.expires_at > :now) AND r.expires_at IS NOT NULL AND r.expires_at <= :expires_before ORDER BY r.pk FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"type0": "fact", "type1": "memory", "scope_user_id": "u1", "now": "<timestamp>", "expires_before": "<timestamp>", "fetch_limit": 11}
-- options: fetch_lobs=False
