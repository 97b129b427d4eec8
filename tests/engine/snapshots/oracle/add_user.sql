-- snapshot: add_user
-- statements: 1

-- [1] execute
MERGE INTO "OAM_RECORDS" t USING (SELECT :kind AS kind, :id AS id FROM dual) s ON (t.kind = s.kind AND t.id = s.id) WHEN MATCHED THEN UPDATE SET t.content = :content, t.search_text = :search_text, t.metadata = :metadata, t.embedding = :embedding WHEN NOT MATCHED THEN INSERT (id, kind, record_type, content, search_text, user_id, created_at, metadata, embedding) VALUES (:id, :kind, :kind, :content, :search_text, :id, :now, :metadata, :embedding)
-- binds: {"id": "u1", "kind": "user_profile", "content": "Ada, prefers short answers", "search_text": "Ada, prefers short answers", "metadata": "{\"plan\":\"pro\"}", "embedding": "<vector f[8]>", "now": "<timestamp>"}
-- input sizes: embedding=DB_TYPE_VECTOR
