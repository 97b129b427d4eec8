-- snapshot: delete_thread
-- statements: 13

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT r.pk, r.id, r.kind, r.thread_id FROM "OAM_RECORDS" r WHERE r.thread_id = :thread_id
-- binds: {"thread_id": "t1"}
-- options: fetch_lobs=False

-- [3] execute
SELECT DISTINCT rel.target_id FROM "OAM_RELATIONS" rel WHERE rel.source_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND rel.relation_type IN ('supersedes', 'refines', 'duplicates')
-- binds: {"ids": "[\"m1\"]"}
-- options: fetch_lobs=False

-- [4] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) SELECT 'link', rel.pos, rel.pos FROM "OAM_RELATIONS" rel WHERE rel.source_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) OR rel.target_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"m1\"]"}

-- [5] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [6] execute
DELETE FROM "OAM_RELATIONS" WHERE source_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) OR target_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"m1\"]"}

-- [7] execute
SELECT r.pk FROM "OAM_RECORDS" r WHERE r.kind = 'image' AND r.message_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"msg-1\"]"}
-- options: fetch_lobs=False

-- [8] execute
DELETE FROM "OAM_RECORDS" WHERE pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt)
-- binds: {"pks": "[4, 5]"}

-- [9] executemany, 2 rows
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) VALUES (:entity, :key, :key)
-- binds[0]: {"entity": "record", "key": 4}
-- binds[1]: {"entity": "record", "key": 5}

-- [10] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [11] execute
DELETE FROM "OAM_THREADS" WHERE id = :id
-- binds: {"id": "t1"}

-- [12] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) VALUES ('thread', 0, 0)

-- [13] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}
