-- snapshot: delete_thread_expected_version
-- statements: 6

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT version FROM "OAM_THREADS" WHERE id = :id FOR UPDATE
-- binds: {"id": "t1"}
-- options: fetch_lobs=False

-- [3] execute
SELECT r.pk, r.id, r.kind, r.thread_id FROM "OAM_RECORDS" r WHERE r.thread_id = :thread_id
-- binds: {"thread_id": "t1"}
-- options: fetch_lobs=False

-- [4] execute
DELETE FROM "OAM_THREADS" WHERE id = :id
-- binds: {"id": "t1"}

-- [5] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) VALUES ('thread', 0, 0)

-- [6] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}
