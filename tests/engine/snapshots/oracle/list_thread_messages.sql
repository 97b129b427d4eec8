-- snapshot: list_thread_messages
-- statements: 1

-- [1] execute
SELECT r.pk, r.id, r.kind, r.record_type, r.content, r.index_text, r.index_text_empty, JSON_SERIALIZE(r.parts RETURNING CLOB) AS parts, r.thread_id, r.user_id, r.agent_id, r.role, r.role_empty, r.seq_no, r.event_at, r.created_at, r.expires_at, CASE WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END AS status, JSON_SERIALIZE(r.metadata RETURNING CLOB) AS metadata, r.message_id, r.mime_type, r.version FROM "OAM_RECORDS" r WHERE r.thread_id = :thread_id AND r.kind = 'message' AND (r.expires_at IS NULL OR r.expires_at > :now) AND r.seq_no >= :range_start_seq_no AND r.seq_no < :range_end_seq_no ORDER BY r.seq_no DESC FETCH FIRST :last_n ROWS ONLY
-- binds: {"thread_id": "t1", "now": "<timestamp>", "range_start_seq_no": 2, "range_end_seq_no": 20, "last_n": 10}
-- options: fetch_lobs=False
