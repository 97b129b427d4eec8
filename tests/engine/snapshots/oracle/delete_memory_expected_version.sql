-- snapshot: delete_memory_expected_version
-- statements: 12

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT r.version FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id FOR UPDATE
-- binds: {"kind": "memory", "id": "m1"}
-- options: fetch_lobs=False

-- [3] execute
SELECT r.thread_id FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id AND r.record_type = :record_type
-- binds: {"kind": "memory", "id": "m1", "record_type": "fact"}
-- options: fetch_lobs=False

-- [4] execute
SELECT r.pk, r.id, r.kind, r.thread_id FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id AND r.record_type = :record_type
-- binds: {"kind": "memory", "id": "m1", "record_type": "fact"}
-- options: fetch_lobs=False

-- [5] execute
SELECT DISTINCT rel.target_id FROM "OAM_RELATIONS" rel WHERE rel.source_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND rel.relation_type IN ('supersedes', 'refines', 'duplicates')
-- binds: {"ids": "[\"m1\"]"}
-- options: fetch_lobs=False

-- [6] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) SELECT 'link', rel.pos, rel.pos FROM "OAM_RELATIONS" rel WHERE rel.source_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) OR rel.target_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"m1\"]"}

-- [7] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [8] execute
DELETE FROM "OAM_RELATIONS" WHERE source_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) OR target_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"m1\"]"}

-- [9] execute
DELETE FROM "OAM_RECORDS" WHERE pk IN (SELECT jt.v FROM JSON_TABLE(:pks, '$[*]' COLUMNS (v NUMBER(19) PATH '$')) jt)
-- binds: {"pks": "[3]"}

-- [10] executemany, 1 rows
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) VALUES (:entity, :key, :key)
-- binds[0]: {"entity": "record", "key": 3}

-- [11] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [12] execute
UPDATE "OAM_THREADS" SET updated_at = :now WHERE id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"now": "<timestamp>", "ids": "[\"t1\"]"}
