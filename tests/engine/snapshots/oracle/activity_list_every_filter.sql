-- snapshot: activity_list_every_filter
-- statements: 2

-- [1] execute
SELECT a.pk, a.id, a.kind, a.entry_point, a.event_at, a.caller, a.caller_kind, a.on_behalf_of, a.user_id, a.agent_id, a.thread_id, a.request, a.result_count, a.content_chars, a.tokens, a.duration_ms, a.cause, a.history_ref FROM "OAM_ACTIVITY" a WHERE a.kind IN (:kind0, :kind1) AND a.caller_kind = :caller_kind AND a.caller = :caller AND a.user_id = :user_id AND a.agent_id = :agent_id AND a.thread_id = :thread_id AND EXISTS (SELECT 1 FROM "OAM_ACTIVITY_RECORDS" ar WHERE ar.event_pk = a.pk AND ar.record_id = :record_id) AND LOWER(a.query_text) LIKE :text_pattern ESCAPE '\' AND a.event_at >= :since AND a.event_at < :until AND (a.event_at < :after_at OR (a.event_at = :after_at AND a.pk < :after_pk)) ORDER BY a.event_at DESC, a.pk DESC FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"kind0": "search", "kind1": "card", "caller_kind": "agent", "caller": "support-bot", "user_id": "u1", "agent_id": "a1", "thread_id": "t1", "record_id": "m1", "text_pattern": "%50\\%\\_off\\\\é%", "since": "<timestamp>", "until": "<timestamp>", "after_at": "<timestamp>", "after_pk": 10, "fetch_limit": 2}
-- options: fetch_lobs=False

-- [2] execute
SELECT a.pk, a.id, a.kind, a.entry_point, a.event_at, a.caller, a.caller_kind, a.on_behalf_of, a.user_id, a.agent_id, a.thread_id, a.request, a.result_count, a.content_chars, a.tokens, a.duration_ms, a.cause, a.history_ref, a.content, a.results FROM "OAM_ACTIVITY" a WHERE a.kind IN (:kind0) ORDER BY a.event_at DESC, a.pk DESC
-- binds: {"kind0": "write"}
-- options: fetch_lobs=False
