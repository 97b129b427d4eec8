-- snapshot: snapshot_of_a_thread
-- statements: 3

-- [1] execute
SELECT t.id, t.user_id, t.agent_id, JSON_SERIALIZE(t.metadata RETURNING CLOB) AS metadata, JSON_SERIALIZE(t.settings RETURNING CLOB) AS settings, t.created_at, t.updated_at, t.summary, JSON_SERIALIZE(t.topics RETURNING CLOB) AS topics, t.version, (SELECT count(*) FROM "OAM_RECORDS" m WHERE m.thread_id = t.id AND m.kind = 'message' AND (m.expires_at IS NULL OR m.expires_at > :now)) AS message_count FROM "OAM_THREADS" t WHERE t.id = :scope_id ORDER BY t.created_at, t.id
-- binds: {"scope_id": "t1", "now": "<timestamp>"}
-- options: fetch_lobs=False

-- [2] execute
SELECT r.pk, r.id, r.kind, r.record_type, r.content, r.index_text, r.index_text_empty, JSON_SERIALIZE(r.parts RETURNING CLOB) AS parts, r.thread_id, r.user_id, r.agent_id, r.role, r.role_empty, r.seq_no, r.event_at, r.created_at, r.expires_at, CASE WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END AS status, JSON_SERIALIZE(r.metadata RETURNING CLOB) AS metadata, r.message_id, r.mime_type, r.version, r.status AS explicit_status FROM "OAM_RECORDS" r WHERE (r.thread_id = :scope_id OR (r.kind = 'image' AND r.message_id IN (SELECT sm.id FROM "OAM_RECORDS" sm WHERE sm.kind = 'message' AND sm.thread_id = :scope_id))) ORDER BY r.pk
-- binds: {"scope_id": "t1"}
-- options: fetch_lobs=False

-- [3] execute
SELECT rel.pos, rel.id, rel.source_id, rel.source_type, rel.target_id, rel.target_type, rel.relation_type, rel.opposite_type, rel.event_at, JSON_SERIALIZE(rel.metadata RETURNING CLOB) AS metadata, rel.created_at, rel.version FROM "OAM_RELATIONS" rel WHERE EXISTS (SELECT 1 FROM "OAM_RECORDS" lm WHERE lm.kind = 'memory' AND (lm.id = rel.source_id OR lm.id = rel.target_id) AND lm.thread_id = :scope_id) ORDER BY rel.pos
-- binds: {"scope_id": "t1"}
-- options: fetch_lobs=False
