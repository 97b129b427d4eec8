-- snapshot: linked_owners
-- statements: 6

-- [1] execute
SELECT MAX(seq) AS seq FROM "OAM_CHANGES"
-- options: fetch_lobs=False

-- [2] execute
SELECT meta_value FROM "OAM_META" WHERE meta_key = :meta_key
-- binds: {"meta_key": "store_id"}
-- options: fetch_lobs=False

-- [3] execute
WITH ends AS (SELECT s.user_id AS source_owner, t.user_id AS target_owner, s.pk AS source_pk, t.pk AS target_pk FROM "OAM_RELATIONS" rel JOIN "OAM_RECORDS" s ON s.kind = 'memory' AND s.id = rel.source_id JOIN "OAM_RECORDS" t ON t.kind = 'memory' AND t.id = rel.target_id WHERE (s.expires_at IS NULL OR s.expires_at > :now) AND (t.expires_at IS NULL OR t.expires_at > :now) AND (s.user_id IS NOT NULL OR t.user_id IS NOT NULL)) SELECT o.owner_id, sum(o.counted) AS links, count(DISTINCT o.memory_pk) AS memories FROM (SELECT source_owner AS owner_id, 1 AS counted, source_pk AS memory_pk FROM ends WHERE source_owner IS NOT NULL UNION ALL SELECT target_owner, CASE WHEN source_owner = target_owner THEN 0 ELSE 1 END, target_pk FROM ends WHERE target_owner IS NOT NULL) o GROUP BY o.owner_id ORDER BY links DESC, memories DESC, o.owner_id FETCH FIRST :limit ROWS ONLY
-- binds: {"now": "<timestamp>", "limit": 5}
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
