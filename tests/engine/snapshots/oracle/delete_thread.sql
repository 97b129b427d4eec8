-- snapshot: delete_thread
-- statements: 6

-- [1] execute
SELECT r.pk, r.id, r.kind, r.thread_id FROM "OAM_RECORDS" r WHERE r.thread_id = :thread_id
-- binds: {"thread_id": "t1"}
-- options: fetch_lobs=False

-- [2] execute
SELECT DISTINCT rel.target_id FROM "OAM_RELATIONS" rel WHERE rel.source_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND rel.relation_type IN ('supersedes', 'refines', 'duplicates')
-- binds: {"ids": "[\"m1\"]"}
-- options: fetch_lobs=False

-- [3] execute
DELETE FROM "OAM_RELATIONS" WHERE source_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) OR target_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"m1\"]"}

-- [4] execute
SELECT r.pk FROM "OAM_RECORDS" r WHERE r.kind = 'image' AND r.message_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"msg-1\"]"}
-- options: fetch_lobs=False

-- [5] execute
DELETE FROM "OAM_RECORDS" WHERE pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt)
-- binds: {"pks": "[4, 5]"}

-- [6] execute
DELETE FROM "OAM_THREADS" WHERE id = :id
-- binds: {"id": "t1"}
