-- snapshot: activity_list
-- statements: 1

-- [1] execute
SELECT a.pk, a.id, a.kind, a.entry_point, a.event_at, a.caller, a.caller_kind, a.on_behalf_of, a.user_id, a.agent_id, a.thread_id, a.request, a.result_count, a.content_chars, a.tokens, a.duration_ms, a.cause, a.history_ref, a.content, a.results FROM "OAM_ACTIVITY" a ORDER BY a.event_at DESC, a.pk DESC FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"fetch_limit": 101}
-- options: fetch_lobs=False
