-- snapshot: restricted_list
-- statements: 1

-- [1] execute
SELECT r.pk, r.id, r.kind, r.record_type, r.content, r.index_text, r.index_text_empty, JSON_SERIALIZE(r.parts RETURNING CLOB) AS parts, r.thread_id, r.user_id, r.agent_id, r.role, r.role_empty, r.seq_no, r.event_at, r.created_at, r.expires_at, CASE WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END AS status, JSON_SERIALIZE(r.metadata RETURNING CLOB) AS metadata, r.message_id, r.mime_type, r.version FROM (SELECT * FROM "OAM_RECORDS" WHERE (user_id IN (SELECT jt.v FROM JSON_TABLE(:vis_users, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND agent_id IN (SELECT jt.v FROM JSON_TABLE(:vis_agents, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)) OR (record_type = 'user_profile' AND user_id IN (SELECT jt.v FROM JSON_TABLE(:vis_users, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)) OR (record_type = 'agent_profile' AND agent_id IN (SELECT jt.v FROM JSON_TABLE(:vis_agents, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt))) r WHERE r.record_type IN (:type0) AND (r.expires_at IS NULL OR r.expires_at > :now) AND r.status = 'valid' AND r.lifecycle_links = 0 ORDER BY r.pk FETCH FIRST :fetch_limit ROWS ONLY
-- binds: {"type0": "fact", "now": "<timestamp>", "fetch_limit": 21, "vis_users": "[\"alice\", \"bob\"]", "vis_agents": "[\"atlas\"]"}
-- options: fetch_lobs=False
