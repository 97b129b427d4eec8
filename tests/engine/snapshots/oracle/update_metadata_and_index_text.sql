-- snapshot: update_metadata_and_index_text
-- statements: 2

-- [1] execute
SELECT r.pk, r.content, r.index_text, r.index_text_empty, r.thread_id, r.event_at, r.created_at FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id AND r.record_type = :record_type AND (r.expires_at IS NULL OR r.expires_at > :now) FOR UPDATE
-- binds: {"kind": "memory", "id": "m1", "record_type": "fact", "now": "<timestamp>"}
-- options: fetch_lobs=False

-- [2] execute
UPDATE "OAM_RECORDS" SET index_text = :index_text, index_text_empty = :index_text_empty, search_text = :search_text, metadata = :metadata, embedding = :embedding WHERE pk = :pk
-- binds: {"index_text": null, "index_text_empty": 1, "search_text": null, "metadata": "{\"source\":\"edited\"}", "embedding": null, "pk": 7}
-- input sizes: index_text=DB_TYPE_LONG, search_text=DB_TYPE_LONG, embedding=DB_TYPE_VECTOR
