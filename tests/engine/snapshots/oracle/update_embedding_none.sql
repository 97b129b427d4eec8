-- snapshot: update_embedding_none
-- statements: 2

-- [1] execute
SELECT r.pk, r.content, r.index_text, r.index_text_empty, r.thread_id, r.event_at, r.created_at FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id AND r.record_type = :record_type AND (r.expires_at IS NULL OR r.expires_at > :now) FOR UPDATE
-- binds: {"kind": "memory", "id": "m1", "record_type": "fact", "now": "<timestamp>"}
-- options: fetch_lobs=False

-- [2] execute
UPDATE "OAM_RECORDS" SET embedding = :embedding WHERE pk = :pk
-- binds: {"embedding": null, "pk": 7}
-- input sizes: embedding=DB_TYPE_VECTOR
