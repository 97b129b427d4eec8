-- snapshot: add_messages_in_thread
-- statements: 9

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
MERGE INTO "OAM_THREADS" t USING (SELECT :id AS id FROM dual) s ON (t.id = s.id) WHEN NOT MATCHED THEN INSERT (id, user_id, agent_id, settings, created_at, updated_at) VALUES (:id, :user_id, :agent_id, :settings, :now, :now)
-- binds: {"id": "t1", "user_id": "u1", "agent_id": "a1", "now": "<timestamp>", "settings": "{}"}

-- [3] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) VALUES ('thread', 0, 0)

-- [4] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [5] execute
UPDATE "OAM_THREADS" SET updated_at = :now, next_seq_no = next_seq_no + :n WHERE id = :id
-- binds: {"now": "<timestamp>", "n": 3, "id": "t1"}

-- [6] execute
SELECT next_seq_no FROM "OAM_THREADS" WHERE id = :id
-- binds: {"id": "t1"}
-- options: fetch_lobs=False

-- [7] executemany, 3 rows
INSERT INTO "OAM_RECORDS" (id, kind, record_type, content, index_text, index_text_empty, search_text, parts, thread_id, user_id, agent_id, role, role_empty, seq_no, event_at, created_at, expires_at, status, metadata, embedding, message_id, mime_type) VALUES (:id, :kind, :record_type, :content, :index_text, :index_text_empty, :search_text, :parts, :thread_id, :user_id, :agent_id, :role, :role_empty, :seq_no, :event_at, :created_at, :expires_at, :status, :metadata, :embedding, :message_id, :mime_type)
-- binds[0]: {"id": "<uuid>", "kind": "message", "record_type": "message", "content": "hello there", "index_text": null, "index_text_empty": 0, "search_text": "hello there", "parts": null, "thread_id": "t1", "user_id": "u1", "agent_id": "a1", "role": "user", "role_empty": 0, "seq_no": 2, "event_at": "<timestamp>", "created_at": "<timestamp>", "expires_at": null, "status": "valid", "metadata": "{\"source\":\"chat\"}", "embedding": "<vector f[8]>", "message_id": null, "mime_type": null}
-- binds[1]: {"id": "<uuid>", "kind": "message", "record_type": "message", "content": null, "index_text": null, "index_text_empty": 1, "search_text": null, "parts": null, "thread_id": "t1", "user_id": "u1", "agent_id": "a1", "role": null, "role_empty": 1, "seq_no": 3, "event_at": null, "created_at": "<timestamp>", "expires_at": null, "status": "valid", "metadata": null, "embedding": null, "message_id": null, "mime_type": null}
-- binds[2]: {"id": "<uuid>", "kind": "message", "record_type": "message", "content": "look at this", "index_text": "indexed words", "index_text_empty": 0, "search_text": "indexed words", "parts": null, "thread_id": "t1", "user_id": "u1", "agent_id": "a1", "role": null, "role_empty": 0, "seq_no": 4, "event_at": null, "created_at": "<timestamp>", "expires_at": null, "status": "valid", "metadata": "{}", "embedding": "<vector f[8]>", "message_id": null, "mime_type": null}
-- input sizes: content=DB_TYPE_LONG, index_text=DB_TYPE_LONG, search_text=DB_TYPE_LONG, embedding=DB_TYPE_VECTOR

-- [8] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) SELECT 'record', lo, hi FROM (SELECT MIN(r.pk) AS lo, MAX(r.pk) AS hi FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)) batch WHERE lo IS NOT NULL
-- binds: {"kind": "message", "ids": "[\"<uuid>\", \"<uuid>\", \"<uuid>\"]"}

-- [9] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}
