-- snapshot: delete_message_with_images
-- statements: 8

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT r.thread_id FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id AND r.record_type = :record_type
-- binds: {"kind": "message", "id": "msg-1", "record_type": "message"}
-- options: fetch_lobs=False

-- [3] execute
SELECT r.pk, r.id, r.kind, r.thread_id FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id AND r.record_type = :record_type
-- binds: {"kind": "message", "id": "msg-1", "record_type": "message"}
-- options: fetch_lobs=False

-- [4] execute
SELECT r.pk FROM "OAM_RECORDS" r WHERE r.kind = 'image' AND r.message_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"msg-1\"]"}
-- options: fetch_lobs=False

-- [5] execute
DELETE FROM "OAM_RECORDS" WHERE pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt)
-- binds: {"pks": "[4, 11]"}

-- [6] executemany, 2 rows
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) VALUES (:entity, :key, :key)
-- binds[0]: {"entity": "record", "key": 4}
-- binds[1]: {"entity": "record", "key": 11}

-- [7] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [8] execute
UPDATE "OAM_THREADS" SET updated_at = :now WHERE id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"now": "<timestamp>", "ids": "[\"t1\"]"}
