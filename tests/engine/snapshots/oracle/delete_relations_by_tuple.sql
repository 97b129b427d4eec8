-- snapshot: delete_relations_by_tuple
-- statements: 4

-- [1] execute
SELECT id FROM "OAM_RELATIONS" WHERE source_id = :source_id AND source_type = :source_type AND target_id = :target_id AND target_type = :target_type AND relation_type = :relation_type
-- binds: {"source_id": "m1", "source_type": "fact", "target_id": "m2", "target_type": "fact", "relation_type": "supports"}
-- options: fetch_lobs=False

-- [2] execute
SELECT rel.pos, rel.id, rel.source_id, rel.source_type, rel.target_id, rel.target_type, rel.relation_type, rel.opposite_type, rel.event_at, JSON_SERIALIZE(rel.metadata RETURNING CLOB) AS metadata, rel.created_at FROM "OAM_RELATIONS" rel WHERE rel.id = :id
-- binds: {"id": "rel-1"}
-- options: fetch_lobs=False

-- [3] execute
DELETE FROM "OAM_RELATIONS" WHERE id = :id
-- binds: {"id": "rel-1"}

-- [4] execute
UPDATE "OAM_RECORDS" SET lifecycle_links = (SELECT count(*) FROM "OAM_RELATIONS" rel WHERE rel.target_id = "OAM_RECORDS".id AND rel.relation_type IN ('supersedes', 'refines', 'duplicates')) WHERE kind = 'memory' AND id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"m2\"]"}
