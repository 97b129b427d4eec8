-- snapshot: activity_purge
-- statements: 2

-- [1] execute
DELETE FROM "OAM_ACTIVITY_RECORDS" WHERE event_at < :before
-- binds: {"before": "<timestamp>"}

-- [2] execute
DELETE FROM "OAM_ACTIVITY" WHERE event_at < :before
-- binds: {"before": "<timestamp>"}
