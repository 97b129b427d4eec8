-- snapshot: update_metadata_and_index_text
-- statements: 5

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT r.pk, r.content, r.index_text, r.index_text_empty, r.thread_id, r.event_at, r.created_at, r.version FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id AND r.record_type = :record_type AND (r.expires_at IS NULL OR r.expires_at > :now) FOR UPDATE
-- binds: {"kind": "memory", "id": "m1", "record_type": "fact", "now": "<timestamp>"}
-- options: fetch_lobs=False

-- [3] execute
UPDATE "OAM_RECORDS" SET index_text = :index_text, index_text_empty = :index_text_empty, search_text = :search_text, metadata = :metadata, embedding = :embedding, version = version + 1 WHERE pk = :pk
-- binds: {"index_text": null, "index_text_empty": 1, "search_text": null, "metadata": "{\"source\":\"edited\"}", "embedding": null, "pk": 7}
-- input sizes: index_text=DB_TYPE_LONG, search_text=DB_TYPE_LONG, embedding=DB_TYPE_VECTOR

-- [4] executemany, 1 rows
INSERT INTO "OAM_CHANGES" (entity, first_key, last_key) VALUES (:entity, :key, :key)
-- binds[0]: {"entity": "record", "key": 7}

-- [5] execute
DELETE FROM "OAM_CHANGES" WHERE seq <= (SELECT MAX(seq) FROM "OAM_CHANGES") - :keep
-- binds: {"keep": 100000}
