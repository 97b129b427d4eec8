-- snapshot: delete_user_cascade
-- statements: 12

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT r.pk, r.id, r.kind, r.thread_id FROM "OAM_RECORDS" r WHERE r.user_id = :owner
-- binds: {"owner": "u1"}
-- options: fetch_lobs=False

-- [3] execute
DELETE FROM "OAM_RECORDS" WHERE pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt)
-- binds: {"pks": "[9]"}

-- [4] executemany, 1 rows
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) VALUES (:entity, :key, :key)
-- binds[0]: {"entity": "record", "key": 9}

-- [5] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [6] execute
SELECT r.pk, r.id, r.kind, r.thread_id FROM "OAM_RECORDS" r WHERE r.thread_id IN (SELECT t.id FROM "OAM_THREADS" t WHERE t.user_id = :owner)
-- binds: {"owner": "u1"}
-- options: fetch_lobs=False

-- [7] execute
DELETE FROM "OAM_RECORDS" WHERE pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt)
-- binds: {"pks": "[9]"}

-- [8] executemany, 1 rows
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) VALUES (:entity, :key, :key)
-- binds[0]: {"entity": "record", "key": 9}

-- [9] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [10] execute
DELETE FROM "OAM_THREADS" WHERE user_id = :owner
-- binds: {"owner": "u1"}

-- [11] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) VALUES ('thread', 0, 0)

-- [12] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}
