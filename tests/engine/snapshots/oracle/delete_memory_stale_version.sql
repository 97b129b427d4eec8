-- snapshot: delete_memory_stale_version
-- statements: 2

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT r.version FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id FOR UPDATE
-- binds: {"kind": "memory", "id": "m1"}
-- options: fetch_lobs=False
