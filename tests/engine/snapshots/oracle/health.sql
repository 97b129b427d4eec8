-- snapshot: health
-- statements: 3

-- [1] execute
SELECT meta_value FROM "OAM_META" WHERE meta_key = :meta_key
-- binds: {"meta_key": "schema_version"}
-- options: fetch_lobs=False

-- [2] execute
SELECT MIN(seq) AS first_seq, MAX(seq) AS last_seq FROM "OAM_CHANGES"
-- options: fetch_lobs=False

-- [3] execute
SELECT meta_value FROM "OAM_META" WHERE meta_key = :meta_key
-- binds: {"meta_key": "store_id"}
-- options: fetch_lobs=False
