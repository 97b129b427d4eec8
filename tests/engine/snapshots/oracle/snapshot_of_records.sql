-- snapshot: snapshot_of_records
-- statements: 3

-- [1] execute
SELECT r.pk, r.id, r.kind, r.record_type, r.content, r.index_text, r.index_text_empty, JSON_SERIALIZE(r.parts RETURNING CLOB) AS parts, r.thread_id, r.user_id, r.agent_id, r.role, r.role_empty, r.seq_no, r.event_at, r.created_at, r.expires_at, CASE WHEN r.status = 'valid' AND r.lifecycle_links = 0 THEN 'valid' ELSE 'invalid' END AS status, JSON_SERIALIZE(r.metadata RETURNING CLOB) AS metadata, r.message_id, r.mime_type, r.version, r.status AS explicit_status FROM "OAM_RECORDS" r WHERE (((r.kind = :sk0 AND r.record_type = :st0 AND r.id IN (SELECT jt.v FROM JSON_TABLE(:sids0, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)) OR (r.kind = :sk1 AND r.record_type = :st1 AND r.id IN (SELECT jt.v FROM JSON_TABLE(:sids1, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt))) OR (r.kind = 'image' AND r.message_id IN (SELECT sm.id FROM "OAM_RECORDS" sm WHERE sm.kind = 'message' AND ((sm.kind = :sk0 AND sm.record_type = :st0 AND sm.id IN (SELECT jt.v FROM JSON_TABLE(:sids0, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)) OR (sm.kind = :sk1 AND sm.record_type = :st1 AND sm.id IN (SELECT jt.v FROM JSON_TABLE(:sids1, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)))))) ORDER BY r.pk
-- binds: {"sk0": "memory", "st0": "fact", "sids0": "[\"m1\", \"m2\"]", "sk1": "message", "st1": "message", "sids1": "[\"msg-1\"]"}
-- options: fetch_lobs=False

-- [2] execute
SELECT rel.pos, rel.id, rel.source_id, rel.source_type, rel.target_id, rel.target_type, rel.relation_type, rel.opposite_type, rel.event_at, JSON_SERIALIZE(rel.metadata RETURNING CLOB) AS metadata, rel.created_at, rel.version FROM "OAM_RELATIONS" rel WHERE EXISTS (SELECT 1 FROM "OAM_RECORDS" lm WHERE lm.kind = 'memory' AND (lm.id = rel.source_id OR lm.id = rel.target_id) AND ((lm.kind = :sk0 AND lm.record_type = :st0 AND lm.id IN (SELECT jt.v FROM JSON_TABLE(:sids0, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)) OR (lm.kind = :sk1 AND lm.record_type = :st1 AND lm.id IN (SELECT jt.v FROM JSON_TABLE(:sids1, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)))) ORDER BY rel.pos
-- binds: {"sk0": "memory", "st0": "fact", "sids0": "[\"m1\", \"m2\"]", "sk1": "message", "st1": "message", "sids1": "[\"msg-1\"]"}
-- options: fetch_lobs=False

-- [3] execute
SELECT r.id, b.bytes FROM "OAM_RECORDS" r JOIN "OAM_IMAGE_BYTES" b ON b.record_pk = r.pk WHERE r.kind = 'image' AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"img-1\"]"}
-- options: fetch_lobs=False
