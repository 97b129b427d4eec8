-- snapshot: delete_message_with_images
-- statements: 5

-- [1] execute
SELECT r.thread_id FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id AND r.record_type = :record_type
-- binds: {"kind": "message", "id": "msg-1", "record_type": "message"}
-- options: fetch_lobs=False

-- [2] execute
SELECT r.pk, r.id, r.kind, r.thread_id FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id AND r.record_type = :record_type
-- binds: {"kind": "message", "id": "msg-1", "record_type": "message"}
-- options: fetch_lobs=False

-- [3] execute
SELECT r.pk FROM "OAM_RECORDS" r WHERE r.kind = 'image' AND r.message_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"msg-1\"]"}
-- options: fetch_lobs=False

-- [4] execute
DELETE FROM "OAM_RECORDS" WHERE pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt)
-- binds: {"pks": "[4, 11]"}

-- [5] execute
UPDATE "OAM_THREADS" SET updated_at = :now WHERE id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"now": "<timestamp>", "ids": "[\"t1\"]"}
