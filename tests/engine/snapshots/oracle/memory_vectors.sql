-- snapshot: memory_vectors
-- statements: 1

-- [1] execute
SELECT r.id, r.embedding FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND r.embedding IS NOT NULL AND (r.expires_at IS NULL OR r.expires_at > :now)
-- binds: {"ids": "[\"m1\", \"missing\"]", "now": "<timestamp>"}
-- options: fetch_lobs=False
