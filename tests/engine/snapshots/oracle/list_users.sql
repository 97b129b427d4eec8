-- snapshot: list_users
-- statements: 1

-- [1] execute
WITH owners AS (SELECT user_id AS id FROM "OAM_THREADS" WHERE user_id IS NOT NULL UNION SELECT user_id FROM "OAM_RECORDS" WHERE user_id IS NOT NULL) SELECT o.id, p.content, JSON_SERIALIZE(p.metadata RETURNING CLOB) AS metadata, p.created_at, p.version FROM owners o LEFT JOIN "OAM_RECORDS" p ON p.kind = :kind AND p.id = o.id WHERE o.id > :after ORDER BY o.id FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"kind": "user_profile", "after": "u0", "fetch_limit": 6}
-- options: fetch_lobs=False
