-- snapshot: save_thread_summary_expected_version
-- statements: 3

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT version FROM "OAM_THREADS" WHERE id = :id FOR UPDATE
-- binds: {"id": "t1"}
-- options: fetch_lobs=False

-- [3] execute
UPDATE "OAM_THREADS" SET summary = :summary, topics = :topics, version = version + 1 WHERE id = :id
-- binds: {"summary": "they talked about tea", "topics": "[\"tea\"]", "id": "t1"}
-- input sizes: summary=DB_TYPE_LONG
