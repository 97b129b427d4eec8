-- snapshot: erase_user
-- statements: 19

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT t.id FROM "OAM_THREADS" t WHERE t.user_id = :user_id
-- binds: {"user_id": "u1"}
-- options: fetch_lobs=False

-- [3] execute
SELECT r.pk, r.id, r.kind FROM "OAM_RECORDS" r WHERE (r.user_id = :user_id OR (r.kind = 'user_profile' AND r.id = :user_id) OR r.thread_id IN (SELECT jt.v FROM JSON_TABLE(:threads, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt))
-- binds: {"user_id": "u1", "threads": "[\"t1\"]"}
-- options: fetch_lobs=False

-- [4] execute
SELECT r.pk, r.id, r.kind FROM "OAM_RECORDS" r WHERE r.kind = 'image' AND r.message_id IN (SELECT jt.v FROM JSON_TABLE(:messages, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"messages": "[\"msg-1\"]"}
-- options: fetch_lobs=False

-- [5] execute
SELECT rel.id FROM "OAM_RELATIONS" rel WHERE rel.source_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) OR rel.target_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"m1\"]"}
-- options: fetch_lobs=False

-- [6] execute
SELECT COUNT(*) AS n FROM "OAM_ACTIVITY" a WHERE (a.user_id = :user_id OR a.thread_id IN (SELECT jt.v FROM JSON_TABLE(:threads, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)) AND a.kind IN ('view', 'export')
-- binds: {"user_id": "u1", "threads": "[\"t1\"]"}
-- options: fetch_lobs=False

-- [7] execute
SELECT a.pk FROM "OAM_ACTIVITY" a WHERE (a.user_id = :user_id OR a.thread_id IN (SELECT jt.v FROM JSON_TABLE(:threads, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)) AND a.kind NOT IN ('view', 'export')
-- binds: {"user_id": "u1", "threads": "[\"t1\"]"}
-- options: fetch_lobs=False

-- [8] execute
SELECT DISTINCT ar.event_pk FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.record_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"u1\", \"msg-1\", \"m1\", \"t1\"]"}
-- options: fetch_lobs=False

-- [9] execute
SELECT a.pk FROM "OAM_ACTIVITY" a WHERE a.pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt) AND (a.user_id = :user_id OR a.thread_id IN (SELECT jt.v FROM JSON_TABLE(:threads, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt))
-- binds: {"user_id": "u1", "threads": "[\"t1\"]", "pks": "[8]"}
-- options: fetch_lobs=False

-- [10] execute
DELETE FROM "OAM_ACTIVITY_RECORDS" WHERE event_pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt)
-- binds: {"pks": "[7]"}

-- [11] execute
DELETE FROM "OAM_ACTIVITY" WHERE pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt)
-- binds: {"pks": "[7]"}

-- [12] execute
UPDATE "OAM_ACTIVITY" SET query_text = NULL, request = '{}', content = NULL, content_chars = 0, cause = NULL WHERE pk IN (SELECT a.pk FROM "OAM_ACTIVITY" a WHERE (a.user_id = :user_id OR a.thread_id IN (SELECT jt.v FROM JSON_TABLE(:threads, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)) AND a.kind IN ('view', 'export'))
-- binds: {"user_id": "u1", "threads": "[\"t1\"]"}

-- [13] execute
SELECT a.pk, a.results FROM "OAM_ACTIVITY" a WHERE a.pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt)
-- binds: {"pks": "[8]"}
-- options: fetch_lobs=False

-- [14] executemany, 1 rows
UPDATE "OAM_ACTIVITY" SET results = :results, content = NULL, content_chars = 0 WHERE pk = :pk
-- binds[0]: {"pk": 8, "results": "[]"}

-- [15] execute
DELETE FROM "OAM_ACTIVITY_RECORDS" WHERE event_pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt) AND record_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"pks": "[8]", "ids": "[\"m1\", \"msg-1\", \"t1\", \"u1\"]"}

-- [16] execute
SELECT r.pk, r.id, r.kind, r.thread_id FROM "OAM_RECORDS" r WHERE (r.user_id = :user_id OR (r.kind = 'user_profile' AND r.id = :user_id) OR r.thread_id IN (SELECT jt.v FROM JSON_TABLE(:threads, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt))
-- binds: {"user_id": "u1", "threads": "[\"t1\"]"}
-- options: fetch_lobs=False

-- [17] execute
DELETE FROM "OAM_THREADS" WHERE id IN (SELECT jt.v FROM JSON_TABLE(:threads, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"threads": "[\"t1\"]"}

-- [18] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) VALUES ('thread', 0, 0)

-- [19] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}
