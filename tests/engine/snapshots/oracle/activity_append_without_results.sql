-- snapshot: activity_append_without_results
-- statements: 2

-- [1] executemany, 1 rows
INSERT INTO "OAM_ACTIVITY" (id, kind, entry_point, event_at, caller, caller_kind, on_behalf_of, user_id, agent_id, thread_id, query_text, request, results, result_count, content, content_chars, tokens, duration_ms, cause, history_ref) VALUES (:id, :kind, :entry_point, :event_at, :caller, :caller_kind, :on_behalf_of, :user_id, :agent_id, :thread_id, :query_text, :request, :results, :result_count, :content, :content_chars, :tokens, :duration_ms, :cause, :history_ref)
-- binds[0]: {"id": "ev-1", "kind": "search", "entry_point": "AgentMemory.search", "event_at": "<timestamp>", "caller": "support-bot", "caller_kind": "agent", "on_behalf_of": null, "user_id": "u1", "agent_id": "a1", "thread_id": "t1", "query_text": "Green tea?", "request": "{\"query\": \"Green tea?\", \"max_results\": 2}", "results": "[]", "result_count": 0, "content": null, "content_chars": 15, "tokens": 4, "duration_ms": 12.5, "cause": null, "history_ref": null}
-- input sizes: request=DB_TYPE_LONG, results=DB_TYPE_LONG, content=DB_TYPE_LONG, cause=DB_TYPE_LONG

-- [2] execute
SELECT a.pk, a.id FROM "OAM_ACTIVITY" a WHERE a.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"ev-1\"]"}
-- options: fetch_lobs=False
