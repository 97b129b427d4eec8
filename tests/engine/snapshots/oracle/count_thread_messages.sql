-- snapshot: count_thread_messages
-- statements: 1

-- [1] execute
SELECT count(*) AS n FROM "OAM_RECORDS" r WHERE r.thread_id = :thread_id AND r.kind = 'message' AND (r.expires_at IS NULL OR r.expires_at > :now)
-- binds: {"thread_id": "t1", "now": "<timestamp>"}
-- options: fetch_lobs=False
