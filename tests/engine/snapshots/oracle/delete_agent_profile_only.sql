-- snapshot: delete_agent_profile_only
-- statements: 2

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT r.pk, r.id, r.kind, r.thread_id FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id
-- binds: {"kind": "agent_profile", "id": "a1"}
-- options: fetch_lobs=False
