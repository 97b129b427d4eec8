-- snapshot: add_agent_empty_information
-- statements: 5

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
MERGE INTO "OAM_RECORDS" t USING (SELECT :kind AS kind, :id AS id FROM dual) s ON (t.kind = s.kind AND t.id = s.id) WHEN MATCHED THEN UPDATE SET t.content = :content, t.search_text = :search_text, t.metadata = :metadata, t.embedding = :embedding, t.version = t.version + 1 WHEN NOT MATCHED THEN INSERT (id, kind, record_type, content, search_text, agent_id, created_at, metadata, embedding) VALUES (:id, :kind, :kind, :content, :search_text, :id, :now, :metadata, :embedding)
-- binds: {"id": "a1", "kind": "agent_profile", "content": null, "search_text": null, "metadata": null, "embedding": null, "now": "<timestamp>"}
-- input sizes: embedding=DB_TYPE_VECTOR

-- [3] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) SELECT 'record', r.pk, r.pk FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id
-- binds: {"kind": "agent_profile", "id": "a1"}

-- [4] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [5] execute
DELETE FROM "OAM_FINDINGS" WHERE record_pk IN (SELECT r.pk FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id)
-- binds: {"kind": "agent_profile", "id": "a1"}
