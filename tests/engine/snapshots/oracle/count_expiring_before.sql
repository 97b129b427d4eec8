-- snapshot: count_expiring_before
-- statements: 2

-- [1] execute
SELECT count(*) AS n FROM "OAM_RECORDS" r WHERE r.record_type IN (:type0, :type1) AND r.user_id = :scope_user_id AND (r.expires_at IS NULL OR r.expires_at > :now) AND r.expires_at IS NOT NULL AND r.expires_at <= :expires_before
-- binds: {"type0": "fact", "type1": "memory", "scope_user_id": "u1", "now": "<timestamp>", "expires_before": "<timestamp>"}
-- options: fetch_lobs=False

-- [2] execute
SELECT count(*) AS n FROM "OAM_RECORDS" r WHERE r.record_type IN (:type0, :type1) AND r.agent_id IS NULL AND r.expires_at IS NOT NULL AND r.expires_at <= :now
-- binds: {"type0": "fact", "type1": "message", "now": "<timestamp>"}
-- options: fetch_lobs=False
