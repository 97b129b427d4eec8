-- snapshot: add_6000_character_content
-- statements: 5

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT id FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) FETCH FIRST 1 ROWS ONLY
-- binds: {"kind": "memory", "ids": "[\"m1\"]"}
-- options: fetch_lobs=False

-- [3] executemany, 1 rows
INSERT INTO "OAM_RECORDS" (id, kind, record_type, content, index_text, index_text_empty, search_text, parts, thread_id, user_id, agent_id, role, role_empty, seq_no, event_at, created_at, expires_at, status, metadata, embedding, message_id, mime_type) VALUES (:id, :kind, :record_type, :content, :index_text, :index_text_empty, :search_text, :parts, :thread_id, :user_id, :agent_id, :role, :role_empty, :seq_no, :event_at, :created_at, :expires_at, :status, :metadata, :embedding, :message_id, :mime_type)
-- binds[0]: {"id": "m1", "kind": "memory", "record_type": "memory", "content": "<text: 6000 characters, 6000 bytes>", "index_text": null, "index_text_empty": 0, "search_text": "<text: 6000 characters, 6000 bytes>", "parts": null, "thread_id": null, "user_id": "u1", "agent_id": null, "role": null, "role_empty": 0, "seq_no": null, "event_at": null, "created_at": "<timestamp>", "expires_at": null, "status": "valid", "metadata": null, "embedding": "<vector f[8]>", "message_id": null, "mime_type": null}
-- input sizes: content=DB_TYPE_LONG, index_text=DB_TYPE_LONG, search_text=DB_TYPE_LONG, embedding=DB_TYPE_VECTOR

-- [4] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) SELECT 'record', lo, hi FROM (SELECT MIN(r.pk) AS lo, MAX(r.pk) AS hi FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)) batch WHERE lo IS NOT NULL
-- binds: {"kind": "memory", "ids": "[\"m1\"]"}

-- [5] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}
