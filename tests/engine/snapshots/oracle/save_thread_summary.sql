-- snapshot: save_thread_summary
-- statements: 4

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
UPDATE "OAM_THREADS" SET summary = :summary, topics = :topics, version = version + 1 WHERE id = :id
-- binds: {"summary": "they talked about tea", "topics": "[\"tea\", \"mornings\"]", "id": "t1"}
-- input sizes: summary=DB_TYPE_LONG

-- [3] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [4] execute
UPDATE "OAM_THREADS" SET summary = :summary, topics = :topics, version = version + 1 WHERE id = :id
-- binds: {"summary": null, "topics": null, "id": "t1"}
-- input sizes: summary=DB_TYPE_LONG
