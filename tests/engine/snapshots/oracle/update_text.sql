-- snapshot: update_text
-- statements: 7

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT r.pk, r.content, r.index_text, r.index_text_empty, r.thread_id, r.event_at, r.created_at, r.version FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id AND r.record_type = :record_type AND (r.expires_at IS NULL OR r.expires_at > :now) FOR UPDATE
-- binds: {"kind": "message", "id": "msg-1", "record_type": "message", "now": "<timestamp>"}
-- options: fetch_lobs=False

-- [3] execute
UPDATE "OAM_RECORDS" SET content = :content, index_text = :index_text, index_text_empty = :index_text_empty, search_text = :search_text, parts = :parts, embedding = :embedding, version = version + 1 WHERE pk = :pk
-- binds: {"content": "new text", "index_text": null, "index_text_empty": 0, "search_text": "new text", "parts": null, "embedding": "<vector f[8]>", "pk": 7}
-- input sizes: content=DB_TYPE_LONG, index_text=DB_TYPE_LONG, search_text=DB_TYPE_LONG, embedding=DB_TYPE_VECTOR

-- [4] executemany, 1 rows
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) VALUES (:entity, :key, :key)
-- binds[0]: {"entity": "record", "key": 7}

-- [5] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [6] execute
DELETE FROM "OAM_FINDINGS" WHERE record_pk = :pk
-- binds: {"pk": 7}

-- [7] execute
UPDATE "OAM_THREADS" SET updated_at = :now WHERE id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"now": "<timestamp>", "ids": "[\"t1\"]"}
