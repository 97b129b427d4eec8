-- snapshot: owner_counts
-- statements: 6

-- [1] execute
SELECT MAX(seq) AS seq FROM "OAM_CHANGES"
-- options: fetch_lobs=False

-- [2] execute
SELECT meta_value FROM "OAM_META" WHERE meta_key = :meta_key
-- binds: {"meta_key": "store_id"}
-- options: fetch_lobs=False

-- [3] execute
SELECT t.agent_id AS owner, 'thread' AS kind, count(*) AS n FROM "OAM_THREADS" t WHERE t.agent_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) GROUP BY t.agent_id UNION ALL SELECT r.agent_id, r.kind, count(*) FROM "OAM_RECORDS" r WHERE r.agent_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND (r.expires_at IS NULL OR r.expires_at > :now) GROUP BY r.agent_id, r.kind
-- binds: {"ids": "[\"a1\", \"a2\"]", "now": "<timestamp>"}
-- options: fetch_lobs=False

-- [4] execute
SELECT MIN(r.expires_at) AS at FROM "OAM_RECORDS" r WHERE r.expires_at > :now
-- binds: {"now": "<timestamp>"}
-- options: fetch_lobs=False

-- [5] execute
SELECT MAX(seq) AS seq FROM "OAM_CHANGES"
-- options: fetch_lobs=False

-- [6] execute
SELECT meta_value FROM "OAM_META" WHERE meta_key = :meta_key
-- binds: {"meta_key": "store_id"}
-- options: fetch_lobs=False
