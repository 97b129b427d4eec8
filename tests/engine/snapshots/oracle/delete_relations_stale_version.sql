-- snapshot: delete_relations_stale_version
-- statements: 2

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT rel.pos, rel.id, rel.source_id, rel.source_type, rel.target_id, rel.target_type, rel.relation_type, rel.opposite_type, rel.event_at, JSON_SERIALIZE(rel.metadata RETURNING CLOB) AS metadata, rel.created_at, rel.version FROM "OAM_RELATIONS" rel WHERE rel.id = :id
-- binds: {"id": "rel-1"}
-- options: fetch_lobs=False
