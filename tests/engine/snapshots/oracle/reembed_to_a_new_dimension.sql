-- snapshot: reembed_to_a_new_dimension
-- statements: 36

-- [1] execute
SELECT meta_key, meta_value FROM "OAM_META" WHERE meta_key IN (SELECT jt.v FROM JSON_TABLE(:keys, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"keys": "[\"reembed_phase\", \"reembed_target\"]"}
-- options: fetch_lobs=False

-- [2] execute
SELECT meta_value FROM "OAM_META" WHERE meta_key = :meta_key
-- binds: {"meta_key": "reembed_target"}
-- options: fetch_lobs=False

-- [3] execute
DROP TABLE IF EXISTS "OAM_REEMBED" PURGE

-- [4] execute
CREATE TABLE "OAM_REEMBED" (pk NUMBER(19) PRIMARY KEY, version NUMBER(19) NOT NULL, embedding VECTOR(16, FLOAT32))

-- [5] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [6] execute
MERGE INTO "OAM_META" t USING (SELECT :meta_key AS meta_key FROM dual) s ON (t.meta_key = s.meta_key) WHEN MATCHED THEN UPDATE SET t.meta_value = :meta_value WHEN NOT MATCHED THEN INSERT (meta_key, meta_value) VALUES (:meta_key, :meta_value)
-- binds: {"meta_key": "reembed_target", "meta_value": "{\"embedder\": \"hashing-16\", \"vector_dim\": 16}"}

-- [7] execute
SELECT COUNT(*) AS total, COUNT(s.pk) AS staged FROM "OAM_RECORDS" r LEFT JOIN "OAM_REEMBED" s ON s.pk = r.pk AND s.version = r.version WHERE r.search_text IS NOT NULL
-- options: fetch_lobs=False

-- [8] execute
SELECT r.pk, r.version, r.search_text FROM "OAM_RECORDS" r WHERE r.search_text IS NOT NULL AND r.pk > :after AND NOT EXISTS (SELECT 1 FROM "OAM_REEMBED" s WHERE s.pk = r.pk AND s.version = r.version) ORDER BY r.pk FETCH FIRST :batch ROWS ONLY
-- binds: {"after": -1, "batch": 2}
-- options: fetch_lobs=False

-- [9] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [10] executemany, 2 rows
MERGE INTO "OAM_REEMBED" t USING (SELECT :pk AS pk FROM dual) s ON (t.pk = s.pk) WHEN MATCHED THEN UPDATE SET t.version = :version, t.embedding = :embedding WHEN NOT MATCHED THEN INSERT (pk, version, embedding) VALUES (:pk, :version, :embedding)
-- binds[0]: {"pk": 1, "version": 1, "embedding": "<vector f[16]>"}
-- binds[1]: {"pk": 2, "version": 3, "embedding": "<vector f[16]>"}
-- input sizes: embedding=DB_TYPE_VECTOR

-- [11] execute
SELECT r.pk, r.version, r.search_text FROM "OAM_RECORDS" r WHERE r.search_text IS NOT NULL AND r.pk > :after AND NOT EXISTS (SELECT 1 FROM "OAM_REEMBED" s WHERE s.pk = r.pk AND s.version = r.version) ORDER BY r.pk FETCH FIRST :batch ROWS ONLY
-- binds: {"after": 2, "batch": 2}
-- options: fetch_lobs=False

-- [12] execute
SELECT column_name FROM user_tab_columns WHERE table_name = :table_name AND column_name IN ('EMBEDDING', 'EMBEDDING_NEXT', 'EMBEDDING_PREV')
-- binds: {"table_name": "OAM_RECORDS"}
-- options: fetch_lobs=False

-- [13] execute
ALTER TABLE "OAM_RECORDS" ADD (embedding_next VECTOR(16, FLOAT32))

-- [14] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [15] execute
SELECT COUNT(*) AS total, COUNT(s.pk) AS staged FROM "OAM_RECORDS" r LEFT JOIN "OAM_REEMBED" s ON s.pk = r.pk AND s.version = r.version WHERE r.search_text IS NOT NULL
-- options: fetch_lobs=False

-- [16] execute
SELECT COUNT(*) AS n FROM "OAM_RECORDS" r WHERE r.search_text IS NULL AND r.embedding IS NOT NULL
-- options: fetch_lobs=False

-- [17] execute
UPDATE "OAM_RECORDS" SET embedding_next = (SELECT s.embedding FROM "OAM_REEMBED" s WHERE s.pk = "OAM_RECORDS".pk)

-- [18] execute
MERGE INTO "OAM_META" t USING (SELECT :meta_key AS meta_key FROM dual) s ON (t.meta_key = s.meta_key) WHEN MATCHED THEN UPDATE SET t.meta_value = :meta_value WHEN NOT MATCHED THEN INSERT (meta_key, meta_value) VALUES (:meta_key, :meta_value)
-- binds: {"meta_key": "reembed_phase", "meta_value": "filled"}

-- [19] execute
SELECT meta_key, meta_value FROM "OAM_META" WHERE meta_key IN (SELECT jt.v FROM JSON_TABLE(:keys, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"keys": "[\"reembed_phase\", \"reembed_target\"]"}
-- options: fetch_lobs=False

-- [20] execute
SELECT column_name FROM user_tab_columns WHERE table_name = :table_name AND column_name IN ('EMBEDDING', 'EMBEDDING_NEXT', 'EMBEDDING_PREV')
-- binds: {"table_name": "OAM_RECORDS"}
-- options: fetch_lobs=False

-- [21] execute
DROP INDEX IF EXISTS "OAM_RECORDS_HNSW"

-- [22] execute
ALTER TABLE "OAM_RECORDS" RENAME COLUMN embedding TO embedding_prev

-- [23] execute
ALTER TABLE "OAM_RECORDS" RENAME COLUMN embedding_next TO embedding

-- [24] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [25] execute
MERGE INTO "OAM_META" t USING (SELECT :meta_key AS meta_key FROM dual) s ON (t.meta_key = s.meta_key) WHEN MATCHED THEN UPDATE SET t.meta_value = :meta_value WHEN NOT MATCHED THEN INSERT (meta_key, meta_value) VALUES (:meta_key, :meta_value)
-- binds: {"meta_key": "embedder", "meta_value": "hashing-16"}

-- [26] execute
MERGE INTO "OAM_META" t USING (SELECT :meta_key AS meta_key FROM dual) s ON (t.meta_key = s.meta_key) WHEN MATCHED THEN UPDATE SET t.meta_value = :meta_value WHEN NOT MATCHED THEN INSERT (meta_key, meta_value) VALUES (:meta_key, :meta_value)
-- binds: {"meta_key": "vector_dim", "meta_value": "16"}

-- [27] execute
MERGE INTO "OAM_META" t USING (SELECT :meta_key AS meta_key FROM dual) s ON (t.meta_key = s.meta_key) WHEN MATCHED THEN UPDATE SET t.meta_value = :meta_value WHEN NOT MATCHED THEN INSERT (meta_key, meta_value) VALUES (:meta_key, :meta_value)
-- binds: {"meta_key": "store_id", "meta_value": "<uuid>"}

-- [28] execute
DELETE FROM "OAM_META" WHERE meta_key = :meta_key
-- binds: {"meta_key": "reembed_target"}

-- [29] execute
SELECT COUNT(*) AS n FROM "OAM_RECORDS" r WHERE r.embedding IS NOT NULL
-- options: fetch_lobs=False

-- [30] execute
MERGE INTO "OAM_META" t USING (SELECT :meta_key AS meta_key FROM dual) s ON (t.meta_key = s.meta_key) WHEN MATCHED THEN UPDATE SET t.meta_value = :meta_value WHEN NOT MATCHED THEN INSERT (meta_key, meta_value) VALUES (:meta_key, :meta_value)
-- binds: {"meta_key": "reembed_phase", "meta_value": "switched"}

-- [31] execute
SELECT column_name FROM user_tab_columns WHERE table_name = :table_name AND column_name IN ('EMBEDDING', 'EMBEDDING_NEXT', 'EMBEDDING_PREV')
-- binds: {"table_name": "OAM_RECORDS"}
-- options: fetch_lobs=False

-- [32] execute
ALTER TABLE "OAM_RECORDS" SET UNUSED COLUMN embedding_prev

-- [33] execute
DROP TABLE IF EXISTS "OAM_REEMBED" PURGE

-- [34] execute
CREATE VECTOR INDEX "OAM_RECORDS_HNSW" ON "OAM_RECORDS" (embedding) ORGANIZATION INMEMORY NEIGHBOR GRAPH DISTANCE COSINE WITH TARGET ACCURACY 95 PARAMETERS (TYPE HNSW, NEIGHBORS 32, EFCONSTRUCTION 200)

-- [35] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [36] execute
DELETE FROM "OAM_META" WHERE meta_key = :meta_key
-- binds: {"meta_key": "reembed_phase"}
