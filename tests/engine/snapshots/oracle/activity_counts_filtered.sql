-- snapshot: activity_counts_filtered
-- statements: 3

-- [1] execute
SELECT a.caller, a.caller_kind, COUNT(*) AS n FROM "OAM_ACTIVITY" a WHERE a.kind IN (:kind0, :kind1) AND a.caller_kind = :caller_kind AND a.thread_id = :thread_id AND LOWER(a.query_text) LIKE :text_pattern ESCAPE '\' AND a.event_at >= :since GROUP BY a.caller, a.caller_kind
-- binds: {"kind0": "search", "kind1": "card", "caller_kind": "agent", "thread_id": "t1", "text_pattern": "%tea%", "since": "<timestamp>"}
-- options: fetch_lobs=False

-- [2] execute
SELECT a.kind, COUNT(*) AS n FROM "OAM_ACTIVITY" a WHERE a.kind IN (:kind0, :kind1) AND a.caller_kind = :caller_kind AND a.thread_id = :thread_id AND LOWER(a.query_text) LIKE :text_pattern ESCAPE '\' AND a.event_at >= :since GROUP BY a.kind
-- binds: {"kind0": "search", "kind1": "card", "caller_kind": "agent", "thread_id": "t1", "text_pattern": "%tea%", "since": "<timestamp>"}
-- options: fetch_lobs=False

-- [3] execute
SELECT TO_CHAR(a.event_at, 'YYYY-MM-DD') AS day, a.caller, COUNT(*) AS n FROM "OAM_ACTIVITY" a WHERE a.kind IN (:kind0, :kind1) AND a.caller_kind = :caller_kind AND a.thread_id = :thread_id AND LOWER(a.query_text) LIKE :text_pattern ESCAPE '\' AND a.event_at >= :since GROUP BY TO_CHAR(a.event_at, 'YYYY-MM-DD'), a.caller
-- binds: {"kind0": "search", "kind1": "card", "caller_kind": "agent", "thread_id": "t1", "text_pattern": "%tea%", "since": "<timestamp>"}
-- options: fetch_lobs=False
