-- snapshot: duplicate_group_counts
-- statements: 7

-- [1] execute
SELECT MAX(seq) AS seq FROM "OAM_CHANGES"
-- options: fetch_lobs=False

-- [2] execute
SELECT meta_value FROM "OAM_META" WHERE meta_key = :meta_key
-- binds: {"meta_key": "store_id"}
-- options: fetch_lobs=False

-- [3] execute
SELECT a.pk AS first_pk, b.pk AS second_pk FROM "OAM_RECORDS" a JOIN "OAM_RECORDS" b ON b.user_id = a.user_id AND b.pk > a.pk WHERE a.user_id = :user_id AND a.embedding IS NOT NULL AND a.kind = 'memory' AND a.record_type IN (:type0) AND (a.expires_at IS NULL OR a.expires_at > :now) AND a.status = 'valid' AND a.lifecycle_links = 0 AND b.user_id = :user_id AND b.embedding IS NOT NULL AND b.kind = 'memory' AND b.record_type IN (:type0) AND (b.expires_at IS NULL OR b.expires_at > :now) AND b.status = 'valid' AND b.lifecycle_links = 0 AND VECTOR_DISTANCE(a.embedding, b.embedding, COSINE) <= :max_distance FETCH FIRST :max_pairs ROWS ONLY
-- binds: {"max_distance": 0.100001, "max_pairs": 2000001, "user_id": "u1", "now": "<timestamp>", "type0": "fact"}
-- options: fetch_lobs=False

-- [4] execute
SELECT a.pk AS first_pk, b.pk AS second_pk FROM "OAM_RECORDS" a JOIN "OAM_RECORDS" b ON b.user_id = a.user_id AND b.pk > a.pk WHERE a.user_id = :user_id AND a.embedding IS NOT NULL AND a.kind = 'memory' AND a.record_type IN (:type0) AND (a.expires_at IS NULL OR a.expires_at > :now) AND a.status = 'valid' AND a.lifecycle_links = 0 AND b.user_id = :user_id AND b.embedding IS NOT NULL AND b.kind = 'memory' AND b.record_type IN (:type0) AND (b.expires_at IS NULL OR b.expires_at > :now) AND b.status = 'valid' AND b.lifecycle_links = 0 AND VECTOR_DISTANCE(a.embedding, b.embedding, COSINE) <= :max_distance FETCH FIRST :max_pairs ROWS ONLY
-- binds: {"max_distance": 0.100001, "max_pairs": 2000001, "user_id": "u2", "now": "<timestamp>", "type0": "fact"}
-- options: fetch_lobs=False

-- [5] execute
SELECT MIN(r.expires_at) AS at FROM "OAM_RECORDS" r WHERE r.expires_at > :now
-- binds: {"now": "<timestamp>"}
-- options: fetch_lobs=False

-- [6] execute
SELECT MAX(seq) AS seq FROM "OAM_CHANGES"
-- options: fetch_lobs=False

-- [7] execute
SELECT meta_value FROM "OAM_META" WHERE meta_key = :meta_key
-- binds: {"meta_key": "store_id"}
-- options: fetch_lobs=False
