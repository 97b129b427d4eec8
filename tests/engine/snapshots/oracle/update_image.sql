-- snapshot: update_image
-- statements: 3

-- [1] execute
SELECT r.pk, r.content, r.index_text, r.index_text_empty, r.thread_id, r.event_at, r.created_at FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id AND r.record_type = :record_type AND (r.expires_at IS NULL OR r.expires_at > :now) FOR UPDATE
-- binds: {"kind": "image", "id": "img-1", "record_type": "image", "now": "<timestamp>"}
-- options: fetch_lobs=False

-- [2] execute
UPDATE "OAM_IMAGE_BYTES" SET bytes = :bytes WHERE record_pk = :pk
-- binds: {"bytes": "<bytes[79]>", "pk": 7}

-- [3] execute
UPDATE "OAM_RECORDS" SET mime_type = :mime_type WHERE pk = :pk
-- binds: {"mime_type": "image/PNG", "pk": 7}
