-- snapshot: list_threads
-- statements: 1

-- [1] execute
SELECT t.id, t.user_id, t.agent_id, JSON_SERIALIZE(t.metadata RETURNING CLOB) AS metadata, JSON_SERIALIZE(t.settings RETURNING CLOB) AS settings, t.created_at, t.updated_at, t.summary, JSON_SERIALIZE(t.topics RETURNING CLOB) AS topics, t.version, (SELECT count(*) FROM "OAM_RECORDS" m WHERE m.thread_id = t.id AND m.kind = 'message' AND (m.expires_at IS NULL OR m.expires_at > :now)) AS message_count FROM "OAM_THREADS" t WHERE t.user_id = :scope_user_id AND t.agent_id IS NULL AND JSON_EQUAL(JSON_QUERY(t.metadata, '$."project"' RETURNING JSON), JSON(:mf0)) AND (t.updated_at < :c_updated OR (t.updated_at = :c_updated AND t.id < :c_id)) ORDER BY t.updated_at DESC, t.id DESC FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"scope_user_id": "u1", "mf0": "\"apollo\"", "now": "<timestamp>", "c_updated": "<timestamp>", "c_id": "t9", "fetch_limit": 6}
-- options: fetch_lobs=False
