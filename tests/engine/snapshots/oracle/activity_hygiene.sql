-- snapshot: activity_hygiene
-- statements: 10

-- [1] execute
SELECT ar.record_id, ar.record_type, ar.caller, COUNT(DISTINCT ar.event_pk) AS n, MAX(ar.event_at) AS last_at FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.kind IN ('search', 'card', 'summary') AND ar.event_at >= :since AND ar.caller_kind = :caller_kind GROUP BY ar.record_id, ar.record_type, ar.caller
-- binds: {"since": "<timestamp>", "caller_kind": "agent"}
-- options: fetch_lobs=False

-- [2] execute
SELECT ar.record_id, ar.record_type, ar.caller, COUNT(DISTINCT ar.event_pk) AS n, MAX(ar.event_at) AS last_at FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.kind IN ('search', 'card', 'summary') AND ar.event_at >= :since AND ar.caller_kind = :caller_kind AND ar.status = 'invalid' GROUP BY ar.record_id, ar.record_type, ar.caller
-- binds: {"since": "<timestamp>", "caller_kind": "agent"}
-- options: fetch_lobs=False

-- [3] execute
SELECT COUNT(*) AS n FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.created_at < :since AND (r.expires_at IS NULL OR r.expires_at > :now) AND NOT EXISTS (SELECT 1 FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.record_id = r.id AND ar.kind IN ('search', 'card', 'summary') AND ar.event_at >= :since AND ar.caller_kind = :caller_kind)
-- binds: {"since": "<timestamp>", "caller_kind": "agent", "now": "<timestamp>"}
-- options: fetch_lobs=False

-- [4] execute
SELECT r.id, r.record_type, r.created_at FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.created_at < :since AND (r.expires_at IS NULL OR r.expires_at > :now) AND NOT EXISTS (SELECT 1 FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.record_id = r.id AND ar.kind IN ('search', 'card', 'summary') AND ar.event_at >= :since AND ar.caller_kind = :caller_kind) ORDER BY r.created_at, r.pk FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"since": "<timestamp>", "caller_kind": "agent", "now": "<timestamp>", "fetch_limit": 6}
-- options: fetch_lobs=False

-- [5] execute
SELECT a.pk, a.id, a.kind, a.entry_point, a.event_at, a.caller, a.caller_kind, a.on_behalf_of, a.user_id, a.agent_id, a.thread_id, a.request, a.result_count, a.content_chars, a.tokens, a.duration_ms, a.cause, a.history_ref FROM "OAM_ACTIVITY" a WHERE a.kind IN ('search', 'card', 'summary') AND a.event_at >= :since AND a.caller_kind = :caller_kind ORDER BY a.duration_ms DESC, a.pk DESC FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"since": "<timestamp>", "caller_kind": "agent", "fetch_limit": 6}
-- options: fetch_lobs=False

-- [6] execute
SELECT ar.record_id, ar.record_type, ar.caller, COUNT(DISTINCT ar.event_pk) AS n, MAX(ar.event_at) AS last_at FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.kind IN ('search', 'card', 'summary') AND ar.event_at >= :since GROUP BY ar.record_id, ar.record_type, ar.caller
-- binds: {"since": "<timestamp>"}
-- options: fetch_lobs=False

-- [7] execute
SELECT ar.record_id, ar.record_type, ar.caller, COUNT(DISTINCT ar.event_pk) AS n, MAX(ar.event_at) AS last_at FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.kind IN ('search', 'card', 'summary') AND ar.event_at >= :since AND ar.status = 'invalid' GROUP BY ar.record_id, ar.record_type, ar.caller
-- binds: {"since": "<timestamp>"}
-- options: fetch_lobs=False

-- [8] execute
SELECT COUNT(*) AS n FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.created_at < :since AND (r.expires_at IS NULL OR r.expires_at > :now) AND NOT EXISTS (SELECT 1 FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.record_id = r.id AND ar.kind IN ('search', 'card', 'summary') AND ar.event_at >= :since)
-- binds: {"since": "<timestamp>", "now": "<timestamp>"}
-- options: fetch_lobs=False

-- [9] execute
SELECT r.id, r.record_type, r.created_at FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.created_at < :since AND (r.expires_at IS NULL OR r.expires_at > :now) AND NOT EXISTS (SELECT 1 FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.record_id = r.id AND ar.kind IN ('search', 'card', 'summary') AND ar.event_at >= :since) ORDER BY r.created_at, r.pk FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"since": "<timestamp>", "now": "<timestamp>", "fetch_limit": 11}
-- options: fetch_lobs=False

-- [10] execute
SELECT a.pk, a.id, a.kind, a.entry_point, a.event_at, a.caller, a.caller_kind, a.on_behalf_of, a.user_id, a.agent_id, a.thread_id, a.request, a.result_count, a.content_chars, a.tokens, a.duration_ms, a.cause, a.history_ref FROM "OAM_ACTIVITY" a WHERE a.kind IN ('search', 'card', 'summary') AND a.event_at >= :since ORDER BY a.duration_ms DESC, a.pk DESC FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"since": "<timestamp>", "fetch_limit": 11}
-- options: fetch_lobs=False
