-- snapshot: delete_relations_by_tuple
-- statements: 9

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT id FROM "OAM_RELATIONS" WHERE source_id = :source_id AND source_type = :source_type AND target_id = :target_id AND target_type = :target_type AND relation_type = :relation_type
-- binds: {"source_id": "m1", "source_type": "fact", "target_id": "m2", "target_type": "fact", "relation_type": "supports"}
-- options: fetch_lobs=False

-- [3] execute
SELECT rel.pos, rel.id, rel.source_id, rel.source_type, rel.target_id, rel.target_type, rel.relation_type, rel.opposite_type, rel.event_at, JSON_SERIALIZE(rel.metadata RETURNING CLOB) AS metadata, rel.created_at, rel.version FROM "OAM_RELATIONS" rel WHERE rel.id = :id
-- binds: {"id": "rel-1"}
-- options: fetch_lobs=False

-- [4] execute
DELETE FROM "OAM_RELATIONS" WHERE id = :id
-- binds: {"id": "rel-1"}

-- [5] executemany, 1 rows
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) VALUES (:entity, :key, :key)
-- binds[0]: {"entity": "link", "key": 1}

-- [6] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [7] execute
UPDATE "OAM_RECORDS" SET lifecycle_links = (SELECT count(*) FROM "OAM_RELATIONS" rel WHERE rel.target_id = "OAM_RECORDS".id AND rel.relation_type IN ('supersedes', 'refines', 'duplicates')), version = version + 1 WHERE kind = 'memory' AND id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND lifecycle_links <> (SELECT count(*) FROM "OAM_RELATIONS" rel WHERE rel.target_id = "OAM_RECORDS".id AND rel.relation_type IN ('supersedes', 'refines', 'duplicates'))
-- binds: {"ids": "[\"m2\"]"}

-- [8] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) SELECT 'record', r.pk, r.pk FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"m2\"]"}

-- [9] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}
