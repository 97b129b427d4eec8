-- snapshot: update_memory_type_and_owners
-- statements: 9

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT r.pk, r.content, r.index_text, r.index_text_empty, r.thread_id, r.event_at, r.created_at, r.version FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id AND r.record_type = :record_type AND (r.expires_at IS NULL OR r.expires_at > :now) FOR UPDATE
-- binds: {"kind": "memory", "id": "m1", "record_type": "fact", "now": "<timestamp>"}
-- options: fetch_lobs=False

-- [3] execute
UPDATE "OAM_RECORDS" SET record_type = :record_type, user_id = :user_id, agent_id = :agent_id, version = version + 1 WHERE pk = :pk
-- binds: {"record_type": "preference", "user_id": "u2", "agent_id": null, "pk": 7}

-- [4] executemany, 1 rows
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) VALUES (:entity, :key, :key)
-- binds[0]: {"entity": "record", "key": 7}

-- [5] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [6] execute
UPDATE "OAM_RELATIONS" SET source_type = :record_type, version = version + 1 WHERE source_id = :id
-- binds: {"record_type": "preference", "id": "m1"}

-- [7] execute
UPDATE "OAM_RELATIONS" SET target_type = :record_type, version = version + 1 WHERE target_id = :id
-- binds: {"record_type": "preference", "id": "m1"}

-- [8] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) SELECT 'link', rel.pos, rel.pos FROM "OAM_RELATIONS" rel WHERE rel.source_id = :id OR rel.target_id = :id
-- binds: {"id": "m1"}

-- [9] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}
