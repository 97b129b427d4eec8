-- snapshot: activity_served_records
-- statements: 2

-- [1] execute
SELECT ar.record_id, ar.record_type, ar.caller, COUNT(DISTINCT ar.event_pk) AS n, MAX(ar.event_at) AS last_at FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.record_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND ar.kind IN ('search', 'card', 'summary') AND ar.event_at >= :since AND ar.caller_kind = :caller_kind GROUP BY ar.record_id, ar.record_type, ar.caller
-- binds: {"ids": "[\"m1\", \"m2\"]", "since": "<timestamp>", "caller_kind": "agent"}
-- options: fetch_lobs=False

-- [2] execute
SELECT ar.record_id, ar.record_type, ar.caller, COUNT(DISTINCT ar.event_pk) AS n, MAX(ar.event_at) AS last_at FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.record_id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND ar.kind IN ('search', 'card', 'summary') GROUP BY ar.record_id, ar.record_type, ar.caller
-- binds: {"ids": "[\"m1\"]"}
-- options: fetch_lobs=False
