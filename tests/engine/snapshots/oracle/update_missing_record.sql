-- snapshot: update_missing_record
-- statements: 2

-- [1] execute
LOCK TABLE "OAM_CHANGES" IN EXCLUSIVE MODE

-- [2] execute
SELECT r.pk, r.content, r.index_text, r.index_text_empty, r.thread_id, r.event_at, r.created_at, r.version FROM "OAM_RECORDS" r WHERE r.kind = :kind AND r.id = :id AND r.record_type = :record_type AND (r.expires_at IS NULL OR r.expires_at > :now) FOR UPDATE
-- binds: {"kind": "memory", "id": "nope", "record_type": "fact", "now": "<timestamp>"}
-- options: fetch_lobs=False
