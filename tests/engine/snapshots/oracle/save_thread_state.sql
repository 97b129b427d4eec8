-- snapshot: save_thread_state
-- statements: 2

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
UPDATE "OAM_THREADS" SET settings = JSON_MERGEPATCH(COALESCE(settings, JSON('{}')), JSON(:patch)) WHERE id = :id
-- binds: {"patch": "{\"extraction\": {\"cursor\": 3, \"failed\": []}}", "id": "t1"}
