-- snapshot: update_thread
-- statements: 1

-- [1] execute
UPDATE "OAM_THREADS" SET metadata = :metadata, settings = :settings, updated_at = :now WHERE id = :id
-- binds: {"metadata": "{\"topic\":\"y\"}", "settings": "{\"lang\": \"de\"}", "now": "<timestamp>", "id": "t1"}
