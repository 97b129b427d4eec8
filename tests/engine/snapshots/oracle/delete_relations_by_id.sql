-- snapshot: delete_relations_by_id
-- statements: 3

-- [1] execute
SELECT rel.pos, rel.id, rel.source_id, rel.source_type, rel.target_id, rel.target_type, rel.relation_type, rel.opposite_type, rel.event_at, JSON_SERIALIZE(rel.metadata RETURNING CLOB) AS metadata, rel.created_at FROM "OAM_RELATIONS" rel WHERE rel.id = :id
-- binds: {"id": "rel-1"}
-- options: fetch_lobs=False

-- [2] execute
DELETE FROM "OAM_RELATIONS" WHERE id = :id
-- binds: {"id": "rel-1"}

-- [3] execute
UPDATE "OAM_RECORDS" SET lifecycle_links = (SELECT count(*) FROM "OAM_RELATIONS" rel WHERE rel.target_id = "OAM_RECORDS".id AND rel.relation_type IN ('supersedes', 'refines', 'duplicates')) WHERE kind = 'memory' AND id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"m2\"]"}
