-- snapshot: activity_hygiene
-- statements: 12

-- [1] execute
SELECT ar.record_id, MAX(ar.record_type) AS record_type, COUNT(DISTINCT ar.event_pk) AS n, MAX(ar.event_at) AS last_at FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.event_pk IN (SELECT a.pk FROM "OAM_ACTIVITY" a WHERE a.kind IN ('search', 'card', 'summary') AND a.event_at >= :since AND a.caller_kind = :caller_kind) GROUP BY ar.record_id ORDER BY n DESC, ar.record_id FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"since": "<timestamp>", "caller_kind": "agent", "fetch_limit": 6}
-- options: fetch_lobs=False

-- [2] execute
SELECT ar.record_id, MAX(ar.record_type) AS record_type, COUNT(DISTINCT ar.event_pk) AS n, MAX(ar.event_at) AS last_at FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.event_pk IN (SELECT a.pk FROM "OAM_ACTIVITY" a WHERE a.kind IN ('search', 'card', 'summary') AND a.event_at >= :since AND a.caller_kind = :caller_kind) AND ar.status = 'invalid' GROUP BY ar.record_id ORDER BY n DESC, ar.record_id FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"since": "<timestamp>", "caller_kind": "agent", "fetch_limit": 6}
-- options: fetch_lobs=False

-- [3] execute
SELECT ar.record_id, ar.caller, COUNT(DISTINCT ar.event_pk) AS n, COUNT(DISTINCT CASE WHEN ar.status = 'invalid' THEN ar.event_pk END) AS invalid_n FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.record_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND ar.kind IN ('search', 'card', 'summary') AND ar.event_at >= :since AND ar.caller_kind = :caller_kind GROUP BY ar.record_id, ar.caller
-- binds: {"since": "<timestamp>", "caller_kind": "agent", "ids": "[\"m1\"]"}
-- options: fetch_lobs=False

-- [4] execute
SELECT (SELECT COUNT(*) FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.created_at < :since AND (r.expires_at IS NULL OR r.expires_at > :now)) - (SELECT COUNT(*) FROM (SELECT DISTINCT ar.record_id FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.event_pk IN (SELECT a.pk FROM "OAM_ACTIVITY" a WHERE a.kind IN ('search', 'card', 'summary') AND a.event_at >= :since AND a.caller_kind = :caller_kind)) s WHERE EXISTS (SELECT 1 FROM "OAM_RECORDS" r WHERE r.id = s.record_id AND r.kind = 'memory' AND r.created_at < :since AND (r.expires_at IS NULL OR r.expires_at > :now))) AS n FROM dual
-- binds: {"since": "<timestamp>", "caller_kind": "agent", "now": "<timestamp>"}
-- options: fetch_lobs=False

-- [5] execute
SELECT r.id, r.record_type, r.created_at FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.created_at < :since AND (r.expires_at IS NULL OR r.expires_at > :now) AND NOT EXISTS (SELECT 1 FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.record_id = r.id AND ar.kind IN ('search', 'card', 'summary') AND ar.event_at >= :since AND ar.caller_kind = :caller_kind) ORDER BY r.created_at, r.pk FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"since": "<timestamp>", "caller_kind": "agent", "now": "<timestamp>", "fetch_limit": 6}
-- options: fetch_lobs=False

-- [6] execute
SELECT a.pk, a.id, a.kind, a.entry_point, a.event_at, a.caller, a.caller_kind, a.on_behalf_of, a.user_id, a.agent_id, a.thread_id, a.request, a.result_count, a.content_chars, a.tokens, a.duration_ms, a.cause, a.history_ref FROM "OAM_ACTIVITY" a WHERE a.kind IN ('search', 'card', 'summary') AND a.event_at >= :since AND a.caller_kind = :caller_kind ORDER BY a.duration_ms DESC, a.pk DESC FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"since": "<timestamp>", "caller_kind": "agent", "fetch_limit": 6}
-- options: fetch_lobs=False

-- [7] execute
SELECT ar.record_id, MAX(ar.record_type) AS record_type, COUNT(DISTINCT ar.event_pk) AS n, MAX(ar.event_at) AS last_at FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.event_pk IN (SELECT a.pk FROM "OAM_ACTIVITY" a WHERE a.kind IN ('search', 'card', 'summary') AND a.event_at >= :since) GROUP BY ar.record_id ORDER BY n DESC, ar.record_id FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"since": "<timestamp>", "fetch_limit": 11}
-- options: fetch_lobs=False

-- [8] execute
SELECT ar.record_id, MAX(ar.record_type) AS record_type, COUNT(DISTINCT ar.event_pk) AS n, MAX(ar.event_at) AS last_at FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.event_pk IN (SELECT a.pk FROM "OAM_ACTIVITY" a WHERE a.kind IN ('search', 'card', 'summary') AND a.event_at >= :since) AND ar.status = 'invalid' GROUP BY ar.record_id ORDER BY n DESC, ar.record_id FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"since": "<timestamp>", "fetch_limit": 11}
-- options: fetch_lobs=False

-- [9] execute
SELECT ar.record_id, ar.caller, COUNT(DISTINCT ar.event_pk) AS n, COUNT(DISTINCT CASE WHEN ar.status = 'invalid' THEN ar.event_pk END) AS invalid_n FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.record_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND ar.kind IN ('search', 'card', 'summary') AND ar.event_at >= :since GROUP BY ar.record_id, ar.caller
-- binds: {"since": "<timestamp>", "ids": "[\"m1\"]"}
-- options: fetch_lobs=False

-- [10] execute
SELECT (SELECT COUNT(*) FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.created_at < :since AND (r.expires_at IS NULL OR r.expires_at > :now)) - (SELECT COUNT(*) FROM (SELECT DISTINCT ar.record_id FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.event_pk IN (SELECT a.pk FROM "OAM_ACTIVITY" a WHERE a.kind IN ('search', 'card', 'summary') AND a.event_at >= :since)) s WHERE EXISTS (SELECT 1 FROM "OAM_RECORDS" r WHERE r.id = s.record_id AND r.kind = 'memory' AND r.created_at < :since AND (r.expires_at IS NULL OR r.expires_at > :now))) AS n FROM dual
-- binds: {"since": "<timestamp>", "now": "<timestamp>"}
-- options: fetch_lobs=False

-- [11] execute
SELECT r.id, r.record_type, r.created_at FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.created_at < :since AND (r.expires_at IS NULL OR r.expires_at > :now) AND NOT EXISTS (SELECT 1 FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.record_id = r.id AND ar.kind IN ('search', 'card', 'summary') AND ar.event_at >= :since) ORDER BY r.created_at, r.pk FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"since": "<timestamp>", "now": "<timestamp>", "fetch_limit": 11}
-- options: fetch_lobs=False

-- [12] execute
SELECT a.pk, a.id, a.kind, a.entry_point, a.event_at, a.caller, a.caller_kind, a.on_behalf_of, a.user_id, a.agent_id, a.thread_id, a.request, a.result_count, a.content_chars, a.tokens, a.duration_ms, a.cause, a.history_ref FROM "OAM_ACTIVITY" a WHERE a.kind IN ('search', 'card', 'summary') AND a.event_at >= :since ORDER BY a.duration_ms DESC, a.pk DESC FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"since": "<timestamp>", "fetch_limit": 11}
-- options: fetch_lobs=False
