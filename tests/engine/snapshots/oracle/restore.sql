-- snapshot: restore
-- statements: 30

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT r.id FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"kind": "message", "ids": "[\"msg-1\"]"}
-- options: fetch_lobs=False

-- [3] execute
SELECT r.id FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"kind": "image", "ids": "[\"img-1\"]"}
-- options: fetch_lobs=False

-- [4] execute
SELECT r.id FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"kind": "memory", "ids": "[\"m1\", \"m2\"]"}
-- options: fetch_lobs=False

-- [5] execute
MERGE INTO "OAM_THREADS" t USING (SELECT :id AS id FROM dual) s ON (t.id = s.id) WHEN NOT MATCHED THEN INSERT (id, user_id, agent_id, metadata, settings, created_at, updated_at, summary, topics, version) VALUES (:id, :user_id, :agent_id, :metadata, :settings, :created_at, :updated_at, :summary, :topics, :version)
-- binds: {"id": "t1", "user_id": "u1", "agent_id": "a1", "metadata": null, "settings": "{}", "created_at": "<timestamp>", "updated_at": "<timestamp>", "summary": null, "topics": null, "version": 4}

-- [6] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) VALUES ('thread', 0, 0)

-- [7] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [8] execute
MERGE INTO "OAM_THREADS" t USING (SELECT :id AS id FROM dual) s ON (t.id = s.id) WHEN NOT MATCHED THEN INSERT (id, user_id, agent_id, settings, created_at, updated_at) VALUES (:id, :user_id, :agent_id, :settings, :now, :now)
-- binds: {"id": "t1", "user_id": "u1", "agent_id": "a1", "now": "<timestamp>", "settings": "{}"}

-- [9] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) VALUES ('thread', 0, 0)

-- [10] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [11] execute
UPDATE "OAM_THREADS" SET next_seq_no = :after WHERE id = :id AND next_seq_no < :after
-- binds: {"after": 5, "id": "t1"}

-- [12] executemany, 1 rows
INSERT INTO "OAM_RECORDS" (id, kind, record_type, content, index_text, index_text_empty, search_text, parts, thread_id, user_id, agent_id, role, role_empty, seq_no, event_at, created_at, expires_at, status, metadata, embedding, message_id, mime_type, version) VALUES (:id, :kind, :record_type, :content, :index_text, :index_text_empty, :search_text, :parts, :thread_id, :user_id, :agent_id, :role, :role_empty, :seq_no, :event_at, :created_at, :expires_at, :status, :metadata, :embedding, :message_id, :mime_type, :version)
-- binds[0]: {"id": "msg-1", "kind": "message", "record_type": "message", "content": "hello", "index_text": null, "index_text_empty": 0, "search_text": "hello", "parts": null, "thread_id": "t1", "user_id": "u1", "agent_id": "a1", "role": "user", "role_empty": 0, "seq_no": 4, "event_at": null, "created_at": "<timestamp>", "expires_at": null, "status": "valid", "metadata": null, "embedding": "<vector f[8]>", "message_id": null, "mime_type": null, "version": 2}
-- input sizes: content=DB_TYPE_LONG, index_text=DB_TYPE_LONG, search_text=DB_TYPE_LONG, embedding=DB_TYPE_VECTOR

-- [13] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) SELECT 'record', lo, hi FROM (SELECT MIN(r.pk) AS lo, MAX(r.pk) AS hi FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)) batch WHERE lo IS NOT NULL
-- binds: {"kind": "message", "ids": "[\"msg-1\"]"}

-- [14] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [15] executemany, 1 rows
INSERT INTO "OAM_RECORDS" (id, kind, record_type, content, index_text, index_text_empty, search_text, parts, thread_id, user_id, agent_id, role, role_empty, seq_no, event_at, created_at, expires_at, status, metadata, embedding, message_id, mime_type, version) VALUES (:id, :kind, :record_type, :content, :index_text, :index_text_empty, :search_text, :parts, :thread_id, :user_id, :agent_id, :role, :role_empty, :seq_no, :event_at, :created_at, :expires_at, :status, :metadata, :embedding, :message_id, :mime_type, :version)
-- binds[0]: {"id": "img-1", "kind": "image", "record_type": "image", "content": "a red square", "index_text": null, "index_text_empty": 0, "search_text": "a red square", "parts": null, "thread_id": "t1", "user_id": "u1", "agent_id": "a1", "role": null, "role_empty": 0, "seq_no": null, "event_at": null, "created_at": "<timestamp>", "expires_at": null, "status": "valid", "metadata": null, "embedding": "<vector f[8]>", "message_id": "msg-1", "mime_type": "image/PNG", "version": 2}
-- input sizes: content=DB_TYPE_LONG, index_text=DB_TYPE_LONG, search_text=DB_TYPE_LONG, embedding=DB_TYPE_VECTOR

-- [16] execute
SELECT id, pk FROM "OAM_RECORDS" r WHERE kind = 'image' AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"img-1\"]"}
-- options: fetch_lobs=False

-- [17] executemany, 1 rows
INSERT INTO "OAM_IMAGE_BYTES" (record_pk, bytes) VALUES (:record_pk, :bytes)
-- binds[0]: {"record_pk": 12, "bytes": "<bytes[79]>"}

-- [18] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) SELECT 'record', lo, hi FROM (SELECT MIN(r.pk) AS lo, MAX(r.pk) AS hi FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)) batch WHERE lo IS NOT NULL
-- binds: {"kind": "image", "ids": "[\"img-1\"]"}

-- [19] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [20] executemany, 2 rows
INSERT INTO "OAM_RECORDS" (id, kind, record_type, content, index_text, index_text_empty, search_text, parts, thread_id, user_id, agent_id, role, role_empty, seq_no, event_at, created_at, expires_at, status, metadata, embedding, message_id, mime_type, version) VALUES (:id, :kind, :record_type, :content, :index_text, :index_text_empty, :search_text, :parts, :thread_id, :user_id, :agent_id, :role, :role_empty, :seq_no, :event_at, :created_at, :expires_at, :status, :metadata, :embedding, :message_id, :mime_type, :version)
-- binds[0]: {"id": "m1", "kind": "memory", "record_type": "fact", "content": "the sky is blue", "index_text": "sky colour", "index_text_empty": 0, "search_text": "sky colour", "parts": null, "thread_id": "t1", "user_id": "u1", "agent_id": "a1", "role": null, "role_empty": 0, "seq_no": null, "event_at": null, "created_at": "<timestamp>", "expires_at": null, "status": "valid", "metadata": "{\"n\":1}", "embedding": "<vector f[8]>", "message_id": null, "mime_type": null, "version": 2}
-- binds[1]: {"id": "m2", "kind": "memory", "record_type": "fact", "content": "the sky was grey", "index_text": null, "index_text_empty": 0, "search_text": "the sky was grey", "parts": null, "thread_id": "t1", "user_id": "u1", "agent_id": "a1", "role": null, "role_empty": 0, "seq_no": null, "event_at": null, "created_at": "<timestamp>", "expires_at": null, "status": "valid", "metadata": null, "embedding": "<vector f[8]>", "message_id": null, "mime_type": null, "version": 2}
-- input sizes: content=DB_TYPE_LONG, index_text=DB_TYPE_LONG, search_text=DB_TYPE_LONG, embedding=DB_TYPE_VECTOR

-- [21] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) SELECT 'record', lo, hi FROM (SELECT MIN(r.pk) AS lo, MAX(r.pk) AS hi FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)) batch WHERE lo IS NOT NULL
-- binds: {"kind": "memory", "ids": "[\"m1\", \"m2\"]"}

-- [22] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [23] execute
SELECT r.id, r.record_type FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"m1\", \"m2\"]"}
-- options: fetch_lobs=False

-- [24] execute
SELECT rel.id, rel.pair FROM "OAM_RELATIONS" rel WHERE rel.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) OR rel.pair IN (SELECT jt.v FROM JSON_TABLE(:pairs, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"rel-1\"]", "pairs": "[\"m1\\u001fm2\"]"}
-- options: fetch_lobs=False

-- [25] executemany, 1 rows
INSERT INTO "OAM_RELATIONS" (id, source_id, source_type, target_id, target_type, relation_type, opposite_type, event_at, metadata, created_at, pair, version) VALUES (:id, :source_id, :source_type, :target_id, :target_type, :relation_type, :opposite_type, :event_at, :metadata, :created_at, :pair, :version)
-- binds[0]: {"id": "rel-1", "source_id": "m1", "source_type": "fact", "target_id": "m2", "target_type": "fact", "relation_type": "supersedes", "opposite_type": "is_superseded_by", "event_at": null, "metadata": null, "created_at": "<timestamp>", "pair": "m1\u001fm2", "version": 2}

-- [26] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) SELECT 'link', rel.pos, rel.pos FROM "OAM_RELATIONS" rel WHERE rel.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"rel-1\"]"}

-- [27] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [28] execute
UPDATE "OAM_RECORDS" SET lifecycle_links = (SELECT count(*) FROM "OAM_RELATIONS" rel WHERE rel.target_id = "OAM_RECORDS".id AND rel.relation_type IN ('supersedes', 'refines', 'duplicates')) WHERE kind = 'memory' AND id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND lifecycle_links <> (SELECT count(*) FROM "OAM_RELATIONS" rel WHERE rel.target_id = "OAM_RECORDS".id AND rel.relation_type IN ('supersedes', 'refines', 'duplicates'))
-- binds: {"ids": "[\"m1\", \"m2\"]"}

-- [29] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) SELECT 'record', r.pk, r.pk FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"m1\", \"m2\"]"}

-- [30] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}
