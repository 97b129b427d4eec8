-- snapshot: save_thread
-- statements: 5

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
MERGE INTO "OAM_THREADS" t USING (SELECT :id AS id FROM dual) s ON (t.id = s.id) WHEN NOT MATCHED THEN INSERT (id, user_id, agent_id, metadata, settings, created_at, updated_at) VALUES (:id, :user_id, :agent_id, :metadata, :settings, :now, :now)
-- binds: {"id": "t1", "user_id": "u1", "agent_id": "a1", "now": "<timestamp>", "metadata": "{\"topic\":\"x\"}", "settings": "{\"lang\": \"en\"}"}

-- [3] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) VALUES ('thread', 0, 0)

-- [4] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [5] execute
SELECT t.id, t.user_id, t.agent_id, JSON_SERIALIZE(t.metadata RETURNING CLOB) AS metadata, JSON_SERIALIZE(t.settings RETURNING CLOB) AS settings, t.created_at, t.updated_at, t.summary, JSON_SERIALIZE(t.topics RETURNING CLOB) AS topics, t.version, (SELECT count(*) FROM "OAM_RECORDS" m WHERE m.thread_id = t.id AND m.kind = 'message' AND (m.expires_at IS NULL OR m.expires_at > :now)) AS message_count FROM "OAM_THREADS" t WHERE t.id = :id
-- binds: {"id": "t1", "now": "<timestamp>"}
-- options: fetch_lobs=False
