-- snapshot: list_threads_by_text
-- statements: 1

-- [1] execute
SELECT t.id, t.user_id, t.agent_id, JSON_SERIALIZE(t.metadata RETURNING CLOB) AS metadata, JSON_SERIALIZE(t.settings RETURNING CLOB) AS settings, t.created_at, t.updated_at, t.summary, JSON_SERIALIZE(t.topics RETURNING CLOB) AS topics, t.version, (SELECT count(*) FROM "OAM_RECORDS" m WHERE m.thread_id = t.id AND m.kind = 'message' AND (m.expires_at IS NULL OR m.expires_at > :now)) AS message_count FROM "OAM_THREADS" t WHERE (LOWER(t.id) LIKE :text_pattern ESCAPE '\' OR LOWER(JSON_SERIALIZE(t.metadata RETURNING CLOB)) LIKE :text_pattern ESCAPE '\') AND t.user_id = :scope_user_id ORDER BY t.updated_at DESC, t.id DESC FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"text_pattern": "%köln \\%%", "scope_user_id": "u1", "now": "<timestamp>", "fetch_limit": 6}
-- options: fetch_lobs=False
