-- snapshot: owner_counts
-- statements: 1

-- [1] execute
SELECT t.agent_id AS owner, 'thread' AS kind, count(*) AS n FROM "OAM_THREADS" t WHERE t.agent_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) GROUP BY t.agent_id UNION ALL SELECT r.agent_id, r.kind, count(*) FROM "OAM_RECORDS" r WHERE r.agent_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND (r.expires_at IS NULL OR r.expires_at > :now) GROUP BY r.agent_id, r.kind
-- binds: {"ids": "[\"a1\", \"a2\"]", "now": "<timestamp>"}
-- options: fetch_lobs=False
