-- snapshot: scrub_files
-- statements: 2

-- [1] execute
SELECT count(*) AS n, count(CASE WHEN domidx_opstatus = 'FAILED' THEN 1 END) AS failed FROM user_indexes WHERE index_name = :name AND index_type = 'DOMAIN'
-- binds: {"name": "OAM_RECORDS_TEXT"}
-- options: fetch_lobs=False

-- [2] execute
CALL CTX_DDL.OPTIMIZE_INDEX('OAM_RECORDS_TEXT', 'FULL')
