-- snapshot: add_images_with_bytes
-- statements: 11

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT id FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) FETCH FIRST 1 ROWS ONLY
-- binds: {"kind": "image", "ids": "[\"img-1\", \"img-2\"]"}
-- options: fetch_lobs=False

-- [3] execute
MERGE INTO "OAM_THREADS" t USING (SELECT :id AS id FROM dual) s ON (t.id = s.id) WHEN NOT MATCHED THEN INSERT (id, user_id, agent_id, settings, created_at, updated_at) VALUES (:id, :user_id, :agent_id, :settings, :now, :now)
-- binds: {"id": "t1", "user_id": null, "agent_id": null, "now": "<timestamp>", "settings": "{}"}

-- [4] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) VALUES ('thread', 0, 0)

-- [5] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [6] execute
UPDATE "OAM_THREADS" SET updated_at = :now, next_seq_no = next_seq_no + :n WHERE id = :id
-- binds: {"now": "<timestamp>", "n": 0, "id": "t1"}

-- [7] executemany, 2 rows
INSERT INTO "OAM_RECORDS" (id, kind, record_type, content, index_text, index_text_empty, search_text, parts, thread_id, user_id, agent_id, role, role_empty, seq_no, event_at, created_at, expires_at, status, metadata, embedding, message_id, mime_type) VALUES (:id, :kind, :record_type, :content, :index_text, :index_text_empty, :search_text, :parts, :thread_id, :user_id, :agent_id, :role, :role_empty, :seq_no, :event_at, :created_at, :expires_at, :status, :metadata, :embedding, :message_id, :mime_type)
-- binds[0]: {"id": "img-1", "kind": "image", "record_type": "image", "content": "a red square", "index_text": null, "index_text_empty": 0, "search_text": "a red square", "parts": null, "thread_id": "t1", "user_id": null, "agent_id": null, "role": null, "role_empty": 0, "seq_no": null, "event_at": null, "created_at": "<timestamp>", "expires_at": null, "status": "valid", "metadata": null, "embedding": "<vector f[8]>", "message_id": "msg-1", "mime_type": "image/PNG"}
-- binds[1]: {"id": "img-2", "kind": "image", "record_type": "image", "content": null, "index_text": null, "index_text_empty": 0, "search_text": null, "parts": null, "thread_id": "t1", "user_id": null, "agent_id": null, "role": null, "role_empty": 0, "seq_no": null, "event_at": null, "created_at": "<timestamp>", "expires_at": null, "status": "valid", "metadata": null, "embedding": null, "message_id": null, "mime_type": "image/PNG"}
-- input sizes: content=DB_TYPE_LONG, index_text=DB_TYPE_LONG, search_text=DB_TYPE_LONG, embedding=DB_TYPE_VECTOR

-- [8] execute
SELECT id, pk FROM "OAM_RECORDS" r WHERE kind = 'image' AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"img-1\", \"img-2\"]"}
-- options: fetch_lobs=False

-- [9] executemany, 2 rows
INSERT INTO "OAM_IMAGE_BYTES" (record_pk, bytes) VALUES (:record_pk, :bytes)
-- binds[0]: {"record_pk": 11, "bytes": "<bytes[79]>"}
-- binds[1]: {"record_pk": 12, "bytes": "<bytes[79]>"}

-- [10] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) SELECT 'record', lo, hi FROM (SELECT MIN(r.pk) AS lo, MAX(r.pk) AS hi FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)) batch WHERE lo IS NOT NULL
-- binds: {"kind": "image", "ids": "[\"img-1\", \"img-2\"]"}

-- [11] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}
