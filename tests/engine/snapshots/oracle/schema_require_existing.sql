-- snapshot: schema_require_existing
-- statements: 4

-- [1] execute
SELECT table_name FROM user_tables WHERE table_name IN (SELECT jt.v FROM JSON_TABLE(:names, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"names": "[\"OAM_META\", \"OAM_THREADS\", \"OAM_RECORDS\", \"OAM_RELATIONS\", \"OAM_IMAGE_BYTES\", \"OAM_CHANGES\", \"OAM_ACTIVITY\", \"OAM_ACTIVITY_RECORDS\", \"OAM_FINDINGS\"]"}
-- options: fetch_lobs=False

-- [2] execute
SELECT table_name FROM user_tables WHERE table_name IN (SELECT jt.v FROM JSON_TABLE(:names, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"names": "[\"OAM_META\", \"OAM_THREADS\", \"OAM_RECORDS\", \"OAM_RELATIONS\", \"OAM_IMAGE_BYTES\", \"OAM_CHANGES\", \"OAM_ACTIVITY\", \"OAM_ACTIVITY_RECORDS\", \"OAM_FINDINGS\"]"}
-- options: fetch_lobs=False

-- [3] execute
SELECT meta_key, meta_value FROM "OAM_META"
-- options: fetch_lobs=False

-- [4] execute
SELECT CAST('x' AS VARCHAR2(32767)) AS probe FROM dual
-- options: fetch_lobs=False
