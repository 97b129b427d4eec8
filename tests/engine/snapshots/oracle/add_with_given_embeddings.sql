-- snapshot: add_with_given_embeddings
-- statements: 1

-- [1] executemany, 1 rows
INSERT INTO "OAM_RECORDS" (id, kind, record_type, content, index_text, index_text_empty, search_text, parts, thread_id, user_id, agent_id, role, role_empty, seq_no, event_at, created_at, expires_at, status, metadata, embedding, message_id, mime_type) VALUES (:id, :kind, :record_type, :content, :index_text, :index_text_empty, :search_text, :parts, :thread_id, :user_id, :agent_id, :role, :role_empty, :seq_no, :event_at, :created_at, :expires_at, :status, :metadata, :embedding, :message_id, :mime_type)
-- binds[0]: {"id": "<uuid>", "kind": "memory", "record_type": "memory", "content": "given", "index_text": null, "index_text_empty": 0, "search_text": "given", "parts": null, "thread_id": null, "user_id": null, "agent_id": null, "role": null, "role_empty": 0, "seq_no": null, "event_at": null, "created_at": "<timestamp>", "expires_at": null, "status": "valid", "metadata": null, "embedding": "<vector f[8]>", "message_id": null, "mime_type": null}
-- input sizes: content=DB_TYPE_LONG, index_text=DB_TYPE_LONG, search_text=DB_TYPE_LONG, embedding=DB_TYPE_VECTOR
