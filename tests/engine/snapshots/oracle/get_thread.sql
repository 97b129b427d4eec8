-- snapshot: get_thread
-- statements: 1

-- [1] execute
SELECT t.id, t.user_id, t.agent_id, JSON_SERIALIZE(t.metadata RETURNING CLOB) AS metadata, JSON_SERIALIZE(t.settings RETURNING CLOB) AS settings, t.created_at, t.updated_at, t.summary, JSON_SERIALIZE(t.topics RETURNING CLOB) AS topics, t.version, (SELECT count(*) FROM "OAM_RECORDS" m WHERE m.thread_id = t.id AND m.kind = 'message' AND (m.expires_at IS NULL OR m.expires_at > :now)) AS message_count FROM "OAM_THREADS" t WHERE t.id = :id
-- binds: {"id": "t1", "now": "<timestamp>"}
-- options: fetch_lobs=False
