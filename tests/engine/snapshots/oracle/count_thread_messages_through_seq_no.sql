-- snapshot: count_thread_messages_through_seq_no
-- statements: 1

-- [1] execute
SELECT count(*) AS n FROM "OAM_RECORDS" r WHERE r.thread_id = :thread_id AND r.kind = 'message' AND (r.expires_at IS NULL OR r.expires_at > :now) AND r.seq_no <= :through_seq_no
-- binds: {"thread_id": "t1", "now": "<timestamp>", "through_seq_no": 7}
-- options: fetch_lobs=False
