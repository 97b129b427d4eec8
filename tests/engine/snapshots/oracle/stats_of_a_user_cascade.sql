-- snapshot: stats_of_a_user_cascade
-- statements: 7

-- [1] execute
SELECT MAX(seq) AS seq FROM "OAM_CHANGES"
-- options: fetch_lobs=False

-- [2] execute
SELECT meta_value FROM "OAM_META" WHERE meta_key = :meta_key
-- binds: {"meta_key": "store_id"}
-- options: fetch_lobs=False

-- [3] execute
SELECT s.record_type, s.state, count(*) AS n FROM (SELECT r.record_type, CASE WHEN r.expires_at IS NOT NULL AND r.expires_at <= :now THEN 'expired' WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END AS state FROM "OAM_RECORDS" r WHERE ((r.user_id = :scope_id OR r.thread_id IN (SELECT st.id FROM "OAM_THREADS" st WHERE st.user_id = :scope_id)) OR (r.kind = 'image' AND r.message_id IN (SELECT sm.id FROM "OAM_RECORDS" sm WHERE sm.kind = 'message' AND (sm.user_id = :scope_id OR sm.thread_id IN (SELECT st.id FROM "OAM_THREADS" st WHERE st.user_id = :scope_id)))))) s GROUP BY s.record_type, s.state
-- binds: {"now": "<timestamp>", "scope_id": "u1"}
-- options: fetch_lobs=False

-- [4] execute
SELECT s.day, s.kind, count(*) AS n FROM (SELECT TO_CHAR(COALESCE(r.event_at, r.created_at), 'YYYY-MM-DD') AS day, r.kind FROM "OAM_RECORDS" r WHERE ((r.user_id = :scope_id OR r.thread_id IN (SELECT st.id FROM "OAM_THREADS" st WHERE st.user_id = :scope_id)) OR (r.kind = 'image' AND r.message_id IN (SELECT sm.id FROM "OAM_RECORDS" sm WHERE sm.kind = 'message' AND (sm.user_id = :scope_id OR sm.thread_id IN (SELECT st.id FROM "OAM_THREADS" st WHERE st.user_id = :scope_id))))) AND r.kind IN ('message', 'memory') AND (r.expires_at IS NULL OR r.expires_at > :now)) s GROUP BY s.day, s.kind
-- binds: {"now": "<timestamp>", "scope_id": "u1"}
-- options: fetch_lobs=False

-- [5] execute
SELECT rel.relation_type, count(*) AS n FROM "OAM_RELATIONS" rel WHERE EXISTS (SELECT 1 FROM "OAM_RECORDS" lm WHERE lm.kind = 'memory' AND (lm.id = rel.source_id OR lm.id = rel.target_id) AND (lm.user_id = :scope_id OR lm.thread_id IN (SELECT st.id FROM "OAM_THREADS" st WHERE st.user_id = :scope_id))) GROUP BY rel.relation_type ORDER BY rel.relation_type
-- binds: {"scope_id": "u1"}
-- options: fetch_lobs=False

-- [6] execute
SELECT (SELECT count(*) FROM "OAM_THREADS" t WHERE t.user_id = :scope_id) AS threads, (SELECT count(*) FROM (SELECT t.user_id AS id FROM "OAM_THREADS" t WHERE t.user_id IS NOT NULL AND t.user_id = :scope_id UNION SELECT r.user_id FROM "OAM_RECORDS" r WHERE r.user_id IS NOT NULL AND ((r.user_id = :scope_id OR r.thread_id IN (SELECT st.id FROM "OAM_THREADS" st WHERE st.user_id = :scope_id)) OR (r.kind = 'image' AND r.message_id IN (SELECT sm.id FROM "OAM_RECORDS" sm WHERE sm.kind = 'message' AND (sm.user_id = :scope_id OR sm.thread_id IN (SELECT st.id FROM "OAM_THREADS" st WHERE st.user_id = :scope_id)))))) o) AS users, (SELECT count(*) FROM (SELECT t.agent_id AS id FROM "OAM_THREADS" t WHERE t.agent_id IS NOT NULL AND t.user_id = :scope_id UNION SELECT r.agent_id FROM "OAM_RECORDS" r WHERE r.agent_id IS NOT NULL AND ((r.user_id = :scope_id OR r.thread_id IN (SELECT st.id FROM "OAM_THREADS" st WHERE st.user_id = :scope_id)) OR (r.kind = 'image' AND r.message_id IN (SELECT sm.id FROM "OAM_RECORDS" sm WHERE sm.kind = 'message' AND (sm.user_id = :scope_id OR sm.thread_id IN (SELECT st.id FROM "OAM_THREADS" st WHERE st.user_id = :scope_id)))))) o) AS agents FROM dual
-- binds: {"scope_id": "u1"}
-- options: fetch_lobs=False

-- [7] execute
SELECT MIN(r.expires_at) AS at FROM "OAM_RECORDS" r WHERE r.expires_at > :now
-- binds: {"now": "<timestamp>"}
-- options: fetch_lobs=False
