-- snapshot: activity_append
-- statements: 3

-- [1] executemany, 2 rows
INSERT INTO "OAM_ACTIVITY" (id, kind, entry_point, event_at, caller, caller_kind, on_behalf_of, user_id, agent_id, thread_id, query_text, request, results, result_count, content, content_chars, tokens, duration_ms, cause, history_ref) VALUES (:id, :kind, :entry_point, :event_at, :caller, :caller_kind, :on_behalf_of, :user_id, :agent_id, :thread_id, :query_text, :request, :results, :result_count, :content, :content_chars, :tokens, :duration_ms, :cause, :history_ref)
-- binds[0]: {"id": "ev-1", "kind": "search", "entry_point": "AgentMemory.search", "event_at": "<timestamp>", "caller": "support-bot", "caller_kind": "agent", "on_behalf_of": null, "user_id": "u1", "agent_id": "a1", "thread_id": "t1", "query_text": "Green tea?", "request": "{\"query\": \"Green tea?\", \"max_results\": 2}", "results": "[{\"record_id\":\"m1\",\"record_type\":\"fact\",\"rank\":1,\"status\":\"valid\",\"version\":3,\"scores\":{\"distance\":0.25},\"tokens\":4},{\"record_id\":\"m2\",\"record_type\":\"fact\",\"rank\":1,\"status\":\"invalid\",\"version\":1,\"hop\":1,\"path\":[\"m1\",\"supports\",\"m2\"]}]", "result_count": 1, "content": "likes green tea", "content_chars": 15, "tokens": 4, "duration_ms": 12.5, "cause": null, "history_ref": null}
-- binds[1]: {"id": "ev-2", "kind": "write", "entry_point": "MemoryStore.update", "event_at": "<timestamp>", "caller": "alice", "caller_kind": "person", "on_behalf_of": "u1", "user_id": "u1", "agent_id": null, "thread_id": null, "query_text": null, "request": "{\"operation\": \"update\", \"record_id\": \"m1\"}", "results": "[{\"record_id\":\"m1\",\"record_type\":\"fact\",\"status\":\"valid\"}]", "result_count": 1, "content": null, "content_chars": 0, "tokens": 0, "duration_ms": 3.0, "cause": "{\"reason\": \"extraction\", \"message_ids\": [\"msg-1\"]}", "history_ref": "change-7"}
-- input sizes: request=DB_TYPE_LONG, results=DB_TYPE_LONG, content=DB_TYPE_LONG, cause=DB_TYPE_LONG

-- [2] execute
SELECT a.pk, a.id FROM "OAM_ACTIVITY" a WHERE a.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"ev-1\", \"ev-2\"]"}
-- options: fetch_lobs=False

-- [3] executemany, 3 rows
INSERT INTO "OAM_ACTIVITY_RECORDS" (event_pk, result_pos, record_id, record_type, result_rank, hop, status, kind, event_at, caller, caller_kind) VALUES (:event_pk, :result_pos, :record_id, :record_type, :result_rank, :hop, :status, :kind, :event_at, :caller, :caller_kind)
-- binds[0]: {"event_pk": 11, "result_pos": 0, "record_id": "m1", "record_type": "fact", "result_rank": 1, "hop": 0, "status": "valid", "kind": "search", "event_at": "<timestamp>", "caller": "support-bot", "caller_kind": "agent"}
-- binds[1]: {"event_pk": 11, "result_pos": 1, "record_id": "m2", "record_type": "fact", "result_rank": 1, "hop": 1, "status": "invalid", "kind": "search", "event_at": "<timestamp>", "caller": "support-bot", "caller_kind": "agent"}
-- binds[2]: {"event_pk": 12, "result_pos": 0, "record_id": "m1", "record_type": "fact", "result_rank": null, "hop": 0, "status": "valid", "kind": "write", "event_at": "<timestamp>", "caller": "alice", "caller_kind": "person"}
