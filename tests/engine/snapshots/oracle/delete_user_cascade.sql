-- snapshot: delete_user_cascade
-- statements: 5

-- [1] execute
SELECT r.pk, r.id, r.kind, r.thread_id FROM "OAM_RECORDS" r WHERE r.user_id = :owner
-- binds: {"owner": "u1"}
-- options: fetch_lobs=False

-- [2] execute
DELETE FROM "OAM_RECORDS" WHERE pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt)
-- binds: {"pks": "[9]"}

-- [3] execute
SELECT r.pk, r.id, r.kind, r.thread_id FROM "OAM_RECORDS" r WHERE r.thread_id IN (SELECT t.id FROM "OAM_THREADS" t WHERE t.user_id = :owner)
-- binds: {"owner": "u1"}
-- options: fetch_lobs=False

-- [4] execute
DELETE FROM "OAM_RECORDS" WHERE pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt)
-- binds: {"pks": "[9]"}

-- [5] execute
DELETE FROM "OAM_THREADS" WHERE user_id = :owner
-- binds: {"owner": "u1"}
