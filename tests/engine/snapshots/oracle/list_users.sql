-- snapshot: list_users
-- statements: 1

-- [1] execute
SELECT o.id, p.content, JSON_SERIALIZE(p.metadata RETURNING CLOB) AS metadata, p.created_at, p.version FROM (SELECT id FROM (SELECT DISTINCT user_id AS id FROM "OAM_THREADS" WHERE user_id IS NOT NULL AND user_id > :after ORDER BY user_id FETCH FIRST :fetch_limit ROWS ONLY) t UNION SELECT id FROM (SELECT DISTINCT user_id AS id FROM "OAM_RECORDS" WHERE user_id IS NOT NULL AND user_id > :after ORDER BY user_id FETCH FIRST :fetch_limit ROWS ONLY) r) o LEFT JOIN "OAM_RECORDS" p ON p.kind = :kind AND p.id = o.id ORDER BY o.id FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"kind": "user_profile", "after": "u0", "fetch_limit": 6}
-- options: fetch_lobs=False
