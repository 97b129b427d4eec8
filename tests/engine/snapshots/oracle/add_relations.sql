-- snapshot: add_relations
-- statements: 13

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT r.record_type, r.thread_id FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.id = :id AND (r.expires_at IS NULL OR r.expires_at > :now)
-- binds: {"id": "m1", "now": "<timestamp>"}
-- options: fetch_lobs=False

-- [3] execute
SELECT r.record_type, r.thread_id FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.id = :id AND (r.expires_at IS NULL OR r.expires_at > :now)
-- binds: {"id": "m2", "now": "<timestamp>"}
-- options: fetch_lobs=False

-- [4] execute
SELECT id FROM "OAM_RELATIONS" WHERE pair = :pair
-- binds: {"pair": "m1\u001fm2"}
-- options: fetch_lobs=False

-- [5] execute
SELECT r.record_type, r.thread_id FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.id = :id AND (r.expires_at IS NULL OR r.expires_at > :now)
-- binds: {"id": "m3", "now": "<timestamp>"}
-- options: fetch_lobs=False

-- [6] execute
SELECT r.record_type, r.thread_id FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.id = :id AND (r.expires_at IS NULL OR r.expires_at > :now)
-- binds: {"id": "m4", "now": "<timestamp>"}
-- options: fetch_lobs=False

-- [7] execute
SELECT id FROM "OAM_RELATIONS" WHERE pair = :pair
-- binds: {"pair": "m3\u001fm4"}
-- options: fetch_lobs=False

-- [8] executemany, 2 rows
INSERT INTO "OAM_RELATIONS" (id, source_id, source_type, target_id, target_type, relation_type, opposite_type, metadata, pair, event_at, created_at) VALUES (:id, :source_id, :source_type, :target_id, :target_type, :relation_type, :opposite_type, :metadata, :pair, :event_at, :created_at)
-- binds[0]: {"id": "rel-1", "source_id": "m1", "source_type": "fact", "target_id": "m2", "target_type": "fact", "relation_type": "supersedes", "opposite_type": "is_superseded_by", "metadata": "{\"why\":\"newer\"}", "pair": "m1\u001fm2", "event_at": "<timestamp>", "created_at": "<timestamp>"}
-- binds[1]: {"id": "<uuid>", "source_id": "m3", "source_type": "fact", "target_id": "m4", "target_type": "fact", "relation_type": "mentions", "opposite_type": "mentions", "metadata": null, "pair": "m3\u001fm4", "event_at": null, "created_at": "<timestamp>"}

-- [9] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) SELECT 'link', rel.pos, rel.pos FROM "OAM_RELATIONS" rel WHERE rel.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"rel-1\", \"<uuid>\"]"}

-- [10] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}

-- [11] execute
UPDATE "OAM_RECORDS" SET lifecycle_links = (SELECT count(*) FROM "OAM_RELATIONS" rel WHERE rel.target_id = "OAM_RECORDS".id AND rel.relation_type IN ('supersedes', 'refines', 'duplicates')), version = version + 1 WHERE kind = 'memory' AND id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt) AND lifecycle_links <> (SELECT count(*) FROM "OAM_RELATIONS" rel WHERE rel.target_id = "OAM_RECORDS".id AND rel.relation_type IN ('supersedes', 'refines', 'duplicates'))
-- binds: {"ids": "[\"m2\", \"m4\"]"}

-- [12] execute
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) SELECT 'record', r.pk, r.pk FROM "OAM_RECORDS" r WHERE r.kind = 'memory' AND r.id IN (SELECT jt.v FROM JSON_TABLE(:ids, '$[*]' COLUMNS (v VARCHAR2(512) PATH '$')) jt)
-- binds: {"ids": "[\"m2\", \"m4\"]"}

-- [13] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}
