-- snapshot: update_thread
-- statements: 2

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
UPDATE "OAM_THREADS" SET metadata = :metadata, settings = :settings, updated_at = :now, version = version + 1 WHERE id = :id
-- binds: {"metadata": "{\"topic\":\"y\"}", "settings": "{\"lang\": \"de\"}", "now": "<timestamp>", "id": "t1"}
