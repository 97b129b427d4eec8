-- snapshot: reembed_finishes_a_swap_cut_short
-- statements: 15

-- [1] execute
SELECT meta_key, meta_value FROM "OAM_META" WHERE meta_key IN (SELECT jt.v FROM JSON_TABLE(:keys, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"keys": "[\"reembed_phase\", \"reembed_target\"]"}
-- options: fetch_lobs=False

-- [2] execute
SELECT column_name FROM user_tab_columns WHERE table_name = :table_name AND column_name IN ('EMBEDDING', 'EMBEDDING_NEXT', 'EMBEDDING_PREV')
-- binds: {"table_name": "OAM_RECORDS"}
-- options: fetch_lobs=False

-- [3] execute
ALTER TABLE "OAM_RECORDS" RENAME COLUMN embedding_next TO embedding

-- [4] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [5] execute
MERGE INTO "OAM_META" t USING (SELECT :meta_key AS meta_key FROM dual) s ON (t.meta_key = s.meta_key) WHEN MATCHED THEN UPDATE SET t.meta_value = :meta_value WHEN NOT MATCHED THEN INSERT (meta_key, meta_value) VALUES (:meta_key, :meta_value)
-- binds: {"meta_key": "embedder", "meta_value": "hashing-16"}

-- [6] execute
MERGE INTO "OAM_META" t USING (SELECT :meta_key AS meta_key FROM dual) s ON (t.meta_key = s.meta_key) WHEN MATCHED THEN UPDATE SET t.meta_value = :meta_value WHEN NOT MATCHED THEN INSERT (meta_key, meta_value) VALUES (:meta_key, :meta_value)
-- binds: {"meta_key": "vector_dim", "meta_value": "16"}

-- [7] execute
MERGE INTO "OAM_META" t USING (SELECT :meta_key AS meta_key FROM dual) s ON (t.meta_key = s.meta_key) WHEN MATCHED THEN UPDATE SET t.meta_value = :meta_value WHEN NOT MATCHED THEN INSERT (meta_key, meta_value) VALUES (:meta_key, :meta_value)
-- binds: {"meta_key": "store_id", "meta_value": "<uuid>"}

-- [8] execute
DELETE FROM "OAM_META" WHERE meta_key = :meta_key
-- binds: {"meta_key": "reembed_target"}

-- [9] execute
SELECT COUNT(*) AS n FROM "OAM_RECORDS" r WHERE r.embedding IS NOT NULL
-- options: fetch_lobs=False

-- [10] execute
MERGE INTO "OAM_META" t USING (SELECT :meta_key AS meta_key FROM dual) s ON (t.meta_key = s.meta_key) WHEN MATCHED THEN UPDATE SET t.meta_value = :meta_value WHEN NOT MATCHED THEN INSERT (meta_key, meta_value) VALUES (:meta_key, :meta_value)
-- binds: {"meta_key": "reembed_phase", "meta_value": "switched"}

-- [11] execute
SELECT column_name FROM user_tab_columns WHERE table_name = :table_name AND column_name IN ('EMBEDDING', 'EMBEDDING_NEXT', 'EMBEDDING_PREV')
-- binds: {"table_name": "OAM_RECORDS"}
-- options: fetch_lobs=False

-- [12] execute
ALTER TABLE "OAM_RECORDS" SET UNUSED COLUMN embedding_prev

-- [13] execute
DROP TABLE IF EXISTS "OAM_REEMBED" PURGE

-- [14] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [15] execute
DELETE FROM "OAM_META" WHERE meta_key = :meta_key
-- binds: {"meta_key": "reembed_phase"}
