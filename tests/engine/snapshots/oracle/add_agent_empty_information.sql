-- snapshot: add_agent_empty_information
-- statements: 1

-- [1] execute
MERGE INTO "OAM_RECORDS" t USING (SELECT :kind AS kind, :id AS id FROM dual) s ON (t.kind = s.kind AND t.id = s.id) WHEN MATCHED THEN UPDATE SET t.content = :content, t.search_text = :search_text, t.metadata = :metadata, t.embedding = :embedding WHEN NOT MATCHED THEN INSERT (id, kind, record_type, content, search_text, agent_id, created_at, metadata, embedding) VALUES (:id, :kind, :kind, :content, :search_text, :id, :now, :metadata, :embedding)
-- binds: {"id": "a1", "kind": "agent_profile", "content": null, "search_text": null, "metadata": null, "embedding": null, "now": "<timestamp>"}
-- input sizes: embedding=DB_TYPE_VECTOR
