-- snapshot: lifecycle
-- statements: 1

-- [1] execute
SELECT r.id, r.status, rel.id AS link_id FROM "OAM_RECORDS" r LEFT JOIN "OAM_RELATIONS" rel ON rel.target_id = r.id AND rel.relation_type IN ('supersedes', 'refines', 'duplicates') WHERE r.kind = 'memory' AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND (r.expires_at IS NULL OR r.expires_at > :now) ORDER BY r.id, rel.created_at, rel.id
-- binds: {"ids": "[\"m2\", \"m1\", \"missing\"]", "now": "<timestamp>"}
-- options: fetch_lobs=False
