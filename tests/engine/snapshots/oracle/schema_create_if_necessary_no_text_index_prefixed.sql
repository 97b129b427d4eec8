-- snapshot: schema_create_if_necessary_no_text_index_prefixed
-- statements: 38

-- [1] execute
SELECT table_name FROM user_tables WHERE table_name IN (SELECT jt.v FROM JSON_TABLE(:names, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"names": "[\"APP_OAM_META\", \"APP_OAM_THREADS\", \"APP_OAM_RECORDS\", \"APP_OAM_RELATIONS\", \"APP_OAM_IMAGE_BYTES\", \"APP_OAM_CHANGES\", \"APP_OAM_ACTIVITY\", \"APP_OAM_ACTIVITY_RECORDS\", \"APP_OAM_FINDINGS\"]"}
-- options: fetch_lobs=False

-- [2] execute
CREATE TABLE IF NOT EXISTS "APP_OAM_META" (meta_key VARCHAR2(100) PRIMARY KEY, meta_value VARCHAR2(4000))

-- [3] execute
CREATE TABLE IF NOT EXISTS "APP_OAM_THREADS" (
    id VARCHAR2(512) PRIMARY KEY,
    user_id VARCHAR2(512), agent_id VARCHAR2(512), metadata JSON, settings JSON,
    created_at TIMESTAMP(6) NOT NULL, updated_at TIMESTAMP(6) NOT NULL,
    next_seq_no NUMBER(19) DEFAULT 0 NOT NULL, summary CLOB, topics JSON, version NUMBER(19) DEFAULT 1 NOT NULL)

-- [4] execute
CREATE INDEX IF NOT EXISTS "APP_OAM_THREADS_ACTIVITY" ON "APP_OAM_THREADS" (updated_at, id)

-- [5] execute
CREATE INDEX IF NOT EXISTS "APP_OAM_THREADS_USER" ON "APP_OAM_THREADS" (user_id)

-- [6] execute
CREATE INDEX IF NOT EXISTS "APP_OAM_THREADS_AGENT" ON "APP_OAM_THREADS" (agent_id)

-- [7] execute
CREATE TABLE IF NOT EXISTS "APP_OAM_RECORDS" (
    pk NUMBER(19) GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id VARCHAR2(512) NOT NULL, kind VARCHAR2(20) NOT NULL, record_type VARCHAR2(20) NOT NULL,
    content CLOB, index_text CLOB, index_text_empty NUMBER(1) DEFAULT 0 NOT NULL, search_text CLOB,
    parts JSON, thread_id VARCHAR2(512), user_id VARCHAR2(512), agent_id VARCHAR2(512),
    role VARCHAR2(512), role_empty NUMBER(1) DEFAULT 0 NOT NULL, seq_no NUMBER(19),
    event_at TIMESTAMP(6), created_at TIMESTAMP(6) NOT NULL, expires_at TIMESTAMP(6),
    status VARCHAR2(10) DEFAULT 'valid' NOT NULL, lifecycle_links NUMBER(10) DEFAULT 0 NOT NULL,
    metadata JSON, embedding VECTOR(8, FLOAT32), message_id VARCHAR2(512), mime_type VARCHAR2(20),
    version NUMBER(19) DEFAULT 1 NOT NULL, CONSTRAINT "APP_OAM_RECORDS_KIND_ID" UNIQUE (kind, id))

-- [8] execute
CREATE INDEX IF NOT EXISTS "APP_OAM_RECORDS_THREAD" ON "APP_OAM_RECORDS" (thread_id, kind, seq_no)

-- [9] execute
CREATE INDEX IF NOT EXISTS "APP_OAM_RECORDS_USER" ON "APP_OAM_RECORDS" (user_id, record_type)

-- [10] execute
CREATE INDEX IF NOT EXISTS "APP_OAM_RECORDS_AGENT" ON "APP_OAM_RECORDS" (agent_id, record_type)

-- [11] execute
CREATE INDEX IF NOT EXISTS "APP_OAM_RECORDS_TYPE" ON "APP_OAM_RECORDS" (record_type, status)

-- [12] execute
CREATE INDEX IF NOT EXISTS "APP_OAM_RECORDS_EXPIRY" ON "APP_OAM_RECORDS" (expires_at)

-- [13] execute
CREATE INDEX IF NOT EXISTS "APP_OAM_RECORDS_MESSAGE" ON "APP_OAM_RECORDS" (message_id)

-- [14] execute
CREATE INDEX IF NOT EXISTS "APP_OAM_RECORDS_CREATED" ON "APP_OAM_RECORDS" (kind, created_at, expires_at)

-- [15] execute
CREATE TABLE IF NOT EXISTS "APP_OAM_IMAGE_BYTES" (
    record_pk NUMBER(19) PRIMARY KEY REFERENCES "APP_OAM_RECORDS" (pk) ON DELETE CASCADE, bytes BLOB NOT NULL)

-- [16] execute
CREATE TABLE IF NOT EXISTS "APP_OAM_RELATIONS" (
    pos NUMBER(19) GENERATED ALWAYS AS IDENTITY, id VARCHAR2(512) PRIMARY KEY,
    source_id VARCHAR2(512) NOT NULL, source_type VARCHAR2(20) NOT NULL,
    target_id VARCHAR2(512) NOT NULL, target_type VARCHAR2(20) NOT NULL,
    relation_type VARCHAR2(512) NOT NULL, opposite_type VARCHAR2(512) NOT NULL,
    event_at TIMESTAMP(6), metadata JSON, created_at TIMESTAMP(6) NOT NULL,
    pair VARCHAR2(1100) NOT NULL CONSTRAINT "APP_OAM_RELATIONS_PAIR" UNIQUE, version NUMBER(19) DEFAULT 1 NOT NULL)

-- [17] execute
CREATE INDEX IF NOT EXISTS "APP_OAM_RELATIONS_FROM" ON "APP_OAM_RELATIONS" (source_id, created_at, id, target_id)

-- [18] execute
CREATE INDEX IF NOT EXISTS "APP_OAM_RELATIONS_TO" ON "APP_OAM_RELATIONS" (target_id, created_at, id, source_id)

-- [19] execute
CREATE TABLE IF NOT EXISTS "APP_OAM_CHANGES" (
    seq NUMBER(19) GENERATED ALWAYS AS IDENTITY (ORDER) PRIMARY KEY,
    entity VARCHAR2(10) NOT NULL, first_key NUMBER(19) NOT NULL, last_key NUMBER(19) NOT NULL)

-- [20] execute
CREATE TABLE IF NOT EXISTS "APP_OAM_ACTIVITY" (
    pk NUMBER(19) GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id VARCHAR2(64) NOT NULL CONSTRAINT "APP_OAM_ACTIVITY_ID" UNIQUE, kind VARCHAR2(10) NOT NULL,
    entry_point VARCHAR2(100) NOT NULL, event_at TIMESTAMP(6) NOT NULL,
    caller VARCHAR2(512) NOT NULL, caller_kind VARCHAR2(10) NOT NULL, on_behalf_of VARCHAR2(512),
    user_id VARCHAR2(512), agent_id VARCHAR2(512), thread_id VARCHAR2(512), query_text VARCHAR2(4000),
    request CLOB, results CLOB, result_count NUMBER(10) DEFAULT 0 NOT NULL, content CLOB,
    content_chars NUMBER(19) DEFAULT 0 NOT NULL, tokens NUMBER(19) DEFAULT 0 NOT NULL,
    duration_ms BINARY_DOUBLE DEFAULT 0 NOT NULL, cause CLOB, history_ref VARCHAR2(200))

-- [21] execute
CREATE INDEX IF NOT EXISTS "APP_OAM_ACTIVITY_AT" ON "APP_OAM_ACTIVITY" (event_at)

-- [22] execute
CREATE INDEX IF NOT EXISTS "APP_OAM_ACTIVITY_CALLER_AT" ON "APP_OAM_ACTIVITY" (caller, event_at, pk)

-- [23] execute
CREATE INDEX IF NOT EXISTS "APP_OAM_ACTIVITY_THREAD_AT" ON "APP_OAM_ACTIVITY" (thread_id, event_at, pk)

-- [24] execute
DROP INDEX IF EXISTS "APP_OAM_ACTIVITY_CALLER"

-- [25] execute
DROP INDEX IF EXISTS "APP_OAM_ACTIVITY_THREAD"

-- [26] execute
CREATE TABLE IF NOT EXISTS "APP_OAM_ACTIVITY_RECORDS" (
    event_pk NUMBER(19) NOT NULL REFERENCES "APP_OAM_ACTIVITY" (pk) ON DELETE CASCADE,
    result_pos NUMBER(10) NOT NULL, record_id VARCHAR2(512) NOT NULL, record_type VARCHAR2(20) NOT NULL,
    result_rank NUMBER(10), hop NUMBER(10) DEFAULT 0 NOT NULL, status VARCHAR2(10), kind VARCHAR2(10) NOT NULL,
    event_at TIMESTAMP(6) NOT NULL, caller VARCHAR2(512) NOT NULL, caller_kind VARCHAR2(10) NOT NULL,
    CONSTRAINT "APP_OAM_ACTIVITY_RECORDS_PK" PRIMARY KEY (event_pk, result_pos))

-- [27] execute
CREATE INDEX IF NOT EXISTS "APP_OAM_ACTIVITY_RECORDS_RECORD" ON "APP_OAM_ACTIVITY_RECORDS" (record_id, event_at)

-- [28] execute
CREATE INDEX IF NOT EXISTS "APP_OAM_ACTIVITY_RECORDS_AT" ON "APP_OAM_ACTIVITY_RECORDS" (event_at)

-- [29] execute
CREATE TABLE IF NOT EXISTS "APP_OAM_FINDINGS" (
    pk NUMBER(19) GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    record_pk NUMBER(19) NOT NULL REFERENCES "APP_OAM_RECORDS" (pk) ON DELETE CASCADE,
    field VARCHAR2(20) NOT NULL, kind VARCHAR2(40) NOT NULL, span_start NUMBER(10) NOT NULL,
    span_end NUMBER(10) NOT NULL, preview VARCHAR2(1000) NOT NULL, digest VARCHAR2(64) NOT NULL,
    found_at TIMESTAMP(6) NOT NULL)

-- [30] execute
CREATE INDEX IF NOT EXISTS "APP_OAM_FINDINGS_RECORD" ON "APP_OAM_FINDINGS" (record_pk)

-- [31] execute
MERGE INTO "APP_OAM_META" t USING (SELECT :meta_key AS meta_key FROM dual) s ON (t.meta_key = s.meta_key) WHEN NOT MATCHED THEN INSERT (meta_key, meta_value) VALUES (:meta_key, :meta_value)
-- binds: {"meta_key": "schema_version", "meta_value": "8"}

-- [32] execute
MERGE INTO "APP_OAM_META" t USING (SELECT :meta_key AS meta_key FROM dual) s ON (t.meta_key = s.meta_key) WHEN NOT MATCHED THEN INSERT (meta_key, meta_value) VALUES (:meta_key, :meta_value)
-- binds: {"meta_key": "vector_dim", "meta_value": "8"}

-- [33] execute
MERGE INTO "APP_OAM_META" t USING (SELECT :meta_key AS meta_key FROM dual) s ON (t.meta_key = s.meta_key) WHEN NOT MATCHED THEN INSERT (meta_key, meta_value) VALUES (:meta_key, :meta_value)
-- binds: {"meta_key": "embedder", "meta_value": "hashing-8"}

-- [34] execute
MERGE INTO "APP_OAM_META" t USING (SELECT :meta_key AS meta_key FROM dual) s ON (t.meta_key = s.meta_key) WHEN NOT MATCHED THEN INSERT (meta_key, meta_value) VALUES (:meta_key, :meta_value)
-- binds: {"meta_key": "store_id", "meta_value": "<uuid>"}

-- [35] execute
SELECT meta_value FROM "APP_OAM_META" WHERE meta_key = :meta_key
-- binds: {"meta_key": "schema_version"}
-- options: fetch_lobs=False

-- [36] execute
SELECT table_name FROM user_tables WHERE table_name IN (SELECT jt.v FROM JSON_TABLE(:names, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"names": "[\"APP_OAM_META\", \"APP_OAM_THREADS\", \"APP_OAM_RECORDS\", \"APP_OAM_RELATIONS\", \"APP_OAM_IMAGE_BYTES\", \"APP_OAM_CHANGES\", \"APP_OAM_ACTIVITY\", \"APP_OAM_ACTIVITY_RECORDS\", \"APP_OAM_FINDINGS\"]"}
-- options: fetch_lobs=False

-- [37] execute
SELECT meta_key, meta_value FROM "APP_OAM_META"
-- options: fetch_lobs=False

-- [38] execute
SELECT CAST('x' AS VARCHAR2(32767)) AS probe FROM dual
-- options: fetch_lobs=False
